"""Run several experiments at once, on every core: the simulator's passes of the whole run
planned and computed once (`prefetch.simulator_passes`, `PassService.prefetch`), then the
experiments on forked workers (each figure drawn there too), each result with a note
naming the workloads that do not fit their board's memory. `fpgasim reproduce` calls
`run_experiments` and writes and prints what it returns.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import as_completed
from contextlib import contextmanager
from importlib import import_module
from typing import Protocol

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import ENGINES, Engine
from fpgasim.engine.cycle import CycleEngine
from fpgasim.engine.fast import FastEngine, warm_kernels
from fpgasim.figures.style import load_matplotlib
from fpgasim.reproduce.experiment_loader import AnyExperiment
from fpgasim.reproduce.experiment_runner import ExperimentResult, run_experiment
from fpgasim.reproduce.experiment_schema import Experiment
from fpgasim.reproduce.kind import experiment_kind
from fpgasim.reproduce.output import figure_png
from fpgasim.reproduce.prefetch import simulator_passes
from fpgasim.reproduce.workloads import RunContext
from fpgasim.simulate import fits_memory
from fpgasim.solving.tree_design import COSTED_TREE_METHODS
from fpgasim.step import Simulator, engine_of
from fpgasim.sweep.executors import InProcessExecutor, ProcessExecutor, default_workers


class RunProgress(Protocol):
    """What a run reports as it goes (the CLI draws a progress bar from it)."""

    def passes(self, total: int) -> None:
        """The simulator's `total` distinct passes are about to be timed."""

    def passes_done(self, count: int) -> None:
        """`count` of them are timed so far."""

    def experiments(self, total: int) -> None:
        """The `total` experiments are about to run."""

    def experiment_done(self) -> None:
        """One more experiment finished."""


def simulator(name: str) -> Simulator:
    """The simulator by name; cycle-level engines extrapolate from a proven steady state of
    a few layers (`CycleEngine.pass_cycles`: exact, the same cycles as simulating all)."""
    cls = ENGINES[name]
    return Simulator.named(name, window=True if issubclass(cls, CycleEngine) else None)


def preload_planning() -> None:
    """Load in this process, before the planning workers are forked, what each of them
    would otherwise load for itself: scipy's optimiser (the AAT fits, `acceptance.log_model`;
    0.24 s to import, once instead of once per worker)."""
    import_module("scipy.optimize")


def preload(sim: Engine | None, draw: bool) -> None:
    """Load in this process what every worker of the run would otherwise load for itself:
    the fast engine's numba kernels (`warm_kernels`: compiled once, cached on disk), what
    planning needs (`preload_planning`) and, when figures are drawn, matplotlib. Workers
    forked afterwards inherit them (cold, each worker compiled the kernels itself)."""
    if isinstance(engine_of(sim), FastEngine):
        warm_kernels()
    preload_planning()
    if draw:
        load_matplotlib()


@contextmanager
def alongside(work: Callable[[], None]) -> Iterator[None]:
    """Run `work` on a thread of this process while the block runs (e.g. while the pool's
    workers plan), wait for it when the block ends, and raise what it raised."""
    failed: list[BaseException] = []

    def target() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - raised in the caller's thread below
            failed.append(exc)

    thread = threading.Thread(target=target, name="fpgasim-preload")
    thread.start()
    try:
        yield
    finally:
        thread.join()
    if failed:
        raise failed[0]


def run_experiments(
    experiments: Sequence[AnyExperiment],
    ctx: RunContext,
    *,
    draw: bool,
    workers: int | None = None,
    progress: RunProgress | None = None,
) -> list[tuple[ExperimentResult, bytes | None]]:
    """Each experiment's result (with `flag_fit`'s notes) and, with `draw`, its figure as
    PNG bytes, in the order given, run on `workers` processes (default: every core) in
    three phases, each on workers forked when it starts: the simulator's passes of the
    whole run planned (while this process `preload`s), then each distinct pass timed once,
    then the experiments, costliest first (the workers inherit the run's caches, the
    simulator's passes included)."""
    n = workers or default_workers()
    prefetch = ctx.sim is not None and isinstance(engine_of(ctx.sim), CycleEngine)
    global _JOB
    _JOB = (list(experiments), ctx, draw)
    forked = n > 1 and sys.platform.startswith("linux")

    def pool() -> ProcessExecutor | InProcessExecutor:
        """Workers forked now (they inherit this process as it is), or this process."""
        return ProcessExecutor(n) if forked else InProcessExecutor()

    # costliest first: they start first on the workers
    order = sorted(range(len(experiments)), key=lambda i: -_cost(experiments[i]))
    try:
        if prefetch:
            assert ctx.sim is not None
            if forked:
                preload_planning()
            with pool() as planners, alongside(lambda: preload(ctx.sim, draw)):
                # each worker dry-runs some experiments (`simulator_passes`)
                planned = sorted(planners.map_unordered(_plan_one, order))
            keys = list(dict.fromkeys(k for _, (ks, _) in planned for k in ks))
            for _, (_, read) in planned:  # the experiment workers inherit what was read
                ctx.adopt(read)
            if progress is not None:
                progress.passes(len(keys))

            def advance(count: int, _total: int) -> None:
                """The prefetch's progress: `count` passes timed so far."""
                if progress is not None:
                    progress.passes_done(count)

            with pool() as timers:
                ctx.sim.prefetch(keys, timers, progress=advance)
        else:
            preload(ctx.sim, draw)
        if progress is not None:
            progress.experiments(len(experiments))
        with pool() as runners:
            futures = {runners.submit(_run_one, i): i for i in order}
            done: dict[int, tuple[ExperimentResult, bytes | None]] = {}
            for future in as_completed(futures):
                done[futures[future]] = future.result()
                if progress is not None:
                    progress.experiment_done()
    finally:
        _JOB = None
    return [done[i] for i in range(len(experiments))]


