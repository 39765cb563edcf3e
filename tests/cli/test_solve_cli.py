"""`fpgasim solve` through the real entry point: outputs, files, and the exit-2 paths."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from fpgasim.solving.solver import SUMMARY_COLUMNS
from tests.cli_helpers import run_cli, run_subprocess
from tests.solving.test_solver import synthetic_aat

BASE = ("solve", "-b", "v80", "-m", "llama-3.1-8b", "-a", "longspec", "--engine", "analytic")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return synthetic_aat(tmp_path / "aat")


@pytest.mark.slow
def test_table_plot_and_schedule(capsys, folder, tmp_path) -> None:
    png, sched = tmp_path / "out" / "model.png", tmp_path / "sched.yaml"
    res = run_cli(
        capsys,
        *BASE,
        "--contexts",
        "128,4096",
        "--aat-dir",
        str(folder),
        "--plot",
        str(png),
        "--schedule-out",
        str(sched),
    )
    assert res.code == 0, res.err
    for text in (
        "Best / Ori / Naive sets",
        "AD tok/s",
        "naive speedup",
        "Regime",
        "x_R",
        "R² fit",
        "Dynamic schedule",
        "mixed",
        "use SD",
    ):
        assert text in res.out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000
    doc = yaml.safe_load(sched.read_text())
    assert doc["board"] == "v80" and doc["tasks"] == ["gov_report"]
    assert doc["ranges"][0]["context_from"] == 1 and doc["ranges"][-1]["context_to"] is None


def test_json_and_csv(capsys, folder) -> None:
    res = run_cli(
        capsys,
        *BASE,
        "--contexts",
        "128",
        "--aat-dir",
        str(folder),
        "-f",
        "json",
        "--fit-points",
        "2,5,13,33",
        "--naive-threshold",
        "0.03",
    )
    assert res.code == 0, res.err
    data = json.loads(res.out)
    row = data["summary"][0]
    assert row["aat_fit_points"] == "2,5,13,33" and row["naive_threshold"] == 0.03
    assert data["unified"] == [] and data["schedule"][0]["context_to"] is None
    res = run_cli(capsys, *BASE, "--contexts", "128,4096", "--aat-dir", str(folder), "-f", "csv")
    assert res.code == 0, res.err
    frame = pd.read_csv(io.StringIO(res.out))
    # the solver's columns plus provenance (lowering), the sheet's ridge and the validation of
    # the absolute figures; decision first
    assert sorted(frame.columns) == sorted([*SUMMARY_COLUMNS, "lowering", "ridge_tokens",
                                            "validation"])
    assert len(frame) == 2 and (frame["lowering"] == "flightllm").all()
    cols = list(frame.columns)
    assert cols.index("decision") == cols.index("best_verify_len") - 1
    rule = frame["best_speedup"].gt(1).map({True: "use SD", False: "use AD"})
    assert (frame["decision"] == rule).all()


@pytest.mark.slow
def test_solve_says_where_the_accounting_decides_otherwise(capsys, aat_dir) -> None:
    """U280 at L = 256: the accounting picks SD at x = 4, the simulator AD (its MV-rate
    passes); one line says so, with the reason; the verdict comes before the best x."""
    args = ["solve", "-b", "u280", "-m", "llama-3.1-8b", "-a", "longspec", "--task"]
    res = run_cli(capsys, *args, "gov_report", "--contexts", "256", "--aat-dir", str(aat_dir),
                  "--engine", "fast")  # the default `event`'s cycles, 10x sooner
    assert res.code == 0, res.err
    line = next(x for x in res.out.splitlines() if "SD-or-AD differs" in x)
    assert "the accounting says use SD (x=4" in line and "the simulator (fast) use AD" in line
    assert "MV rate" in line
    header = next(x for x in res.out.splitlines() if "best x" in x)
    assert header.index("decision") < header.index("speedup") < header.index("best x")
    assert "lowering flightllm" in res.out and "alpha: the draft cost" in res.out


def test_several_tasks_print_the_unified_table(capsys, tmp_path) -> None:
    folder = synthetic_aat(tmp_path / "aat", contexts=(1024,), tasks=("a", "b"))
    res = run_cli(
        capsys,
        *BASE,
        "--contexts",
        "1024",
        "--aat-dir",
        str(folder),
        "--task",
        "a",
        "--task",
        "b",
        "--mean",
        "arithmetic",
    )
    assert res.code == 0, res.err
    assert "Across tasks: unified x from the arithmetic mean" in res.out


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (("--contexts", "128", "--plot", "x.jpg"), "--plot"),
        (("--contexts", "128", "--schedule-out", "x.txt"), "--schedule-out"),
        (("--contexts", "12a"), "--contexts"),
        (("--contexts", "0"), "--contexts"),
        (("--contexts", "128", "--naive-threshold", "0"), "--naive-threshold"),
        (("--contexts", "128", "--engine", "warp"), "--engine"),
        (("--contexts", "128", "--fit-points", "2,3"), "--fit-points"),
        (("--contexts", "128", "--task", "nope"), "nope"),
        (("--contexts", "128", "--curve-method", "chain"), "--curve-method"),
        (("--contexts", "128", "--aat-source", "magic"), "--aat-source"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, folder, extra, needle) -> None:
    res = run_cli(capsys, *BASE, "--aat-dir", str(folder), *extra)
    assert res.code == 2, res.out
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fpgasim: error:") and needle in lines[0]
    assert "Traceback" not in res.err


def test_bad_table_and_missing_folder_exit_2(capsys, tmp_path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "t.csv").write_text("algorithm,model\nlongspec,x\n")
    res = run_cli(capsys, *BASE, "--contexts", "128", "--aat-dir", str(bad))
    assert res.code == 2 and "missing task" in res.err and str(bad / "t.csv") in res.err
    res = run_cli(capsys, *BASE, "--contexts", "128", "--aat-dir", str(tmp_path / "none"))
    assert res.code == 2 and "--aat-dir" in res.err


@pytest.mark.slow
def test_done_when_command(aat_dir) -> None:
    res = run_subprocess(
        *BASE,
        "--task",
        "gov_report",
        "--contexts",
        "128,512,2048,4096,8192,16384",
        "--aat-dir",
        str(aat_dir),
        "-f",
        "csv",
    )
    assert res.code == 0, res.err
    s = pd.read_csv(io.StringIO(res.out)).set_index("context")
    assert (s["decision"] == "use SD").all()
    assert s.loc[128, "ori_speedup"] < 1 < s.loc[16384, "ori_speedup"]


def test_docs_library_example_runs(repo, tmp_path, monkeypatch) -> None:
    text = (repo / "docs" / "analysis.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert 'aat_dir="builtin"' in code  # the shipped tables, by the name any install has
    monkeypatch.chdir(tmp_path)  # not relative to the repository
    scope: dict = {}
    exec(compile(code, "docs/analysis.md", "exec"), scope)
    sol = scope["sol"]
    assert list(sol.summary["context"]) == [128, 16384]
    assert (sol.summary["aat_file"] == "longspec_llama31_tree.csv").all()
    assert not sol.schedule.empty
