"""Tree builders beside the optimal ones: width/depth baselines, EAGLE's dynamic tree, max trees.

The width- and depth-based baselines of docs/method.md give level widths (`shapes.py`); here
they become trees by `TokenTree.from_shape` (each level's nodes on the most probable
free slots under the model, or round robin without one).
"""

from __future__ import annotations

import heapq

from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import InputError
from fpgasim.tree.positional import PositionalModel
from fpgasim.tree.shapes import depth_based, width_based


def width_tree(
    nodes: int, max_shape: tuple[int, ...], model: PositionalModel | None = None
) -> TokenTree:
    """Width-based baseline: `nodes` draft nodes filling `max_shape` breadth first."""
    return TokenTree.from_shape(width_based(nodes, max_shape), model)


def depth_tree(
    nodes: int, max_shape: tuple[int, ...], model: PositionalModel | None = None
) -> TokenTree:
    """Depth-based baseline: consecutive nodes on consecutive levels of `max_shape`."""
    return TokenTree.from_shape(depth_based(nodes, max_shape), model)


def even_max_shape(nodes: int, levels: int, first_cap: int | None = None) -> tuple[int, ...]:
    """`nodes` spread evenly over `levels` levels, level 1 capped at `first_cap`."""
    if nodes < 1 or levels < 1:
        raise InputError("max_tree", f"{nodes} nodes over {levels} levels", "both >= 1")
    levels = min(levels, nodes)
    widths = [nodes // levels + (1 if i < nodes % levels else 0) for i in range(levels)]
    if first_cap is not None and widths[0] > first_cap:
        spill = widths[0] - first_cap
        widths[0] = first_cap
        for i in range(spill):
            widths[1 + i % (levels - 1)] += 1
    return tuple(widths)


def dynamic_tree(model: PositionalModel, nodes: int, depth: int, top_k: int) -> TokenTree:
    """EAGLE's dynamic tree: expand the top-k nodes per level, keep the best `nodes` overall.

    The first pass drafts the root's top-k children; each of the `depth` further passes
    feeds the top-k nodes of the newest level (by path probability) and drafts top-k
    children of each; finally all drafted nodes are reranked by path probability (ties:
    shallower, then earlier) and the top `nodes` kept, so the tree has <= depth+1 levels.
    """
    if depth < 0 or top_k < 1:
        raise InputError("depth/top_k", (depth, top_k), "depth >= 0 and top-k >= 1")
    parents, ranks, probs, depths = [-1], [0], [1.0], [0]
    level = [0]
    for d in range(1, depth + 2):
        fed = level if d == 1 else heapq.nsmallest(top_k, level, key=lambda v: (-probs[v], v))
        level = []
        for u in fed:
            for r in range(top_k):
                parents.append(u)
                ranks.append(r)
                probs.append(probs[u] * model.p(d, r))
                depths.append(d)
                level.append(len(parents) - 1)
    if nodes < 0 or nodes > len(parents) - 1:
        raise InputError(
            "verify_len", nodes + 1, f"at most {len(parents)} for depth {depth}, top-k {top_k}"
        )
    keep = sorted(range(1, len(parents)), key=lambda v: (-probs[v], depths[v], v))[:nodes]
    keep = sorted(keep, key=lambda v: (depths[v], v))
    new_id = {0: 0} | {old: new for new, old in enumerate(keep, start=1)}
    return TokenTree.from_parents(
        [-1] + [new_id[parents[v]] for v in keep], [0] + [ranks[v] for v in keep]
    )


def dynamic_params(tree: TokenTree) -> tuple[int, int]:
    """(draft depth, top-k) of an EAGLE dynamic tree that can hold `tree`.

    depth = levels - 1 (the first pass drafts level 1), at least 1; top-k covers the
    largest rank used and the most nodes with children on any level.
    """
    if tree.nodes == 0:
        return 1, 1
    counts = tree.children_counts()
    expanded = max(int(((counts > 0) & (tree.depths == d)).sum()) for d in range(tree.depth))
    top_k = max(int(tree.ranks.max()) + 1, expanded, 1)
    return max(1, tree.depth - 1), top_k
