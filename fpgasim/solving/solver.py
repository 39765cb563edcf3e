"""The solver of docs/method.md: per (task, context) the best x, the Ori and Naive sets, the regime.

Best set: argmax over the curve's x of P_eff(x) = AAT(x)/(T_v(x)+T_d(x)), the draft tree at
x costed with accepted = floor(AAT(x)). Naive set: the slope rule of
`aat_model.naive_verify_len`. Speedups are over AD, P(1) = 1/T_v(1). Decision: "use SD"
when the best speedup exceeds 1, else "use AD".
Regime (`classify_regime`): from the engine's own verify passes at the x the summary reports
(AD, the best, Naive and Ori x): memory-bound when each is bound by its loads or stores,
compute-bound when each by its compute, mixed otherwise; the reason gives T_v(x)/T_v(1)
there, so the text never claims what the engine's passes contradict.

Every x or the bounded search: `solve_curve` times every x of a curve (the per-x curve, the
primary roofline and its ridge x_R, the ideal speedups); with `every_x=False` it finds the
same best sets by `best_set`/`best_energy_set` (only the x that can be best are timed, float
for float the same) and leaves the columns that need every x empty: `fpgasim solve`'s
default, so one context is answered in about a second (benchmarks/bench_solve.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from fpgasim.acceptance.curves import (
    AAT_SOURCES,
    AatCurve,
    acceptance_curves,
    max_verify_len,
    mean_curve,
)
from fpgasim.acceptance.log_model import naive_verify_len
from fpgasim.acceptance.measured import AatTables, pair_rows
from fpgasim.acceptance.rule import tables_for
from fpgasim.config.board import Board
from fpgasim.config.cluster import Cluster
from fpgasim.config.schema import Algorithm, DrafterSchema, TargetModel
from fpgasim.dataflow.draft_passes import accepted_from_aat
from fpgasim.dataflow.lowerings.flightllm.flightllm_cluster import (
    cluster_columns,
    pipeline_columns,
)
from fpgasim.dataflow.lowerings.registry import link_seconds
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.engine import Engine, Timing, get_engine
from fpgasim.engine.energy import Energy, cluster_energy, energy_constants, pass_energy
from fpgasim.errors import InputError
from fpgasim.simulate import (
    FitPoint,
    check_batch,
    check_window,
    draft_timing,
    errors_name_the_file,
    fit_columns,
    fits_memory,
    verify_timing,
)
from fpgasim.solving.decision import USE_SD, decision_of
from fpgasim.solving.dynamic_schedule import build_schedule
from fpgasim.solving.roofline import RooflineFit, effective, fit_roofline, primary_roofline
from fpgasim.solving.tasks import unified_table
from fpgasim.solving.tree_design import COSTED_TREE_METHODS
from fpgasim.step import PassKey, pass_keys, simulator_of, step_passes, verify_spec
from fpgasim.sweep.grid import check_points

#: P_max/P(1) below this: verification gains (almost) nothing from parallel tokens.
COMPUTE_BOUND_GAIN = 1.1
#: Default slope threshold of the Naive set, tokens of AAT per extra verified token.
NAIVE_THRESHOLD = 0.02
#: What the best x maximises: tokens/s (P_eff) or tokens/J (docs/energy.md)
OBJECTIVES = ("throughput", "energy")

SUMMARY_COLUMNS = [
    "board",
    "model",
    "algorithm",
    "task",
    "context",
    "batch",
    "engine",
    "aat_source",
    "aat_file",
    "aat_basis",
    "aat_note",
    "ad_tokens_per_s",
    "best_verify_len",
    "best_tree",
    "best_aat",
    "best_tokens_per_s",
    "best_speedup",
    "ori_verify_len",
    "ori_tree",
    "ori_aat",
    "ori_aat_source",
    "ori_tokens_per_s",
    "ori_speedup",
    "naive_verify_len",
    "naive_tree",
    "naive_aat",
    "naive_tokens_per_s",
    "naive_speedup",
    "naive_threshold",
    "decision",
    "batch_tokens_per_s",
    "tpot_s",
    "fits_memory",
    "fits_dsps",
    "cards",
    "parallel",
    "tp_cards",
    "pp_stages",
    "hop_latency_s",
    "link_busy_share",
    "sync_share",
    "micro_batches",
    "bubble_share",
    "regime",
    "regime_reason",
    "ad_bound",
    "best_bound",
    "best_verify_ratio",
    "every_x",
    "x_ridge",
    "p_max_tokens_per_s",
    "p_gain",
    "roofline_a",
    "roofline_b",
    "roofline_r2",
    "alpha_best",
    "param_ratio",
    "ideal_speedup_below_ridge",
    "ideal_speedup_above_ridge",
    "aat_a",
    "aat_b",
    "aat_c",
    "aat_r2_fit",
    "aat_r2_all",
    "aat_fit_points",
    "aat_n_fit_points",
    "objective",
    "ad_tokens_per_j",
    "best_tokens_per_j",
    "energy_decision",
    "speed_best_verify_len",
    "speed_best_tokens_per_s",
    "speed_best_tokens_per_j",
    "energy_best_verify_len",
    "energy_best_tree",
    "energy_best_tokens_per_s",
    "energy_best_tokens_per_j",
]

#: Columns of `Solution.rooflines`.
ROOFLINE_COLUMNS = [
    "engine",
    "model",
    "board",
    "context",
    "batch",
    "verify_len",
    "verify_s",
    "p_tokens_per_s",
    "p_fit_tokens_per_s",
]

CURVE_COLUMNS = [
    "board",
    "model",
    "algorithm",
    "task",
    "context",
    "batch",
    "engine",
    "aat_source",
    "verify_len",
    "tree",
    "tree_source",
    "aat",
    "aat_fit",
    "accepted",
    "verify_s",
    "draft_s",
    "draft_passes",
    "alpha",
    "p_tokens_per_s",
    "p_disc_tokens_per_s",
    "ar",
    "p_eff_tokens_per_s",
    "speedup",
    "energy_j",
    "tokens_per_j",
]


def curve_points(curve: AatCurve) -> list[tuple[int, float, TokenTree]]:
    """(x, AAT(x), tree at x) of each point of a curve, in its order."""
    columns = curve.points[["verify_len", "aat", "tree"]]
    return [(int(x), float(aat), tree) for x, aat, tree in columns.itertuples(index=False)]


class Timer:
    """T_v and T_d of one (engine, board, model, algorithm), asked of the engine's pass
    service (fpgasim.step), which remembers every pass; alpha from the analytic accounting
    (draft weight bytes of all passes / target weight bytes of one AD pass). Every pass
    runs for a batch of `batch` requests (docs/batching.md): the times are the batch's
    steps, so AAT / (T_v + T_d) is each request's rate."""

    def __init__(
        self, engine: Engine, board: Board, model: TargetModel, algorithm: Algorithm,
        batch: int = 1,
    ) -> None:
        #: the simulator every pass is asked of (its memo shared with whoever holds it)
        self.engine = simulator_of(engine)
        self.board, self.model, self.algorithm = board, model, algorithm
        self.batch = batch
        # alpha's byte counts: the study's accounting (docs/method.md, the regimes)
        self.analytic = self.engine if engine.name == "analytic" else simulator_of(
            get_engine("analytic"))
        # alpha's denominator is the whole target's bytes, as on one card (a drafter runs
        # unsplit on one card of a cluster; the accounting models one card)
        self.one_card = board if board.cluster.is_single else board.with_cluster(Cluster())
        self.energy_constants = energy_constants(board)

    def verify_energy(self, verify_len: int, context: int,
                      tree: TokenTree | None = None) -> Energy:
        """The verify pass's energy (docs/energy.md), from the timing `verify_s` reads (the
        whole batch's pass)."""
        t = verify_timing(self.engine, self.board, self.model, verify_len, context, tree,
                          self.batch)
        return cluster_energy(pass_energy(t, self.board, self.engine.name,
                                          self.energy_constants), self.cards,
                              working=self.board.cluster.tp_cards)

    @property
    def cards(self) -> int:
        """Cards the board's cluster runs the target on (1: one card)."""
        return self.board.cluster.cards

    def ad_energy_j(self, context: int) -> float:
        """Joules of one AD step per request (the batch's pass over its requests), so AD's
        tokens/J is 1 / ad_energy_j."""
        return self.verify_energy(1, context).energy_j / self.batch

    def step_energy_j(self, verify_len: int, tree: TokenTree | None, accepted: int,
                      context: int) -> float:
        """Joules of one step per request: the verify pass and the draft passes of `tree`
        (as `draft`), the batch's energy over its requests (tokens/J = AAT / this)."""
        energy = self.verify_energy(verify_len, context, tree)
        if tree is not None:
            t = draft_timing(self.engine, self.board, self.model, self.algorithm, tree,
                             accepted, context, self.batch)
            energy = energy + cluster_energy(pass_energy(t, self.board, self.engine.name,
                                                         self.energy_constants),
                                             self.cards, working=1)
        return energy.energy_j / self.batch

    def verify_pass(self, verify_len: int, context: int) -> Timing:
        """The engine's verify pass of x tokens at `context` (its bound, bytes and time), as
        `verify_s` times it: the regime reads its bound (`classify_regime`)."""
        return verify_timing(self.engine, self.board, self.model, verify_len, context,
                             batch=self.batch)

    def static_w(self) -> float:
        """The card's static power, W: every step's energy is at least this times its
        seconds (docs/energy.md), the floor `best_energy_set` bounds tokens/J with."""
        return self.energy_constants.static_w.value * self.cards

    def verify_s(self, verify_len: int, context: int, tree: TokenTree | None = None) -> float:
        """T_v in seconds; with a tree, mask-aware lowerings cost that tree's attention (the
        pass service drops the mask where the lowering does not read it)."""
        return verify_timing(self.engine, self.board, self.model, verify_len, context, tree,
                             self.batch).seconds

    def draft(self, tree: TokenTree, accepted: int, context: int) -> tuple[float, int, float]:
        """(T_d seconds, draft passes, alpha) for a tree and floor(AAT)."""
        a = (self.engine, self.board, self.model, self.algorithm, tree, accepted, context,
             self.batch)
        t = draft_timing(*a)
        ref = t if self.analytic is self.engine else draft_timing(
            self.analytic, self.one_card, *a[2:])
        return t.seconds, t.passes, ref.weight_bytes / self.target_weights(context)

    @property
    def bounded(self) -> bool:
        """True if the engine bounds this board's verify passes from below
        (`verify_bound_s` > 0), so `best_set` can skip the x that cannot be best."""
        return self.engine.has_bounds(self.board)

    def verify_bound_s(self, verify_len: int, context: int, tree: TokenTree | None = None) -> float:
        """A lower bound of `verify_s(...)` at a fraction of its cost (0.0 when not `bounded`)."""
        spec = verify_spec(verify_len, context, tree, self.batch)
        with errors_name_the_file(self.board):
            return self.engine.bound_s(spec, self.board, self.model)

    def verify_floor_s(self, verify_len: int, context: int) -> float:
        """A looser lower bound of `verify_s(...)` than `verify_bound_s`, from sizes alone
        (0.0 when not `bounded`): `best_set`'s first filter."""
        spec = verify_spec(verify_len, context, batch=self.batch)
        with errors_name_the_file(self.board):
            return self.engine.floor_s(spec, self.board, self.model)

    def x_passes(self, verify_len: int, aat: float, tree: TokenTree, context: int) -> list[PassKey]:
        """The engine passes of one x (`step.step_passes` with floor(AAT) accepted): its
        draft passes as `draft` asks them, then its verify pass."""
        step = step_passes(verify_len, context, self.algorithm, tree, accepted_from_aat(aat),
                           self.batch)
        return pass_keys((*step.drafts, step.verify), self.board, self.model, self.algorithm)

    def best_set_plan(self, curve: AatCurve) -> list[PassKey]:
        """The passes that `best_set(self, curve)` times for sure, known without timing any:
        T_v(1), and when not `bounded` every x's draft passes and T_v(x). A consumer
        prefetches them on a pool (`PassService.prefetch`). A bounded search asks no other
        pass for sure: its floors (sizes alone) are cheap and computed as it asks them, and
        which x then need the tighter bound or their time depends on the times found."""
        context = curve.context
        passes: list[PassKey] = [(verify_spec(1, context, batch=self.batch), self.board,
                                  self.model, None)]
        if not self.bounded:
            for x, aat, tree in curve_points(curve):
                passes += self.x_passes(x, aat, tree, context)
        return passes

    def target_weights(self, context: int) -> int:
        """Weight bytes of one AD pass at `context` (alpha's denominator), by the accounting
        on one card; a mixture of experts' (k experts a layer), which the accounting refuses,
        by the engine (docs/moe-sd.md)."""
        if self.model.moe is None:
            t = verify_timing(self.analytic, self.one_card, self.model, 1, context,
                              batch=self.batch)
        else:
            t = verify_timing(self.engine, self.board, self.model, 1, context, batch=self.batch)
        return max(1, t.weight_bytes)


