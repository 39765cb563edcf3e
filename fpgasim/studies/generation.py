"""End-to-end generation: the prefill (time to first token), then decode steps, each at
its own context with the board's token alignment; with an SD algorithm each step verifies
the solver's best x at its context and advances by that x's expected accepted tokens.

Decode step i (0-based) of plain decoding attends T_i = ceil_m(P + i + 1) tokens, m =
`padding.decode_multiple` (FlightLLM: T = ceil16(P + i + 1)), so it runs the target pass
over 1 token at context T_i - 1. Steps of one aligned context cost the same and are timed
once.

SD: g, the expected tokens generated so far, starts at 0. A step starts at g_k, runs at
context ceil_m(P + floor(g_k) + 1) - 1 (floor: only whole accepted tokens are cached), and
verifies the solver's best x there (`solving.solver.best_set`, the draft tree at x with
floor(AAT) accepted); g_(k+1) = g_k + AAT(x) exactly, in floating point, with no rounding
between steps. Steps run while g_k < D; the last step is charged in full even when it
overshoots D. Where the solver decides "use AD" (best speedup <= 1) the step is one AD
step: x = 1, AAT = 1, no draft. With AAT = 1 everywhere the steps are exactly those of
plain decoding.

The AAT curves come from the acceptance rule (`analysis.acceptance`), asked at each step's
own context: the measured tables where they hold the algorithm and model (interpolated
between their contexts, extrapolated beyond), else the embedded model. The summary puts
the run beside its AD baseline: plain decoding of the same D tokens after the same
prefill (`ad_decode_s`, `ad_total_s`), and SD's speedup over it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pandas as pd

from fpgasim.acceptance.curves import AatCurve, acceptance_curves, embedded_curves
from fpgasim.acceptance.measured import AatTables, workload_rows
from fpgasim.acceptance.rule import main_task, tables_for
from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, TargetModel
from fpgasim.dataflow.lowerings.flightllm.flightllm_cluster import (
    cluster_columns,
    pass_schedule,
)
from fpgasim.dataflow.lowerings.registry import link_seconds
from fpgasim.engine import Engine
from fpgasim.engine.cycle import CycleEngine
from fpgasim.engine.energy import cluster_energy, energy_constants, pass_energy
from fpgasim.errors import InputError
from fpgasim.simulate import (
    align_up,
    check_batch,
    check_window,
    fit_columns,
    prefill_specs,
    prefill_timing,
    verify_timing,
)
from fpgasim.solving.decision import USE_SD
from fpgasim.solving.solver import Timer, best_set, energy_verdict
from fpgasim.step import PassKey, engine_of, simulator_of, verify_spec
from fpgasim.sweep.executors import ProcessExecutor

#: Longest decode a command accepts, tokens.
MAX_DECODE_LEN = 1_000_000

STEP_COLUMNS = [
    "step",
    "generated_before",
    "context",
    "tokens_attended",
    "verify_len",
    "tree",
    "aat",
    "decision",
    "sd_speedup",
    "aat_basis",
    "verify_s",
    "draft_s",
    "step_s",
    "elapsed_s",
    "step_j",
]

SUMMARY_COLUMNS = [
    "board",
    "model",
    "algorithm",
    "engine",
    "aat_source",
    "aat_basis",
    "aat_note",
    "task",
    "prompt_len",
    "prompt_len_aligned",
    "decode_len",
    "decode_multiple",
    "prefill_cycles",
    "ttft_s",
    "decode_steps",
    "decode_contexts",
    "sd_steps",
    "mean_verify_len",
    "mean_aat",
    "decode_s",
    "total_s",
    "tokens_per_s",
    "decode_tokens_per_s",
    "tpot_s",
    "ad_decode_s",
    "ad_total_s",
    "ad_decode_tokens_per_s",
    "decode_speedup",
    "total_speedup",
    "decode_j",
    "decode_tokens_per_j",
    "ad_decode_j",
    "ad_decode_tokens_per_j",
    "energy_decision",
]

#: The AAT curve (x -> AAT, tree) to solve at one context.
CurveAt = Callable[[int], AatCurve]


class ProgressSink(Protocol):
    """What the generation reports progress to (cli.common.RichProgress fits)."""

    def start(self, total: int, done: int) -> None:
        """Begin a bar of `total` units, `done` of them already finished."""
        ...

    def advance(self, points: int) -> None:
        """Mark `points` more units finished."""
        ...


GROUP_COLUMNS = [
    "context",
    "decision",
    "sd_speedup",
    "aat_basis",
    "verify_len",
    "tree",
    "aat",
    "steps",
    "step_s",
    "group_s",
]


@dataclass(frozen=True)
class Generation:
    """steps: one row per decode step (STEP_COLUMNS); summary: SUMMARY_COLUMNS; ad_steps:
    the AD baseline's steps (STEP_COLUMNS; the same frame as `steps` for plain decoding)."""

    steps: pd.DataFrame
    summary: dict
    ad_steps: pd.DataFrame | None = None

    def groups(self) -> pd.DataFrame:
        """One row per distinct decode step (context, x, ...): its count and time."""
        keys = ["context", "verify_len", "tree", "aat", "decision", "sd_speedup", "aat_basis",
                "step_s"]
        out = (
            self.steps.groupby(keys, sort=True, dropna=False)
            .size()
            .reset_index(name="steps")
            .sort_values("context", kind="stable", ignore_index=True)
        )
        out["group_s"] = out["steps"] * out["step_s"]
        return out[GROUP_COLUMNS]


