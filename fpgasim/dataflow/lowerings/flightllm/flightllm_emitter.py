"""FlightLLM's units, rates and the emitter of instruction rows (docs/flightllm-model.md §2).

`Rates` gathers what the compiler and the duration formulas of §2.3 need from the board
and the model; `FlightLLMEmitter`, on the shared `fpgasim.dataflow.emitter.Emitter`,
appends rows (unit, duration, bytes, work, traffic, wait and release sets) and reuses
identical blocks of a layer. Rows are emitted free of the link rate (clock over channel
bandwidth): a transfer row keeps its bytes, which channel efficiency it runs at and its
divisor, and `cycles_at` prices it for a board, so one instruction stream serves every
clock and bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from fpgasim.bounded import BoundedCache, bounded_cache
from fpgasim.config.board import Board
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
#: how a row's duration is priced (row field `link`): known in cycles, or bytes over the
#: same-channel or the cross-channel rate (§2.3)
FIXED, SAME_CHANNEL, CROSS_CHANNEL = range(3)


@dataclass(frozen=True)
class Rates:
    """What the compiler and the duration formulas need, from the board and the model."""

    clock_hz: float
    channel_bytes_per_s: float  # one HBM channel (HBM_BW * 2^30 / channels)
    e_same: float
    e_cross: float
    zero_fill_bytes_per_cycle: int  # per channel
    channels_a: int
    mm_weights_wide: bool  # MM-mode weights over the A channels, not one cross channel
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
    kv_bytes: float  # KV-cache element bytes (the recipe's kv_bits)
    weight_bytes: float  # bytes of one weight as the arrays take it (Recipe.operand_bits)
    weight_ratio: float  # operand bits / stored bits (Recipe.operand_ratio; FlightLLM: 8 / 4)
    bias_bytes: float
    kv_append: str  # "reread": FlightLLM's concat; "store": the new rows' K and V stored

    @classmethod
    def of(cls, board: Board) -> Rates:
        """The rates of a fitted board (one pipeline) at its design's recipe."""
        d, fit, recipe = board.design, board.fit, board.recipe
        sfu, mem, comp = d.sfu, d.memory, d.compiler
        base = sfu.elements_per_cycle
        rates = {
            "eltwise": sfu.eltwise or base,
            "silu": sfu.silu or base,
            "softmax": sfu.softmax or base,
            "norm": sfu.norm or base,
        }
        passes = {"eltwise": 1, "silu": 1, "softmax": sfu.softmax_passes,
                  "norm": sfu.norm_passes}
        return cls(
            clock_hz=board.clock_hz,
            channel_bytes_per_s=board.channel_bytes_per_s,
            e_same=fit.same_channel_efficiency,
            e_cross=fit.cross_channel_efficiency,
            zero_fill_bytes_per_cycle=mem.zero_fill_bytes_per_cycle,
            channels_a=fit.channels_a,
            mm_weights_wide=mem.mm_weight_path == "a_channels",
            block=comp.block,
            mask_block=comp.mask_block,
            mm_macs_per_cycle=fit.mm_macs_per_cycle,
            mv_macs_per_cycle=fit.mv_macs_per_cycle,
            mm_rows=fit.mm_rows,
            mm_start_rows=fit.mm_rows,
            mm_cols=comp.mm_tile_cols,
            mv_start_rows=fit.mv_lanes,
            mv_group=comp.mv_group_outputs,
            mv_k_chunk=comp.mv_k_chunk_blocks,
            mm_k_chunk=comp.mm_k_chunk_blocks,
            depth_a=d.buffers.a,
            depth_b=d.buffers.b,
            depth_global=d.buffers.global_,
            depth_meta=d.buffers.meta,
            depth_fsb=d.buffers.fsb,
            misc_rate=tuple(rates.items()),
            misc_passes=tuple(passes.items()),
            act_bytes=recipe.activation_bits / 8,
            kv_bytes=recipe.kv_bits / 8,
            weight_bytes=recipe.operand_bits / 8,
            weight_ratio=recipe.operand_ratio,
            bias_bytes=recipe.bias_bits / 8,
            kv_append=comp.kv_append,
        )

    @cached_property
    def link_free(self) -> Rates:
        """These rates without the link rate (clock, channel bandwidth, efficiencies): what
        the instructions depend on, so a compiled stream is shared by every link rate."""
        return replace(self, clock_hz=0.0, channel_bytes_per_s=0.0, e_same=0.0, e_cross=0.0)

    def cycles_per_byte(self) -> tuple[float, float]:
        """Cycles per byte of one channel (same-channel, cross-channel efficiency), §2.3."""
        return (self.clock_hz / (self.channel_bytes_per_s * self.e_same),
                self.clock_hz / (self.channel_bytes_per_s * self.e_cross))