@dataclass(frozen=True)
class BestSet:
    """The solver's best set at one context: the first x of largest P_eff and its numbers,
    as `solve_curve`'s `best` row, and the decision it gives."""

    verify_len: int
    tree: str
    aat: float
    verify_s: float
    draft_s: float
    p_eff_tokens_per_s: float
    speedup: float
    decision: str
    tokens_per_j: float = math.nan
    ad_tokens_per_j: float = math.nan


def best_set(timer: Timer, curve: AatCurve, objective: str = "throughput") -> BestSet:
    """With `objective` energy: the x of most tokens/J, every x timed (`best_energy_set`).
    Otherwise `solve_curve(timer, curve)`'s best set and decision, timing only the x that can be
    best (docs/method.md, "Finding the best x by bounds").

    P_eff(x) = AAT(x) / (T_v(x) + T_d(x)) <= AAT(x) / B(x) for any lower bound B(x) of
    T_v(x) (T_d >= 0; IEEE division and addition are monotone, so the inequality holds for
    the computed floats too). The x are visited by the ceiling of the cheap floor F(x) <= B(x),
    largest first, until the next is below the best P_eff found (no x left can reach it);
    an x whose tighter ceiling AAT/B(x) is below the best is skipped, the others timed.
    Only an x whose ceiling is strictly below the best is passed over, so ties are resolved
    to the smaller x as `solve_curve`'s first maximum. Without bounds every x is timed.
    The result is `solve_curve`'s, float for float (tested), wherever `solve_curve`
    answers: an x whose pass the board cannot compile (e.g. attention over more keys than
    the model's window) raises only if its ceiling makes it timed, where `solve_curve`,
    which times every x, raises."""
    check_objective(objective)
    if objective == "energy":
        return best_energy_set(timer, curve)
    context = curve.context
    points = curve_points(curve)
    if not points:
        raise ValueError(f"the AAT curve at context {context} has no point")
    p1 = 1.0 / timer.verify_s(1, context)
    bounded = timer.bounded

    def ceiling(aat: float, bound: float) -> float:
        """The largest P_eff an x of this AAT and this lower bound of T_v can have."""
        return aat / bound if bound > 0 else math.inf

    # two ceilings: from the floor (sizes alone, every x) and, where the floor's cannot
    # settle it, from the tighter bound (its parts compiled)
    floors = [ceiling(aat, timer.verify_floor_s(x, context) if bounded else 0.0)
              for x, aat, _ in points]
    best: tuple[float, int, float, float] | None = None  # (P_eff, index, T_v, T_d)
    for i in sorted(range(len(points)), key=lambda i: (-floors[i], i)):
        if best is not None and floors[i] < best[0]:
            break  # the ceilings left are no larger: none of them reaches the best
        x, aat, tree = points[i]
        if bounded and best is not None and \
                ceiling(aat, timer.verify_bound_s(x, context, tree)) < best[0]:
            continue
        draft_s = timer.draft(tree, accepted_from_aat(aat), context)[0]
        verify_s = timer.verify_s(x, context, tree)
        p_eff = aat / (verify_s + draft_s)  # `roofline.effective`'s P_eff
        if best is None or p_eff > best[0] or (p_eff == best[0] and i < best[1]):
            best = (p_eff, i, verify_s, draft_s)
    assert best is not None  # for the type checker: the first point visited sets it
    p_eff, i, verify_s, draft_s = best
    x, aat, tree = points[i]
    speedup = p_eff / p1
    ad_tpj = 1.0 / timer.ad_energy_j(context)
    tpj = aat / timer.step_energy_j(x, tree, accepted_from_aat(aat), context)
    return BestSet(x, tree.describe(), aat, verify_s, draft_s, p_eff, speedup,
                   decision_of(speedup), tpj, ad_tpj)


