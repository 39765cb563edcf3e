"""`Rendered`: what a kind's renderer returns, and the helpers the renderers share (the
workloads, solved and best-of; the input columns of a row; the AD and set rows of Tables I
and III; the per-method AAT curves of Table III and Fig. 6; the per-x curve of Figs. 1 and
2). Each kind's own renderer lives in its module of `fpgasim.reproduce.kinds`."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fpgasim.acceptance import AatCurve, fit_curve
from fpgasim.acceptance.curves import max_verify_len
from fpgasim.acceptance.measured import tree_of_row
from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, TargetModel
from fpgasim.engine import DEFAULT_ENGINE, get_engine
from fpgasim.errors import InputError
from fpgasim.reproduce.experiment_schema import Experiment, Workload
from fpgasim.reproduce.kind import experiment_kind
from fpgasim.reproduce.workloads import (
    RunContext,
    curves,
    load_inputs,
    restrict,
    solve,
    solve_best,
    source_name,
    with_ad_point,
)
from fpgasim.simulate import check_window
from fpgasim.solving import Solution
from fpgasim.solving.decision import decision_of
from fpgasim.solving.tree_design import COSTED_TREE_METHODS, MODEL_TREE_METHODS
from fpgasim.tree.method_curves import compare_curves


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


def ad_row(common: dict, s: dict) -> dict:
    """The AD row of a sets/methods table (x = 1: AAT and speedup 1 by definition)."""
    return {
        **common,
        "method": "ad",
        "verify_len": 1,
        "tokens_per_s": s["ad_tokens_per_s"],
        "speedup": 1.0,
        "aat": 1.0,
        "tree": "",
    }


def set_row(common: dict, s: dict, name: str, method: str) -> dict:
    """The row of set `name` (ori, naive, best) of solver summary row `s`, labelled `method`."""
    return {
        **common,
        "method": method,
        "verify_len": s[f"{name}_verify_len"],
        "tokens_per_s": s[f"{name}_tokens_per_s"],
        "speedup": s[f"{name}_speedup"],
        "aat": s[f"{name}_aat"],
        "tree": s[f"{name}_tree"],
    }


def method_curves(
    exp: Experiment,
    ctx: RunContext,
    algorithm: Algorithm,
    model: TargetModel,
    context: int,
    task: str | None,
    board: Board | None = None,
) -> dict[str, AatCurve]:
    """One AAT curve per tree-construction method: measured tables or the embedded model.

    Methods of `analysis.COSTED_TREE_METHODS` (e.g. throughput) design their trees on
    `board` with the run's engine (default engine for untimed kinds); methods no table
    measures (`MODEL_TREE_METHODS`) always come from the embedded model.
    """
    methods = list(exp.tree_methods or ["prior_score"])
    costed = [m for m in methods if m in COSTED_TREE_METHODS]
    plain = [m for m in methods if m not in COSTED_TREE_METHODS]
    out: dict[str, AatCurve] = {}
    if ctx.measured:
        for m in plain:
            if m in MODEL_TREE_METHODS:
                continue
            (curve,) = curves(exp, ctx, algorithm, model, [context], [task] if task else None, m)
            out[m] = curve
        modelled = [m for m in plain if m in MODEL_TREE_METHODS]
        if modelled:
            out |= embedded_method_curves(exp, algorithm, context, modelled)
    elif plain:
        out |= embedded_method_curves(exp, algorithm, context, plain)
    for m in costed:
        if board is None:
            raise InputError("tree_methods", m, "a workload board to design the tree on")
        engine = ctx.engine or get_engine(DEFAULT_ENGINE)
        hi = exp.verify_lens.max
        curve = COSTED_TREE_METHODS[m](engine, board, model, algorithm, context, x_max=hi)
        out[m] = restrict(curve, exp)
    return {m: out[m] for m in methods}


def embedded_method_curves(
    exp: Experiment, algorithm: Algorithm, context: int, methods: list[str]
) -> dict[str, AatCurve]:
    """Width/depth/prior-score trees under the embedded acceptance model (exact AAT)."""

    top = max_verify_len(algorithm)
    hi = min(top, exp.verify_lens.max or top)
    sizes = range(max(2, exp.verify_lens.min), hi + 1)
    rng = np.random.default_rng(exp.seed)
    table = compare_curves(algorithm, sizes, rng, context)
    out = {}
    for m in methods:
        part = table[table["method"] == m].sort_values("verify_len", ignore_index=True)
        trees = [tree_of_row({"tree_shape": s}, algorithm.drafter) for s in part["tree_shape"]]
        points = pd.DataFrame(
            {
                "verify_len": part["verify_len"].astype(int),
                "aat": part["aat"].astype(float),
                "tree": trees,
                "tree_source": "embedded",
            }
        )
        measured = points[["verify_len", "aat"]]
        fit = fit_curve(measured["verify_len"], measured["aat"])
        curve = AatCurve("embedded", context, "embedded", points, measured, fit, None)
        out[m] = restrict(curve, exp)
    return out


def task_contexts(w: Workload, ctx: RunContext) -> list[tuple[str | None, int]]:
    """(task, context) pairs of a workload; task None: the table's default (or embedded)."""
    tasks: list[str | None] = list(tasks_of(w, ctx) or [None])
    return [(t, c) for t in tasks for c in w.contexts]


def solved_curves(exp: Experiment, ctx: RunContext) -> tuple[list[dict], list[pd.DataFrame]]:
    """Per workload: rows of the per-x curve (with the AD point x = 1) and the summaries."""
    rows, summaries = [], []
    for *_, sol in solved_workloads(exp, ctx):
        summary = sol.summary
        summaries.append(summary)
        per_x = with_ad_point(sol.curves, summary)
        info = summary.set_index(["task", "context"])
        for c in per_x.to_dict("records"):
            s = info.loc[(c["task"], c["context"])].to_dict() | {"task": c["task"]}
            rows.append({**base(exp, ctx, s), **c, "ar_tokens_per_s": s["ad_tokens_per_s"]})
    return rows, summaries
