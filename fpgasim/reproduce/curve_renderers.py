"""Renderers of the curve kinds (the figures' data): speedup vs x, rooflines, AAT fit table,
AAT curves of the tree-construction methods. Each returns `Rendered` with the kind's columns."""

from __future__ import annotations

import pandas as pd

from fpgasim.engine import DEFAULT_ENGINE
from fpgasim.reproduce.experiment_schema import Experiment
from fpgasim.reproduce.rendered import (
    Rendered,
    base,
    each_workload,
    embedded_task_note,
    frame,
    solved_workloads,
    tasks_of,
)
from fpgasim.reproduce.tables import method_curves, task_contexts
from fpgasim.reproduce.workloads import RunContext, curves, source_name, with_ad_point


def _solved_curves(exp: Experiment, ctx: RunContext) -> tuple[list[dict], list[pd.DataFrame]]:
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


def speedup_curve(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per (context, x): AAT and the speedup over AD (x = 1 is AD itself)."""
    rows, summaries = _solved_curves(exp, ctx)
    for r in rows:
        r["tokens_per_s"] = r["p_eff_tokens_per_s"]
    notes = (
        *embedded_task_note(exp, ctx),
        "speedup = P_eff(x) / P(1) = AAT(x) / (T_v(x) + T_d(x)) / AD tokens/s; below 1, SD "
        "is slower than AD; x = 1 is AD (AAT = 1 by definition)",
    )
    return Rendered(frame(exp.kind, rows), notes, plot_data={"summary": pd.concat(summaries)})


def rooflines(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per (context, x): P, P_disc, AAT, AR and P_eff (tokens/s), x = 1 being AD."""
    rows, summaries = _solved_curves(exp, ctx)
    for r in rows:
        r["p"] = r["p_tokens_per_s"]
        r["p_disc"] = r["p_disc_tokens_per_s"]
        r["p_eff"] = r["p_eff_tokens_per_s"]
    notes = (
        *embedded_task_note(exp, ctx),
        "p = x / T_v (primary roofline), p_disc = x / (T_v + T_d) (discounted), ar = AAT / x, "
        "p_eff = AAT / (T_v + T_d) = p_disc · ar (generated tokens/s); x = 1 is AD",
    )
    return Rendered(frame(exp.kind, rows), notes, plot_data={"summary": pd.concat(summaries)})


def fit_table(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per context: A, B, C of AAT(x) = A + B·ln(x − C) fitted on a few points, R² on all."""
    rows, points = [], []
    for w, _board, model, algorithm in each_workload(exp):
        for c in curves(exp, ctx, algorithm, model, w.contexts, tasks_of(w, ctx)):
            fit = c.fit
            common = {
                "context": c.context,
                "algorithm": algorithm.id,
                "model": model.id,
                "task": c.task,
                "aat_source": source_name(exp, ctx),
                "aat_file": c.aat_file,
            }
            rows.append(
                {
                    **common,
                    "A": fit.a,
                    "B": fit.b,
                    "C": fit.c,
                    "r2": fit.r2_all,
                    "n_fit_points": len(fit.fit_verify_lens),
                    "r2_fit": fit.r2_fit,
                    "fit_points": ",".join(map(str, fit.fit_verify_lens)),
                    "n_points": len(c.measured),
                }
            )
            pts = c.measured.copy()
            pts["fitted_on"] = pts["verify_len"].isin(fit.fit_verify_lens)
            points.append(pts.assign(**common))
    notes = (
        *embedded_task_note(exp, ctx),
        "r2: R² of the fitted model on every point of the curve; r2_fit: on the fitted points",
    )
    return Rendered(frame(exp.kind, rows), notes, plot_data={"points": pd.concat(points)})


def aat_curves(exp: Experiment, ctx: RunContext) -> Rendered:
    """Per (tree-construction method, x): the AAT of that method's tree."""
    rows = []
    for w, board, model, algorithm in each_workload(exp):
        for task, context in task_contexts(w, ctx):
            for m, c in method_curves(exp, ctx, algorithm, model, context, task, board).items():
                for p in c.points.to_dict("records"):
                    rows.append(
                        {
                            "method": m,
                            "verify_len": p["verify_len"],
                            "aat": p["aat"],
                            "context": context,
                            "algorithm": algorithm.id,
                            "model": model.id,
                            "task": c.task,
                            "tree": p["tree"].describe(),
                            "aat_source": "embedded"
                            if c.aat_source == "embedded"
                            else source_name(exp, ctx),
                            "aat_file": c.aat_file,
                        }
                    )
    notes = list(embedded_task_note(exp, ctx))
    if "throughput" in (exp.tree_methods or []):
        engine_name = ctx.engine.name if ctx.engine is not None else DEFAULT_ENGINE
        notes.append(
            "throughput: per x the tree of highest tokens/s on the workload's board (embedded "
            f"acceptance model; costs from the {engine_name} engine)"
        )
    if not ctx.measured:
        notes.append(
            "embedded: exact expected AAT of each method's tree under the positional model "
            f"(prior-score from 100000 simulated iterations, seed {exp.seed})"
        )
    return Rendered(frame(exp.kind, rows), tuple(notes))
