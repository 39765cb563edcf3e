"""DSP slices a FlightLLM-lowered board's MM and MV arrays need, and whether they fit.

An array of FlightLLM's MPE does M x N x K int8 multiply-accumulates per cycle: M token
rows, N output columns, and a K-long dot product (K = the 16-wide block). How many DSP
slices that takes depends on the slice's int8 packing (docs/flightllm-sd.md, "Resources"):

- DSP48E2 (UltraScale+: U280, U250): two int8 MACs that share one weight fit one slice
  (AMD WP486), so token rows pair up: ceil(M / 2) x N x K slices. A one-token MV array
  (M = 1) gets no packing; a second token lane is free.
- DSP58 (Versal: VHK158, V80): the int8 vector dot-product mode sums three 9x8 products
  in one slice (AMD AM004, UG1273), so a K-long dot product takes ceil(K / 3) slices:
  M x N x ceil(K / 3). K = 16 leaves 2 of 18 multipliers idle.

FlightLLM's MPE is one configurable DSP chain (docs/hardware.md): MV mode is another
configuration of the slices MM mode uses, and the compiler never runs an MM and an MV at
once across a layer barrier, so one pipeline needs max(MM, MV) slices. The board runs
ceil(duration_divisor) such pipelines side by side (the divisor read as parallel
pipelines, docs/validation.md "FlightLLM on U280", hypothesis H1: 3.2 on VHK158 = its 4
SLR pipelines fed by 3.2 pipelines' worth of HBM channels; 3 on U280; 1 on a board
without the divisor). Weights are int8 in the arrays (FlightLLM only *times* their loads
as int4), so the int8 rules apply. FlightLLM's own per-slice packing (a sparse DSP chain)
is unpublished: the counts are a stated rule, not a measurement; `separate_mv=True`
costs MV as its own array (the sensitivity in the docs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fpgasim.config.board import Board
from fpgasim.config.schema import config_source
from fpgasim.errors import ConfigError


@dataclass(frozen=True)
class DspRule:
    """How many int8 MACs one slice of a DSP kind does per cycle, and along which axis."""

    kind: str
    macs_per_slice: int
    packs_along: str  # "tokens": MACs sharing one weight; "k": terms of one dot product
    source: str


#: The int8 packing rule per DSP primitive (docs/flightllm-sd.md, "Resources").
DSP_RULES: dict[str, DspRule] = {
    "DSP48E2": DspRule(
        "DSP48E2",
        2,
        "tokens",
        "AMD WP486: two int8 MACs sharing one weight per DSP48E2 (27x18 multiplier)",
    ),
    "DSP58": DspRule(
        "DSP58",
        3,
        "k",
        "AMD AM004 / UG1273: DSP58 int8 vector dot-product mode, three 9x8 products summed",
    ),
}


@dataclass(frozen=True)
class ArrayShape:
    """One MAC array: `tokens` rows (M) x `outputs` columns (N) x `k` dot-product terms."""

    name: str
    tokens: int
    outputs: int
    k: int

    @property
    def macs_per_cycle(self) -> int:
        """M x N x K: int8 MACs the array does per cycle."""
        return self.tokens * self.outputs * self.k


def array_dsps(shape: ArrayShape, rule: DspRule) -> int:
    """Slices for one array under `rule`: the packed axis rounded up, the others multiplied."""
    if rule.packs_along == "tokens":
        return math.ceil(shape.tokens / rule.macs_per_slice) * shape.outputs * shape.k
    return shape.tokens * shape.outputs * math.ceil(shape.k / rule.macs_per_slice)


@dataclass(frozen=True)
class Resources:
    """The DSP budget of a FlightLLM-lowered board (dsps_available None: not published)."""

    dsp_kind: str
    mm: ArrayShape
    mv: ArrayShape
    mm_dsps: int
    mv_dsps: int
    pipelines: int
    separate_mv: bool
    dsps_available: int | None

    @property
    def pipeline_dsps(self) -> int:
        """Slices of one pipeline: the shared chain (max) or separate arrays (sum)."""
        if self.separate_mv:
            return self.mm_dsps + self.mv_dsps
        return max(self.mm_dsps, self.mv_dsps)

    @property
    def dsps_used(self) -> int:
        """Slices of the whole board: `pipelines` side by side, each `pipeline_dsps`."""
        return self.pipelines * self.pipeline_dsps

    @property
    def fits_dsps(self) -> bool | None:
        """Whether every pipeline fits the device's slices; None when the count is unpublished."""
        if self.dsps_available is None:
            return None
        return self.dsps_used <= self.dsps_available

    @property
    def dsp_share(self) -> float | None:
        """dsps_used / dsps_available (None when the count is unpublished)."""
        if not self.dsps_available:
            return None
        return self.dsps_used / self.dsps_available