def _curve_inputs(timer: Timer, curve: AatCurve) -> dict:
    """The input columns of a solved curve's rows and summary."""
    return {
        "board": timer.board.name,
        "model": timer.model.id,
        "algorithm": timer.algorithm.id,
        "task": curve.task,
        "context": curve.context,
        "batch": timer.batch,
        "engine": timer.engine.name,
        "aat_source": curve.aat_source,
    }


def _fit_columns(curve: AatCurve) -> dict:
    """The summary columns of the curve's AAT fit."""
    return {
        "aat_a": curve.fit.a,
        "aat_b": curve.fit.b,
        "aat_c": curve.fit.c,
        "aat_r2_fit": curve.fit.r2_fit,
        "aat_r2_all": curve.fit.r2_all,
        "aat_fit_points": ",".join(map(str, curve.fit.fit_verify_lens)),
        "aat_n_fit_points": len(curve.fit.fit_verify_lens),
    }


def best_summary(timer: Timer, curve: AatCurve, naive_threshold: float = NAIVE_THRESHOLD) -> dict:
    """The columns of `solve_curve(..., roofline=False)`'s summary that its best, original
    and naive sets give (inputs, AD, best, ori, naive, decision, the AAT fit, alpha at the
    best x and the regime from their passes), float for float, with the best set found by
    `best_set`: on an engine with lower bounds only the x that can be best are timed (Fig. 4
    on V80: 106 passes instead of 1,826 for its 34 curves). The columns that need every x
    or the tokens/J search (the roofline, the energy optimum, the ideal speedups) are not
    computed (NaN in `SUMMARY_COLUMNS`); `solve_bounded` computes those but the roofline."""
    context = curve.context
    best = best_set(timer, curve)
    p1 = 1.0 / timer.verify_s(1, context)
    points = curve_points(curve)
    best_tree = next(t for x, _, t in points if x == best.verify_len)
    _, passes, alpha = timer.draft(best_tree, accepted_from_aat(best.aat), context)
    x_naive = naive_verify_len(curve.fit, [x for x, _, _ in points], naive_threshold)
    _, naive_aat, naive_tree = next(p for p in points if p[0] == x_naive)
    naive_p_eff = _point_tokens_per_s(timer, x_naive, naive_aat, naive_tree, context)
    return {
        **_curve_inputs(timer, curve),
        "aat_file": curve.aat_file,
        "aat_basis": curve.basis,
        "aat_note": curve.note,
        "ad_tokens_per_s": p1,
        "best_verify_len": best.verify_len,
        "best_tree": best.tree,
        "best_aat": best.aat,
        "best_tokens_per_s": best.p_eff_tokens_per_s,
        "best_speedup": best.speedup,
        **_ori_summary(timer, curve, p1),
        **_naive_columns(x_naive, naive_tree.describe(), naive_aat, naive_p_eff,
                         naive_p_eff / p1, naive_threshold),
        "decision": best.decision,
        **_regime_columns(timer, curve, {"verify_len": best.verify_len, "alpha": alpha,
                                         "aat": best.aat, "speedup": best.speedup}, x_naive),
        "alpha_best": alpha,
        "param_ratio": alpha / max(1, passes),
        "x_ridge": None,
        "p_max_tokens_per_s": math.nan,
        "p_gain": math.nan,
        "roofline_a": math.nan,
        "roofline_b": math.nan,
        "roofline_r2": math.nan,
        **_fit_columns(curve),
        "objective": "throughput",
    }


def solve_best_curves(
    engine: Engine,
    board: Board,
    model: TargetModel,
    algorithm: Algorithm,
    curves: Sequence[AatCurve],
    *,
    naive_threshold: float = NAIVE_THRESHOLD,
    batch: int = 1,
) -> pd.DataFrame:
    """`best_summary` of every curve, as `solve_curves`' summary frame (`SUMMARY_COLUMNS`,
    the columns it does not compute NaN): for reports of the best x alone."""
    engine = simulator_of(engine)  # one memo for every consumer below
    check_naive_threshold(naive_threshold)
    timer = Timer(engine, board, model, algorithm, batch)
    return pd.DataFrame([best_summary(timer, c, naive_threshold) for c in curves],
                        columns=SUMMARY_COLUMNS)


def check_naive_threshold(naive_threshold: float) -> None:
    """InputError unless the naive set's slope threshold is a positive finite number."""
    if naive_threshold <= 0 or not math.isfinite(naive_threshold):
        raise InputError("naive_threshold", naive_threshold, "a positive number of tokens")


def check_objective(objective: str) -> None:
    """InputError unless `objective` is one of OBJECTIVES."""
    if objective not in OBJECTIVES:
        raise InputError("objective", objective, f"one of {', '.join(OBJECTIVES)}")


def best_energy_set(timer: Timer, curve: AatCurve, first: int | None = None) -> BestSet:
    """The x of most tokens per joule, AAT(x) / E_step(x) (docs/energy.md), first maximum on
    ties; its decision is SD when it uses less energy per token than AD.

    Bounded as `best_set` is: a step's energy is its static power over its seconds plus
    dynamic energy >= 0, so E_step(x) >= P_static x B(x) / batch for any lower bound B(x)
    of T_v(x), and tokens/J(x) <= AAT(x) / that (IEEE multiplication, addition and division
    are monotone: the inequality holds for the computed floats). The x are visited by that
    ceiling, largest first, until the next is below the best tokens/J found; ties go to the
    smaller x. Without bounds (or no static power) every x is timed. `first`: an x timed
    first (e.g. the fastest, already timed), whose tokens/J then prunes from the start. The
    result is the exhaustive search's, float for float (tests/solving/test_best_set.py)."""
    context = curve.context
    points = curve_points(curve)
    if not points:
        raise ValueError(f"the AAT curve at context {context} has no point")
    p1 = 1.0 / timer.verify_s(1, context)
    ad_tpj = 1.0 / timer.ad_energy_j(context)
    static_w, batch = timer.static_w(), timer.batch

    def ceiling(aat: float, bound_s: float) -> float:
        """The most tokens/J an x of this AAT and this lower bound of T_v can have."""
        floor_j = static_w * bound_s / batch
        return aat / floor_j if floor_j > 0 else math.inf

    bounded = timer.bounded
    floors = [ceiling(aat, timer.verify_floor_s(x, context) if bounded else 0.0)
              for x, aat, _ in points]
    best: tuple[float, int] | None = None
    order = sorted(range(len(points)), key=lambda i: (-floors[i], i))
    if first is not None:
        seed = [i for i in order if points[i][0] == first]
        order = seed + [i for i in order if i not in seed[:1]]
    for i in order:  # after the seed, by ceiling
        if best is not None and floors[i] < best[0]:
            break  # no x left can reach the best tokens/J
        x, aat, tree = points[i]
        if bounded and best is not None and \
                ceiling(aat, timer.verify_bound_s(x, context, tree)) < best[0]:
            continue
        tpj = aat / timer.step_energy_j(x, tree, accepted_from_aat(aat), context)
        if best is None or tpj > best[0] or (tpj == best[0] and i < best[1]):
            best = (tpj, i)
    assert best is not None
    tpj, i = best
    x, aat, tree = points[i]
    draft_s = timer.draft(tree, accepted_from_aat(aat), context)[0]
    verify_s = timer.verify_s(x, context, tree)
    p_eff = aat / (verify_s + draft_s)
    return BestSet(x, tree.describe(), aat, verify_s, draft_s, p_eff, p_eff / p1,
                   decision_of(tpj / ad_tpj), tpj, ad_tpj)


