"""The pass service: every consumer asks it, each distinct pass reaches the engine once,
batches on an executor give the in-process results, and a planner lists what a run needs."""

from __future__ import annotations

import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import get_engine
from fpgasim.engine.timing import Timing
from fpgasim.simulate import Point, point_result, prefill_result, simulate_point, verify_timing
from fpgasim.solving.solver import solve
from fpgasim.solving.tree_design import throughput_curve
from fpgasim.step import (
    Planner,
    Simulator,
    engine_of,
    pass_key,
    simulator_of,
    step_passes,
    verify_spec,
)
from fpgasim.studies.generation import generate
from fpgasim.sweep.executors import InProcessExecutor, ProcessExecutor
from fpgasim.tree.draft_trees import default_tree

V80 = load_board("v80")
LLAMA = load_model("llama-3.1-8b")
LONGSPEC = load_algorithm("longspec")


class CountingEngine:
    """The analytic engine, counting every pass it is asked (keyed like the service)."""

    name = "counting"
    version = "1"

    def __init__(self) -> None:
        self.inner = get_engine("analytic")
        self.asked: list[tuple] = []

    def run_pass(self, spec, board, model, drafter=None) -> Timing:
        self.asked.append(pass_key(spec, board, model, drafter))
        return self.inner.run_pass(spec, board, model, drafter)


def test_every_consumer_shares_one_memo_and_no_pass_is_timed_twice() -> None:
    counting = CountingEngine()
    engine = Simulator(counting)  # every consumer handed the one simulator
    tree = default_tree(LONGSPEC)
    point = Point(V80, LLAMA, 1024, tree.size, LONGSPEC, tree, 3)
    first = simulate_point(engine, point)
    assert simulate_point(engine, point) == first
    solve(V80, LLAMA, LONGSPEC, [1024, 2048], engine=engine)
    throughput_curve(engine, V80, LLAMA, LONGSPEC, 1024, x_max=24)
    generate(engine, V80, LLAMA, 64, 8, algorithm=LONGSPEC)
    assert len(counting.asked) == len(set(counting.asked)) > 50
    assert engine.remembered == len(counting.asked)


def test_engines_remember_part_times_the_service_remembers_passes() -> None:
    """A cycle engine keeps the makespan of each barrier-delimited part by content (parts
    repeat within and across passes), never a pass's Timing: asked again, it builds a new
    one; the service hands out the one it remembered."""
    fast = get_engine("fast", window=True)
    spec = verify_spec(4, 512)
    calls = []
    real = fast.simulate
    fast.simulate = lambda p: calls.append(1) or real(p)
    first = fast.run_pass(spec, V80, LLAMA)
    once = len(calls)
    assert once > 0
    again = fast.run_pass(spec, V80, LLAMA)
    assert again == first and again is not first  # a new Timing ...
    assert len(calls) == once  # ... from the parts' remembered makespans
    fast._parts.cache_clear()
    fast._windows.cache_clear()
    assert fast.run_pass(spec, V80, LLAMA) == first and len(calls) == 2 * once
    sim = Simulator(fast)
    assert simulator_of(sim) is sim and engine_of(sim) is fast
    assert simulator_of(sim.passes).passes is sim.passes  # a service keeps its own memo
    assert simulator_of(fast) is not sim  # a bare engine: a new simulator, a new memo
    t = sim.run_pass(spec, V80, LLAMA)
    assert sim.run_pass(spec, V80, LLAMA) is t
    assert verify_timing(sim, V80, LLAMA, 4, 512) is t  # simulate asks the same service
    assert sim.window is fast.window  # any other attribute is the engine's


def test_a_result_carries_its_unit_rows_clock_and_divisor() -> None:
    """`point_result` returns the verify pass's per-unit rows with the row, whatever the
    service was asked after it (the draft passes, another point): no "last pass" state."""
    fast = get_engine("fast", window=True)
    board = load_board("flightllm-vhk158")
    model = load_model("llama2-7b-flightllm")
    tree = default_tree(LONGSPEC)
    point = Point(board, model, 1023, tree.size, LONGSPEC, tree, 3)
    result = point_result(fast, point)
    verify = simulator_of(fast).timed(verify_spec(tree.size, 1023, tree), board, model)
    assert result.unit_rows == tuple(verify[1]) and result.unit_rows
    assert (result.clock_hz, result.duration_divisor) == (225e6, 3.2)
    assert result.row["verify_s"] == verify[0].cycles / (225e6 * 3.2)
    assert result.row["lowering"] == "flightllm" and result.row["clock_mhz"] == 225
    assert {k: result.row[k] for k in simulate_point(fast, point)} == simulate_point(fast, point)
    prefill = prefill_result(fast, board, model, 128)
    assert prefill.row["prefill_passes"] == 1 and prefill.unit_rows != result.unit_rows
    assert point_result(fast, point).unit_rows == result.unit_rows  # asked after the prefill
    assert point_result(get_engine("analytic"), Point(V80, LLAMA, 64, 1)).unit_rows == ()


