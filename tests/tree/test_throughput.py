"""Throughput-optimal trees (issue 14): exactness against brute force, the cost model's
assumptions on the engines, and the V80 / L = 1024 / LongSpec acceptance criterion."""

from __future__ import annotations

import numpy as np
import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.passes import PassSpec
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.engine import get_engine
from fpgasim.errors import InputError
from fpgasim.simulate import draft_timing, verify_timing
from fpgasim.solving.tree_design import EngineTreeCosts, design_tree, design_trees
from fpgasim.tree.builders import depth_tree, width_tree
from fpgasim.tree.embedded import default_token_tree, embedded_model
from fpgasim.tree.method_curves import compare_curves
from fpgasim.tree.optimal import greedy_tree
from fpgasim.tree.positional import PositionalModel
from fpgasim.tree.throughput import (
    ShapeSpace,
    TableCosts,
    brute_force_best,
    enumerate_trees,
    search_shapes,
    shape_aat,
    shape_cost,
)


def _random_model(rng: np.random.Generator) -> PositionalModel:
    ranks = int(rng.integers(2, 6))
    rows = []
    for _ in range(int(rng.integers(1, 5))):
        r = np.sort(rng.random(ranks))[::-1]
        rows.append(list(r / r.sum() * rng.uniform(0.5, 0.99)))
    return PositionalModel.from_rows(rows)


