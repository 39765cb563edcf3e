"""Lower bounds of passes and the solver's bounded best-set search (docs/engines.md, "Lower
bounds"; docs/method.md, "Finding the best x by bounds"): every bound is at most its pass,
and `best_set` gives `solve_curve`'s best set float for float while timing only the x that
can be best."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter

import pandas as pd
import pytest

from fpgasim.acceptance.curves import embedded_curves
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.drafters import draft_passes
from fpgasim.dataflow.instructions import part_key
from fpgasim.dataflow.lowerings.registry import lower, lower_bound
from fpgasim.engine.event import EventEngine
from fpgasim.engine.fast import FastEngine
from fpgasim.errors import ConfigError
from fpgasim.simulate import prefill_specs
from fpgasim.solving.solver import Timer, best_set, best_summary, solve_curve
from fpgasim.step import simulator_of, verify_spec
from fpgasim.step.service import PassService
from fpgasim.sweep.executors import InProcessExecutor

FLIGHTLLM = load_board("flightllm-vhk158")
FL_MODEL = load_model("llama2-7b-flightllm")
STUDY, STUDY_MODEL = load_board("vhk158"), load_model("llama2-chat-7b")
#: the published FlightLLM board with 4 MV token lanes of its width (an SD-paying design,
#: designs/flightllm-mv4.yaml)
SD_PAYS = load_board("flightllm-vhk158", [("design.mv_lanes", 4),
                                          ("design.mv_macs_per_lane", 1024)])


@pytest.mark.parametrize("engine", [FastEngine, EventEngine])
@pytest.mark.parametrize(("board", "model"), [(FLIGHTLLM, FL_MODEL), (SD_PAYS, FL_MODEL),
                                              (STUDY, STUDY_MODEL)],
                         ids=["published", "4-lanes", "study"])
@pytest.mark.slow
def test_a_bound_is_at_most_its_pass(engine, board, model) -> None:
    e = engine()
    for x, context in [(1, 143), (2, 143), (4, 1023), (16, 511), (85, 1023), (128, 1791)]:
        spec = verify_spec(x, context)
        bound, exact = e.lower_bound_s(spec, board, model), e.run_pass(spec, board, model)
        assert 0 < bound <= exact.seconds, (x, context)



def _runs(executable) -> Counter:
    """How often each distinct part (by content) runs."""
    out: Counter = Counter()
    for p, count in zip(executable.parts, executable.counts(), strict=True):
        out[part_key(p)] += count
    return out


@pytest.mark.parametrize("x", [1, 2, 5, 16, 64])
def test_the_fixed_parts_are_the_passes_own_at_every_context(x) -> None:
    # built once per row count, they are the pass's own parts at any context, and what is
    # left of the pass is its attention: concat + QK^T, then PV, in each decoder layer
    fixed = None
    for context in (15, 143, 400, 1023, 1791):
        spec = verify_spec(x, context)
        bound = _runs(lower_bound(spec, FLIGHTLLM, FL_MODEL))
        fixed = fixed or bound
        assert bound == fixed
        rest = _runs(lower(spec, FLIGHTLLM, FL_MODEL))
        rest.subtract(bound)
        assert min(rest.values()) >= 0 and rest.total() == 2 * FL_MODEL.layers


def test_bounds_of_decode_and_verify_passes_only() -> None:
    """Every board runs on FlightLLM's compiler, which bounds decode and verify passes (the
    solver's T_v): not prefill, not draft passes, and none on the analytic engine."""
    from fpgasim.engine.analytic import AnalyticEngine

    spec = verify_spec(8, 511)
    assert lower_bound(spec, STUDY, STUDY_MODEL) is not None
    assert lower_bound(prefill_specs(FLIGHTLLM, 128)[0], FLIGHTLLM, FL_MODEL) is None
    algo = load_algorithm("eagle3")
    draft = draft_passes(algo, embedded_curves(algo, [255])[0].points["tree"].iloc[3], 1, 255)[0]
    assert lower_bound(draft, FLIGHTLLM, FL_MODEL, algo.drafter) is None
    assert FastEngine().lower_bound_s(spec, STUDY, STUDY_MODEL) > 0.0
    assert simulator_of(FastEngine()).has_bounds(STUDY)
    assert simulator_of(FastEngine()).has_bounds(FLIGHTLLM)
    assert not simulator_of(AnalyticEngine()).has_bounds(STUDY)