def test_an_empty_service_is_still_an_engine() -> None:
    """Callers write `engine or default`; an empty service must not read as no engine."""
    for service in (Simulator(get_engine("analytic")), Planner(get_engine("analytic"))):
        assert service.remembered == 0 and bool(service)


@pytest.mark.parametrize("pool", [InProcessExecutor, ProcessExecutor])
def test_prefetch_on_an_executor_gives_the_in_process_timings(pool) -> None:
    tree = default_tree(LONGSPEC)
    steps = [step_passes(tree.size, c, LONGSPEC, tree, 2) for c in (256, 4096)]
    keys = [(s.verify, V80, LLAMA, None) for s in steps]
    keys += [(p, V80, LLAMA, LONGSPEC.drafter) for s in steps for p in s.drafts]
    keys += keys[:2]  # asked twice: computed once
    service = Simulator(get_engine("fast", window=True))
    with pool(2) if pool is ProcessExecutor else pool() as ex:
        done: list[int] = []
        assert service.prefetch(keys, ex, progress=lambda n, total: done.append(n)) == len(
            {pass_key(*k) for k in keys}
        )
    assert done[-1] == len({pass_key(*k) for k in keys})
    assert service.prefetch(keys, InProcessExecutor()) == 0
    here = get_engine("fast", window=True)
    for key in keys:
        assert service.run_pass(*key) == here.run_pass(*key)


def test_prefetch_chunks_never_split_a_token_count() -> None:
    """The passes of one token count share compiled parts (a verify length's projections at
    every context): a chunk boundary between two of them made both workers compile those."""
    from fpgasim.step.service import _chunks

    keys = [(verify_spec(x, c), V80, LLAMA, None)
            for c in (128, 1024, 4096) for x in (1, 2, 3, 5, 8, 13)]
    keys += [(p, V80, LLAMA, LONGSPEC.drafter)
             for p in step_passes(8, 512, LONGSPEC, default_tree(LONGSPEC), 2).drafts]
    for size in (1, 2, 4, 7, 100):
        chunks = _chunks(list(keys), size)
        flat = [k for chunk in chunks for k in chunk]
        assert sorted(map(repr, flat)) == sorted(map(repr, keys))  # each pass once
        owner = {}
        for i, chunk in enumerate(chunks):
            for k in chunk:
                assert owner.setdefault(k[0].tokens, i) == i, (size, k[0].tokens)
        tokens = [k[0].tokens for k in flat]
        assert tokens == sorted(tokens, reverse=True)  # larger token counts first
        for chunk in chunks:  # cut at the first token count that starts past `size`
            assert sum(k[0].tokens != chunk[-1][0].tokens for k in chunk) < size


@pytest.mark.parametrize("pool", [InProcessExecutor, ProcessExecutor])
def test_passes_started_early_are_remembered_when_finished(pool) -> None:
    """`start` times passes on a worker at once; what its `finish` remembers is what
    `run_pass` gives in this process, and a pass remembered is not started again."""
    keys = [(verify_spec(x, 700), V80, LLAMA, None) for x in (1, 6)]
    service = Simulator(get_engine("fast", window=True))
    with pool(2) if pool is ProcessExecutor else pool() as ex:
        finish = service.start(keys + keys[:1], ex)
        assert service.remembered == 0  # nothing stored before `finish`
        assert finish() == 2
        assert service.start(keys, ex)() == 0
    here = get_engine("fast", window=True)
    for key in keys:
        assert service.run_pass(*key) == here.run_pass(*key)


@pytest.mark.slow
def test_the_planner_lists_each_distinct_pass_and_answers_with_its_engine() -> None:
    planner = Planner(get_engine("analytic"))
    assert planner.name == "planner"  # not taken for the accounting by the solver
    solve(V80, LLAMA, LONGSPEC, [1024], engine=planner)
    plan = planner.plan
    assert len({pass_key(*k) for k in plan}) == len(plan) > 20
    assert planner.remembered == len(plan)
    # the same solve on a real engine asks exactly the planned passes
    engine = CountingEngine()
    solve(V80, LLAMA, LONGSPEC, [1024], engine=engine)
    assert set(engine.asked) == {pass_key(*k) for k in plan}


