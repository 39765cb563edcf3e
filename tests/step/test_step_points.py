"""Step timings over a fixed set of points (boards x models x drafters x trees x contexts).

tests/golden/step_points.json holds two kinds of rows:

- `rows`, computed by the pre-refactor code path (`main` at the commit in `commit`:
  `simulate.verify_timing` + `simulate.draft_timing` before the step service and the
  drafter registry existed), an implementation independent of today's: the `analytic`
  engine's rows of the study's boards (its accounting is unchanged by the one compiler)
  and FlightLLM's board on both cycle engines (its compiler is unchanged for models
  without grouped-query attention). They must stay bit-identical.
- `compiler_rows`: the study's boards on the cycle engines, which moved when the study
  lowering was retired (they run on FlightLLM's compiler since `compiler_commit`; re-derived
  with `python -m tests.step_points`). Beside the regression, each is checked against what
  does not depend on the compiler: `event` equals `fast`, a step drafts in the accounting's
  number of passes, and its verify pass takes at least the time its weights take to stream
  over the whole memory at the board's same-channel efficiency (the part's measured
  sequential efficiency where it has one, else the design's constant; tests/engine/test_fast.py
  argues the bound).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import get_engine
from fpgasim.engine.analytic import counts_for, unit_cycles
from fpgasim.simulate import Point, simulate_point
from fpgasim.step import step_passes
from fpgasim.tree.draft_trees import tree_for_verify_len
from tests.step_points import POINTS, compiler_points

GOLDEN = json.loads(
    (Path(__file__).resolve().parents[1] / "golden" / "step_points.json").read_text())
ENGINES = {}
ROW_IDS = dict(ids=lambda r: f"{r['board']}-{r['model']}-{r['algorithm']}-x{r['verify_len']}-"
               f"c{r['context']}-{r['engine']}")


def _engine(name: str):
    if name not in ENGINES:
        ENGINES[name] = get_engine(name)
    return ENGINES[name]


def _point(row: dict) -> Point:
    algorithm = load_algorithm(row["algorithm"])
    tree = tree_for_verify_len(algorithm, row["verify_len"], row["method"])
    assert tree.describe() == row["tree"]
    return Point(board=load_board(row["board"]), model=load_model(row["model"]),
                 context=row["context"], verify_len=row["verify_len"], algorithm=algorithm,
                 tree=tree, accepted=row["accepted"])


def _check(row: dict) -> dict:
    out = simulate_point(_engine(row["engine"]), _point(row))
    assert out["verify_cycles"] == row["verify_cycles"]
    assert out["draft_cycles"] == row["draft_cycles"]
    assert out["draft_passes"] == row["draft_passes"]
    return out


def test_the_golden_covers_every_fixed_point() -> None:
    expected = {(p["board"], p["model"], p["algorithm"], p["verify_len"], p["context"], e)
                for p in POINTS for e in p["engines"]}
    got = [(r["board"], r["model"], r["algorithm"], r["verify_len"], r["context"], r["engine"])
           for r in GOLDEN["rows"] + GOLDEN["compiler_rows"]]
    assert sorted(got) == sorted(expected) and len(got) == len(set(got))
    assert len(GOLDEN["compiler_rows"]) == len(compiler_points()) == 50
    assert len(GOLDEN["commit"]) == len(GOLDEN["compiler_commit"]) == 40


@pytest.mark.parametrize("row", GOLDEN["rows"], **ROW_IDS)
def test_rows_of_the_pre_refactor_path_are_bit_identical(row: dict) -> None:
    _check(row)


ANALYTIC = {(r["board"], r["model"], r["algorithm"], r["verify_len"], r["context"]): r
            for r in GOLDEN["rows"] if r["engine"] == "analytic"}


@pytest.mark.slow
@pytest.mark.parametrize("row", GOLDEN["compiler_rows"], **ROW_IDS)
def test_compiler_rows(row: dict) -> None:
    _check(row)
    key = (row["board"], row["model"], row["algorithm"], row["verify_len"], row["context"])
    accounting = ANALYTIC[key]
    assert row["draft_passes"] == accounting["draft_passes"]
    if row["engine"] == "event":
        fast = next(r for r in GOLDEN["compiler_rows"] if r["engine"] == "fast" and
                    (r["board"], r["model"], r["algorithm"], r["verify_len"],
                     r["context"]) == key)
        assert (row["verify_cycles"], row["draft_cycles"]) == (fast["verify_cycles"],
                                                              fast["draft_cycles"])
    point = _point(row)
    verify = step_passes(point.verify_len, point.context, point.algorithm, point.tree,
                         point.accepted).verify
    board = point.board
    weight = float(unit_cycles(counts_for(verify, board, point.model, None), board)
                   ["weight_bytes"])
    # no design streams weights faster than the whole memory at its sequential efficiency
    rate = board.bandwidth_bytes_per_s / board.clock_hz * board.fit.same_channel_efficiency
    assert row["verify_cycles"] >= weight / rate