@dataclass(frozen=True)
class ContextSolution:
    """The solution of one curve: a summary row, the per-x curve and the primary roofline."""

    summary: dict
    curve: pd.DataFrame
    roofline: pd.DataFrame
    roofline_fit: RooflineFit | None


#: T_v(x)/T_v(1) up to which verifying x tokens counts as free (the memory-bound premise
#: of docs/method.md, "T_v(x) = T_v(1)"): within the 10% of COMPUTE_BOUND_GAIN
FLAT_VERIFY_RATIO = COMPUTE_BOUND_GAIN
#: The engine's bounds (`Timing.bound`) that are the memory's: loads and stores.
MEMORY_BOUNDS = ("load", "store")


@dataclass(frozen=True)
class Regime:
    """The regime of one (task, context) and what decides it (`classify_regime`)."""

    regime: str
    reason: str
    ad_bound: str
    best_bound: str
    best_verify_ratio: float


def classify_regime(timer: Timer, context: int, sets: dict[str, int | None],
                    best: dict) -> Regime:
    """docs/method.md's regimes, from the engine's own verify passes at the x the summary
    reports (`sets`: AD's 1 and the best x first, then the Naive and Ori x): memory-bound
    when every one of them is bound by its loads or stores (`Timing.bound`), compute-bound
    when every one by its compute, mixed otherwise. The reason gives each pass's bound and
    T_v(x)/T_v(1), then what decides at the best x (`best`: its verify_len, aat, speedup,
    alpha): the step's cost in AD steps against the tokens it accepts, which is the
    decision itself. It claims no guarantee (the study's "alpha < 1/2 wins" assumes T_v
    flat and AAT large) and nothing the engine's passes (`fpgasim simulate`'s `bound`)
    contradict; the same x, and so the same regime, whether every x was timed or not."""
    xs = {name: int(x) for name, x in sets.items() if x is not None}
    timings = {x: timer.verify_pass(x, context) for x in sorted(set(xs.values()))}
    t1 = timings[1].seconds
    bounds = {x: t.bound for x, t in timings.items()}
    memory = {x for x, b in bounds.items() if b in MEMORY_BOUNDS}
    regime = ("memory-bound" if len(memory) == len(bounds) else
              "compute-bound" if not memory else "mixed")
    x_best = xs["best"]
    ratio = timings[x_best].seconds / t1

    def at(name: str, x: int) -> str:
        here = "x = 1" if name == "AD" else f"{name} x = {x}"
        if x == 1:
            return f"{bounds[x]}-bound at {here}"
        return f"{bounds[x]}-bound at {here} (T_v = {timings[x].seconds / t1:.3g}·T_v(1))"

    reason = "the engine's verify pass is " + ", ".join(
        dict.fromkeys(at(n, x) for n, x in xs.items()))
    if regime == "memory-bound" and ratio > FLAT_VERIFY_RATIO:
        grown = timings[x_best].weight_bytes / max(1, timings[1].weight_bytes)
        why = (f"the weights streamed {grown:.3g} times as often" if grown > FLAT_VERIFY_RATIO
               else "its loads and stores grow with x")
        reason += f"; T_v grows with x all the same ({why})"
    aat, speedup = float(best["aat"]), float(best["speedup"])
    cost = aat / speedup if speedup > 0 else math.inf
    reason += (f"; at the best x = {x_best} a step costs {cost:.3g} AD steps (alpha = "
               f"{float(best['alpha']):.2f}) and accepts {aat:.3g} tokens: "
               f"{'SD pays' if speedup > 1 else 'AD is faster'}")
    return Regime(regime, reason, bounds[1], bounds[x_best], ratio)


def _ideal_speedups(curve: pd.DataFrame, x_ridge: int | None) -> tuple[float, float]:
    """docs/method.md: max AAT/(1+alpha) below x_R and max AAT·x_R/(x(1+alpha)) from x_R on."""
    x = curve["verify_len"].to_numpy(float)
    aat = curve["aat"].to_numpy(float)
    alpha = curve["alpha"].to_numpy(float)
    below = x < x_ridge if x_ridge is not None else np.ones(len(x), bool)
    s1 = float(np.max(aat[below] / (1 + alpha[below]))) if below.any() else math.nan
    above = ~below
    s2 = (
        float(np.max(aat[above] * x_ridge / (x[above] * (1 + alpha[above]))))
        if above.any() and x_ridge is not None
        else math.nan
    )
    return s1, s2


def _curve_row(timer: Timer, curve: AatCurve, inputs: dict, x: int, aat: float,
               tree: TokenTree, source: str) -> dict:
    """One x of a solved curve (CURVE_COLUMNS before the rooflines' columns)."""
    context = curve.context
    accepted = accepted_from_aat(aat)
    draft_s, passes, alpha = timer.draft(tree, accepted, context)
    return {
        **inputs,
        "verify_len": int(x),
        "tree": tree.describe(),
        "tree_source": source,
        "aat": float(aat),
        "aat_fit": float(curve.fit.predict(x)),
        "accepted": accepted,
        "verify_s": timer.verify_s(int(x), context, tree),
        "draft_s": draft_s,
        "draft_passes": passes,
        "alpha": alpha,
        "energy_j": timer.step_energy_j(int(x), tree, accepted, context),
    }


def _cluster_summary(timer: Timer, best, context: int) -> dict:
    """The cluster columns of the best set's step (`cluster_columns`; zeros on one card)."""
    step_s = float(best["aat"]) / float(best["p_eff_tokens_per_s"])
    spec = verify_spec(int(best["verify_len"]), context, batch=timer.batch)
    return cluster_columns(timer.board,
                           *link_seconds(spec, timer.board, timer.model, timer.engine), step_s,
                           pipeline_columns(spec, timer.board, timer.model, timer.engine))


def _curve_frame(rows: list[dict], p1: float) -> pd.DataFrame:
    """Curve rows with P, P_disc, AR, P_eff, the speedup and tokens/J (CURVE_COLUMNS)."""
    frame = pd.DataFrame(rows)
    perf = effective(frame["verify_len"], frame["verify_s"], frame["draft_s"], frame["aat"])
    frame = pd.concat([frame, perf], axis=1)
    frame["speedup"] = frame["p_eff_tokens_per_s"] / p1
    frame["tokens_per_j"] = frame["aat"] / frame["energy_j"]
    return frame[CURVE_COLUMNS].reset_index(drop=True)


