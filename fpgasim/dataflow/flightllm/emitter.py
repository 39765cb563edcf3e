"""FlightLLM's units, rates and the emitter of instruction rows (docs/flightllm-model.md §2).

`Rates` gathers what the compiler and the duration formulas of §2.3 need from the board
and the model; `FlightLLMEmitter`, on the shared `fpgasim.dataflow.emitter.Emitter`,
appends rows (unit, duration in cycles, bytes, work, traffic, wait and release sets) and
reuses identical blocks of a layer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fpgasim.config.schema import Board, FlightLLMModel
from fpgasim.dataflow.buffers import BufferTooSmall
from fpgasim.dataflow.emitter import Emitter
from fpgasim.dataflow.instructions import (
    LD,
    MISC,
    MM,
    MV,
    OPCODE_NAMES,
    ROLE_COMPUTE,
    ROLE_LOAD,
    ROLE_SFU,
    ROLE_STORE,
    ROLE_SYNC,
    ST,
    SYS,
    TRAFFIC_ACT,
    TRAFFIC_NONE,
    TRAFFIC_STORE,
)

#: ticks per clock cycle: durations are rounded to 2**-24 cycle (about 0.26 fs at 225 MHz)
TICKS_PER_CYCLE = 1 << 24
#: FlightLLM's six in-order units, in its order (docs/flightllm-model.md §2.1): one per
#: opcode, so a row's `unit` is its opcode (LD, ST, MM, MV, MISC, SYS)
UNIT_NAMES = OPCODE_NAMES
#: what each unit does (the engines aggregate by role)
UNIT_ROLES = (ROLE_LOAD, ROLE_STORE, ROLE_COMPUTE, ROLE_COMPUTE, ROLE_SFU, ROLE_SYNC)
#: A rows one K block of a linear_mv weight set takes, and meta rows per K block
#: (docs/flightllm-model.md §4.2-4.3 give the credits as A_DEPTH // (4 chunk) and
#: META_DEPTH // (8 chunk); FlightLLM's model gives these multipliers without deriving them
#: from widths)
A_ROWS_PER_K_BLOCK_MV = 4
META_ROWS_PER_K_BLOCK = 8
#: B rows per K block of an MM weight/K/V load (B_DEPTH // (8 chunk), sections 4.3 and 4.5)
B_ROWS_PER_K_BLOCK_MM = 8
#: elements of a MISC row per global-buffer address (section 4.6: a row uses K/128 addresses)
MISC_ELEMENTS_PER_ADDRESS = 128


@dataclass(frozen=True)
class Rates:
    """What the compiler and the duration formulas need, from the board and the model."""

    clock_hz: float
    channel_bytes_per_s: float  # one HBM channel (HBM_BW * 2^30 / channels)
    e_same: float
    e_cross: float
    zero_fill_bytes_per_cycle: int  # per channel
    channels_a: int
    block: int
    mask_block: int
    mm_macs_per_cycle: int
    mv_macs_per_cycle: int
    mm_rows: int  # the compiler's M tile (MM_PARALLEL_M)
    mm_start_rows: int  # rows an MM is charged for (MM_START_M_NUM)
    mm_cols: int  # columns an MM is charged for (MM_START_N_NUM)
    mv_start_rows: int  # rows an MV is charged for (MV_START_M_NUM)
    mv_group: int
    mv_k_chunk: int
    mm_k_chunk: int
    depth_a: int
    depth_b: int
    depth_global: int
    depth_meta: int
    depth_fsb: int
    misc_rate: tuple[tuple[str, int], ...]
    misc_passes: tuple[tuple[str, int], ...]
    act_bytes: float
    weight_bytes: float
    weight_ratio: float  # stored bits / timed bits (FlightLLM: 8 / 4 = 2)
    bias_bytes: float

    @classmethod
    def of(cls, board: Board, extras: FlightLLMModel) -> Rates:
        fl = board.flightllm
        assert fl is not None
        sfu = board.sfu.elements_per_cycle
        rates = {
            "eltwise": fl.misc.eltwise or sfu,
            "silu": fl.misc.silu or sfu,
            "softmax": fl.misc.softmax or sfu,
            "norm": fl.misc.norm or sfu,
        }
        passes = {"eltwise": 1, "silu": 1, "softmax": board.sfu.softmax_passes,
                  "norm": board.sfu.norm_passes}
        return cls(
            clock_hz=board.clock_hz,
            channel_bytes_per_s=board.channel_bytes_per_s,
            e_same=fl.same_channel_efficiency,
            e_cross=fl.cross_channel_efficiency,
            zero_fill_bytes_per_cycle=fl.zero_fill_bytes_per_cycle,
            channels_a=fl.channels_a,
            block=fl.block,
            mask_block=fl.mask_block,
            mm_macs_per_cycle=board.pe_array.macs_per_cycle,
            mv_macs_per_cycle=board.mv_macs_per_cycle,
            mm_rows=fl.mm_tile_rows,
            mm_start_rows=fl.mm_start_rows,
            mm_cols=fl.mm_tile_cols,
            mv_start_rows=fl.mv_start_rows,
            mv_group=fl.mv_group_outputs,
            mv_k_chunk=fl.mv_k_chunk_blocks,
            mm_k_chunk=fl.mm_k_chunk_blocks,
            depth_a=fl.buffers.a.depth,
            depth_b=fl.buffers.b.depth,
            depth_global=fl.buffers.global_.depth,
            depth_meta=fl.buffers.meta.depth,
            depth_fsb=fl.buffers.fsb.depth,
            misc_rate=tuple(rates.items()),
            misc_passes=tuple(passes.items()),
            act_bytes=extras.activation_bits / 8,
            weight_bytes=extras.weight_bits / 8,
            weight_ratio=extras.weight_bits / extras.weight_timed_bits,
            bias_bytes=extras.bias_bits / 8,
        )


def mask_of(*units: int) -> int:
    out = 0
    for u in units:
        out |= 1 << u
    return out


#: FlightLLM's rows before `compiler.resolve`: duration in (fractional) cycles, bytes, work,
#: traffic, and the units the row waits on / releases to, as bit masks (`mask_of`)
FLIGHTLLM_ROW = np.dtype([
    ("unit", np.int64), ("cycles", np.float64), ("nbytes", np.float64), ("work", np.int64),
    ("traffic", np.int64), ("wait_units", np.int64), ("rel_units", np.int64),
])


class FlightLLMEmitter(Emitter):
    """Rows of one part in FlightLLM's layout (`FLIGHTLLM_ROW`) with its per-unit duration formulas.

    `block(key, build)` appends the rows `build` emits into a fresh emitter and reuses them
    for every later block with the same key in the layer (identical tiles, groups or heads);
    a run of the same block is kept once with its repeat count until `rows` tiles it.
    """

    ROW = FLIGHTLLM_ROW

    def __init__(self, rates: Rates) -> None:
        super().__init__()
        self.r = rates
        self._blocks: dict = {}
        self._misc = {k: dict(rates.misc_passes)[k] / v for k, v in rates.misc_rate}
        self._passes = dict(rates.misc_passes)
        self._same = rates.clock_hz / (rates.channel_bytes_per_s * rates.e_same)
        self._cross = rates.clock_hz / (rates.channel_bytes_per_s * rates.e_cross)

    def block(self, key, build) -> None:
        """Append build(sub)'s rows; a block with a key seen before in this layer is reused."""
        rows = self._blocks.get(key)
        if rows is None:
            sub = FlightLLMEmitter(self.r)
            build(sub)
            rows = self._blocks[key] = sub.rows()
        self.extend(rows)

    def busiest_unit_cycles(self) -> float:
        """The largest per-unit sum of durations: a lower bound of the rows' makespan."""
        rows = self.rows()
        return float(np.bincount(rows["unit"], weights=rows["cycles"],
                                 minlength=len(UNIT_NAMES)).max())

    def new_layer(self) -> None:
        """Start a hardware layer: blocks of the previous one are not reused."""
        self._blocks = {}

    def ld(self, nbytes: float, *, cross: bool = False, par: int = 1, ratio: float = 1.0,
           traffic: int = TRAFFIC_ACT, wait: int = 0, rel: int = 0) -> int:
        """LD: bytes / (channel rate x efficiency x bandwidth_ratio x parallel channels)."""
        if cross:
            cyc = nbytes * self._cross / ratio
        else:
            cyc = nbytes * self._same / (ratio * par)
        return self.row((LD, cyc, nbytes, 0, traffic, wait, rel))

    def zero_fill(self, nbytes: float, par: int, wait: int = 0, rel: int = 0) -> int:
        """Zero-fill LD: bytes / (zero-fill bytes per cycle x parallel channels)."""
        cyc = nbytes / (self.r.zero_fill_bytes_per_cycle * par)
        return self.row((LD, cyc, nbytes, 0, TRAFFIC_NONE, wait, rel))

    def st(self, nbytes: float, *, par: int = 1, wait: int = 0, rel: int = 0) -> int:
        return self.row((ST, nbytes * self._same / par, nbytes, 0, TRAFFIC_STORE, wait, rel))

    def mm(self, k: int, sparse: float = 1.0, wait: int = 0, rel: int = 0) -> int:
        """MM: a 128-row x 16-column tile over k K blocks, charged in full."""
        r = self.r
        macs = r.mm_start_rows * r.block * k * r.mm_cols
        return self.row((MM, macs / r.mm_macs_per_cycle * sparse, 0, macs, TRAFFIC_NONE, wait, rel))

    def mv(self, k: int, sparse: float = 1.0, wait: int = 0, rel: int = 0) -> int:
        """MV: one row x 512 outputs over k K blocks, charged in full."""
        r = self.r
        macs = r.mv_start_rows * r.block * k * r.mv_group
        return self.row((MV, macs / r.mv_macs_per_cycle * sparse, 0, macs, TRAFFIC_NONE, wait, rel))

    def misc(self, kind: str, k: int, wait: int = 0, rel: int = 0, count: int = 1) -> int:
        """MISC: block x k elements at the kind's rate, times its passes (softmax, norms).

        `count` identical rows (wait on the first, release on the last)."""
        elems = self.r.block * k
        cyc = elems * self._misc[kind]
        work = elems * self._passes[kind]
        if count == 1:
            return self.row((MISC, cyc, 0, work, TRAFFIC_NONE, wait, rel))
        first = self.count
        self.count += count
        self.pending.append((MISC, cyc, 0, work, TRAFFIC_NONE, wait, 0))
        self.pending.extend([(MISC, cyc, 0, work, TRAFFIC_NONE, 0, 0)] * (count - 2))
        self.pending.append((MISC, cyc, 0, work, TRAFFIC_NONE, 0, rel))
        return first

    def sys(self, wait: int = 0, rel: int = 0) -> int:
        return self.row((SYS, 1.0, 0, 0, TRAFFIC_NONE, wait, rel))


def need_credit(value: int, field: str, depth: int, what: str) -> int:
    """`value` credits of a buffer, or BufferTooSmall naming `field` when there is none."""
    if value < 1:
        raise BufferTooSmall(field, depth, f"too small for {what}; needs at least one credit")
    return value