def decode_context(prompt_len: int, generated: int, multiple: int) -> int:
    """Cached tokens of the decode step after `generated` tokens: ceil_m(P + g + 1) - 1."""
    return align_up(prompt_len + generated + 1, multiple) - 1


def embedded_curve_at(algorithm: Algorithm, model_id: str = "") -> CurveAt:
    """AAT curves of the embedded acceptance model, at the step's own context (each built
    once: `planned_passes` and `generate` ask the same contexts)."""
    cache: dict[int, AatCurve] = {}

    def curve_at(context: int) -> AatCurve:
        """The curve at `context`, built on first use."""
        if context not in cache:
            cache[context] = embedded_curves(
                algorithm, [context], model_id=model_id, why="asked for"
            )[0]
        return cache[context]

    return curve_at


def acceptance_curve_at(
    algorithm: Algorithm,
    model_id: str,
    *,
    aat_dir: AatTables | Path | str | None = None,
    task: str | None = None,
    aat_source: str | None = None,
    method: str | None = None,
) -> tuple[CurveAt, str]:
    """(curve at a context, task) by the acceptance rule at each step's own context
    (`analysis.acceptance`): one measured task (default: the one measured at the most
    contexts; '' where no table holds the pair: the embedded model, task-agnostic)."""
    if aat_source == "embedded":
        if task is not None:
            raise InputError("task", task, "the embedded acceptance model is task-agnostic")
        return embedded_curve_at(algorithm, model_id), "embedded"
    tables = tables_for(aat_dir)
    if task is None:
        task = main_task(algorithm, model_id, tables, method)
    cache: dict[int, AatCurve] = {}

    def curve_at(context: int) -> AatCurve:
        """The rule's curve at `context`, built on first use."""
        if context not in cache:
            cache[context] = acceptance_curves(
                algorithm, model_id, [context], aat_dir=tables,
                tasks=[task] if task else None, aat_source=aat_source, method=method,
            )[0]
        return cache[context]

    return curve_at, task or "embedded"


def measured_curve_at(
    tables: AatTables,
    algorithm: Algorithm,
    model_id: str,
    task: str,
    aat_source: str = "measured",
    method: str | None = None,
) -> CurveAt:
    """AAT curves of one task's measured tables at each step's own context, by the
    acceptance rule (measured, interpolated between measured contexts, extrapolated
    beyond); the tables must hold (algorithm, model)."""
    workload_rows(tables, algorithm.id, algorithm.kind, model_id)
    curve_at, _ = acceptance_curve_at(
        algorithm, model_id, aat_dir=tables, task=task, aat_source=aat_source, method=method
    )
    return curve_at


