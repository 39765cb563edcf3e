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
