"""Positional acceptance: p(depth, rank), exact expected AAT of a tree, seeded trace generation.

p(d, r) is the probability that, given the node it hangs under was accepted, the rank-r
child at depth d is the token the target accepts (siblings are exclusive, so each row
sums to at most 1; the rest is "no draft token accepted at this depth"). Row d-1 of the
matrix holds depth d; depths below the last row reuse it; ranks past a row are 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fpgasim.config.schema import PositionalAcceptance
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import InputError
from fpgasim.tree.traces import Traces

#: Deepest level a generated trace follows (a guard against runaway chains).
MAX_TRACE_DEPTH = 64


@dataclass(frozen=True, eq=False)
class PositionalModel:
    """Acceptance probabilities: matrix[d-1, r] for the rank-r child at depth d."""

    matrix: np.ndarray

    @classmethod
    def from_rows(
        cls, rows: Sequence[Sequence[float]], argument: str = "probabilities"
    ) -> PositionalModel:
        """A model from a matrix (rows = depths 1, 2, ...; one row = every depth)."""
        rows = [list(r) for r in rows]
        width = max((len(r) for r in rows), default=0)
        if not rows or width == 0:
            raise InputError(argument, rows, "at least one probability, e.g. 0.7,0.1,0.05")
        mat = np.zeros((len(rows), width))
        for d, row in enumerate(rows):
            mat[d, : len(row)] = row
        if not np.all(np.isfinite(mat)) or mat.min() < 0 or mat.max() > 1:
            raise InputError(argument, rows, "probabilities between 0 and 1")
        sums = mat.sum(axis=1)
        if sums.max() > 1 + 1e-9:
            d = int(sums.argmax())
            raise InputError(
                argument,
                f"row {d} sums to {sums[d]:.4f}",
                "at most 1: the rank-r children of one node are exclusive outcomes",
            )
        mat.flags.writeable = False
        return cls(mat)

    @classmethod
    def from_vector(
        cls, vector: Sequence[float], argument: str = "acceptance_vector"
    ) -> PositionalModel:
        """A depth-independent model from one vector p_0, p_1, ... (Sequoia's form)."""
        return cls.from_rows([list(vector)], argument)

    @classmethod
    def from_config(
        cls, acceptance: PositionalAcceptance, context: int | None = None
    ) -> PositionalModel:
        """The model of an algorithm file, at `context` (default: its reference context)."""
        model = cls.from_rows(acceptance.probabilities)
        if context is None:
            return model
        return model.at_context(context, acceptance.context_ref, acceptance.context_decay)

    @property
    def ranks(self) -> int:
        """Ranks with a (possibly zero) probability in the matrix."""
        return int(self.matrix.shape[1])

    def row(self, depth: int) -> np.ndarray:
        """Probabilities of the children at `depth` (>= 1), by rank."""
        return self.matrix[min(depth, self.matrix.shape[0]) - 1]

    def p(self, depth: int, rank: int) -> float:
        """p(depth, rank); 0 past the matrix's last rank."""
        return float(self.row(depth)[rank]) if rank < self.ranks else 0.0

    def is_monotone(self) -> bool:
        """True when every row is non-increasing in rank (greedy trees are then optimal)."""
        return bool(np.all(np.diff(self.matrix, axis=1) <= 1e-15))

    def scaled(self, factor: float) -> PositionalModel:
        """Every probability times `factor`, capped so that no row sums past 1."""
        cap = 1.0 / float(self.matrix.sum(axis=1).max() or 1.0)
        mat = self.matrix * min(factor, cap)
        mat.flags.writeable = False
        return PositionalModel(mat)

    def at_context(self, context: int, context_ref: int, decay: float) -> PositionalModel:
        """Scale by (1 - decay) ** log2(context / context_ref) (capped at row sums of 1)."""
        if context < 1:
            raise InputError("context", context, "a context length >= 1")
        if decay == 0 or context == context_ref:
            return self
        return self.scaled((1.0 - decay) ** math.log2(context / context_ref))

    def path_probabilities(self, tree: TokenTree) -> np.ndarray:
        """P(node's token is accepted) for every node: the product of p along its path."""
        probs = np.ones(tree.size)
        rows = np.minimum(tree.depths[1:], self.matrix.shape[0]) - 1
        ranks = tree.ranks[1:]
        own = np.zeros(tree.size - 1)
        inside = ranks < self.ranks
        own[inside] = self.matrix[rows[inside], ranks[inside]]
        for i in range(1, tree.size):
            probs[i] = probs[tree.parents[i]] * own[i - 1]
        return probs

    def expected_aat(self, tree: TokenTree) -> float:
        """Expected accepted tokens per iteration, bonus included: 1 + sum of path products."""
        return float(self.path_probabilities(tree).sum())


def expected_aat(tree: TokenTree, model: PositionalModel) -> float:
    """1 + sum over draft nodes of the product of p along the path from the root."""
    return model.expected_aat(tree)


def sample_rank_paths(
    model: PositionalModel, iterations: int, max_depth: int, rng: np.random.Generator
) -> np.ndarray:
    """(iterations, max_depth) int16 matrix: the accepted rank at each depth, -1 after a rejection.

    The target's token at each depth is rank r of the drafter's candidates with
    probability p(d, r), or none of them with the remaining probability.
    """
    if iterations < 1 or iterations > 10**8:
        raise InputError("iterations", iterations, "between 1 and 10^8")
    if max_depth < 1 or max_depth > MAX_TRACE_DEPTH:
        raise InputError("max_depth", max_depth, f"between 1 and {MAX_TRACE_DEPTH}")
    out = np.full((iterations, max_depth), -1, dtype=np.int16)
    alive = np.ones(iterations, dtype=bool)
    for d in range(1, max_depth + 1):
        row = model.row(d)
        draws = np.searchsorted(np.cumsum(row), rng.random(iterations), side="right")
        accepted = alive & (draws < len(row))
        out[accepted, d - 1] = draws[accepted]
        alive = accepted
        if not alive.any():
            break
    return out


def walk(tree: TokenTree, rank_paths: np.ndarray) -> np.ndarray:
    """Node reached at each depth by each rank path inside `tree` (-1 once it leaves the tree)."""
    table = child_table(tree)
    iterations, depth = rank_paths.shape
    nodes = np.full((iterations, depth), -1, dtype=np.int64)
    cur = np.zeros(iterations, dtype=np.int64)
    for d in range(depth):
        r = rank_paths[:, d].astype(np.int64)
        ok = (cur >= 0) & (r >= 0) & (r < table.shape[1])
        nxt = np.full(iterations, -1, dtype=np.int64)
        nxt[ok] = table[cur[ok], r[ok]]
        nodes[:, d] = nxt
        cur = nxt
        if not (cur >= 0).any():
            break
    return nodes


def child_table(tree: TokenTree) -> np.ndarray:
    """(x, max children) table: node id of the rank-r child of each node, or -1."""
    width = int(tree.ranks.max()) + 1
    table = np.full((tree.size, width), -1, dtype=np.int64)
    table[np.asarray(tree.parents[1:], dtype=np.int64), tree.ranks[1:]] = np.arange(1, tree.size)
    return table


def monte_carlo_aat(
    tree: TokenTree, model: PositionalModel, iterations: int, rng: np.random.Generator
) -> tuple[float, float]:
    """Simulated mean accepted tokens of `tree` and its standard error."""
    paths = sample_rank_paths(model, iterations, max(1, tree.depth), rng)
    accepted = 1 + (walk(tree, paths) >= 0).sum(axis=1)
    return float(accepted.mean()), float(accepted.std(ddof=1) / math.sqrt(iterations))


def generate_traces(
    model: PositionalModel, max_tree: TokenTree, iterations: int, rng: np.random.Generator
) -> Traces:
    """Per iteration, the accepted path inside `max_tree` (seeded, vectorised over iterations)."""
    paths = sample_rank_paths(model, iterations, max(1, max_tree.depth), rng)
    inside = walk(max_tree, paths) >= 0
    return Traces(np.where(inside, paths, -1).astype(np.int16))
