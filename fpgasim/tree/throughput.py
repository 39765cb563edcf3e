"""Throughput-optimal trees: the tree that maximises AAT / (T_v + T_d), not AAT alone.

The search is exact on the positional acceptance model over every tree the drafter can
build, given costs that depend on the tree only through (docs/trees.md, "Throughput"):

- T_v: the verification length x (`TreeCosts.verify_cycles(x)`);
- T_d: a first draft pass over floor(AAT) accepted tokens (`first_cycles(a)`) plus one
  pass per *fed* block of `levels_per_pass` consecutive levels (`block_cycles(widths)`):
  block j (levels jk+1..jk+k) is fed when the tree has a level below it. LongSpec: k = 1
  (one pass per level but the last); Falcon: k tokens per pass.

Why level widths suffice (the exchange argument): for any tree with level widths w, sort
its level-d path probabilities; the tree that puts each level's w_d nodes on the w_d most
probable children of the previous level's chosen nodes dominates it element by element,
level after level (a child's probability is its parent's times p(d, r)). With p
non-increasing in rank those choices are rank prefixes, i.e. a valid tree:
`TokenTree.from_shape(w, model)`. So the best tree of a shape is known, and the search
is over shapes: a depth-first branch-and-bound over levels with, per prefix, an upper
bound on every completion (the best r descendants at any depth, at least the passes the
extra levels need, T_v at the final x). EAGLE-3's dynamic tree is fixed by (depth,
top-k, x): `dynamic_designs` enumerates them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from fpgasim.bounded import BoundedCache, declare_cache
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import InputError
from fpgasim.tree.builders import dynamic_tree
from fpgasim.tree.optimal import greedy_parents
from fpgasim.tree.positional import PositionalModel
from fpgasim.tree.shapes import width_based

#: Largest verification length the throughput search explores (beyond: refused up front).
MAX_SEARCH_VERIFY_LEN = 512
#: Largest number of levels the throughput search explores.
MAX_SEARCH_DEPTH = 16
#: Branch-and-bound states explored before the search gives up with an InputError.
MAX_STATES = 2_000_000
#: Per-x search (every x exact, for curves): at most this many level-width shapes in the
#: space (`count_shapes`); LongSpec's 4 16 16 16 16 16 has 4.5e6, Falcon's 8 levels 3.7e9.
MAX_PER_SIZE_SHAPES = 100_000_000


class TreeCosts(Protocol):
    """Integer cycle costs of one (board, target, drafter, context); see the module doc."""

    levels_per_pass: int

    def verify_cycles(self, verify_len: int) -> int:
        """T_v: cycles of the target pass verifying x tokens."""
        ...

    def first_cycles(self, accepted: int) -> int:
        """Cycles of the first draft pass, run over `accepted` tokens (floor(AAT))."""
        ...

    def block_cycles(self, widths: tuple[int, ...]) -> int:
        """Cycles of the draft pass fed with one block of levels of these widths."""
        ...

    def clock_hz(self) -> float:
        """Cycles per second that turn cycles into time, hence AAT/cycles into tokens/s."""
        ...


#: the costs one TreeCosts has given (`TableCosts`, `solving.tree_design.EngineTreeCosts`)
TREE_COSTS = declare_cache(
    "tree.costs", owner="fpgasim.tree.throughput",
    lifetime="one TreeCosts (TableCosts, EngineTreeCosts)",
    keys="pass kind and its x, accepted count or block widths", budget=100_000,
    why="each cost is computed once per argument: a search asks the same blocks tens of "
    "thousands of times (table3's LongSpec search on V80: 78,409 block costs, 16 "
    "distinct; building the block's tree and pass spec each time took 4.5 of its 11 s, "
    "profiled, the pass service's memo alone did not avoid it)")


@dataclass
class TableCosts:
    """TreeCosts from callables, memoised (tests and synthetic studies)."""

    verify: Callable[[int], int]
    first: Callable[[int], int]
    block: Callable[[tuple[int, ...]], int]
    levels_per_pass: int = 1
    clock: float = 1.0
    _memo: BoundedCache[int] = field(default_factory=lambda: TREE_COSTS.new(), repr=False,
                                     compare=False)

    def _get(self, key: tuple, fn: Callable, arg: int | tuple[int, ...]) -> int:
        """`fn(arg)` as an int, once per key."""
        return self._memo(key, lambda: int(fn(arg)))

    def verify_cycles(self, verify_len: int) -> int:
        """`verify(x)` as an int, called once per x."""
        return self._get(("v", verify_len), self.verify, verify_len)

    def first_cycles(self, accepted: int) -> int:
        """`first(accepted)` as an int, called once per count."""
        return self._get(("f", accepted), self.first, accepted)

    def block_cycles(self, widths: tuple[int, ...]) -> int:
        """`block(widths)` as an int, called once per block."""
        return self._get(("b", widths), self.block, widths)

    def clock_hz(self) -> float:
        """The fixed `clock` field (1.0 by default: tokens/s then reads tokens per cycle)."""
        return self.clock


@dataclass(frozen=True)
class ShapeSpace:
    """The shapes a level-width drafter can build: caps per level, x <= max_verify_len."""

    level_caps: tuple[int, ...]
    max_verify_len: int

    def check(self) -> None:
        """InputError unless 1..MAX_SEARCH_DEPTH caps, each >= 1, and 2 <= max_verify_len <=
        MAX_SEARCH_VERIFY_LEN: the bounds the search can explore."""
        if not self.level_caps or any(c < 1 for c in self.level_caps):
            raise InputError("max_tree", self.level_caps, "level widths >= 1")
        if len(self.level_caps) > MAX_SEARCH_DEPTH:
            raise InputError(
                "max_depth",
                len(self.level_caps),
                f"at most {MAX_SEARCH_DEPTH} levels for the throughput search",
            )
        if not 2 <= self.max_verify_len <= MAX_SEARCH_VERIFY_LEN:
            raise InputError(
                "size",
                self.max_verify_len,
                f"a largest x between 2 and {MAX_SEARCH_VERIFY_LEN} for the throughput search",
            )


@dataclass(frozen=True)
class Design:
    """One tree and its throughput: AAT / ((verify + draft cycles) / clock)."""

    shape: tuple[int, ...]
    verify_len: int
    aat: float
    accepted: int
    verify_cycles: int
    draft_cycles: int
    tokens_per_s: float
    draft_depth: int | None = None  # EAGLE-3 dynamic tree: passes after the first
    draft_top_k: int | None = None

    @property
    def cycles(self) -> int:
        """T_v + T_d of one iteration, in cycles: the denominator of tokens/s."""
        return self.verify_cycles + self.draft_cycles


@dataclass(frozen=True)
class SearchResult:
    """Per x the throughput-optimal design; `best` over every x; search statistics."""

    by_verify_len: dict[int, Design]
    states: int
    leaves: int
    seconds: float

    @property
    def best(self) -> Design:
        """The highest tokens/s (ties: the smaller x)."""
        return max(self.by_verify_len.values(), key=lambda d: (d.tokens_per_s, -d.verify_len))


def accepted_of(aat: float) -> int:
    """Tokens the next iteration's first draft pass runs over: floor(AAT), at least 1."""
    return max(1, math.floor(aat))


