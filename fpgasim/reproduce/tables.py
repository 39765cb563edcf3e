"""Renderers of the table kinds: per-context sets, tasks/unified x, tree methods, boards grid,
models fitted from sparse points. Each returns `Rendered` with the kind's columns."""

from __future__ import annotations

import math

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
from fpgasim.reproduce.rendered import (
    Rendered,
    base,
    best_of_workloads,
    each_workload,
    embedded_task_note,
    frame,
    solved_workloads,
    tasks_of,
    unavailable,
)
from fpgasim.reproduce.workloads import RunContext, curves, restrict, solve
from fpgasim.solving.roofline import ridge_tokens
from fpgasim.solving.tree_design import COSTED_TREE_METHODS, MODEL_TREE_METHODS
from fpgasim.tree.method_curves import compare_curves

SETS = ("ori", "naive", "best")


def _x(v: object) -> int | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else int(v)


def _ad_row(common: dict, s: dict) -> dict:
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


def _set_row(common: dict, s: dict, name: str, method: str) -> dict:
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


def context_sets(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per context: AD, Ori, Naive and Best sets (verify_len, tokens/s, speedup over AD)."""
    rows, notes = [], list(embedded_task_note(exp, ctx))
    for _board, _model, algorithm, sol in solved_workloads(exp, ctx):
        for s in sol.summary.to_dict("records"):
            common = {"context": s["context"], **base(exp, ctx, s)}
            rows.append(_ad_row(common, s))
            for name in SETS:
                if _x(s[f"{name}_verify_len"]) is None:
                    notes.append(f"{name} set undefined for {algorithm.id} (no default x)")
                    continue
                rows.append(_set_row(common, s, name, name))
        ori = sol.summary["ori_aat_source"].iloc[0]
        notes.append(
            f"{algorithm.id}: Ori set = the GPU default tree (x = {algorithm.ori_verify_len}), "
            f"AAT from {ori}; Naive set = smallest x whose fitted slope dAAT/dx < "
            f"{exp.naive_threshold} tokens per extra token; Best set = argmax P_eff"
        )
    return Rendered(frame(exp.kind, rows), tuple(dict.fromkeys(notes)))


def tasks_unified(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per task: its own best x and speedup, and its speedup at the unified x."""
    if not ctx.measured:
        return unavailable(exp, exp.aat.embedded_reason or "it needs measured per-task AAT")
    rows = []
    for *_, sol in solved_workloads(exp, ctx):
        by_task = sol.summary.set_index(["task", "context"])
        for u in sol.unified.to_dict("records"):
            s = by_task.loc[(u["task"], u["context"])].to_dict() | {
                "task": u["task"],
                "context": u["context"],
            }
            rows.append(
                {
                    **base(exp, ctx, s),
                    "context": u["context"],
                    "best_verify_len": u["best_verify_len"],
                    "best_speedup": u["best_speedup"],
                    "best_tree": s["best_tree"],
                    "best_aat": s["best_aat"],
                    "unified_verify_len": u["unified_verify_len"],
                    "unified_speedup": u["unified_speedup"],
                    "mean": u["mean"],
                    "unified_vs_best": u["unified_vs_best"],
                }
            )
    note = (
        f"unified x: argmax of P_eff on the {exp.mean} mean of the tasks' AAT curves at "
        "their common x; unified_vs_best = unified_speedup / best_speedup"
    )
    return Rendered(frame(exp.kind, rows), (note,))


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


def tree_methods(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per tree-construction method: the best x, tokens/s and speedup, after an AD row."""
    rows, notes = [], list(embedded_task_note(exp, ctx))
    for w, board, model, algorithm in each_workload(exp):
        for task, context in task_contexts(w, ctx):
            by_method = method_curves(exp, ctx, algorithm, model, context, task, board)
            first = True
            for m, curve in by_method.items():
                s = solve(exp, ctx, board, model, algorithm, [curve]).summary.iloc[0].to_dict()
                common = {"context": context, **base(exp, ctx, s)}
                if first:
                    rows.append(_ad_row(common, s))
                    first = False
                row = _set_row(common, s, "best", m)
                if ctx.measured and m in MODEL_TREE_METHODS:
                    row["aat_source"], row["aat_file"] = "embedded", ""
                rows.append(row)
    if ctx.measured and any(m in MODEL_TREE_METHODS for m in exp.tree_methods or []):
        notes.append(
            "optimal/throughput rows: trees and AAT from the embedded acceptance model (no "
            "table measures them), so they compare with each other, not with measured rows"
        )
    if not ctx.measured:
        notes.append(
            "embedded: AAT of each method's tree is the positional model's exact expectation; "
            f"prior-score trees come from 100000 simulated iterations (seed {exp.seed})"
        )
    return Rendered(frame(exp.kind, rows), tuple(notes))


def boards_grid(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per board and context: AD tokens/s, the best x, its tokens/s and speedup."""
    rows = []
    for board, _model, _algorithm, sol in solved_workloads(exp, ctx):
        for s in sol.summary.to_dict("records"):
            rows.append(
                {
                    **base(exp, ctx, s),
                    "context": s["context"],
                    "ar_tokens_per_s": s["ad_tokens_per_s"],
                    "best_verify_len": s["best_verify_len"],
                    "best_tokens_per_s": s["best_tokens_per_s"],
                    "speedup": s["best_speedup"],
                    "best_tree": s["best_tree"],
                    "best_aat": s["best_aat"],
                    "ori_verify_len": s["ori_verify_len"],
                    "ori_speedup": s["ori_speedup"],
                    "naive_verify_len": s["naive_verify_len"],
                    "naive_speedup": s["naive_speedup"],
                    "regime": s["regime"],
                    "x_ridge": s["x_ridge"],
                    "macs_per_cycle": board.peak_macs_per_cycle,
                    "bytes_per_cycle": board.bandwidth_bytes_per_s / board.clock_hz,
                    "compute_to_bandwidth": board.peak_macs_per_cycle
                    / (board.bandwidth_bytes_per_s / board.clock_hz),
                    "ridge_tokens": ridge_tokens(board),
                }
            )
    notes = [
        *embedded_task_note(exp, ctx),
        "ar_tokens_per_s: autoregressive decoding (AD, x = 1); compute_to_bandwidth: "
        "MAC per cycle / off-chip bytes per cycle (MAC/byte); x_ridge: x_R, where the "
        "engine's measured roofline turns flat; ridge_tokens: the board sheet's ridge (peak "
        "MAC/cycle over weights streamed per cycle, as `fpgasim boards`); decision: use SD "
        "iff speedup > 1",
    ]
    return Rendered(frame(exp.kind, rows), tuple(notes))


def sparse_fit_models(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per (algorithm, model, context): the best x on the AAT model fitted to sparse points."""
    rows = []
    for *_, summary in best_of_workloads(exp, ctx):
        for s in summary.to_dict("records"):
            row = {**base(exp, ctx, s), "context": s["context"]}
            row["ar_tokens_per_s"] = s["ad_tokens_per_s"]
            row["speedup"] = s["best_speedup"]
            for k in ("best_verify_len", "best_tokens_per_s", "best_tree", "best_aat"):
                row[k] = s[k]
            for name in ("ori", "naive"):
                for k in ("verify_len", "tokens_per_s", "speedup"):
                    row[f"{name}_{k}"] = s[f"{name}_{k}"]
            for k in ("aat_a", "aat_b", "aat_c", "aat_r2_fit", "aat_n_fit_points"):
                row[k] = s[k]
            rows.append(row)
    if ctx.measured and exp.aat.source == "fitted":
        notes = (
            "AAT at every x = A + B·ln(x − C) fitted to the measured sparse points; the draft at "
            "each x is costed with the per-x tree of tree_shapes_by_verify_len.csv; Ori AAT from "
            "the fit at the default x",
        )
    elif ctx.measured:
        notes = ("AAT at the measured x only",)
    else:
        notes = (
            "embedded: the acceptance model is per algorithm (task- and model-agnostic); only "
            "the timing differs between models",
        )
    return Rendered(frame(exp.kind, rows), notes)
