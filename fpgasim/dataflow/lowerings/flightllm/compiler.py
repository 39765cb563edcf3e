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
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

from fpgasim.bounded import BoundedCache, bounded_cache
from fpgasim.dataflow.instructions import (
    INSTR_DTYPE,
    MAX_WAIT,
    Program,
    ProgramFacts,
    RowStructure,
    columns_key_prefix,
    layer_weights,
    other_totals,
    priced_totals,
    program_shape,
    row_classes,
    rows_use_ports,
    sums_past_range,
)
from fpgasim.dataflow.lowerings.flightllm.attention import (
    _causal_key_blocks,
    attention_mm,
    attention_mv,
    causal_mm_key,
)
from fpgasim.dataflow.lowerings.flightllm.flightllm_cluster import COLLECTIVE, emit_collective
from fpgasim.dataflow.lowerings.flightllm.flightllm_emitter import (
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
    cycles_at,
    mask_of,
)
from fpgasim.dataflow.lowerings.flightllm.layers import HwLayer
from fpgasim.dataflow.lowerings.flightllm.linear import linear_mm, linear_mv
from fpgasim.dataflow.lowerings.flightllm.misc_layers import concat, misc_layer

__all__ = [
    "LD", "MISC", "MM", "MV", "ST", "SYS", "TICKS_PER_CYCLE", "UNIT_NAMES", "UNIT_ROLES",
    "FlightLLMEmitter", "PartRows", "Rates", "attention_mm", "attention_mv", "choose_forms",
    "FormCost", "compile_part", "emission_key", "emit_rows",
    "form_cost",
    "linear_mm", "linear_mv", "mm_form_compute_cycles", "part_rows", "program_at", "resolve",
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
    keys = sum(_causal_key_blocks(L, min(t * tile_blocks + tile_blocks, mb) - 1, r)
               for t in range(tiles))  # a QK^T tile loads the key blocks of its last row
    return L.heads * keys * (L.k // b) * per_mm


#: a layer's form: FlightLLM's own rule for its kind and phase, or a choice between MV row
#: groups and MM tiles (x > 1 rows outside prefill, `choose_forms`)
MV_FORM, MM_FORM = "mv", "mm"


def has_choice(L: HwLayer) -> bool:
    """Whether L may run as MV row groups or as MM tiles: a linear layer of x > 1 rows
    outside prefill, or an attention layer of x > 1 rows without a prefill block mask (a
    verify or draft pass: an extension)."""
    if L.rows == 1:
        return False
    if L.kind == "linear":
        return not L.prefill
    return L.kind in ("attention_qk", "attention_pv") and L.mask_layer < 0


def emission_key(L: HwLayer, form: str, r: Rates) -> tuple:
    """What L's rows in `form` depend on besides the rates (link free) and masks: `HwLayer.key`,
    or for verify-pass attention in MM tiles its `causal_mm_key` (not the row count)."""
    if form == MM_FORM and has_choice(L) and L.kind != "linear":
        return ("causal mm", *causal_mm_key(L, r))
    return L.key()


def emit_layer(e: FlightLLMEmitter, L: HwLayer, masks, form: str) -> None:
    """L's rows in `form` (MV_FORM or MM_FORM where L has a choice; ignored otherwise)."""
    if L.kind == "linear":
        if L.rows == 1 or (has_choice(L) and form == MV_FORM):
            linear_mv(e, L)
        else:
            linear_mm(e, L)
    elif L.kind in ("attention_qk", "attention_pv"):
        if L.mask_layer >= 0:
            attention_mm(e, L, masks.layer(L.mask_layer), masks.heads)
        elif L.rows == 1 or form == MV_FORM:
            attention_mv(e, L)
        else:
            attention_mm(e, L, None, 0)
    elif L.kind == "concat":
        concat(e, L)
    elif L.kind == COLLECTIVE:
        emit_collective(e, L)
    else:
        misc_layer(e, L)


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


@dataclass(frozen=True)
class PartRows:
    """One part's instruction rows free of the link rate (see emitter.py): `rows` with zero
    cycles, and what prices each row (`cycles_at`); `starts` is each layer's first row."""

    rows: np.ndarray
    num: np.ndarray
    link: np.ndarray
    den: np.ndarray
    starts: np.ndarray
    other_totals: dict[str, int]  # `instructions.totals` that do not depend on durations
    classes: np.ndarray  # each row's class for the duration totals (`row_classes`)
    #: `ProgramFacts.structure` of every pricing: shared with the parts of the same
    #: structure (`_structure`: equal units, waits, ports and buffers; no part uses the
    #: last two), what engines derive from those is kept by it and `part_key`'s hash of
    #: them is in it
    structure: RowStructure = field(compare=False, repr=False)
    #: (head rows, block rows, copies) when the rows are a two-block template of a run of
    #: identical blocks (`_template_run`), else None
    template: tuple[int, int, int] | None = None

    @property
    def weights(self) -> np.ndarray | None:
        """How many times each row stands in the full part (None: once each)."""
        return None if self.template is None else layer_weights(len(self.rows), *self.template)

    def cycles(self, rates: Rates) -> np.ndarray:
        """Each row's duration in cycles at these rates (the link-free rows priced)."""
        return cycles_at(self.num, self.link, self.den, rates)

    def busiest_unit_cycles(self, layer: int, rates: Rates) -> float:
        """The largest per-unit sum of durations of one layer's rows (its closing barrier
        excluded): a lower bound of the layer's span."""
        end = self.starts[layer + 1] - 1 if layer + 1 < len(self.starts) else len(self.rows) - 1
        sl = slice(int(self.starts[layer]), int(end))
        cyc = cycles_at(self.num[sl], self.link[sl], self.den[sl], rates)
        weights = self.weights
        if weights is not None:
            cyc = cyc * weights[sl]
        unit = self.rows["unit"][sl].astype(np.int64)
        return float(np.bincount(unit, weights=cyc, minlength=len(UNIT_NAMES)).max())


#: a run of at least this many identical blocks (MV row groups, MM tiles, heads) is kept as a
#: two-block template whose engines expand it (`Program`): compiled and resolved once
MIN_TEMPLATE_RUN = 4


def _template_run(e: FlightLLMEmitter) -> tuple[int, int, int] | None:
    """(first row, block rows, copies) of the part's largest run of identical blocks of at
    least MIN_TEMPLATE_RUN copies, cut to two copies in the emitter (None: no such run).

    A run is one block appended `copies` times in a row (`Emitter.extend`): the same rows,
    so the same waits and releases per copy, each copy's tokens balanced but for the ones
    that chain it to its neighbours; the rows of the full part are the template's, block 1
    repeated (`instructions.full`), and its schedule, resolved tokens and totals are the
    template's expanded (tests/dataflow/lowerings/test_flightllm_reuse.py checks them against
    the full rows)."""
    e._flush()
    best, first, start = None, 0, 0
    for j, (rows, times) in enumerate(e.chunks):
        size = len(rows) * times
        if times >= MIN_TEMPLATE_RUN and len(rows) and id(rows) in e.templatable and (
                best is None or size > len(e.chunks[best][0]) * e.chunks[best][1]):
            best, first = j, start
        start += size
    if best is None:
        return None
    rows, times = e.chunks[best]
    e.chunks[best] = (rows, 2)
    e.count -= (times - 2) * len(rows)
    return first, len(rows), times


def emit_rows(layers: list[HwLayer], rates: Rates, masks, forms: tuple[str, ...],
              emitted: dict[int, tuple] | None = None) -> tuple[np.ndarray, ...]:
    """Columns (unit, duration, bytes, work, traffic, wait set, release set, link, divisor)
    of one part with its layers in `forms`, the first row of each layer, and its template
    run (`_template_run`: the rows hold two copies of it), with FlightLLM's flags (before
    `resolve`). `emitted` holds, by layer index, rows already emitted for a layer in its
    form (`FormCost.chunks`): appended instead of emitted again."""
    e = FlightLLMEmitter(rates)
    starts = []
    ends = []
    for idx, (L, form) in enumerate(zip(layers, forms, strict=True)):
        e.new_layer()
        starts.append(len(e))
        chunks = emitted.get(idx) if emitted else None
        if chunks:
            for rows, times, templatable in chunks:
                e.extend(rows, times, templatable)
        else:
            emit_layer(e, L, masks, form)
        ends.append(len(e) - 1)
        e.sys(wait=mask_of(ST), rel=mask_of(LD) if idx < len(layers) - 1 else 0)
    run = _template_run(e)
    if run is not None:  # layer bounds after the run move back by the copies cut
        first, lam, times = run
        cut = (times - 2) * lam

        def moved(i: int) -> int:
            end = first + times * lam  # a layer may start at the run or end with it
            if i == end - 1:
                return first + 2 * lam - 1
            if first < i < end - 1:
                raise AssertionError("a layer boundary inside a run of identical blocks")
            return i - cut if i >= end else i

        starts, ends = [moved(i) for i in starts], [moved(i) for i in ends]
    rows = e.rows()
    unit, wait, rel = rows["unit"], rows["wait_units"], rows["rel_units"]
    num, nbytes, work, traffic, link, den = (np.ascontiguousarray(rows[name]) for name in (
        "cycles", "nbytes", "work", "traffic", "link", "den"))
    for idx, (start, last) in enumerate(zip(starts, ends, strict=True)):
        if unit[start] != LD or unit[last] != ST:
            raise AssertionError(f"{layers[idx].name}: a layer must start with LD and end with ST")
        # section 3: the group's first LD waits on the previous SYS, its last ST releases SYS
        wait[start] = mask_of(SYS) if idx > 0 else 0
        rel[last] = mask_of(SYS)
    return (unit, num, nbytes, work, traffic, wait, rel, link, den, np.asarray(starts, np.int64),
            run)


def part_rows(layers: list[HwLayer], rates: Rates, masks, forms: tuple[str, ...],
              emitted: dict[int, tuple] | None = None) -> PartRows:
    """One barrier-delimited part, its layers chained by SYS as in section 3, link free
    (`emitted`: see `emit_rows`)."""
    unit, num, nbytes, work, traffic, wait, rel, link, den, starts, run = emit_rows(
        layers, rates, masks, forms, emitted)
    rows = np.zeros(len(unit), INSTR_DTYPE)
    rows["opcode"] = unit
    rows["unit"] = unit
    rows["op"] = np.repeat(np.arange(len(layers)), np.diff(np.append(starts, len(unit))))
    rows["layer"] = -1
    rows["nbytes"] = np.rint(nbytes).astype(np.int64)
    rows["work"] = work
    rows["traffic"] = traffic
    rows["group"] = -1
    rows["chan"] = -1
    rows["acq_buf"] = -1
    rows["rel_buf"] = -1
    unpriced = _program(rows, ["-"] * len(layers))
    rows["wait"], classes, structure = _structure(unpriced, wait, rel)
    weights = None if run is None else layer_weights(len(rows), *run)
    for col in (rows, num, link, den, starts):
        col.flags.writeable = False
    return PartRows(rows, num, link.astype(np.int8), den, starts,
                    other_totals(unpriced, UNIT_ROLES, classes, rows["nbytes"], rows["work"],
                                 weights),
                    classes, structure, run)


#: a part's explicit waits, row classes (`row_classes`) and schedule structure (see
#: `PartRows.structure`) by its structure key (`_structure`), up to this many rows in all
#: (least recently used out; about 60 bytes a row, and the engines' inputs once simulated):
#: the attention parts of a verify pass differ across contexts in their sizes, far less in
#: their structure (`generate` P = 128, D = 512 compiles 9,006 parts of 730 structures)
STRUCTURE_CACHE_ROWS = 2_000_000
_STRUCTURES: BoundedCache[tuple[np.ndarray, np.ndarray, RowStructure]] = bounded_cache(
    "flightllm.structures", owner="fpgasim.dataflow.lowerings.flightllm.compiler",
    unit="rows", keys="each row's unit, traffic class, wait and release sets",
    budget=STRUCTURE_CACHE_ROWS, size_of=lambda value: len(value[0]),
    why="parts with the same units, traffic classes and wait/release sets share their "
    "resolved waits and row classes: LongSpec's `generate` on `flightllm-vhk158` "
    "compiles 9,006 parts of 730 structures (its attention parts differ across contexts in "
    "size, not in structure)")


def _structure(unpriced: Program, wait: np.ndarray,
               rel: np.ndarray) -> tuple[np.ndarray, np.ndarray, RowStructure]:
    """A part's explicit waits (`resolve`), row classes (`row_classes`) and the `RowStructure` its
    pricings share with every part of its structure (`PartRows.structure`): all depend only
    on each row's unit (its opcode), traffic class and wait and release sets, which key the
    cache (as bytes where every value fits one)."""
    unit = unpriced.instrs["unit"]
    cols = np.stack([unit, unpriced.instrs["traffic"], wait, rel])
    small = cols.astype(np.int8)
    if not (small == cols).all():
        return _new_structure(unpriced, wait, rel)
    return _STRUCTURES(small.tobytes(), lambda: _new_structure(unpriced, wait, rel))


def _new_structure(unpriced: Program, wait: np.ndarray,
                   rel: np.ndarray) -> tuple[np.ndarray, np.ndarray, RowStructure]:
    """`_structure`'s value, computed (its arrays read-only: parts of one structure share
    them). The rows' ports are those of every part of the structure: `part_rows` gives
    none (its `chan` column is -1)."""
    unit = unpriced.instrs["unit"]
    deps = resolve(unit, wait, rel)
    structure = RowStructure(columns_key_prefix(unit, deps, UNIT_NAMES, TICKS_PER_CYCLE),
                             rows_use_ports(unpriced.instrs))
    value = (deps, row_classes(unpriced, UNIT_ROLES), structure)
    value[0].flags.writeable = False
    value[1].flags.writeable = False
    return value


#: part_rows(layers, rates, masks, forms, emitted=None), or a cache of it
RowsOf = Callable[..., PartRows]
#: unit roundoff of float64
_EPS = 2.0**-53


@dataclass(frozen=True)
class FormCost:
    """A layer's rows in one form, summarised for `choose_forms`: per unit and link class
    the sum of num / den (emitter.py), and the row count that bounds its rounding."""

    sums: np.ndarray
    rows: int
    #: the layer's rows as the emitter left them ((rows, times) runs), when just emitted:
    #: the part's rows reuse them (`emit_rows`); caches keep a summary without them
    chunks: tuple = field(default=(), compare=False, repr=False)

    def busiest_unit_cycles(self, rates: Rates) -> tuple[float, float]:
        """(busiest unit's summed durations, relative error bound) at `rates`.

        The exact sum adds each row's rounded duration in row order; this one regroups the
        same positive terms. Relative to the real sum, the exact one is within rows + 2
        unit roundoffs and this one within 2 rows + 5 (a chunk's bincount, the chunk count,
        the products), so they differ by less than the 4 (rows + 16) returned."""
        same, cross = rates.cycles_per_byte()
        busiest = float((self.sums @ np.array([1.0, same, cross])).max())
        return busiest, 4 * (self.rows + 16) * _EPS


def form_cost(L: HwLayer, rates: Rates, masks, form: str) -> FormCost:
    """L's rows in `form` summarised (emitted block by block, never tiled or resolved)."""
    e = FlightLLMEmitter(rates)
    emit_layer(e, L, masks, form)
    return FormCost(*e.link_sums(),
                    tuple((rows, n, id(rows) in e.templatable) for rows, n in e.chunks))


def _less(a: float, err_a: float, b: float, err_b: float) -> bool | None:
    """a < b for values known within relative errors err_a, err_b; None when too close."""
    if a * (1 + err_a) < b * (1 - err_b):
        return True
    if a * (1 - err_a) >= b * (1 + err_b):
        return False
    return None


#: MV row groups from which `choose_forms` first bounds the MV form from one row group
MV_BOUND_GROUPS = 64


def _mm_below_mv_bound(L: HwLayer, rates: Rates, masks, cost_of) -> FormCost | None:
    """L's MM form when its cost is below a lower bound of its MV form, else None.

    The MV form of L is `groups` identical row groups (plus the layer's own rows), so its
    busiest unit sums to at least `groups` times one row group's busiest unit. For a layer of
    many rows (a long prefill chunk, a large batch) that bound alone settles the choice,
    which is then the one the full comparison would make (MM strictly below MV), without
    emitting thousands of row groups."""
    free = rates.link_free
    groups = L.tokens // rates.mv_start_rows
    if groups < MV_BOUND_GROUPS:
        return None
    one = replace(L, rows=rates.mv_start_rows * L.group)
    single, err = cost_of(one, free, masks, MV_FORM).busiest_unit_cycles(rates)
    bound = groups * single * (1 - err)
    if mm_form_compute_cycles(L, free) >= bound:
        return None
    summary = cost_of(L, free, masks, MM_FORM)
    mm, err_mm = summary.busiest_unit_cycles(rates)
    return summary if mm * (1 + err_mm) < bound else None


def choose_forms(layers: list[HwLayer], rates: Rates, masks, rows_of: RowsOf = part_rows,
                 cost_of=form_cost) -> tuple[tuple[str, ...], PartRows]:
    """Each layer's form and the part's rows in those forms.

    A layer with a choice (`has_choice`) runs as MV row groups or MM tiles, whichever has
    the less busy busiest unit. The compiler picks from static sizes, as FlightLLM's does
    for its tiling: the busiest unit's summed durations bound the layer's span from below,
    and streamed layers run close to that bound. Ties keep MV. The MM form is only costed
    when its MM unit alone (`mm_form_compute_cycles`) is below the MV form's cost.

    Costs come from `FormCost` summaries; where one is too close to call within its
    rounding bound, the exact sums over the compiled rows decide, so the choice is always
    that of the exact row-order sums.
    """
    free = rates.link_free
    n = len(layers)
    forms = [MV_FORM] * n
    exact: dict[tuple[str, ...], PartRows] = {}
    emitted: dict[int, tuple] = {}  # the chosen form's rows where a summary just emitted them

    def exact_cost(i: int, form: str) -> float:
        key = tuple(form if k == i else MV_FORM for k in range(n))
        if key not in exact:
            exact[key] = rows_of(layers, rates, masks, key, None)
        return exact[key].busiest_unit_cycles(i, rates)

    for i, L in enumerate(layers):
        if not has_choice(L):
            continue
        mm_only = _mm_below_mv_bound(L, rates, masks, cost_of)
        if mm_only is not None:  # MM beats any MV form: the many row groups never emitted
            forms[i] = MM_FORM
            emitted[i] = mm_only.chunks
            continue
        summary = cost_of(L, free, masks, MV_FORM)
        emitted[i] = summary.chunks
        mv, err_mv = summary.busiest_unit_cycles(rates)
        compute = mm_form_compute_cycles(L, free)
        try_mm = _less(compute, 0.0, mv, err_mv)
        if try_mm is None:
            mv, err_mv = exact_cost(i, MV_FORM), 0.0
            try_mm = compute < mv
        if not try_mm:
            continue
        summary = cost_of(L, free, masks, MM_FORM)
        mm, err_mm = summary.busiest_unit_cycles(rates)
        pick = _less(mm, err_mm, mv, err_mv)
        if pick is None:
            pick = exact_cost(i, MM_FORM) < exact_cost(i, MV_FORM)
        if pick:
            forms[i] = MM_FORM
            emitted[i] = summary.chunks
    chosen = tuple(forms)
    return chosen, exact.get(chosen) or rows_of(layers, rates, masks, chosen, emitted)


#: the longest duration of one row, in ticks: a row this long makes its part too slow
MAX_ROW_TICKS = 1 << 62


def program_at(part: PartRows, rates: Rates, names: list[str]) -> Program:
    """The part's rows priced for `rates`: durations in ticks of 2**-24 cycle."""
    raw = np.dtype((np.void, INSTR_DTYPE.itemsize))  # copied as bytes: one memcpy
    rows = part.rows.view(raw).copy().view(INSTR_DTYPE)
    # a duration past MAX_ROW_TICKS is kept at it (cast, it would wrap to a negative int64):
    # its part then sums past the time range (`ProgramFacts.too_slow`) and the lowering
    # refuses it (`flightllm_lowering.compiled_parts`)
    cycles = np.minimum(np.rint(part.cycles(rates) * TICKS_PER_CYCLE),
                        float(MAX_ROW_TICKS)).astype(np.int64)
    rows["cycles"] = cycles
    rows.flags.writeable = False
    program = _program(rows, names, part.template)
    totals = priced_totals(program, UNIT_ROLES, part.other_totals, part.classes, cycles,
                           part.weights)
    # `part_key`: the units and waits are hashed once per structure, each pricing adds its
    # durations
    digest = part.structure.key_of(cycles)
    template_key = None
    if part.template is not None:  # the same template stands for parts of any copy count
        template_key = digest.copy().digest()
        digest.update(b"copies %d" % part.template[2])
    facts = ProgramFacts(
        part_key=digest.digest(), template_key=template_key, unit_roles=UNIT_ROLES,
        totals=MappingProxyType(totals), uses_ports=part.structure.uses_ports,
        too_slow=sums_past_range(cycles), structure=part.structure,
        shape=program_shape(program))
    return replace(program, facts=facts)


def _program(rows: np.ndarray, names: list[str],
             template: tuple[int, int, int] | None = None) -> Program:
    """A part's rows as a program in ticks on FlightLLM's units: one block, or the two-block
    template of a run of identical blocks (head rows, block rows, copies)."""
    head, lam, copies = template if template is not None else (len(rows), 0, 1)
    return Program(
        instrs=rows,
        op_names=tuple(names),
        head_len=head,
        layer_len=lam,
        layers=2 if template is not None else 1,
        total_layers=copies,
        buffer_bytes=(-1, -1),
        ideal=False,
        label=" + ".join(names),
        unit_names=UNIT_NAMES,
        ticks_per_cycle=TICKS_PER_CYCLE,
    )


def compile_part(layers: list[HwLayer], rates: Rates, masks, names: list[str],
                 rows_of: RowsOf = part_rows, cost_of=form_cost) -> Program:
    """One barrier-delimited part: its layers chained by SYS as in section 3, each layer in
    its cheapest form (`choose_forms`), priced for `rates`."""
    _, part = choose_forms(layers, rates, masks, rows_of, cost_of)
    return program_at(part, rates, names)
