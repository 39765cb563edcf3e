"""The dynamic optimal solution: context ranges -> (x, tree), the table a runtime loads.

Each solved context c_i owns [b_(i-1), b_i) with b_i = round(sqrt(c_i·c_(i+1))) (the
geometric midpoint: contexts are log-spaced), b_(-1) = 1 and no upper bound for the last.
Adjacent ranges with the same (x, tree) are merged. "use AD" rows get x = 1 and no tree.
"""

from __future__ import annotations

import math

import pandas as pd
import yaml

from fpgasim.solving.decision import USE_SD

SCHEDULE_COLUMNS = [
    "context_from",
    "context_to",
    "verify_len",
    "tree",
    "decision",
    "solved_contexts",
    "speedup_min",
    "speedup_max",
]


def boundaries(contexts: list[int]) -> list[int]:
    """Range starts: 1, then the geometric midpoints between consecutive contexts."""
    cs = sorted(contexts)
    mids = [max(a + 1, min(b, round(math.sqrt(a * b)))) for a, b in zip(cs, cs[1:], strict=False)]
    return [1, *mids]


def build_schedule(summary: pd.DataFrame) -> pd.DataFrame:
    """Context ranges from a solver summary (one row per context; SCHEDULE_COLUMNS).

    context_to is exclusive; None means no upper bound.
    """
    if summary.empty:
        return pd.DataFrame(columns=SCHEDULE_COLUMNS)
    if summary["context"].duplicated().any():
        raise ValueError("build_schedule needs one row per context (one task or the unified x)")
    rows = summary.sort_values("context").to_dict("records")
    starts = boundaries([int(r["context"]) for r in rows])
    ranges: list[dict] = []
    for i, r in enumerate(rows):
        use_sd = r["decision"] == USE_SD
        entry = {
            "context_from": starts[i],
            "context_to": starts[i + 1] if i + 1 < len(rows) else None,
            "verify_len": int(r["best_verify_len"]) if use_sd else 1,
            "tree": r["best_tree"] if use_sd else "",
            "decision": r["decision"],
            "solved_contexts": str(int(r["context"])),
            "speedup_min": float(r["best_speedup"]) if use_sd else 1.0,
            "speedup_max": float(r["best_speedup"]) if use_sd else 1.0,
        }
        last = ranges[-1] if ranges else None
        if last and (last["verify_len"], last["tree"]) == (entry["verify_len"], entry["tree"]):
            last["context_to"] = entry["context_to"]
            last["solved_contexts"] += "," + entry["solved_contexts"]
            last["speedup_min"] = min(last["speedup_min"], entry["speedup_min"])
            last["speedup_max"] = max(last["speedup_max"], entry["speedup_max"])
        else:
            ranges.append(entry)
    frame = pd.DataFrame(ranges, columns=SCHEDULE_COLUMNS)
    frame["context_to"] = frame["context_to"].astype("Int64")
    return frame


def lookup(schedule: pd.DataFrame, context: int) -> dict:
    """The schedule row whose [context_from, context_to) holds `context`."""
    for r in schedule.to_dict("records"):
        upper = r["context_to"]
        if r["context_from"] <= context and (pd.isna(upper) or context < upper):
            return r
    raise KeyError(f"context {context} is outside the schedule (starts at 1)")


def schedule_yaml(schedule: pd.DataFrame, meta: dict) -> str:
    """The schedule as a YAML document: `meta` fields, then `ranges` (context_to: null = open)."""
    ranges = []
    for r in schedule.to_dict("records"):
        upper = r["context_to"]
        ranges.append(
            {
                "context_from": int(r["context_from"]),
                "context_to": None if pd.isna(upper) else int(upper),
                "verify_len": int(r["verify_len"]),
                "tree": r["tree"] or None,
                "decision": r["decision"],
                "solved_contexts": [int(c) for c in str(r["solved_contexts"]).split(",")],
                "speedup_min": round(float(r["speedup_min"]), 4),
                "speedup_max": round(float(r["speedup_max"]), 4),
            }
        )
    doc = {**meta, "ranges": ranges}
    header = (
        "# fpgasim dynamic schedule: for a context length L, use the range with\n"
        "# context_from <= L < context_to (context_to: null = no upper bound).\n"
    )
    return header + yaml.safe_dump(doc, sort_keys=False)
