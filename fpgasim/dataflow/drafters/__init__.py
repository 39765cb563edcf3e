"""Drafters as plug-ins: the registry, the three built-in drafters, and the two calls every
layer uses (a draft phase's passes; one pass, target or draft, lowered to ops).

Adding a drafter: one module defining a `DrafterPlugin` (and its `DrafterSchema`), passed
to `register_drafter`, and an algorithm YAML naming its kind.
"""

from __future__ import annotations

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
from fpgasim.dataflow.ops import PassOps
from fpgasim.dataflow.passes import PassSpec, target_pass
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
    """One pass lowered to ops: the target's, or its drafter's plug-in builds it."""
    if spec.kind == "target":
        return target_pass(model, spec.tokens, spec.context, board)
    plugin = DRAFTERS.get(DrafterKind(spec.kind))
    if plugin is None or not isinstance(drafter, plugin.schema):
        raise ValueError(f"no lowering for pass kind {spec.kind!r} with drafter {drafter!r}")
    return plugin.build_pass(spec, board, model, drafter)


__all__ = [
    "DRAFTERS",
    "Counts",
    "DrafterKind",
    "DrafterPlugin",
    "draft_passes",
    "drafter_plugin",
    "lower_pass",
    "ops_counts",
    "register_drafter",
    "unregister_drafter",
]
