"""What a drafter plug-in provides, and the registry of plug-ins keyed by drafter kind.

A drafter is one module (fpgasim/dataflow/drafters/longspec.py is the simplest) holding a
`DrafterPlugin`: its schema (a `DrafterSchema` of fpgasim.config.schema, which also states
its tree family), the draft passes it runs to build a tree, and the builder of one draft
pass (ops and graph). The analytic engine's element counts of a draft pass are the sums of
that pass's ops (`ops_counts`), so the accounting and the lowered program cannot drift.
Registering the plug-in also registers its schema, so algorithm files can name the kind.
A plug-in that also has `flightllm_graph` (`FlightLLMDrafter`) runs on FlightLLM boards.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NewType, Protocol

import numpy as np

from fpgasim.config.board import Board
from fpgasim.config.schema import (
    DRAFTER_SCHEMAS,
    DrafterSchema,
    TargetModel,
    register_drafter_schema,
    unregister_drafter_schema,
)
from fpgasim.errors import InputError

if TYPE_CHECKING:
    from fpgasim.dataflow.lowerings.flightllm.drafts import DraftGraph
    from fpgasim.dataflow.ops import PassOps
    from fpgasim.dataflow.passes import PassSpec
    from fpgasim.dataflow.token_tree import TokenTree

#: A drafter kind: the `drafter.kind` of an algorithm file and the `kind` of its passes.
DrafterKind = NewType("DrafterKind", str)

#: Element counts of a pass (weights, activations, KV, stores, MACs), numpy for sweeps.
Counts = dict[str, np.ndarray]


class DrafterPlugin(Protocol):
    """One drafter: its schema, draft schedule and pass builder."""

    kind: DrafterKind
    schema: type[DrafterSchema]

    def draft_passes(
        self, drafter: DrafterSchema, tree: TokenTree, accepted: int, context: int
    ) -> list[PassSpec]:
        """The passes of one draft phase building `tree` after `accepted` tokens."""
        ...

    def build_pass(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: DrafterSchema
    ) -> PassOps:
        """One draft pass lowered to ops and their dataflow graph."""
        ...

    def weight_count(self, model: TargetModel, drafter: DrafterSchema) -> int:
        """The drafter's own weights (shared ones, e.g. the target's LM head, left out)."""
        ...

    def kv_tokens(self, drafter: DrafterSchema, context: int, verify_len: int) -> int:
        """Positions of the drafter's own KV cache at `context` with `verify_len` tokens."""
        ...


class FlightLLMDrafter(DrafterPlugin, Protocol):
    """A drafter FlightLLM's lowering compiles (it checks for the method, so it is optional)."""

    def flightllm_graph(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: DrafterSchema
    ) -> DraftGraph:
        """One draft pass in FlightLLM's layer types, and the dimensions it is built for."""
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
