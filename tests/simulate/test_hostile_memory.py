"""Physically impossible configurations are flagged: fits_memory on every result, a warning."""

from __future__ import annotations

import json

import pytest

from fpgasim.config import available, load_board, load_model
from fpgasim.simulate import fits_memory, memory_bytes, target_weight_count
from tests.cli_helpers import run_cli


@pytest.mark.parametrize("name", [n for n in available("model")
                                  if load_model(n).params_b is not None])
def test_weight_count_matches_the_published_parameter_count(name: str) -> None:
    """The shapes give the published count (params_b, from the model cards) within 0.2 %
    (DFX's gpt2-1.5b has none: tests/config/test_gpt2.py checks its closed form)."""
    model = load_model(name)
    assert target_weight_count(model) / 1e9 == pytest.approx(model.params_b, rel=2e-3)


def test_memory_of_llama_8b() -> None:
    model, u280, v80 = load_model("llama-3.1-8b"), load_board("u280"), load_board("v80")
    kv_per_token = 2 * 32 * 8 * 128 * 2  # K and V, layers, kv heads, head dim, fp16 bytes
    assert memory_bytes(u280, model, 1024, 1) == 8_029_995_008 * 2 + kv_per_token * 1025
    assert not fits_memory(u280, model, 256, 1)  # ~15 GiB of fp16 weights on 8 GiB of HBM
    assert fits_memory(v80, model, 16384, 1)  # 17 GiB on 32 GiB
    assert not fits_memory(v80, load_model("vicuna-13b-v1.5"), 16384, 1)  # 36.7 GiB


def test_simulate_warns_and_flags(capsys) -> None:
    base = ["simulate", "-m", "llama-3.1-8b", "-L", "256", "-e", "analytic", "-f", "json"]
    res = run_cli(capsys, *base, "-b", "u280")
    assert res.code == 0
    assert json.loads(res.out)["fits_memory"] is False
    (line,) = res.err.splitlines()
    assert line.startswith("fpgasim: warning: llama-3.1-8b needs 14.99 GiB") and "8 GiB" in line
    res = run_cli(capsys, *base, "-b", "v80")
    assert res.code == 0 and json.loads(res.out)["fits_memory"] is True
    # no memory warning; the study's fp16 array on the V80 is marked for its DSPs instead
    (line,) = res.err.splitlines()
    assert line.startswith("fpgasim: warning: v80's MM/MV arrays need 16,384 DSP58"), line


def test_sweep_rows_carry_fits_memory(tmp_path, capsys) -> None:
    out = tmp_path / "s.csv"
    res = run_cli(capsys, "sweep", "-b", "u280,v80", "-m", "llama-3.1-8b", "--contexts", "256",
                  "--verify-lens", "1-2", "--no-cache", "--executor", "inprocess", "--out",
                  str(out))
    assert res.code == 0, res.err
    import pandas as pd

    frame = pd.read_csv(out)
    assert dict(zip(frame["board"], frame["fits_memory"], strict=False)) == {
        "u280": False, "v80": True}


def test_generate_warns_as_simulate_does(capsys) -> None:
    # longchat-13b: vicuna-13b's shape with a 16,384-token window
    base = ["generate", "-b", "v80", "-m", "longchat-13b", "-D", "4", "-e", "analytic",
            "-f", "json"]
    res = run_cli(capsys, *base, "-P", "12000")  # the last step's KV cache outgrows 32 GiB
    assert res.code == 0
    # the study's V80 array is beyond the part's DSPs: that line at every prompt length
    dsps, line = res.err.splitlines()
    assert "beyond the part" in dsps
    assert line.startswith("fpgasim: warning: longchat-13b needs 33.41 GiB") and "32 GiB" in line
    res = run_cli(capsys, *base, "-P", "128")
    assert res.code == 0 and res.err.splitlines() == [dsps]
