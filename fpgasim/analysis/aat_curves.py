"""AAT curves the solver searches: per (task, context), the AAT and draft tree at each x.

Three sources (the user chooses): `measured` (the x values of a measured table),
`fitted` (AAT(x) = A + B·ln(x − C) fitted on measured points, evaluated at every x up to
the largest tree) and `embedded` (fpgasim.tree.embedded's modelled acceptance).
The draft tree costed at x is, in order: the measured row's tree_shape (LongSpec) or
draft_depth/top-k (EAGLE-3); the per-x table; the embedded model's tree; the width-based
tree of the algorithm's maximal tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fpgasim.analysis.aat import (
    AatTables,
    curve_method,
    ori_row,
    select_curve,
    table_trees,
    tree_of_row,
    workload_rows,
)
from fpgasim.analysis.aat_model import AatFit, fit_curve
from fpgasim.config.schema import Algorithm
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import ConfigError, InputError
from fpgasim.tree.draft_trees import default_tree, tree_for_verify_len
from fpgasim.tree.embedded import default_tree_aat, dynamic_tree_nodes, embedded_curve

AAT_SOURCES = ("measured", "fitted", "embedded")


@dataclass(frozen=True)
class OriPoint:
    """The algorithm's GPU default configuration and the AAT it reaches."""

    verify_len: int
    aat: float
    tree: TokenTree
    aat_source: str


@dataclass(frozen=True)
class AatCurve:
    """The AAT of one (task, context) at every candidate x >= 2.

    points: verify_len, aat, tree (TokenTree), tree_source; measured: verify_len, aat of
    the points the fit's R² is reported on; fit: the log model; ori: the Ori set or None.
    """

    task: str
    context: int
    aat_source: str
    points: pd.DataFrame
    measured: pd.DataFrame
    fit: AatFit
    ori: OriPoint | None
    aat_file: str = ""


def max_verify_len(algorithm: Algorithm, tree_table: pd.DataFrame | None = None) -> int:
    """Largest x searched for modelled curves: the per-x table's, else the maximal tree's,
    else the default tree's (static shape, or the nodes a dynamic tree keeps)."""
    if tree_table is not None and not tree_table.empty:
        return int(tree_table["verify_len"].max())
    if algorithm.max_tree:
        return sum(algorithm.max_tree) + 1
    d = algorithm.default_tree
    if d.shape:
        return sum(d.shape) + 1
    return dynamic_tree_nodes(algorithm) + 1  # EAGLE-3's dynamic default tree


def _embedded_trees(algorithm: Algorithm, context: int, xs: Sequence[int]) -> dict[int, TokenTree]:
    """Trees of the embedded model at x, or {} when it is not available."""
    try:
        frame = embedded_curve(algorithm, context, list(xs))
    except (InputError, ConfigError):  # no embedded model for this algorithm: next fallback
        return {}
    out = {}
    for row in frame.to_dict("records"):
        tree = tree_of_row(row, algorithm.drafter)
        if tree is not None:
            out[int(row["verify_len"])] = tree
    return out


def resolve_trees(
    algorithm: Algorithm,
    context: int,
    xs: Sequence[int],
    row_trees: dict[int, TokenTree | None],
    tree_table: pd.DataFrame | None,
) -> tuple[list[TokenTree], list[str]]:
    """The tree at each x by the documented precedence, and where each came from."""
    trees: list[TokenTree | None] = []
    sources: list[str] = []
    by_x = table_trees(tree_table, algorithm.drafter) if tree_table is not None else {}
    for x in xs:
        tree = row_trees.get(x)
        if tree is not None:
            trees.append(tree)
            sources.append("measured")
            continue
        tree = by_x.get(x)
        trees.append(tree)
        sources.append("table" if tree is not None else "")
    missing = [x for x, t in zip(xs, trees, strict=True) if t is None]
    embedded = _embedded_trees(algorithm, context, missing) if missing else {}
    for i, x in enumerate(xs):
        if trees[i] is None:
            if x in embedded:
                trees[i], sources[i] = embedded[x], "embedded"
            else:
                trees[i], sources[i] = tree_for_verify_len(algorithm, x, "width"), "width"
    return [t for t in trees if t is not None], sources


