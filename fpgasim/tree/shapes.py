"""Level-width tree shapes: parsing, and the width-/depth-based baselines of docs/method.md."""

from __future__ import annotations

from fpgasim.dataflow.token_tree import check_shape
from fpgasim.errors import InputError

#: How a tree shape is written everywhere (input and output, docs/formats.md "Tree notation").
SHAPE_NOTATION = (
    "draft nodes per level below the root, whole numbers separated by spaces, e.g. '4 16 16'"
)


def parse_shape(text: str, argument: str = "tree") -> tuple[int, ...]:
    """'4 16 16' -> (4, 16, 16), validated as a tree of level widths. Spaces separate the
    levels, as every table and output writes a tree; commas (which separate the items of
    list options) are refused, so a tree is read the one way it is printed."""
    parts = text.split()
    if not parts:
        raise InputError(argument, text, SHAPE_NOTATION)
    try:
        widths = tuple(int(p) for p in parts)
    except ValueError:
        raise InputError(argument, text, SHAPE_NOTATION) from None
    check_shape(widths, argument)
    return widths


def width_based(nodes: int, max_tree: tuple[int, ...]) -> tuple[int, ...]:
    """Fill `max_tree` level by level (breadth first) with `nodes` draft nodes."""
    _check_capacity(nodes, max_tree)
    out, left = [], nodes
    for cap in max_tree:
        take = min(cap, left)
        if take == 0:
            break
        out.append(take)
        left -= take
    return tuple(out)


def depth_based(nodes: int, max_tree: tuple[int, ...]) -> tuple[int, ...]:
    """Consecutive nodes go to consecutive levels, wrapping to level 1, skipping full levels."""
    _check_capacity(nodes, max_tree)
    widths = [0] * len(max_tree)
    level = 0
    for _ in range(nodes):
        while widths[level] >= max_tree[level]:
            level = (level + 1) % len(max_tree)
        widths[level] += 1
        level = (level + 1) % len(max_tree)
    while widths and widths[-1] == 0:
        widths.pop()
    return tuple(widths)


def _check_capacity(nodes: int, max_tree: tuple[int, ...]) -> None:
    if nodes < 1 or nodes > sum(max_tree):
        raise InputError(
            "verify_len",
            nodes + 1,
            f"between 2 and {sum(max_tree) + 1} for this algorithm's maximal tree",
        )
