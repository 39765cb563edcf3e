"""The one rule that picks the acceptance (AAT) a command uses for (algorithm, model, context).

Every command that needs AAT curves (`solve`, `compare-algorithms`, `generate`,
`reproduce`, and `explore` through the same functions) asks `acceptance_source` which
acceptance to use and `acceptance_curves` for the curves it picks; each curve carries
what was used (`AatCurve.basis` and `AatCurve.note`). The rule (docs/analysis.md, "Where
the AAT comes from"):

1. Measured tables (the shipped ones, `BUILTIN_AAT`, unless another folder is given)
   that hold the (algorithm, target model) pair are used for it:
   - at a measured context, the measured curve: the first searched method of
     `CURVE_METHOD_ORDER` measured there (a tree curve, else e.g. a chain curve);
   - between two measured contexts, the curve of the first method measured at both
     neighbours, interpolated linearly in log2(context) at every x both hold (`interpolated`);
   - beyond the measured contexts, the measured curve at the nearest measured context,
     its accepted draft tokens (AAT - 1) scaled by the embedded model's ratio between the
     two contexts at the same x (`extrapolated`).
2. Otherwise (no table holds the pair, or `aat_source="embedded"` is asked for) the
   embedded acceptance model (`fpgasim.tree.embedded`), whose note says what it was
   calibrated to and, beyond the contexts of its fit, that it extrapolates and what the
   measured tables say there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fpgasim.acceptance.measured import (
    CURVE_METHOD_ORDER,
    ORIGINAL,
    AatTables,
    builtin_tables,
    load_aat_tables,
    pair_rows,
    pick_file,
)
from fpgasim.config.schema import Algorithm
from fpgasim.errors import InputError
from fpgasim.tree.embedded import default_tree_aat, embedded_curve

#: How a curve covers its context: measured there, interpolated between two measured
#: contexts, extrapolated beyond them, or the embedded model.
BASES = ("measured", "interpolated", "extrapolated", "embedded")


@dataclass(frozen=True)
class AcceptanceSource:
    """Which acceptance one (algorithm, model, task, context) uses, and why (`note`).

    basis: one of BASES. method: the measured curve's tree-construction method ('' for
    embedded). file: the table it is read from. contexts: the measured contexts it is
    built from (one, or the two neighbours of an interpolation).
    """

    algorithm: str
    model: str
    task: str
    context: int
    basis: str
    method: str = ""
    file: str = ""
    contexts: tuple[int, ...] = ()
    note: str = ""


def _log_distance(a: int, b: int) -> float:
    return abs(math.log2(a / b))


def context_range(contexts: Sequence[int]) -> str:
    """Contexts as '128..2048' (or '1024' for one), as the notes write them."""
    cs = sorted(set(int(c) for c in contexts))
    return f"{cs[0]}..{cs[-1]}" if len(cs) > 1 else str(cs[0])


def searched_rows(rows: pd.DataFrame, task: str, method: str | None) -> pd.DataFrame:
    """The task's rows of searched curves (not the Ori rows), of `method` when given."""
    out = rows[(rows["task"] == task) & (rows["method"] != ORIGINAL)]
    return out[out["method"] == method] if method is not None else out


def default_tasks(rows: pd.DataFrame, contexts: Sequence[int], method: str | None) -> list[str]:
    """Tasks a solve uses when none is given: those measured at every asked context (all
    of them: two or more give the unified x), else the one measured at the most contexts
    (ties: the first name)."""
    searched = rows[rows["method"] != ORIGINAL]
    if method is not None:
        searched = searched[searched["method"] == method]
    if searched.empty:
        raise InputError("curve_method", method, f"one of {', '.join(sorted(set(rows['method'])))}")
    by_task = {t: {int(c) for c in g["context"]} for t, g in searched.groupby("task")}
    exact = sorted(t for t, cs in by_task.items() if set(contexts) <= cs)
    if exact:
        return exact
    return [widest_task(rows, method)]


def widest_task(rows: pd.DataFrame, method: str | None = None) -> str:
    """The task measured at the most contexts (ties: the first name): the one task a
    comparison across algorithms or a generation uses when none is given."""
    searched = rows[rows["method"] != ORIGINAL]
    if method is not None:
        searched = searched[searched["method"] == method]
    if searched.empty:
        raise InputError("curve_method", method, f"one of {', '.join(sorted(set(rows['method'])))}")
    by_task = {t: g["context"].nunique() for t, g in searched.groupby("task")}
    return min(by_task, key=lambda t: (-by_task[t], t))


