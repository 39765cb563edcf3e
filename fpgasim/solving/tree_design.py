"""Hardware-aware tree design: per (board, target, algorithm, context) the tree of highest
tokens/s, AAT / (T_v + T_d), with T_v and T_d from an engine (issue 14, docs/trees.md).

`EngineTreeCosts` feeds `fpgasim.tree.throughput` with the engine's cycles, one engine
call per distinct pass (cached): the target pass at each x, the drafter's first pass over
the accepted tokens, and the pass that feeds each block of levels. The draft passes are
the ones `dataflow.drafters.draft_passes` lists (tested: the sum equals `draft_timing`).
T_v(x) is costed with the tree mask of a chain of x tokens: FlightLLM's compiler costs
every tree of x tokens alike (its tree mask is applied inside the softmax, no tile is
skipped; tested), and a chain is the densest mask, so the search never under-costs a tree.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fpgasim.acceptance.curves import AatCurve, _embedded_ori
from fpgasim.acceptance.curves import max_verify_len as curve_max
from fpgasim.acceptance.log_model import fit_curve
from fpgasim.acceptance.rule import embedded_source
from fpgasim.bounded import BoundedCache
from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, TargetModel
from fpgasim.dataflow.drafters import draft_passes
from fpgasim.dataflow.passes import PassSpec
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.engine import Engine
from fpgasim.errors import ConfigError, InputError
from fpgasim.step import simulator_of, target_spec
from fpgasim.tree.builders import dynamic_tree
from fpgasim.tree.embedded import embedded_max_depth, embedded_model
from fpgasim.tree.optimal import greedy_parents
from fpgasim.tree.positional import PositionalModel
from fpgasim.tree.throughput import (
    MAX_PER_SIZE_SHAPES,
    MAX_SEARCH_VERIFY_LEN,
    TREE_COSTS,
    Design,
    SearchResult,
    ShapeSpace,
    TableCosts,
    count_shapes,
    design_of,
    dynamic_designs,
    search_shapes,
)


def dynamic_top_k(algorithm: Algorithm) -> int:
    """The top-k a dynamic drafter's trees are searched at: its default tree's (the
    algorithm schema requires one for every dynamic drafter)."""
    top_k = algorithm.default_tree.top_k
    if top_k is None:
        raise ConfigError(f"algorithm {algorithm.id}", "default_tree.top_k", None,
                          f"nodes expanded per level ({algorithm.kind} drafts a dynamic tree)")
    return top_k


class EngineTreeCosts:
    """TreeCosts of one (engine, board, target, algorithm, context), each pass timed by the
    engine's pass service (fpgasim.step), which remembers it."""

    def __init__(
        self,
        engine: Engine,
        board: Board,
        model: TargetModel,
        algorithm: Algorithm,
        context: int,
    ) -> None:
        if context < 1:
            raise InputError("context", context, "a context length >= 1")
        self.engine, self.board, self.model, self.algorithm = engine, board, model, algorithm
        self.passes = simulator_of(engine)
        self.context = context
        self.levels_per_pass = algorithm.drafter.levels_per_pass
        self._clock: float | None = None
        #: the distinct passes this search asked for (its `engine_passes` count)
        self._asked: set[PassSpec] = set()
        self._memo: BoundedCache[float] = TREE_COSTS.new()  # each cost once

    @property
    def calls(self) -> int:
        """How many distinct passes the search costed."""
        return len(self._asked)

    def _cycles(self, spec: PassSpec, drafter: bool) -> float:
        t = self.passes.run_pass(
            spec, self.board, self.model, self.algorithm.drafter if drafter else None
        )
        self._asked.add(spec)
        self._clock = t.clock_hz * t.duration_divisor  # cycles per second of time
        # as the engine gives them (FlightLLM's compiler: fractional cycles), so the search
        # costs exactly what the solver costs (truncated, its tokens/s were ~1e-7 off)
        return t.cycles

    def _once(self, key: tuple, cost: Callable[[], float]) -> float:
        """`cost()` the first time `key` is asked, then remembered (pure in its arguments)."""
        return self._memo(key, cost)

    def verify_cycles(self, verify_len: int) -> float:
        """T_v(x) in cycles, costed with a chain's tree mask (see the module doc)."""
        return self._once(("v", verify_len), lambda: self._verify_cycles(verify_len))

    def _verify_cycles(self, verify_len: int) -> float:
        """`verify_cycles` computed."""
        chain = tuple(range(-1, verify_len - 1)) if verify_len > 1 else None
        spec = target_spec(verify_len, self.context, chain)
        return self._cycles(spec, False)

    def _schedule_tree(self, widths: tuple[int, ...]) -> TokenTree:
        if self.algorithm.dynamic_tree:
            return TokenTree.dynamic(1, widths[0])
        return TokenTree.from_shape((*widths, *(1,) * self.levels_per_pass))

    def first_cycles(self, accepted: int) -> float:
        """The first draft pass: over the tokens accepted last iteration (floor(AAT))."""
        return self._once(("f", accepted), lambda: self._first_cycles(accepted))

    def _first_cycles(self, accepted: int) -> float:
        """`first_cycles` computed."""
        spec = draft_passes(
            self.algorithm, self._schedule_tree((1,) * self.levels_per_pass), accepted, self.context
        )[0]
        return self._cycles(spec, True)

    def block_cycles(self, widths: tuple[int, ...]) -> float:
        """The draft pass fed with one block of levels of these widths (EAGLE-3: (top_k,))."""
        block = tuple(widths)
        return self._once(("b", block), lambda: self._block_cycles(block))

    def _block_cycles(self, widths: tuple[int, ...]) -> float:
        """`block_cycles` computed."""
        spec = draft_passes(self.algorithm, self._schedule_tree(widths), 1, self.context)[1]
        return self._cycles(spec, True)

    def clock_hz(self) -> float:
        """Cycles per second of time, clock_hz · duration_divisor of the engine's passes (the
        search's cycles -> tokens/s); costs T_v(1) first if no pass has run yet."""
        if self._clock is None:
            self.verify_cycles(1)
        assert self._clock is not None
        return self._clock


