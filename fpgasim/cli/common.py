"""Shared CLI helpers: list parsing, output writing, console."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table

from fpgasim.errors import InputError

console = Console()
err_console = Console(stderr=True)

MAX_LIST = 100_000


def parse_int_list(text: str, argument: str, minimum: int = 1, maximum: int = 10**7) -> list[int]:
    """'1-5,8,16' -> [1, 2, 3, 4, 5, 8, 16] (sorted, unique), each within [minimum, maximum]."""
    values: set[int] = set()
    for part in str(text).replace(" ", "").split(","):
        if not part:
            continue
        try:
            if "-" in part[1:]:
                lo_s, hi_s = part.split("-", 1) if not part.startswith("-") else (part, "")
                lo, hi = int(lo_s), int(hi_s)
                if hi < lo:
                    raise InputError(argument, text, f"ranges go low-high, e.g. {hi}-{lo}")
                if hi - lo > MAX_LIST:
                    raise InputError(argument, text, f"at most {MAX_LIST} values")
                values.update(range(lo, hi + 1))
            else:
                values.add(int(part))
        except ValueError:
            raise InputError(
                argument, text, "whole numbers and ranges, e.g. 128,256 or 1-85"
            ) from None
    if not values:
        raise InputError(argument, text, "at least one value, e.g. 128,256 or 1-85")
    bad = [v for v in values if v < minimum or v > maximum]
    if bad:
        raise InputError(
            argument,
            min(bad) if min(bad) < minimum else max(bad),
            f"every value between {minimum} and {maximum}",
        )
    return sorted(values)


def parse_name_list(text: str) -> list[str]:
    """'u280,v80' -> ['u280', 'v80']."""
    return [p.strip() for p in str(text).split(",") if p.strip()]


def rich_table(
    rows: list[dict],
    title: str | None = None,
    columns: list[str] | None = None,
    floatfmt: str = "{:.4g}",
) -> Table:
    """A rich Table from a list of dicts."""
    columns = columns or (list(rows[0]) if rows else [])
    table = Table(title=title)
    for c in columns:
        table.add_column(c, justify="right" if rows and _is_num(rows[0].get(c)) else "left")
    for r in rows:
        table.add_row(*[_fmt(r.get(c), floatfmt) for c in columns])
    return table


def _is_num(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _fmt(v, floatfmt: str) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return floatfmt.format(v)
    return str(v)


def dumps_json(obj) -> str:
    """JSON with numpy scalars converted."""

    def default(o):
        if hasattr(o, "item"):
            return o.item()
        if hasattr(o, "tolist"):
            return o.tolist()
        return str(o)

    return json.dumps(obj, indent=2, default=default)