def _check(model: TargetModel, prompt_len: int, decode_len: int) -> None:
    if prompt_len < 1:
        raise InputError("prompt_len", prompt_len, "at least 1 token")
    if not 1 <= decode_len <= MAX_DECODE_LEN:
        raise InputError("decode_len", decode_len, f"1 to {MAX_DECODE_LEN} tokens")
    check_window(model, prompt_len, 1, "prompt_len")  # at least one decoded token follows
    if prompt_len + decode_len > model.window_tokens:
        raise InputError("decode_len", decode_len,
                         f"at most {model.window_tokens - prompt_len}: {model.id}'s window is "
                         f"{model.window_tokens} tokens and the prompt has {prompt_len}")


def planned_passes(
    engine: Engine,
    board: Board,
    model: TargetModel,
    prompt_len: int,
    decode_len: int,
    *,
    algorithm: Algorithm | None = None,
    curve_at: CurveAt | None = None,
    batch: int = 1,
) -> list[PassKey]:
    """The passes `generate` with these arguments will ask `engine` for sure,
    listed without timing any, so a pool can compute them first (`PassService.prefetch`):
    the prefill, the AD pass of every aligned context (plain decoding, or SD's AD
    baseline), then what SD's steps ask at every context they are sure to reach.
 SD reaches a context's tokens [s, t]
    (t <= D - 1) from the previous context's, whose steps advance floor(g) by at most
    floor(AAT) + 1 (AAT of any x of its curve, or 1 for AD): so it is sure to reach them
    when that jump is at most t - s + 1 (always, when AAT < m - 1). The plan stops at the
    first context the steps might jump over; `generate` times the rest as it reaches
    them. At each reached context the solver's best-set search asks `Timer.best_set_plan`
    for sure, then (on boards with bounds) the passes of the few x whose floor and bound
    let them be best, which no plan can list before the times are known.
    """
    engine = simulator_of(engine)  # one memo for every consumer below
    _check(model, prompt_len, decode_len)
    keys: list[PassKey] = [(spec, board, model, None) for spec in prefill_specs(board, prompt_len)]
    bins = _context_bins(prompt_len, decode_len, board.padding.decode_multiple)
    # plain decoding, and SD's AD baseline, reach every aligned context
    keys += [(verify_spec(1, context, batch=batch), board, model, None)
             for context, _, _ in bins]
    if algorithm is None:
        return keys
    if curve_at is None:
        curve_at = acceptance_curve_at(algorithm, model.id)[0]
    timer = Timer(engine, board, model, algorithm, batch)
    jump = 1
    for context, first, last in bins:
        if jump > last - first + 1:
            break
        curve = curve_at(context)
        keys += timer.best_set_plan(curve)
        jump = math.floor(max(1.0, float(curve.points["aat"].max()))) + 1
    return keys


def prefetch_generation(
    engine: Engine,
    board: Board,
    model: TargetModel,
    prompt_len: int,
    decode_len: int,
    *,
    algorithm: Algorithm | None,
    curve_at: CurveAt | None,
    batch: int,
    workers: int,
    progress: ProgressSink,
) -> None:
    """Time `planned_passes` on a pool of `workers` processes, so `generate` finds them
    remembered; nothing for one worker or an engine
    that is not cycle-level. The first AD pass (planned whatever the algorithm) is timed
    before the workers fork, so they inherit fast's numba kernels compiled (or loaded from
    disk) once instead of each compiling them, and the prefill (the longest pass) runs on a
    worker while the plan lists the rest. A pass that fails is left to `generate`, which
    asks it in its own order and reports it as a serial run does; an error of the plan
    itself is raised. `progress` starts when the first passes are timed."""
    if workers <= 1 or not isinstance(engine_of(engine), CycleEngine):
        return
    service = simulator_of(engine)
    failed: Exception | None = None  # the plan's own error
    try:
        first = decode_context(prompt_len, 0, board.padding.decode_multiple)
        service.run_pass(verify_spec(1, first, batch=batch), board, model)
        with ProcessExecutor(workers) as pool:
            finish = service.start([(spec, board, model, None)
                                    for spec in prefill_specs(board, prompt_len)], pool)
            try:
                planned = planned_passes(engine, board, model, prompt_len, decode_len,
                                         algorithm=algorithm, curve_at=curve_at, batch=batch)
            except Exception as error:
                failed = error
                raise
            finish()
            shown = 0

            def advance(done: int, total: int) -> None:
                """The prefetch's progress: start the bar on the first call, then catch up."""
                nonlocal shown
                if shown == 0:
                    progress.start(total, 0)
                progress.advance(done - shown)
                shown = done

            service.prefetch(planned, pool, progress=advance)
    except Exception:  # noqa: BLE001 - a failed pass, a dead worker or a failed fork:
        if failed is not None:
            raise failed from None
        # the serial run (`generate`) asks every pass again and reports as one worker does