@dataclass(frozen=True)
class TreeDesignResult:
    """The throughput-optimal tree of one context and the AAT-optimal tree of equal size."""

    best: Design
    best_tree: TokenTree
    aat_optimal: Design
    aat_optimal_tree: TokenTree
    search: SearchResult
    engine_calls: int
    seconds: float


def search_space(algorithm: Algorithm, max_verify_len: int | None = None) -> ShapeSpace:
    """The drafter's shapes: LongSpec/Falcon level widths capped by the maximal tree."""
    caps = tuple(algorithm.max_tree or algorithm.default_tree.shape or ())
    if not caps:
        raise InputError(
            "algorithm", algorithm.id, "an algorithm with max_tree or a default tree shape"
        )
    depth = min(len(caps), embedded_max_depth(algorithm)) if algorithm.acceptance else len(caps)
    largest = sum(caps[:depth]) + 1
    if max_verify_len is not None and max_verify_len > largest:
        raise InputError(
            "size",
            max_verify_len,
            f"at most {largest}: the largest tree {algorithm.id}'s maximal tree "
            f"{' '.join(map(str, caps[:depth]))} holds",
        )
    return ShapeSpace(caps[:depth], min(max_verify_len or curve_max(algorithm), largest))


def design_trees(
    model: PositionalModel,
    costs: EngineTreeCosts,
    max_verify_len: int | None = None,
    per_size: bool = True,
) -> SearchResult:
    """Per x the throughput-optimal tree the algorithm's drafter can build."""
    algorithm = costs.algorithm
    if algorithm.dynamic_tree:
        d = algorithm.default_tree
        depth = embedded_max_depth(algorithm) - 1 if algorithm.acceptance else (d.depth or 6)
        top_k = dynamic_top_k(algorithm)
        return dynamic_designs(
            model, costs, max_verify_len or curve_max(algorithm), max(1, depth), top_k
        )
    return search_shapes(model, costs, search_space(algorithm, max_verify_len), per_size)


def tree_of(model: PositionalModel, design: Design) -> TokenTree:
    """The tree of a design: EAGLE-3's dynamic tree, else the widths on their best slots."""
    if design.draft_depth is not None and design.draft_top_k is not None:
        return dynamic_tree(model, design.verify_len - 1, design.draft_depth, design.draft_top_k)
    return TokenTree.from_shape(design.shape, model)