def solve_curve(
    timer: Timer,
    curve: AatCurve,
    naive_threshold: float = NAIVE_THRESHOLD,
    roofline: bool = True,
    objective: str = "throughput",
    every_x: bool = True,
) -> ContextSolution:
    """Solve one (task, context) curve: P_eff and tokens/J at every x, best/ori/naive,
    regime. The best x maximises the `objective`: tokens/s (P_eff) or tokens/J; the summary
    gives both optima and which of SD and AD uses less energy per token.

    roofline=False skips the primary roofline (T_v at every x up to the largest): the
    x_ridge and roofline columns are then empty. The best/ori/naive sets and the regime do
    not depend on it; `fpgasim reproduce` uses it for the simulator shown beside the
    accounting. every_x=False: `solve_bounded`, the same sets timing only the x that can be
    best (no roofline, no ideal speedups).
    """
    check_objective(objective)
    if not every_x:
        return solve_bounded(timer, curve, naive_threshold, objective)
    board, model = timer.board, timer.model
    context = curve.context
    inputs = _curve_inputs(timer, curve)
    pts = curve.points
    xs = [int(x) for x in pts["verify_len"]]
    x_top = max(xs + ([curve.ori.verify_len] if curve.ori else []))
    if roofline:
        roof = primary_roofline(timer.engine, board, model, context, range(1, x_top + 1),
                                timer.batch)
        roof_fit: RooflineFit | None = fit_roofline(roof["verify_len"], roof["p_tokens_per_s"])
        roof["p_fit_tokens_per_s"] = roof_fit.predict(roof["verify_len"])
    else:
        empty = [c for c in ROOFLINE_COLUMNS[3:] if c != "batch"]
        roof, roof_fit = pd.DataFrame(columns=empty), None
    roof.insert(1, "batch", timer.batch)
    for k in ("board", "model", "engine"):
        roof.insert(0, k, inputs[k])
    p1 = 1.0 / timer.verify_s(1, context)

    rows = [_curve_row(timer, curve, inputs, int(x), float(aat), tree, src)
            for x, aat, tree, src in pts[["verify_len", "aat", "tree", "tree_source"]]
            .itertuples(index=False)]
    frame = _curve_frame(rows, p1)
    ad_tpj = 1.0 / timer.ad_energy_j(context)

    fastest = frame.loc[frame["p_eff_tokens_per_s"].idxmax()]  # first max: the smaller x
    thriftiest = frame.loc[frame["tokens_per_j"].idxmax()]
    best = thriftiest if objective == "energy" else fastest
    x_naive = naive_verify_len(curve.fit, xs, naive_threshold)
    naive = frame.loc[frame["verify_len"] == x_naive].iloc[0]
    if roof_fit is not None:
        x_ridge, p_max = roof_fit.x_ridge, roof_fit.p_max_tokens_per_s
        roof_abr = (roof_fit.a, roof_fit.b, roof_fit.r2)
    else:
        x_ridge, p_max = None, math.nan
        roof_abr = (math.nan, math.nan, math.nan)
    s1, s2 = _ideal_speedups(frame, x_ridge)
    summary = {
        **_summary_head(timer, curve, p1, best, fastest, thriftiest, ad_tpj, objective),
        **_naive_columns(x_naive, naive["tree"], float(naive["aat"]),
                         float(naive["p_eff_tokens_per_s"]), float(naive["speedup"]),
                         naive_threshold),
        **_regime_columns(timer, curve, best, x_naive),
        "every_x": True,
        "x_ridge": x_ridge,
        "p_max_tokens_per_s": p_max,
        "p_gain": p_max / p1,
        "roofline_a": roof_abr[0],
        "roofline_b": roof_abr[1],
        "roofline_r2": roof_abr[2],
        "ideal_speedup_below_ridge": s1,
        "ideal_speedup_above_ridge": s2,
    }
    return ContextSolution(_ordered(summary), frame, roof, roof_fit)


def _summary_head(timer: Timer, curve: AatCurve, p1: float, best: pd.Series,
                  fastest: pd.Series, thriftiest: pd.Series, ad_tpj: float,
                  objective: str) -> dict:
    """The summary columns of the inputs, the AAT, AD, the best set (`best`: the row of the
    objective's optimum), its decision, both optima and the Ori set."""
    board, model, algorithm = timer.board, timer.model, timer.algorithm
    decision = decision_of(float(best["tokens_per_j"]) / ad_tpj if objective == "energy"
                           else float(best["speedup"]))
    delivered = float(best["p_eff_tokens_per_s"]) if decision == USE_SD else p1
    return {
        **_curve_inputs(timer, curve),
        "aat_file": curve.aat_file,
        "aat_basis": curve.basis,
        "aat_note": curve.note,
        "ad_tokens_per_s": p1,
        "best_verify_len": int(best["verify_len"]),
        "best_tree": best["tree"],
        "best_aat": float(best["aat"]),
        "best_tokens_per_s": float(best["p_eff_tokens_per_s"]),
        "best_speedup": float(best["speedup"]),
        **_ori_summary(timer, curve, p1),
        "decision": decision,
        # what the batch delivers with the decision taken (SD's chosen set, or AD)
        "batch_tokens_per_s": timer.batch * delivered,
        "tpot_s": 1.0 / delivered,
        "fits_memory": fits_memory(board, model, curve.context, int(best["verify_len"]),
                                   algorithm.drafter, timer.batch),
        "fits_dsps": board.fit.fits_dsps,
        **_cluster_summary(timer, best, curve.context),
        "alpha_best": float(best["alpha"]),
        "param_ratio": float(best["alpha"]) / max(1, int(best["draft_passes"])),
        **_fit_columns(curve),
        "objective": objective,
        "ad_tokens_per_j": ad_tpj,
        "best_tokens_per_j": float(best["tokens_per_j"]),
        "energy_decision": energy_verdict(float(best["tokens_per_j"]), ad_tpj),
        "speed_best_verify_len": int(fastest["verify_len"]),
        "speed_best_tokens_per_s": float(fastest["p_eff_tokens_per_s"]),
        "speed_best_tokens_per_j": float(fastest["tokens_per_j"]),
        "energy_best_verify_len": int(thriftiest["verify_len"]),
        "energy_best_tree": thriftiest["tree"],
        "energy_best_tokens_per_s": float(thriftiest["p_eff_tokens_per_s"]),
        "energy_best_tokens_per_j": float(thriftiest["tokens_per_j"]),
    }


def _naive_columns(x_naive: int, tree: str, aat: float, tokens_per_s: float,
                   speedup: float, threshold: float) -> dict:
    """The summary's Naive-set columns (the slope rule's x, its tree and what it delivers)."""
    return {"naive_verify_len": x_naive, "naive_tree": tree, "naive_aat": aat,
            "naive_tokens_per_s": tokens_per_s, "naive_speedup": speedup,
            "naive_threshold": threshold}


def _regime_columns(timer: Timer, curve: AatCurve, best: pd.Series | dict,
                    x_naive: int) -> dict:
    """regime, regime_reason and the bounds behind them (`classify_regime`) at the x the
    summary reports: AD, the best, the Naive and the Ori x."""
    sets = {"AD": 1, "best": int(best["verify_len"]), "Naive": x_naive,
            "Ori": curve.ori.verify_len if curve.ori is not None else None}
    r = classify_regime(timer, curve.context, sets, best)
    return {"regime": r.regime, "regime_reason": r.reason, "ad_bound": r.ad_bound,
            "best_bound": r.best_bound, "best_verify_ratio": r.best_verify_ratio}


def _ordered(summary: dict) -> dict:
    """A summary row in SUMMARY_COLUMNS' order (every column present)."""
    missing = [c for c in SUMMARY_COLUMNS if c not in summary]
    if missing:
        raise AssertionError(f"summary columns not computed: {missing}")
    return {c: summary[c] for c in SUMMARY_COLUMNS}