def _points(
    xs: Sequence[int], aat: Sequence[float], trees: Sequence[TokenTree], sources: Sequence[str]
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "verify_len": [int(x) for x in xs],
            "aat": [float(a) for a in aat],
            "tree": list(trees),
            "tree_source": list(sources),
        }
    )


def _ori_fallback(
    algorithm: Algorithm, points: pd.DataFrame, fit: AatFit, source: str
) -> OriPoint | None:
    """The Ori set without a measured original row: default tree, AAT from the curve or fit."""
    x = algorithm.ori_verify_len
    if x is None or x < 2:
        return None
    hit = points[points["verify_len"] == x]
    if not hit.empty:
        aat, aat_source = float(hit.iloc[0]["aat"]), f"{source} curve at x={x}"
    else:
        aat, aat_source = float(np.clip(fit.predict(x), 1.0, x)), f"fit at x={x}"
    return OriPoint(x, aat, default_tree(algorithm), aat_source)


def _embedded_ori(algorithm: Algorithm, context: int) -> OriPoint | None:
    """The Ori set under the embedded model: the default tree's own expected AAT."""
    x = algorithm.ori_verify_len
    if x is None:
        return None
    aat = float(default_tree_aat(algorithm, context))
    return OriPoint(x, aat, default_tree(algorithm), "embedded (default tree)")


def measured_curves(
    tables: AatTables,
    algorithm: Algorithm,
    model_id: str,
    contexts: Sequence[int],
    tasks: Sequence[str] | None = None,
    *,
    aat_source: str = "measured",
    method: str | None = None,
    fit_points: Sequence[int] | None = None,
) -> list[AatCurve]:
    """Curves from measured tables, one per (task, context); `fitted`: the fit at every x."""
    if aat_source not in ("measured", "fitted"):
        raise InputError("aat_source", aat_source, "measured or fitted with `aat_dir`")
    rows = workload_rows(tables, algorithm.id, algorithm.kind, model_id)
    chosen_method = curve_method(rows, method)
    task_list = list(tasks) if tasks else default_tasks(rows, chosen_method, contexts)
    out = []
    for task in task_list:
        for context in contexts:
            curve = select_curve(rows, task, context, chosen_method, task_list)
            fit = fit_curve(curve["verify_len"], curve["aat"], fit_points)
            measured = curve[["verify_len", "aat"]].reset_index(drop=True)
            if aat_source == "measured":
                xs = [int(x) for x in curve["verify_len"] if x >= 2]
                aat = [
                    float(a)
                    for a, x in zip(curve["aat"], curve["verify_len"], strict=True)
                    if x >= 2
                ]
                row_trees = {
                    int(r["verify_len"]): tree_of_row(r, algorithm.drafter)
                    for r in curve.to_dict("records")
                }
            else:
                xs = list(range(2, max_verify_len(algorithm, tables.tree_table) + 1))
                aat = [float(np.clip(fit.predict(x), 1.0, x)) for x in xs]
                row_trees = {}
            trees, sources = resolve_trees(algorithm, context, xs, row_trees, tables.tree_table)
            points = _points(xs, aat, trees, sources)
            file = str(curve["file"].iloc[0])
            ori = ori_row(rows, task, context, file)
            if ori is not None:
                tree = tree_of_row(ori, algorithm.drafter) or default_tree(algorithm)
                ori_point = OriPoint(int(ori["verify_len"]), float(ori["aat"]), tree, "measured")
            else:
                ori_point = _ori_fallback(algorithm, points, fit, aat_source)
            out.append(AatCurve(task, context, aat_source, points, measured, fit, ori_point, file))
    return out


