"""Optimal trees under a positional model: greedy by path probability, and Sequoia's DP.

Size N counts the root (N = x); depth D bounds the levels below the root. A node's
children always take ranks 0, 1, ... (the drafter's top candidates), so a rank-r child
needs ranks 0..r-1 beside it. Greedy repeatedly adds the free slot of highest path
probability; when every row of p is non-increasing in rank, the N-1 most probable nodes
form a tree and greedy is optimal for every N. Sequoia's dynamic program is optimal for
any p.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fpgasim.bounded import memoised
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import InputError
from fpgasim.tree.positional import PositionalModel

MAX_SIZE = 4096
#: Sequoia's DP costs about depth x ranks x N^2 cell updates (numpy, 50-100 million a second
#: on one core, benchmarks/bench_tree.py): larger problems are refused up front.
DP_MAX_CELLS = 300_000_000
#: Largest N for the DP: its N x N work arrays (8 bytes a cell, a few of them) stay < 200 MB.
DP_MAX_SIZE = 2048


@dataclass(frozen=True)
class OptimalTree:
    """A tree and its expected AAT under the model it was built for."""

    tree: TokenTree
    expected_aat: float
    method: str  # "greedy" or "dp"


def _check(size: int, max_depth: int | None) -> int:
    if size < 1 or size > MAX_SIZE:
        raise InputError("size", size, f"a tree size N (root included) between 1 and {MAX_SIZE}")
    if max_depth is None:
        return max(size - 1, 0)
    if max_depth < 0 or max_depth > 256:
        raise InputError("max_depth", max_depth, "levels below the root, between 0 and 256")
    if max_depth == 0 and size > 1:
        raise InputError("max_depth", max_depth, "at least 1 for a tree with draft nodes")
    return max_depth


def greedy_parents(
    model: PositionalModel, size: int, max_depth: int | None = None
) -> tuple[int, ...]:
    """Parent array of greedy trees: every prefix of length n is the greedy tree of size n."""
    depth_bound = _check(size, max_depth)
    parents = [-1]
    depth = [0]
    prob = [1.0]
    n_children = [0]
    heap: list[tuple[float, int, int]] = []  # (-path prob, parent depth, parent id)
    if depth_bound >= 1:
        heap.append((-model.p(1, 0), 0, 0))
    while len(parents) < size and heap:
        neg, d, u = heapq.heappop(heap)
        v = len(parents)
        parents.append(u)
        depth.append(d + 1)
        prob.append(-neg)
        n_children.append(0)
        n_children[u] += 1
        heapq.heappush(heap, (-prob[u] * model.p(d + 1, n_children[u]), d, u))
        if d + 1 < depth_bound:
            heapq.heappush(heap, (-prob[v] * model.p(d + 2, 0), d + 1, v))
    return tuple(parents)


def greedy_tree(model: PositionalModel, size: int, max_depth: int | None = None) -> OptimalTree:
    """The greedy tree of `size` nodes (root included) within `max_depth` levels."""
    tree = TokenTree.from_parents(greedy_parents(model, size, max_depth))
    return OptimalTree(tree, model.expected_aat(tree), "greedy")


class SequoiaDP:
    """Sequoia's dynamic program, solved once for sizes up to N; `tree(n)` for any n <= N.

    F[d][n] = best sum of path products below a node at depth d with at most n nodes
    (itself included); its children are ranks 0..k-1 with subtree sizes m_0..m_{k-1}:
    F[d][n] = max_k max_{sum m = n-1} sum_i p(d+1, i) * (1 + F[d+1][m_i]).
    """

    def __init__(self, model: PositionalModel, size: int, max_depth: int | None = None) -> None:
        self.model = model
        self.size = size
        # a tree of N nodes has at most N - 1 levels: deeper bounds change nothing
        self.depth = min(_check(size, max_depth), max(size - 1, 0))
        check_dp_feasible(model, size, self.depth)
        n = size
        self.value = np.zeros((self.depth + 1, n + 1))
        self.best_k = np.zeros((self.depth + 1, n + 1), dtype=np.int64)
        self.choice: list[np.ndarray] = [np.zeros((1, 1), dtype=np.int64)] * (self.depth + 1)
        if n < 2:
            return
        s = np.arange(n)[:, None]  # nodes available to the children subtrees
        m = np.arange(1, n)[None, :]  # size of the next child's subtree
        idx = s - m
        valid = idx >= 0
        idx = np.where(valid, idx, 0)
        for d in range(self.depth - 1, -1, -1):
            row = model.row(d + 1)
            nonzero = np.flatnonzero(row > 0)
            k_max = min(int(nonzero[-1]) + 1 if nonzero.size else 0, n - 1)
            sub = self.value[d + 1, 1:n]  # F[d+1][m], m = 1..n-1
            h = np.zeros(n)  # H_0[s] = 0: no children
            best = np.zeros(n)
            best_k = np.zeros(n, dtype=np.int64)
            choice = np.zeros((k_max + 1, n), dtype=np.int64)
            for i in range(k_max):
                gain = row[i] * (1.0 + sub)
                vals = np.where(valid, h[idx] + gain[None, :], -np.inf)
                arg = vals.argmax(axis=1)
                h = vals[np.arange(n), arg]
                choice[i + 1] = arg + 1
                better = h > best + 1e-15
                best[better] = h[better]
                best_k[better] = i + 1
            self.value[d, 1:] = best  # F[d][s+1] = best over k of H_k[s]
            self.best_k[d, 1:] = best_k
            self.choice[d] = choice

    def expected_aat(self, size: int) -> float:
        """Optimal expected AAT for `size` nodes (root included)."""
        return 1.0 + float(self.value[0, size])

    def tree(self, size: int) -> TokenTree:
        """The optimal tree with `size` nodes (padded with zero-probability root children)."""
        if size < 1 or size > self.size:
            raise InputError("size", size, f"between 1 and {self.size}")
        parents = [-1]
        queue = [(0, 0, size)]  # (node id, depth, budget)
        head = 0
        while head < len(queue):
            node, d, budget = queue[head]
            head += 1
            if d >= self.depth or budget < 2:
                continue
            k = int(self.best_k[d, budget])
            budgets = []
            left = budget - 1
            for i in range(k, 0, -1):
                m = int(self.choice[d][i, left])
                budgets.append(m)
                left -= m
            for m in reversed(budgets):  # ranks 0..k-1 in order
                parents.append(node)
                queue.append((len(parents) - 1, d + 1, m))
        while len(parents) < size:  # the DP keeps at most `size` nodes; extra slots gain 0
            parents.append(0)
        return _bfs(parents)


def dp_cells(model: PositionalModel, size: int, depth: int) -> int:
    """Cell updates of Sequoia's DP: levels x ranks with p > 0 (at most N - 1) x N^2."""
    ranks = max(
        (
            int(np.flatnonzero(model.row(d) > 0).max(initial=-1)) + 1
            for d in range(1, min(depth, model.matrix.shape[0]) + 1)
        ),
        default=0,
    )
    return depth * min(ranks, max(size - 1, 0)) * size * size


