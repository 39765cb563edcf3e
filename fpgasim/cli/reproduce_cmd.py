"""`fpgasim reproduce`: the study's tables and figures from workloads/experiments/*.yaml,
the study's accounting and the simulator side by side."""

from __future__ import annotations

import dataclasses
import sys
from concurrent.futures import as_completed
from contextlib import nullcontext
from pathlib import Path

import pandas as pd
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from fpgasim.cli.common import err_console, json_value, report_written, rich_table, wide_console
from fpgasim.cli.options import (
    TableMdCsv,
    aat_dir_option,
    format_option,
    out_option,
    workers_option,
)
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import BULK_ENGINE, ENGINES, Engine, get_engine
from fpgasim.engine.cycle import CycleEngine
from fpgasim.engine.fast import FastEngine, _kernel
from fpgasim.errors import InputError
from fpgasim.fileio import check_input_path, check_output_path
from fpgasim.lists import split_items
from fpgasim.reproduce import (
    ExperimentResult,
    RunContext,
    csv_text,
    experiment_names,
    load_experiment,
    markdown,
    run_experiment,
    study_experiment_names,
    write_outputs,
)
from fpgasim.reproduce.beside import beside_columns
from fpgasim.reproduce.loader import AnyExperiment
from fpgasim.reproduce.output import figure_png, source_line
from fpgasim.reproduce.prefetch import simulator_passes
from fpgasim.reproduce.runner import check_inputs, needs_engine
from fpgasim.reproduce.workloads import AAT_CHOICES, aat_folder
from fpgasim.simulate import fits_memory
from fpgasim.step import service_for
from fpgasim.sweep.executors import InProcessExecutor, ProcessExecutor, default_workers

#: Rows shown in the terminal table (the files hold every row).
MAX_SHOWN_ROWS = 40
DEFAULT_OUT = Path("results")
#: The simulator shown beside the study's accounting by default (event's cycles, numba).
DEFAULT_SIM = BULK_ENGINE
#: The engine of the study's accounting (the main columns).
ACCOUNTING = "analytic"


def reproduce(
    names: list[str] = typer.Argument(
        ...,
        metavar="NAME|all|everything",
        help="Experiment(s): table1 table2 table3 table4 fig1 fig2 fig4 fig5 fig6 (any file of workloads/experiments, or a YAML path); all = the study's nine; everything = all shipped, with fpgasim's extensions (dovetail1, tree_design).",
    ),
    aat: str = typer.Option(
        "measured",
        "--aat",
        help=f"AAT source: measured (the study's measured tables, shipped in workloads/aat) or embedded (fpgasim's acceptance model, task-agnostic). One of {', '.join(AAT_CHOICES)}.",
    ),
    aat_dir: Path | None = aat_dir_option(
        "Another folder of measured AAT tables (the layout of workloads/aat; builtin names the shipped one); each experiment reads the files it names."
    ),
    engine: str = typer.Option(
        DEFAULT_SIM,
        "--engine",
        "-e",
        help=f"Simulator shown beside the study's accounting (analytic): fast (event's cycles, numba), event (the list-scheduler reference), or analytic (the accounting alone). In this build: {', '.join(ENGINES)}.",
    ),
    workers: int | None = workers_option(),
    out: Path | None = out_option(
        None,
        "Folder for NAME.csv, NAME.md and (figures) NAME.png. Default: results/ (with --format csv and no --out nothing is written: the CSV goes to stdout).",
    ),
    output_format: TableMdCsv = format_option(
        TableMdCsv.table,
        "What stdout shows: table (rich), md (Markdown) or csv (the CSV only, one experiment).",
    ),
) -> None:
    """Reproduce the study's tables and figures: print them and write CSV, Markdown and PNG.

    Every timed table shows the study's accounting (analytic) and the cycle-level simulator side by side: NAME and NAME_sim, their ratio, and a one-line sim_reason where the speedups differ by more than 10%. Every output says which AAT source and which engines produced its numbers. See docs/reproduction.md.

    Example: fpgasim reproduce table4 --engine analytic
    """
    check_input_path(aat_dir, "--aat-dir")
    experiments = _experiments(names)
    csv_stdout = output_format is TableMdCsv.csv and out is None
    if csv_stdout and len(experiments) > 1:
        raise InputError(
            "--format",
            "csv",
            f"one experiment per CSV on stdout ({len(experiments)} asked); pass --out DIR "
            "to write each NAME.csv",
        )
    out_dir = None if csv_stdout else (out or DEFAULT_OUT)
    if out_dir is not None:
        check_output_path(out_dir, "--out", folder=True)
    if engine not in ENGINES:
        raise InputError("--engine", engine, f"one of {', '.join(sorted(ENGINES))}")
    ctx = RunContext(None, aat_folder(aat, aat_dir))
    for exp in experiments:
        check_inputs(exp, ctx)
    if any(needs_engine(e) for e in experiments):
        ctx.engine = get_engine(ACCOUNTING)
        ctx.sim = None if engine == ACCOUNTING else simulator(engine)
    progress = not csv_stdout and err_console.is_terminal
    results = _run(experiments, ctx, out_dir, progress=progress, workers=workers)
    if csv_stdout:
        print(csv_text(results[0][0]), end="")
        return
    for result, _ in results:
        if output_format is TableMdCsv.md:
            print(markdown(result), end="\n")
        elif output_format is TableMdCsv.table:
            _print_table(result, out_dir)
        elif len(results) == 1:
            print(csv_text(result), end="")
    for result, paths in results:
        report_written(f"{result.name}: wrote {', '.join(str(p) for p in paths)}", err_console)


