"""Bit-identical step timings over a fixed set of points (boards x models x drafters x
trees x contexts, every engine the lowering supports).

tests/golden/step_points.json was computed by the pre-refactor code path (`main` at the
commit in its `commit` field: `simulate.verify_timing` + `simulate.draft_timing` before the
step service and the drafter registry existed), so it checks the refactored path against an
independent implementation, not against itself. Its 120 study-lowering rows are also those
of b7f362d (before the FlightLLM compiler's MV/MM verify rule, which moved only the 4
FlightLLM rows).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fpgasim.config.loader import load_algorithm, load_board, load_model
from fpgasim.engine import get_engine
from fpgasim.simulate import Point, simulate_point
from fpgasim.tree.draft_trees import tree_for_verify_len
from tests.step_points import POINTS

GOLDEN = json.loads((Path(__file__).parent / "golden" / "step_points.json").read_text())
ENGINES = {}


def _engine(name: str):
    if name not in ENGINES:
        ENGINES[name] = get_engine(name)
    return ENGINES[name]


def test_the_golden_covers_every_fixed_point() -> None:
    expected = sum(len(p["engines"]) for p in POINTS)
    assert len(GOLDEN["rows"]) == expected
    assert len(GOLDEN["commit"]) == 40


@pytest.mark.parametrize(
    "row", GOLDEN["rows"], ids=lambda r: f"{r['board']}-{r['model']}-{r['algorithm']}-"
    f"x{r['verify_len']}-c{r['context']}-{r['engine']}"
)
def test_step_cycles_are_bit_identical(row: dict) -> None:
    algorithm = load_algorithm(row["algorithm"])
    tree = tree_for_verify_len(algorithm, row["verify_len"], row["method"])
    assert tree.describe() == row["tree"]
    point = Point(
        board=load_board(row["board"]),
        model=load_model(row["model"]),
        context=row["context"],
        verify_len=row["verify_len"],
        algorithm=algorithm,
        tree=tree,
        accepted=row["accepted"],
    )
    out = simulate_point(_engine(row["engine"]), point)
    assert out["verify_cycles"] == row["verify_cycles"]
    assert out["draft_cycles"] == row["draft_cycles"]
    assert out["draft_passes"] == row["draft_passes"]