def main_task(
    algorithm: Algorithm, model_id: str, tables: AatTables | None, method: str | None = None
) -> str | None:
    """The task `widest_task` picks for (algorithm, model) in `tables`; None where no table
    holds the pair (the embedded model, which is task-agnostic)."""
    if tables is None:
        return None
    rows = pair_rows(tables, algorithm, model_id)
    return None if rows.empty else widest_task(rows, method)


def _embedded_note(
    algorithm: Algorithm, model_id: str, context: int, tables: AatTables | None, why: str
) -> str:
    """What the embedded model is calibrated to and, beyond its fit, what it extrapolates."""
    acc = algorithm.acceptance
    if acc is None:
        return f"{why}; {algorithm.id} has no embedded acceptance model"
    tau = f"tau {acc.tau_target:g} at L={acc.context_ref}" if acc.tau_target else "no tau"
    head = f"embedded model ({why}; {tau}, context decay {acc.context_decay:g} per doubling"
    rows = _algorithm_rows(tables, algorithm)
    to = acc.calibrated_to
    fit_rows = (
        rows[(rows["file"] == to.measured_table) & (rows["method"] == to.measured_method)]
        if to is not None and not rows.empty
        else rows.iloc[0:0]
    )
    if fit_rows.empty:
        measured = (
            f"; {algorithm.id} is measured at L={context_range(rows['context'])}"
            if not rows.empty
            else f"; no table measures {algorithm.id}"
        )
        return f"{head} assumed){measured}"
    fit_max = int(fit_rows["context"].max())
    head += f" fitted on {to.measured_table} up to L={fit_max})"
    if context <= fit_max:
        return head
    beyond = _measured_beyond(algorithm, rows, fit_max, context)
    return f"{head}; extrapolated beyond L={fit_max}{beyond}"


def _measured_beyond(algorithm: Algorithm, rows: pd.DataFrame, fit_max: int, context: int) -> str:
    """What the tables measure past the fit: the accepted draft tokens kept from L=fit_max to
    the measured context nearest `context` (mean over shared x), beside the model's."""
    best: tuple[float, str, str, str, int] | None = None
    for (model, task, method, file), g in rows[rows["method"] != ORIGINAL].groupby(
        ["model", "task", "method", "file"]
    ):
        beyond = sorted(int(c) for c in set(g["context"]) if c > fit_max)
        if fit_max not in set(g["context"]) or not beyond:
            continue
        near = min(beyond, key=lambda c: (_log_distance(c, context), c))
        score = -_log_distance(near, context)
        if best is None or score > best[0]:
            best = (score, model, method, file, near)
        del task
    if best is None:
        return ""
    _, model, method, file, near = best
    g = rows[(rows["model"] == model) & (rows["method"] == method) & (rows["file"] == file)]
    at = {c: g[g["context"] == c].set_index("verify_len")["aat"] for c in (fit_max, near)}
    xs = sorted(set(at[fit_max].index) & set(at[near].index) - {1})
    kept = float(np.mean([(at[near][x] - 1) / (at[fit_max][x] - 1) for x in xs]))
    model_kept = _embedded_kept(algorithm, fit_max, near, xs)
    return (
        f"; measured {algorithm.id} on {model} ({method}, {file}) keeps {kept:.0%} of its "
        f"accepted draft tokens from L={fit_max} to L={near}, the embedded model {model_kept:.0%}"
    )


def _embedded_kept(algorithm: Algorithm, start: int, end: int, xs: Sequence[int]) -> float:
    """Mean over xs of (AAT(x, end) - 1) / (AAT(x, start) - 1) under the embedded model."""
    a = embedded_curve(algorithm, start, list(xs))["aat"].to_numpy(float)
    b = embedded_curve(algorithm, end, list(xs))["aat"].to_numpy(float)
    return float(np.mean((b - 1) / (a - 1)))


def _algorithm_rows(tables: AatTables | None, algorithm: Algorithm) -> pd.DataFrame:
    """Every row of the algorithm (by id, else by drafter kind), any model."""
    if tables is None:
        return pd.DataFrame(columns=["model", "task", "context", "method", "file", "aat"])
    rows = tables.rows
    hit = rows[rows["algorithm"] == algorithm.id]
    return hit if not hit.empty else rows[rows["algorithm"] == algorithm.kind]


def embedded_source(
    algorithm: Algorithm,
    model_id: str,
    context: int,
    tables: AatTables | None = None,
    why: str = "",
) -> AcceptanceSource:
    """The embedded model as the source of (algorithm, model, context), with its note."""
    why = why or f"no measured table holds {algorithm.id} on {model_id}"
    note = _embedded_note(algorithm, model_id, context, tables, why)
    return AcceptanceSource(algorithm.id, model_id, "embedded", context, "embedded", note=note)


