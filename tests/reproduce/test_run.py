"""Every experiment runs on a reduced grid: embedded AAT, and measured via ../shared."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from fpgasim.reproduce import (
    Experiment,
    RunContext,
    experiment_names,
    load_experiment,
    markdown,
    output_columns,
    run_experiment,
    write_outputs,
)
from fpgasim.reproduce.kind import experiment_kind
from fpgasim.solving.tree_design import MODEL_TREE_METHODS

STUDY = ["table1", "table2", "table3", "table4", "fig1", "fig2", "fig4", "fig5", "fig6"]


def reduced(name: str) -> Experiment:
    """The experiment on one board, one model and one context per workload group."""
    exp = load_experiment(name)
    assert isinstance(exp, Experiment)
    workloads = [
        w.model_copy(update={"boards": w.boards[:1], "models": w.models[:1], "contexts": [c]})
        for w in exp.workloads
        for c in (w.contexts[-1:] if w.algorithm == "longspec" else w.contexts[:1])
    ]
    return exp.model_copy(update={"workloads": workloads})


def check_shape(result, exp: Experiment) -> None:
    table = result.table
    assert list(table.columns) == output_columns(exp)
    # the contract's columns in order, with the decision (where a best x is shown) first
    contract = [c for c in table.columns if c in exp.columns or c == "decision"]
    assert [c for c in contract if c != "decision"][: len(exp.columns)] == exp.columns
    if "decision" in table:
        x_col = next(c for c in exp.columns if c.endswith("verify_len"))
        assert list(table.columns).index("decision") == list(table.columns).index(x_col) - 1
    timed = experiment_kind(exp.kind).timed
    assert table.columns[-1] == ("lowering" if timed else "aat_source")
    assert result.aat_source and result.aat_source in markdown(result)
    assert (result.engine == "analytic") == timed


@pytest.mark.parametrize("name", STUDY)
def test_embedded_reduced(name: str) -> None:
    exp = reduced(name)
    result = run_experiment(exp, engine="analytic")
    check_shape(result, exp)
    if not exp.aat.embedded:  # table2: per-task differences need measured AAT
        assert not result.available and result.table.empty
        assert "task-agnostic" in result.notes[0]
        assert "not reproduced" in markdown(result)
        return
    assert result.available and len(result.table) > 0
    assert set(result.table["aat_source"]) == {"embedded"}
    assert "embedded" in result.aat_source
    if "task" in result.table:
        assert set(result.table["task"]) == {"embedded"}


@pytest.mark.parametrize("name", STUDY)
def test_measured_reduced(name: str, aat_dir) -> None:
    exp = reduced(name)
    result = run_experiment(exp, engine="analytic", aat_dir=aat_dir)
    check_shape(result, exp)
    assert result.available and len(result.table) > 0
    # tree methods no table measures (optimal, throughput) are modelled, and say so
    method = result.full.get("method", pd.Series("", index=result.full.index))
    modelled = method.isin(MODEL_TREE_METHODS)
    assert set(result.full.loc[~modelled, "aat_source"]) == {exp.aat.source}
    assert set(result.full.loc[modelled, "aat_source"]) <= {"embedded"}
    assert set(result.table["aat_file"]) <= set(exp.aat.files) | {""}


def test_sets_and_curves_are_consistent(aat_dir) -> None:
    ctx = RunContext(None, aat_dir)
    from fpgasim.engine import get_engine

    ctx.engine = get_engine("analytic")
    sets = run_experiment(reduced("table1"), ctx=ctx).table
    curve = run_experiment(reduced("fig1"), ctx=ctx).table
    best = sets[sets["method"] == "best"].iloc[0]
    ad = sets[sets["method"] == "ad"].iloc[0]
    assert ad["verify_len"] == 1 and ad["speedup"] == 1.0  # AD is x = 1
    assert math.isclose(curve["speedup"].max(), best["speedup"], rel_tol=1e-12)
    assert int(curve.loc[curve["speedup"].idxmax(), "verify_len"]) == best["verify_len"]
    assert curve.iloc[0]["verify_len"] == 1 and curve.iloc[0]["speedup"] == 1.0


def test_files_and_figure_are_written(tmp_path) -> None:
    result = run_experiment(reduced("fig5"), engine="analytic")
    paths = write_outputs(result, tmp_path)
    assert sorted(p.name for p in paths) == ["fig5.csv", "fig5.md", "fig5.png"]
    assert (tmp_path / "fig5.png").read_bytes()[:4] == b"\x89PNG"
    assert "![fig5](fig5.png)" in (tmp_path / "fig5.md").read_text()
    frame = pd.read_csv(tmp_path / "fig5.csv")
    assert list(frame.columns[:6]) == ["context", "A", "B", "C", "r2", "n_fit_points"]


def test_external_experiment_runs() -> None:
    assert "dovetail1" in experiment_names()
    result = run_experiment("dovetail1", engine=None)
    assert list(result.table.columns[:2]) == ["method", "device"]


def test_the_run_starts_the_costliest_experiments_first() -> None:
    """`reproduce.pool._cost` orders the workers' experiments: a throughput tree search
    and fig4's 34 solved curves before the tables of a few curves; an AAT-only kind solves
    no curve and costs only its figure."""
    from fpgasim.cli.reproduce_cmd import _experiments
    from fpgasim.reproduce.pool import FIGURE_CURVES, _cost

    cost = {e.name: _cost(e) for e in _experiments(["all"])}
    assert cost["fig5"] == cost["fig6"] == FIGURE_CURVES  # AAT only, drawn
    assert min(cost["fig4"], cost["table3"]) > max(cost["table1"], cost["table2"], cost["fig1"])
