"""FlightLLM's compiler (docs/flightllm-model.md §2-4): hardware layers -> instruction rows.

Each layer type emits its instructions in FlightLLM's program order with FlightLLM's
wait/release flags (sets of units). Tokens pair deterministically (the n-th waiter of c on
p takes the n-th token that p releases to c), so `resolve` turns the flags of a part into
explicit rows to wait for, in the engines' `Program` format. Durations follow section 2.3
in cycles of the configured clock (fractional: bytes over a rate), before the board's
duration divisor, and are stored as integer ticks of 2**-24 cycle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fpgasim.config.schema import Board, FlightLLMModel
from fpgasim.dataflow.buffers import BufferTooSmall
from fpgasim.dataflow.flightllm.layers import HwLayer
from fpgasim.dataflow.flightllm.masks import LayerMask, spread
from fpgasim.dataflow.instructions import (
    INSTR_DTYPE,
    MAX_WAIT,
    ROLE_COMPUTE,
    ROLE_LOAD,
    ROLE_SFU,
    ROLE_STORE,
    ROLE_SYNC,
    TRAFFIC_ACT,
    TRAFFIC_KV,
    TRAFFIC_NONE,
    TRAFFIC_STORE,
    TRAFFIC_WEIGHT,
    Program,
)

#: ticks per clock cycle: durations are rounded to 2**-24 cycle (about 0.26 fs at 225 MHz)
TICKS_PER_CYCLE = 1 << 24
#: FlightLLM's six in-order units, in its order (docs/flightllm-model.md §2.1); row `unit` and
#: `opcode`
UNIT_NAMES = ("LD", "ST", "MM", "MV", "MISC", "SYS")
#: what each unit does (the engines aggregate by role)
UNIT_ROLES = (ROLE_LOAD, ROLE_STORE, ROLE_COMPUTE, ROLE_COMPUTE, ROLE_SFU, ROLE_SYNC)
LD, ST, MM, MV, MISC, SYS = range(6)
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


def _mask(*units: int) -> int:
    out = 0
    for u in units:
        out |= 1 << u
    return out


class Emitter:
    """Rows of one part, column by column: unit, duration (cycles), bytes, flags.

    `block(key, build)` appends the rows `build` emits into a fresh emitter and reuses them
    for every later block with the same key (identical tiles, groups or heads of a layer).
    """

    COLUMNS = ("unit", "cyc", "nbytes", "work", "traffic", "wait", "rel")
    DTYPES = (np.int64, np.float64, np.float64, np.int64, np.int64, np.int64, np.int64)

    def __init__(self, rates: Rates) -> None:
        self.r = rates
        self.chunks: list[tuple[np.ndarray, ...]] = []  # finished rows, as column arrays
        self.count = 0
        self._open()
        self.op_index = 0
        self._blocks: dict = {}
        self._misc = {k: dict(rates.misc_passes)[k] / v for k, v in rates.misc_rate}
        self._passes = dict(rates.misc_passes)
        self._same = rates.clock_hz / (rates.channel_bytes_per_s * rates.e_same)
        self._cross = rates.clock_hz / (rates.channel_bytes_per_s * rates.e_cross)

    def _open(self) -> None:
        self.unit: list[int] = []
        self.cyc: list[float] = []
        self.nbytes: list[float] = []
        self.work: list[int] = []
        self.traffic: list[int] = []
        self.wait: list[int] = []
        self.rel: list[int] = []

    def _flush(self) -> None:
        if self.unit:
            self.chunks.append(tuple(
                np.asarray(getattr(self, c), d)
                for c, d in zip(self.COLUMNS, self.DTYPES, strict=True)))
            self._open()

    def __len__(self) -> int:
        return self.count

    def arrays(self) -> tuple[np.ndarray, ...]:
        """Every row so far, column by column."""
        self._flush()
        if not self.chunks:
            return tuple(np.zeros(0, d) for d in self.DTYPES)
        if len(self.chunks) == 1:
            return tuple(c.copy() for c in self.chunks[0])
        return tuple(np.concatenate([ch[k] for ch in self.chunks])
                     for k in range(len(self.COLUMNS)))

    def _row(self, unit, cyc, nbytes, work, traffic, wait, rel) -> int:
        self.unit.append(unit)
        self.cyc.append(cyc)
        self.nbytes.append(nbytes)
        self.work.append(work)
        self.traffic.append(traffic)
        self.wait.append(wait)
        self.rel.append(rel)
        self.count += 1
        return self.count - 1

    def block(self, key, build) -> None:
        """Append build(sub)'s rows; a block with a key seen before in this layer is reused."""
        cols = self._blocks.get(key)
        if cols is None:
            sub = Emitter(self.r)
            build(sub)
            cols = sub.arrays()
            self._blocks[key] = cols
        self._flush()
        self.chunks.append(cols)
        self.count += len(cols[0])

    def new_layer(self, index: int) -> None:
        self.op_index = index
        self._blocks = {}

    def ld(self, nbytes: float, *, cross: bool = False, par: int = 1, ratio: float = 1.0,
           traffic: int = TRAFFIC_ACT, wait: int = 0, rel: int = 0) -> int:
        """LD: bytes / (channel rate x efficiency x bandwidth_ratio x parallel channels)."""
        if cross:
            cyc = nbytes * self._cross / ratio
        else:
            cyc = nbytes * self._same / (ratio * par)
        return self._row(LD, cyc, nbytes, 0, traffic, wait, rel)

    def zero_fill(self, nbytes: float, par: int, wait: int = 0, rel: int = 0) -> int:
        """Zero-fill LD: bytes / (zero-fill bytes per cycle x parallel channels)."""
        cyc = nbytes / (self.r.zero_fill_bytes_per_cycle * par)
        return self._row(LD, cyc, nbytes, 0, TRAFFIC_NONE, wait, rel)

    def st(self, nbytes: float, *, par: int = 1, wait: int = 0, rel: int = 0) -> int:
        return self._row(ST, nbytes * self._same / par, nbytes, 0, TRAFFIC_STORE, wait, rel)

    def mm(self, k: int, sparse: float = 1.0, wait: int = 0, rel: int = 0) -> int:
        """MM: a 128-row x 16-column tile over k K blocks, charged in full."""
        r = self.r
        macs = r.mm_start_rows * r.block * k * r.mm_cols
        return self._row(MM, macs / r.mm_macs_per_cycle * sparse, 0, macs, TRAFFIC_NONE, wait, rel)

    def mv(self, k: int, sparse: float = 1.0, wait: int = 0, rel: int = 0) -> int:
        """MV: one row x 512 outputs over k K blocks, charged in full."""
        r = self.r
        macs = r.mv_start_rows * r.block * k * r.mv_group
        return self._row(MV, macs / r.mv_macs_per_cycle * sparse, 0, macs, TRAFFIC_NONE, wait, rel)

    def misc(self, kind: str, k: int, wait: int = 0, rel: int = 0, count: int = 1) -> int:
        """MISC: block x k elements at the kind's rate, times its passes (softmax, norms).

        `count` identical rows (wait on the first, release on the last)."""
        elems = self.r.block * k
        cyc = elems * self._misc[kind]
        work = elems * self._passes[kind]
        if count == 1:
            return self._row(MISC, cyc, 0, work, TRAFFIC_NONE, wait, rel)
        first = self.count
        self.count += count
        self.unit.extend([MISC] * count)
        self.cyc.extend([cyc] * count)
        self.nbytes.extend([0] * count)
        self.work.extend([work] * count)
        self.traffic.extend([TRAFFIC_NONE] * count)
        self.wait.extend([wait] + [0] * (count - 1))
        self.rel.extend([0] * (count - 1) + [rel])
        return first

    def sys(self, wait: int = 0, rel: int = 0) -> int:
        return self._row(SYS, 1.0, 0, 0, TRAFFIC_NONE, wait, rel)


