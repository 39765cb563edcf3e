"""What a drafter plug-in provides, and the registry of plug-ins keyed by drafter kind.

A drafter is one module (fpgasim/dataflow/drafters/longspec.py is the simplest) holding a
`DrafterPlugin`: its schema (a `DrafterSchema` of fpgasim.config.schema, which also states
its tree family), the draft passes it runs to build a tree, and its network: one
lowering-neutral `DraftNetwork` per pass (drafters/network.py). Everything else is derived
from that one description: the study's ops (and so the analytic engine's counts and the
drafter's weights, `dataflow/network_ops.py`), its own KV cache, and each lowering's layers.
Registering the plug-in also registers its schema, so algorithm files can name the kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NewType, Protocol

import numpy as np

from fpgasim.config.schema import (
    DRAFTER_SCHEMAS,
    DrafterSchema,
    register_drafter_schema,
    unregister_drafter_schema,
)
from fpgasim.errors import InputError

if TYPE_CHECKING:
    from fpgasim.dataflow.drafters.network import DraftNetwork
    from fpgasim.dataflow.ops import PassOps
    from fpgasim.dataflow.passes import PassSpec
    from fpgasim.dataflow.token_tree import TokenTree

#: A drafter kind: the `drafter.kind` of an algorithm file and the `kind` of its passes.
DrafterKind = NewType("DrafterKind", str)

#: Element counts of a pass (weights, activations, KV, stores, MACs), numpy for sweeps.
Counts = dict[str, np.ndarray]


class DrafterPlugin(Protocol):
    """One drafter: its schema, draft schedule and network."""

    kind: DrafterKind
    schema: type[DrafterSchema]

    def draft_passes(
        self, drafter: DrafterSchema, tree: TokenTree, accepted: int, context: int
    ) -> list[PassSpec]:
        """The passes of one draft phase building `tree` after `accepted` tokens."""
        ...

    def network(self, spec: PassSpec, drafter: DrafterSchema) -> DraftNetwork:
        """The network one draft pass runs (its first pass, `spec.first`, runs every block
        the drafter has: its weights are counted from it)."""
        ...


DRAFTERS: dict[DrafterKind, DrafterPlugin] = {}


def register_drafter(plugin: DrafterPlugin) -> None:
    """Add a drafter plug-in (and its schema, if new); a kind registered twice is an error."""
    if plugin.kind in DRAFTERS:
        raise ValueError(f"drafter kind {plugin.kind!r} is already registered")
    if plugin.kind not in DRAFTER_SCHEMAS:
        register_drafter_schema(plugin.schema)
    elif DRAFTER_SCHEMAS[plugin.kind] is not plugin.schema:
        raise ValueError(f"drafter kind {plugin.kind!r}: another schema is registered")
    DRAFTERS[plugin.kind] = plugin


def unregister_drafter(kind: str) -> None:
    """Remove a plug-in and its schema (tests register theirs for their duration only)."""
    DRAFTERS.pop(DrafterKind(kind))
    unregister_drafter_schema(kind)


def drafter_plugin(kind: str) -> DrafterPlugin:
    """The plug-in of a drafter kind; an unknown kind names the registered ones."""
    plugin = DRAFTERS.get(DrafterKind(kind))
    if plugin is None:
        raise InputError("drafter.kind", kind, f"one of {', '.join(DRAFTERS)}")
    return plugin


def ops_counts(ops: PassOps) -> Counts:
    """The element counts of a lowered pass: the sums over its ops (`PassOps.totals`)."""
    t = ops.totals()
    keys = {"weight": "weight_elems", "act": "act_elems", "kv": "kv_elems"}
    keys |= {"store": "store_elems", "macs": "macs"}
    return {name: np.float64(t[total]) for name, total in keys.items()}
