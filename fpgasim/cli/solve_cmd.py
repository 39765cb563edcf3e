"""`fpgasim solve`: best x per context, Ori/Naive sets, regime, AAT fit, schedule."""

from __future__ import annotations

import math
from enum import StrEnum
from pathlib import Path

import typer

from fpgasim.cli.options import (
    TableJsonCsv,
    aat_dir_option,
    algorithm_option,
    board_from,
    board_option,
    check_png,
    cluster_options,
    contexts_option,
    design_option,
    engine_option,
    format_option,
    fpga_option,
    model_option,
    parse_contexts,
    parse_int_list,
    parse_name_list,
    plot_option,
)
from fpgasim.cli.solve_output import show_batches, show_solution
from fpgasim.config import load_algorithm, load_model
from fpgasim.config.workload import Workload
from fpgasim.dataflow.lowerings.registry import check_drafter
from fpgasim.dataflow.routing import with_routing
from fpgasim.engine import BULK_ENGINE
from fpgasim.errors import InputError
from fpgasim.fileio import check_input_path, check_output_path
from fpgasim.simulate import MAX_BATCH
from fpgasim.solving.cross_check import solve_batches_checked, solve_checked
from fpgasim.solving.solver import (
    NAIVE_THRESHOLD,
    SolveOptions,
)


class AatSource(StrEnum):
    measured = "measured"
    fitted = "fitted"
    embedded = "embedded"


class SolveObjective(StrEnum):
    throughput = "throughput"
    energy = "energy"


class Mean(StrEnum):
    geometric = "geometric"
    arithmetic = "arithmetic"


#: The flags of `solve` declared once (its signature lists them one a line).
SOLVE_ALGORITHM_FLAG = algorithm_option(
    ..., "SD algorithm (longspec, eagle3, falcon, falcon-k3, falcon-k4) or YAML path."
)
SOLVE_CONTEXTS_FLAG = contexts_option(
    "Context lengths L, e.g. 128,512,2048 (each solved separately)."
)
SOLVE_TASK_FLAG = typer.Option(
    None,
    "--task",
    "-t",
    help="Task(s) of the AAT tables (repeat or comma-separate). Default: every task measured at all the contexts. Two or more tasks also give the unified x.",
)
SOLVE_AAT_DIR_FLAG = aat_dir_option(
    "Folder (or file) of measured AAT tables, CSV/Parquet. Default: builtin, the tables shipped with fpgasim. Where they hold the algorithm and model, their curves are used (interpolated between measured contexts, extrapolated beyond, as each line says); elsewhere the embedded acceptance model."
)
SOLVE_AAT_SOURCE_FLAG = typer.Option(
    None,
    "--aat-source",
    help="AAT at each x: measured (the measured x only; the default where tables hold the algorithm and model), fitted (A+B·ln(x−C) fitted on --fit-points, at every x up to the largest tree), embedded (the modelled acceptance, even where tables exist; the default elsewhere).",
)
SOLVE_FIT_POINTS_FLAG = typer.Option(
    None,
    "--fit-points",
    help="Measured x values the AAT model A+B·ln(x−C) is fitted on, e.g. 2,5,13,33 (>= 3). Default: every x of the curve. R² is reported on these and on all measured points.",
)
SOLVE_ENGINE_FLAG = engine_option(
    "Engine: fast (the simulator, event's cycles in numba; default: solve times tens of "
    "passes), event (the reference simulator, the same cycles, slower) or analytic (the "
    "study's accounting).", BULK_ENGINE)
SOLVE_EVERY_X_FLAG = typer.Option(
    False, "--every-x",
    help="Time every x of the curves, not only those that can be best: adds the primary "
    "roofline's ridge x_R, P_max/P(1) and the ideal speedups (slower: tens of seconds on "
    "some boards; --plot implies it). The decisions, best sets and regime are the same "
    "either way.")
SOLVE_NAIVE_THRESHOLD_FLAG = typer.Option(
    NAIVE_THRESHOLD,
    "--naive-threshold",
    help="Naive set rule: the smallest x (among those with an AAT) where the fitted slope dAAT/dx = B/(x−C) drops below this many tokens per extra verified token; if it never does, the largest x.",
)
SOLVE_CURVE_METHOD_FLAG = typer.Option(
    None,
    "--curve-method",
    help="Tree-construction method of the searched curve in the tables (prior_score, width, depth, eagle3_dynamic, chain). Default: at each context the first measured there of prior_score, eagle3_dynamic, width, depth, chain. throughput = per x the tree of highest tokens/s on this board, under the embedded model (docs/trees.md).",
)
SOLVE_MEAN_FLAG = typer.Option(
    Mean.geometric,
    "--mean",
    help="Across tasks: mean of the tasks' AAT curves that picks the unified x.",
)
SOLVE_OBJECTIVE_FLAG = typer.Option(
    SolveObjective.throughput,
    "--objective",
    help="What the best x and tree maximise: throughput (tokens/s, P_eff) or energy (tokens/J, docs/energy.md). Both optima and tokens/J of AD and SD are reported either way.",
)
SOLVE_OUTPUT_FORMAT_FLAG = format_option(
    TableJsonCsv.table, "Output: table, json or csv (the per-context summary)."
)
SOLVE_PLOT_FLAG = plot_option(
    "Write the combined-model figure (P, P_disc, P_eff, AAT/AR) to this PNG."
)
SOLVE_SCHEDULE_OUT_FLAG = typer.Option(
    None,
    "--schedule-out",
    help="Write the dynamic schedule (context ranges -> x, tree) to this YAML file.",
)
SOLVE_BATCH_FLAG = typer.Option(
    "1",
    "--batch",
    help="Requests decoded together per step, or a list (e.g. 1,2,4,8,16,32): per batch "
    "the decision, best x, the batch's tokens/s and each request's TPOT, and per context "
    "the largest batch at which SD still pays (docs/batching.md).",
)
SOLVE_ROUTING_FLAG = typer.Option(
    None, "--routing",
    help="A mixture-of-experts target's routing (docs/moe-sd.md): skew=S, rho=R, "
    "trace=FILE; default uniform, rho 0 (as `fpgasim simulate --routing`).")


