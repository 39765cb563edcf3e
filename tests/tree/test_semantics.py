"""Acceptance semantics (issue 14): positional, i.i.d. and marginal per-token rates, the
bonus token counted once (hand-computed small trees), and the DP / CLI limits (issue 15)."""

from __future__ import annotations

import json

import pytest

from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import InputError
from fpgasim.tree import semantics
from fpgasim.tree.optimal import DP_MAX_CELLS, check_dp_feasible, dp_cells
from fpgasim.tree.positional import PositionalModel
from tests.cli_helpers import run_cli


def test_bonus_counted_once_on_hand_trees() -> None:
    model = PositionalModel.from_rows([[0.6, 0.3], [0.5]])
    root = TokenTree.from_parents([-1])
    assert model.expected_aat(root) == 1.0  # x = 1: only the bonus token
    # root -> a (rank 0, .6), b (rank 1, .3); a -> c (depth 2 rank 0, .5)
    tree = TokenTree.from_parents([-1, 0, 0, 1])
    assert model.expected_aat(tree) == pytest.approx(1 + 0.6 + 0.3 + 0.6 * 0.5)
    assert semantics.marginal_rate(model, tree) == pytest.approx((0.6 + 0.3 + 0.3) / 3)
    sure = PositionalModel.from_vector([1.0])
    chain = TokenTree.from_parents([-1, 0, 1, 2])
    assert sure.expected_aat(chain) == 4.0  # every draft token and the bonus: x
    assert semantics.marginal_rate(sure, chain) == 1.0


def test_iid_rate_on_chains_and_trees() -> None:
    alpha = 0.5
    model = semantics.iid_model(alpha)
    chain = TokenTree.from_parents([-1, 0, 1])
    assert model.expected_aat(chain) == pytest.approx(1 + 0.5 + 0.25)
    assert semantics.chain_aat(alpha, 2) == pytest.approx(1.75)
    # two candidates under the root: rank 0 with .5, rank 1 with (1 - .5) * .5 = .25
    fan = TokenTree.from_parents([-1, 0, 0])
    assert model.expected_aat(fan) == pytest.approx(1.75)
    assert semantics.marginal_rate(model, fan) == pytest.approx(0.375)


def test_conversions_round_trip() -> None:
    assert semantics.iid_from_chain_aat(semantics.chain_aat(0.7, 5), 5) == pytest.approx(0.7)
    tree = TokenTree.from_shape((3, 4, 2))
    beta = semantics.marginal_rate(semantics.iid_model(0.42), tree)
    assert semantics.iid_from_marginal(beta, tree) == pytest.approx(0.42, abs=1e-9)
    assert semantics.aat_from_marginal(beta, tree.size) == pytest.approx(
        semantics.iid_model(0.42).expected_aat(tree)
    )
    base = PositionalModel.from_rows([[0.5, 0.2], [0.4, 0.1]])
    scaled = semantics.scaled_to_aat(base, tree, 2.3)
    assert scaled.expected_aat(tree) == pytest.approx(2.3)


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: semantics.iid_model(1.0), "iid_rate"),
        (lambda: semantics.iid_model(0.0), "iid_rate"),
        (lambda: semantics.iid_from_chain_aat(5.0, 3), "aat"),
        (lambda: semantics.aat_from_marginal(1.5, 4), "marginal_rate"),
        (
            lambda: semantics.scaled_to_aat(
                PositionalModel.from_vector([0.5]), TokenTree.from_shape((1,)), 2.5
            ),
            "aat",
        ),
    ],
)
def test_conversion_inputs_validated(call, field: str) -> None:
    with pytest.raises(InputError) as caught:
        call()
    assert caught.value.field == field


def test_dp_limits() -> None:
    seq = PositionalModel.from_vector([0.6342, 0.1079, 0.057, 0.0225, 0.0195, 0.015, 0.0045])
    with pytest.raises(InputError, match="at most 2048"):
        check_dp_feasible(seq, 4096, 4095)
    with pytest.raises(InputError, match="`max_depth` <= "):
        check_dp_feasible(seq, 2048, 2047)
    wide = PositionalModel.from_vector([0.5] + [0.003] * 127)
    # 128 nodes, 128 ranks, depth 256 (= 127 useful levels) fits: it runs in seconds
    assert dp_cells(wide, 128, 127) <= DP_MAX_CELLS
    check_dp_feasible(wide, 128, 127)


def test_cli_dp_refused_with_one_line(capsys) -> None:
    res = run_cli(
        capsys,
        "tree",
        "optimal",
        "-p",
        ".6342,.1079,.0570,.0120",
        "--size",
        "4096",
        "--method",
        "dp",
    )
    assert res.code == 2
    assert "--size" in res.err and len(res.err.strip().splitlines()) == 1


def test_cli_throughput_json(capsys) -> None:
    res = run_cli(
        capsys,
        "tree",
        "optimal",
        "--objective",
        "throughput",
        "-b",
        "v80",
        "-a",
        "longspec",
        "--context",
        "1024",
        "-e",
        "analytic",
        "--format",
        "json",
    )
    assert res.code == 0, res.err
    row = json.loads(res.out)
    assert row["tokens_per_s"] >= row["aat_optimal_tokens_per_s"]
    assert row["verify_len"] == row["aat_optimal_verify_len"] == len(row["parents"])
    assert row["tokens_per_s"] == pytest.approx(
        row["expected_aat"] / (row["verify_s"] + row["draft_s"]), rel=1e-12
    )


@pytest.mark.parametrize(
    "args",
    [
        ("--objective", "throughput", "-a", "longspec", "--context", "1024"),  # no board
        ("--objective", "throughput", "-b", "v80", "-a", "longspec"),  # no context
        ("--size", "10", "--iid-rate", "0.5", "-p", ".5"),  # two acceptance inputs
        ("--size", "10", "--iid-rate", "1.5"),
        ("--objective", "throughput", "-b", "v80", "-a", "longspec", "-L", "9", "--method", "dp"),
        ("--objective", "throughput", "-b", "v80", "-a", "falcon", "-L", "9", "-p", ".5,.6"),
        ("--objective", "throughput", "-b", "v80", "-a", "longspec", "-L", "1024", "-n", "4096"),
        ("--objective", "throughput", "-b", "v80", "-a", "eagle3", "-L", "1024", "-n", "4096"),
        ("--objective", "throughput", "-b", "v80", "-a", "longspec", "-L", "1024", "-n", "1"),
        ("-a", "longspec", "--marginal-rate", "0.0"),
    ],
)
def test_cli_bad_inputs(capsys, args) -> None:
    res = run_cli(capsys, "tree", "optimal", *args)
    assert res.code == 2, res.err
    assert res.err.startswith("fpgasim: error:") and len(res.err.strip().splitlines()) == 1
