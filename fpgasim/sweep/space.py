"""Hypothetical boards for design-space sweeps: a base board with other PE arrays and bandwidths.

This is the board generator of `fpgasim explore` ("more DSPs or more bandwidth?"): the
boards it returns are ordinary validated `Board`s, so they go through `Grid`, the
executors and the cache like shipped ones (the cache keys them by content, not by name).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from fpgasim.config.schema import Board, PeArray
from fpgasim.errors import InputError
from fpgasim.lists import split_items


def parse_pe_arrays(text: str) -> list[tuple[int, int]]:
    """'64x48,128x64' -> [(64, 48), (128, 64)] (rows x cols), each a valid `PeArray`."""
    out = []
    for part in split_items(text, "pe_arrays", "64x48,128x128"):
        rows, sep, cols = part.replace(" ", "").lower().partition("x")
        if not sep or not rows.isdigit() or not cols.isdigit() or len(rows + cols) > 12:
            raise InputError("pe_arrays", part, "ROWSxCOLS items, e.g. 64x48,128x128")
        try:
            PeArray(rows=int(rows), cols=int(cols))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = f"pe_array.{err['loc'][0]}"
            raise InputError("pe_arrays", part, f"{where}: {err['msg']}") from None
        out.append((int(rows), int(cols)))
    return list(dict.fromkeys(out))


#: The option a derived board's field comes from (errors name it, not the board field).
FIELD_ARGUMENTS = {
    "pe_array": "pe_arrays",
    "mv_macs_per_cycle": "pe_arrays",
    "memory": "bandwidths",
}


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
        argument = FIELD_ARGUMENTS.get(str(err["loc"][0]) if err["loc"] else "", "base_board")
        raise InputError(argument, err.get("input"), f"{field}: {err['msg']}") from None


def derive_boards(
    base: Board, pe_arrays: Sequence[tuple[int, int]], bandwidths_gb_s: Sequence[float]
) -> list[Board]:
    """Every (PE array, bandwidth) combination of `base`, PE array major."""
    return [derive_board(base, r, c, bw) for r, c in pe_arrays for bw in bandwidths_gb_s]
