"""The study's accounting and the simulator side by side in one table, with the reason.

`beside(kind, accounting, simulated, ...)` merges the two renderings of one experiment on
the kind's key columns: every column the engine changes gets a `NAME_sim` twin, every
speedup a `NAME_ratio` (simulator / accounting), plus `sim_engine` and `sim_reason`.
Where the main speedup differs by more than `REASON_THRESHOLD`, `sim_reason` says why in
one line (`solving.cross_check.point_reason`: the extra cycles of the simulator's step at
the accounting's point, by mechanism), and `disagreements` gives the one line
(`cross_check.disagreement_line`) of each row where the two decide SD-or-AD otherwise.
"""

from __future__ import annotations

import math

import pandas as pd

from fpgasim.engine import Engine
from fpgasim.reproduce.kind import BesideSpec, experiment_kind
from fpgasim.reproduce.workloads import load_inputs
from fpgasim.solving.cross_check import disagreement_line, point_reason

#: A speedup ratio further than this from 1 gets a reason.
REASON_THRESHOLD = 0.10
ROW_KEYS = ("board", "model", "algorithm", "task", "context")


def beside_columns(kind: str) -> list[str]:
    """The columns `beside` adds for a kind, in order (none for untimed kinds)."""
    spec = experiment_kind(kind).beside
    if spec is None:
        return []
    ratios = [f"{v}_ratio" for v in spec.values if v.endswith("speedup")]
    return [*(f"{v}_sim" for v in spec.values), *ratios, "sim_engine", "sim_reason"]


def beside(
    kind: str, accounting: pd.DataFrame, simulated: pd.DataFrame, account: Engine, sim: Engine
) -> pd.DataFrame:
    """`accounting` with the simulator's twin columns, ratios and reasons appended."""
    spec = experiment_kind(kind).beside
    assert spec is not None, f"kind {kind} is not put side by side"
    keys = [k for k in (*ROW_KEYS, *spec.keys) if k in accounting.columns]
    right = simulated[keys + list(spec.values)].rename(columns={v: f"{v}_sim" for v in spec.values})
    out = accounting.merge(right, how="left", on=keys, validate="1:1")
    if len(out) != len(accounting):  # pragma: no cover - validate="1:1" guards it
        raise RuntimeError(f"side by side: {len(out)} rows from {len(accounting)} ({keys})")
    for v in spec.values:
        if v.endswith("speedup"):
            out[f"{v}_ratio"] = out[f"{v}_sim"].astype(float) / out[v].astype(float)
    out["sim_engine"] = sim.name
    out["sim_reason"] = [reason_of(row, spec, account, sim) for row in out.to_dict("records")]
    return out


def disagreements(kind: str, table: pd.DataFrame, sim_name: str) -> list[str]:
    """One line per row where the accounting and the simulator decide SD-or-AD differently
    (`disagreement_line`, naming the row and reusing its `sim_reason`)."""
    spec = experiment_kind(kind).beside
    if spec is None or "decision_sim" not in table.columns:
        return []
    x_col = spec.point[0]
    lines = []
    for row in table.to_dict("records"):
        if not isinstance(row.get("decision_sim"), str) or row["decision"] == row["decision_sim"]:
            continue
        where = [f"{row[k]}" for k in ("board", "task") if k in row] + [f"L={row['context']}"]
        where += [f"{row[k]}" for k in spec.keys]
        line = disagreement_line(
            decision=row["decision"],
            speedup=float(row[spec.speedup]),
            x=_int(row.get(x_col)),
            decision_sim=row["decision_sim"],
            speedup_sim=float(row[f"{spec.speedup}_sim"]),
            x_sim=_int(row.get(f"{x_col}_sim")),
            sim_name=sim_name,
            reason=str(row.get("sim_reason") or ""),
        )
        lines.append(f"SD-or-AD differs at {' '.join(where)}: {line}")
    return lines


# --------------------------------------------------------------------------- reasons


def reason_of(row: dict, spec: BesideSpec, account: Engine, sim: Engine) -> str:
    """One line: why the simulator's speedup differs from the accounting's (or '')."""
    ratio = _float(row.get(f"{spec.speedup}_ratio"))
    flipped = "decision" in row and row.get("decision") != row.get("decision_sim")
    if ratio is None or (abs(ratio - 1.0) <= REASON_THRESHOLD and not flipped):
        return ""
    x_col, tree_col, aat_col = spec.point
    x = _int(row.get(x_col))
    if x is None or x < 2:
        return ""
    board, model, algorithm = load_inputs(row["board"], row["model"], row["algorithm"])
    return point_reason(
        account,
        sim,
        (board, model, algorithm),
        x=x,
        tree_text=str(row.get(tree_col) or ""),
        aat=float(row[aat_col]),
        context=int(row["context"]),
        x_sim=_int(row.get(f"{x_col}_sim")),
    )


def _float(v: object) -> float | None:
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _int(v: object) -> int | None:
    f = _float(v)
    return None if f is None else int(f)


__all__ = [
    "REASON_THRESHOLD",
    "beside",
    "beside_columns",
    "disagreements",
    "reason_of",
]
