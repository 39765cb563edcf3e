"""Embedded acceptance of the shipped algorithms: AAT curves and optimal trees without tables.

The algorithm file's `acceptance` block is a positional model (docs/trees.md says how it
was calibrated). For every x the tree is the optimal tree of x-1 nodes under that model
at the given context, within the model's depth bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fpgasim.config.schema import Algorithm, PositionalAcceptance
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import ConfigError, InputError
from fpgasim.tree.builders import dynamic_params, dynamic_tree
from fpgasim.tree.optimal import MAX_SIZE, optimal_trees
from fpgasim.tree.positional import PositionalModel

if TYPE_CHECKING:  # pandas (0.3-0.7 s) only when a curve is tabulated, not for a tree
    import pandas as pd


def embedded_acceptance(algorithm: Algorithm) -> PositionalAcceptance:
    """The algorithm's acceptance block, or a ConfigError saying how to add one."""
    if algorithm.acceptance is None:
        raise ConfigError(
            algorithm.id,
            "acceptance",
            None,
            "no embedded acceptance model; add an `acceptance:` block (docs/trees.md) or use "
            "measured AAT tables and a width/depth tree method",
        )
    return algorithm.acceptance


def embedded_model(algorithm: Algorithm, context: int | None = None) -> PositionalModel:
    """The algorithm's positional model at `context` (default: its reference context)."""
    return PositionalModel.from_config(embedded_acceptance(algorithm), context)


def embedded_max_depth(algorithm: Algorithm) -> int:
    """Depth bound of embedded optimal trees: acceptance.max_depth, else the maximal tree's."""
    acc = embedded_acceptance(algorithm)
    if acc.max_depth is not None:
        return acc.max_depth
    if algorithm.max_tree:
        return len(algorithm.max_tree)
    if algorithm.default_tree.shape:
        return len(algorithm.default_tree.shape)
    return algorithm.default_tree.depth + 1  # EAGLE-3: the schema requires depth


def default_token_tree(algorithm: Algorithm, model: PositionalModel) -> TokenTree:
    """The algorithm's GPU default tree (Ori set) as a TokenTree.

    A static shape is realised round robin (`TokenTree.from_shape` without a model: for
    4 16 16 16 16, four children per level-1 node, then one chain under each); EAGLE-3's
    default is its dynamic tree (depth, top-k, total tokens) under `model`.
    """
    d = algorithm.default_tree
    if d.shape:
        return TokenTree.from_shape(d.shape)
    if d.depth is None or d.top_k is None:
        raise ConfigError(algorithm.id, "default_tree", d, "a shape, or depth and top_k")
    return dynamic_tree(model, dynamic_tree_nodes(algorithm), d.depth, d.top_k)


#: Draft tokens EAGLE's dynamic tree keeps after reranking when an algorithm file gives no
#: `default_tree.total_tokens`: the EAGLE-2/EAGLE-3 reference default `total_token=60`
#: (cited in workloads/algorithms/eagle3.yaml, which sets it explicitly).
DEFAULT_TOTAL_TOKENS = 60


def dynamic_tree_nodes(algorithm: Algorithm) -> int:
    """Draft nodes of a dynamic default tree: `total_tokens`, else what depth x top_k^2
    can hold, at most DEFAULT_TOTAL_TOKENS."""
    d = algorithm.default_tree
    return d.total_tokens or min(d.top_k * d.top_k * d.depth, DEFAULT_TOTAL_TOKENS)


def default_tree_aat(algorithm: Algorithm, context: int | None = None) -> float:
    """Expected AAT of the default tree under the embedded model (tau at the Ori set)."""
    model = embedded_model(algorithm, context)
    return model.expected_aat(default_token_tree(algorithm, model))


def embedded_tree(
    algorithm: Algorithm, verify_len: int, context: int | None = None, max_depth: int | None = None
) -> TokenTree:
    """The optimal tree of verify_len-1 draft nodes under the embedded model at `context`."""
    if verify_len < 1 or verify_len > MAX_SIZE:
        raise InputError("verify_len", verify_len, f"between 1 and {MAX_SIZE}")
    model = embedded_model(algorithm, context)
    depth = embedded_max_depth(algorithm) if max_depth is None else max_depth
    return optimal_trees(model, [verify_len], depth)[0]


def embedded_curve(
    algorithm: Algorithm,
    context: int,
    verify_lens: Sequence[int],
    max_depth: int | None = None,
) -> pd.DataFrame:
    """AAT of the embedded model's optimal tree for every x: one row per verify_len.

    Columns: verify_len, aat, tree_shape (level widths below the root, '' for x = 1);
    EAGLE-3 adds draft_depth and draft_top_k (nullable ints), a dynamic-tree setting whose
    tree holds the optimal one (depth = levels - 1, at least 1; top-k = widest need).
    """
    import pandas as pd

    xs = [int(x) for x in verify_lens]
    bad = [x for x in xs if x < 1 or x > MAX_SIZE]
    if bad:
        raise InputError("verify_lens", bad[0], f"verification lengths between 1 and {MAX_SIZE}")
    if context < 1:
        raise InputError("context", context, "a context length >= 1")
    model = embedded_model(algorithm, context)
    depth = embedded_max_depth(algorithm) if max_depth is None else max_depth
    if depth < 1 or depth > 256:
        raise InputError("max_depth", depth, "between 1 and 256 levels")
    trees = optimal_trees(model, xs, depth)
    frame = pd.DataFrame(
        {
            "verify_len": xs,
            "aat": [model.expected_aat(t) for t in trees],
            "tree_shape": [t.shape_str() for t in trees],
        }
    )
    if algorithm.dynamic_tree:
        params = [dynamic_params(t) if t.nodes else (None, None) for t in trees]
        frame["draft_depth"] = pd.array([p[0] for p in params], dtype="Int64")
        frame["draft_top_k"] = pd.array([p[1] for p in params], dtype="Int64")
    return frame