def shape_cost(costs: TreeCosts, shape: Sequence[int], aat: float) -> tuple[int, int]:
    """(verify cycles, draft cycles) of a level-width tree with expected AAT `aat`."""
    w = tuple(int(v) for v in shape if v > 0)
    k = costs.levels_per_pass
    draft = costs.first_cycles(accepted_of(aat))
    for end in range(k, len(w), k):  # block ending at level `end` is fed: a level below it
        draft += costs.block_cycles(w[end - k : end])
    return costs.verify_cycles(sum(w) + 1), draft


def design_of(costs: TreeCosts, shape: Sequence[int], aat: float) -> Design:
    """The Design of a level-width tree whose expected AAT is `aat`."""
    w = tuple(int(v) for v in shape if v > 0)
    tv, td = shape_cost(costs, w, aat)
    return Design(w, sum(w) + 1, aat, accepted_of(aat), tv, td, aat * costs.clock_hz() / (tv + td))


def shape_aat(model: PositionalModel, shape: Sequence[int]) -> float:
    """Expected AAT of the best tree with these level widths (each level on its top slots)."""
    return model.expected_aat(TokenTree.from_shape(tuple(shape), model))


def _check_model(model: PositionalModel) -> None:
    if not model.is_monotone():
        raise InputError(
            "acceptance_vector",
            "p not non-increasing in rank",
            "rows non-increasing in rank for `objective` throughput (each level then takes "
            "its most probable slots); use `objective` aat for other vectors",
        )


