"""FlightLLM's attention layers (docs/flightllm-model.md §4.4, §4.5): attention_mv per head
with MVs of 512 keys (by MV row groups for x > 1 rows), attention_mm by 128-row tiles with
block masks (prefill) or the causal block mask of a verify pass's tree."""

from __future__ import annotations

import math
from dataclasses import dataclass

from fpgasim.dataflow.buffers import BufferTooSmall
from fpgasim.dataflow.instructions import TRAFFIC_KV
from fpgasim.dataflow.lowerings.flightllm.flightllm_emitter import (
    B_ROWS_PER_K_BLOCK_MM,
    LD,
    MISC,
    MM,
    MV,
    ST,
    FlightLLMEmitter,
    Rates,
    mask_of,
    need_credit,
)
from fpgasim.dataflow.lowerings.flightllm.layers import HwLayer
from fpgasim.dataflow.lowerings.flightllm.linear import emit_row_groups
from fpgasim.dataflow.lowerings.flightllm.masks import LayerMask, spread


def attention_mv(e: FlightLLMEmitter, L: HwLayer) -> None:
    """Decode attention (docs/flightllm-model.md §4.4): QK^T (softmax fused) or PV, per head,
    MVs of 512; x tokens run as row groups of MV_START_M_NUM tokens (an extension).

    Each row group is §4.4's layer body over its tokens: their query (or probability) rows
    into B, the K (or V) cache streamed once per KV head, the MVs of the KV head's query
    rows on each chunk just loaded, one softmax over the group's rows per KV head, and the
    group's store. The group's last MV releases LD for the next group's row load. The tree
    mask is applied inside the softmax: an MV spans 512 keys, so no mask block can drop one
    (decode attention is dense, §7.6).

    Grouped-query attention on MV lanes: the t tokens of a row group have t x g query rows
    per KV head (g query heads share its K and V; g = 1 without GQA), and an MV's lanes take
    any rows that share its stream, so each chunk takes ceil(t x g / MV_START_M_NUM) MVs,
    each charged for MV_START_M_NUM rows (docs/flightllm-sd.md, "GQA on MV lanes"). One lane
    gives g MVs per chunk (one per query head) and a model without GQA one per row group:
    both as before lanes were shared.
    """
    r = e.r
    b = r.block
    qk = L.kind == "attention_qk"
    k_el, n_el = L.k, L.n
    kb, nb = k_el // b, n_el // b
    gb = r.mv_group // b
    bpc = gb // r.channels_a
    n_mv = math.ceil(nb / gb)
    dep = need_credit(r.depth_a // k_el, "buffers.a", r.depth_a,
                f"one K={k_el} tile of {L.name}")
    sizes = []
    for c in range(r.channels_a):
        d = sum(1 for q in range(bpc) if r.channels_a * q + c < nb)  # uses the total Nb
        if d:
            sizes.append(b * k_el * d * r.kv_bytes)

    group = L.group

    def head(sub: FlightLLMEmitter, last_head: bool, rows: int, more_rows: bool) -> None:
        mvs = math.ceil(rows * group / r.mv_start_rows)  # the KV head's query rows over the lanes
        for j in range(1, n_mv + 1):
            for n_ld, size in enumerate(sizes):
                wait = mask_of(MV) if (n_ld == 0 and j > dep) else 0
                rel = mask_of(MV) if n_ld == len(sizes) - 1 else 0
                sub.ld(size, par=r.channels_a, traffic=TRAFFIC_KV, wait=wait, rel=rel)
            rel = mask_of(LD) if j + dep <= n_mv else 0
            if j == n_mv:
                if qk:
                    rel |= mask_of(MISC)
                elif last_head:
                    rel |= mask_of(ST)
                if last_head and more_rows:
                    rel |= mask_of(LD)
            for q in range(mvs):  # the KV head's query rows on the chunk just loaded
                sub.mv(kb, wait=mask_of(LD) if q == 0 else 0, rel=rel if q == mvs - 1 else 0)
        if qk:
            sub.misc("softmax", nb * rows * group, wait=mask_of(MV),
                     rel=mask_of(ST) if last_head else 0)

    def row_group(sub: FlightLLMEmitter, rows: int, first: bool, more_rows: bool) -> None:
        # `rows` tokens, each with `group` query rows per KV head
        width = rows * group * L.heads
        sub.ld(width * k_el * r.act_bytes, cross=True, wait=0 if first else mask_of(MV))
        if L.heads > 1:  # every head but the last alike: one block, appended heads - 1 times
            sub.block((False, rows, more_rows), lambda s2: head(s2, False, rows, more_rows),
                      L.heads - 1, templatable=True)
        sub.block((True, rows, more_rows), lambda s2: head(s2, True, rows, more_rows))
        sub.st(width * n_el * r.act_bytes, wait=mask_of(MISC if qk else MV))

    # the row-group blocks read the layer's shape but not its row count: shared across x
    e.share_blocks(("attention_mv", L.kind, L.k, L.n, L.heads, group, r.link_free))
    emit_row_groups(e, L.tokens, r.mv_start_rows, row_group)


