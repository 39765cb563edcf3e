"""Across tasks: each task's own best x next to the unified x of the tasks' mean AAT curve."""

from __future__ import annotations

import pandas as pd

UNIFIED_COLUMNS = [
    "board",
    "model",
    "algorithm",
    "context",
    "engine",
    "mean",
    "task",
    "best_verify_len",
    "best_speedup",
    "unified_verify_len",
    "unified_speedup",
    "unified_vs_best",
]


def unified_table(
    summary: pd.DataFrame, curves: pd.DataFrame, unified_summary: pd.DataFrame
) -> pd.DataFrame:
    """One row per (context, task): the task's best x/speedup and its speedup at the unified x.

    `summary`/`curves` are the per-task solver outputs; `unified_summary` has one row per
    context for the mean curve (its best x is the unified x).
    """
    rows = []
    for u in unified_summary.to_dict("records"):
        x_u = int(u["best_verify_len"])
        per_context = summary[summary["context"] == u["context"]]
        for s in per_context.sort_values("task").to_dict("records"):
            at = curves[
                (curves["task"] == s["task"])
                & (curves["context"] == s["context"])
                & (curves["verify_len"] == x_u)
            ]
            unified_speedup = float(at["speedup"].iloc[0]) if not at.empty else float("nan")
            rows.append(
                {
                    "board": s["board"],
                    "model": s["model"],
                    "algorithm": s["algorithm"],
                    "context": s["context"],
                    "engine": s["engine"],
                    "mean": u["aat_source"].split(" ")[0],
                    "task": s["task"],
                    "best_verify_len": s["best_verify_len"],
                    "best_speedup": s["best_speedup"],
                    "unified_verify_len": x_u,
                    "unified_speedup": unified_speedup,
                    "unified_vs_best": unified_speedup / s["best_speedup"],
                }
            )
    return pd.DataFrame(rows, columns=UNIFIED_COLUMNS)
