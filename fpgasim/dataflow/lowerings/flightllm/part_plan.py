"""A pass's hardware layers cut into barrier-delimited parts: the distinct parts (`PartGroup`)
and the order they run in. Every layer but concat ends in a full barrier
(docs/flightllm-model.md §3), so a part is a run of layers up to one; runs of the same layers
under the same short names are one part, compiled once."""

from __future__ import annotations

from dataclasses import dataclass

from fpgasim.bounded import BoundedCache, bounded_cache
from fpgasim.dataflow.lowerings.flightllm.layers import HwLayer

#: layer kinds whose instructions depend on the context: their priced parts are not kept
#: across passes (a sweep over x or contexts meets each once), leaving room to the
#: projections; their link-free rows are, briefly (part_store.PASS_ROWS_CACHE_ROWS)
CONTEXT_KINDS = frozenset({"attention_qk", "attention_pv", "concat"})


@dataclass(frozen=True)
class PartGroup:
    """One barrier-delimited part of a pass: its layers, what identifies its instructions
    (layer keys and short names) and whether it depends on the context."""

    layers: tuple[HwLayer, ...]
    keys: tuple
    names: tuple[str, ...]
    per_pass: bool  # attention or concat: met once in a sweep, so not kept across passes


#: a plan: the distinct parts of a pass (first occurrence order) and the order they run in
Plan = tuple[tuple[PartGroup, ...], tuple[int, ...]]

#: the grouping of recent hardware-layer tuples (by identity; the tuples come from the
#: memoised `*_layers_of`), so a pass of a shape seen before is not regrouped
_PLANS: BoundedCache[tuple[tuple, Plan]] = bounded_cache(
    "flightllm.plans", owner="fpgasim.dataflow.lowerings.flightllm.part_plan",
    keys="a hardware-layer tuple's identity (held)", budget=256,
    why="a pass of a shape seen before is not grouped into parts again")


def short_name(name: str) -> str:
    """The op name without its decoder-layer prefix (cosmetic: names are never matched)."""
    head, _, rest = name.partition(".")
    return rest if head.startswith("l") and head[1:].isdigit() and rest else name


def plan(hw: tuple) -> Plan:
    """The distinct parts of a pass (first occurrence order) and the order they run in."""
    # keyed by identity: the entry holds `hw`, so no other tuple has its id while it is kept
    return _PLANS(id(hw), lambda: (hw, _periodic_plan(hw) or _group(hw)))[1]


def _periodic_plan(hw: tuple) -> Plan | None:
    """The plan of a pass whose decoder layers are the same objects repeated (see
    `hardware_layers_of`): one decoder layer and the tail grouped, the order repeated;
    None for any other pass."""
    try:
        period = hw.index(hw[0], 1)
    except ValueError:
        return None
    repeats = 1
    while hw[repeats * period:(repeats + 1) * period] == hw[:period]:  # identity first
        repeats += 1
    if repeats < 2 or hw[period - 1].kind == "concat":
        return None
    head = hw[:period]
    if any(x is not y for x, y in zip(hw[period:repeats * period], head * (repeats - 1),
                                         strict=True)):
        return None  # equal but distinct objects: group generically
    groups, order = _group(head + hw[repeats * period:])
    runs = sum(1 for x in head if x.kind != "concat")  # the period's runs
    return groups, order[:runs] * repeats + order[runs:]


def _group(hw: tuple) -> Plan:
    """Barrier-delimited runs of layers, the distinct ones as groups, and their order."""
    runs: list[list[HwLayer]] = []
    current: list[HwLayer] = []
    for layer in hw:
        current.append(layer)
        if layer.kind != "concat":  # every layer but concat ends in a full barrier
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    groups: list[PartGroup] = []
    index: dict[tuple, int] = {}
    same_objects: dict[tuple[int, ...], int] = {}  # decoder layers repeat the same objects
    order: list[int] = []
    for run in runs:
        ids = tuple(map(id, run))
        k = same_objects.get(ids)
        if k is None:
            names = tuple(short_name(layer.name) for layer in run)
            keys = (tuple(layer.key() for layer in run), names)
            k = index.get(keys)
            if k is None:
                k = index[keys] = len(groups)
                per_pass = any(layer.kind in CONTEXT_KINDS for layer in run)
                groups.append(PartGroup(tuple(run), keys, names, per_pass))
            same_objects[ids] = k
        order.append(k)
    return tuple(groups), tuple(order)