def cycles_at(num: np.ndarray, link: np.ndarray, den: np.ndarray, rates: Rates) -> np.ndarray:
    """Row durations in cycles: `num` for FIXED rows, num x cycles per byte / den for
    transfers (the emitter's scalar formulas, element by element: bit-identical)."""
    same, cross = rates.cycles_per_byte()
    per_byte = np.array([1.0, same, cross])  # x 1.0 / 1.0 leaves a FIXED row exact
    return num * per_byte[link] / den


def mask_of(*units: int) -> int:
    """The bit mask of a set of units (a row's wait or release set)."""
    out = 0
    for u in units:
        out |= 1 << u
    return out


#: FlightLLM's rows before `compiler.resolve`: duration (`cycles`: in cycles for a FIXED row,
#: the bytes of a transfer, priced by `cycles_at` from `link` and `den`), bytes, work,
#: traffic, the units the row waits on / releases to, as bit masks (`mask_of`), and how its
#: duration is priced
FLIGHTLLM_ROW = np.dtype([
    ("unit", np.int64), ("cycles", np.float64), ("nbytes", np.float64), ("work", np.int64),
    ("traffic", np.int64), ("wait_units", np.int64), ("rel_units", np.int64),
    ("link", np.int64), ("den", np.float64),
])


#: blocks shared across layers (about 70 bytes a row), see `FlightLLMEmitter.share_blocks`
_SHARED_BLOCKS: BoundedCache[np.ndarray] = bounded_cache(
    "flightllm.shared_blocks", owner="fpgasim.dataflow.lowerings.flightllm.flightllm_emitter",
    unit="rows",
    keys="the emitter's scope and the block's layer shape", budget=1_000_000, size_of=len,
    why="a verify pass of x rows is x copies of the same row group: x = 2..85 at one context "
    "build 3 distinct row-group blocks per layer instead of 3 per x")


