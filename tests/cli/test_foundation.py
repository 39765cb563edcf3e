"""CLI smoke tests for simulate, sweep and boards, including the exit-2 paths."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.cli_helpers import run_cli, run_subprocess


@pytest.mark.slow
def test_simulate_json_calibration_subprocess() -> None:
    res = run_subprocess("simulate", "--board", "u280", "--model", "llama-3.1-8b", "--context",
                         "256", "--verify-len", "1", "--engine", "analytic", "--format", "json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    for key in ("board", "model", "context", "verify_len", "engine", "verify_cycles", "verify_s",
                "verify_tokens_per_s", "ld_cycles", "st_cycles", "compute_cycles", "bound"):
        assert key in data
    assert data["verify_tokens_per_s"] == pytest.approx(22.12, abs=0.05)
    assert data["verify_tokens_per_s"] == pytest.approx(1 / data["verify_s"])


def test_simulate_with_algorithm(capsys) -> None:
    res = run_cli(capsys, "simulate", "-b", "v80", "-m", "llama-3.1-8b", "-L", "1024", "-x", "69",
                  "-a", "longspec", "--tree", "4 16 16 16 16", "--accepted", "3",
                  "--engine", "analytic", "--format", "json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["draft_cycles"] > 0 and data["draft_s"] > 0
    assert data["draft_passes"] == 5
    res = run_cli(capsys, "simulate", "-b", "v80", "-m", "llama-3.1-8b", "-L", "1024", "-x", "61",
                  "-a", "eagle3", "--depth", "6", "--top-k", "10", "--engine", "analytic",
                  "--format", "json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["draft_passes"] == 7


def test_simulate_table(capsys) -> None:
    res = run_cli(capsys, "simulate", "-b", "u280", "-m", "llama-3.1-8b", "-L", "256",
                  "--engine", "analytic")
    assert res.code == 0
    assert "verify_tokens_per_s" in res.out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-b", "nope", "-m", "llama-3.1-8b", "-L", "1"], "--board"),
        (["-b", "u280", "-m", "nope", "-L", "1"], "--model"),
        (["-b", "u280", "-m", "llama-3.1-8b", "-L", "0"], "--context"),
        (["-b", "u280", "-m", "llama-3.1-8b", "-L", "5", "-x", "0"], "--verify-len"),
        (["-b", "u280", "-m", "llama-3.1-8b", "-L", "5", "-a", "longspec", "--tree", "4 x"],
         "--tree"),
        (["-b", "u280", "-m", "llama-3.1-8b", "-L", "5", "-a", "longspec", "--tree", "0 3"],
         "--tree"),
        (["-b", "u280", "-m", "llama-3.1-8b", "-L", "5", "-e", "warp"], "--engine"),
        (["-b", "u280", "-m", "llama-3.1-8b"], "--context"),
        (["-b", "u280", "-m", "llama-3.1-8b", "-L", "5", "--tree", "4 4"], "--algorithm"),
    ],
)
def test_simulate_bad_input_exit_2(capsys, args: list[str], needle: str) -> None:
    res = run_cli(capsys, "simulate", *args)
    assert res.code == 2
    lines = res.err.strip().splitlines()
    assert len(lines) == 1, res.err
    assert needle in lines[0] or needle.strip("-") in lines[0]
    assert "Traceback" not in res.err


def test_bad_board_file_exit_2(tmp_path: Path, capsys) -> None:
    # a data-sheet value out of range, given in a board file's overrides: named by the file
    bad = tmp_path / "bad.yaml"
    bad.write_text((Path(__file__).resolve().parents[2] / "boards/u280.yaml").read_text()
                   + "overrides:\n  fpga.memory.bandwidth_gb_s: -460\n")
    res = run_cli(capsys, "simulate", "-b", str(bad), "-m", "llama-3.1-8b", "-L", "5")
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1, res.err
    assert str(bad) in res.err and "memory.bandwidth_gb_s" in res.err and "-460" in res.err
    # and in a data sheet of its own, given with --fpga: named by that file
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text((Path(__file__).resolve().parents[2] / "fpgas/u280.yaml").read_text()
                     .replace("bandwidth_gb_s: 460", "bandwidth_gb_s: -460"))
    res = run_cli(capsys, "simulate", "--fpga", str(sheet), "--design", "study", "-m",
                  "llama-3.1-8b", "-L", "5")
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1, res.err
    assert str(sheet) in res.err and "memory.bandwidth_gb_s" in res.err and "-460" in res.err


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_sweep_writes_rows(tmp_path: Path, capsys, suffix: str) -> None:
    out = tmp_path / f"s{suffix}"
    res = run_cli(capsys, "sweep", "-b", "u280,v80", "-m", "llama-3.1-8b", "-a", "longspec",
                  "--contexts", "128,256", "--verify-lens", "1-5", "--out", str(out),
                  "--engine", "analytic")
    assert res.code == 0, res.err
    frame = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    assert len(frame) == 2 * 2 * 5
    assert list(frame.columns[:9]) == ["board", "fpga", "design", "model", "algorithm",
                                       "context", "verify_len", "batch", "engine"]
    assert (frame.loc[frame.verify_len == 1, "draft_cycles"] == 0).all()
    assert (frame.loc[frame.verify_len > 1, "draft_cycles"] > 0).all()


def test_sweep_bad_extension_writes_nothing(tmp_path: Path, capsys) -> None:
    out = tmp_path / "s.xlsx"
    res = run_cli(capsys, "sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128",
                  "--out", str(out))
    assert res.code == 2 and not out.exists()


@pytest.mark.parametrize("lens", ["0-3", "5-2", "a,b", ""])
def test_sweep_bad_lists(tmp_path: Path, capsys, lens: str) -> None:
    res = run_cli(capsys, "sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128",
                  "--verify-lens", lens, "--out", str(tmp_path / "o.csv"))
    assert res.code == 2
    assert len(res.err.strip().splitlines()) == 1


@pytest.mark.slow
def test_boards_table(capsys) -> None:
    res = run_cli(capsys, "boards", "--json")
    assert res.code == 0
    data = json.loads(res.out)
    assert set(data) == {"boards", "fpgas", "designs", "fits"}
    rows = {r["board"]: r for r in data["boards"]}
    assert set(rows) >= {"u280", "vhk158", "v80", "u250", "flightllm-u280", "flightllm-vhk158"}
    assert rows["u280"]["mm_array"] == "64x48" and rows["u280"]["dsps_used"] == 3072
    # bandwidth-poor U250 has the highest ridge point, U280 the lowest of the study's four
    assert rows["u250"]["ridge_tokens"] > rows["v80"]["ridge_tokens"] > rows["u280"][
        "ridge_tokens"]
    fpgas = {r["fpga"] for r in data["fpgas"]}
    assert fpgas >= {"u280", "u250", "u55c", "u50", "vck190", "vhk158", "v80"}
    assert {r["design"] for r in data["designs"]} >= {"flightllm", "flightllm-mv4", "study"}
    assert len(data["fits"]) == len(data["fpgas"]) * len(data["designs"])


def test_help_lists_commands(capsys) -> None:
    res = run_cli(capsys, "--help")
    assert res.code == 0
    for cmd in ("simulate", "sweep", "boards"):
        assert cmd in res.out
