"""The compiled parts of FlightLLM's lowering, kept across passes: priced parts, their
link-free rows and each layer's form summaries, under budgets of instruction rows (least
recently used out). One `PartStore` per process (`PARTS`): event and fast, and every
simulator of a run, compile the same parts (docs/scaling.md, "What is cached where")."""

from __future__ import annotations

from dataclasses import replace

from fpgasim.bounded import BoundedCache, bounded_cache
from fpgasim.dataflow.instructions import Program
from fpgasim.dataflow.lowerings.flightllm.compiler import (
    FormCost,
    PartRows,
    compile_part,
    emission_key,
    form_cost,
    part_rows,
)
from fpgasim.dataflow.lowerings.flightllm.flightllm_emitter import Rates
from fpgasim.dataflow.lowerings.flightllm.masks import MaskSet
from fpgasim.dataflow.lowerings.flightllm.part_plan import PartGroup

_OWNER = "fpgasim.dataflow.lowerings.flightllm.part_store"

#: compiled parts kept across passes, up to this many rows in all (about 70 bytes each,
#: least recently used out): sweeps over contexts or verify lengths reuse the projections.
#: It holds the projections of x = 1..85 and the draft passes that a `generate` P = 128,
#: D = 512 meets at every context (5.0M rows)
PART_CACHE_ROWS = 6_000_000
#: the same parts' link-free rows (about 130 bytes a row, with their totals' row indices):
#: a design-space sweep over clocks and bandwidths compiles each instruction stream once and
#: prices it per board (the sweep runs the boards that share their instructions together)
ROWS_CACHE_ROWS = 2_000_000
#: link-free rows of parts that depend on the context (attention): met again only by the
#: next designs of a sweep that differ in clock or bandwidth
PASS_ROWS_CACHE_ROWS = 1_000_000
#: compiled parts that depend on the context, up to this many rows in all (least recently
#: used out): a long context's attention tiles over the keys, and every full tile of every
#: context of a verify length compiles to the same part (at L = 16,384 on V80, 19 parts
#: per pass, 6 of them distinct; the passes of one x run side by side in a prefetch)
CONTEXT_PART_ROWS = 500_000
#: form summaries kept (a few hundred bytes each)
FORM_COSTS = 200_000


class PartStore:
    """Compiled parts by (layer keys, rates, masks), under each group's own names
    (`named`); their link-free rows by (each layer's `emission_key` in its form, link-free
    rates, masks, forms) and each layer's form summaries likewise, so another clock or
    bandwidth only prices the rows again (bit-identical to compiling them), and parts whose
    rows are the same under other names or row counts (a draft pass's layers, verify
    attention in MM tiles, the full key tiles of a long context) are compiled once."""

    def __init__(self) -> None:
        self.parts: BoundedCache[Program] = bounded_cache(
            "flightllm.parts", owner=_OWNER, unit="rows",
            keys="layer keys, rates, masks", budget=PART_CACHE_ROWS,
            size_of=lambda p: len(p.instrs),
            why="the projections of every x recur at every context: LongSpec's `generate` "
            "with P = 128, D = 512 meets 5.0M rows of them; with a 4M-row budget it "
            "recompiled them at every context (66 s of CPU for that `generate`, 24 s with "
            "room for all)")
        self.link_free: BoundedCache[PartRows] = bounded_cache(
            "flightllm.link_free", owner=_OWNER, unit="rows",
            keys="each layer's emission key, link-free rates, masks, forms",
            budget=ROWS_CACHE_ROWS, size_of=lambda p: len(p.rows),
            why="designs that differ only in clock or bandwidth share their instructions "
            "(docs/flightllm-sd.md, \"Speed\"): pricing rows again costs a copy and one "
            "vectorised formula, compiling them an emission and a token resolution")
        self.per_pass: BoundedCache[PartRows] = bounded_cache(
            "flightllm.per_pass", owner=_OWNER, unit="rows",
            keys="as `flightllm.link_free`, for the parts that depend on the context",
            budget=PASS_ROWS_CACHE_ROWS, size_of=lambda p: len(p.rows),
            why="the attention parts' link-free rows, met again only by the next designs of "
            "a sweep that differ in clock or bandwidth")
        self.context_parts: BoundedCache[Program] = bounded_cache(
            "flightllm.context_parts", owner=_OWNER,
            unit="rows", keys="layer keys, rates, masks (attention, concat)",
            budget=CONTEXT_PART_ROWS, size_of=lambda p: len(p.instrs),
            why="the full key tiles of a long context are one part, met several times a "
            "pass and at every longer context of the same x: `reproduce all` compiled "
            "20,310 parts for its 2,951 passes without it, 8,648 with it")
        self.costs: BoundedCache[FormCost] = bounded_cache(
            "flightllm.form_costs", owner=_OWNER,
            keys="a layer's emission key in one form, link-free rates, masks, form",
            budget=FORM_COSTS,
            why="the MV-or-MM choice of a layer needs both forms' busiest unit; a summary "
            "is a 6 x 3 array")

    def __call__(self, group: PartGroup, rates: Rates, masks: MaskSet | None) -> Program:
        """The group's part priced for `rates`, compiled on the first ask of its rows."""
        free = rates.link_free
        keep = self.per_pass if group.per_pass else self.link_free
        layers = list(group.layers)

        def rows_of(layers, rates, masks, forms, emitted=None) -> PartRows:
            keys = tuple(emission_key(L, f, free) for L, f in zip(layers, forms, strict=True))
            return keep((keys, free, masks, forms),
                        lambda: part_rows(layers, rates, masks, forms, emitted))

        def cost_of(L, rates, masks, form) -> FormCost:
            fresh = []  # a summary made now keeps its rows for this part (not in the cache)

            def make() -> FormCost:
                fresh.append(form_cost(L, rates, masks, form))
                return replace(fresh[0], chunks=())

            kept = self.costs((emission_key(L, form, free), free, masks, form), make)
            return fresh[0] if fresh else kept

        def compiled() -> Program:
            return compile_part(layers, rates, masks, list(group.names), rows_of, cost_of)

        # attention and concat depend on the context: kept briefly, apart from the projections
        parts = self.context_parts if group.per_pass else self.parts
        return named(parts((group.keys[0], rates, masks), compiled), group.names)


def named(part: Program, names: tuple[str, ...]) -> Program:
    """The compiled part under these op names (a name is cosmetic: traces and messages show
    it, nothing matches on it): the same rows and facts (`ProgramFacts`, which no name
    enters), relabelled."""
    if part.op_names == names:
        return part
    return replace(part, op_names=names, label=" + ".join(names))


#: the process's compiled parts (see `PartStore`)
PARTS = PartStore()