@cluster_options
def solve(
    board: str | None = board_option(),
    fpga: str | None = fpga_option(),
    design: str | None = design_option(),
    model: str = model_option("llama-3.1-8b"),
    algorithm: str = SOLVE_ALGORITHM_FLAG,
    contexts: str = SOLVE_CONTEXTS_FLAG,
    task: list[str] | None = SOLVE_TASK_FLAG,
    aat_dir: Path | None = SOLVE_AAT_DIR_FLAG,
    aat_source: AatSource | None = SOLVE_AAT_SOURCE_FLAG,
    fit_points: str | None = SOLVE_FIT_POINTS_FLAG,
    engine: str = SOLVE_ENGINE_FLAG,
    every_x: bool = SOLVE_EVERY_X_FLAG,
    naive_threshold: float = SOLVE_NAIVE_THRESHOLD_FLAG,
    curve_method: str | None = SOLVE_CURVE_METHOD_FLAG,
    mean: Mean = SOLVE_MEAN_FLAG,
    objective: SolveObjective = SOLVE_OBJECTIVE_FLAG,
    output_format: TableJsonCsv = SOLVE_OUTPUT_FORMAT_FLAG,
    plot: Path | None = SOLVE_PLOT_FLAG,
    schedule_out: Path | None = SOLVE_SCHEDULE_OUT_FLAG,
    batch: str = SOLVE_BATCH_FLAG,
    routing: str | None = SOLVE_ROUTING_FLAG,
) -> None:
    """Solve when SD beats AD on a board, and at which verification length x.

    For every context: AD tokens/s, the best x (argmax of P_eff = AAT/(T_v+T_d)), the Ori
    set (the algorithm's GPU default tree), the Naive set (slope rule, see
    --naive-threshold), the regime (compute-bound / memory-bound / mixed) with the ridge
    x_R, and the AAT fit A+B·ln(x−C) with its R².

    The AAT comes from the measured tables shipped with fpgasim wherever they hold the
    algorithm and model (one line per context says which curve, interpolated or
    extrapolated), else from the embedded acceptance model (docs/analysis.md).

    Example: fpgasim solve --board v80 --model llama-3.1-8b --algorithm longspec
    --task gov_report --contexts 128,512,2048
    """
    tasks = _checked_inputs(plot, aat_dir, schedule_out, naive_threshold, task)
    b, m, a = (board_from(board, fpga, design), with_routing(load_model(model), routing),
               load_algorithm(algorithm))
    check_drafter(b, a)
    options = SolveOptions(
        tasks=tasks, aat_dir=aat_dir, aat_source=aat_source.value if aat_source else None,
        fit_points=(tuple(parse_int_list(fit_points, "--fit-points", 1, 4096))
                    if fit_points else None),
        naive_threshold=naive_threshold, curve_method=curve_method, mean=mean.value,
        objective=objective.value, every_x=every_x or plot is not None)
    workload = Workload((b,), m, (a,), tuple(parse_contexts(contexts)),
                        tuple(parse_int_list(batch, "--batch", 1, MAX_BATCH)))
    if len(workload.batches) > 1:
        if schedule_out is not None:
            raise InputError("--schedule-out", str(schedule_out),
                             "one --batch (a schedule is for one batch size)")
        show_batches(solve_batches_checked(workload, options, engine=engine), output_format,
                     plot)
    else:
        show_solution(solve_checked(workload, options, engine=engine), output_format, plot,
                      schedule_out)


def _checked_inputs(plot: Path | None, aat_dir: Path | None, schedule_out: Path | None,
                    naive_threshold: float, task: list[str] | None) -> tuple[str, ...] | None:
    """The checks that come before any file is read (the output paths, the AAT folder, the
    Naive threshold) and the --task list they leave (None: every task)."""
    check_png(plot)
    check_input_path(aat_dir, "--aat-dir")
    if schedule_out is not None:
        if schedule_out.suffix.lower() not in (".yaml", ".yml"):
            raise InputError("--schedule-out", str(schedule_out), "a file ending in .yaml")
        check_output_path(schedule_out, "--schedule-out")
    if not math.isfinite(naive_threshold) or naive_threshold <= 0:
        raise InputError("--naive-threshold", naive_threshold, "a positive number of tokens")
    tasks = [t for item in (task or []) for t in parse_name_list(item, "--task")]
    return tuple(tasks) or None
