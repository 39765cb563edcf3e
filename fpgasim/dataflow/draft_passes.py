"""The draft tree a drafter builds, and the pass schedule of level-by-level drafters."""

from __future__ import annotations

import math
from dataclasses import dataclass

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

    def static_shape(self) -> tuple[int, ...]:
        """The level widths of a static tree, checked (a dynamic tree has none: an error)."""
        if self.shape is None:
            raise InputError("tree", self.describe(), "level widths such as '4 16 16 16 16'")
        check_shape(self.shape)
        return self.shape

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


def level_passes(kind: str, tree: DraftTree, accepted: int, context: int) -> list[PassSpec]:
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