def _step_costs(rng: np.random.Generator, k: int, first_per_token: int = 0) -> TableCosts:
    """Step-function costs like an MPE's (padding to `pad` tokens), pass costs that can
    dominate: the cases where the throughput tree differs from the AAT-optimal one."""
    a, b = (int(v) for v in rng.integers(0, 300, size=2))
    pad = int(rng.integers(1, 6))
    base = int(rng.integers(0, 3000))
    return TableCosts(
        lambda x: 1000 + a * x + b * ((x + pad - 1) // pad),
        lambda acc: 500 + first_per_token * acc,
        lambda w: base + 37 * sum(w) + 300 * (sum(w) // pad) + 11 * w[0],
        levels_per_pass=k,
    )


def test_enumeration_counts_plane_trees() -> None:
    """Trees of n nodes with ranked children are counted by Catalan(n - 1)."""
    counts = np.bincount([len(p) for p in enumerate_trees(9)])
    assert counts[1:].tolist() == [1, 1, 2, 5, 14, 42, 132, 429, 1430]


@pytest.mark.slow
def test_every_tree_up_to_12_nodes() -> None:
    """Brute force over all 82500 trees of <= 12 nodes agrees with the search at every x."""
    rng = np.random.default_rng(12)
    model = _random_model(rng)
    costs = _step_costs(rng, k=1)
    n = 12
    brute = brute_force_best(model, costs, n)
    found = search_shapes(model, costs, ShapeSpace((n,) * (n - 1), n))
    for x in range(2, n + 1):
        d = found.by_verify_len[x]
        assert d.aat / d.cycles == pytest.approx(brute[x][0], rel=1e-12), x


@pytest.mark.parametrize("seed", range(6))
def test_brute_force_random_costs(seed: int) -> None:
    """Random models, step costs, 1-3 levels per draft pass, depth bounds: exact per x."""
    rng = np.random.default_rng(seed)
    model = _random_model(rng)
    k = 1 + seed % 3
    costs = _step_costs(rng, k)
    n, depth = 9, 2 + seed % 4
    brute = brute_force_best(model, costs, n, depth)
    found = search_shapes(model, costs, ShapeSpace((n,) * depth, n))
    for x in range(2, n + 1):
        d = found.by_verify_len[x]
        assert d.aat / d.cycles == pytest.approx(brute[x][0], rel=1e-12), (seed, x)
    assert found.best.tokens_per_s == max(d.tokens_per_s for d in found.by_verify_len.values())


@pytest.mark.parametrize("seed", range(8))
def test_last_children_are_bounded_and_expanded_as_one_at_a_time(seed: int) -> None:
    """`_Search._last_children` (every child's bound and leaves at once) leaves the search
    as bounding each child with `_bound_ok` at its turn and expanding it with `_expand`
    does: the same incumbents, shapes, states and leaves, at random prefixes and
    incumbents, per x and for the best alone."""
    import copy

    from fpgasim.tree.throughput import _Search

    rng = np.random.default_rng(100 + seed)
    model = _random_model(rng)
    caps = tuple(int(c) for c in rng.integers(1, 10, size=3 + seed % 3))
    if seed % 2:  # one node at the children's level, more leaves below than products
        caps = (*caps[:-2], 1, 9)
    x_max = int(rng.integers(12, 40))
    expanded = refused = 0
    for per_size in (True, False):
        costs = _step_costs(rng, 1 + seed % 3, first_per_token=int(rng.integers(20, 200)))
        search = _Search(model, costs, ShapeSpace(caps, x_max), per_size)
        search._seed()  # the greedy and breadth-first incumbents; some x left at -inf
        level = search.depth_max - 1  # the children's level: their children are leaves
        for _ in range(40):
            search.best_ratio[rng.random(x_max + 1) < 0.3] *= rng.uniform(0.3, 1.0)
            shape = tuple(int(w) for w in rng.integers(1, 4, size=level))
            nodes = sum(shape)
            widest = x_max - nodes - 2
            if widest < 1:
                continue
            cap = min(caps[level - 1], x_max - 1 - nodes)
            frontier = np.sort(rng.random(int(rng.integers(1, 6))))[::-1]
            cand = search.candidates(frontier, level, cap)[: min(cap, widest)]
            aats = 1.0 + rng.uniform(0, level) + cand.cumsum()
            fixed = float(rng.integers(0, 5000))
            order = rng.permutation(cap).tolist()
            alone = copy.deepcopy(search)
            search._last_children(level, cand, aats, nodes, fixed, shape, order)
            for i in order:
                w = i + 1
                if w <= widest and alone._bound_ok(level, cand[:w], float(aats[i]), nodes + w,
                                                   fixed, shape, w):  # fmt: skip
                    alone._expand(level, cand[:w], float(aats[i]), nodes + w, fixed, (*shape, w))
                    expanded += 1
                else:
                    refused += 1
            assert search.best_ratio.tolist() == alone.best_ratio.tolist(), (seed, nodes)
            assert search.best_shape == alone.best_shape and search.best_aat.tolist() == (
                alone.best_aat.tolist())
            assert (search.states, search.leaves) == (alone.states, alone.leaves)
    assert expanded >= 20 and refused >= 20  # both answers are exercised


def test_brute_force_finds_non_greedy_optima() -> None:
    """The brute-force cases are not trivial: the throughput tree often is not AAT-optimal."""
    differ = 0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        model = _random_model(rng)
        costs = _step_costs(rng, 1 + seed % 3)
        found = search_shapes(model, costs, ShapeSpace((9,) * 4, 9))
        for x, d in found.by_verify_len.items():
            differ += d.shape != tuple(greedy_tree(model, x, 4).tree.level_widths())
    assert differ >= 5


@pytest.mark.slow
def test_first_pass_cost_floor_assumption() -> None:
    """With a first pass whose cost grows with floor(AAT), the search is exact over the
    AAT-best tree of every level-width shape (brute force: all trees, best AAT per shape)."""
    rng = np.random.default_rng(5)
    n = 10
    trees = [TokenTree.from_parents(p) for p in enumerate_trees(n) if len(p) > 1]
    for _ in range(4):
        model = _random_model(rng)
        costs = _step_costs(rng, int(rng.integers(1, 4)), first_per_token=150)
        best_aat: dict[tuple[int, ...], float] = {}
        for t in trees:
            s = tuple(t.level_widths())
            best_aat[s] = max(best_aat.get(s, 0.0), model.expected_aat(t))
        brute: dict[int, float] = {}
        for s, aat in best_aat.items():
            tv, td = shape_cost(costs, s, aat)
            x = sum(s) + 1
            brute[x] = max(brute.get(x, 0.0), aat / (tv + td))
        found = search_shapes(model, costs, ShapeSpace((n,) * (n - 1), n))
        for x in range(2, n + 1):
            d = found.by_verify_len[x]
            assert d.aat / d.cycles == pytest.approx(brute[x], rel=1e-12)
            assert shape_aat(model, d.shape) == pytest.approx(best_aat[d.shape], rel=1e-12)


def test_non_monotone_vector_refused() -> None:
    model = PositionalModel.from_vector([0.5, 0.1, 0.2])
    costs = _step_costs(np.random.default_rng(0), 1)
    with pytest.raises(InputError, match="non-increasing in rank"):
        search_shapes(model, costs, ShapeSpace((4, 4), 8))


def test_limits_refused_up_front() -> None:
    model = PositionalModel.from_vector([0.6, 0.2])
    costs = _step_costs(np.random.default_rng(0), 1)
    with pytest.raises(InputError, match="size"):
        search_shapes(model, costs, ShapeSpace((4, 4), 4096))
    with pytest.raises(InputError, match="max_depth"):
        search_shapes(model, costs, ShapeSpace((2,) * 17, 30))
    with pytest.raises(InputError, match="max_tree"):
        search_shapes(model, costs, ShapeSpace((40,) * 8, 300), per_size=True)


# ------------------------------------------------------------------ engine costs


@pytest.mark.parametrize("board", ["v80", "u280", "u250", "vhk158", "flightllm-vhk158"])
def test_verify_cost_is_a_function_of_x(board: str) -> None:
    """Assumption of the search: every BFS-ordered tree of x tokens costs the same T_v as a
    chain of x tokens (FlightLLM's compiler applies the tree mask inside the softmax)."""
    from fpgasim.dataflow.lowerings.registry import lowering_of

    b, m = load_board(board), load_model("llama-3.1-8b")
    assert not lowering_of(b).reads_tree_mask
    eng = get_engine("fast")
    rng = np.random.default_rng(1)
    for x in (5, 17, 85):
        chain = eng.run_pass(PassSpec("target", x, 1024, tuple(range(-1, x - 1))), b, m).cycles
        for _ in range(2):
            widths, left = [], x - 1
            while left:
                widths.append(int(rng.integers(1, left + 1)))
                left -= widths[-1]
            tree = TokenTree.from_shape(widths)
            got = eng.run_pass(PassSpec("target", x, 1024, tree.parents), b, m).cycles
            assert got == chain, (board, x, widths)


@pytest.mark.parametrize("algorithm", ["longspec", "falcon", "eagle3"])
def test_costs_match_the_draft_schedule(algorithm: str) -> None:
    """shape_cost's passes are draft_timing's: the search costs what the solver costs."""
    b, m, a = load_board("v80"), load_model("llama-3.1-8b"), load_algorithm(algorithm)
    eng = get_engine("analytic")
    costs = EngineTreeCosts(eng, b, m, a, 2048)
    rng = np.random.default_rng(2)
    for _ in range(5):
        if algorithm == "eagle3":
            depth, top_k, aat = int(rng.integers(1, 7)), int(rng.integers(1, 11)), 3.4
            want = draft_timing(eng, b, m, a, TokenTree.dynamic(depth, top_k), 3, 2048)
            got = costs.first_cycles(3) + depth * costs.block_cycles((top_k,))
            assert got == want.cycles
            continue
        shape = tuple(int(v) for v in rng.integers(1, 17, size=int(rng.integers(1, 8))))
        aat = float(rng.uniform(1, 5))
        tv, td = shape_cost(costs, shape, aat)
        want = draft_timing(eng, b, m, a, TokenTree.from_shape(shape), max(1, int(aat)), 2048)
        assert td == want.cycles, shape
        assert tv == verify_timing(eng, b, m, sum(shape) + 1, 2048).cycles


@pytest.mark.slow
def test_one_token_pass_is_the_cheapest() -> None:
    """Assumption of the bound: a draft pass over one block costs at least one over 1 token."""
    m = load_model("llama-3.1-8b")
    for board in ("v80", "u280"):
        b = load_board(board)
        for algorithm in ("longspec", "falcon"):
            a = load_algorithm(algorithm)
            costs = EngineTreeCosts(get_engine("fast"), b, m, a, 1024)
            k = costs.levels_per_pass
            least = costs.block_cycles((1,) * k)
            for w in (2, 4, 16, 17, 39):
                assert costs.block_cycles((w,) * k) >= least


# ------------------------------------------------------------------ acceptance criterion


@pytest.fixture(scope="module")
def v80_longspec_1024():
    a = load_algorithm("longspec")
    model = embedded_model(a, 1024)
    eng = get_engine("fast")  # the default `event`'s cycles (tests/engine/test_fast.py), 20x sooner
    costs = EngineTreeCosts(eng, load_board("v80"), load_model("llama-3.1-8b"), a, 1024)
    return a, model, costs, design_tree(model, costs)


@pytest.mark.slow
def test_v80_1024_beats_every_fixed_tree(v80_longspec_1024) -> None:
    """Done-when of issue 14: on V80 at L = 1024 with the embedded LongSpec model, the
    throughput tree's tokens/s >= every fixed-shape tree the solver considers (width,
    depth, prior-score, AAT-optimal at every x, and the GPU default tree)."""
    a, model, costs, result = v80_longspec_1024
    shape = tuple(a.max_tree)
    candidates = [default_token_tree(a, model)]
    for x in range(2, sum(shape) + 2):
        candidates += [width_tree(x - 1, shape, model), depth_tree(x - 1, shape, model)]
        candidates.append(greedy_tree(model, x, len(shape)).tree)
    clock = costs.clock_hz()
    best_fixed = 0.0
    for tree in candidates:
        aat = model.expected_aat(tree)
        tv, td = shape_cost(costs, tree.level_widths(), aat)
        best_fixed = max(best_fixed, aat * clock / (tv + td))
    table = compare_curves(a, range(2, 86), np.random.default_rng(0), 1024, iterations=20_000)
    prior = table[table["method"] == "prior_score"]
    for s, aat in zip(prior["tree_shape"], prior["aat"], strict=True):
        tv, td = shape_cost(costs, tuple(int(v) for v in s.split()), aat)
        best_fixed = max(best_fixed, aat * clock / (tv + td))
    assert result.best.tokens_per_s >= best_fixed
    assert result.best.tokens_per_s >= result.aat_optimal.tokens_per_s
    assert model.expected_aat(result.best_tree) == pytest.approx(result.best.aat, rel=1e-12)


def test_solver_costs_the_design_the_same(v80_longspec_1024) -> None:
    """The solver's Timer on the throughput curve gives the design's tokens/s (same engine)."""
    from fpgasim.solving.solver import solve_curves
    from fpgasim.solving.tree_design import throughput_curve

    a, _model, costs, result = v80_longspec_1024
    curve = throughput_curve(costs.engine, costs.board, costs.model, a, 1024, x_max=20)
    sol = solve_curves(costs.engine, costs.board, costs.model, a, [curve])
    s = sol.summary.iloc[0]
    assert s["best_verify_len"] == result.best.verify_len
    assert s["best_tokens_per_s"] == pytest.approx(result.best.tokens_per_s, rel=1e-12)


def test_eagle3_enumeration_respects_depth_and_top_k() -> None:
    a = load_algorithm("eagle3")
    model = embedded_model(a, 512)
    costs = EngineTreeCosts(
        get_engine("analytic"), load_board("u280"), load_model("llama-3.1-8b"), a, 512
    )
    result = design_trees(model, costs, 40)
    for x, d in result.by_verify_len.items():
        assert d.draft_depth is not None and 1 <= d.draft_depth <= 7
        assert d.draft_top_k is not None and 1 <= d.draft_top_k <= 10
        assert len(d.shape) <= d.draft_depth + 1 and sum(d.shape) == x - 1


def test_solve_throughput_curve_beats_embedded_optimal() -> None:
    """`solve --curve-method throughput`: the Best set is at least the AAT-optimal curve's."""
    from fpgasim.solving.solver import SolveOptions, solve

    b, m, a = load_board("v80"), load_model("llama-3.1-8b"), load_algorithm("longspec")
    hw = solve(b, m, a, [1024], SolveOptions(curve_method="throughput"),
               engine="analytic").summary.iloc[0]
    opt = solve(b, m, a, [1024], SolveOptions(aat_source="embedded"),
                engine="analytic").summary.iloc[0]
    assert hw["best_tokens_per_s"] >= opt["best_tokens_per_s"]
    assert hw["ori_verify_len"] == 69  # the Ori set stays the GPU default tree


@pytest.mark.slow
def test_aat_optimal_comparison_respects_the_maximal_tree() -> None:
    """The CLI's AAT-optimal tree of equal size: the best AAT over LongSpec's capped shapes."""
    import itertools

    from fpgasim.solving.tree_design import aat_optimal_design

    a = load_algorithm("longspec")
    model = embedded_model(a, 256)
    costs = EngineTreeCosts(
        get_engine("analytic"), load_board("u250"), load_model("llama-3.1-8b"), a, 256
    )
    caps = tuple(a.max_tree)
    for x in (6, 10):
        best = 0.0
        for levels in range(1, len(caps) + 1):
            for widths in itertools.product(*(range(1, c + 1) for c in caps[:levels])):
                if sum(widths) == x - 1:
                    best = max(best, shape_aat(model, widths))
        d = aat_optimal_design(model, costs, x)
        assert d.verify_len == x and d.aat == pytest.approx(best, rel=1e-12)
        assert all(w <= c for w, c in zip(d.shape, caps, strict=False))