def aat_optimal_design(model: PositionalModel, costs: EngineTreeCosts, verify_len: int) -> Design:
    """The tree of highest expected AAT with x = verify_len that the drafter can build
    (LongSpec/Falcon: within the maximal tree's level widths; EAGLE-3: over depth/top-k),
    costed on the board. The same searches with unit costs: tokens/s = AAT."""
    unit = TableCosts(lambda x: 1, lambda a: 0, lambda w: 0, costs.levels_per_pass)
    if costs.algorithm.dynamic_tree:
        depth = embedded_max_depth(costs.algorithm) - 1
        top = dynamic_designs(model, unit, verify_len, depth, dynamic_top_k(costs.algorithm))
        pick = top.by_verify_len[verify_len]
        assert pick.draft_depth is not None and pick.draft_top_k is not None
        draft = costs.first_cycles(pick.accepted) + pick.draft_depth * costs.block_cycles(
            (pick.draft_top_k,)
        )
        tv = costs.verify_cycles(verify_len)
        return dataclasses.replace(
            pick,
            verify_cycles=tv,
            draft_cycles=draft,
            tokens_per_s=pick.aat * costs.clock_hz() / (tv + draft),
        )
    space = search_space(costs.algorithm, verify_len)
    # exact per x where the space allows it (LongSpec always); past MAX_PER_SIZE_SHAPES
    # (Falcon at large x) the best AAT found, at least the capped greedy/breadth-first tree's
    exact = count_shapes(space) <= MAX_PER_SIZE_SHAPES
    top = search_shapes(model, unit, space, per_size=exact)
    pick = top.by_verify_len[verify_len]
    return design_of(costs, pick.shape, pick.aat)


class _LowerVerify:
    """TreeCosts whose T_v is exact at the x of `exact` and a lower bound elsewhere (the x
    whose ceiling is below a tree already costed: `_candidate_verify_lens`), every other
    cost the wrapped one's."""

    def __init__(self, costs: EngineTreeCosts, exact: set[int], lower: dict[int, float]) -> None:
        self.costs, self.exact, self.lower = costs, exact, lower
        self.levels_per_pass = costs.levels_per_pass
        self.algorithm = costs.algorithm

    def verify_cycles(self, verify_len: int) -> float:
        """T_v(x) at a candidate x, its lower bound at any other."""
        if verify_len in self.exact:
            return self.costs.verify_cycles(verify_len)
        return self.lower[verify_len]

    def first_cycles(self, accepted: int) -> float:
        """The wrapped costs' first draft pass."""
        return self.costs.first_cycles(accepted)

    def block_cycles(self, widths: tuple[int, ...]) -> float:
        """The wrapped costs' fed draft pass."""
        return self.costs.block_cycles(widths)

    def clock_hz(self) -> float:
        """The wrapped costs' clock."""
        return self.costs.clock_hz()


def check_size(algorithm: Algorithm, max_verify_len: int | None) -> None:
    """InputError unless `max_verify_len` (None: the default) is an x the drafter's trees
    can reach, as the search checks it: within a static drafter's maximal tree, at least 2
    and at most MAX_SEARCH_VERIFY_LEN for a dynamic one; checked before any work, whatever
    acceptance then decides the trees."""
    if max_verify_len is None:
        return
    if algorithm.dynamic_tree:
        if not 2 <= max_verify_len <= MAX_SEARCH_VERIFY_LEN:
            raise InputError("size", max_verify_len,
                             f"a largest x between 2 and {MAX_SEARCH_VERIFY_LEN}")
        return
    search_space(algorithm, max_verify_len).check()


def _search_top(costs: EngineTreeCosts, max_verify_len: int | None) -> int:
    """The largest x `design_trees` searches (as it sizes its space)."""
    algorithm = costs.algorithm
    if algorithm.dynamic_tree:
        return max_verify_len or curve_max(algorithm)
    return search_space(algorithm, max_verify_len).max_verify_len