class _Search:
    """State of one branch-and-bound run (see `search_shapes`)."""

    def __init__(
        self, model: PositionalModel, costs: TreeCosts, space: ShapeSpace, per_size: bool
    ) -> None:
        self.model, self.costs, self.space, self.per_size = model, costs, space, per_size
        self.k = int(costs.levels_per_pass)
        self.x_max = space.max_verify_len
        self.depth_max = len(space.level_caps)
        self.verify = np.array(
            [0] + [costs.verify_cycles(x) for x in range(1, self.x_max + 1)], dtype=np.float64
        )
        # AAT <= 1 + depth (one accepted token per level at most): floor(AAT) <= depth + 1
        self.a_max = min(self.x_max, self.depth_max + 1)
        first = [costs.first_cycles(a) for a in range(1, self.a_max + 1)]
        self.first = np.array([first[0], *first], dtype=np.float64)  # index = accepted
        # a lower bound of first_cycles(a) over every a >= floor(AAT): suffix minimum
        self.first_min_from = np.minimum.accumulate(self.first[::-1])[::-1]
        # a pass over any block costs at least a pass over one token (stated assumption,
        # checked by the tests on the engines): the lower bound of unknown fed passes
        self.pass_min = float(costs.block_cycles((1,) * self.k))
        self.best_ratio = np.full(self.x_max + 1, -np.inf)
        self.best_shape: dict[int, tuple[int, ...]] = {}
        self.best_aat = np.zeros(self.x_max + 1)
        self.states = 0
        self.leaves = 0
        #: raised whenever an incumbent improves (`best_ratio` only ever rises)
        self.improvements = 0
        self.rows = [
            np.asarray(model.row(d), dtype=np.float64) for d in range(1, self.depth_max + 2)
        ]
        self._patterns: dict[tuple[int, int], np.ndarray] = {}

    def level_pattern(self, s: int, j: int) -> np.ndarray:
        """Top-K relative path products of the descendants exactly j levels below depth s."""
        key = (s, j)
        if key not in self._patterns:
            prev = np.ones(1) if j == 1 else self.level_pattern(s, j - 1)
            row = self.rows[min(s + j, len(self.rows)) - 1]
            self._patterns[key] = _largest_products(prev, row, self.x_max)
        return self._patterns[key]

    def candidates(self, frontier: np.ndarray, level: int, cap: int) -> np.ndarray:
        """Path probabilities of the next level's cap best slots (zeros past the ranks)."""
        cand = _largest_products(frontier, self.rows[level - 1], cap)
        if cand.size < cap:
            cand = np.concatenate([cand, np.zeros(cap - cand.size)])
        return cand

    def passes_lb(self, start: int, levels: int) -> int:
        """Fed blocks ending at a level in [start, start + levels - 1] (unknown widths)."""
        k = self.k
        return sum(1 for e in range(start, start + levels) if e % k == 0)

    def run(self) -> None:
        """Seed the incumbents, then branch and bound from the root; results land on self."""
        self._seed()
        self._expand(0, np.ones(1), 1.0, 0, 0.0, ())

    def _seed(self) -> None:
        """Incumbents before the search: the greedy (AAT-optimal) shape of every size that
        fits the caps, and the breadth-first fill of the caps."""
        parents = greedy_parents(self.model, self.x_max, self.depth_max)
        for x in range(2, self.x_max + 1):
            tree = TokenTree.from_parents(parents[:x])
            shape = tree.level_widths()
            if any(w > c for w, c in zip(shape, self.space.level_caps, strict=False)):
                continue
            self._offer(tuple(shape), shape_aat(self.model, shape))
        caps = self.space.level_caps
        for n in range(1, min(sum(caps), self.x_max - 1) + 1):  # breadth-first fills
            shape = width_based(n, caps)
            self._offer(shape, shape_aat(self.model, shape))

    def _offer(self, shape: tuple[int, ...], aat: float) -> None:
        tv, td = shape_cost(self.costs, shape, aat)
        x = sum(shape) + 1
        ratio = aat / (tv + td)
        if ratio > self.best_ratio[x]:
            self.best_ratio[x], self.best_shape[x], self.best_aat[x] = ratio, shape, aat

    def _new_state(self) -> None:
        """Count one more prefix expanded; refuse a search past MAX_STATES (one line)."""
        self.states += 1
        if self.states > MAX_STATES:
            raise InputError(
                "size",
                self.x_max,
                f"a smaller search: more than {MAX_STATES} branch-and-bound states; lower "
                "`size` or the maximal tree",
            )

    def _feeds(self, level: int) -> bool:
        """Whether going below `level` feeds the draft block of levels ending there."""
        return level >= self.k and level % self.k == 0

    def _accepted(self, aats: np.ndarray) -> np.ndarray:
        """`accepted_of` each AAT, at most a_max. An AAT here is >= 1 (the root's 1 plus
        products >= 0), so the cast's truncation is the floor and the floor is >= 1."""
        accepted = aats.astype(np.int64)
        np.minimum(accepted, self.a_max, out=accepted)
        return accepted

    def _offer_leaves(self, x0: int, ratios: np.ndarray, aats: np.ndarray,
                      shape: tuple[int, ...]) -> None:
        """The last level's widths 1..len(ratios) below `shape` (ending at x = x0, x0 + 1,
        ...) as incumbents where their ratio beats the best of their x."""
        better = ratios > self.best_ratio[x0 : x0 + len(ratios)]
        for j in better.nonzero()[0].tolist():
            self.best_ratio[x0 + j] = ratios[j]
            self.best_shape[x0 + j] = (*shape, j + 1)
            self.best_aat[x0 + j] = aats[j]
            self.improvements += 1

    def _expand(
        self,
        level: int,
        frontier: np.ndarray,
        aat: float,
        nodes: int,
        fixed: float,
        shape: tuple[int, ...],
    ) -> None:
        """Try every width of level+1 below a prefix of `level` levels."""
        self._new_state()
        k = self.k
        nxt = level + 1
        if self._feeds(level):
            fixed = fixed + self.costs.block_cycles(shape[level - k : level])
        cap = min(self.space.level_caps[level], self.x_max - 1 - nodes)
        if cap < 1:
            return
        cand = self.candidates(frontier, nxt, cap)
        aats = aat + cand.cumsum()
        # width w = i + 1 ends at x = nodes + 1 + w: the widths' xs are one slice
        xs = slice(nodes + 2, nodes + 2 + cap)
        ratios = aats / (self.verify[xs] + self.first[self._accepted(aats)] + fixed)
        self.leaves += cap
        self._offer_leaves(nodes + 2, ratios, aats, shape)
        if nxt >= self.depth_max:
            return
        aat_of = aats.tolist()
        widest = self.x_max - nodes - 2  # a child of width w needs nodes + w + 1 < x_max
        order = (-ratios).argsort(kind="stable").tolist()
        if self.depth_max - nxt == 1:  # the children's children are leaves (nine in ten)
            if widest >= 1:
                self._last_children(nxt, cand[: min(cap, widest)], aats, nodes, fixed, shape,
                                    order)  # fmt: skip
            return
        for i in order:
            w = i + 1
            if w <= widest and self._bound_ok(nxt, cand[:w], aat_of[i], nodes + w, fixed, shape, w):
                self._expand(nxt, cand[:w], aat_of[i], nodes + w, fixed, (*shape, w))

    def _last_children(
        self,
        level: int,
        cand: np.ndarray,
        aats: np.ndarray,
        nodes: int,
        fixed: float,
        shape: tuple[int, ...],
        order: list[int],
    ) -> None:
        """Bound and expand, in `order`, the children of widths 1..len(cand) at `level`,
        whose own children are the last level: what `_bound_ok` and `_expand` do child by
        child, with every child's products, bound and leaves computed at once (the same
        operations in the same order: the same decisions, trees, states and leaves).

        The bounds are taken against the incumbents as they are before the first child.
        The incumbents only rise, so a child refused then is refused at its turn; one
        accepted is checked again (`_bound_ok`) at its turn if an incumbent improved since.
        """
        n = len(cand)
        widths = np.arange(1, n + 1)
        budget = self.x_max - 1 - (nodes + widths)  # >= 1: w <= widest
        # a child's level holds cap_w nodes at most, and as many leaves below it (its budget)
        caps = np.minimum(self.space.level_caps[level], budget)
        top = int(caps.max())
        pattern = self.level_pattern(level, 1)[:top]
        # child w's leaf candidates: the cap_w largest products of its frontier cand[:w]
        # with the next level's ranks (only the first cap_w ranks can be among them), the
        # rest masked below every product (products >= 0); each row sorted, largest first
        inside = (np.arange(n)[None, :, None] < widths[:, None, None]) & (
            np.arange(len(pattern))[None, None, :] < caps[:, None, None]
        )
        grid = np.where(inside, (cand[:, None] * pattern)[None], -1.0).reshape(n, -1)
        if grid.shape[1] < top:  # fewer products than leaves: `candidates` pads with zeros
            grid = np.pad(grid, ((0, 0), (0, top - grid.shape[1])), constant_values=-1.0)
        grid.sort(axis=1)
        real = np.minimum(caps, widths * np.minimum(caps, len(pattern)))  # products taken
        column = np.arange(top)
        # `candidates`' zeros past the products: gains of the bound and the leaves alike
        gains = np.where(column < real[:, None], grid[:, ::-1][:, :top], 0.0)
        reach = aats[:n, None] + gains.cumsum(axis=1)  # the leaves' AATs, the bound's upper
        at = np.minimum(nodes + widths[:, None] + 2 + column, self.x_max)  # leaves' x
        base = fixed + self.first_min_from[self._accepted(aats[:n])]  # as `_bound_ok`
        low = base[:, None] + self.verify[at] + self.passes_lb(level, 1) * self.pass_min
        if self.per_size:
            beat = self.best_ratio[at] * (1 + 1e-12)
        else:
            beat = np.full(at.shape, self.best_ratio.max() * (1 + 1e-12))
        ahead = ((reach / low > beat) & (column < real[:, None])).any(axis=1)
        if not ahead.any():
            return
        seen = self.improvements
        # the leaves of every child that may be expanded: `_expand` one level down
        k = self.k
        fixed_of = np.full(n, float(fixed))
        if self._feeds(level):
            for i in np.flatnonzero(ahead).tolist():
                fixed_of[i] = fixed + self.costs.block_cycles((*shape, i + 1)[level - k : level])
        ratios = reach / (self.verify[at] + self.first[self._accepted(reach)] + fixed_of[:, None])
        aat_of = aats.tolist()
        for i in order:
            w = i + 1
            if w > n or not ahead[i]:
                continue
            if self.improvements != seen and not self._bound_ok(
                level, cand[:w], aat_of[i], nodes + w, fixed, shape, w
            ):
                continue
            self._new_state()
            cap = int(caps[i])
            self.leaves += cap
            self._offer_leaves(nodes + w + 2, ratios[i, :cap], reach[i, :cap], (*shape, w))

    def _bound_ok(
        self,
        level: int,
        frontier: np.ndarray,
        aat: float,
        nodes: int,
        fixed: float,
        shape: tuple[int, ...],
        width: int,
    ) -> bool:
        """False when no completion below this prefix can beat the incumbents."""
        budget = self.x_max - 1 - nodes
        levels_left = self.depth_max - level
        if budget < 1 or levels_left < 1:
            return False
        first_lb = self.first_min_from[min(accepted_of(aat), self.a_max)]
        base = fixed + first_lb
        # completions of r = 1..budget more nodes end at x = nodes + 1 + r: slices by x
        xs = slice(nodes + 2, nodes + 2 + budget)
        verify = self.verify[xs]
        # what a completion at each x must beat: its own x's best, or the best overall
        if self.per_size:
            beat = self.best_ratio[xs] * (1 + 1e-12)
        else:
            beat = np.full(budget, self.best_ratio.max() * (1 + 1e-12))
        per_level = []
        caps = self.space.level_caps
        for m in range(1, levels_left + 1):
            # at most cap nodes at level `level + m`, each no better than the cap best
            # descendants of the frontier exactly m levels down
            cap = min(caps[level + m - 1], budget)
            vals = _largest_products(frontier, self.level_pattern(level, m)[:cap], cap)
            per_level.append(vals)
            # r nodes fit only while r <= the caps of these m levels (one level: its values,
            # already in descending order and at most `budget` of them, are the gains)
            if m == 1:
                gains = vals
            else:
                gains = np.concatenate(per_level)
                gains.sort()
                gains = gains[::-1][:budget]
            n_r = gains.size
            upper = aat + gains.cumsum()
            # m more levels feed the block ending at `level` (if any) and later ones
            passes = self.passes_lb(level, m)
            low = base + verify[:n_r] + passes * self.pass_min
            # m levels need at least m nodes: r >= m, from index m - 1
            if (upper[m - 1:] / low[m - 1:] > beat[m - 1:n_r]).any():
                return True
        return False


