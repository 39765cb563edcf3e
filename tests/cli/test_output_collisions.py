"""Outputs never collide: two experiments or two boards of one name are refused before any
work, and sweep rows carry the file each board came from."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fpgasim.config import load_board, load_model
from fpgasim.errors import InputError
from fpgasim.sweep import Grid
from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]


def copy_named(tmp_path: Path, source: Path, file_name: str) -> Path:
    """A copy of `source` under another file name (its `name:` unchanged)."""
    path = tmp_path / file_name
    path.write_text(source.read_text())
    return path


def test_reproduce_refuses_two_experiments_of_one_name(tmp_path: Path, capsys,
                                                       monkeypatch) -> None:
    """Both wrote results/table4.csv (the second over the first) and the run exited 0."""
    import fpgasim.cli.reproduce_cmd as cmd

    ran = []
    monkeypatch.setattr(cmd, "_run", lambda *a, **k: ran.append(1) or [])
    other = copy_named(tmp_path, REPO / "workloads/experiments/table4.yaml", "mine.yaml")
    out = tmp_path / "results"
    res = run_cli(capsys, "reproduce", "table4", str(other), "--out", str(out),
                  "-e", "analytic")
    assert res.code == 2 and ran == [] and not out.exists(), res.err
    (line,) = res.err.strip().splitlines()
    assert line.startswith("fpgasim: error: argument NAME = "), line
    assert "table4" in line and str(other) in line and "table4.csv" in line


def test_a_sweep_refuses_two_boards_of_one_name(tmp_path: Path, capsys, monkeypatch) -> None:
    """The rows of both boards were labelled `u280` (and the second one's design was the
    first's); nothing told them apart."""
    import fpgasim.cli.sweep_cmd as cmd

    ran = []
    monkeypatch.setattr(cmd, "run_sweep", lambda *a, **k: ran.append(1))
    twin = copy_named(tmp_path, REPO / "boards/flightllm-u280.yaml", "twin.yaml")
    twin.write_text(twin.read_text().replace("name: flightllm-u280", "name: u280", 1))
    assert load_board(str(twin)).design.name == "flightllm" != load_board("u280").design.name
    out = tmp_path / "s.csv"
    res = run_cli(capsys, "sweep", "-b", f"u280,{twin}", "-m", "llama2-7b-flightllm",
                  "--contexts", "128", "--verify-lens", "1", "--no-cache", "--out", str(out))
    assert res.code == 2 and ran == [] and not out.exists(), res.err
    (line,) = res.err.strip().splitlines()
    assert line.startswith("fpgasim: error: argument --board = "), line
    assert "u280.yaml" in line and str(twin) in line and "'u280'" in line
    with pytest.raises(InputError, match="both named 'u280'"):
        Grid(boards=[load_board("u280"), load_board(str(twin))],
             model=load_model("llama-3.1-8b"), contexts=[128], verify_lens=[1])


def test_sweep_rows_carry_the_board_file(tmp_path: Path, capsys) -> None:
    mine = copy_named(tmp_path, REPO / "boards/v80.yaml", "mine.yaml")
    mine.write_text(mine.read_text().replace("name: v80", "name: mine", 1))
    out = tmp_path / "s.csv"
    res = run_cli(capsys, "sweep", "-b", f"u280,{mine}", "-m", "llama-3.1-8b", "--contexts",
                  "128", "--verify-lens", "1-2", "--no-cache", "-e", "analytic",
                  "--executor", "inprocess", "--out", str(out))
    assert res.code == 0, res.err
    frame = pd.read_csv(out)
    assert list(frame.columns[:11]) == ["board", "fpga", "design", "model", "algorithm",
                                        "context", "verify_len", "batch", "engine", "lowering",
                                        "board_file"]
    assert dict(zip(frame["board"], frame["board_file"], strict=False)) == {
        "u280": "boards/u280.yaml", "mine": str(mine)}
