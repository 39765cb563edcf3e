"""Hypothetical boards for design-space sweeps: a base board with other PE arrays and bandwidths.

This is the board generator of `fpgasim explore` ("more DSPs or more bandwidth?"): the
boards it returns are ordinary validated `Board`s, so they go through `Grid`, the
executors and the cache like shipped ones (the cache keys them by content, not by name).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class FlightDesign:
    """One FlightLLM design point: MV token lanes x MV width, MM tile rows, bandwidth, clock.

    `mv_width` is the MAC/cycle of one token lane (MV_PARALLEL_N x MV_PARALLEL_K), so the
    MV array does mv_lanes x mv_width MAC/cycle; `mm_tile_rows` is MM_PARALLEL_M (= the rows
    an MM is charged for), the MM array keeping the base board's MAC/cycle.
    """

    mv_lanes: int
    mv_width: int
    mm_tile_rows: int
    bandwidth_gb_s: float
    clock_mhz: float

    @property
    def label(self) -> str:
        """The design's short name, e.g. `mv4x1024-mm128-bw819.2-f225` (board names, plots)."""
        return (
            f"mv{self.mv_lanes}x{self.mv_width}-mm{self.mm_tile_rows}"
            f"-bw{self.bandwidth_gb_s:g}-f{self.clock_mhz:g}"
        )


#: The design field a board field comes from (errors name it, not the board field).
DESIGN_ARGUMENTS = {
    "mv_parallel_m": "mv_lanes",
    "mv_start_rows": "mv_lanes",
    "mv_macs_per_cycle": "mv_widths",
    "mm_tile_rows": "mm_tile_rows",
    "mm_start_rows": "mm_tile_rows",
    "pe_array": "mm_tile_rows",
    "memory": "bandwidths",
    "clock_mhz": "clocks",
}


def derive_flightllm_board(base: Board, design: FlightDesign) -> Board:
    """`base` (a FlightLLM-lowered board) with the design's MV array, MM tile, bandwidth and
    clock; validated, named `BASE-<design label>`.

    MV: mv_parallel_m = mv_start_rows = the lanes (one MV instruction carries one row per
    lane), mv_macs_per_cycle = lanes x width. MM: the tile is MM_PARALLEL_M = MM_START_M_NUM
    and the array keeps the base's MAC/cycle as tile rows x (MAC/cycle / tile rows).
    """
    if base.flightllm is None:
        raise InputError("base_board", base.name, "a board with lowering: flightllm")
    macs = base.macs_per_cycle
    block = base.flightllm.block
    if design.mv_width % block:
        raise InputError(
            "mv_widths", design.mv_width, f"multiples of {block} (one lane is N x K, K = a block)"
        )
    if design.mm_tile_rows % block:
        raise InputError(
            "mm_tile_rows", design.mm_tile_rows, f"multiples of {block} (FlightLLM's blocks)"
        )
    if macs % design.mm_tile_rows:
        raise InputError(
            "mm_tile_rows", design.mm_tile_rows, f"a divisor of the MM array's {macs} MAC/cycle"
        )
    data = base.model_dump(by_alias=True)
    data["name"] = f"{base.name}-{design.label}"
    data["description"] = f"hypothetical {base.name}: {design.label}"
    data["clock_mhz"] = design.clock_mhz
    data["memory"]["bandwidth_gb_s"] = design.bandwidth_gb_s
    data["pe_array"] = {"rows": design.mm_tile_rows, "cols": macs // design.mm_tile_rows}
    data["mv_macs_per_cycle"] = design.mv_lanes * design.mv_width
    fl = data["flightllm"]
    fl["mm_tile_rows"] = fl["mm_start_rows"] = design.mm_tile_rows
    fl["mv_start_rows"] = fl["mv_parallel_m"] = design.mv_lanes
    try:
        return Board.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [str(p) for p in err["loc"]]
        field = ".".join(loc) or "board"
        argument = next(
            (DESIGN_ARGUMENTS[p] for p in reversed(loc) if p in DESIGN_ARGUMENTS), "base_board"
        )
        raise InputError(argument, err.get("input"), f"{field}: {err['msg']}") from None


def derive_flightllm_boards(base: Board, designs: Sequence[FlightDesign]) -> list[Board]:
    """Every design applied to `base`, in order."""
    return [derive_flightllm_board(base, d) for d in designs]