def _experiments(names: list[str]) -> list[AnyExperiment]:
    """The experiments asked for, in order, loaded (and validated) before any work."""
    wanted: list[str] = []
    for item in names:
        for name in split_items(item, "NAME", "table1,fig4"):
            if name == "all":
                wanted.extend(study_experiment_names())
            elif name == "everything":
                wanted.extend(experiment_names())
            else:
                wanted.append(name)
    if not wanted:
        raise InputError("NAME", " ".join(names), "an experiment name, all or everything")
    shipped = experiment_names()
    out = []
    given: dict[str, str] = {}  # experiment name -> the argument that named it
    for name in dict.fromkeys(wanted):
        if name not in shipped and not name.endswith((".yaml", ".yml")) and "/" not in name:
            raise InputError("NAME", name, f"one of all, everything, {', '.join(shipped)} (or a YAML path)")
        exp = load_experiment(name)
        first = given.setdefault(exp.name, name)
        if first != name:  # both would write NAME.csv, NAME.md (NAME.png) in one folder
            raise InputError("NAME", name, f"experiments with distinct names: {first} and "
                             f"{name} are both named {exp.name!r} (both would write "
                             f"{exp.name}.csv)")
        out.append(exp)
    return out


def _run(
    experiments: list[AnyExperiment],
    ctx: RunContext,
    out_dir: Path | None,
    progress: bool,
    workers: int | None = None,
) -> list[tuple[ExperimentResult, list[Path]]]:
    """Run the experiments on a pool of `workers` processes (default: every core; a progress
    bar on stderr): the simulator's passes of the whole run first, each computed once
    (`prefetch`), then the experiments (each figure drawn on a worker meanwhile), then
    the files. The files are written only when every experiment succeeded (the CLI's
    output transaction, fpgasim.fileio), so a failing experiment leaves no files.
    """
    bar = (
        Progress(
            TextColumn("[bold]reproduce[/] {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
        )
        if progress
        else nullcontext()
    )
    n = workers or default_workers()
    prefetch = ctx.sim is not None and isinstance(ctx.sim, CycleEngine)
    if prefetch:
        _warm(ctx.sim)  # compile (or load) numba once, before the workers fork
    global _JOB
    _JOB = (experiments, ctx, out_dir is not None)
    forked = n > 1 and sys.platform.startswith("linux")
    # largest first: they start first on the workers
    order = sorted(range(len(experiments)), key=lambda i: -_size(experiments[i]))
    try:
        with bar:
            if prefetch:
                with ProcessExecutor(n) if forked else InProcessExecutor() as pool:
                    # plan on the workers (each dry-runs some experiments), then compute
                    planned = sorted(pool.map_unordered(_plan_one, order))
                    keys = list(dict.fromkeys(k for _, ks in planned for k in ks))
                    total = len(keys)
                    passes = (
                        bar.add_task(f"{ctx.sim.name} passes", total=total) if progress else None
                    )

                    def advance(count: int, _total: int) -> None:
                        """The prefetch's progress: `count` passes timed so far."""
                        if progress:
                            bar.update(passes, completed=count)

                    service_for(ctx.sim).prefetch(keys, pool, progress=advance)
            # the experiments (and their figures) run on workers forked now: they inherit
            # the run's caches, the simulator's passes included
            task = bar.add_task("experiments", total=len(experiments)) if progress else None
            with ProcessExecutor(n) if forked else InProcessExecutor() as pool:
                futures = {pool.submit(_run_one, i): i for i in order}
                done: dict[int, tuple[ExperimentResult, bytes | None]] = {}
                for future in as_completed(futures):
                    done[futures[future]] = future.result()
                    if progress:
                        bar.advance(task)
    finally:
        _JOB = None
    results = []
    for i in range(len(experiments)):
        result, png = done[i]
        paths = write_outputs(result, out_dir, png) if out_dir is not None else []
        results.append((result, paths))
    return results


#: (experiments, run context, draw figures) of the run in progress, read by `_run_one` in
#: forked workers (inherited, not pickled: the caches can be large).
_JOB: tuple[list[AnyExperiment], RunContext, bool] | None = None


def _run_one(index: int) -> tuple[ExperimentResult, bytes | None]:
    """One experiment of `_JOB` and, if drawn, its figure as PNG bytes."""
    assert _JOB is not None
    experiments, ctx, draw = _JOB
    exp = experiments[index]
    result = flag_memory(exp, run_experiment(exp, ctx=ctx))
    return result, (figure_png(result) if draw and result.figure else None)


def _plan_one(index: int) -> list[tuple]:
    """The simulator's passes one experiment of `_JOB` will ask for (`simulator_passes`)."""
    assert _JOB is not None
    experiments, ctx, _ = _JOB
    return simulator_passes([experiments[index]], ctx)


def _size(exp: AnyExperiment) -> int:
    """A rough cost of an experiment: solved (board, model, context, method) combinations."""
    workloads = getattr(exp, "workloads", None) or []
    methods = len(getattr(exp, "tree_methods", None) or [None])
    return methods * sum(len(w.boards) * len(w.models) * len(w.contexts) for w in workloads)


def simulator(name: str) -> Engine:
    """The simulator by name; cycle-level engines extrapolate from a proven steady state of
    a few layers (`CycleEngine.pass_cycles`: exact, the same cycles as simulating all)."""
    cls = ENGINES[name]
    return get_engine(name, window=True) if issubclass(cls, CycleEngine) else get_engine(name)


def _warm(sim: Engine) -> None:
    """Load the fast engine's numba kernel (compiled once, cached on disk) in this process."""
    if isinstance(sim, FastEngine):
        _kernel()


def flag_memory(exp: AnyExperiment, result: ExperimentResult) -> ExperimentResult:
    """Add a note naming the experiment's (board, model, contexts) whose target and drafter
    weights + KV caches exceed the board's memory; the study simulates them anyway and so does reproduce."""
    unfit = []
    for workload in getattr(exp, "workloads", None) or []:
        for board_name in workload.boards:
            board = load_board(board_name)
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
    if not unfit:
        return result
    note = (
        "does not fit the board's memory (target and drafter weights + KV caches, "
        "fits_memory = False), "
        f"simulated anyway as in the study: {'; '.join(unfit)}"
    )
    return dataclasses.replace(result, notes=(*result.notes, note))


def _print_table(result: ExperimentResult, out_dir: Path | None) -> None:
    """The rich table, titled with the experiment and its AAT source and engine; notes."""
    out = wide_console()
    title = f"{result.name}: {result.title}\n{source_line(result)}"
    table = shown_columns(result)
    if result.available:
        shown = table.head(MAX_SHOWN_ROWS)
        rows = [{c: json_value(v) for c, v in r.items()} for r in shown.to_dict("records")]
        out.print(rich_table(rows, title=title, columns=list(table.columns)))
        if len(table) > MAX_SHOWN_ROWS:
            where = f" (every row in {out_dir / (result.name + '.csv')})" if out_dir else ""
            out.print(f"  … {len(table) - MAX_SHOWN_ROWS} more rows{where}", highlight=False)
    else:
        out.print(title, highlight=False)
    for note in result.notes:
        out.print(f"  - {note}", highlight=False)
    out.print()


def shown_columns(result: ExperimentResult) -> pd.DataFrame:
    """What the terminal shows: every column; side by side, the contract columns and the
    simulator's twins of x and speedups, the ratios and reasons (the files hold all)."""
    if not result.sim_engine:
        return result.table
    twins = [
        c
        for c in beside_columns(result.kind)
        if c.endswith(("decision_sim", "verify_len_sim", "speedup_sim", "_ratio", "sim_reason"))
    ]
    return result.table[[*result.columns, *twins]]