def _context_bins(prompt_len: int, decode_len: int, multiple: int) -> list[tuple[int, int, int]]:
    """(context, first, last) of each aligned decode context in order: the tokens generated
    before a step, g in [first, last] within [0, decode_len - 1], that run at it."""
    out = []
    context = decode_context(prompt_len, 0, multiple)
    while context - multiple + 1 - prompt_len <= decode_len - 1:
        first = max(0, context - multiple + 1 - prompt_len)
        out.append((context, first, min(decode_len - 1, context - prompt_len)))
        context += multiple
    return out


def generate(
    engine: Engine,
    board: Board,
    model: TargetModel,
    prompt_len: int,
    decode_len: int,
    *,
    algorithm: Algorithm | None = None,
    curve_at: CurveAt | None = None,
    aat_source: str = "",
    task: str = "",
    progress: ProgressSink | None = None,
    batch: int = 1,
) -> Generation:
    """Prefill `prompt_len` tokens, then decode `decode_len` tokens: plain decoding, or SD
    with `algorithm` when given (AAT curves from `curve_at`, default: the acceptance rule
    with the shipped tables), beside its AD baseline (the summary's `ad_*` and speedups).

    batch: that many requests in lockstep (docs/batching.md): their prompts prefilled one
    after another (`ttft_s` is the batch's), then every step decodes all of them; the
    per-request rates stay per request, `batch_decode_tokens_per_s` counts the batch."""
    engine = simulator_of(engine)  # one memo for every consumer below
    _check(model, prompt_len, decode_len)
    check_batch(batch)
    prefill = prefill_timing(engine, board, model, prompt_len)
    prefill_s = batch * prefill.seconds
    ad = pd.DataFrame(
        _ad_steps(engine, board, model, prompt_len, decode_len, None if algorithm else progress,
                  batch),
        columns=STEP_COLUMNS,
    )
    ad["elapsed_s"] = prefill_s + ad["step_s"].cumsum()
    if algorithm is None:
        frame = ad
    else:
        if curve_at is None:
            curve_at, task = acceptance_curve_at(algorithm, model.id)
        timer = Timer(engine, board, model, algorithm, batch)
        steps = _sd_steps(timer, curve_at, prompt_len, decode_len, progress)
        frame = pd.DataFrame(steps, columns=STEP_COLUMNS)
        frame["elapsed_s"] = prefill_s + frame["step_s"].cumsum()
        aat_source = aat_source or _curve_sources(curve_at, frame)
    decode_s = float(frame["step_s"].sum())
    ad_decode_s = float(ad["step_s"].sum())
    decode_j, ad_decode_j = float(frame["step_j"].sum()), float(ad["step_j"].sum())
    summary = {
        "board": board.name,
        "model": model.id,
        "algorithm": algorithm.id if algorithm else "",
        "engine": engine.name,
        "aat_source": aat_source if algorithm else "",
        **(_basis_summary(curve_at, frame) if algorithm else {"aat_basis": "", "aat_note": ""}),
        "task": task if algorithm else "",
        "prompt_len": prompt_len,
        "prompt_len_aligned": align_up(prompt_len, board.padding.prefill_multiple),
        "decode_len": decode_len,
        "batch": batch,
        "decode_multiple": board.padding.decode_multiple,
        "prefill_cycles": batch * prefill.cycles,
        "ttft_s": prefill_s,
        "decode_steps": len(frame),
        "decode_contexts": int(frame["context"].nunique()),
        "sd_steps": int((frame["verify_len"] > 1).sum()),
        "mean_verify_len": float(frame["verify_len"].mean()),
        "mean_aat": float(frame["aat"].mean()),
        "decode_s": decode_s,
        "total_s": prefill_s + decode_s,
        # end to end, per request: the prefill's first token and the D decoded after it
        "tokens_per_s": (decode_len + 1) / (prefill_s + decode_s),
        "decode_tokens_per_s": decode_len / decode_s,
        "batch_decode_tokens_per_s": batch * decode_len / decode_s,
        "tpot_s": decode_s / decode_len,
        "ad_decode_s": ad_decode_s,
        "ad_total_s": prefill_s + ad_decode_s,
        "ad_decode_tokens_per_s": decode_len / ad_decode_s,
        "decode_speedup": ad_decode_s / decode_s,
        "total_speedup": (prefill_s + ad_decode_s) / (prefill_s + decode_s),
        # energy of the decode (docs/energy.md): the steps' joules, SD's beside AD's
        "decode_j": decode_j,
        "decode_tokens_per_j": decode_len / decode_j,
        "ad_decode_j": ad_decode_j,
        "ad_decode_tokens_per_j": decode_len / ad_decode_j,
        "energy_decision": energy_verdict(decode_len / decode_j, decode_len / ad_decode_j)
        if algorithm else "",
        # weights and KV at the last step's context (the largest)
        **fit_columns(board, model, int(frame["context"].max()), int(frame["verify_len"].max()),
                      algorithm.drafter if algorithm else None, batch),
        **_cluster_summary(board, model, frame, batch, decode_s, engine),
    }
    return Generation(frame, summary, ad)


