"""`fpgasim reproduce` through the real entry point: outputs, stdout purity, exit 2 paths."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from fpgasim.cli.reproduce_cmd import _experiments
from fpgasim.reproduce.experiment_loader import doc_experiment_names
from tests.cli_helpers import run_cli

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


@pytest.mark.slow
def test_csv_to_stdout_is_pure_csv(aat_dir: Path, tmp_path: Path) -> None:
    """A real process: stdout is exactly the CSV, stderr is empty, no file is written."""
    args = ["reproduce", "table4", "--aat-dir", str(aat_dir), "--engine", "analytic"]
    proc = subprocess.run(
        [sys.executable, "-m", "fpgasim", *args, "--format", "csv"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    frame = pd.read_csv(io.StringIO(proc.stdout))
    assert list(frame.columns[:7]) == [
        "board",
        "context",
        "ar_tokens_per_s",
        "decision",
        "best_verify_len",
        "best_tokens_per_s",
        "speedup",
    ]
    assert len(frame) == 16 and set(frame["engine"]) == {"analytic"}
    assert proc.stdout == (GOLDEN / "table4.csv").read_text()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_csv_to_stdout_writes_nothing(capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = run_cli(capsys, "reproduce", "fig6", "--format", "csv")
    assert res.code == 0 and res.err == ""
    assert res.out.splitlines()[0].startswith("method,verify_len,aat,")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_table_format_writes_files_and_says_the_source(capsys, tmp_path: Path) -> None:
    res = run_cli(
        capsys, "reproduce", "table3", "fig6", "--aat", "embedded", "--engine", "analytic",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert res.code == 0, res.err
    assert "AAT: embedded acceptance model" in res.out and "engine: analytic" in res.out
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["fig6.csv", "fig6.md", "fig6.png", "table3.csv", "table3.md"]
    assert "table3: wrote" in res.err
    md = (tmp_path / "table3.md").read_text()
    assert md.startswith("# table3: Table III") and "AAT: embedded" in md


@pytest.mark.slow
def test_md_format_and_unavailable_experiment(capsys, tmp_path: Path) -> None:
    res = run_cli(
        capsys, "reproduce", "table2", "--aat", "embedded", "--format", "md", "--out", str(tmp_path)
    )
    assert res.code == 0, res.err
    assert "not reproduced with this AAT source" in res.out and "task-agnostic" in res.out
    frame = pd.read_csv(tmp_path / "table2.csv")
    assert frame.empty and list(frame.columns[:3]) == ["task", "decision", "best_verify_len"]


def test_unknown_name_exits_2(capsys) -> None:
    res = run_cli(capsys, "reproduce", "table9")
    assert res.code == 2 and res.out == ""
    assert res.err.startswith("fpgasim: error:") and "table4" in res.err
    assert len(res.err.strip().splitlines()) == 1


def test_bad_aat_dir_exits_2(capsys, tmp_path: Path) -> None:
    res = run_cli(capsys, "reproduce", "table4", "--aat-dir", str(tmp_path / "nope"))
    assert res.code == 2 and "no such folder" in res.err
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    res = run_cli(capsys, "reproduce", "table4", "--aat-dir", str(tmp_path), "--out", str(tmp_path))
    assert res.code == 2 and "longspec_llama31_tree.csv" in res.err and "missing" in res.err
    assert not (tmp_path / "table4.csv").exists()


def test_other_exit_2_paths(capsys, tmp_path: Path) -> None:
    res = run_cli(capsys, "reproduce", "all", "--format", "csv")
    assert res.code == 2 and "--out" in res.err
    res = run_cli(capsys, "reproduce", "fig5", "--engine", "warp")
    assert res.code == 2 and "analytic" in res.err
    res = run_cli(capsys, "reproduce", "fig5", "--aat", "guessed")
    assert res.code == 2 and "--aat" in res.err and "embedded" in res.err
    res = run_cli(capsys, "reproduce", "fig5", "--aat", "embedded", "--aat-dir", str(tmp_path))
    assert res.code == 2 and "--aat-dir" in res.err and len(res.err.strip().splitlines()) == 1


@pytest.mark.slow
def test_default_is_measured_and_side_by_side(capsys, tmp_path: Path) -> None:
    """No option: the shipped measured tables, the accounting beside the fast simulator."""
    res = run_cli(capsys, "reproduce", "table3", "--out", str(tmp_path), "--workers", "1")
    assert res.code == 0, res.err
    assert "AAT: measured" in res.out and "workloads/aat" in res.out
    assert "engine: analytic" in res.out and "beside fast" in res.out
    frame = pd.read_csv(tmp_path / "table3.csv")
    golden = pd.read_csv(GOLDEN / "table3.csv")
    assert list(frame.columns[: len(golden.columns)]) == list(golden.columns)
    pd.testing.assert_frame_equal(frame[golden.columns], golden)
    tail = ["decision_sim", "verify_len_sim", "tokens_per_s_sim", "speedup_sim", "speedup_ratio"]
    assert list(frame.columns[len(golden.columns) :]) == [*tail, "sim_engine", "sim_reason"]
    assert set(frame["sim_engine"]) == {"fast"}


def test_all_is_the_studys_nine_and_everything_adds_the_extensions() -> None:
    """`all` = docs/reproduction.md's experiments, then the fast doc tables; `docs` = every
    doc table; `everything` = every shipped file."""
    named = [e.name for e in _experiments(["all"])]
    study = named[:9]
    assert study == ["table1", "table2", "table3", "table4", "fig1", "fig2", "fig4", "fig5", "fig6"]
    assert named[9:] == doc_experiment_names(slow=False)
    assert [e.name for e in _experiments(["docs"])] == doc_experiment_names()
    every = [e.name for e in _experiments(["everything"])]
    shipped = Path(__file__).resolve().parents[2] / "workloads" / "experiments"
    assert every[:9] == study and set(every) == {p.stem for p in shipped.glob("*.yaml")}
    assert {"tree_design", "dovetail1"} <= set(every) and len(every) == len(set(every))
    assert "table4-flightllm" not in every  # retired with the study lowering
