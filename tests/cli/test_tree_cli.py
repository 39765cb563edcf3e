"""`fpgasim tree ...`: smoke tests through the real entry point, and the exit-2 paths."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fpgasim.config import load_algorithm
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.tree.embedded import embedded_model
from fpgasim.tree.positional import generate_traces
from fpgasim.tree.traces import write_traces
from tests.cli_helpers import run_cli, run_subprocess

SEQUOIA = ".6342,.1079,.0570,.0225,.0195,.0150,.0045,.0030,.0120"


@pytest.mark.slow
def test_optimal_json_subprocess() -> None:
    res = run_subprocess(
        "tree",
        "optimal",
        "--acceptance-vector",
        SEQUOIA,
        "--size",
        "16",
        "--max-depth",
        "9",
        "--format",
        "json",
    )
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["size"] == 16 and data["method"] == "dp" and data["levels"] <= 9
    assert len(data["parents"]) == 16 and data["parents"][0] == -1
    assert sum(int(w) for w in data["tree_shape"].split()) == 15
    assert 1 < data["expected_aat"] < 16


def test_optimal_table_and_algorithm(capsys) -> None:
    res = run_cli(capsys, "tree", "optimal", "-p", "0.8,0.1;0.6,0.2", "-n", "10")
    assert res.code == 0, res.err
    assert "expected_aat" in res.out and "tree_shape" in res.out
    res = run_cli(
        capsys,
        "tree",
        "optimal",
        "-a",
        "longspec",
        "-L",
        "1024",
        "-n",
        "69",
        "-d",
        "6",
        "-f",
        "json",
    )
    assert res.code == 0, res.err
    assert json.loads(res.out)["method"] == "greedy"


@pytest.mark.parametrize(
    "args",
    [
        ["--size", "8"],  # no model
        ["-p", "0.5", "-a", "longspec", "--size", "8"],  # two models
        ["-p", "0.5,x", "--size", "8"],
        ["-p", "0.8,0.4", "--size", "8"],  # sums past 1
        ["-p", "0.5", "--size", "8", "--max-depth", "0"],
        ["-p", "0.5", "--size", "0"],
        ["-p", "0.5", "--size", "8", "-L", "100"],  # context without an algorithm
        ["-a", "nonesuch", "--size", "8"],
    ],
)
def test_optimal_bad_input_exits_2(capsys, args: list[str]) -> None:
    res = run_cli(capsys, "tree", "optimal", *args)
    assert res.code == 2, (res.out, res.err)
    assert res.err.startswith("fpgasim: error:") and "Traceback" not in res.err


def test_compare_with_plot_and_out(capsys, tmp_path: Path) -> None:
    png, csv = tmp_path / "cmp.png", tmp_path / "cmp.csv"
    res = run_cli(
        capsys,
        "tree",
        "compare",
        "-a",
        "longspec",
        "--sizes",
        "2-30",
        "--iterations",
        "20000",
        "--plot",
        str(png),
        "--out",
        str(csv),
        "-f",
        "json",
    )
    assert res.code == 0, res.err
    rows = json.loads(res.out)
    assert [r["verify_len"] for r in rows] == list(range(2, 31))
    for r in rows:
        assert r["optimal"] >= max(r["width"], r["depth"], r["prior_score"]) - 1e-9
    assert png.stat().st_size > 1000
    frame = pd.read_csv(csv)
    assert set(frame["method"]) == {"prior_score", "width", "depth", "optimal"}
    res = run_cli(
        capsys,
        "tree",
        "compare",
        "-a",
        "eagle3",
        "--sizes",
        "2,10,40",
        "--iterations",
        "5000",
        "-L",
        "2048",
    )
    assert res.code == 0, res.err
    assert "prior_score" in res.out


@pytest.mark.parametrize(
    "args",
    [
        ["-a", "longspec", "--sizes", "2-90"],  # past the maximal tree (85)
        ["-a", "longspec", "--sizes", "1-5"],
        ["-a", "longspec", "--plot", "x.jpg"],
        ["-a", "longspec", "--out", "x.txt"],
        ["-a", "longspec", "--max-tree", "0 4"],
    ],
)
def test_compare_bad_input_exits_2(capsys, args: list[str]) -> None:
    res = run_cli(capsys, "tree", "compare", *args)
    assert res.code == 2, (res.out, res.err)


def test_search_from_trace_file(capsys, tmp_path: Path) -> None:
    algo = load_algorithm("longspec")
    model = embedded_model(algo)
    max_tree = TokenTree.from_shape(algo.max_tree, model)
    traces = generate_traces(model, max_tree, 5000, np.random.default_rng(2))
    path, out = tmp_path / "traces.parquet", tmp_path / "trees.csv"
    write_traces(traces, path)
    res = run_cli(
        capsys,
        "tree",
        "search",
        "--traces",
        str(path),
        "--max-nodes",
        "84",
        "-a",
        "longspec",
        "--out",
        str(out),
    )
    assert res.code == 0, res.err
    table = pd.read_csv(out, keep_default_na=False)
    assert table["verify_len"].tolist() == list(range(2, 86))
    assert table["aat"].is_monotonic_increasing
    assert table["aat"].iloc[-1] == pytest.approx(traces.mean_aat())
    # without a maximal tree: the tree of all logged paths
    res = run_cli(capsys, "tree", "search", "-t", str(path), "--out", str(out))
    assert res.code == 0, res.err
    assert "paths cut" in res.out


@pytest.mark.parametrize(
    "content, extra",
    [
        ("path\n0 1\n", []),
        ("ranks\n0 a\n", []),
        ("ranks\n0\n", ["--max-tree", "2 0 1"]),
        ("ranks\n\n", []),
    ],
)
def test_search_bad_input_exits_2(capsys, tmp_path: Path, content: str, extra: list[str]) -> None:
    path = tmp_path / "t.csv"
    path.write_text(content)
    res = run_cli(capsys, "tree", "search", "-t", str(path), "-o", str(tmp_path / "o.csv"), *extra)
    assert res.code == 2, (res.out, res.err)
    res = run_cli(capsys, "tree", "search", "-t", str(tmp_path / "none.csv"), "-o", "o.csv")
    assert res.code == 2


def test_calibrate_json(capsys) -> None:
    res = run_cli(capsys, "tree", "calibrate", "-a", "eagle3", "-f", "json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["matches_shipped"] and data["tau_recomputed"] == pytest.approx(6.13, abs=0.005)
    res = run_cli(capsys, "tree", "calibrate", "-a", "eagle3", "--aat-dir", "/nonexistent")
    assert res.code == 2


@pytest.mark.parametrize("command", ["optimal", "compare", "search", "calibrate"])
def test_help(capsys, command: str) -> None:
    res = run_cli(capsys, "tree", command, "--help")
    assert res.code == 0 and "Usage" in res.out