def _cluster_summary(board: Board, model: TargetModel, frame: pd.DataFrame, batch: int,
                     decode_s: float, engine: Engine) -> dict:
    """The decode's cluster columns (`cluster_columns`): its verify passes' link time over
    the decode's time, and on a pipeline the verify passes' micro-batches and bubble share
    (weighted by each pass's time; each distinct pass lowered once; zeros on one card)."""
    if board.cluster.is_single:
        return cluster_columns(board, 0.0, 0.0, decode_s)
    sync_s = busy_s = 0.0
    idle = span = 0.0
    counts = frame.groupby(["verify_len", "context"]).size()
    for (x, context), n in counts.items():
        spec = verify_spec(int(x), int(context), batch=batch)
        sync, busy = link_seconds(spec, board, model, engine)
        sync_s, busy_s = sync_s + n * sync, busy_s + n * busy
        sched = pass_schedule(spec, board, model, engine)
        if sched is not None:
            idle += n * sched.bubble_share * sched.makespan_ticks
            span += n * sched.makespan_ticks
    pipeline = {"micro_batches": board.cluster.micro_batches_of(batch),
                "bubble_share": idle / span if span else 0.0}
    return cluster_columns(board, sync_s, busy_s, decode_s, pipeline)


def _curve_sources(curve_at: CurveAt, steps: pd.DataFrame) -> str:
    """The AAT forms the run's curves used (measured, fitted, embedded), joined by '/'."""
    contexts = sorted(set(int(c) for c in steps["context"]))
    return "/".join(dict.fromkeys(curve_at(c).aat_source for c in contexts))


def _basis_summary(curve_at: CurveAt, steps: pd.DataFrame) -> dict:
    """aat_basis: the rule's bases over the run's contexts; aat_note: its note at the
    first context and, if it differs, at the last (where an extrapolation shows)."""
    contexts = sorted(set(int(c) for c in steps["context"]))
    bases = "/".join(dict.fromkeys(str(b) for b in steps["aat_basis"]))
    first, last = curve_at(contexts[0]).note, curve_at(contexts[-1]).note
    note = first if first == last else f"L={contexts[0]}: {first} ... L={contexts[-1]}: {last}"
    return {"aat_basis": bases, "aat_note": note}


