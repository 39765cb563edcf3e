"""Draft passes: which forward passes a drafter runs to build a tree (docs/accounting.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from fpgasim.config.schema import Algorithm
from fpgasim.dataflow.passes import PassSpec
from fpgasim.errors import InputError


@dataclass(frozen=True)
class DraftTree:
    """What the draft cost depends on: level widths, or EAGLE-3's depth and top-k."""

    shape: tuple[int, ...] | None = None
    depth: int | None = None
    top_k: int | None = None

    def describe(self) -> str:
        if self.shape is not None:
            return " ".join(map(str, self.shape))
        return f"depth={self.depth} top_k={self.top_k}"

    @property
    def nodes(self) -> int | None:
        return sum(self.shape) if self.shape is not None else None


def check_shape(widths: tuple[int, ...], argument: str = "tree") -> None:
    """A shape is valid when widths are >= 0, the first is >= 1, and no level follows a 0."""
    if not widths or widths[0] < 1:
        raise InputError(argument, " ".join(map(str, widths)), "the first level needs >= 1 node")
    if any(w < 0 or w > 4096 for w in widths):
        raise InputError(argument, " ".join(map(str, widths)), "widths between 0 and 4096")
    seen_zero = False
    for w in widths:
        if seen_zero and w > 0:
            raise InputError(
                argument,
                " ".join(map(str, widths)),
                "a level cannot have nodes below an empty level",
            )
        seen_zero = seen_zero or w == 0


def draft_passes(
    algorithm: Algorithm, tree: DraftTree, accepted: int, context: int
) -> list[PassSpec]:
    """The reference draft schedule of docs/accounting.md for one iteration."""
    if accepted < 1:
        raise InputError("accepted", accepted, "at least 1 (the tokens accepted last iteration)")
    kind = algorithm.kind
    if kind == "eagle3":
        if tree.depth is None or tree.top_k is None:
            raise InputError("depth/top_k", tree.describe(), "EAGLE-3 needs depth and top-k")
        return [PassSpec("eagle3", accepted, context, first=True)] + [
            PassSpec("eagle3", tree.top_k, context) for _ in range(tree.depth)
        ]
    if tree.shape is None:
        raise InputError("tree", tree.describe(), "level widths such as '4 16 16 16 16'")
    check_shape(tree.shape)
    if kind == "falcon":
        return falcon_passes(algorithm.drafter.tokens_per_pass, tree.shape, accepted, context)
    passes = [PassSpec(kind, accepted, context)]
    for width in tree.shape[:-1]:
        if width == 0:
            break
        passes.append(PassSpec(kind, width, context))
    return passes


def falcon_passes(k: int, shape: tuple[int, ...], accepted: int, context: int) -> list[PassSpec]:
    """Falcon's semi-autoregressive schedule: ceil(depth/k) passes with the relaxed mask.

    The first pass runs over the `accepted` tokens (a chain, block-causal in k-blocks) and
    proposes levels 1..k; each further pass runs over the k-block just proposed (levels
    jk+1..jk+k, their widths summed) and proposes the next k levels. A pass's tree_parents
    realise its block round robin (node j of a level hangs under node j mod w of the level
    above, as TokenTree.from_shape); the block's first level are roots (their ancestors
    sit in the drafter's KV cache). mask_block = k: a token sees its ancestors and the rest
    of its own k-block (the relaxed causal mask).
    """
    chain = tuple(range(-1, accepted - 1))
    passes = [PassSpec("falcon", accepted, context, tree_parents=chain, mask_block=k)]
    for start in range(0, len(shape) - k, k):
        block = shape[start : start + k]
        if 0 in block or shape[start + k] == 0:
            break
        parents = block_parents(block)
        passes.append(PassSpec("falcon", sum(block), context, tree_parents=parents, mask_block=k))
    return passes


def block_parents(widths: tuple[int, ...]) -> tuple[int, ...]:
    """Parent indices of consecutive levels of these widths, round robin; level 1 are roots."""
    parents: list[int] = []
    prev_first, prev_width = -1, 0
    for width in widths:
        first = len(parents)
        if prev_width == 0:
            parents.extend([-1] * width)
        else:
            parents.extend(prev_first + j % prev_width for j in range(width))
        prev_first, prev_width = first, width
    return tuple(parents)


def accepted_from_aat(aat: float) -> int:
    """Tokens accepted in the previous iteration, as the study charges it: floor(AAT), >= 1."""
    return max(1, math.floor(aat))
