"""`fpgasim reproduce`: the study's tables and figures from workloads/experiments/*.yaml,
the study's accounting and the simulator side by side."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import pandas as pd
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from fpgasim.cli.common import (
    dumps_json,
    err_console,
    json_records,
    json_value,
    report_written,
    rich_table,
    wide_console,
)
from fpgasim.cli.options import (
    TableMdCsv,
    aat_dir_option,
    format_option,
    out_option,
    workers_option,
)
from fpgasim.config.loader import did_you_mean
from fpgasim.engine import BULK_ENGINE, ENGINES
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
    write_outputs,
)
from fpgasim.reproduce.beside import beside_columns
from fpgasim.reproduce.experiment_loader import (
    AnyExperiment,
    all_experiment_names,
    doc_experiment_names,
)
from fpgasim.reproduce.experiment_runner import check_inputs, needs_engine
from fpgasim.reproduce.output import source_line
from fpgasim.reproduce.pool import run_experiments, simulator
from fpgasim.reproduce.workloads import AAT_CHOICES, aat_folder
from fpgasim.solving.cross_check import ACCOUNTING

#: Rows shown in the terminal table (the files hold every row).
MAX_SHOWN_ROWS = 40
DEFAULT_OUT = Path("results")
#: The simulator shown beside the study's accounting by default (event's cycles, numba).
DEFAULT_SIM = BULK_ENGINE


#: The flags of `reproduce` declared once (its signature lists them one a line).
REPRODUCE_NAMES_FLAG = typer.Argument(
    ...,
    metavar="NAME|all|everything",
    help="Experiment(s): table1 table2 table3 table4 fig1 fig2 fig4 fig5 fig6 (any file of workloads/experiments, or a YAML path); all = the study's nine; everything = all shipped, with fpgasim's extensions (dovetail1, tree_design).",
)
REPRODUCE_AAT_FLAG = typer.Option(
    "measured",
    "--aat",
    help=f"AAT source: measured (the study's measured tables, shipped in workloads/aat) or embedded (fpgasim's acceptance model, task-agnostic). One of {', '.join(AAT_CHOICES)}.",
)
REPRODUCE_AAT_DIR_FLAG = aat_dir_option(
    "Another folder of measured AAT tables (the layout of workloads/aat; builtin names the shipped one); each experiment reads the files it names."
)
REPRODUCE_ENGINE_FLAG = typer.Option(
    DEFAULT_SIM,
    "--engine",
    "-e",
    help=f"Simulator shown beside the study's accounting (analytic): fast (event's cycles, numba), event (the list-scheduler reference), or analytic (the accounting alone). In this build: {', '.join(ENGINES)}.",
)
REPRODUCE_OUT_FLAG = out_option(
    None,
    "Folder for NAME.csv, NAME.md and (figures) NAME.png. Default: results/ (with --format csv and no --out nothing is written: the CSV goes to stdout).",
)
REPRODUCE_OUTPUT_FORMAT_FLAG = format_option(
    TableMdCsv.table,
    "What stdout shows: table (rich), json (each experiment's name, title, rows and "
    "notes), csv (the CSV only, one experiment) or md (Markdown).",
)


def reproduce(
    names: list[str] = REPRODUCE_NAMES_FLAG,
    aat: str = REPRODUCE_AAT_FLAG,
    aat_dir: Path | None = REPRODUCE_AAT_DIR_FLAG,
    engine: str = REPRODUCE_ENGINE_FLAG,
    workers: int | None = workers_option(),
    out: Path | None = REPRODUCE_OUT_FLAG,
    output_format: TableMdCsv = REPRODUCE_OUTPUT_FORMAT_FLAG,
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
        ctx.engine = simulator(ACCOUNTING)
        ctx.sim = None if engine == ACCOUNTING else simulator(engine)
    progress = not csv_stdout and err_console.is_terminal
    results = _run(experiments, ctx, out_dir, progress=progress, workers=workers)
    if csv_stdout:
        print(csv_text(results[0][0]), end="")
        return
    _show(results, output_format, out_dir)


def _show(results: list, output_format: TableMdCsv, out_dir: Path | None) -> None:
    """Every experiment as JSON, Markdown, a table or (one experiment) CSV, then the files
    each wrote."""
    if output_format is TableMdCsv.json:
        print(dumps_json([{"name": r.name, "title": r.title, "available": r.available,
                           "aat_source": r.aat_source, "engine": r.engine, "rows": json_records(r.table), "notes": list(r.notes)}
                          for r, _ in results]))
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
                wanted.extend(all_experiment_names())
            elif name == "docs":
                wanted.extend(doc_experiment_names())
            elif name == "everything":
                wanted.extend(experiment_names())
            else:
                wanted.append(name)
    if not wanted:
        raise InputError("NAME", " ".join(names), "an experiment name, all, docs or everything")
    shipped = experiment_names()
    out = []
    given: dict[str, str] = {}  # experiment name -> the argument that named it
    by_case = {n.casefold(): n for n in shipped}
    wanted = [by_case.get(n.casefold(), n) for n in wanted]  # names are case-insensitive
    for name in dict.fromkeys(wanted):
        if name not in shipped and not name.endswith((".yaml", ".yml")) and "/" not in name:
            meant = did_you_mean(name, shipped)
            hint = f"did you mean {' or '.join(meant)}? " if meant else ""
            raise InputError("NAME", name, f"{hint}one of all, docs, everything, "
                             f"{', '.join(shipped)} (or a YAML path)")
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
    """Run the experiments (`reproduce.pool.run_experiments`: every core by default, a
    progress bar on stderr), then write the files. The files are written only when every
    experiment succeeded (the CLI's output transaction, fpgasim.fileio), so a failing
    experiment leaves no files.
    """
    bar = _Bar(ctx.sim.name if ctx.sim is not None else "") if progress else None
    with bar.progress if bar is not None else nullcontext():
        done = run_experiments(experiments, ctx, draw=out_dir is not None, workers=workers,
                               progress=bar)
    results = []
    for result, png in done:
        paths = write_outputs(result, out_dir, png) if out_dir is not None else []
        results.append((result, paths))
    return results


class _Bar:
    """A rich progress bar on stderr fed by the run (`reproduce.pool.RunProgress`)."""

    def __init__(self, sim_name: str) -> None:
        self._sim = sim_name
        self.progress = Progress(
            TextColumn("[bold]reproduce[/] {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
        )
        self._passes = self._experiments = None

    def passes(self, total: int) -> None:
        """A bar for the simulator's passes."""
        self._passes = self.progress.add_task(f"{self._sim} passes", total=total)

    def passes_done(self, count: int) -> None:
        """`count` passes timed."""
        self.progress.update(self._passes, completed=count)

    def experiments(self, total: int) -> None:
        """A bar for the experiments."""
        self._experiments = self.progress.add_task("experiments", total=total)

    def experiment_done(self) -> None:
        """One more experiment."""
        self.progress.advance(self._experiments)


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
