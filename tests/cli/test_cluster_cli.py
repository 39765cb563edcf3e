"""Clusters through the CLI (docs/multi-fpga.md): each board's lowering splits a model its
own way (`registry.check_cluster`), DFX's ring through `fpgasim generate` gives what the
blind predictions' script computes, and the refusals name the flag."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]


def _predictions():
    """benchmarks/dfx_predictions.py as a module (the benchmarks are not a package)."""
    spec = importlib.util.spec_from_file_location("dfx_predictions",
                                                  ROOT / "benchmarks" / "dfx_predictions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_dfx_generate_equals_the_blind_predictions_path(capsys) -> None:
    bench = _predictions()
    for model, cards in bench.CASES:
        res = run_cli(capsys, "generate", "--fpga", "u280", "--design", "dfx", "--cards",
                      str(cards), "--parallel", "tp", "--model", model, "--prompt-len",
                      str(bench.PROMPT), "--decode-len", str(bench.OUTPUT - 1), "--format",
                      "json")
        assert res.code == 0, res.err
        summary = json.loads(res.out)["summary"]
        row = bench.generation(model, cards)
        assert summary["tokens_per_s"] == row["tokens_per_s"], (model, cards)
        assert summary["ttft_s"] * 1e3 == row["prefill_ms"]
        assert summary["decode_s"] * 1e3 / (bench.OUTPUT - 1) == row["decode_ms_per_token"]
        assert (summary["cards"], summary["parallel"], summary["decode_multiple"]) == (
            cards, "tp" if cards > 1 else "none", 1)
        if cards > 1:  # the ring's gathers: DFX's own collectives, not FlightLLM's
            assert 0 < summary["sync_share"] < 1


@pytest.mark.parametrize(("args", "message"), [
    (("--design", "dfx", "--cards", "4", "--parallel", "pp", "-m", "gpt2-345m"),
     "--parallel = 'pp': tp on dfx@u280"),
    (("--design", "dfx", "--cards", "3", "-m", "gpt2-345m"),
     "--cards = 3: a divisor of gpt2-345m's heads = 16 (DFX"),
    (("--design", "flightllm", "--cards", "4", "-m", "gpt2-345m"),
     "--cards = 4: a divisor of gpt2-345m's vocab = 50257"),
])
def test_each_lowering_refuses_its_own_split(capsys, args, message) -> None:
    res = run_cli(capsys, "generate", "--fpga", "u280", *args, "-P", "64", "-D", "8")
    assert res.code == 2
    assert message in res.err and len(res.err.strip().splitlines()) == 1, res.err


@pytest.mark.slow
def test_memory_fit_is_per_card_on_a_cluster(capsys) -> None:
    rows = {}
    for cards in (1, 2):
        res = run_cli(capsys, "simulate", "--fpga", "u280", "--design", "flightllm", "-m",
                      "llama2-chat-7b", "-L", "4095", "--cards", str(cards), "-e", "fast",
                      "--format", "json")
        assert res.code == 0, res.err
        rows[cards] = json.loads(res.out)
    assert "card_capacity_bytes" not in rows[1]  # one card: the row as it always was
    assert rows[2]["card_capacity_bytes"] == 8 * 2**30  # the U280's 8 GiB of HBM, one card
    # half the weights and cache on each card (the drafter-free point: exactly the share)
    assert rows[2]["memory_bytes"] < rows[1]["memory_bytes"] * 0.51


def test_tree_optimal_takes_a_cluster_only_with_a_board(capsys) -> None:
    res = run_cli(capsys, "tree", "optimal", "--iid-rate", "0.5", "--size", "8", "--cards", "2")
    assert res.code == 2 and "--cards = 2: 1 with --objective aat" in res.err


def test_design_fit_shows_the_cluster_and_checks_its_ring(capsys) -> None:
    one = run_cli(capsys, "design", "fit", "--fpga", "u280", "--design", "dfx", "-f", "json")
    four = run_cli(capsys, "design", "fit", "--fpga", "u280", "--design", "dfx", "--cards",
                   "4", "-f", "json")
    assert one.code == four.code == 0, four.err
    a, b = json.loads(one.out), json.loads(four.out)
    assert "cards" not in a and (b["cards"], b["parallel"]) == (4, "tp")
    assert {k: v for k, v in b.items() if k in a} == a  # every card fits as one does


@pytest.mark.parametrize(("vary", "message"), [
    ("cluster.cards=0,2", "vary = 'cluster.cards=0'"),
    ("cluster.speed=1", "a cluster field: cards, parallel"),
    ("cluster.parallel=xx", "vary = 'cluster.parallel=xx'"),
])
def test_vary_cluster_refusals(capsys, tmp_path, vary, message) -> None:
    res = run_cli(capsys, "sweep", "--fpga", "u280", "--design", "flightllm", "-m",
                  "llama2-chat-7b", "--contexts", "128", "--verify-lens", "1", "--vary", vary,
                  "--out", str(tmp_path / "s.csv"))
    assert res.code == 2 and message in res.err and len(res.err.strip().splitlines()) == 1, \
        res.err
    assert not (tmp_path / "s.csv").exists()


@pytest.mark.slow
def test_sweep_varies_the_cluster_like_any_field(capsys, tmp_path) -> None:
    out = tmp_path / "s.csv"
    res = run_cli(capsys, "sweep", "--fpga", "u280", "--design", "flightllm", "-m",
                  "llama2-chat-7b", "--contexts", "1024", "--verify-lens", "1", "--vary",
                  "cluster.cards=1,2", "--vary", "cluster.parallel=tp,pp", "-e", "fast",
                  "--executor", "inprocess", "--no-cache", "--out", str(out))
    assert res.code == 0, res.err
    import pandas as pd
    frame = pd.read_csv(out).set_index("board")
    assert list(frame["cards"]) == [1, 1, 2, 2]
    # the same points through simulate --cards: one path
    for cards, parallel in ((1, "tp"), (2, "tp"), (2, "pp")):
        sim = run_cli(capsys, "simulate", "--fpga", "u280", "--design", "flightllm", "-m",
                      "llama2-chat-7b", "-L", "1024", "-e", "fast", "--cards", str(cards),
                      "--parallel", parallel, "-f", "json")
        assert sim.code == 0, sim.err
        row = frame.loc[f"flightllm@u280 cards={cards} parallel={parallel}"]
        assert row["verify_cycles"] == json.loads(sim.out)["verify_cycles"]


@pytest.mark.slow
def test_explore_over_cards_names_the_cheapest_cluster_meeting_a_target(capsys, tmp_path) -> None:
    res = run_cli(capsys, "explore", "--fpga", "u280", "--design", "flightllm", "-m",
                  "llama2-chat-7b", "--contexts", "1024", "-a", "longspec", "--verify-lens",
                  "2", "--vary", "cluster.cards=1,2,4", "--vary", "cluster.parallel=tp,pp",
                  "-e", "fast", "--executor", "inprocess", "--no-cache", "--target-tokens-per-s",
                  "200", "--out", str(tmp_path / "e.csv"), "--format", "json")
    assert res.code == 0, res.err
    out = json.loads(res.out)
    rows = {(r["cluster.cards"], r["cluster.parallel"]): r for r in out["summary"]}
    assert rows[(4, "tp")]["tokens_per_s"] > 200 > rows[(2, "tp")]["tokens_per_s"]
    assert rows[(2, "tp")]["cluster_w"] > rows[(1, "tp")]["cluster_w"]
    assert [r["pareto_cards"] for r in out["summary"] if r["cluster.parallel"] == "pp"
            and r["cards"] > 1] == [False, False]  # pp: more cards, no more speed
    assert any("cheapest meeting 200 tok/s: cluster.cards=4 (4 cards" in line
               for line in out["lines"]), out["lines"]
    assert (tmp_path / "e.png").stat().st_size > 0
    bad = run_cli(capsys, "explore", "--fpga", "u280", "--design", "flightllm", "-m",
                  "llama2-chat-7b", "--contexts", "1024", "--target-tokens-per-s", "0",
                  "--out", str(tmp_path / "f.csv"))
    assert bad.code == 2 and "--target-tokens-per-s = 0.0" in bad.err


def test_sweep_and_explore_take_cards_or_vary_cluster_not_both(capsys, tmp_path) -> None:
    for command in ("sweep", "explore"):
        res = run_cli(capsys, command, "-b", "u280", "-m", "llama2-chat-7b", "--contexts",
                      "512", "--cards", "4", "--vary", "cluster.cards=2", "--out",
                      str(tmp_path / "s.csv"))
        assert res.code == 2 and "--cards = 4: not with --vary cluster.*" in res.err, res.err
        assert not (tmp_path / "s.csv").exists()


@pytest.mark.slow
def test_sweep_cards_puts_every_board_on_the_cluster(capsys, tmp_path) -> None:
    out = tmp_path / "s.csv"
    res = run_cli(capsys, "sweep", "--fpga", "u280", "--design", "flightllm", "-m",
                  "llama2-chat-7b", "--contexts", "1024", "--verify-lens", "1", "--cards", "2",
                  "-e", "fast", "--executor", "inprocess", "--no-cache", "--out", str(out))
    assert res.code == 0, res.err
    import pandas as pd
    row = pd.read_csv(out).iloc[0]
    sim = run_cli(capsys, "simulate", "--fpga", "u280", "--design", "flightllm", "-m",
                  "llama2-chat-7b", "-L", "1024", "-e", "fast", "--cards", "2", "-f", "json")
    assert (row["cards"], row["parallel"]) == (2, "tp")
    assert row["verify_cycles"] == json.loads(sim.out)["verify_cycles"]