def pipelines(board: Board) -> int:
    """FlightLLM pipelines the board runs side by side: ceil(duration_divisor)."""
    return math.ceil(board.duration_divisor - 1e-9)


def _split(board: Board, field: str, macs: int, tokens: int, k: int) -> int:
    """N of an array with `macs` MAC/cycle over `tokens` rows of `k`-term dot products."""
    if macs % (tokens * k):
        raise ConfigError(
            config_source(board),
            field,
            macs,
            f"a multiple of {tokens} token row(s) x {k} (the block) to form a FlightLLM array",
        )
    return macs // (tokens * k)


def flightllm_arrays(board: Board) -> tuple[ArrayShape, ArrayShape]:
    """(MM, MV) shapes of a FlightLLM board.

    MM: M = pe_array.rows (MM_PARALLEL_M), K = the block, N = cols / block. MV: M = the MV
    token lanes (flightllm.mv_parallel_m), K = the block, N = mv_macs_per_cycle / (M x block).
    """
    fl = board.flightllm
    if fl is None:
        raise ConfigError(config_source(board), "lowering", board.lowering, "flightllm")
    k = fl.block
    mm_rows = board.pe_array.rows
    mm = ArrayShape("MM", mm_rows, _split(board, "pe_array", board.macs_per_cycle, mm_rows, k), k)
    lanes = fl.mv_parallel_m
    mv_n = _split(board, "mv_macs_per_cycle", board.mv_macs_per_cycle, lanes, k)
    return mm, ArrayShape("MV", lanes, mv_n, k)


def board_resources(board: Board, separate_mv: bool = False) -> Resources | None:
    """DSPs of a FlightLLM-lowered board with a known DSP kind; None otherwise.

    Study-lowering boards are fp16 (the int8 rules do not apply) and are not costed.
    """
    if board.flightllm is None or board.dsp_kind is None:
        return None
    rule = DSP_RULES.get(board.dsp_kind)
    if rule is None:
        raise ConfigError(
            config_source(board), "dsp_kind", board.dsp_kind, f"one of {', '.join(DSP_RULES)}"
        )
    mm, mv = flightllm_arrays(board)
    return Resources(
        rule.kind,
        mm,
        mv,
        array_dsps(mm, rule),
        array_dsps(mv, rule),
        pipelines(board),
        separate_mv,
        board.dsps,
    )


def resource_columns(board: Board) -> dict:
    """Flat result columns: dsp_kind, pipelines, mm_dsps and mv_dsps (one pipeline),
    dsps_used (all pipelines), dsps_available, fits_dsps (None when not costed)."""
    res = board_resources(board)
    if res is None:
        return {
            "dsp_kind": board.dsp_kind or "",
            "pipelines": None,
            "mm_dsps": None,
            "mv_dsps": None,
            "dsps_used": None,
            "dsps_available": board.dsps,
            "fits_dsps": None,
        }
    return {
        "dsp_kind": res.dsp_kind,
        "pipelines": res.pipelines,
        "mm_dsps": res.mm_dsps,
        "mv_dsps": res.mv_dsps,
        "dsps_used": res.dsps_used,
        "dsps_available": res.dsps_available,
        "fits_dsps": res.fits_dsps,
    }
