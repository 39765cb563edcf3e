"""Prior-score tree search (docs/method.md): score maximal-tree nodes by how often accepted.

Every iteration's accepted path adds 1 to each node on it. Nodes are ordered by score
(descending), ties broken parent-first (shallower first, then node id), so a parent always
precedes its children and every prefix of the order is a valid tree; the tree of n draft
nodes is the top n. Its empirical AAT on the traces is 1 + (sum of its scores) / iterations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import InputError
from fpgasim.tree.positional import walk
from fpgasim.tree.traces import Traces

if TYPE_CHECKING:  # pandas (0.3-0.7 s) only when a search result is tabulated
    import pandas as pd


@dataclass(frozen=True, eq=False)
class PriorScore:
    """Scores of the maximal tree's nodes and their parent-first order."""

    max_tree: TokenTree
    scores: np.ndarray  # accepted count per node of max_tree (root: every iteration)
    order: np.ndarray  # node ids of max_tree, root first
    iterations: int
    truncated: int  # iterations whose logged path went deeper than max_tree holds

    def _check(self, nodes: int) -> None:
        if nodes < 0 or nodes > self.max_tree.nodes:
            raise InputError(
                "max_nodes", nodes, f"between 0 and {self.max_tree.nodes} (the maximal tree)"
            )

    def tree(self, nodes: int) -> TokenTree:
        """The prior-score tree with `nodes` draft nodes (x = nodes + 1), drafter ranks kept."""
        self._check(nodes)
        chosen = self.order[: nodes + 1]
        new_id = np.full(self.max_tree.size, -1, dtype=np.int64)
        new_id[chosen] = np.arange(nodes + 1)
        par = np.asarray(self.max_tree.parents, dtype=np.int64)[chosen]
        parents = np.where(par >= 0, new_id[np.maximum(par, 0)], -1)
        return TokenTree.from_parents(parents.tolist(), self.max_tree.ranks[chosen].tolist())

    def aat(self, nodes: int) -> float:
        """Mean accepted tokens on the traces of the tree with `nodes` draft nodes."""
        self._check(nodes)
        return float(self.scores[self.order[: nodes + 1]].sum() / self.iterations)

    def to_frame(self, max_nodes: int | None = None) -> pd.DataFrame:
        """One row per tree size: verify_len, nodes, aat (on the traces), tree_shape, parents."""
        import pandas as pd

        top = self.max_tree.nodes if max_nodes is None else max_nodes
        self._check(top)
        cum = np.cumsum(self.scores[self.order]) / self.iterations
        rows = []
        for n in range(1, top + 1):
            t = self.tree(n)
            rows.append(
                {
                    "verify_len": n + 1,
                    "nodes": n,
                    "aat": float(cum[n]),
                    "tree_shape": t.shape_str(),
                    "parents": " ".join(map(str, t.parents)),
                    "ranks": " ".join(map(str, t.ranks.tolist())),
                }
            )
        return pd.DataFrame(rows)


def prior_score_search(traces: Traces, max_tree: TokenTree) -> PriorScore:
    """Score every node of `max_tree` by the traces and order them parent-first."""
    nodes = walk(max_tree, traces.ranks)
    hit = nodes[nodes >= 0]
    scores = np.bincount(hit, minlength=max_tree.size).astype(np.int64)
    scores[0] = traces.iterations
    truncated = int(((nodes < 0) & (traces.ranks[:, : nodes.shape[1]] >= 0)).any(axis=1).sum())
    ids = np.arange(max_tree.size)
    order = np.lexsort((ids, max_tree.depths, -scores))
    return PriorScore(max_tree, scores, order, traces.iterations, truncated)


def trie_tree(traces: Traces) -> TokenTree:
    """The smallest tree holding every logged path (drafter ranks kept), level by level."""
    paths = sorted({tuple(int(r) for r in row if r >= 0) for row in traces.ranks}, key=_bfs_key)
    ids: dict[tuple[int, ...], int] = {(): 0}
    parents, ranks = [-1], [0]
    for path in paths:
        for cut in range(1, len(path) + 1):
            prefix = path[:cut]
            if prefix not in ids:
                ids[prefix] = len(parents)
                parents.append(ids[prefix[:-1]])
                ranks.append(prefix[-1])
    return _level_order(parents, ranks)


def _bfs_key(path: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    return (len(path), path)


def _level_order(parents: list[int], ranks: list[int]) -> TokenTree:
    tree = TokenTree.from_parents(parents, ranks)
    paths = tree.rank_paths()
    order = sorted(range(len(parents)), key=lambda i: _bfs_key(paths[i]))
    new_id = {old: new for new, old in enumerate(order)}
    return TokenTree.from_parents(
        [-1] + [new_id[parents[o]] for o in order[1:]], [0] + [ranks[o] for o in order[1:]]
    )