def test_a_planner_for_a_bounded_engine_plans_a_best_set_search_by_its_sure_passes() -> None:
    """Planning for an engine with lower bounds, the planner answers a bounded search with
    the same floors (sizes alone) and no finite bound: the search then times only the passes
    it times on any engine, T_v(1) and the first x it visits, and the plan lists those."""
    from fpgasim.acceptance.curves import embedded_curves
    from fpgasim.solving.solver import Timer, best_set

    fast = Simulator(get_engine("fast", window=True))
    planner = Planner(get_engine("analytic"), plan_for=fast)
    assert planner.has_bounds(V80) and not Planner(get_engine("analytic")).has_bounds(V80)
    spec = verify_spec(8, 1024)
    assert planner.bound_s(spec, V80, LLAMA) == float("inf")
    assert planner.floor_s(spec, V80, LLAMA) == fast.floor_s(spec, V80, LLAMA) > 0
    (curve,) = embedded_curves(LONGSPEC, [1024])
    best_set(Timer(planner, V80, LLAMA, LONGSPEC), curve)
    planned = {(k[0].kind, k[0].tokens) for k in planner.plan}
    real = Timer(fast, V80, LLAMA, LONGSPEC)
    best_set(real, curve)
    timed = {(k[0].kind, k[0].tokens) for k in fast.passes._memo.items}
    assert ("target", 1) in planned and planned <= timed  # nothing planned in vain
    unbounded = Planner(get_engine("analytic"))  # for an engine without bounds: every x
    best_set(Timer(unbounded, V80, LLAMA, LONGSPEC), curve)
    assert len({k[0].tokens for k in unbounded.plan}) == len(curve.points) + 1 > len(planned)


def test_an_engine_that_takes_no_attributes_is_simulated_too() -> None:
    """A simulator never sets attributes on its engine: a frozen engine works alike."""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class FrozenEngine:
        name: str = "frozen"
        version: str = "1"

        def run_pass(self, spec, board, model, drafter=None) -> Timing:
            return get_engine("analytic").run_pass(spec, board, model, drafter)

    engine = Simulator(FrozenEngine())
    assert verify_timing(engine, V80, LLAMA, 2, 64) is verify_timing(engine, V80, LLAMA, 2, 64)
    assert engine.remembered == 1 and engine.name == "frozen"


@pytest.mark.slow
def test_an_engine_and_its_service_are_freed_together() -> None:
    """A sweep builds an engine per chunk: its passes must not outlive it."""
    import gc
    import weakref

    engine = Simulator(get_engine("analytic"))
    verify_timing(engine, V80, LLAMA, 2, 64)
    gone = weakref.ref(engine.passes)
    del engine
    gc.collect()
    assert gone() is None


@pytest.mark.parametrize("reads_mask", [False, True])
def test_a_lowering_that_ignores_the_mask_times_every_tree_of_x_once(monkeypatch,
                                                                       reads_mask) -> None:
    """FlightLLM's compiler costs every tree of x tokens alike: the service keys its passes
    without the mask (two trees and the dense pass: one pass); a lowering that reads the
    mask (none ships since the study lowering was retired) keeps it."""
    from dataclasses import replace

    from fpgasim.dataflow.lowerings.registry import LOWERINGS
    from fpgasim.dataflow.token_tree import TokenTree

    chain, wide = TokenTree.from_shape((1, 1, 1)), TokenTree.from_shape((3,))
    if reads_mask:
        monkeypatch.setitem(LOWERINGS, "flightllm",
                            replace(LOWERINGS["flightllm"], reads_tree_mask=True))
    cases = (("flightllm-vhk158", "llama2-7b-flightllm", 3 if reads_mask else 1),
             ("v80", "llama-3.1-8b", 3 if reads_mask else 1))
    for board_name, model_name, distinct in cases:
        board, model = load_board(board_name), load_model(model_name)
        engine = CountingEngine() if distinct == 3 else get_engine("event")
        service = Simulator(engine)
        specs = [verify_spec(4, 512, tree) for tree in (chain, wide, None)]
        assert specs[0].tree_parents != specs[1].tree_parents  # the trees' masks differ
        timings = [service.run_pass(spec, board, model) for spec in specs]
        assert service.remembered == distinct, board_name
        if distinct == 1:
            assert timings[0] is timings[1] is timings[2]
