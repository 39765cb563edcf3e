"""Pass-schedule helpers of drafters: level by level, the parents of a block of levels, and
the tokens accepted last iteration."""

from __future__ import annotations

import math

from fpgasim.dataflow.passes import PassSpec
from fpgasim.dataflow.token_tree import TokenTree


def level_passes(kind: str, tree: TokenTree, accepted: int, context: int) -> list[PassSpec]:
    """An autoregressive drafter's schedule for a static tree: one pass over the `accepted`
    tokens, then one pass per level but the last, over that level's nodes."""
    passes = [PassSpec(kind, accepted, context)]
    for width in tree.static_shape()[:-1]:
        if width == 0:
            break
        passes.append(PassSpec(kind, width, context))
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