def check_dp_feasible(model: PositionalModel, size: int, depth: int) -> None:
    """Refuse up front (one InputError) a DP beyond DP_MAX_SIZE or DP_MAX_CELLS."""
    if size > DP_MAX_SIZE:
        raise InputError(
            "size",
            size,
            f"at most {DP_MAX_SIZE} for Sequoia's DP (`method` dp); larger trees: `method` "
            "greedy or auto (optimal when p is non-increasing in rank)",
        )
    cells = dp_cells(model, size, depth)
    if cells > DP_MAX_CELLS:
        ranks = cells // max(1, depth * size * size)
        deepest = DP_MAX_CELLS // max(1, ranks * size * size)
        hint = (
            f"`max_depth` <= {deepest} at N = {size}"
            if deepest >= 1
            else f"a smaller `size` (N^2 x {ranks} ranks <= {DP_MAX_CELLS:.0e})"
        )
        raise InputError(
            "size/max_depth",
            f"N = {size}, {depth} levels, {ranks} ranks",
            f"Sequoia's DP within {DP_MAX_CELLS:.0e} cell updates (levels x ranks x N^2; "
            f"this needs {cells:.1e}): {hint}, or `method` greedy/auto",
        )


def sequoia_tree(model: PositionalModel, size: int, max_depth: int | None = None) -> OptimalTree:
    """The optimal tree of `size` nodes within `max_depth` levels by Sequoia's DP."""
    dp = SequoiaDP(model, size, max_depth)
    tree = dp.tree(size)
    return OptimalTree(tree, model.expected_aat(tree), "dp")


def optimal_tree(model: PositionalModel, size: int, max_depth: int | None = None) -> OptimalTree:
    """Greedy when the model is non-increasing in rank (then optimal), else Sequoia's DP."""
    if model.is_monotone():
        return greedy_tree(model, size, max_depth)
    return sequoia_tree(model, size, max_depth)


def optimal_trees(
    model: PositionalModel, sizes: Sequence[int], max_depth: int | None = None
) -> list[TokenTree]:
    """Optimal trees for several sizes at once (greedy prefixes, or one DP for all sizes)."""
    xs = [int(n) for n in sizes]
    if not xs:
        return []
    top = max(xs)
    if model.is_monotone():
        parents = _greedy_cached(_matrix_key(model), top, max_depth)
        return [TokenTree.from_parents(parents[:n]) for n in xs]
    dp = SequoiaDP(model, top, max_depth)
    return [dp.tree(n) for n in xs]


def _matrix_key(model: PositionalModel) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(v) for v in row) for row in np.asarray(model.matrix))


@memoised("tree.greedy_parents", owner="fpgasim.tree.optimal",
          keys="positional acceptance matrix, tree size, depth limit", budget=256,
          why="the optimal tree of a size is asked at every context of a curve")
def _greedy_cached(
    key: tuple[tuple[float, ...], ...], size: int, max_depth: int | None
) -> tuple[int, ...]:
    return greedy_parents(PositionalModel.from_rows(key), size, max_depth)


def _bfs(parents: list[int]) -> TokenTree:
    """Renumber a parent list level by level (siblings keep their order)."""
    tree = TokenTree.from_parents(parents)
    order = sorted(range(len(parents)), key=lambda i: (int(tree.depths[i]), _key(tree, i)))
    new_id = {old: new for new, old in enumerate(order)}
    return TokenTree.from_parents([-1] + [new_id[parents[old]] for old in order[1:]])


def _key(tree: TokenTree, i: int) -> tuple[int, ...]:
    path = []
    while i > 0:
        path.append(int(tree.ranks[i]))
        i = tree.parents[i]
    return tuple(reversed(path))
