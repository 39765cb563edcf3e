"""The draft tree costed at a verification length: the algorithm's default, width- or
depth-based trees from its maximal tree, or the optimal tree of its embedded acceptance.
"""

from __future__ import annotations

from fpgasim.config.schema import Algorithm
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import InputError
from fpgasim.tree.builders import dynamic_params
from fpgasim.tree.embedded import embedded_tree
from fpgasim.tree.shapes import depth_based, width_based

TREE_METHODS = ("width", "depth", "default", "optimal")


def default_tree(algorithm: Algorithm) -> TokenTree:
    """The algorithm's GPU default tree (its Ori set)."""
    d = algorithm.default_tree
    if algorithm.dynamic_tree:
        return TokenTree.dynamic(d.depth, d.top_k)
    return TokenTree.from_shape(tuple(d.shape or ()))


def tree_for_verify_len(
    algorithm: Algorithm, verify_len: int, method: str = "width", context: int | None = None
) -> TokenTree:
    """A draft tree of verify_len-1 nodes built by `method` (width, depth) from the max tree.

    `optimal`: the level widths of the optimal tree under the algorithm's embedded
    acceptance model at `context` (default: the model's reference context), realised round
    robin as every shaped tree is (FlightLLM's compiler costs every tree of x tokens alike,
    so the parents move no pass's time: docs/trees.md); EAGLE-3 gets a depth/top-k whose
    dynamic tree holds it.
    """
    if verify_len < 2:
        raise InputError("verify_len", verify_len, "at least 2 with an algorithm (x=1 is AD)")
    nodes = verify_len - 1
    if method == "optimal":
        tree = embedded_tree(algorithm, verify_len, context)
        if algorithm.dynamic_tree:
            depth, top_k = dynamic_params(tree)
            return TokenTree.dynamic(depth, top_k)
        return TokenTree.from_shape(tree.level_widths())
    if algorithm.dynamic_tree:
        d = algorithm.default_tree
        return TokenTree.dynamic(min(d.depth, nodes), min(d.top_k, nodes))  # schema: set
    if method == "default":
        return default_tree(algorithm)
    max_tree = tuple(algorithm.max_tree or algorithm.default_tree.shape or ())
    if method == "width":
        return TokenTree.from_shape(width_based(nodes, max_tree))
    if method == "depth":
        return TokenTree.from_shape(depth_based(nodes, max_tree))
    raise InputError("tree_method", method, f"one of {', '.join(TREE_METHODS)}")


