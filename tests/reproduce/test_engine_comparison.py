"""The engine-comparison tables (`python -m fpgasim.cli.compare_engines`): their keys pick
one row per experiment row, so an engine compared with itself matches row for row."""

from __future__ import annotations

import pytest

from fpgasim.engine import get_engine
from fpgasim.reproduce.engine_comparison import comparable, side_by_side
from fpgasim.reproduce.experiment_loader import load_experiment
from fpgasim.reproduce.experiment_runner import run_experiment
from fpgasim.reproduce.kind import experiment_kind
from fpgasim.reproduce.workloads import RunContext


@pytest.mark.slow
def test_tree_design_compared_with_itself_row_for_row() -> None:
    """tree_design spans several boards and algorithms: keyed on context and method alone,
    its merge multiplied rows (32 -> 128) and the script stopped with a pandas error."""
    result = run_experiment(load_experiment("tree_design"), ctx=RunContext(get_engine("analytic")))
    frame = comparable(result)
    compare = experiment_kind(result.kind).compare
    assert compare is not None
    keys = [k for k in compare.keys if k in frame]
    assert not frame.duplicated(keys).any()
    table = side_by_side(result, result)
    assert len(table) == len(frame)
    assert (table["flag"] == "").all()
    assert (table["speedup ratio"] == 1.0).all()