def acceptance_source(
    algorithm: Algorithm,
    model_id: str,
    context: int,
    tables: AatTables | None,
    *,
    task: str | None = None,
    tasks: Sequence[str] = (),
    method: str | None = None,
) -> AcceptanceSource:
    """THE rule (module docstring): which acceptance (algorithm, model, context) uses.

    tables None or without the pair: the embedded model. task: the measured task (default:
    `default_tasks`' first); tasks: the task set of the run (the file holding most of them
    is preferred, as `acceptance.measured.select_curve` does); method: a curve method to keep to.
    """
    if context < 1:
        raise InputError("contexts", context, "context lengths >= 1")
    rows = pair_rows(tables, algorithm, model_id) if tables is not None else None
    if rows is None or rows.empty:
        if task is not None:
            raise InputError(
                "task",
                task,
                f"no measured AAT table holds {algorithm.id} on {model_id}; the embedded "
                "acceptance model is task-agnostic: drop `task`",
            )
        return embedded_source(algorithm, model_id, context, tables)
    if task is None:
        task = default_tasks(rows, [context], method)[0]
    searched = searched_rows(rows, task, method)
    if searched.empty:
        known = sorted(set(rows.loc[rows["method"] != ORIGINAL, "task"]))
        what = f"a {method} curve" if method else "a measured curve"
        raise InputError("task", task, f"tasks with {what}: {', '.join(known)}")
    present = set(searched["method"])
    methods = [method] if method is not None else [m for m in CURVE_METHOD_ORDER if m in present]
    measured = {m: sorted({int(c) for c in searched.loc[searched["method"] == m, "context"]})
                for m in methods}
    file_tasks = list(tasks) or [task]
    base = (algorithm.id, model_id, task, context)
    for m in methods:  # 1. measured at this context
        if context in measured[m]:
            at = rows[(rows["context"] == context) & (rows["method"] == m)]
            file = pick_file(at[at["task"].isin(file_tasks)], file_tasks)
            if file not in set(at.loc[at["task"] == task, "file"]):
                file = pick_file(at[at["task"] == task], [task])
            skipped = [
                f"no {p} curve at L={context} (measured at L={context_range(measured[p])})"
                for p in methods[: methods.index(m)]
            ]
            why = f"; {'; '.join(skipped)}" if skipped else ""
            note = f"measured {m} curve at L={context} ({file}, {task}){why}"
            return AcceptanceSource(*base, "measured", m, file, (context,), note)
    for m in methods:  # 2. between two measured contexts of one method
        lower = [c for c in measured[m] if c < context]
        upper = [c for c in measured[m] if c > context]
        if lower and upper:
            lo, hi = max(lower), min(upper)
            file = _pair_file(searched[searched["method"] == m], lo, hi)
            note = (
                f"interpolated between the measured {m} curves at L={lo} and L={hi} "
                f"({file}, {task}), linear in log2 L; not measured at L={context}"
            )
            return AcceptanceSource(*base, "interpolated", m, file, (lo, hi), note)
    # 3. beyond every measured context: the nearest measured curve, carried by the model
    near_m, near = min(
        ((m, c) for m in methods for c in measured[m]),
        key=lambda mc: (_log_distance(mc[1], context), methods.index(mc[0])),
    )
    at = searched[(searched["method"] == near_m) & (searched["context"] == near)]
    file = pick_file(at, [task])
    carried = (
        "scaled by the embedded model's change of accepted draft tokens (AAT - 1) at each x"
        if algorithm.acceptance is not None
        else f"held ({algorithm.id} has no embedded model to carry it)"
    )
    where = context_range([c for m in methods for c in measured[m]])
    note = (
        f"extrapolated from the measured {near_m} curve at L={near} ({file}, {task}), "
        f"{carried}; {algorithm.id} on {model_id} is measured at L={where} only"
    )
    return AcceptanceSource(*base, "extrapolated", near_m, file, (near,), note)


def _pair_file(rows: pd.DataFrame, lo: int, hi: int) -> str:
    """The file holding both contexts (most points, then name), else the one at lo."""
    both = [f for f, g in rows.groupby("file") if {lo, hi} <= set(int(c) for c in g["context"])]
    if both:
        return pick_file(rows[rows["file"].isin(both)], list(set(rows["task"])))
    return pick_file(rows[rows["context"] == lo], list(set(rows["task"])))


