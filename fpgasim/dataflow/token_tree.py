"""TokenTree: the one draft-tree type, from the draft schedule to the acceptance models.

A tree is a parent array (root = node 0), with depths, sibling ranks and masks. Nodes are in
topological order (every parent precedes its children); node 0 is the root, the last
accepted token. A node's sibling rank is its position among its parent's children in node
order (rank 0 = the drafter's most likely candidate). The verification length x is the
number of nodes, root included.

It also carries what a drafter needs to draft it (docs/accounting.md): a static drafter
drafts its level widths, trailing empty levels included (`1 0` costs one more draft pass
than `1`); a dynamic drafter (EAGLE-3) grows its tree from a draft depth and a top-k and
reranks the drafted nodes, so before drafting only those two numbers and the root are known
(`TokenTree.dynamic`). It lives in dataflow because the draft schedule reads it; the tree
package builds and scores trees of this type.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

import numpy as np

from fpgasim.errors import InputError

MAX_NODES = 1 << 16


class RankRows(Protocol):
    """An acceptance model as `from_shape` uses it (fpgasim.tree.positional.PositionalModel)."""

    def row(self, depth: int) -> np.ndarray:
        """Probabilities of the children at `depth` (>= 1), by sibling rank."""
        ...


@dataclass(frozen=True)
class TokenTree:
    """A validated token tree; build it with `from_parents`, `from_shape` or `dynamic`.

    parents        parent index of every node (parents[0] = -1, the root)
    sibling_ranks  every node's rank among its siblings (the root's is 0)
    empty_levels   empty levels a static drafter drafts below the last non-empty one
    draft_depth    a dynamic drafter's expansion passes (None: a static tree)
    top_k          a dynamic drafter's nodes expanded per level (None: a static tree)

    Equal trees have equal fields (node order included: `same_tree` ignores it).
    """

    parents: tuple[int, ...]
    sibling_ranks: tuple[int, ...]
    empty_levels: int = 0
    draft_depth: int | None = None
    top_k: int | None = None

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_parents(
        cls,
        parents: Sequence[int],
        ranks: Sequence[int] | None = None,
        argument: str = "parents",
    ) -> TokenTree:
        """A tree from parent indices: parents[0] = -1 (root), 0 <= parents[i] < i otherwise.

        Sibling ranks default to the order of appearance among siblings (0, 1, ...);
        explicit `ranks` (distinct among siblings, gaps allowed) keep the drafter's ranks.
        """
        par = tuple(int(p) for p in parents)
        if not par or len(par) > MAX_NODES:
            raise InputError(argument, list(par[:8]), f"between 1 and {MAX_NODES} nodes")
        if par[0] != -1:
            raise InputError(argument, par[0], "parents[0] = -1: node 0 is the root")
        arr = np.asarray(par, dtype=np.int64)
        idx = np.arange(len(par))
        bad = np.flatnonzero((arr[1:] < 0) | (arr[1:] >= idx[1:])) + 1
        if bad.size:
            i = int(bad[0])
            raise InputError(
                argument, f"parents[{i}] = {par[i]}", f"a parent index between 0 and {i - 1}"
            )
        if ranks is None:
            rank_arr = np.zeros(len(par), dtype=np.int64)
            seen = np.zeros(len(par), dtype=np.int64)
            for i in range(1, len(par)):
                rank_arr[i] = seen[par[i]]
                seen[par[i]] += 1
        else:
            rank_arr = np.asarray([int(r) for r in ranks], dtype=np.int64)
            if rank_arr.shape != (len(par),) or (len(par) > 1 and rank_arr[1:].min() < 0):
                raise InputError("ranks", list(ranks)[:8], "one rank >= 0 per node")
            rank_arr[0] = 0
            pairs = set(zip(par[1:], rank_arr[1:].tolist(), strict=True))
            if len(pairs) < len(par) - 1:
                raise InputError("ranks", list(ranks)[:8], "distinct ranks among siblings")
        return cls(par, tuple(rank_arr.tolist()))

    @classmethod
    def from_shape(cls, widths: Sequence[int], model: RankRows | None = None,
                   argument: str = "tree") -> TokenTree:
        """A tree with these level widths (below the root), nodes listed level by level;
        a shape past the limits is refused naming `argument`, the input it came from.

        Without a model, node j of level d hangs under node j mod w(d-1) of level d-1
        (round robin). With a positional model, each level's nodes go one by one to the
        (parent, next rank) slot of highest path probability (parent-first on ties).
        Trailing empty levels add no node; the tree keeps them as `empty_levels`.
        """
        shape = tuple(int(w) for w in widths)
        empty = 0
        while shape and shape[-1] == 0:
            shape, empty = shape[:-1], empty + 1
        if not shape:
            return cls((-1,), (0,), empty)
        check_shape(shape, argument)
        if sum(shape) + 1 > MAX_NODES:
            raise InputError(argument, " ".join(map(str, shape)),
                             f"at most {MAX_NODES - 1} nodes ({sum(shape)} given)")
        parents = [-1]
        prev = [0]  # node ids of the previous level, in order
        prev_prob = [1.0]
        for d, w in enumerate(shape, start=1):
            if model is None:
                level_parents = [prev[j % len(prev)] for j in range(w)]
                probs = [1.0] * w
            else:
                level_parents, probs = _assign_level(prev, prev_prob, w, d, model)
            first = len(parents)
            parents.extend(level_parents)
            prev = list(range(first, first + w))
            prev_prob = probs
        tree = cls.from_parents(parents)
        return cls(tree.parents, tree.sibling_ranks, empty) if empty else tree

    @classmethod
    def dynamic(cls, draft_depth: int, top_k: int) -> TokenTree:
        """The tree of a dynamic drafter before it drafts: its expansion and the root."""
        if draft_depth < 0 or top_k < 1:
            raise InputError("depth/top_k", (draft_depth, top_k), "depth >= 0 and top-k >= 1")
        return cls((-1,), (0,), 0, int(draft_depth), int(top_k))

    # ------------------------------------------------------------------ draft schedule

    @property
    def is_dynamic(self) -> bool:
        """Whether a dynamic drafter grows this tree from `draft_depth` and `top_k`."""
        return self.top_k is not None

    def static_shape(self) -> tuple[int, ...]:
        """The level widths a static drafter drafts (trailing empty levels kept), checked;
        a dynamic tree has none: an error."""
        if self.is_dynamic:
            raise InputError("tree", self.describe(), "level widths such as '4 16 16 16 16'")
        widths = self._drafted_widths()
        check_shape(widths)
        return widths

    def describe(self) -> str:
        """What the draft cost depends on, as text: '4 16 16' or 'depth=6 top_k=10'."""
        if self.is_dynamic:
            return f"depth={self.draft_depth} top_k={self.top_k}"
        return " ".join(map(str, self._drafted_widths()))

    def _drafted_widths(self) -> tuple[int, ...]:
        return (*self.level_widths(), *(0,) * self.empty_levels)

    # ------------------------------------------------------------------ structure

    @cached_property
    def depths(self) -> np.ndarray:
        """Depth of every node (the root's is 0), read-only."""
        depths = np.zeros(len(self.parents), dtype=np.int64)
        for i in range(1, len(self.parents)):
            depths[i] = depths[self.parents[i]] + 1
        depths.flags.writeable = False
        return depths

    @cached_property
    def ranks(self) -> np.ndarray:
        """`sibling_ranks` as a read-only array."""
        ranks = np.asarray(self.sibling_ranks, dtype=np.int64)
        ranks.flags.writeable = False
        return ranks

    @property
    def size(self) -> int:
        """Nodes including the root: the verification length x."""
        return len(self.parents)

    @property
    def nodes(self) -> int:
        """Draft nodes (root excluded): x - 1."""
        return len(self.parents) - 1

    @property
    def depth(self) -> int:
        """Levels below the root."""
        return int(self.depths.max())

    def level_widths(self) -> tuple[int, ...]:
        """Nodes per level below the root, e.g. (4, 8, 5, 2, 1)."""
        if self.size == 1:
            return ()
        return tuple(int(c) for c in np.bincount(self.depths)[1:])

    def shape_str(self) -> str:
        """Level widths as text, '4 8 5 2 1' ('' for the root alone)."""
        return " ".join(map(str, self.level_widths()))

    def children_counts(self) -> np.ndarray:
        """Number of children of every node."""
        return np.bincount(np.asarray(self.parents[1:], dtype=np.int64), minlength=self.size)

    def rank_paths(self) -> list[tuple[int, ...]]:
        """For every node, the sibling ranks on its path from the root (root: ())."""
        paths: list[tuple[int, ...]] = [()]
        for i in range(1, self.size):
            paths.append(paths[self.parents[i]] + (int(self.ranks[i]),))
        return paths

    def canonical(self) -> tuple[tuple[int, ...], ...]:
        """The set of rank paths, sorted: equal for trees that differ only in node order."""
        return tuple(sorted(self.rank_paths()))

    def same_tree(self, other: TokenTree) -> bool:
        """True when both trees hold the same rank paths (node order may differ)."""
        return self.canonical() == other.canonical()

    # ------------------------------------------------------------------ masks

    def attention_mask(self) -> np.ndarray:
        """Tree part of the verification mask: mask[i, j] = node j is i itself or an ancestor.

        Every tree token also sees the whole cached context (`context_visible`); the
        full mask of a pass over L cached tokens is `full_attention_mask(L)`.
        """
        n = self.size
        mask = np.zeros((n, n), dtype=bool)
        mask[0, 0] = True
        for i in range(1, n):
            mask[i] = mask[self.parents[i]]
            mask[i, i] = True
        return mask

    @staticmethod
    def context_visible() -> bool:
        """Every tree token attends to every cached context token (no mask on the context)."""
        return True

    def full_attention_mask(self, context: int) -> np.ndarray:
        """(x, L + x) bool mask: all L cached tokens visible, then the tree part."""
        if context < 0:
            raise InputError("context", context, "a context length >= 0")
        return np.hstack([np.ones((self.size, context), dtype=bool), self.attention_mask()])

    def attended_pairs(self) -> int:
        """True entries of the tree mask: sum over nodes of (depth + 1)."""
        return int(self.depths.sum() + self.size)

    def mask_tiles(self, tile: int) -> np.ndarray:
        """(ceil(x/tile))^2 bool grid: which query-tile x key-tile blocks hold any visible pair."""
        if tile < 1:
            raise InputError("tile", tile, "a tile size >= 1")
        mask = self.attention_mask()
        t = -(-self.size // tile)
        padded = np.zeros((t * tile, t * tile), dtype=bool)
        padded[: self.size, : self.size] = mask
        return padded.reshape(t, tile, t, tile).any(axis=(1, 3))

    def __repr__(self) -> str:
        if self.is_dynamic:
            return f"TokenTree({self.describe()})"
        return f"TokenTree(x={self.size}, shape='{self.describe()}')"


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


def _assign_level(
    prev: list[int], prev_prob: list[float], width: int, depth: int, model: RankRows
) -> tuple[list[int], list[float]]:
    """Hang `width` nodes under the previous level, each on the most probable free slot."""
    row = model.row(depth)
    next_rank = [0] * len(prev)
    heap = [(-prev_prob[j] * _at(row, 0), j) for j in range(len(prev))]
    heapq.heapify(heap)
    chosen: list[tuple[int, int, float]] = []  # (parent position, rank, path prob)
    for _ in range(width):
        neg, j = heapq.heappop(heap)
        chosen.append((j, next_rank[j], -neg))
        next_rank[j] += 1
        heapq.heappush(heap, (-prev_prob[j] * _at(row, next_rank[j]), j))
    # list children grouped by parent, in rank order, so sibling ranks match the slots
    chosen.sort(key=lambda c: (c[0], c[1]))
    return [prev[j] for j, _, _ in chosen], [p for _, _, p in chosen]


def _at(row: np.ndarray, rank: int) -> float:
    return float(row[rank]) if rank < len(row) else 0.0
