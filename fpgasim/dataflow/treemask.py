"""Tree attention masks at tile granularity: which (query block, key block) tiles are needed.

A token tree of n tokens is given as a parent tuple (parent index per token, -1 for a root).
Token i may attend to token j of the tree iff j is i or an ancestor of i (the causal tree
mask). Falcon's relaxed causal mask (`block` = k > 1) also lets a token see every token of
its own k-block: its descendants whose depth falls in the same block of k levels (depth
counted from the pass's roots, 0-based; blocks are depths 0..k-1, k..2k-1, ...). For a
chain this is the block-causal mask (position i sees j <= i and the rest of its block).
The realistic lowering skips score tiles in which no query sees any key; the study's
accounting (and the ideal mode) charges the dense n x n block.
"""

from __future__ import annotations

import numpy as np


def visibility(parents: tuple[int, ...], block: int = 1) -> np.ndarray:
    """n x n boolean matrix: [i, j] is True iff tree token i may attend to tree token j.

    block = 1: the causal tree mask (j is i or an ancestor of i). block = k > 1: Falcon's
    relaxed mask, which adds j when i is an ancestor of j in the same k-block of depths.
    """
    if block < 1:
        raise ValueError(f"mask block = {block}; give 1 (causal tree mask) or k > 1 (relaxed)")
    n = len(parents)
    vis = np.zeros((n, n), dtype=bool)
    depth = np.zeros(n, dtype=np.int64)
    for i in range(n):
        j, steps = i, 0
        while j >= 0:
            if j >= n or steps > n:
                raise ValueError(
                    f"tree_parents {parents!r} is not a tree: token {i} has an invalid or "
                    f"cyclic ancestor chain; give -1 for roots and indices in 0..{n - 1}"
                )
            vis[i, j] = True
            j = parents[j]
            steps += 1
        depth[i] = steps - 1
    if block > 1:
        same_block = (depth[:, None] // block) == (depth[None, :] // block)
        vis |= vis.T & same_block  # i sees its descendants j inside its own k-block
    return vis


def tile_visibility(vis: np.ndarray, query_block: int, key_block: int) -> np.ndarray:
    """Boolean [query blocks x key blocks]: does any query of the block see any key of the block."""
    n_q, n_k = vis.shape
    qb = -(-n_q // query_block)
    kb = -(-n_k // key_block)
    padded = np.zeros((qb * query_block, kb * key_block), dtype=bool)
    padded[:n_q, :n_k] = vis
    return padded.reshape(qb, query_block, kb, key_block).any(axis=(1, 3))


def visible_tile_elements(vis: np.ndarray, query_block: int, key_block: int) -> int:
    """Score elements (per head) inside the tiles that are computed: real rows x real columns."""
    n_q, n_k = vis.shape
    tiles = tile_visibility(vis, query_block, key_block)
    rows = np.minimum(query_block, n_q - np.arange(tiles.shape[0]) * query_block)
    cols = np.minimum(key_block, n_k - np.arange(tiles.shape[1]) * key_block)
    return int((tiles * np.outer(rows, cols)).sum())