def source_rows(
    source: AcceptanceSource, tables: AatTables, algorithm: Algorithm
) -> tuple[pd.DataFrame, pd.Series | None]:
    """The curve rows (AAT layout, one per x, sorted) a measured-basis source stands for,
    and its Ori row (method original) or None: measured rows as read; interpolated and
    extrapolated rows with their `aat` computed and their trees from the nearer context."""
    rows = pair_rows(tables, algorithm, source.model)
    task_rows = rows[rows["task"] == source.task]

    def curve(context: int, file: str) -> pd.DataFrame:
        hit = task_rows[
            (task_rows["context"] == context)
            & (task_rows["method"] == source.method)
            & (task_rows["file"] == file)
        ]
        if hit.empty:  # the other neighbour lives in another file
            hit = task_rows[task_rows["context"] == context]
            hit = hit[hit["method"] == source.method]
            hit = hit[hit["file"] == pick_file(hit, [source.task])]
        return hit.sort_values("verify_len", ignore_index=True)

    def ori(context: int) -> pd.Series | None:
        hit = task_rows[(task_rows["context"] == context) & (task_rows["method"] == ORIGINAL)]
        if hit.empty:
            return None
        same = hit[hit["file"] == source.file]
        return (same if not same.empty else hit.sort_values("file")).iloc[0]

    if source.basis == "measured":
        return curve(source.context, source.file), ori(source.context)
    if source.basis == "interpolated":
        lo, hi = source.contexts
        weight = math.log2(source.context / lo) / math.log2(hi / lo)
        a, b = curve(lo, source.file), curve(hi, source.file)
        near = a if weight <= 0.5 else b
        out = near[near["verify_len"].isin(set(a["verify_len"]) & set(b["verify_len"]))].copy()
        va, vb = a.set_index("verify_len")["aat"], b.set_index("verify_len")["aat"]
        out["aat"] = [
            float(va[x] + weight * (vb[x] - va[x])) for x in out["verify_len"]
        ]
        ori_lo, ori_hi = ori(lo), ori(hi)
        ori_row = None
        if ori_lo is not None and ori_hi is not None:
            ori_row = (ori_lo if weight <= 0.5 else ori_hi).copy()
            ori_row["aat"] = float(ori_lo["aat"] + weight * (ori_hi["aat"] - ori_lo["aat"]))
        return out.reset_index(drop=True), ori_row
    if source.basis == "extrapolated":
        (near_context,) = source.contexts
        out = curve(near_context, source.file).copy()
        out["aat"] = carried(
            algorithm, near_context, source.context, out["verify_len"], out["aat"]
        )
        ori_row = ori(near_context)
        if ori_row is not None and algorithm.acceptance is not None:
            ori_row = ori_row.copy()
            ratio = (default_tree_aat(algorithm, source.context) - 1) / (
                default_tree_aat(algorithm, near_context) - 1
            )
            x = int(ori_row["verify_len"])
            ori_row["aat"] = float(np.clip(1 + (ori_row["aat"] - 1) * ratio, 1.0, x))
        return out, ori_row
    raise ValueError(f"source_rows needs a measured basis, not {source.basis!r}")


def carried(
    algorithm: Algorithm, start: int, end: int, verify_lens: Sequence[int], aats: Sequence[float]
) -> list[float]:
    """Measured AATs at (x, start) carried to context `end` by the embedded model: each
    AAT - 1 scaled by the model's (AAT(x, end) - 1) / (AAT(x, start) - 1), clipped to
    [1, x]; held where the algorithm has no embedded model (or x < 2)."""
    xs = [int(x) for x in verify_lens]
    values = [float(a) for a in aats]
    if algorithm.acceptance is None:
        return values
    ok = [x for x in xs if x >= 2]
    a = dict(zip(ok, embedded_curve(algorithm, start, ok)["aat"], strict=True)) if ok else {}
    b = dict(zip(ok, embedded_curve(algorithm, end, ok)["aat"], strict=True)) if ok else {}
    return [
        float(np.clip(1 + (v - 1) * (b[x] - 1) / (a[x] - 1), 1.0, x)) if x >= 2 else v
        for x, v in zip(xs, values, strict=True)
    ]


def tables_for(aat_dir: AatTables | Path | str | Sequence[Path | str] | None) -> AatTables:
    """The tables of `aat_dir`: the shipped ones for None or BUILTIN_AAT, else that folder
    (or files), loaded and checked (`acceptance.measured.load_aat_tables`)."""
    if aat_dir is None:
        return builtin_tables()
    if isinstance(aat_dir, AatTables):
        return aat_dir
    return load_aat_tables(aat_dir)


__all__ = [
    "BASES",
    "AcceptanceSource",
    "acceptance_source",
    "carried",
    "context_range",
    "default_tasks",
    "embedded_source",
    "main_task",
    "source_rows",
    "tables_for",
    "widest_task",
]