def _candidate_verify_lens(
    model: PositionalModel, costs: EngineTreeCosts, max_verify_len: int | None
) -> tuple[set[int], dict[int, float]] | None:
    """The x that can hold the throughput-optimal tree, and a lower bound of T_v (cycles) at
    every other, or None when the engine gives no bounds (then every x is costed).

    Any tree of x nodes has an expected AAT of at most the greedy tree's of x nodes, unbounded
    (optimal at every size for p non-increasing in rank, docs/trees.md), and its step takes at
    least T_v(x) >= B(x), the engine's lower bound (docs/method.md, "Finding the best x by
    bounds"): tokens/s <= AAT_greedy(x) / B(x). The AAT-optimal drafter tree at the x of the
    largest such ceilings is costed exactly; every x whose ceiling is below the best of them
    cannot hold the optimum, and the search sees its bound, under which any of its trees
    stays below that real tree: the search's answer is the one it gives with every x costed
    (tests/tree/test_throughput.py)."""
    service = costs.passes
    if not service.has_bounds(costs.board) or not model.is_monotone():
        return None  # no bound to prune by (the greedy bound needs p non-increasing in rank)
    top = _search_top(costs, max_verify_len)
    parents = greedy_parents(model, top)
    probs = np.sort(model.path_probabilities(TokenTree.from_parents(parents))[1:])[::-1]
    aat_ub = {x: 1.0 + float(probs[: x - 1].sum()) for x in range(2, top + 1)}
    clock = costs.clock_hz()
    scale = clock * (1 - 1e-9)  # seconds -> cycles, kept below the pass's own count

    def lower_cycles(x: int, tight: bool) -> float:
        chain = tuple(range(-1, x - 1))
        spec = target_spec(x, costs.context, chain)
        if tight:
            seconds = service.bound_s(spec, costs.board, costs.model)
        else:
            seconds = service.floor_s(spec, costs.board, costs.model)
        return seconds * scale

    floors = {x: lower_cycles(x, False) for x in aat_ub}
    ceiling = {x: aat_ub[x] * clock / floors[x] if floors[x] > 0 else math.inf for x in aat_ub}
    by_ceiling = sorted(aat_ub, key=lambda x: (-ceiling[x], x))
    real = max(aat_optimal_design(model, costs, x).tokens_per_s for x in by_ceiling[:3])
    exact, lower = {1}, {}  # T_v(1): AD, and the clock's first pass
    margin = real * (1 - 1e-9)  # the ceilings' sums and the search's in another order
    for x in aat_ub:
        if ceiling[x] >= margin:
            tight = lower_cycles(x, True)
            if tight <= 0 or aat_ub[x] * clock / tight >= margin:
                exact.add(x)
                continue
            floors[x] = tight
        lower[x] = floors[x]
    return exact, lower


def design_tree(
    model: PositionalModel,
    costs: EngineTreeCosts,
    max_verify_len: int | None = None,
) -> TreeDesignResult:
    """The tree of highest tokens/s over every x, and the AAT-optimal tree of that x. On an
    engine with lower bounds only the x that can hold it are costed exactly
    (`_candidate_verify_lens`); the answer is the same."""
    t0 = time.perf_counter()
    pruned = _candidate_verify_lens(model, costs, max_verify_len)
    search_costs = costs if pruned is None else _LowerVerify(costs, *pruned)
    result = design_trees(model, search_costs, max_verify_len, per_size=False)
    best = result.best
    if pruned is not None:  # the best is at a candidate x: its numbers are exact
        assert best.verify_len in pruned[0]
    aat_design = aat_optimal_design(model, costs, best.verify_len)
    best_tree, aat_tree = tree_of(model, best), tree_of(model, aat_design)
    return TreeDesignResult(
        best,
        best_tree,
        aat_design,
        aat_tree,
        result,
        costs.calls,
        time.perf_counter() - t0,
    )


def throughput_curve(
    engine: Engine,
    board: Board,
    model: TargetModel,
    algorithm: Algorithm,
    context: int,
    x_min: int = 2,
    x_max: int | None = None,
) -> AatCurve:
    """The `throughput` tree method: per x the tree of highest tokens/s on this board under
    the algorithm's embedded acceptance model at `context`, as a solver AatCurve."""
    engine = simulator_of(engine)  # one memo for every consumer below
    acceptance = embedded_model(algorithm, context)
    costs = EngineTreeCosts(engine, board, model, algorithm, context)
    result = design_trees(acceptance, costs, x_max, per_size=True)
    designs = [d for x, d in result.by_verify_len.items() if x >= x_min]
    if not designs:
        raise InputError("verify_lens", (x_min, x_max), "a range holding some x >= 2")
    trees = [
        TokenTree.dynamic(d.draft_depth, d.draft_top_k)
        if d.draft_depth is not None
        else TokenTree.from_shape(d.shape)
        for d in designs
    ]
    points = pd.DataFrame(
        {
            "verify_len": [d.verify_len for d in designs],
            "aat": [d.aat for d in designs],
            "tree": trees,
            "tree_source": "throughput",
        }
    )
    measured = points[["verify_len", "aat"]]
    fit = fit_curve(measured["verify_len"], measured["aat"])
    ori = _embedded_ori(algorithm, context)  # the GPU default tree, for the Ori set
    note = embedded_source(algorithm, model.id, context, why="trees designed for this board").note
    return AatCurve("embedded", context, "embedded", points, measured, fit, ori, "",
                    "embedded", note)


#: Tree methods whose trees depend on the board's costs: name -> curve builder
#: (engine, board, model, algorithm, context, x_max=...) -> AatCurve.
COSTED_TREE_METHODS = {"throughput": throughput_curve}
#: Tree methods no measured table holds: always from the embedded acceptance model.
MODEL_TREE_METHODS = frozenset({"optimal", "throughput"})
