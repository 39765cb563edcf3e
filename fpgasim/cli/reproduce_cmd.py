"""`fpgasim reproduce`: the study's tables and figures from workloads/experiments/*.yaml."""

from __future__ import annotations

import dataclasses
from contextlib import nullcontext
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from fpgasim.cli.common import err_console, json_value, rich_table, wide_console
from fpgasim.cli.options import TableMdCsv, aat_dir_option, engine_option, format_option, out_option
from fpgasim.config import load_board, load_model
from fpgasim.engine import ENGINES, get_engine
from fpgasim.errors import InputError
from fpgasim.fileio import check_input_path, check_output_path
from fpgasim.lists import split_items
from fpgasim.reproduce import (
    ExperimentResult,
    RunContext,
    check_aat_dir,
    csv_text,
    experiment_names,
    load_experiment,
    markdown,
    run_experiment,
    write_outputs,
)
from fpgasim.reproduce.loader import AnyExperiment, ExternalExperiment
from fpgasim.reproduce.output import source_line
from fpgasim.reproduce.runner import check_inputs, external_available, needs_engine
from fpgasim.simulate import fits_memory

#: Rows shown in the terminal table (the files hold every row).
MAX_SHOWN_ROWS = 40
DEFAULT_OUT = Path("results")


def reproduce(
    names: list[str] = typer.Argument(
        ...,
        metavar="NAME|all",
        help="Experiment(s): table1 table2 table3 table4 fig1 fig2 fig4 fig5 fig6 (any file of workloads/experiments, or a YAML path), or all.",
    ),
    aat_dir: Path | None = aat_dir_option(
        "Folder of measured AAT tables (e.g. ../shared/reference/aat); each experiment reads the files it names. Without it: the embedded acceptance models."
    ),
    engine: str = engine_option(
        f"Engine timing T_v and T_d: analytic (the study's accounting), event (the simulator), fast (event's cycles, numba). In this build: {', '.join(ENGINES)}."
    ),
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

    Every output says which AAT source (measured tables or the embedded model) and which engine produced its numbers. See docs/reproduction.md.

    Example: fpgasim reproduce table4 --aat-dir ../shared/reference/aat --engine analytic
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
    ctx = RunContext(None, check_aat_dir(aat_dir))
    for exp in experiments:
        check_inputs(exp, ctx)
    if any(needs_engine(e) for e in experiments):
        ctx.engine = get_engine(engine)
    progress = not csv_stdout and err_console.is_terminal
    results = _run(experiments, ctx, out_dir, progress=progress)
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
        shown = ", ".join(str(p) for p in paths)
        err_console.print(f"{result.name}: wrote {shown}", highlight=False, soft_wrap=True)


def _experiments(names: list[str]) -> list[AnyExperiment]:
    """The experiments asked for, in order, loaded (and validated) before any work."""
    wanted: list[str] = []
    for item in names:
        for name in split_items(item, "NAME", "table1,fig4"):
            if name == "all":
                wanted.extend(experiment_names())
            else:
                wanted.append(name)
    if not wanted:
        raise InputError("NAME", " ".join(names), "an experiment name or all")
    shipped = experiment_names()
    out = []
    for name in dict.fromkeys(wanted):
        if name not in shipped and not name.endswith((".yaml", ".yml")) and "/" not in name:
            raise InputError("NAME", name, f"one of all, {', '.join(shipped)} (or a YAML path)")
        exp = load_experiment(name)
        if isinstance(exp, ExternalExperiment) and not external_available(exp.kind):
            if len(wanted) == 1:
                raise InputError("NAME", name, f"the {exp.kind} package is not in this build")
            continue  # `all`: an experiment whose package is not installed yet
        out.append(exp)
    return out


def _run(
    experiments: list[AnyExperiment], ctx: RunContext, out_dir: Path | None, progress: bool
) -> list[tuple[ExperimentResult, list[Path]]]:
    """Run each experiment (a progress bar on stderr), staging its files as it finishes.

    The files are written only when every experiment succeeded (the CLI's output
    transaction, fpgasim.fileio), so a failing experiment leaves no files of the others.
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
    results = []
    with bar:
        task = bar.add_task("", total=len(experiments)) if progress else None
        for exp in experiments:
            if progress:
                bar.update(task, description=exp.name)
            result = flag_memory(exp, run_experiment(exp, ctx=ctx))
            paths = write_outputs(result, out_dir) if out_dir is not None else []
            results.append((result, paths))
            if progress:
                bar.advance(task)
    return results


def flag_memory(exp: AnyExperiment, result: ExperimentResult) -> ExperimentResult:
    """Add a note naming the experiment's (board, model, contexts) whose weights + KV cache
    exceed the board's memory; the study simulates them anyway and so does reproduce."""
    unfit = []
    for workload in getattr(exp, "workloads", None) or []:
        for board_name in workload.boards:
            board = load_board(board_name)
            for model_name in workload.models:
                model = load_model(model_name)
                over = [c for c in workload.contexts if not fits_memory(board, model, c, 1)]
                if over:
                    unfit.append(
                        f"{model.id} on {board.name} ({board.memory.capacity_gib:g} GiB) at "
                        f"L = {', '.join(map(str, over))}"
                    )
    if not unfit:
        return result
    note = (
        "does not fit the board's memory (weights + KV cache, fits_memory = False), "
        f"simulated anyway as in the study: {'; '.join(unfit)}"
    )
    return dataclasses.replace(result, notes=(*result.notes, note))


def _print_table(result: ExperimentResult, out_dir: Path | None) -> None:
    """The rich table, titled with the experiment and its AAT source and engine; notes."""
    out = wide_console()
    title = f"{result.name}: {result.title}\n{source_line(result)}"
    table = result.table
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
