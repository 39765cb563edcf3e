"""Drafters as plug-ins: the registry, the three built-in drafters, and the calls every
layer uses (a draft phase's passes; one pass, target or draft, lowered to ops; a draft
pass's network; the drafter's weights and own KV cache, derived from its network).

Adding a drafter: one module defining a `DrafterPlugin` (its `DrafterSchema`, draft
schedule and `network`), passed to `register_drafter`, and an algorithm YAML naming its
kind.
"""

from __future__ import annotations

from fpgasim.bounded import memoised
from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, DrafterSchema, TargetModel
from fpgasim.dataflow.drafters.base import (
    DRAFTERS,
    Counts,
    DrafterKind,
    DrafterPlugin,
    drafter_plugin,
    ops_counts,
    register_drafter,
    unregister_drafter,
)
from fpgasim.dataflow.drafters.eagle3 import Eagle3
from fpgasim.dataflow.drafters.falcon import Falcon
from fpgasim.dataflow.drafters.longspec import LongSpec
from fpgasim.dataflow.drafters.network import DraftNetwork
from fpgasim.dataflow.network_ops import network_ops, network_weight_count
from fpgasim.dataflow.ops import PassOps
from fpgasim.dataflow.passes import PassSpec
from fpgasim.dataflow.study_counts import target_pass
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import InputError

for _plugin in (LongSpec(), Eagle3(), Falcon()):
    register_drafter(_plugin)


def draft_passes(
    algorithm: Algorithm, tree: TokenTree, accepted: int, context: int
) -> list[PassSpec]:
    """The draft passes of one iteration: the algorithm's drafter building `tree`."""
    if accepted < 1:
        raise InputError("accepted", accepted, "at least 1 (the tokens accepted last iteration)")
    plugin = drafter_plugin(algorithm.kind)
    return plugin.draft_passes(algorithm.drafter, tree, accepted, context)


def lower_pass(
    spec: PassSpec, board: Board, model: TargetModel, drafter: DrafterSchema | None
) -> PassOps:
    """One pass lowered to ops: the target's, or its drafter's network's (`network_ops`)."""
    if spec.kind == "target":
        return target_pass(model, spec.tokens, spec.context, board)
    return network_ops(draft_network(spec, drafter), spec.context, board, model)


def draft_network(spec: PassSpec, drafter: DrafterSchema | None) -> DraftNetwork:
    """The network of one draft pass, from its drafter's plug-in (the pass's kind)."""
    plugin = DRAFTERS.get(DrafterKind(spec.kind))
    if plugin is None or not isinstance(drafter, plugin.schema):
        raise ValueError(f"no network for pass kind {spec.kind!r} with drafter {drafter!r}")
    return plugin.network(spec, drafter)


def first_network(drafter: DrafterSchema) -> DraftNetwork:
    """The drafter's first pass (one token, no context): it runs every block it has."""
    return draft_network(PassSpec(drafter.kind, 1, 0, first=True), drafter)


@memoised("drafters.weight_count", owner="fpgasim.dataflow.drafters",
          keys="target model, drafter", budget=64,
          why="counted off an op graph built for the purpose (0.24 ms for EAGLE-3's), and "
          "`memory_bytes` asks on every result row and every x of a solve; a hit costs 2.3 us")
def drafter_weight_count(model: TargetModel, drafter: DrafterSchema) -> int:
    """The drafter's own weights (shared ones, e.g. the target's LM head, left out; norms
    too), counted from the ops of its first pass."""
    return network_weight_count(first_network(drafter), model)


def drafter_kv_tokens(drafter: DrafterSchema, context: int, verify_len: int) -> int:
    """Positions of the drafter's own KV cache at `context` with `verify_len` tokens."""
    return first_network(drafter).own_cache_tokens(context, verify_len)


__all__ = [
    "DRAFTERS",
    "Counts",
    "DrafterKind",
    "DraftNetwork",
    "DrafterPlugin",
    "draft_network",
    "draft_passes",
    "drafter_kv_tokens",
    "drafter_weight_count",
    "first_network",
    "drafter_plugin",
    "lower_pass",
    "ops_counts",
    "register_drafter",
    "unregister_drafter",
]