#: (experiments, run context, draw figures) of the run in progress, read by `_run_one` in
#: forked workers (inherited, not pickled: the caches can be large).
_JOB: tuple[list[AnyExperiment], RunContext, bool] | None = None


def _run_one(index: int) -> tuple[ExperimentResult, bytes | None]:
    """One experiment of `_JOB` and, if drawn, its figure as PNG bytes."""
    assert _JOB is not None
    experiments, ctx, draw = _JOB
    exp = experiments[index]
    result = flag_fit(exp, run_experiment(exp, ctx=ctx))
    return result, (figure_png(result) if draw and result.figure else None)


def _plan_one(index: int) -> tuple[list[tuple], tuple[dict, dict]]:
    """The simulator's passes one experiment of `_JOB` will ask for (`simulator_passes`),
    and the AAT tables and curves it read (`RunContext.read_since`: 0.8 s of CPU to read
    for `reproduce all`, that the experiment workers would otherwise spend again)."""
    assert _JOB is not None
    experiments, ctx, _ = _JOB
    before = ctx.read_so_far()
    return simulator_passes([experiments[index]], ctx), ctx.read_since(before)


#: what one throughput tree search (a costed tree method, `tree.throughput.search_shapes`)
#: costs, in solved (board, model, context) curves: table3's searches on V80 take about
#: 0.9 s on the simulator's costs, a solved curve about 0.04 s (fig4: 34 curves in 1.5 s)
SEARCH_CURVES = 23
#: what drawing a figure costs, in solved curves (fig2's eight panels 0.5 s, fig6's 0.1 s)
FIGURE_CURVES = 8


def _cost(exp: AnyExperiment) -> int:
    """A rough cost of an experiment, in solved curves: for a timed kind, (board, model,
    context) combinations per tree method, a throughput search counting `SEARCH_CURVES`
    (an AAT-only kind solves none); `FIGURE_CURVES` for a figure drawn. It orders the
    experiments, costliest first, so the last to finish are short ones."""
    kind = experiment_kind(exp.kind) if isinstance(exp, Experiment) else None
    drawn = FIGURE_CURVES if getattr(exp, "figure", False) else 0
    if kind is not None and not kind.timed:
        return drawn
    workloads = getattr(exp, "workloads", None) or []
    methods = getattr(exp, "tree_methods", None) or [None]
    per_combo = sum(SEARCH_CURVES if m in COSTED_TREE_METHODS else 1 for m in methods)
    combos = sum(len(w.boards) * len(w.models) * len(w.contexts) for w in workloads)
    return per_combo * combos + drawn


def flag_fit(exp: AnyExperiment, result: ExperimentResult) -> ExperimentResult:
    """Add the notes that mark what the experiment's rows rest on but does not fit: the
    (board, model, contexts) whose target and drafter weights + KV caches exceed the
    board's memory, and the boards whose arrays need more DSP slices than the part leaves a
    design (docs/hardware.md, "What does not fit"); the study simulates them anyway and so
    does reproduce."""
    unfit, beyond = [], {}
    for workload in getattr(exp, "workloads", None) or []:
        for board_name in workload.boards:
            board = load_board(board_name)
            if board.fit.fits_dsps is False:
                f = board.fit
                beyond[board.name] = (f"{board.name} ({f.dsps_used:,} {board.fpga.dsp_kind} "
                                      f"for {f.dsps_available:,})")
            for model_name in workload.models:
                model = load_model(model_name)
                drafter = load_algorithm(workload.algorithm).drafter
                over = [c for c in workload.contexts
                        if not fits_memory(board, model, c, 1, drafter)]
                if over:
                    unfit.append(
                        f"{model.id} on {board.name} ({board.memory.capacity_gib:g} GiB) at "
                        f"L = {', '.join(map(str, over))}"
                    )
    notes = []
    if unfit:
        notes.append(
            "does not fit the board's memory (target and drafter weights + KV caches, "
            "fits_memory = False), "
            f"simulated anyway as in the study: {'; '.join(unfit)}"
        )
    if beyond:
        notes.append(
            "arrays beyond the part's DSPs (the study's arrays as it scaled them, fits_dsps = "
            f"False), simulated anyway as in the study: {'; '.join(beyond.values())}"
        )
    return dataclasses.replace(result, notes=(*result.notes, *notes)) if notes else result
