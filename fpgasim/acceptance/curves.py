"""AAT curves the solver searches: per (task, context), the AAT and draft tree at each x.

Which acceptance a curve uses is decided by one rule, `analysis.acceptance.acceptance_source`
(measured tables where they hold the pair and context, interpolated between measured
contexts, extrapolated beyond them, else the embedded model); `acceptance_curves` is the
entry point every command calls. The AAT at x comes in three forms (`aat_source`):
`measured` (the x values of a measured curve), `fitted` (AAT(x) = A + B·ln(x − C) fitted on
its points, evaluated at every x up to the largest tree) and `embedded`
(fpgasim.tree.embedded's modelled acceptance). The draft tree costed at x is, in order: the
measured row's tree_shape (LongSpec) or draft_depth/top-k (EAGLE-3); the per-x table; the
embedded model's tree; the width-based tree of the algorithm's maximal tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fpgasim.acceptance.log_model import AatFit, fit_curve
from fpgasim.acceptance.measured import (
    AatTables,
    curve_method,
    pair_rows,
    table_trees,
    tree_of_row,
    workload_rows,
)
from fpgasim.acceptance.rule import (
    AcceptanceSource,
    acceptance_source,
    default_tasks,
    embedded_source,
    source_rows,
    tables_for,
)
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
    basis and note: how the acceptance rule covered the context (`analysis.acceptance`:
    measured, interpolated, extrapolated or embedded) and the line saying so.
    """

    task: str
    context: int
    aat_source: str
    points: pd.DataFrame
    measured: pd.DataFrame
    fit: AatFit
    ori: OriPoint | None
    aat_file: str = ""
    basis: str = "measured"
    note: str = ""


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


def curve_of_source(
    source: AcceptanceSource,
    tables: AatTables,
    algorithm: Algorithm,
    aat_source: str = "measured",
    fit_points: Sequence[int] | None = None,
) -> AatCurve:
    """The curve a measured-basis source stands for (`acceptance.source_rows`): its x and
    AAT (`measured`), or its fit at every x (`fitted`), with the trees and the Ori set."""
    curve, ori = source_rows(source, tables, algorithm)
    context = source.context
    fit = fit_curve(curve["verify_len"], curve["aat"], fit_points)
    measured = curve[["verify_len", "aat"]].reset_index(drop=True)
    if aat_source == "measured":
        keep = curve[curve["verify_len"] >= 2]
        xs = [int(x) for x in keep["verify_len"]]
        aat = [float(a) for a in keep["aat"]]
        records = curve.to_dict("records")
        row_trees = {int(r["verify_len"]): tree_of_row(r, algorithm.drafter) for r in records}
    else:
        xs = list(range(2, max_verify_len(algorithm, tables.tree_table) + 1))
        aat = [float(np.clip(fit.predict(x), 1.0, x)) for x in xs]
        row_trees = {}
    trees, sources = resolve_trees(algorithm, context, xs, row_trees, tables.tree_table)
    points = _points(xs, aat, trees, sources)
    if ori is not None:
        tree = tree_of_row(ori, algorithm.drafter) or default_tree(algorithm)
        label = "measured" if source.basis == "measured" else source.basis
        ori_point = OriPoint(int(ori["verify_len"]), float(ori["aat"]), tree, label)
    else:
        ori_point = _ori_fallback(algorithm, points, fit, aat_source)
    return AatCurve(
        source.task, context, aat_source, points, measured, fit, ori_point, source.file,
        source.basis, source.note,
    )


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
    """Curves from measured tables, one per (task, context), each context covered by the
    acceptance rule (measured, interpolated or extrapolated); `fitted`: the fit at every x."""
    if aat_source not in ("measured", "fitted"):
        raise InputError("aat_source", aat_source, "measured or fitted with `aat_dir`")
    rows = workload_rows(tables, algorithm.id, algorithm.kind, model_id)
    if method is not None:
        curve_method(rows, method)  # an unknown method is refused, naming those present
    task_list = list(tasks) if tasks else default_tasks(rows, contexts, method)
    out = []
    for task in task_list:
        for context in contexts:
            source = acceptance_source(
                algorithm, model_id, context, tables, task=task, tasks=task_list, method=method
            )
            out.append(curve_of_source(source, tables, algorithm, aat_source, fit_points))
    return out


def acceptance_curves(
    algorithm: Algorithm,
    model_id: str,
    contexts: Sequence[int],
    *,
    aat_dir: AatTables | Path | str | Sequence[Path | str] | None = None,
    tasks: Sequence[str] | None = None,
    aat_source: str | None = None,
    method: str | None = None,
    fit_points: Sequence[int] | None = None,
    x_max: int | None = None,
) -> list[AatCurve]:
    """The AAT curves of (algorithm, model) at each context by the acceptance rule: what
    every command calls (`analysis.acceptance`).

    aat_dir: the measured tables (None or 'builtin': the shipped ones). aat_source: None
    (the rule), measured or fitted (measured tables required), embedded (the embedded
    model, asked for). x_max bounds the embedded curves' x.
    """
    if aat_source is not None and aat_source not in AAT_SOURCES:
        raise InputError("aat_source", aat_source, f"one of {', '.join(AAT_SOURCES)}")
    if aat_source == "embedded":
        if tasks:
            raise InputError(
                "task",
                ",".join(tasks),
                "the embedded acceptance model is task-agnostic; drop `task` or the embedded "
                "`aat_source`",
            )
        return embedded_curves(
            algorithm, contexts, fit_points=fit_points, x_max=x_max, model_id=model_id,
            why="asked for",
        )
    tables = tables_for(aat_dir)
    if pair_rows(tables, algorithm, model_id).empty:
        if aat_source is not None:  # measured or fitted asked for: name what the tables hold
            workload_rows(tables, algorithm.id, algorithm.kind, model_id)
        if tasks:
            raise InputError(
                "task",
                ",".join(tasks),
                f"no measured AAT table holds {algorithm.id} on {model_id}; the embedded "
                "acceptance model is task-agnostic: drop `task`",
            )
        return embedded_curves(
            algorithm, contexts, fit_points=fit_points, x_max=x_max, model_id=model_id,
            tables=tables,
        )
    return measured_curves(
        tables,
        algorithm,
        model_id,
        contexts,
        tasks,
        aat_source=aat_source or "measured",
        method=method,
        fit_points=fit_points,
    )


def embedded_curves(
    algorithm: Algorithm,
    contexts: Sequence[int],
    *,
    fit_points: Sequence[int] | None = None,
    x_max: int | None = None,
    model_id: str = "",
    tables: AatTables | None = None,
    why: str = "",
) -> list[AatCurve]:
    """Curves from the embedded acceptance model (task-agnostic: task = 'embedded'), each
    with the note of `acceptance.embedded_source` (what it is calibrated to; beyond its
    fit, what the measured `tables` say there)."""
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
        note = embedded_source(algorithm, model_id or "this model", context, tables, why).note
        out.append(
            AatCurve("embedded", context, "embedded", points, measured, fit, ori, "",
                     "embedded", note)
        )
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
    notes = list(dict.fromkeys(c.note for c in curves if c.note))
    return AatCurve(
        "unified", curves[0].context, label, points, measured, fit, None, "",
        curves[0].basis, "; ".join(notes),
    )
