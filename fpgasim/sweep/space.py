"""Hypothetical boards for design-space sweeps: a base board with other PE arrays and bandwidths.

This is the board generator of `fpgasim explore` ("more DSPs or more bandwidth?"): the
boards it returns are ordinary validated `Board`s, so they go through `Grid`, the
executors and the cache like shipped ones (the cache keys them by content, not by name).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from fpgasim.config.schema import Board
from fpgasim.errors import InputError


def parse_pe_arrays(text: str) -> list[tuple[int, int]]:
    """'64x48,128x64' -> [(64, 48), (128, 64)] (rows x cols)."""
    out = []
    for part in str(text).replace(" ", "").split(","):
        if not part:
            continue
        rows, sep, cols = part.lower().partition("x")
        if not sep or not rows.isdigit() or not cols.isdigit():
            raise InputError("--pe-arrays", text, "ROWSxCOLS items, e.g. 64x48,128x128")
        out.append((int(rows), int(cols)))
    if not out:
        raise InputError("--pe-arrays", text, "at least one ROWSxCOLS item, e.g. 128x128")
    return out


def derive_board(base: Board, rows: int, cols: int, bandwidth_gb_s: float) -> Board:
    """`base` with a rows x cols PE array and another peak bandwidth, validated.

    The MV-mode throughput keeps the base board's fraction of the array, and the name says
    what changed, e.g. `v80-pe128x64-bw460`.
    """
    macs = rows * cols
    mv = max(1, min(macs, round(base.mv_macs_per_cycle * macs / base.macs_per_cycle)))
    data = base.model_dump()
    data["name"] = f"{base.name}-pe{rows}x{cols}-bw{bandwidth_gb_s:g}"
    data["description"] = (
        f"hypothetical {base.name}: {rows}x{cols} PE array, {bandwidth_gb_s:g} GB/s"
    )
    data["pe_array"] = {"rows": rows, "cols": cols}
    data["mv_macs_per_cycle"] = mv
    data["memory"]["bandwidth_gb_s"] = bandwidth_gb_s
    try:
        return Board.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "board"
        raise InputError(field, err.get("input"), err["msg"]) from None


def derive_boards(
    base: Board, pe_arrays: Sequence[tuple[int, int]], bandwidths_gb_s: Sequence[float]
) -> list[Board]:
    """Every (PE array, bandwidth) combination of `base`, PE array major."""
    return [derive_board(base, r, c, bw) for r, c in pe_arrays for bw in bandwidths_gb_s]