# --------------------------------------------------------------------------- K split, credits


def k_split(kb: int, first_chunk: int, fits) -> tuple[list[int], int, int]:
    """FlightLLM's K split: (pieces, full chunk, first-guess piece count s).

    s = ceil(Kb / first_chunk) pieces of floor(Kb / s) blocks plus the remainder, s raised
    until `fits(chunk)` (the buffers hold two chunks).
    """
    s = max(1, math.ceil(kb / first_chunk))
    while True:
        chunk = kb // s
        if chunk >= 1 and fits(chunk):
            break
        if chunk <= 1:
            return [], 0, s
        s += 1
    pieces = [chunk] * (kb // chunk)
    if kb % chunk:
        pieces.append(kb % chunk)
    return pieces, chunk, s


def _need(value: int, field: str, depth: int, what: str) -> int:
    if value < 1:
        raise BufferTooSmall(field, depth, f"too small for {what}; needs at least one credit")
    return value


def _weight_ring(
    r, kb: int, first_chunk: int, buffer: str, depth: int, rows_per_k_block: int, name: str
) -> tuple[list[int], int, int, int]:
    """K split and weight-ring credits of a linear layer (sections 4.2 and 4.3).

    The weights go to `buffer` (A in MV, B in MM) of `depth` rows, `rows_per_k_block` rows per
    K block; the meta and FSB buffers bound the ring as well. Returns (pieces, chunk, s, dep).
    """

    def fits(c: int) -> bool:
        return (depth // (rows_per_k_block * c) >= 2
                and r.depth_meta // (META_ROWS_PER_K_BLOCK * c) >= 2)

    pieces, chunk, s = k_split(kb, first_chunk, fits)
    if not pieces:
        if depth // rows_per_k_block < 2:
            raise BufferTooSmall(f"flightllm.buffers.{buffer}.depth", depth,
                                 f"at least {2 * rows_per_k_block} (two K chunks)")
        raise BufferTooSmall("flightllm.buffers.meta.depth", r.depth_meta,
                             f"at least {2 * META_ROWS_PER_K_BLOCK} (two K chunks)")
    dep = min(depth // (rows_per_k_block * chunk),
              r.depth_meta // (META_ROWS_PER_K_BLOCK * chunk),
              r.depth_fsb // math.ceil(kb / s))
    _need(dep, "flightllm.buffers.fsb.depth", r.depth_fsb, f"the weight ring of {name}")
    return pieces, chunk, s, dep


# --------------------------------------------------------------------------- layer types


def linear_mv(e: Emitter, L: HwLayer) -> None:
    """Decode projection (section 4.2): weights in A by 512-output groups, vector in B."""
    r = e.r
    b = r.block
    kb, nb = L.k // b, L.n // b
    gb = r.mv_group // b  # blocks per group (32)
    bpc = gb // r.channels_a  # blocks per channel (4)
    groups = math.ceil(nb / gb)
    pieces, chunk, s, dep = _weight_ring(
        r, kb, r.mv_k_chunk, "a", r.depth_a, A_ROWS_PER_K_BLOCK_MV, L.name
    )
    ratio = r.weight_ratio / L.sparse_ratio
    fused = bool(L.misc)
    sizes_of = {}
    for kc in set(pieces):
        sizes = []
        for c in range(r.channels_a):
            if nb >= gb:  # the padding test compares in-group indices with Nb: never true
                d = bpc
            else:
                d = sum(1 for q in range(bpc) if r.channels_a * q + c < nb)
            if d == bpc:
                sizes.append(b * b * kc * d * r.weight_bytes)
            elif d:  # docs/flightllm-model.md §4.2, never reached by LLaMA2-7B
                sizes.append((b * b * kc * d - b * b * (bpc - d)) * r.weight_bytes)
        sizes_of[kc] = sizes
    e.ld(L.k * r.act_bytes, cross=True)  # (a) the input vector into B
    if L.bias:
        e.ld(L.n * r.bias_bytes, traffic=TRAFFIC_WEIGHT)  # (b) bias, same channel, parallel 1
    total = groups * len(pieces)

    def group(sub: Emitter, first_i: int, last_group: bool) -> None:
        for p, kc in enumerate(pieces):
            i = first_i + p
            sizes = sizes_of[kc]
            for n_ld, size in enumerate(sizes):
                wait = _mask(MV) if (n_ld == 0 and i > dep) else 0
                rel = _mask(MV) if n_ld == len(sizes) - 1 else 0
                sub.ld(size, par=r.channels_a, ratio=ratio, traffic=TRAFFIC_WEIGHT, wait=wait,
                       rel=rel)
            rel = _mask(LD) if i + dep <= total else 0
            if fused and p == len(pieces) - 1:
                rel |= _mask(MISC)
            if not fused and i == total:
                rel |= _mask(ST)
            sub.mv(kc, L.sparse_ratio, wait=_mask(LD), rel=rel)
        if fused:
            _fused_misc(sub, L, gb, per_set=[r.mv_group * r.act_bytes] * r.channels_a,
                        par=r.channels_a, compute=MV, last_group=last_group, extra_rel=0)

    for g in range(groups):
        first_i = g * len(pieces) + 1
        flags = tuple((i > dep, i + dep <= total, i == total)
                      for i in range(first_i, first_i + len(pieces)))
        last = g == groups - 1
        e.block((flags, last), lambda sub, fi=first_i, la=last: group(sub, fi, la))
    e.st(L.n * r.act_bytes, wait=_mask(MISC if fused else MV))


def _fused_misc(e: Emitter, L: HwLayer, k: int, per_set: list[float], par: int, compute: int,
                last_group: bool, extra_rel: int) -> None:
    """Eltwise operand sets and fused MISCs after a group's (or N block's) last MV/MM."""
    if L.misc == ("silu",):
        rel = (_mask(ST) if last_group else 0) | extra_rel
        e.misc("silu", k, wait=_mask(compute), rel=rel)
        return
    for _ in range(L.operand_sets):
        for n_ld, size in enumerate(per_set):
            e.ld(size, par=par, rel=_mask(MISC) if n_ld == len(per_set) - 1 else 0)
    for m, kind in enumerate(L.misc):
        wait = (_mask(LD) if m < L.operand_sets else 0) | (_mask(compute) if m == 0 else 0)
        rel = 0
        if m == len(L.misc) - 1:
            rel = (_mask(ST) if last_group else 0) | extra_rel
        e.misc(kind, k, wait=wait, rel=rel)


def linear_mm(e: Emitter, L: HwLayer) -> None:
    """Prefill projection (section 4.3): activations in A by 128-row tiles, weights in B."""
    r = e.r
    b = r.block
    kb, nb = L.k // b, L.n // b
    mb = math.ceil(L.rows / b)
    tile_blocks = r.mm_rows // b
    pieces, chunk, s, dep = _weight_ring(
        r, kb, r.mm_k_chunk, "b", r.depth_b, B_ROWS_PER_K_BLOCK_MM, L.name
    )
    dout = _need(r.depth_global // 1, "flightllm.buffers.global.depth", r.depth_global,
                 "the output credit")
    ratio = r.weight_ratio / L.sparse_ratio
    fused = bool(L.misc)
    if L.bias:
        e.ld(L.n * r.bias_bytes, traffic=TRAFFIC_WEIGHT)
    tiles = math.ceil(mb / tile_blocks)
    total = nb * len(pieces)
    blk = b * b * r.act_bytes  # one 16x16 activation block

    def nblock(sub: Emitter, j: int, first_i: int, m: int, more_tiles: bool, last_tile: bool):
        for p, kc in enumerate(pieces):
            i = first_i + p
            sub.ld(b * b * kc * r.weight_bytes, cross=True, ratio=ratio, traffic=TRAFFIC_WEIGHT,
                   wait=_mask(MM) if i > dep else 0, rel=_mask(MM))
            rel = _mask(LD) if i + dep <= total else 0
            if i == total and more_tiles:
                rel |= _mask(LD)
            wait = _mask(LD)
            if p == len(pieces) - 1:
                rel |= _mask(MISC if fused else ST)
                if j > dout:
                    wait |= _mask(MISC if fused else ST)
            sub.mm(kc, L.sparse_ratio, wait=wait, rel=rel)
        if fused:
            more = _mask(MM) if j + dout <= nb else 0
            _fused_misc(sub, L, m, per_set=[blk] * m, par=r.channels_a, compute=MM,
                        last_group=True, extra_rel=more)
        for a in range(m):
            size = blk
            if last_tile and a == m - 1:
                size = L.rows - b * (mb - 1)  # docs/flightllm-model.md §7.9: rows, not bytes
            wait = _mask(MISC if fused else MM) if a == 0 else 0
            rel = _mask(MM) if (not fused and a == m - 1 and j + dout <= nb) else 0
            sub.st(size, par=r.channels_a, wait=wait, rel=rel)

    def tile(sub: Emitter, t: int, m: int) -> None:
        for a in range(m):
            wait = _mask(MM) if (a == 0 and t > 0) else 0
            sub.ld(b * L.k * r.act_bytes, par=r.channels_a, wait=wait)
        more, last = t < tiles - 1, t == tiles - 1
        for j in range(1, nb + 1):
            first_i = (j - 1) * len(pieces) + 1
            flags = tuple((i > dep, i + dep <= total, i == total)
                          for i in range(first_i, first_i + len(pieces)))
            key = (flags, j > dout, j + dout <= nb)
            sub.block(key, lambda s2, j=j, fi=first_i: nblock(s2, j, fi, m, more, last))

    for t in range(tiles):
        m = min(tile_blocks, mb - t * tile_blocks)
        e.block((t > 0, t < tiles - 1, m), lambda sub, t=t, m=m: tile(sub, t, m))


def attention_mv(e: Emitter, L: HwLayer) -> None:
    """Decode attention (section 4.4): QK^T (softmax fused) or PV, per head, MVs of 512."""
    r = e.r
    b = r.block
    qk = L.kind == "attention_qk"
    k_el, n_el = L.k, L.n
    kb, nb = k_el // b, n_el // b
    gb = r.mv_group // b
    bpc = gb // r.channels_a
    n_mv = math.ceil(nb / gb)
    dep = _need(r.depth_a // k_el, "flightllm.buffers.a.depth", r.depth_a,
                f"one K={k_el} tile of {L.name}")
    sizes = []
    for c in range(r.channels_a):
        d = sum(1 for q in range(bpc) if r.channels_a * q + c < nb)  # uses the total Nb
        if d:
            sizes.append(b * k_el * d * r.act_bytes)
    e.ld(L.heads * k_el * r.act_bytes, cross=True)

    def head(sub: Emitter, last_head: bool) -> None:
        for j in range(1, n_mv + 1):
            for n_ld, size in enumerate(sizes):
                wait = _mask(MV) if (n_ld == 0 and j > dep) else 0
                rel = _mask(MV) if n_ld == len(sizes) - 1 else 0
                sub.ld(size, par=r.channels_a, traffic=TRAFFIC_KV, wait=wait, rel=rel)
            rel = _mask(LD) if j + dep <= n_mv else 0
            if j == n_mv:
                if qk:
                    rel |= _mask(MISC)
                elif last_head:
                    rel |= _mask(ST)
            sub.mv(kb, wait=_mask(LD), rel=rel)
        if qk:
            sub.misc("softmax", nb, wait=_mask(MV), rel=_mask(ST) if last_head else 0)

    for h in range(L.heads):
        last = h == L.heads - 1
        e.block(last, lambda sub, la=last: head(sub, la))
    e.st(L.heads * n_el * r.act_bytes, wait=_mask(MISC if qk else MV))


def concat(e: Emitter, L: HwLayer) -> None:
    """Decode KV append (section 4.7): read the whole cache once, store 0 bytes."""
    r = e.r
    per = math.ceil(L.heads * L.k * L.n * r.act_bytes / r.channels_a)
    for _ in range(r.channels_a):
        e.ld(per, par=r.channels_a, traffic=TRAFFIC_KV)
    e.st(0)


def misc_layer(e: Emitter, L: HwLayer) -> None:
    """Stand-alone norm / eltwise / SiLU (section 4.6): LD, MISC, ST per row, credit D."""
    r = e.r
    if L.k % MISC_ELEMENTS_PER_ADDRESS:
        raise BufferTooSmall("model.hidden", L.k, f"a multiple of {MISC_ELEMENTS_PER_ADDRESS} "
                             f"(a MISC row uses K/{MISC_ELEMENTS_PER_ADDRESS} global addresses)")
    per_row = L.k // MISC_ELEMENTS_PER_ADDRESS
    two = L.kind == "eltwise"
    depth = r.depth_global // 2 if two else r.depth_global
    d = _need(depth // per_row, "flightllm.buffers.global.depth", r.depth_global,
              f"one row of {L.name}")
    rows = L.rows
    kind = L.misc[0]
    n_ld = 2 if two else 1

    def row(sub: Emitter, late: bool, more: bool) -> None:
        for x in range(n_ld):
            wait = _mask(MISC) if (x == 0 and late) else 0
            rel = _mask(MISC) if x == n_ld - 1 else 0
            sub.ld(L.k * r.act_bytes, wait=wait, rel=rel)
        sub.misc(kind, L.k // r.block, wait=_mask(LD) | (_mask(ST) if late else 0),
                 rel=_mask(ST) | (_mask(LD) if more else 0))
        sub.st(L.k * r.act_bytes, wait=_mask(MISC), rel=_mask(MISC) if more else 0)

    for x in range(1, rows + 1):
        late, more = x > d, x + d <= rows
        e.block((late, more), lambda sub, la=late, mo=more: row(sub, la, mo))


def attention_mm(e: Emitter, L: HwLayer, mask: LayerMask | None, heads_in_mask: int) -> None:
    """MM-mode attention (section 4.5): prefill with count-level stand-ins of the block masks
    (4.9), or, with mask None, M query rows over all keys (a multi-token decode pass: every
    64-token key block is visible to some row, so the block mask is dense)."""
    r = e.r
    b = r.block
    qk = L.kind == "attention_qk"
    keys = L.n if qk else L.k  # key tokens (L in prefill)
    tile_blocks = r.mm_rows // b  # row blocks per 128-row tile (8)
    kblocks = keys // b  # key blocks (L/16)
    act = r.act_bytes
    if mask is not None:
        if keys % r.mm_rows or r.mm_rows % r.mask_block or L.rows != keys:
            raise BufferTooSmall("padding.prefill_multiple", keys,
                                 f"prefill length must be a multiple of {r.mm_rows}")
        n = keys // r.mask_block  # mask rows in use
        if n > mask.rows():
            raise BufferTooSmall("max_context_tokens", keys,
                                 f"the masks cover {mask.rows() * r.mask_block} tokens")
        rb_per_row = r.mask_block // b  # 16-row blocks per mask row (4)
        rows_per_tile = r.mm_rows // r.mask_block  # mask rows per tile (2)
        H = heads_in_mask
    mb = math.ceil(L.rows / b)
    nt = math.ceil(mb / tile_blocks)

    def a_rows(h: int, t: int) -> tuple[int, ...]:  # active key blocks per row block, tile t
        if mask is None:
            return (kblocks,) * min(tile_blocks, mb - (t - 1) * tile_blocks)
        return tuple(rb_per_row * spread(mask.S[(t - 1) * rows_per_tile + x // rb_per_row], H, h)
                     for x in range(rows_per_tile * rb_per_row))

    if qk:
        kb = L.k // b  # head dim in blocks (8)
        nb = kblocks
        dep_b = _need(r.depth_b // (B_ROWS_PER_K_BLOCK_MM * kb), "flightllm.buffers.b.depth",
                      r.depth_b, "the K-block ring")
        dout = _need(r.depth_global // nb, "flightllm.buffers.global.depth", r.depth_global,
                     f"one tile row of scores over {keys} keys")

        def qk_tile(sub: Emitter, a_r: tuple[int, ...], u: int, t: int) -> None:
            first = True
            for a in a_r:
                if a > 0:
                    sub.ld(b * b * kb * act, par=r.channels_a,
                           wait=_mask(MM) if (first and t > 1) else 0)
                    first = False
            for i in range(1, u + 1):
                sub.ld(b * b * kb * act, cross=True, traffic=TRAFFIC_KV,
                       wait=_mask(MM) if i > dep_b else 0, rel=_mask(MM))
                wait = _mask(LD)
                rel = _mask(LD) if i + dep_b <= u else 0
                if i == u:
                    rel |= _mask(MISC) | (_mask(LD) if t < nt else 0)
                if i == 1 and t > dout:
                    wait |= _mask(MISC)
                sub.mm(kb, wait=wait, rel=rel)
            live = [a for a in a_r if a > 0]
            for x, a in enumerate(live):
                rel = _mask(ST)
                if x == len(live) - 1 and t + dout <= nt:
                    rel |= _mask(MM)
                sub.misc("softmax", a, wait=_mask(MM) if x == 0 else 0, rel=rel, count=b)
                sub.st(b * b * a * act, par=r.channels_a, wait=_mask(MISC))

        for h in range(L.heads):
            for t in range(1, nt + 1):
                a_r = a_rows(h, t)
                u = kblocks if mask is None else rb_per_row * spread(mask.V[t - 1], H, h)
                key = (a_r, u, t > 1, t < nt, t > dout, t + dout <= nt)
                e.block(key, lambda sub, a_r=a_r, u=u, t=t: qk_tile(sub, a_r, u, t))
        return
    kb = kblocks  # K = the keys
    nb = L.n // b  # head dim in blocks (8)
    dep_b = _need(r.depth_b // (B_ROWS_PER_K_BLOCK_MM * kb), "flightllm.buffers.b.depth",
                  r.depth_b, f"one V block of K = {keys}")
    dout = _need(r.depth_global // nb, "flightllm.buffers.global.depth", r.depth_global,
                 "the PV output credit")
    # A-side loads of every (head, tile): zero-fill and active bytes per row block
    tiles: list[list[tuple[bool, float]]] = []
    for h in range(L.heads):
        for t in range(1, nt + 1):
            loads: list[tuple[bool, float]] = []
            for a in a_rows(h, t):
                if a < kblocks:
                    loads.append((True, b * b * (kblocks - a) * act))
                loads.append((False, b * b * a * act))
            tiles.append(loads)
    if mask is not None:
        _match_load_count(tiles, rb_per_row * mask.c_of(n), b * b * act)

    def pv_tile(sub: Emitter, loads: tuple, t: int, m: int) -> None:
        for x, (zero, size) in enumerate(loads):
            wait = _mask(MM) if (x == 0 and t > 1) else 0
            if zero:
                sub.zero_fill(size, r.channels_a, wait=wait)
            else:
                sub.ld(size, par=r.channels_a, wait=wait)
        for j in range(1, nb + 1):
            sub.ld(b * b * kb * act, cross=True, traffic=TRAFFIC_KV,
                   wait=_mask(MM) if j > dep_b else 0, rel=_mask(MM))
            wait = _mask(LD) | (_mask(ST) if (j == 1 and t > dout) else 0)
            rel = _mask(LD) if j + dep_b <= nb else 0
            if j == nb:
                rel |= _mask(ST) | (_mask(LD) if t < nt else 0)
            sub.mm(kb, wait=wait, rel=rel)
        for x in range(m):
            wait = _mask(MM) if x == 0 else 0
            rel = _mask(MM) if (x == m - 1 and t + dout <= nt) else 0
            sub.st(b * L.n * act, par=r.channels_a, wait=wait, rel=rel)

    for h in range(L.heads):
        for t in range(1, nt + 1):
            loads = tuple(tiles[h * nt + t - 1])
            m = min(tile_blocks, mb - (t - 1) * tile_blocks)
            key = (loads, t > 1, t < nt, t > dout, t + dout <= nt, m)
            e.block(key, lambda sub, lo=loads, t=t, m=m: pv_tile(sub, lo, t, m))


def _match_load_count(tiles: list[list[tuple[bool, float]]], target: int, unit: float) -> None:
    """Split (or merge) active probability-row loads inside tiles until the layer has `target`.

    The stand-in gives one active LD per row block; the real masks have one per maximal run.
    Loads of a tile run back to back and LD time is linear in bytes, so timing is unchanged.
    """
    count = sum(len(t) for t in tiles)
    extra = target - count
    for loads in tiles:
        if extra == 0:
            return
        k = 1  # never touch a tile's first load (it carries the tile's wait)
        while k < len(loads) and extra != 0:
            zero, size = loads[k]
            if extra > 0 and not zero and size >= 2 * unit:
                half = (size // unit // 2) * unit
                loads[k] = (False, size - half)
                loads.insert(k + 1, (False, half))
                extra -= 1
                continue
            if extra < 0 and not zero:
                nxt = next((m for m in range(k + 1, len(loads)) if not loads[m][0]), None)
                if nxt is not None:
                    loads[k] = (False, size + loads[nxt][1])
                    del loads[nxt]
                    extra += 1
                    continue
            k += 1
    if extra != 0:
        raise AssertionError(f"cannot match the mask's probability-row load count ({extra} left)")


# --------------------------------------------------------------------------- parts


def resolve(unit: np.ndarray, wait: np.ndarray, rel: np.ndarray) -> np.ndarray:
    """Explicit waits: the n-th row of unit c waiting on p depends on the n-th release p -> c."""
    n = len(unit)
    nu = len(UNIT_NAMES)
    bits = np.arange(nu)
    deps = np.full((n, MAX_WAIT), -1, np.int32)
    giver, consumer = np.nonzero((rel[:, None] >> bits) & 1)  # one row per token given
    taker, producer = np.nonzero((wait[:, None] >> bits) & 1)  # one row per token taken
    g_key = unit[giver] * nu + consumer
    t_key = producer * nu + unit[taker]
    g_count = np.bincount(g_key, minlength=nu * nu)
    t_count = np.bincount(t_key, minlength=nu * nu)
    if (g_count != t_count).any():
        k = int(np.flatnonzero(g_count != t_count)[0])
        raise AssertionError(
            f"unbalanced tokens {UNIT_NAMES[k // nu]}->{UNIT_NAMES[k % nu]}: "
            f"{g_count[k]} released, {t_count[k]} awaited"
        )
    g_order = np.lexsort((giver, g_key))  # per pair, in program order
    t_order = np.lexsort((taker, t_key))
    rows, srcs = taker[t_order], giver[g_order]
    by_row = np.argsort(rows, kind="stable")
    rows, srcs = rows[by_row], srcs[by_row]
    if len(rows):
        index = np.arange(len(rows))
        first = np.ones(len(rows), bool)
        first[1:] = rows[1:] != rows[:-1]
        slot = index - np.maximum.accumulate(np.where(first, index, 0))
        if slot.max() >= MAX_WAIT:
            raise AssertionError(f"more than {MAX_WAIT} waits on one row")
        deps[rows, slot] = srcs
    return deps


def emit_part(layers: list[HwLayer], rates: Rates, masks) -> tuple[np.ndarray, ...]:
    """Columns (unit, cycles, bytes, work, traffic, wait set, release set) of one part and
    the first row of each layer, with FlightLLM's flags (before `resolve`)."""
    e = Emitter(rates)
    starts = []
    ends = []
    for idx, L in enumerate(layers):
        e.new_layer(idx)
        starts.append(len(e))
        if L.kind == "linear":
            (linear_mv if L.rows == 1 else linear_mm)(e, L)
        elif L.kind in ("attention_qk", "attention_pv"):
            if L.mask_layer >= 0:
                attention_mm(e, L, masks.layer(L.mask_layer), masks.heads)
            elif L.rows == 1:
                attention_mv(e, L)
            else:
                attention_mm(e, L, None, L.heads)
        elif L.kind == "concat":
            concat(e, L)
        else:
            misc_layer(e, L)
        ends.append(len(e) - 1)
        e.sys(wait=_mask(ST), rel=_mask(LD) if idx < len(layers) - 1 else 0)
    unit, cyc, nbytes, work, traffic, wait, rel = e.arrays()
    for idx, (start, last) in enumerate(zip(starts, ends, strict=True)):
        if unit[start] != LD or unit[last] != ST:
            raise AssertionError(f"{layers[idx].name}: a layer must start with LD and end with ST")
        # section 3: the group's first LD waits on the previous SYS, its last ST releases SYS
        wait[start] = _mask(SYS) if idx > 0 else 0
        rel[last] = _mask(SYS)
    return unit, cyc, nbytes, work, traffic, wait, rel, np.asarray(starts, np.int64)


def compile_part(layers: list[HwLayer], rates: Rates, masks, names: list[str]) -> Program:
    """One barrier-delimited part: its layers chained by SYS as in section 3."""
    unit, cyc, nbytes, work, traffic, wait, rel, starts = emit_part(layers, rates, masks)
    rows = np.zeros(len(unit), INSTR_DTYPE)
    rows["opcode"] = unit
    rows["unit"] = unit
    rows["op"] = np.repeat(np.arange(len(layers)), np.diff(np.append(starts, len(unit))))
    rows["layer"] = -1
    rows["cycles"] = np.rint(cyc * TICKS_PER_CYCLE).astype(np.int64)
    rows["nbytes"] = np.rint(nbytes).astype(np.int64)
    rows["work"] = work
    rows["traffic"] = traffic
    rows["group"] = -1
    rows["chan"] = -1
    rows["acq_buf"] = -1
    rows["rel_buf"] = -1
    rows["wait"] = resolve(unit, wait, rel)
    rows.flags.writeable = False
    return Program(
        instrs=rows,
        op_names=tuple(names),
        head_len=len(rows),
        layer_len=0,
        layers=1,
        total_layers=1,
        buffer_bytes=(-1, -1),
        clock_hz=rates.clock_hz,
        ideal=False,
        label=" + ".join(names),
        unit_names=UNIT_NAMES,
        ticks_per_cycle=TICKS_PER_CYCLE,
    )
