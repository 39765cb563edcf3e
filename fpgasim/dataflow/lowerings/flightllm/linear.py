"""FlightLLM's linear layers (docs/flightllm-model.md §4.2, §4.3): linear_mv by 512-output
groups (and, for x > 1 rows outside prefill, by MV row groups), linear_mm by 128-row tiles;
the K split and weight-ring credits both share."""

from __future__ import annotations

import math

from fpgasim.config.design import load_ratio
from fpgasim.dataflow.buffers import BufferTooSmall
from fpgasim.dataflow.instructions import TRAFFIC_WEIGHT
from fpgasim.dataflow.lowerings.flightllm.flightllm_emitter import (
    A_ROWS_PER_K_BLOCK_MV,
    B_ROWS_PER_K_BLOCK_MM,
    LD,
    META_ROWS_PER_K_BLOCK,
    MISC,
    MM,
    MV,
    ST,
    FlightLLMEmitter,
    mask_of,
    need_credit,
)
from fpgasim.dataflow.lowerings.flightllm.layers import HwLayer


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
            raise BufferTooSmall(f"buffers.{buffer}", depth,
                                 f"at least {2 * rows_per_k_block} (two K chunks)")
        raise BufferTooSmall("buffers.meta", r.depth_meta,
                             f"at least {2 * META_ROWS_PER_K_BLOCK} (two K chunks)")
    dep = min(depth // (rows_per_k_block * chunk),
              r.depth_meta // (META_ROWS_PER_K_BLOCK * chunk),
              r.depth_fsb // math.ceil(kb / s))
    need_credit(dep, "buffers.fsb", r.depth_fsb, f"the weight ring of {name}")
    return pieces, chunk, s, dep


def row_groups(rows: int, per_group: int) -> list[int]:
    """Rows of each MV row group: `per_group` rows (MV_START_M_NUM) each, the rest last."""
    full, rest = divmod(rows, per_group)
    return [per_group] * full + ([rest] if rest else [])


def emit_row_groups(e: FlightLLMEmitter, rows: int, per_group: int, row_group) -> None:
    """Emit `row_group(emitter, rows, first, more)` for each MV row group of `rows`: inline
    for a single group (decode: §4.2's stream exactly), else as one block per group."""
    sizes = row_groups(rows, per_group)
    if len(sizes) == 1:
        row_group(e, sizes[0], True, False)
        return
    keys = [(group_rows, n == 0, n < len(sizes) - 1) for n, group_rows in enumerate(sizes)]
    n = 0
    while n < len(keys):  # a run of alike groups (all but the first and last) is one block
        run = 1
        while n + run < len(keys) and keys[n + run] == keys[n]:
            run += 1
        e.block(("rows", *keys[n]), lambda sub, k=keys[n]: row_group(sub, *k), run,
                templatable=True)
        n += run


def linear_mv(e: FlightLLMEmitter, L: HwLayer) -> None:
    """Decode projection (docs/flightllm-model.md §4.2): weights in A by 512-output groups,
    vector in B; M = x rows run as row groups of MV_START_M_NUM rows (an extension).

    Each row group is §4.2's layer body over its rows: the group's input rows into B, the
    weights streamed once over the A channels, MVs charged for MV_START_M_NUM rows, the
    group's fused MISC and its store. The weight ring restarts in every row group and the
    group's last MV releases LD for the next group's input load (as linear_mm's tiles do,
    §4.3); the bias is loaded once. With one row this is §4.2 exactly.
    """
    r = e.r
    b = r.block
    kb, nb = L.k // b, L.n // b
    gb = r.mv_group // b  # blocks per group (32)
    bpc = gb // r.channels_a  # blocks per channel (4)
    groups = math.ceil(nb / gb)
    pieces, chunk, s, dep = _weight_ring(
        r, kb, r.mv_k_chunk, "a", r.depth_a, A_ROWS_PER_K_BLOCK_MV, L.name
    )
    ratio = load_ratio(r.weight_ratio, L.sparse_ratio)
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
    total = groups * len(pieces)

    def group(
        sub: FlightLLMEmitter, first_i: int, last_group: bool, rows: int, more_rows: bool
    ) -> None:
        for p, kc in enumerate(pieces):
            i = first_i + p
            sizes = sizes_of[kc]
            for n_ld, size in enumerate(sizes):
                wait = mask_of(MV) if (n_ld == 0 and i > dep) else 0
                rel = mask_of(MV) if n_ld == len(sizes) - 1 else 0
                sub.ld(size, par=r.channels_a, ratio=ratio, traffic=TRAFFIC_WEIGHT, wait=wait,
                       rel=rel)
            rel = mask_of(LD) if i + dep <= total or (i == total and more_rows) else 0
            if fused and p == len(pieces) - 1:
                rel |= mask_of(MISC)
            if not fused and i == total:
                rel |= mask_of(ST)
            sub.mv(kc, L.sparse_ratio, wait=mask_of(LD), rel=rel)
        if fused:
            _fused_misc(sub, L, gb * rows,
                        per_set=[rows * r.mv_group * r.act_bytes] * r.channels_a,
                        par=r.channels_a, compute=MV, last_group=last_group, extra_rel=0)

    def row_group(sub: FlightLLMEmitter, rows: int, first: bool, more_rows: bool) -> None:
        # (a) the group's input rows into B; after the first group, once the MVs are done
        sub.ld(rows * L.k * r.act_bytes, cross=True, wait=0 if first else mask_of(MV))
        if L.bias and first:
            sub.ld(L.n * r.bias_bytes, traffic=TRAFFIC_WEIGHT)  # (b) same channel, parallel 1
        for g in range(groups):
            first_i = g * len(pieces) + 1
            flags = tuple((i > dep, i + dep <= total, i == total)
                          for i in range(first_i, first_i + len(pieces)))
            last = g == groups - 1
            sub.block((flags, last, rows, more_rows),
                      lambda s2, fi=first_i, la=last: group(s2, fi, la, rows, more_rows))
        sub.st(rows * L.n * r.act_bytes, wait=mask_of(MISC if fused else MV))

    # the row-group blocks read the layer's shape but not its row count: shared across x
    e.share_blocks(("linear_mv", L.k, L.n, L.sparse_ratio, L.bias, L.misc, L.operand_sets,
                    r.link_free))
    emit_row_groups(e, L.rows, r.mv_start_rows, row_group)


def _fused_misc(e: FlightLLMEmitter, L: HwLayer, k: int, per_set: list[float], par: int,
                compute: int, last_group: bool, extra_rel: int) -> None:
    """Eltwise operand sets and fused MISCs after a group's (or N block's) last MV/MM."""
    if L.misc == ("silu",):
        rel = (mask_of(ST) if last_group else 0) | extra_rel
        e.misc("silu", k, wait=mask_of(compute), rel=rel)
        return
    for _ in range(L.operand_sets):
        for n_ld, size in enumerate(per_set):
            e.ld(size, par=par, rel=mask_of(MISC) if n_ld == len(per_set) - 1 else 0)
    for m, kind in enumerate(L.misc):
        wait = (mask_of(LD) if m < L.operand_sets else 0) | (mask_of(compute) if m == 0 else 0)
        rel = 0
        if m == len(L.misc) - 1:
            rel = (mask_of(ST) if last_group else 0) | extra_rel
        e.misc(kind, k, wait=wait, rel=rel)


def nblock_runs(nb: int, pieces: int, dep: int, dout: int) -> list[tuple[int, int]]:
    """(first N block, count) of each run of N blocks j = 1..nb of one linear_mm tile that
    share their block key: every flag of that key is monotone in j (for piece p,
    i = (j - 1) * pieces + 1 + p: i > dep, i + dep <= total, j > dout, j + dout <= nb),
    or true at j = nb only (i == total), so the key changes only where one of them flips."""
    total = nb * pieces
    flips = {1, nb, dout + 1, nb - dout + 1}
    for p in range(pieces):
        flips.add((dep - 1 - p) // pieces + 2)  # the first j with i > dep
        flips.add((total - dep - 1 - p) // pieces + 2)  # the first j with i + dep > total
    starts = sorted(j for j in flips if 1 <= j <= nb)
    return [(j, nxt - j) for j, nxt in zip(starts, [*starts[1:], nb + 1], strict=True)]


def linear_mm(e: FlightLLMEmitter, L: HwLayer) -> None:
    """Prefill projection (section 4.3): activations in A by 128-row tiles, weights in B."""
    r = e.r
    b = r.block
    kb, nb = L.k // b, L.n // b
    mb = math.ceil(L.rows / b)
    tile_blocks = r.mm_rows // b
    pieces, chunk, s, dep = _weight_ring(
        r, kb, r.mm_k_chunk, "b", r.depth_b, B_ROWS_PER_K_BLOCK_MM, L.name
    )
    dout = need_credit(r.depth_global // 1, "buffers.global", r.depth_global,
                 "the output credit")
    ratio = load_ratio(r.weight_ratio, L.sparse_ratio)
    fused = bool(L.misc)
    if L.bias:
        e.ld(L.n * r.bias_bytes, traffic=TRAFFIC_WEIGHT)
    tiles = math.ceil(mb / tile_blocks)
    total = nb * len(pieces)
    blk = b * b * r.act_bytes  # one 16x16 activation block

    def nblock(
        sub: FlightLLMEmitter, j: int, first_i: int, m: int, more_tiles: bool, last_tile: bool
    ) -> None:
        for p, kc in enumerate(pieces):
            i = first_i + p
            sub.ld(b * b * kc * r.weight_bytes, cross=not r.mm_weights_wide,
                   par=r.channels_a if r.mm_weights_wide else 1, ratio=ratio,
                   traffic=TRAFFIC_WEIGHT, wait=mask_of(MM) if i > dep else 0, rel=mask_of(MM))
            rel = mask_of(LD) if i + dep <= total else 0
            if i == total and more_tiles:
                rel |= mask_of(LD)
            wait = mask_of(LD)
            if p == len(pieces) - 1:
                rel |= mask_of(MISC if fused else ST)
                if j > dout:
                    wait |= mask_of(MISC if fused else ST)
            sub.mm(kc, L.sparse_ratio, wait=wait, rel=rel)
        if fused:
            more = mask_of(MM) if j + dout <= nb else 0
            _fused_misc(sub, L, m, per_set=[blk] * m, par=r.channels_a, compute=MM,
                        last_group=True, extra_rel=more)
        for a in range(m):
            size = blk
            if last_tile and a == m - 1:
                size = L.rows - b * (mb - 1)  # docs/flightllm-model.md §7.9: rows, not bytes
            wait = mask_of(MISC if fused else MM) if a == 0 else 0
            rel = mask_of(MM) if (not fused and a == m - 1 and j + dout <= nb) else 0
            sub.st(size, par=r.channels_a, wait=wait, rel=rel)

    def tile(sub: FlightLLMEmitter, t: int, m: int) -> None:
        for a in range(m):
            wait = mask_of(MM) if (a == 0 and t > 0) else 0
            sub.ld(b * L.k * r.act_bytes, par=r.channels_a, wait=wait)
        more, last = t < tiles - 1, t == tiles - 1
        for j, count in nblock_runs(nb, len(pieces), dep, dout):
            first_i = (j - 1) * len(pieces) + 1
            flags = tuple((i > dep, i + dep <= total, i == total)
                          for i in range(first_i, first_i + len(pieces)))
            key = (flags, j > dout, j + dout <= nb)
            sub.block(key, lambda s2, j=j, fi=first_i: nblock(s2, j, fi, m, more, last), count)

    # a tile reads the layer's row count only through m and the last tile's last store
    # (keyed by it): tiles are shared by the layers of this shape whatever their rows
    e.share_blocks(("linear_mm", L.k, L.n, L.sparse_ratio, L.bias, L.misc, L.operand_sets,
                    r.link_free))
    last_rows = L.rows - b * (mb - 1)
    for t in range(tiles):
        m = min(tile_blocks, mb - t * tile_blocks)
        key = (t > 0, t < tiles - 1, m, last_rows if t == tiles - 1 else 0)
        e.block(key, lambda sub, t=t, m=m: tile(sub, t, m), templatable=True)