def solve_bounded(
    timer: Timer,
    curve: AatCurve,
    naive_threshold: float = NAIVE_THRESHOLD,
    objective: str = "throughput",
) -> ContextSolution:
    """`solve_curve`'s summary with the best sets found by the bounded searches (`best_set`
    for tokens/s, `best_energy_set` for tokens/J: only the x that can be best are timed),
    the Naive and Ori x timed alone, and the regime from the same passes: every column
    `solve_curve` fills from the reported x holds the same value, float for float
    (tests/solving/test_best_set.py); those that need every x (x_ridge, the roofline fit, the ideal
    speedups) are empty and `every_x` is False. The curve frame holds the reported x only
    (best for tokens/s and for tokens/J, Naive), the roofline frame none."""
    check_objective(objective)
    context = curve.context
    inputs = _curve_inputs(timer, curve)
    points = {x: (aat, tree, src) for x, aat, tree, src in
              curve.points[["verify_len", "aat", "tree", "tree_source"]].itertuples(index=False)}
    xs = sorted(int(x) for x in points)
    x_naive = naive_verify_len(curve.fit, xs, naive_threshold)
    fast_x = best_set(timer, curve).verify_len
    thrifty_x = best_energy_set(timer, curve, first=fast_x).verify_len
    p1 = 1.0 / timer.verify_s(1, context)
    reported = sorted({fast_x, thrifty_x, x_naive})
    rows = [_curve_row(timer, curve, inputs, x, float(points[x][0]), points[x][1], points[x][2])
            for x in reported]
    frame = _curve_frame(rows, p1)
    by_x = frame.set_index("verify_len", drop=False)
    fastest, thriftiest, naive = by_x.loc[fast_x], by_x.loc[thrifty_x], by_x.loc[x_naive]
    best = thriftiest if objective == "energy" else fastest
    ad_tpj = 1.0 / timer.ad_energy_j(context)
    summary = {
        **_summary_head(timer, curve, p1, best, fastest, thriftiest, ad_tpj, objective),
        **_naive_columns(x_naive, naive["tree"], float(naive["aat"]),
                         float(naive["p_eff_tokens_per_s"]), float(naive["speedup"]),
                         naive_threshold),
        **_regime_columns(timer, curve, best, x_naive),
        "every_x": False,
        "x_ridge": None,
        "p_max_tokens_per_s": math.nan,
        "p_gain": math.nan,
        "roofline_a": math.nan,
        "roofline_b": math.nan,
        "roofline_r2": math.nan,
        "ideal_speedup_below_ridge": math.nan,
        "ideal_speedup_above_ridge": math.nan,
    }
    empty = pd.DataFrame(columns=ROOFLINE_COLUMNS)
    return ContextSolution(_ordered(summary), frame, empty, None)


def energy_verdict(sd_tokens_per_j: float, ad_tokens_per_j: float) -> str:
    """Which of the chosen SD configuration and AD uses less energy per token."""
    if math.isclose(sd_tokens_per_j, ad_tokens_per_j, rel_tol=1e-12):
        return "SD and AD use the same energy per token"
    if sd_tokens_per_j > ad_tokens_per_j:
        return "SD uses less energy per token"
    return "AD uses less energy per token"


def _point_tokens_per_s(timer: Timer, verify_len: int, aat: float, tree: TokenTree,
                        context: int) -> float:
    """P_eff of one set timed alone: AAT / (T_v + T_d), as `roofline.effective` computes it."""
    verify_s = timer.verify_s(verify_len, context, tree)
    draft_s = timer.draft(tree, accepted_from_aat(aat), context)[0]
    return aat / (verify_s + draft_s)


def _ori_summary(timer: Timer, curve: AatCurve, p1: float) -> dict:
    if curve.ori is None:
        return {
            "ori_verify_len": None,
            "ori_tree": "",
            "ori_aat": math.nan,
            "ori_aat_source": "",
            "ori_tokens_per_s": math.nan,
            "ori_speedup": math.nan,
        }
    ori = curve.ori
    tokens_per_s = _point_tokens_per_s(timer, ori.verify_len, ori.aat, ori.tree, curve.context)
    return {
        "ori_verify_len": ori.verify_len,
        "ori_tree": ori.tree.describe(),
        "ori_aat": ori.aat,
        "ori_aat_source": ori.aat_source,
        "ori_tokens_per_s": tokens_per_s,
        "ori_speedup": tokens_per_s / p1,
    }


@dataclass(frozen=True)
class Solution:
    """Everything `fpgasim solve` reports, as tidy DataFrames with the inputs as columns.

    summary: one row per (task, context), SUMMARY_COLUMNS. curves: one row per (task,
    context, x), CURVE_COLUMNS. rooflines: one row per (context, x): T_v, P, fitted P.
    unified: with >= 2 tasks, one row per (context, task): best vs unified x (else empty).
    unified_summary: the solution of the mean curve per context (else empty).
    schedule: context ranges -> (x, tree) (see solving.dynamic_schedule).
    aat_curves: the AAT curves solved (`solve_curves_for`'s), one per (task, context).
    """

    summary: pd.DataFrame
    curves: pd.DataFrame
    rooflines: pd.DataFrame
    unified: pd.DataFrame = field(default_factory=pd.DataFrame)
    unified_summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    schedule: pd.DataFrame = field(default_factory=pd.DataFrame)
    aat_curves: tuple[AatCurve, ...] = ()


def solve_curves(
    engine: Engine,
    board: Board,
    model: TargetModel,
    algorithm: Algorithm,
    curves: Sequence[AatCurve],
    *,
    naive_threshold: float = NAIVE_THRESHOLD,
    mean: str = "geometric",
    fit_points: Sequence[int] | None = None,
    roofline: bool = True,
    batch: int = 1,
    objective: str = "throughput",
    every_x: bool = True,
) -> Solution:
    """Solve every curve; with several tasks also the unified x; then the schedule.

    roofline=False: no primary roofline (see `solve_curve`); batch: every step decodes that
    many requests together (docs/batching.md); objective: what the best x maximises,
    tokens/s (throughput) or tokens/J (energy); every_x=False: the bounded search
    (`solve_bounded`: the same sets, no per-x curve or roofline).
    """
    engine = simulator_of(engine)  # one memo for every consumer below
    check_naive_threshold(naive_threshold)
    check_objective(objective)
    timer = Timer(engine, board, model, algorithm, batch)
    solved = [solve_curve(timer, c, naive_threshold, roofline, objective, every_x)
              for c in curves]
    summary = pd.DataFrame([s.summary for s in solved], columns=SUMMARY_COLUMNS)
    curve_frame = pd.concat([s.curve for s in solved], ignore_index=True)
    rooflines = (
        pd.concat([s.roofline for s in solved], ignore_index=True)
        .drop_duplicates(["context", "batch", "verify_len"])
        .reset_index(drop=True)
    )
    tasks = sorted({c.task for c in curves})
    unified = unified_summary = pd.DataFrame()
    if len(tasks) >= 2:
        means = []
        for context in sorted({c.context for c in curves}):
            group = [c for c in curves if c.context == context]
            mean_c = mean_curve(group, mean, fit_points)
            means.append(solve_curve(timer, mean_c, naive_threshold, roofline, objective,
                                     every_x))
        unified_summary = pd.DataFrame([m.summary for m in means], columns=SUMMARY_COLUMNS)
        if not every_x:  # each task's curve at its context's unified x, where not yet timed
            curve_frame = _with_unified_x(timer, curves, curve_frame, unified_summary)
        unified = unified_table(summary, curve_frame, unified_summary)
        schedule = build_schedule(unified_summary)
    else:
        schedule = build_schedule(summary)
    return Solution(summary, curve_frame, rooflines, unified, unified_summary, schedule,
                    tuple(curves))


def _with_unified_x(timer: Timer, curves: Sequence[AatCurve], frame: pd.DataFrame,
                    unified_summary: pd.DataFrame) -> pd.DataFrame:
    """`frame` (a bounded solve's reported x) with each task's row at its context's unified
    x added where the task's curve has that x and the frame does not hold it yet."""
    unified_x = dict(zip(unified_summary["context"], unified_summary["best_verify_len"],
                         strict=True))
    have = set(zip(frame["task"], frame["context"], frame["verify_len"], strict=True))
    rows = []
    for c in curves:
        x_u = int(unified_x[c.context])
        if (c.task, c.context, x_u) in have:
            continue
        hit = c.points[c.points["verify_len"] == x_u]
        if hit.empty:
            continue
        p = hit.iloc[0]
        p1 = 1.0 / timer.verify_s(1, c.context)
        row = _curve_row(timer, c, _curve_inputs(timer, c), x_u, float(p["aat"]), p["tree"],
                         p["tree_source"])
        rows.append(_curve_frame([row], p1))
    if not rows:
        return frame
    return pd.concat([frame, *rows], ignore_index=True)