class FlightLLMEmitter(Emitter):
    """Rows of one part in FlightLLM's layout (`FLIGHTLLM_ROW`) with its per-unit duration formulas.

    `block(key, build)` appends the rows `build` emits into a fresh emitter and reuses them
    for every later block with the same key in the layer (identical tiles, groups or heads);
    a run of the same block is kept once with its repeat count until `rows` tiles it.
    Rows are link free (see the module docstring).
    """

    ROW = FLIGHTLLM_ROW

    def __init__(self, rates: Rates) -> None:
        super().__init__()
        self.r = rates
        self._blocks: dict = {}
        self._scope: tuple | None = None
        self._misc = {k: dict(rates.misc_passes)[k] / v for k, v in rates.misc_rate}
        self._passes = dict(rates.misc_passes)

    def share_blocks(self, scope: tuple) -> None:
        """Until the next `new_layer`, blocks are also kept under `scope`: every input of
        this layer's blocks besides their keys. Layers that differ only in what no block
        reads (e.g. their row count, for MV row groups) then build each block once."""
        self._scope = scope

    def block(self, key, build, times: int = 1, templatable: bool = False) -> None:
        """Append build(sub)'s rows (`times` over); a block with a key seen before in this
        layer (or in a layer of the same `share_blocks` scope) is reused. `templatable`:
        copies of the block in a row wait at most on the copy before them."""
        rows = self._blocks.get(key)
        if rows is None and self._scope is not None:
            rows = _SHARED_BLOCKS.get((self._scope, key))
        if rows is None:
            sub = FlightLLMEmitter(self.r)
            build(sub)
            rows = sub.rows()
            if self._scope is not None:
                _SHARED_BLOCKS.put((self._scope, key), rows)
        self._blocks[key] = rows
        self.extend(rows, times, templatable)

    def per_head(self, heads: int, build) -> None:
        """Append build(sub)'s rows `heads` times over, where build emits one head's blocks
        through `sub.block` and every head's would be the same: the rows and runs of
        calling build once per head, each block extended again rather than looked up."""
        sub = FlightLLMEmitter(self.r)
        sub._blocks = self._blocks
        build(sub)
        sub._flush()
        for _ in range(heads):  # heads are independent: each restarts its credits
            for rows, n in sub.chunks:
                self.extend(rows, n, templatable=len(sub.chunks) == 1)

    def link_sums(self) -> tuple[np.ndarray, int]:
        """(sums, rows): per unit and link class, the rows' cycles / den summed (repeats
        counted, nothing tiled), and the row count. A unit's durations at cycles per byte
        f = (1, same, cross) sum to sums[u] . f up to rounding (see compiler.FormCost)."""
        self._flush()
        classes = len(UNIT_NAMES) * 3
        sums = np.zeros(classes)
        count = 0
        for rows, n in self.chunks:
            sums += n * np.bincount(rows["unit"] * 3 + rows["link"],
                                    weights=rows["cycles"] / rows["den"], minlength=classes)
            count += n * len(rows)
        return sums.reshape(len(UNIT_NAMES), 3), count

    def new_layer(self) -> None:
        """Start a hardware layer: blocks of the previous one are not reused."""
        self._blocks = {}
        self._scope = None

    def ld(self, nbytes: float, *, cross: bool = False, par: int = 1, ratio: float = 1.0,
           traffic: int = TRAFFIC_ACT, wait: int = 0, rel: int = 0) -> int:
        """LD: bytes / (channel rate x efficiency x bandwidth_ratio x parallel channels).

        `nbytes` are the instruction's (operand-width) bytes, which its duration is priced
        from as FlightLLM's profiler does; the row records the bytes the load moves,
        nbytes / bandwidth_ratio (a weight load's, `Recipe.load_ratio`: the one weight size
        the memory holds, docs/hardware.md "One weight size")."""
        moved = nbytes / ratio
        if cross:
            return self.row((LD, nbytes, moved, 0, traffic, wait, rel, CROSS_CHANNEL, ratio))
        return self.row((LD, nbytes, moved, 0, traffic, wait, rel, SAME_CHANNEL, ratio * par))

    def zero_fill(self, nbytes: float, par: int, wait: int = 0, rel: int = 0) -> int:
        """Zero-fill LD: bytes / (zero-fill bytes per cycle x parallel channels)."""
        cyc = nbytes / (self.r.zero_fill_bytes_per_cycle * par)
        return self.row((LD, cyc, nbytes, 0, TRAFFIC_NONE, wait, rel, FIXED, 1.0))

    def st(self, nbytes: float, *, par: int = 1, wait: int = 0, rel: int = 0) -> int:
        """ST: store `nbytes` at the same-channel rate; the row's index."""
        return self.row((ST, nbytes, nbytes, 0, TRAFFIC_STORE, wait, rel, SAME_CHANNEL, par))

    def mm(self, k: int, sparse: float = 1.0, wait: int = 0, rel: int = 0) -> int:
        """MM: a 128-row x 16-column tile over k K blocks, charged in full."""
        r = self.r
        macs = r.mm_start_rows * r.block * k * r.mm_cols
        return self.row((MM, macs / r.mm_macs_per_cycle * sparse, 0, macs, TRAFFIC_NONE, wait, rel,
                         FIXED, 1.0))

    def mv(self, k: int, sparse: float = 1.0, wait: int = 0, rel: int = 0) -> int:
        """MV: one row x 512 outputs over k K blocks, charged in full."""
        r = self.r
        macs = r.mv_start_rows * r.block * k * r.mv_group
        return self.row((MV, macs / r.mv_macs_per_cycle * sparse, 0, macs, TRAFFIC_NONE, wait, rel,
                         FIXED, 1.0))

    def misc(self, kind: str, k: int, wait: int = 0, rel: int = 0, count: int = 1) -> int:
        """MISC: block x k elements at the kind's rate, times its passes (softmax, norms).

        `count` identical rows (wait on the first, release on the last)."""
        elems = self.r.block * k
        cyc = elems * self._misc[kind]
        work = elems * self._passes[kind]
        if count == 1:
            return self.row((MISC, cyc, 0, work, TRAFFIC_NONE, wait, rel, FIXED, 1.0))
        first = self.count
        self.count += count
        self.pending.append((MISC, cyc, 0, work, TRAFFIC_NONE, wait, 0, FIXED, 1.0))
        self.pending.extend([(MISC, cyc, 0, work, TRAFFIC_NONE, 0, 0, FIXED, 1.0)] * (count - 2))
        self.pending.append((MISC, cyc, 0, work, TRAFFIC_NONE, 0, rel, FIXED, 1.0))
        return first

    def sys(self, wait: int = 0, rel: int = 0) -> int:
        """SYS: a one-cycle synchronisation row (a barrier's waits and releases); its index."""
        return self.row((SYS, 1.0, 0, 0, TRAFFIC_NONE, wait, rel, FIXED, 1.0))


def need_credit(value: int, field: str, depth: int, what: str) -> int:
    """`value` credits of a buffer, or BufferTooSmall naming `field` when there is none."""
    if value < 1:
        raise BufferTooSmall(field, depth, f"too small for {what}; needs at least one credit")
    return value