@dataclass(frozen=True)
class _Tiling:
    """How an MM-mode attention layer is cut (section 4.5): 128-row tiles of 16-row blocks
    over `keys` key tokens, and the block mask that decides which key blocks a row block
    sees (a prefill mask's count-level stand-in, or None: a verify pass's causal mask)."""

    L: HwLayer
    r: Rates
    keys: int  # key tokens (L in prefill)
    row_blocks: int  # 16-row blocks of the layer's rows (mb)
    tiles: int  # 128-row tiles (nt)
    mask: LayerMask | None
    heads_in_mask: int

    @property
    def tile_blocks(self) -> int:
        """Row blocks per 128-row tile (8)."""
        return self.r.mm_rows // self.r.block

    @property
    def key_blocks(self) -> int:
        """Key blocks of `block` tokens (L/16)."""
        return self.keys // self.r.block

    @property
    def row_blocks_per_mask_row(self) -> int:
        """16-row blocks per mask row (4)."""
        return self.r.mask_block // self.r.block

    @property
    def mask_rows_per_tile(self) -> int:
        """Mask rows per 128-row tile (2)."""
        return self.r.mm_rows // self.r.mask_block

    def heads_alike(self) -> bool:
        """Whether every head sees the same key blocks (no prefill mask)."""
        return self.mask is None

    def active_key_blocks(self, h: int, t: int) -> tuple[int, ...]:
        """Key blocks each row block of tile t (from 1) of head h sees."""
        if self.mask is None:
            first = (t - 1) * self.tile_blocks
            return tuple(_causal_key_blocks(self.L, x, self.r)
                         for x in range(first, min(first + self.tile_blocks, self.row_blocks)))
        per = self.row_blocks_per_mask_row
        S = self.mask.S
        return tuple(per * spread(S[(t - 1) * self.mask_rows_per_tile + x // per],
                                  self.heads_in_mask, h)
                     for x in range(self.mask_rows_per_tile * per))

    def loaded_key_blocks(self, h: int, t: int, active: tuple[int, ...]) -> int:
        """Key blocks QK^T tile t of head h loads: its last row's (causal) or the mask's."""
        if self.mask is None:
            return max(active)
        return self.row_blocks_per_mask_row * spread(self.mask.V[t - 1], self.heads_in_mask, h)


def causal_mm_key(L: HwLayer, r: Rates) -> tuple:
    """What `attention_mm`'s rows of a verify-pass layer (no prefill mask) depend on: the
    layer but its row count, which they read only through the key blocks each row block
    sees (so verify lengths with the same row blocks and causal blocks share their rows)."""
    tiling = _tiling(L, r, None, 0)
    seen = tuple(a for t in range(1, tiling.tiles + 1) for a in tiling.active_key_blocks(0, t))
    return (L.kind, L.k, L.n, L.sparse_ratio, L.bias, L.misc, L.operand_sets, L.heads, seen,
            *((L.group, L.past) if L.group != 1 or L.past >= 0 else ()))


def _tiling(L: HwLayer, r: Rates, mask: LayerMask | None, heads_in_mask: int) -> _Tiling:
    """The layer's tiling, after checking a prefill mask covers its rows."""
    keys = L.n if L.kind == "attention_qk" else L.k
    if mask is not None:
        if keys % r.mm_rows or r.mm_rows % r.mask_block or L.rows != keys:
            raise BufferTooSmall("padding.prefill_multiple", keys,
                                 f"prefill length must be a multiple of {r.mm_rows}")
        if keys // r.mask_block > mask.rows():
            raise BufferTooSmall("max_context_tokens", keys,
                                 f"the masks cover {mask.rows() * r.mask_block} tokens")
    mb = math.ceil(L.rows / r.block)
    nt = math.ceil(mb / (r.mm_rows // r.block))
    return _Tiling(L, r, keys, mb, nt, mask, heads_in_mask)


def attention_mm(
    e: FlightLLMEmitter, L: HwLayer, mask: LayerMask | None, heads_in_mask: int
) -> None:
    """MM-mode attention (section 4.5): prefill with count-level stand-ins of the block masks
    (4.9), or, with mask None, M query rows over all keys (a multi-token decode pass: every
    64-token key block is visible to some row, so the block mask is dense)."""
    tiling = _tiling(L, e.r, mask, heads_in_mask)
    if L.kind == "attention_qk":
        _qk_mm(e, tiling)
    else:
        _pv_mm(e, tiling)


def _qk_mm(e: FlightLLMEmitter, tiling: _Tiling) -> None:
    """QK^T with its fused softmax, tile by tile per head: Q rows into A, each key block
    into B over one channel, an MM per key block, a softmax and a store per live row block."""
    r, L = e.r, tiling.L
    kb = L.k // r.block  # head dim in blocks (8)
    dep_b = need_credit(r.depth_b // (B_ROWS_PER_K_BLOCK_MM * kb), "buffers.b",
                        r.depth_b, "the K-block ring")
    dout = need_credit(r.depth_global // tiling.key_blocks, "buffers.global",
                       r.depth_global, f"one tile row of scores over {tiling.keys} keys")
    nt = tiling.tiles
    seen: dict[tuple[int, int], tuple] = {}

    def head_tiles(sub: FlightLLMEmitter, h: int) -> None:
        for t in range(1, nt + 1):
            head = 0 if tiling.heads_alike() else h
            if (head, t) not in seen:
                active = tiling.active_key_blocks(h, t)
                u = tiling.loaded_key_blocks(h, t, active)
                seen[head, t] = (active, u, t > 1, t < nt, t > dout, t + dout <= nt)
            key = seen[head, t]
            active, u = key[:2]
            sub.block(key, lambda s2, a=active, u=u, t=t:
                      _qk_tile(s2, a, u, t, nt, kb, dep_b, dout))

    if tiling.heads_alike():
        e.per_head(L.heads, lambda sub: head_tiles(sub, 0))
        return
    for h in range(L.heads):
        head_tiles(e, h)


def _qk_tile(sub: FlightLLMEmitter, active: tuple[int, ...], u: int, t: int, nt: int, kb: int,
             dep_b: int, dout: int) -> None:
    """One QK^T tile: the query loads of its live row blocks, u key-block loads each feeding
    an MM (ring of dep_b), then per live row block its softmax rows and its score store."""
    r = sub.r
    b = r.block
    act = r.act_bytes
    first = True
    for a in active:
        if a > 0:
            sub.ld(b * b * kb * act, par=r.channels_a,
                   wait=mask_of(MM) if (first and t > 1) else 0)
            first = False
    for i in range(1, u + 1):
        sub.ld(b * b * kb * r.kv_bytes, cross=True, traffic=TRAFFIC_KV,
               wait=mask_of(MM) if i > dep_b else 0, rel=mask_of(MM))
        wait = mask_of(LD)
        rel = mask_of(LD) if i + dep_b <= u else 0
        if i == u:
            rel |= mask_of(MISC) | (mask_of(LD) if t < nt else 0)
        if i == 1 and t > dout:
            wait |= mask_of(MISC)
        sub.mm(kb, wait=wait, rel=rel)
    live = [a for a in active if a > 0]
    for x, a in enumerate(live):
        rel = mask_of(ST)
        if x == len(live) - 1 and t + dout <= nt:
            rel |= mask_of(MM)
        sub.misc("softmax", a, wait=mask_of(MM) if x == 0 else 0, rel=rel, count=b)
        sub.st(b * b * a * act, par=r.channels_a, wait=mask_of(MISC))


def _pv_mm(e: FlightLLMEmitter, tiling: _Tiling) -> None:
    """PV, tile by tile per head: probability rows into A (masked blocks zero-filled), each
    V block into B over one channel, an MM per head-dim block, the output rows stored."""
    r, L = e.r, tiling.L
    kb = tiling.key_blocks  # K = the keys
    nb = L.n // r.block  # head dim in blocks (8)
    dep_b = need_credit(r.depth_b // (B_ROWS_PER_K_BLOCK_MM * kb), "buffers.b",
                        r.depth_b, f"one V block of K = {tiling.keys}")
    dout = need_credit(r.depth_global // nb, "buffers.global", r.depth_global,
                       "the PV output credit")
    nt, tile_blocks = tiling.tiles, tiling.tile_blocks
    tiles = _probability_loads(tiling)

    def head_tiles(sub: FlightLLMEmitter, h: int) -> None:
        for t in range(1, nt + 1):
            loads = tuple(tiles[h * nt + t - 1])
            m = min(tile_blocks, tiling.row_blocks - (t - 1) * tile_blocks)
            key = (loads, t > 1, t < nt, t > dout, t + dout <= nt, m)
            sub.block(key, lambda s2, lo=loads, t=t, m=m:
                      _pv_tile(s2, L, lo, t, m, nt, kb, nb, dep_b, dout))

    if tiling.heads_alike():  # every head's loads are head 0's
        e.per_head(L.heads, lambda sub: head_tiles(sub, 0))
        return
    for h in range(L.heads):
        head_tiles(e, h)


def _probability_loads(tiling: _Tiling) -> list[list[tuple[bool, float]]]:
    """A-side loads of every (head, tile), head major: per row block a zero-fill of its
    masked key blocks (True) and a load of its active ones (False), in bytes; with a prefill
    mask, split to the mask's load count (`_match_load_count`)."""
    r, L = tiling.r, tiling.L
    b, act, kblocks = r.block, r.act_bytes, tiling.key_blocks
    tiles: list[list[tuple[bool, float]]] = []
    for h in range(L.heads):
        for t in range(1, tiling.tiles + 1):
            if tiling.heads_alike() and h > 0:  # the same loads as head 0's
                tiles.append(list(tiles[t - 1]))
                continue
            loads: list[tuple[bool, float]] = []
            for a in tiling.active_key_blocks(h, t):
                if a < kblocks:
                    loads.append((True, b * b * (kblocks - a) * act))
                loads.append((False, b * b * a * act))
            tiles.append(loads)
    if tiling.mask is not None:
        n = tiling.keys // r.mask_block  # mask rows in use
        _match_load_count(tiles, tiling.row_blocks_per_mask_row * tiling.mask.c_of(n),
                          b * b * act)
    return tiles


def _pv_tile(sub: FlightLLMEmitter, L: HwLayer, loads: tuple, t: int, m: int, nt: int, kb: int,
             nb: int, dep_b: int, dout: int) -> None:
    """One PV tile: its probability loads, nb V-block loads each feeding an MM (ring of
    dep_b), then the m row blocks' output stores."""
    r = sub.r
    b, act = r.block, r.act_bytes
    for x, (zero, size) in enumerate(loads):
        wait = mask_of(MM) if (x == 0 and t > 1) else 0
        if zero:
            sub.zero_fill(size, r.channels_a, wait=wait)
        else:
            sub.ld(size, par=r.channels_a, wait=wait)
    for j in range(1, nb + 1):
        sub.ld(b * b * kb * r.kv_bytes, cross=True, traffic=TRAFFIC_KV,
               wait=mask_of(MM) if j > dep_b else 0, rel=mask_of(MM))
        wait = mask_of(LD) | (mask_of(ST) if (j == 1 and t > dout) else 0)
        rel = mask_of(LD) if j + dep_b <= nb else 0
        if j == nb:
            rel |= mask_of(ST) | (mask_of(LD) if t < nt else 0)
        sub.mm(kb, wait=wait, rel=rel)
    for x in range(m):
        wait = mask_of(MM) if x == 0 else 0
        rel = mask_of(MM) if (x == m - 1 and t + dout <= nt) else 0
        sub.st(b * L.n * act, par=r.channels_a, wait=wait, rel=rel)


def _causal_key_blocks(L: HwLayer, row_block: int, r: Rates) -> int:
    """Key blocks (of `block` tokens) a verify pass's row block sees under its tree mask.

    The new tokens are the last of the pass's keys, parents before children; rows are
    token-major (a token's `group` query heads next to each other). Every row sees the keys
    before the first new token (`L.keys_before` of this layer's keys) and the new tokens up
    to its own, so at `mask_block`-token granularity a tree mask is the causal block mask:
    the row block sees every mask block up to the one holding its last row's token
    (docs/engines.md).
    """
    last_row = min(row_block * r.block + r.block, L.rows) - 1
    position = L.keys_before + last_row // L.group
    mask_blocks = position // r.mask_block + 1
    return min(L.keys // r.block, mask_blocks * (r.mask_block // r.block))


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