def _largest_products(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """The k largest products a_i * b_j, largest first (np.outer's products, sorted, one
    call less: the search asks this some 250,000 times on short arrays)."""
    products = (a[:, None] * b).ravel()
    products.sort()
    return products[::-1][:k]


def count_shapes(space: ShapeSpace) -> int:
    """Level-width shapes of the space: widths 1..cap per level, x <= max_verify_len."""
    top = space.max_verify_len - 1
    ways = [1] + [0] * top  # ways[n]: prefixes with n nodes
    total = 0
    for cap in space.level_caps:
        nxt = [0] * (top + 1)
        for n, count in enumerate(ways):
            if count:
                for w in range(1, min(cap, top - n) + 1):
                    nxt[n + w] += count
        ways = nxt
        total += sum(ways)
    return total


def search_shapes(
    model: PositionalModel,
    costs: TreeCosts,
    space: ShapeSpace,
    per_size: bool = True,
) -> SearchResult:
    """Exact throughput-optimal level-width tree for every x <= space.max_verify_len.

    per_size=False prunes against the best tree over all x only (faster when only the
    overall best is wanted; the per-x entries are then the best found, not all optimal).
    """
    space.check()
    _check_model(model)
    shapes = count_shapes(space)
    if per_size and shapes > MAX_PER_SIZE_SHAPES:
        raise InputError(
            "max_tree",
            " ".join(map(str, space.level_caps)),
            f"at most {MAX_PER_SIZE_SHAPES:.0e} level-width shapes for an exact per-x curve "
            f"(this maximal tree has {shapes:.1e}); ask for the overall best tree instead",
        )
    t0 = time.perf_counter()
    s = _Search(model, costs, space, per_size)
    s.run()
    designs = {
        x: design_of(costs, s.best_shape[x], shape_aat(model, s.best_shape[x]))
        for x in sorted(s.best_shape)
    }
    return SearchResult(designs, s.states, s.leaves, time.perf_counter() - t0)


def dynamic_designs(
    model: PositionalModel,
    costs: TreeCosts,
    max_verify_len: int,
    max_depth: int,
    max_top_k: int,
) -> SearchResult:
    """EAGLE-3: every (draft depth, top-k, x) dynamic tree; per x the highest tokens/s.

    costs.block_cycles((top_k,)) is one draft pass over top_k tokens; T_d = first pass over
    floor(AAT) tokens + depth such passes.
    """
    if not 2 <= max_verify_len <= MAX_SEARCH_VERIFY_LEN:
        raise InputError(
            "size", max_verify_len, f"a largest x between 2 and {MAX_SEARCH_VERIFY_LEN}"
        )
    if not 1 <= max_depth <= MAX_SEARCH_DEPTH or not 1 <= max_top_k <= 64:
        raise InputError(
            "max_depth/top_k",
            (max_depth, max_top_k),
            f"depth 1..{MAX_SEARCH_DEPTH} and top-k 1..64",
        )
    t0 = time.perf_counter()
    clock = costs.clock_hz()
    best: dict[int, tuple[float, int, int, float, int, int]] = {}
    leaves = 0
    for depth in range(1, max_depth + 1):
        for top_k in range(1, max_top_k + 1):
            drafted = top_k + depth * top_k * top_k
            top = min(drafted, max_verify_len - 1)
            tree = dynamic_tree(model, top, depth, top_k)
            probs = np.sort(model.path_probabilities(tree)[1:])[::-1]
            aats = 1.0 + np.cumsum(probs)
            passes = depth * costs.block_cycles((top_k,))
            for n in range(1, top + 1):
                leaves += 1
                aat = float(aats[n - 1])
                tv = costs.verify_cycles(n + 1)
                td = costs.first_cycles(accepted_of(aat)) + passes
                tokens_per_s = aat * clock / (tv + td)
                old = best.get(n + 1)
                if old is None or tokens_per_s > old[0]:
                    best[n + 1] = (tokens_per_s, depth, top_k, aat, tv, td)
    designs = {}
    for x, (tps, depth, top_k, aat, tv, td) in sorted(best.items()):
        shape = dynamic_tree(model, x - 1, depth, top_k).level_widths()
        designs[x] = Design(shape, x, aat, accepted_of(aat), tv, td, tps, depth, top_k)
    return SearchResult(designs, 0, leaves, time.perf_counter() - t0)


def enumerate_trees(max_nodes: int, max_depth: int | None = None) -> Iterator[tuple[int, ...]]:
    """Every tree (children ranked 0, 1, ... in order) with 1..max_nodes nodes, as parents.

    Brute force for the tests: a tree is grown node by node in level order; plane trees
    are counted by the Catalan numbers (58786 with 12 nodes).
    """
    depth_bound = max_nodes if max_depth is None else max_depth

    def grow(parents: list[int], depths: list[int]) -> Iterator[tuple[int, ...]]:
        """This tree, then every extension whose new parents keep BFS order and the depth bound."""
        yield tuple(parents)
        if len(parents) >= max_nodes:
            return
        # canonical order: a new node's parent is >= the previous node's parent (BFS order)
        last_parent = parents[-1] if len(parents) > 1 else 0
        for u in range(last_parent, len(parents)):
            if depths[u] + 1 > depth_bound:
                continue
            parents.append(u)
            depths.append(depths[u] + 1)
            yield from grow(parents, depths)
            depths.pop()
            parents.pop()

    yield from grow([-1], [0])


def brute_force_best(
    model: PositionalModel, costs: TreeCosts, max_nodes: int, max_depth: int | None = None
) -> dict[int, tuple[float, tuple[int, ...]]]:
    """Per x <= max_nodes: the highest AAT/cycles over every tree, and its level widths."""
    best: dict[int, tuple[float, tuple[int, ...]]] = {}
    for parents in enumerate_trees(max_nodes, max_depth):
        if len(parents) < 2:
            continue
        tree = TokenTree.from_parents(parents)
        aat = model.expected_aat(tree)
        shape = tuple(tree.level_widths())
        tv, td = shape_cost(costs, shape, aat)
        ratio = aat / (tv + td)
        x = len(parents)
        if x not in best or ratio > best[x][0]:
            best[x] = (ratio, shape)
    return best
