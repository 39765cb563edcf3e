"""FlightLLM's compiler (docs/flightllm-model.md §2-4): hardware layers -> instruction rows.

Each layer type (linear.py, attention.py, misc_layers.py) emits its instructions in
FlightLLM's program order with FlightLLM's wait/release flags (sets of units) through one
`FlightLLMEmitter` (emitter.py). Here: the per-layer choice of form for x > 1 rows, and parts.
Tokens pair deterministically (the n-th waiter of c on p takes the n-th token that p
releases to c), so `resolve` turns the flags of a part into explicit rows to wait for, in
the engines' `Program` format. Durations follow §2.3 in cycles of the configured clock
(fractional: bytes over a rate), before the board's duration divisor, and are stored as
integer ticks of 2**-24 cycle.
"""

from __future__ import annotations

import math

import numpy as np

from fpgasim.dataflow.flightllm.attention import _causal_key_blocks, attention_mm, attention_mv
from fpgasim.dataflow.flightllm.emitter import (
    LD,
    MISC,
    MM,
    MV,
    ST,
    SYS,
    TICKS_PER_CYCLE,
    UNIT_NAMES,
    UNIT_ROLES,
    FlightLLMEmitter,
    Rates,
    mask_of,
)
from fpgasim.dataflow.flightllm.layers import HwLayer
from fpgasim.dataflow.flightllm.linear import linear_mm, linear_mv
from fpgasim.dataflow.flightllm.misc_layers import concat, misc_layer
from fpgasim.dataflow.instructions import INSTR_DTYPE, MAX_WAIT, Program

__all__ = [
    "LD", "MISC", "MM", "MV", "ST", "SYS", "TICKS_PER_CYCLE", "UNIT_NAMES", "UNIT_ROLES",
    "FlightLLMEmitter", "Rates", "attention_mm", "attention_mv", "cheapest_form", "compile_part",
    "emit_part", "linear_mm", "linear_mv", "mm_form_compute_cycles", "resolve",
]


def mm_form_compute_cycles(L: HwLayer, r: Rates) -> float:
    """The MM unit's summed durations of L in MM form (sections 4.3, 4.5): a lower bound of
    that form's busiest unit, from sizes alone."""
    b = r.block
    tiles = math.ceil(math.ceil(L.rows / b) / (r.mm_rows // b))
    per_mm = r.mm_start_rows * b * r.mm_cols / r.mm_macs_per_cycle  # cycles per K block
    if L.kind == "linear":
        return tiles * (L.n // b) * (L.k // b) * per_mm * L.sparse_ratio
    if L.kind == "attention_pv":
        return L.heads * tiles * (L.n // b) * (L.k // b) * per_mm
    tile_blocks = r.mm_rows // b
    mb = math.ceil(L.rows / b)
    keys = sum(_causal_key_blocks(L.n, L.rows, min(t * tile_blocks + tile_blocks, mb) - 1, r)
               for t in range(tiles))  # a QK^T tile loads the key blocks of its last row
    return L.heads * keys * (L.k // b) * per_mm


def cheapest_form(e: FlightLLMEmitter, L: HwLayer, mv_form, mm_form) -> None:
    """Compile L as MV row groups or as MM tiles, whichever has the less busy busiest unit.

    A pass of x > 1 rows outside prefill (a verify or draft pass: an extension) may run in
    either form. The compiler picks from static sizes, as FlightLLM's does for its tiling:
    the busiest unit's summed durations bound the layer's span from below, and streamed
    layers run close to that bound. Ties keep MV. The MM form is only compiled when its MM
    unit alone (`mm_form_compute_cycles`) is below the MV form's cost.
    """
    mv = FlightLLMEmitter(e.r)
    mv_form(mv, L)
    cost = mv.busiest_unit_cycles()
    if mm_form_compute_cycles(L, e.r) < cost:
        mm = FlightLLMEmitter(e.r)
        mm_form(mm, L)
        if mm.busiest_unit_cycles() < cost:
            mv = mm
    e.extend(mv.rows())


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
    e = FlightLLMEmitter(rates)
    starts = []
    ends = []
    for idx, L in enumerate(layers):
        e.new_layer()
        starts.append(len(e))
        if L.kind == "linear":
            if L.rows == 1:
                linear_mv(e, L)
            elif L.prefill:
                linear_mm(e, L)
            else:
                cheapest_form(e, L, linear_mv, linear_mm)
        elif L.kind in ("attention_qk", "attention_pv"):
            if L.mask_layer >= 0:
                attention_mm(e, L, masks.layer(L.mask_layer), masks.heads)
            elif L.rows == 1:
                attention_mv(e, L)
            else:
                cheapest_form(e, L, attention_mv, lambda sub, x: attention_mm(sub, x, None, 0))
        elif L.kind == "concat":
            concat(e, L)
        else:
            misc_layer(e, L)
        ends.append(len(e) - 1)
        e.sys(wait=mask_of(ST), rel=mask_of(LD) if idx < len(layers) - 1 else 0)
    rows = e.rows()
    unit, wait, rel = rows["unit"], rows["wait_units"], rows["rel_units"]
    for idx, (start, last) in enumerate(zip(starts, ends, strict=True)):
        if unit[start] != LD or unit[last] != ST:
            raise AssertionError(f"{layers[idx].name}: a layer must start with LD and end with ST")
        # section 3: the group's first LD waits on the previous SYS, its last ST releases SYS
        wait[start] = mask_of(SYS) if idx > 0 else 0
        rel[last] = mask_of(SYS)
    cols = (rows[name] for name in ("cycles", "nbytes", "work", "traffic"))
    return (unit, *cols, wait, rel, np.asarray(starts, np.int64))


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
