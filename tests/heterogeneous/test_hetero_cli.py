"""`fpgasim hetero solve|dovetail1`: smoke tests and the exit-2 paths."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from fpgasim.heterogeneous import TABLE_COLUMNS
from tests.cli_helpers import run_cli, run_subprocess


@pytest.mark.slow
def test_dovetail1_csv_subprocess() -> None:
    res = run_subprocess("hetero", "dovetail1", "--format", "csv")
    assert res.code == 0, res.err
    frame = pd.read_csv(io.StringIO(res.out))
    assert list(frame.columns) == TABLE_COLUMNS
    assert len(frame) == 4


def test_dovetail1_table_and_json(capsys) -> None:
    res = run_cli(capsys, "hetero", "dovetail1")
    assert res.code == 0, res.err
    assert "Dovetail" in res.out and "speedup_model" in res.out
    res = run_cli(capsys, "hetero", "dovetail1", "-f", "json")
    assert res.code == 0
    assert {r["method"] for r in json.loads(res.out)} == {"EAGLE-2", "Dovetail"}


def test_solve_table(capsys) -> None:
    res = run_cli(capsys, "hetero", "solve", "--platform", "xeon4214r-rtx2080s", "--model",
                  "llama2-chat-7b")  # fmt: skip
    assert res.code == 0, res.err
    assert "best gamma" in res.out and "winner" in res.out


def test_solve_json_and_csv(capsys) -> None:
    args = ["hetero", "solve", "-p", "i5-9300h-gtx1050m", "-m", "llama2-chat-7b", "--depth", "4",
            "--gammas", "2-16", "--blocks", "0-8"]  # fmt: skip
    res = run_cli(capsys, *args, "-f", "json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    best = data["best"]
    assert best["platform"] == "i5-9300h-gtx1050m" and 2 <= best["gamma"] <= 16
    assert best["drafter_fits_gpu"] and best["blocks"] <= best["max_blocks_fitting"] < 8
    assert best["winner"] in {"sd", "ad", "offload"}
    res = run_cli(capsys, *args, "-f", "csv")
    assert res.code == 0
    grid = pd.read_csv(io.StringIO(res.out))
    assert len(grid) == 15 * 9


def test_solve_gpu_only_json_has_null_offload(capsys) -> None:
    res = run_cli(capsys, "hetero", "solve", "-p", "rtx4090", "-m", "llama2-chat-7b", "--gammas",
                  "8,60", "--blocks", "0", "-f", "json")  # fmt: skip
    assert res.code == 0, res.err
    assert json.loads(res.out)["best"]["t_offload_s"] is None


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-p", "no-such-host", "-m", "llama2-chat-7b"], "unknown platform"),
        (["-p", "xeon4214r-rtx2080s", "-m", "no-such-model"], "unknown model"),
        (["-p", "xeon4214r-rtx2080s", "-m", "llama2-chat-7b", "--gammas", "0-4"], "--gammas"),
        (["-p", "xeon4214r-rtx2080s", "-m", "llama2-chat-7b", "--gammas", "a"], "--gammas"),
        (["-p", "xeon4214r-rtx2080s", "-m", "llama2-chat-7b", "--blocks", "9-2"], "--blocks"),
        (["-p", "xeon4214r-rtx2080s", "-m", "llama2-chat-7b", "--context", "0"], "--context"),
        (["-p", "xeon4214r-rtx2080s", "-m", "llama2-chat-7b", "-f", "xml"], "--format"),
        (["-p", "i5-9300h-gtx1050m", "-m", "llama2-chat-7b", "--blocks", "20"], "fits the GPU"),
        (["-m", "llama2-chat-7b"], "--platform"),
    ],
)
def test_solve_bad_input_exits_2(capsys, args, needle) -> None:
    res = run_cli(capsys, "hetero", "solve", *args)
    assert res.code == 2
    assert needle in res.err
    assert len(res.err.strip().splitlines()) == 1
    assert "Traceback" not in res.err


def test_bad_platform_file_exits_2(capsys, tmp_path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ncpu: [1, 2]\n")
    res = run_cli(capsys, "hetero", "solve", "-p", str(bad), "-m", "llama2-chat-7b")
    assert res.code == 2
    assert str(bad) in res.err and len(res.err.strip().splitlines()) == 1


def test_help_lists_commands(capsys) -> None:
    res = run_cli(capsys, "hetero", "--help")
    assert res.code == 0
    assert "solve" in res.out and "dovetail1" in res.out
