"""`Rendered`: what a renderer returns, and helpers to build its rows."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import pandas as pd

from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, TargetModel
from fpgasim.reproduce.experiment_schema import Experiment, Workload
from fpgasim.reproduce.kind import experiment_kind
from fpgasim.reproduce.workloads import (
    RunContext,
    curves,
    load_inputs,
    solve,
    solve_best,
    source_name,
)
from fpgasim.simulate import check_window
from fpgasim.solving import Solution
from fpgasim.solving.decision import decision_of


@dataclass(frozen=True)
class Rendered:
    """A renderer's output.

    table: one row per reported item, every column of its kind (0 rows when
    unavailable); notes: lines printed under the table; available: False when the
    experiment cannot run on this AAT source (the notes say why); plot_data: frames the
    figure needs beyond the table (e.g. the measured points under a fit).
    """

    table: pd.DataFrame
    notes: tuple[str, ...] = ()
    available: bool = True
    plot_data: dict[str, pd.DataFrame] = field(default_factory=dict)


def frame(kind: str, rows: list[dict]) -> pd.DataFrame:
    """Rows as a DataFrame with the kind's columns in order; x columns as nullable ints."""
    record = experiment_kind(kind)
    out = pd.DataFrame(rows, columns=list(record.columns))
    if record.decision is not None:
        speedup = record.decision.speedup
        out["decision"] = [decision_of(float(v)) for v in out[speedup]]
    for col in out.columns:
        if col.endswith("verify_len") or col in ("x_ridge", "n_fit_points", "aat_n_fit_points"):
            out[col] = pd.array([_int_or_na(v) for v in out[col]], dtype="Int64")
    return out


def _int_or_na(v: object) -> object:
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return pd.NA
    return int(v)


def unavailable(exp: Experiment, reason: str) -> Rendered:
    """An empty table and the reason, for an experiment that cannot run on this source."""
    note = f"not reproduced with this AAT source: {reason}"
    return Rendered(frame(exp.kind, []), (note,), available=False)


def each_workload(
    exp: Experiment,
) -> Iterator[tuple[Workload, Board, TargetModel, Algorithm]]:
    """(workload, board, model, algorithm) of every board x model of every workload group."""
    for w in exp.workloads:
        for board in w.boards:
            for model in w.models:
                inputs = load_inputs(board, model, w.algorithm)
                if w.beyond_window is None:  # contexts past the window need a stated reason
                    for context in w.contexts:
                        check_window(inputs[1], context, 1, "contexts")
                yield (w, *inputs)


def tasks_of(w: Workload, ctx: RunContext) -> list[str] | None:
    """The workload's measured tasks; None on the embedded model (task-agnostic)."""
    return list(w.tasks) if (w.tasks and ctx.measured) else None


def solved_workloads(
    exp: Experiment, ctx: RunContext
) -> Iterator[tuple[Board, TargetModel, Algorithm, Solution]]:
    """(board, model, algorithm, solution) of every `each_workload` item: the solver on its
    AAT curves at the workload's contexts (and tasks), timed by the run's engine."""
    for w, board, model, algorithm in each_workload(exp):
        cs = curves(exp, ctx, algorithm, model, w.contexts, tasks_of(w, ctx))
        yield board, model, algorithm, solve(exp, ctx, board, model, algorithm, cs)


def best_of_workloads(
    exp: Experiment, ctx: RunContext
) -> Iterator[tuple[Board, TargetModel, Algorithm, pd.DataFrame]]:
    """(board, model, algorithm, summary) of every `each_workload` item, as
    `solved_workloads` for reports of the best, original and naive sets alone (no regime,
    no per-x curve: `solve_best`, which times only the x that can be best on an engine
    with lower bounds). Fig. 4 on V80: 106 simulator passes instead of 1,826. Table I and
    Table IV were measured slower this way: their passes are shared with other experiments
    or cheap when prefetched together, and a bounded search's bounds and x run on a cold
    experiment worker."""
    for w, board, model, algorithm in each_workload(exp):
        cs = curves(exp, ctx, algorithm, model, w.contexts, tasks_of(w, ctx))
        yield board, model, algorithm, solve_best(exp, ctx, board, model, algorithm, cs)


def base(exp: Experiment, ctx: RunContext, s: dict) -> dict:
    """The input columns every timed row carries, from a solver summary row."""
    return {
        "board": s["board"],
        "model": s["model"],
        "algorithm": s["algorithm"],
        "task": s["task"],
        "aat_source": source_name(exp, ctx),
        "aat_file": s.get("aat_file", "") or "",
        "engine": s["engine"],
        "lowering": load_inputs(s["board"], s["model"], s["algorithm"])[0].lowering,
    }


def embedded_task_note(exp: Experiment, ctx: RunContext) -> tuple[str, ...]:
    """On the embedded model: say that the task column is 'embedded' (task-agnostic)."""
    if ctx.measured:
        return ()
    tasks = sorted({t for w in exp.workloads for t in (w.tasks or [])})
    if not tasks:
        return ("the embedded acceptance model is task-agnostic (task = embedded)",)
    return (
        "the embedded acceptance model is task-agnostic (task = embedded); with `aat_dir` "
        f"the measured {', '.join(tasks)} curves are used",
    )