def test_the_service_answers_a_timed_pass_with_its_time() -> None:
    service = PassService(FastEngine())
    spec = verify_spec(3, 255)
    bound = service.bound_s(spec, FLIGHTLLM, FL_MODEL)
    exact = service.run_pass(spec, FLIGHTLLM, FL_MODEL).seconds
    assert bound < exact == service.bound_s(spec, FLIGHTLLM, FL_MODEL)


class _Counting(FastEngine):
    """`fast`, counting the verify passes it times."""

    def __init__(self) -> None:
        super().__init__()
        self.verify_lens: list[int] = []

    def run_pass_detail(self, spec, board, model, drafter=None):
        if spec.kind == "target":
            self.verify_lens.append(spec.tokens)
        return super().run_pass_detail(spec, board, model, drafter)


def _solve_best(timer: Timer, curve) -> tuple:
    """solve_curve's best row and decision, as a tuple comparable with `best_set`'s."""
    solution = solve_curve(timer, curve, roofline=False)
    row = solution.curve.loc[solution.curve["p_eff_tokens_per_s"].idxmax()]
    return (int(row["verify_len"]), row["tree"], float(row["aat"]), float(row["verify_s"]),
            float(row["draft_s"]), float(row["p_eff_tokens_per_s"]), float(row["speedup"]),
            solution.summary["decision"])


@pytest.mark.parametrize("algorithm, contexts",
                         [("longspec", [255, 1023]), ("eagle3", [255, 1023]), ("falcon", [511])])