def default_tasks(rows: pd.DataFrame, method: str, contexts: Sequence[int]) -> list[str]:
    """Tasks with a `method` curve at every requested context (an error if there are none)."""
    hit = rows[rows["method"] == method]
    tasks = sorted(
        t for t, g in hit.groupby("task") if set(contexts) <= set(int(c) for c in g["context"])
    )
    if not tasks:
        by_task = {t: ",".join(map(str, sorted(set(g["context"])))) for t, g in hit.groupby("task")}
        have = "; ".join(f"{t}: {c}" for t, c in sorted(by_task.items()))
        raise InputError(
            "contexts",
            ",".join(map(str, contexts)),
            f"contexts all measured for one task (by task: {have}); "
            "or omit `aat_dir` for the embedded model",
        )
    return tasks


def embedded_curves(
    algorithm: Algorithm,
    contexts: Sequence[int],
    *,
    fit_points: Sequence[int] | None = None,
    x_max: int | None = None,
) -> list[AatCurve]:
    """Curves from the embedded acceptance model (task-agnostic: task = 'embedded')."""
    top = x_max or max_verify_len(algorithm)
    out = []
    for context in contexts:
        frame = embedded_curve(algorithm, context, list(range(2, top + 1)))
        frame = frame.sort_values("verify_len", ignore_index=True)
        frame = frame[frame["verify_len"] >= 2]
        if frame.empty:
            raise InputError("contexts", context, "the embedded model returned no x >= 2")
        xs = [int(x) for x in frame["verify_len"]]
        records = frame.to_dict("records")
        row_trees = {int(r["verify_len"]): tree_of_row(r, algorithm.drafter) for r in records}
        trees, sources = resolve_trees(algorithm, context, xs, row_trees, None)
        sources = ["embedded" if s == "measured" else s for s in sources]
        points = _points(xs, frame["aat"], trees, sources)
        measured = points[["verify_len", "aat"]]
        fit = fit_curve(measured["verify_len"], measured["aat"], fit_points)
        ori = _embedded_ori(algorithm, context) or _ori_fallback(algorithm, points, fit, "embedded")
        out.append(AatCurve("embedded", context, "embedded", points, measured, fit, ori))
    return out


def mean_curve(
    curves: Sequence[AatCurve], mean: str = "geometric", fit_points: Sequence[int] | None = None
) -> AatCurve:
    """One curve from several tasks' curves at one context: the mean AAT at their common x.

    The tree at x is the one most tasks use there (ties: the first task's).
    """
    if mean not in ("geometric", "arithmetic"):
        raise InputError("mean", mean, "geometric or arithmetic")
    contexts = {c.context for c in curves}
    if len(contexts) != 1 or not curves:
        raise ValueError("mean_curve needs curves of one context")
    common = sorted(set.intersection(*(set(c.points["verify_len"]) for c in curves)))
    if len(common) < 3:
        raise InputError("task", ",".join(c.task for c in curves), "curves sharing >= 3 x values")
    aats = np.array(
        [c.points.set_index("verify_len").loc[common, "aat"].to_numpy(float) for c in curves]
    )
    values = np.exp(np.log(aats).mean(axis=0)) if mean == "geometric" else aats.mean(axis=0)
    trees, sources = [], []
    for x in common:
        votes: dict[str, list] = {}
        for c in curves:
            row = c.points.set_index("verify_len").loc[x]
            votes.setdefault(row["tree"].describe(), []).append((row["tree"], row["tree_source"]))
        top = max(votes.values(), key=len)
        trees.append(top[0][0])
        sources.append(top[0][1])
    points = _points(common, values, trees, sources)
    measured = points[["verify_len", "aat"]]
    usable = [p for p in (fit_points or []) if p in common]
    usable = usable if len(usable) >= 3 else None
    fit = fit_curve(measured["verify_len"], measured["aat"], usable)
    label = f"{mean} mean of {len(curves)} tasks"
    return AatCurve("unified", curves[0].context, label, points, measured, fit, None)
