"""FlightLLM's stand-alone layers (docs/flightllm-model.md §4.6, §4.7): the decode KV concat
and the norm / eltwise / SiLU rows."""

from __future__ import annotations

import math

from fpgasim.dataflow.buffers import BufferTooSmall
from fpgasim.dataflow.instructions import TRAFFIC_KV
from fpgasim.dataflow.lowerings.flightllm.flightllm_emitter import (
    LD,
    MISC,
    MISC_ELEMENTS_PER_ADDRESS,
    ST,
    FlightLLMEmitter,
    mask_of,
    need_credit,
)
from fpgasim.dataflow.lowerings.flightllm.layers import HwLayer


def concat(e: FlightLLMEmitter, L: HwLayer) -> None:
    """Decode KV append (section 4.7): read the whole cache once, store 0 bytes."""
    r = e.r
    per = math.ceil(L.heads * L.k * L.n * r.kv_bytes / r.channels_a)
    for _ in range(r.channels_a):
        e.ld(per, par=r.channels_a, traffic=TRAFFIC_KV)
    e.st(0)


def misc_layer(e: FlightLLMEmitter, L: HwLayer) -> None:
    """Stand-alone norm / eltwise / SiLU (section 4.6): LD, MISC, ST per row, credit D."""
    r = e.r
    if L.k % MISC_ELEMENTS_PER_ADDRESS:
        raise BufferTooSmall("model.hidden", L.k, f"a multiple of {MISC_ELEMENTS_PER_ADDRESS} "
                             f"(a MISC row uses K/{MISC_ELEMENTS_PER_ADDRESS} global addresses)")
    per_row = L.k // MISC_ELEMENTS_PER_ADDRESS
    two = L.kind == "eltwise"
    depth = r.depth_global // 2 if two else r.depth_global
    d = need_credit(depth // per_row, "buffers.global", r.depth_global,
              f"one row of {L.name}")
    rows = L.rows
    kind = L.misc[0]
    n_ld = 2 if two else 1

    def row(sub: FlightLLMEmitter, late: bool, more: bool) -> None:
        for x in range(n_ld):
            wait = mask_of(MISC) if (x == 0 and late) else 0
            rel = mask_of(MISC) if x == n_ld - 1 else 0
            sub.ld(L.k * r.act_bytes, wait=wait, rel=rel)
        sub.misc(kind, L.k // r.block, wait=mask_of(LD) | (mask_of(ST) if late else 0),
                 rel=mask_of(ST) | (mask_of(LD) if more else 0))
        sub.st(L.k * r.act_bytes, wait=mask_of(MISC), rel=mask_of(MISC) if more else 0)

    for x in range(1, rows + 1):
        late, more = x > d, x + d <= rows
        e.block((late, more), lambda sub, la=late, mo=more: row(sub, la, mo))