@dataclass(frozen=True)
class SolveOptions:
    """What a solve asks beside its workload, as one typed request (the CLI builds it once
    and it travels unchanged to the solver: no keyword bag between layers); the defaults
    here are `solve`'s. The acceptance: tasks, AAT tables, source, fit points, curve method,
    contexts beyond the window; the solver's choices: the Naive threshold, the across-tasks
    mean, the objective, every x (False: the bounded search, `solve_bounded`)."""

    tasks: tuple[str, ...] | None = None
    aat_dir: AatTables | Path | str | tuple[Path | str, ...] | None = None
    aat_source: str | None = None
    fit_points: tuple[int, ...] | None = None
    naive_threshold: float = NAIVE_THRESHOLD
    curve_method: str | None = None
    mean: str = "geometric"
    beyond_window: bool = False
    objective: str = "throughput"
    every_x: bool = True

    def __post_init__(self) -> None:
        """Sequences become tuples (hashable, one spelling); the solver's choices are
        checked here, once, with the messages `solve` always gave."""
        for name in ("tasks", "fit_points"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        if isinstance(self.aat_dir, list):
            object.__setattr__(self, "aat_dir", tuple(self.aat_dir))
        check_objective(self.objective)
        check_naive_threshold(self.naive_threshold)
        if self.aat_source is not None and self.aat_source not in AAT_SOURCES:
            raise InputError("aat_source", self.aat_source, f"one of {', '.join(AAT_SOURCES)}")


#: `solve`'s default request (frozen: shared safely).
DEFAULT_OPTIONS = SolveOptions()
#: `solve_batches`' default request: the bounded search at every batch.
BATCH_OPTIONS = SolveOptions(every_x=False)


def solve(
    board: Board,
    model: TargetModel,
    algorithm: Algorithm,
    contexts: Sequence[int],
    options: SolveOptions = DEFAULT_OPTIONS,
    *,
    engine: Engine | str = "analytic",
    batch: int = 1,
    curves: Sequence[AatCurve] | None = None,
) -> Solution:
    """Solve a workload at each context, its AAT chosen by the acceptance rule
    (`analysis.acceptance`): measured tables (`aat_dir`; None: the shipped ones) where they
    hold (algorithm, model), interpolated between their contexts, extrapolated beyond, else
    the embedded model; every curve says which (`aat_basis`, `aat_note`).

    aat_source: None (the rule), measured or fitted (the log model at every x; measured
    tables required), or embedded (asked for; task-agnostic). curve_method `throughput`
    (embedded): per x the tree of highest tokens/s on this board (solving.tree_design).
    Every context plus its curve's largest x must fit the model's window, unless
    `beyond_window` (the study's experiments that ran past it, docs/reproduction.md).
    batch: every step decodes that many requests together (docs/batching.md);
    `solve_batches` answers several batch sizes at once.
    objective: the best x maximises tokens/s (throughput) or tokens/J (energy,
    docs/energy.md). every_x=False: the bounded search (`solve_bounded`: only the x that
    can be best are timed; `fpgasim solve`'s default). curves: the curves
    `solve_curves_for` gives for these inputs, when the caller has them already (a
    cross-check solving the same curves on another engine).
    """
    o = options
    eng = simulator_of(get_engine(engine) if isinstance(engine, str) else engine)
    check_batch(batch)
    if curves is None:
        curves = solve_curves_for(board, model, algorithm, contexts, eng, tasks=o.tasks,
                                  aat_dir=o.aat_dir, aat_source=o.aat_source,
                                  fit_points=o.fit_points, curve_method=o.curve_method,
                                  beyond_window=o.beyond_window)
    return solve_curves(eng, board, model, algorithm, curves, naive_threshold=o.naive_threshold,
                        mean=o.mean, fit_points=o.fit_points, batch=batch,
                        objective=o.objective, every_x=o.every_x)


def solve_curves_for(
    board: Board,
    model: TargetModel,
    algorithm: Algorithm,
    contexts: Sequence[int],
    engine: Engine,
    *,
    tasks: Sequence[str] | None = None,
    aat_dir: Path | str | Sequence[Path | str] | None = None,
    aat_source: str | None = None,
    fit_points: Sequence[int] | None = None,
    curve_method: str | None = None,
    beyond_window: bool = False,
) -> list[AatCurve]:
    """The AAT curves `solve` solves, by the acceptance rule (or designed on this board's
    costs: curve_method `throughput`), their size and the model's window checked."""
    engine = simulator_of(engine)  # one memo for every consumer below
    eng = engine
    if aat_source is not None and aat_source not in AAT_SOURCES:
        raise InputError("aat_source", aat_source, f"one of {', '.join(AAT_SOURCES)}")
    contexts = sorted({int(c) for c in contexts})
    if not contexts or contexts[0] < 1:
        raise InputError("contexts", contexts, "one or more context lengths >= 1")
    # the curves' size is bounded before they are computed: the embedded curve's x, or the
    # largest x the measured tables hold for the pair
    per = max_verify_len(algorithm)
    if aat_source != "embedded" and curve_method not in COSTED_TREE_METHODS:
        rows = pair_rows(tables_for(aat_dir), algorithm, model.id)
        if len(rows):
            per = int(rows["verify_len"].max())
    check_points(len(contexts) * per, "contexts", f"{len(contexts)} contexts",
                 f"{len(contexts)} contexts x up to {per} x")
    if curve_method in COSTED_TREE_METHODS:  # trees designed on this board's costs
        if aat_source not in (None, "embedded") or tasks:
            raise InputError(
                "curve_method",
                curve_method,
                "designs its trees under the embedded model: drop `task` and `aat_source`",
            )
        build = COSTED_TREE_METHODS[curve_method]
        curves = [build(eng, board, model, algorithm, c) for c in contexts]
    else:
        curves = acceptance_curves(
            algorithm,
            model.id,
            contexts,
            aat_dir=aat_dir,
            tasks=tasks,
            aat_source=aat_source,
            method=curve_method,
            fit_points=fit_points,
        )
    count = sum(len(c.points) for c in curves)
    check_points(count, "contexts", f"{len(contexts)} contexts", "the curves' points")
    if not beyond_window:
        for curve in curves:
            x_max = int(curve.points["verify_len"].max()) if len(curve.points) else 1
            check_window(model, curve.context, x_max, "contexts")
    return curves


#: Columns `solve_batches` adds to each batch's summary row (SUMMARY_COLUMNS): the best
#: set's T_v and T_d (the batch's passes), AD's tokens/s over the whole batch, the tokens/J
#: with the decision taken, and the off-chip bytes the best set needs (`fits_memory`'s).
BATCH_EXTRA_COLUMNS = ["verify_s", "draft_s", "ad_batch_tokens_per_s", "tokens_per_j",
                       "memory_bytes"]
#: Columns of `solve_batches`' summary: a plain solve's summary per (task, context, batch),
#: then BATCH_EXTRA_COLUMNS.
BATCH_COLUMNS = [*SUMMARY_COLUMNS, *BATCH_EXTRA_COLUMNS]


@dataclass(frozen=True)
class BatchSolution:
    """`solve_batches`: one summary row per (task, context, batch) (BATCH_COLUMNS), per
    (task, context) the crossover (BATCH_CROSSOVER_COLUMNS), and with several tasks the
    unified x of every batch (the plain solve's `unified`, a `batch` column in it)."""

    summary: pd.DataFrame
    crossover: pd.DataFrame
    unified: pd.DataFrame = field(default_factory=pd.DataFrame)


def solve_batches(
    board: Board,
    model: TargetModel,
    algorithm: Algorithm,
    contexts: Sequence[int],
    batches: Sequence[int],
    options: SolveOptions = BATCH_OPTIONS,
    *,
    engine: Engine | str = "analytic",
) -> BatchSolution:
    """SD against AD at each batch size and context (docs/batching.md): at every batch the
    plain solve of the same curves (`solve_curves`: every option it takes means the same
    here; `every_x` False: the bounded searches), its summary row with what the batch
    delivers, and per context the largest batch at which SD still pays (`batch_crossover`)."""
    o = options
    eng = simulator_of(get_engine(engine) if isinstance(engine, str) else engine)
    batches = sorted({int(b) for b in batches})
    if not batches:
        raise InputError("batch", batches, "one or more batch sizes")
    for b in batches:
        check_batch(b)
    curves = solve_curves_for(board, model, algorithm, contexts, eng, tasks=o.tasks,
                              aat_dir=o.aat_dir, aat_source=o.aat_source,
                              fit_points=o.fit_points, curve_method=o.curve_method,
                              beyond_window=o.beyond_window)
    frames, unified = [], []
    for b in batches:
        sol = solve_curves(eng, board, model, algorithm, curves,
                           naive_threshold=o.naive_threshold, mean=o.mean,
                           fit_points=o.fit_points, batch=b, objective=o.objective,
                           every_x=o.every_x)
        frames.append(_with_batch_columns(sol, board, model, algorithm, b))
        if not sol.unified.empty:
            unified.append(sol.unified.assign(batch=b))
    summary = pd.concat(frames, ignore_index=True)[BATCH_COLUMNS]
    return BatchSolution(summary, batch_crossover(summary),
                         pd.concat(unified, ignore_index=True) if unified else pd.DataFrame())


def _with_batch_columns(sol: Solution, board: Board, model: TargetModel,
                        algorithm: Algorithm, batch: int) -> pd.DataFrame:
    """A batch's summary with BATCH_EXTRA_COLUMNS (from its curve rows at the best x)."""
    curves = sol.curves.set_index(["task", "context", "verify_len"])
    rows = []
    for s in sol.summary.to_dict("records"):
        x = int(s["best_verify_len"])
        at = curves.loc[(s["task"], s["context"], x)]
        at = at.iloc[0] if isinstance(at, pd.DataFrame) else at
        sd = s["decision"] == USE_SD
        rows.append({
            **s,
            "verify_s": float(at["verify_s"]),
            "draft_s": float(at["draft_s"]),
            "ad_batch_tokens_per_s": batch * s["ad_tokens_per_s"],
            # the batch's tokens per joule with the decision taken (docs/energy.md)
            "tokens_per_j": s["best_tokens_per_j"] if sd else s["ad_tokens_per_j"],
            # the marks of the decision taken (SD's best x, or AD's one token)
            **fit_columns(board, model, s["context"], x if sd else 1,
                          algorithm.drafter if sd else None, batch),
        })
    return pd.DataFrame(rows, columns=BATCH_COLUMNS)


def batch_crossover(summary: pd.DataFrame) -> pd.DataFrame:
    """Per (task, context): the largest batch up to which SD pays at every batch solved
    (None: not even at the smallest), the first batch from which it does not (None: it pays
    at every batch solved), SD's best speedup at both, and any larger batch at which SD
    pays again (`pays_again_at`). Only batches whose KV caches fit the memory rank; the
    others were timed as if they fit and are listed (`unfit_batches`)."""
    rows = []
    for (task, context), group in summary.groupby(["task", "context"], sort=True):
        group = group.sort_values("batch")
        fit = group["fits_memory"].astype(bool) if "fits_memory" in group else True
        unfit = [int(b) for b in group.loc[~fit, "batch"]] if "fits_memory" in group else []
        group = group.loc[fit] if "fits_memory" in group else group
        batches = [int(b) for b in group["batch"]]
        pays = [d == USE_SD for d in group["decision"]]
        speedups = [float(v) for v in group["best_speedup"]]
        run = next((k for k, p in enumerate(pays) if not p), len(pays))
        rows.append({
            "task": task,
            "context": int(context),
            "largest_sd_batch": batches[run - 1] if run else None,
            "speedup_there": speedups[run - 1] if run else None,
            "first_ad_batch": batches[run] if run < len(batches) else None,
            "speedup_from": speedups[run] if run < len(batches) else None,
            "pays_again_at": ",".join(str(b) for b, p in zip(batches[run:], pays[run:],
                                                             strict=True) if p),
            "batches": ",".join(map(str, batches)),
            "unfit_batches": ",".join(map(str, unfit)),
        })
    return pd.DataFrame(rows, columns=BATCH_CROSSOVER_COLUMNS)


def marked_points(summary: pd.DataFrame, drafter: DrafterSchema | None,
               decision_taken: bool = False) -> list[FitPoint]:
    """The points whose marks (`fits_memory`) a solve's summary carries, for
    `simulate.fit_warnings`: per row its context, batch, and the x (with the drafter when
    x > 1) of its memory mark: the best x (`solve`), or with `decision_taken` the x of the
    decision taken, 1 for AD (`solve_batches`)."""
    points = []
    for s in summary.to_dict("records"):
        x = int(s["best_verify_len"])
        if decision_taken and s["decision"] != USE_SD:
            x = 1
        points.append((int(s["context"]), x, drafter if x > 1 else None,
                       int(s.get("batch", 1))))
    return points


def crossover_lines(crossover: pd.DataFrame, summary: pd.DataFrame | None = None) -> list[str]:
    """One line per (task, context) of `batch_crossover`: at which of the batches solved SD
    pays and at which it does not, each with SD's best speedup there (`summary`: the rows
    the speedups come from; without it, those `batch_crossover` keeps), the task named when
    there are several. Only what was solved: no batch between two solved ones is claimed."""
    multi = crossover["task"].nunique() > 1
    lines = []
    for c in crossover.to_dict("records"):
        label = f"{c['task']}, L={c['context']}" if multi else f"L={c['context']}"
        if not c["batches"]:
            lines.append(f"  {label}: no batch solved fits the memory ({c['unfit_batches']}: "
                         "timed as if they did, fits_memory = False; not ranked)")
            continue
        batches = [int(b) for b in str(c["batches"]).split(",")]
        if summary is not None:
            group = summary[(summary["task"] == c["task"]) &
                            (summary["context"] == c["context"])].set_index("batch")
            speedup = {b: float(group.loc[b, "best_speedup"]) for b in batches}
            pays = {b: group.loc[b, "decision"] == USE_SD for b in batches}
        else:
            speedup = {}
            pays = {b: False for b in batches}
            if c["largest_sd_batch"] is not None:
                for b in batches[: batches.index(int(c["largest_sd_batch"])) + 1]:
                    pays[b] = True
            for b in (c["pays_again_at"].split(",") if c["pays_again_at"] else []):
                pays[int(b)] = True

        def at(bs: list[int], speedup: dict[int, float] = speedup) -> str:
            shown = [f"{b} ({speedup[b]:.3g}x)" if b in speedup else str(b) for b in bs]
            return ", ".join(shown)

        yes = [b for b in batches if pays[b]]
        no = [b for b in batches if not pays[b]]
        solved = f"batches solved: {','.join(map(str, batches))}"
        if not yes:
            line = f"SD pays at no batch solved; AD at B = {at(no)} ({solved})"
        elif not no:
            line = f"SD pays at every batch solved: B = {at(yes)}"
        elif c["pays_again_at"] == "" and c["largest_sd_batch"] is not None:
            line = (f"SD pays up to batch {int(c['largest_sd_batch'])} and not from "
                    f"{int(c['first_ad_batch'])} on: SD at B = {at(yes)}; AD at B = {at(no)}")
        else:
            line = f"SD pays at B = {at(yes)}; AD at B = {at(no)} ({solved})"
        if c.get("unfit_batches"):
            line += (f"; batches {c['unfit_batches']} do not fit the memory (timed as if they "
                     "did, fits_memory = False; not ranked)")
        lines.append(f"  {label}: {line}")
    return lines


#: Columns of `batch_crossover`.
BATCH_CROSSOVER_COLUMNS = ["task", "context", "largest_sd_batch", "speedup_there",
                           "first_ad_batch", "speedup_from", "pays_again_at", "batches",
                           "unfit_batches"]
