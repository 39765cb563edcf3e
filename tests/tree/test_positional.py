"""Positional acceptance: exact expected AAT, Monte Carlo agreement, traces and their files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import ConfigError, InputError
from fpgasim.tree.optimal import greedy_tree
from fpgasim.tree.positional import (
    PositionalModel,
    expected_aat,
    generate_traces,
    monte_carlo_aat,
    sample_rank_paths,
)
from fpgasim.tree.traces import Traces, load_traces, traces_from_paths, write_traces

MATRIX = PositionalModel.from_rows([[0.7, 0.15, 0.05], [0.6, 0.2], [0.5, 0.1, 0.1, 0.05]])


def test_expected_aat_by_hand() -> None:
    tree = TokenTree.from_parents([-1, 0, 0, 1, 3])  # ranks 0, 1 under the root, a chain below
    p = MATRIX
    want = 1 + 0.7 + 0.15 + 0.7 * 0.6 + 0.7 * 0.6 * 0.5
    assert expected_aat(tree, p) == pytest.approx(want)
    assert p.p(9, 0) == 0.5 and p.p(1, 7) == 0.0  # deeper rows reuse the last, ranks past are 0


@pytest.mark.parametrize("shape", [(1,), (3, 2, 1), (4, 8, 5, 2, 1), (2, 4, 4, 4, 4, 4, 4)])
def test_expected_aat_matches_monte_carlo(shape: tuple[int, ...]) -> None:
    tree = TokenTree.from_shape(shape, MATRIX)
    mean, se = monte_carlo_aat(tree, MATRIX, 200_000, np.random.default_rng(7))
    assert abs(mean - MATRIX.expected_aat(tree)) < 3 * se


def test_monte_carlo_on_optimal_tree_with_gaps() -> None:
    tree = TokenTree.from_parents([-1, 0, 0, 1], ranks=[0, 0, 2, 1])
    mean, se = monte_carlo_aat(tree, MATRIX, 200_000, np.random.default_rng(3))
    assert abs(mean - (1 + 0.7 + 0.05 + 0.7 * 0.2)) < 3 * se


def test_sampling_is_seeded_and_prefix_closed() -> None:
    a = sample_rank_paths(MATRIX, 5000, 6, np.random.default_rng(1))
    b = sample_rank_paths(MATRIX, 5000, 6, np.random.default_rng(1))
    assert np.array_equal(a, b)
    dead = a < 0
    assert not np.any(dead[:, :-1] & ~dead[:, 1:])  # once rejected, stays rejected
    assert abs((a[:, 0] == 0).mean() - 0.7) < 0.03


def test_generated_traces_stay_in_the_max_tree() -> None:
    max_tree = TokenTree.from_shape((2, 2))
    traces = generate_traces(MATRIX, max_tree, 20_000, np.random.default_rng(0))
    assert traces.ranks.shape[1] == 2
    assert traces.ranks[:, 0].max() <= 1
    assert traces.accepted.max() <= 3
    # mean accepted = expected AAT of the maximal tree itself
    assert traces.mean_aat() == pytest.approx(MATRIX.expected_aat(max_tree), abs=0.02)


def test_context_scaling() -> None:
    base = PositionalModel.from_vector([0.5, 0.2])
    assert base.at_context(2048, 1024, 0.1).p(1, 0) == pytest.approx(0.45)
    assert base.at_context(1024, 1024, 0.1) is base
    up = base.at_context(1, 1024, 0.5)  # far below the reference: capped at row sum 1
    assert up.matrix.sum() == pytest.approx(1.0)
    assert up.p(1, 0) / up.p(1, 1) == pytest.approx(2.5)


@pytest.mark.parametrize("rows", [[[0.8, 0.3]], [[-0.1]], [[1.5]], [[]], [[float("nan")]]], ids=str)
def test_invalid_models(rows) -> None:
    with pytest.raises(InputError):
        PositionalModel.from_rows(rows)


def test_monotone() -> None:
    assert MATRIX.is_monotone()
    assert not PositionalModel.from_vector([0.5, 0.1, 0.2]).is_monotone()


# ----------------------------------------------------------------------------- trace files


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_trace_file_round_trip(tmp_path: Path, suffix: str) -> None:
    traces = traces_from_paths([[0, 2, 0], [], [1], [0, 0, 0, 0]])
    path = tmp_path / f"t{suffix}"
    write_traces(traces, path)
    back = load_traces(path)
    assert np.array_equal(back.ranks, traces.ranks)
    assert back.accepted.tolist() == [4, 1, 2, 5]


def test_trace_file_context_filter_and_lists(tmp_path: Path) -> None:
    frame = pd.DataFrame({"ranks": [[0, 1], [], [2]], "context": [128, 256, 128]})
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    traces = load_traces(path, context=128)
    assert traces.iterations == 2 and traces.ranks[1, 0] == 2


@pytest.mark.parametrize(
    "content, field",
    [
        ("iteration,path\n0,0 1\n", "ranks"),
        ("ranks\n0 x\n", "row 1.ranks"),
        ("ranks\n0\n-1\n", "row 2.ranks"),
        ("ranks\n1.5\n", "row 1.ranks"),
        ("", "file"),
        ("ranks\n", "ranks"),
    ],
)
def test_trace_file_errors(tmp_path: Path, content: str, field: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(ConfigError) as err:
        load_traces(path)
    assert err.value.field == field and str(path) in str(err.value)


def test_trace_file_missing_and_wrong_kind(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_traces(tmp_path / "none.csv")
    with pytest.raises(ConfigError, match="csv or .parquet"):
        load_traces(tmp_path / "t.txt")
    path = tmp_path / "t.csv"
    path.write_text("ranks\n0\n")
    with pytest.raises(ConfigError, match="context"):
        load_traces(path, context=5)


def test_traces_frame() -> None:
    traces = Traces(np.array([[0, 1], [-1, -1]], dtype=np.int16))
    assert traces.to_frame()["ranks"].tolist() == ["0 1", ""]
    assert greedy_tree(MATRIX, 3).tree.size == 3