@pytest.mark.parametrize(
    "board, model, bounded",
    [(FLIGHTLLM, FL_MODEL, True), (SD_PAYS, FL_MODEL, True), (STUDY, STUDY_MODEL, True)],
    ids=["published", "4-lanes", "study"],
)
@pytest.mark.slow
def test_best_set_is_solve_curves_best(board, model, bounded, algorithm, contexts) -> None:
    algo = load_algorithm(algorithm)
    engine = _Counting()
    timer = Timer(engine, board, model, algo)
    for curve in embedded_curves(algo, contexts):
        engine.verify_lens.clear()
        best = best_set(timer, curve)
        timed = len(set(engine.verify_lens) - {1})
        # the throughput fields (tokens/J is the energy objective's, checked in test_energy)
        assert dataclasses.astuple(best)[:8] == _solve_best(timer, curve)
        xs = len(curve.points)
        if bounded:  # a handful of the x timed (at most a tenth), the rest bounded away
            assert timed <= max(4, xs // 10) < xs, (timed, xs)
        else:
            assert timed == xs - (1 in set(curve.points["verify_len"]))


@pytest.mark.parametrize(("algorithm", "contexts"), [("longspec", [255, 4095]),
                                                     ("eagle3", [1023])])
@pytest.mark.slow
def test_best_summary_is_solve_curves_summary_where_it_has_the_column(algorithm,
                                                                      contexts) -> None:
    """Every column `best_summary` fills is `solve_curve`'s, float for float (its best by the
    bounded search, its original and naive sets timed alone); the others it leaves out."""
    algo = load_algorithm(algorithm)
    timer = Timer(FastEngine(), SD_PAYS, FL_MODEL, algo)
    for curve in embedded_curves(algo, contexts):
        short = best_summary(timer, curve, naive_threshold=0.05)
        full = solve_curve(timer, curve, naive_threshold=0.05, roofline=False).summary
        assert {"best_verify_len", "ori_tokens_per_s", "naive_speedup", "aat_c"} <= set(short)
        assert short["ori_tokens_per_s"] > 0 and short["naive_tokens_per_s"] > 0
        for column, value in short.items():
            same = value == full[column] or (value != value and full[column] != full[column])
            assert same, (column, value, full[column])


class _Stub:
    """A timer with given T_v, bounds and T_d per x (all seconds)."""

    bounded = True

    def __init__(self, tv: dict, bound: dict, td: float = 0.0) -> None:
        self.tv, self.bound, self.td, self.timed = tv, bound, td, []

    def verify_s(self, x, context, tree=None):
        self.timed.append(x)
        return self.tv[x]

    def verify_bound_s(self, x, context, tree=None):
        return self.bound[x]

    def verify_floor_s(self, x, context):
        return 0.0  # no sizes-only floor: every x reaches the tighter bound

    def draft(self, tree, accepted, context):
        return self.td, 1, 0.0

    def ad_energy_j(self, context):
        return self.tv[1]  # at 1 W: joules = seconds

    def step_energy_j(self, x, tree, accepted, context):
        return self.tv[x] + self.td


class _Tree:
    def __init__(self, x: int) -> None:
        self.x = x

    def describe(self) -> str:
        return f"tree{self.x}"


def _curve(aat: dict):
    points = pd.DataFrame({"verify_len": list(aat), "aat": list(aat.values()),
                           "tree": [_Tree(x) for x in aat]})
    return dataclasses.make_dataclass("C", ["points", "context"])(points, 7)


def test_ties_go_to_the_smaller_x_and_loose_bounds_cost_only_time() -> None:
    # x = 2 and x = 4 both reach P_eff = 2/1 = 4/2; x = 4's bound is the larger, so it is
    # timed first, yet the smaller x wins the tie, as solve_curve's first maximum
    aat = {1: 1.0, 2: 2.0, 4: 4.0, 8: 4.5}
    tv = {1: 1.0, 2: 1.0, 4: 2.0, 8: 8.0}
    stub = _Stub(tv, {1: 1.0, 2: 1.0, 4: 1.5, 8: 7.0})
    best = best_set(stub, _curve(aat))
    assert (best.verify_len, best.p_eff_tokens_per_s, best.speedup) == (2, 2.0, 2.0)
    assert 8 not in stub.timed  # its ceiling 4.5/7 < 2: bounded away
    loose = _Stub(tv, dict.fromkeys(tv, 0.0))  # no bounds: every x timed, same answer
    assert best_set(loose, _curve(aat)) == best and set(loose.timed) == set(tv)


def test_a_bound_above_the_pass_would_be_caught() -> None:
    # the search trusts its bounds: with a "bound" above x = 2's time it would skip the
    # best x. The property tests above fail for such a bound (bound <= exact).
    aat, tv = {1: 1.0, 2: 2.0, 4: 2.5}, {1: 1.0, 2: 1.0, 4: 2.0}
    honest = best_set(_Stub(tv, {1: 1.0, 2: 1.0, 4: 2.0}), _curve(aat))
    wrong = best_set(_Stub(tv, {1: 1.0, 2: math.inf, 4: 2.0}), _curve(aat))
    assert honest.verify_len == 2 and wrong.verify_len != 2


def test_a_prefetched_pass_is_its_own_bound() -> None:
    service = PassService(FastEngine())
    key = (verify_spec(4, 143), FLIGHTLLM, FL_MODEL, None)
    with InProcessExecutor() as pool:
        assert service.prefetch([key, key], pool) == 1  # distinct passes, each once
    assert service.bound_s(*key) == service.run_pass(*key).seconds


def test_an_x_the_board_cannot_compile_raises_only_if_it_could_win() -> None:
    # a global buffer of 128 rows cannot hold one tile row of scores over 4,032 keys, which
    # the MM form of attention needs (x >= 32 tries it); a bound compiles no attention, so
    # at L = 4000 best_set answers with the best x that can run (docs/method.md) where
    # solve_curve, timing x = 85, raises
    board = load_board("flightllm-vhk158", [("design.buffers.global", 128)])
    algo = load_algorithm("longspec")
    curve = embedded_curves(algo, [4000])[0]
    timer = Timer(FastEngine(), board, FL_MODEL, algo)
    assert best_set(timer, curve).verify_len == 2
    with pytest.raises(ConfigError, match="buffers.global = 128: too small for one tile row"):
        solve_curve(timer, curve, roofline=False)


def test_a_bound_is_its_boards_after_a_board_of_other_sparsity() -> None:
    """Two designs alike in rates but not in the recipe (q's sparsity) compile different
    context-free parts: the bound of one is not the other's, whichever is asked first."""
    from fpgasim.bounded import clear_caches

    dense = load_board("flightllm-u280", [("design.recipe.q.sparse_ratio", 1.0)])
    sparse = load_board("flightllm-u280")
    spec = verify_spec(4, 511)
    clear_caches("flightllm.")
    cold = FastEngine().lower_bound_s(spec, sparse, FL_MODEL)
    clear_caches("flightllm.")
    engine = FastEngine()
    assert engine.lower_bound_s(spec, dense, FL_MODEL) != cold
    assert engine.lower_bound_s(spec, sparse, FL_MODEL) == cold