def _ad_steps(
    engine: Engine,
    board: Board,
    model: TargetModel,
    prompt_len: int,
    decode_len: int,
    progress: ProgressSink | None,
    batch: int = 1,
) -> list[dict]:
    """Plain decoding: one target pass over 1 token per step (for each of `batch`
    requests), timed once per context."""
    multiple = board.padding.decode_multiple
    contexts = [decode_context(prompt_len, i, multiple) for i in range(decode_len)]
    distinct = sorted(set(contexts))
    if progress is not None:
        progress.start(len(distinct), 0)
    seconds: dict[int, float] = {}
    joules: dict[int, float] = {}
    constants = energy_constants(board)
    for context in distinct:
        timing = verify_timing(engine, board, model, 1, context, batch=batch)
        seconds[context] = timing.seconds
        # each request's share of the batch's pass, as the SD steps' (Timer.step_energy_j)
        joules[context] = cluster_energy(pass_energy(timing, board, engine.name, constants),
                                         board.cluster.cards,
                                             working=board.cluster.tp_cards).energy_j / batch
        if progress is not None:
            progress.advance(1)
    return [
        _row(i, float(i), c, 1, "", 1.0, ("use AD", math.nan), seconds[c], 0.0, joules[c])
        for i, c in enumerate(contexts)
    ]


def _sd_steps(
    timer: Timer,
    curve_at: CurveAt,
    prompt_len: int,
    decode_len: int,
    progress: ProgressSink | None,
) -> list[dict]:
    """SD: each step verifies the best x of its context and advances g by AAT(x)."""
    board = timer.board
    multiple = board.padding.decode_multiple
    solved: dict[int, tuple[int, str, float, tuple[str, float], float, float, float]] = {}
    rows: list[dict] = []
    generated, shown = 0.0, 0
    if progress is not None:
        progress.start(decode_len, 0)
    while generated < decode_len:
        context = decode_context(prompt_len, math.floor(generated), multiple)
        if context not in solved:
            solved[context] = _best_step(timer, curve_at(context))
        x, tree, aat, verdict, verify_s, draft_s, step_j = solved[context]
        if context + x > timer.model.window_tokens:
            raise InputError("decode_len", decode_len,
                             f"fewer tokens: the step at context {context} verifies x = {x} "
                             f"tokens past {timer.model.id}'s {timer.model.window_tokens}-token "
                             "window")
        row = _row(len(rows), generated, context, x, tree, aat, verdict, verify_s, draft_s,
                   step_j)
        row["aat_basis"] = curve_at(context).basis
        rows.append(row)
        generated += aat
        if progress is not None:
            done = min(decode_len, math.floor(generated))
            progress.advance(done - shown)
            shown = done
    return rows


def _best_step(
    timer: Timer, curve: AatCurve, objective: str = "throughput"
) -> tuple[int, str, float, tuple[str, float], float, float, float]:
    """(x, tree, AAT, (decision, SD's best speedup over AD), T_v s, T_d s, step J) of the
    solver's best set at one context (x = 1 where the decision is AD): `best_set`, which
    times only the x that can be best (on boards whose passes are bounded from below) and
    none of the primary roofline or the Ori set, which the best set and the decision do not
    read. `objective` energy: the x of most tokens/J (SD where it beats AD's)."""
    best = best_set(timer, curve, objective)
    verdict = (best.decision, best.speedup)
    if verdict[0] != USE_SD:
        return (1, "", 1.0, verdict, timer.verify_s(1, curve.context), 0.0,
                timer.ad_energy_j(curve.context))
    return (best.verify_len, best.tree, best.aat, verdict, best.verify_s, best.draft_s,
            best.aat / best.tokens_per_j)


def _row(
    step: int,
    generated: float,
    context: int,
    verify_len: int,
    tree: str,
    aat: float,
    verdict: tuple[str, float],
    verify_s: float,
    draft_s: float,
    step_j: float,
) -> dict:
    return {
        "step": step,
        "generated_before": generated,
        "context": context,
        "tokens_attended": context + verify_len,
        "verify_len": verify_len,
        "tree": tree,
        "aat": aat,
        "decision": verdict[0],
        "sd_speedup": verdict[1],
        "aat_basis": "",
        "verify_s": verify_s,
        "draft_s": draft_s,
        "step_s": verify_s + draft_s,
        "elapsed_s": 0.0,
        "step_j": step_j,
    }
