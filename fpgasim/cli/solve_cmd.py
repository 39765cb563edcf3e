"""`fpgasim solve`: best x per context, Ori/Naive sets, regime, AAT fit, schedule."""

from __future__ import annotations

import math
from enum import StrEnum
from pathlib import Path

import pandas as pd
import typer

from fpgasim.cli.common import (
    TRAILING_ZERO,
    dumps_json,
    err_console,
    json_records,
    report_written,
    rich_table,
    wide_console,
)
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
from fpgasim.cli.terminal import warn_after_output
from fpgasim.config import load_algorithm, load_model
from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm
from fpgasim.dataflow.lowerings.registry import check_drafter
from fpgasim.dataflow.routing import with_routing
from fpgasim.engine import BULK_ENGINE
from fpgasim.errors import InputError
from fpgasim.figures.plots import plot_batch_speedups, plot_solution
from fpgasim.fileio import atomic_write_bytes, check_input_path, check_output_path
from fpgasim.simulate import MAX_BATCH, fit_warnings
from fpgasim.solving.cross_check import CheckedBatches, solve_batches_checked, solve_checked
from fpgasim.solving.decision import rests_on
from fpgasim.solving.dynamic_schedule import schedule_yaml
from fpgasim.solving.roofline import ridge_tokens
from fpgasim.solving.solver import (
    NAIVE_THRESHOLD,
    Solution,
    SolveOptions,
    crossover_lines,
    marked_points,
)
from fpgasim.studies.algorithm_comparison import drafted_levels
from fpgasim.validation import validation_line, validation_of


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


@cluster_options
def solve(
    board: str | None = board_option(),
    fpga: str | None = fpga_option(),
    design: str | None = design_option(),
    model: str = model_option("llama-3.1-8b"),
    algorithm: str = algorithm_option(
        ..., "SD algorithm (longspec, eagle3, falcon, falcon-k3, falcon-k4) or YAML path."
    ),
    contexts: str = contexts_option(
        "Context lengths L, e.g. 128,512,2048 (each solved separately)."
    ),
    task: list[str] | None = typer.Option(
        None,
        "--task",
        "-t",
        help="Task(s) of the AAT tables (repeat or comma-separate). Default: every task measured at all the contexts. Two or more tasks also give the unified x.",
    ),
    aat_dir: Path | None = aat_dir_option(
        "Folder (or file) of measured AAT tables, CSV/Parquet. Default: builtin, the tables shipped with fpgasim. Where they hold the algorithm and model, their curves are used (interpolated between measured contexts, extrapolated beyond, as each line says); elsewhere the embedded acceptance model."
    ),
    aat_source: AatSource | None = typer.Option(
        None,
        "--aat-source",
        help="AAT at each x: measured (the measured x only; the default where tables hold the algorithm and model), fitted (A+B·ln(x−C) fitted on --fit-points, at every x up to the largest tree), embedded (the modelled acceptance, even where tables exist; the default elsewhere).",
    ),
    fit_points: str | None = typer.Option(
        None,
        "--fit-points",
        help="Measured x values the AAT model A+B·ln(x−C) is fitted on, e.g. 2,5,13,33 (>= 3). Default: every x of the curve. R² is reported on these and on all measured points.",
    ),
    engine: str = engine_option(
        "Engine: fast (the simulator, event's cycles in numba; default: solve times tens of "
        "passes), event (the reference simulator, the same cycles, slower) or analytic (the "
        "study's accounting).", BULK_ENGINE),
    every_x: bool = typer.Option(
        False, "--every-x",
        help="Time every x of the curves, not only those that can be best: adds the primary "
        "roofline's ridge x_R, P_max/P(1) and the ideal speedups (slower: tens of seconds on "
        "some boards; --plot implies it). The decisions, best sets and regime are the same "
        "either way."),
    naive_threshold: float = typer.Option(
        NAIVE_THRESHOLD,
        "--naive-threshold",
        help="Naive set rule: the smallest x (among those with an AAT) where the fitted slope dAAT/dx = B/(x−C) drops below this many tokens per extra verified token; if it never does, the largest x.",
    ),
    curve_method: str | None = typer.Option(
        None,
        "--curve-method",
        help="Tree-construction method of the searched curve in the tables (prior_score, width, depth, eagle3_dynamic, chain). Default: at each context the first measured there of prior_score, eagle3_dynamic, width, depth, chain. throughput = per x the tree of highest tokens/s on this board, under the embedded model (docs/trees.md).",
    ),
    mean: Mean = typer.Option(
        Mean.geometric,
        "--mean",
        help="Across tasks: mean of the tasks' AAT curves that picks the unified x.",
    ),
    objective: SolveObjective = typer.Option(
        SolveObjective.throughput,
        "--objective",
        help="What the best x and tree maximise: throughput (tokens/s, P_eff) or energy (tokens/J, docs/energy.md). Both optima and tokens/J of AD and SD are reported either way.",
    ),
    output_format: TableJsonCsv = format_option(
        TableJsonCsv.table, "Output: table, json or csv (the per-context summary)."
    ),
    plot: Path | None = plot_option(
        "Write the combined-model figure (P, P_disc, P_eff, AAT/AR) to this PNG."
    ),
    schedule_out: Path | None = typer.Option(
        None,
        "--schedule-out",
        help="Write the dynamic schedule (context ranges -> x, tree) to this YAML file.",
    ),
    batch: str = typer.Option(
        "1",
        "--batch",
        help="Requests decoded together per step, or a list (e.g. 1,2,4,8,16,32): per batch "
        "the decision, best x, the batch's tokens/s and each request's TPOT, and per context "
        "the largest batch at which SD still pays (docs/batching.md).",
    ),
    routing: str | None = typer.Option(
        None, "--routing",
        help="A mixture-of-experts target's routing (docs/moe-sd.md): skew=S, rho=R, "
        "trace=FILE; default uniform, rho 0 (as `fpgasim simulate --routing`)."),
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
    check_png(plot)
    check_input_path(aat_dir, "--aat-dir")
    if schedule_out is not None:
        if schedule_out.suffix.lower() not in (".yaml", ".yml"):
            raise InputError("--schedule-out", str(schedule_out), "a file ending in .yaml")
        check_output_path(schedule_out, "--schedule-out")
    if not math.isfinite(naive_threshold) or naive_threshold <= 0:
        raise InputError("--naive-threshold", naive_threshold, "a positive number of tokens")
    tasks = [t for item in (task or []) for t in parse_name_list(item, "--task")] or None
    b, m, a = (board_from(board, fpga, design), with_routing(load_model(model), routing),
               load_algorithm(algorithm))
    check_drafter(b, a)
    options = SolveOptions(
        tasks=tuple(tasks) if tasks else None,
        aat_dir=aat_dir,
        aat_source=aat_source.value if aat_source else None,
        fit_points=(tuple(parse_int_list(fit_points, "--fit-points", 1, 4096))
                    if fit_points else None),
        naive_threshold=naive_threshold,
        curve_method=curve_method,
        mean=mean.value,
        objective=objective.value,
        every_x=every_x or plot is not None,
    )
    ctxs = parse_contexts(contexts)
    batches = sorted(set(parse_int_list(batch, "--batch", 1, MAX_BATCH)))
    if len(batches) > 1:
        if schedule_out is not None:
            raise InputError("--schedule-out", str(schedule_out),
                             "one --batch (a schedule is for one batch size)")
        checked = solve_batches_checked(b, m, a, ctxs, batches, options, engine=engine)
        _batch_output(checked, b, output_format, plot)
        _warn_fit(b, m, marked_points(checked.result.summary, a.drafter, decision_taken=True))
        return
    solved = solve_checked(b, m, a, ctxs, options, engine=engine, batch=batches[0])
    solution, differs = solved.solution, solved.disagreements
    if plot is not None:
        plot_solution(solution, plot, b.lowering)
    if schedule_out is not None:
        meta = _meta(solution)
        atomic_write_bytes(schedule_out, schedule_yaml(solution.schedule, meta).encode())
    summary = summary_out(solution.summary, b)
    if output_format is TableJsonCsv.json:
        print(
            dumps_json(
                {
                    "summary": json_records(summary),
                    "unified": json_records(solution.unified),
                    "schedule": json_records(solution.schedule),
                    "disagreements": differs,
                }
            )
        )
    elif output_format is TableJsonCsv.csv:
        print(summary.to_csv(index=False), end="")
        for line in differs:  # stdout stays pure CSV
            err_console.print(line, highlight=False, soft_wrap=True)
    else:
        _print_tables(solution, b, show_fit=True)
        _print_validation(summary)
        _print_draft_lines(solution, a)
        _print_aat_lines(solution)
        for line in differs:
            wide_console().print(line, highlight=False)
    for path, what in ((plot, "figure"), (schedule_out, "schedule")):
        if path is not None and output_format is TableJsonCsv.table:
            report_written(f"wrote {what} to {path}")
    _warn_fit(b, m, marked_points(solution.summary, a.drafter))


def _warn_fit(board: Board, model, points) -> None:
    """The lines `simulate.fit_warnings` gives for the rows' points, as warnings (stderr):
    every row carries its marks (fits_memory, fits_dsps), these say what they mean."""
    warn_after_output(fit_warnings(board, model, points))


def _batch_output(checked: CheckedBatches, board: Board, output_format: TableJsonCsv,
                  plot: Path | None) -> None:
    """`solve --batch` with several batch sizes: per (task, context, batch) the plain
    solve's summary (the same columns, decision, best set, tree, tokens/J, regime, AAT
    basis) with what the batch delivers and the accounting's decision beside; per context
    the crossover (docs/batching.md)."""
    result, summary, differs = checked.result, checked.summary.copy(), checked.disagreements
    summary = summary_out(summary, board)
    if plot is not None:
        plot_batch_speedups(result.summary, plot)
    if output_format is TableJsonCsv.json:
        print(dumps_json({"summary": json_records(summary),
                          "crossover": json_records(result.crossover),
                          "unified": json_records(result.unified),
                          "disagreements": differs}))
        return
    if output_format is TableJsonCsv.csv:
        print(summary.to_csv(index=False), end="")
        for line in differs:
            err_console.print(line, highlight=False, soft_wrap=True)
        return
    out = wide_console()
    first = summary.iloc[0]
    multi = summary["task"].nunique() > 1
    rows = []
    for s in summary.to_dict("records"):
        row = {"task": s["task"]} if multi else {}
        row.update({"context": s["context"], "batch": s["batch"], "decision": s["decision"],
                    "speedup": s["best_speedup"], "best x": _x(s["best_verify_len"]),
                    "best tree": s["best_tree"],
                    "batch tok/s": s["batch_tokens_per_s"], "TPOT ms": s["tpot_s"] * 1e3,
                    "AD batch tok/s": s["ad_batch_tokens_per_s"],
                    "tok/J": s["tokens_per_j"], "AD tok/J": s["ad_tokens_per_j"],
                    "regime": s["regime"]})
        if "decision_accounting" in s:
            row["accounting"] = f"{s['decision_accounting']} ({s['speedup_accounting']:.3g}x)"
        row["fits_memory"] = bool(s["fits_memory"])
        row["fits_dsps"] = s["fits_dsps"]
        rows.append(row)
    files = ", ".join(sorted({f for f in summary["aat_file"] if f}))
    out.print(rich_table(rows, floatfmt="{:.3g}", title=(
        f"SD under batching ({first['objective']}): {first['board']} / {first['model']} / "
        f"{first['algorithm']} / engine {first['engine']}, lowering {board.lowering} / AAT "
        f"{'/'.join(sorted(set(summary['aat_basis'])))}" + (f" ({files})" if files else ""))))
    _print_validation(summary)
    for line in (*decision_lines(summary), *crossover_lines(result.crossover, result.summary)):
        out.print(line, highlight=False, soft_wrap=True)
    _print_aat_lines(Solution(summary.drop_duplicates(["task", "context"]), pd.DataFrame(),
                              pd.DataFrame()))
    for line in differs:
        out.print(line, highlight=False, soft_wrap=True)
    if plot is not None:
        report_written(f"wrote figure to {plot}")


def decision_lines(summary: pd.DataFrame) -> list[str]:
    """One line per (task, context[, batch]): the decision, the best set it is taken on and
    what it rests on (`decision.rests_on`: the acceptance, the fit, the validation)."""
    multi = summary["task"].nunique() > 1
    batched = summary["batch"].nunique() > 1
    lines = []
    for s in summary.to_dict("records"):
        label = f"{s['task']}, L={s['context']}" if multi else f"L={s['context']}"
        label += f", B={s['batch']}" if batched else ""
        lines.append(f"  {label}: {s['decision']} (best x = {_x(s['best_verify_len'])}, tree "
                     f"{s['best_tree']}: {s['best_speedup']:.3g}x AD); {rests_on(s)}")
    return lines


def summary_out(summary: pd.DataFrame, board: Board) -> pd.DataFrame:
    """The per-context summary as written: the decision first (before the best x), the
    lowering beside the engine (provenance) and the sheet's ridge beside the measured x_R."""
    out = summary.copy()
    out.insert(out.columns.get_loc("engine") + 1, "lowering", board.lowering)
    out.insert(out.columns.get_loc("x_ridge") + 1, "ridge_tokens", ridge_tokens(board))
    decision = out.pop("decision")
    out.insert(out.columns.get_loc("best_verify_len"), "decision", decision)
    return with_validation(out, board)


def with_validation(summary: pd.DataFrame, board: Board) -> pd.DataFrame:
    """The summary with each row's `validation` of its tokens/s and tokens/J (the board's
    silicon check on the row's engine; fpgasim/validation.py)."""
    out = summary.copy()
    out["validation"] = [validation_of(board, e).text for e in out["engine"]]
    return out


def _print_validation(summary: pd.DataFrame) -> None:
    """The validation of a table's absolute figures, once under it."""
    for line in validation_line(list(summary["validation"])):
        wide_console().print(f"  {line}", highlight=False, soft_wrap=True)


def _print_energy_lines(summary: pd.DataFrame, multi: bool) -> None:
    """One line per context: which of AD and the chosen SD uses less energy per token, and
    the energy-optimal x beside the time-optimal x (docs/energy.md)."""
    out = wide_console()
    for s in summary.to_dict("records"):
        label = f"{s['task']}, L={s['context']}" if multi else f"L={s['context']}"
        parted = ("the same x" if s["energy_best_verify_len"] == s["speed_best_verify_len"]
                  else "they part")
        out.print(
            f"  {label}: {s['energy_decision']} (best x {s['best_verify_len']}: "
            f"{s['best_tokens_per_j']:.3g} tok/J, AD {s['ad_tokens_per_j']:.3g} tok/J); "
            f"energy-optimal x = {s['energy_best_verify_len']} "
            f"({s['energy_best_tokens_per_j']:.3g} tok/J, {s['energy_best_tokens_per_s']:.3g} "
            f"tok/s), time-optimal x = {s['speed_best_verify_len']} "
            f"({s['speed_best_tokens_per_j']:.3g} tok/J, {s['speed_best_tokens_per_s']:.3g} "
            f"tok/s): {parted}",
            highlight=False, soft_wrap=True)


def _meta(solution: Solution) -> dict:
    s = solution.summary.iloc[0]
    tasks = sorted(set(solution.summary["task"]))
    return {
        "board": s["board"],
        "model": s["model"],
        "algorithm": s["algorithm"],
        "engine": s["engine"],
        "aat_source": s["aat_source"],
        "tasks": tasks,
        "x_from": "unified x (mean of the tasks' AAT curves)" if len(tasks) > 1 else "best x",
    }


def _x(v) -> int | str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else int(v)


def _print_draft_lines(solution: Solution, algorithm: Algorithm) -> None:
    """Per context: the draft phase at the best x (depth, passes, T_d vs T_v, alpha)."""
    out = wide_console()
    curves = solution.curves
    multi = solution.summary["task"].nunique() > 1
    k = algorithm.drafter.levels_per_pass
    for s in solution.summary.to_dict("records"):
        hit = curves[
            (curves["task"] == s["task"])
            & (curves["context"] == s["context"])
            & (curves["verify_len"] == s["best_verify_len"])
        ]
        if hit.empty:
            continue
        r = hit.iloc[0]
        tree = str(r["tree"])
        levels = drafted_levels(tree)
        ar = f" (an autoregressive drafter: {levels})" if k > 1 else ""
        eagle = (f": the first pass, then {tree.split()[0]} expansions"
                 if tree.startswith("depth=") else "")
        label = f"{s['task']}, L={s['context']}" if multi else f"L={s['context']}"
        out.print(
            f"  {label}: draft at best x = {int(r['verify_len'])}, tree {tree}: {levels} "
            f"levels in {_passes(int(r['draft_passes']))}{ar}{eagle}, T_d = "
            f"{r['draft_s'] * 1e3:.3g} ms, T_v = {r['verify_s'] * 1e3:.3g} ms, alpha = "
            f"{r['alpha']:.3f}",
            highlight=False,
        )


def _print_aat_lines(solution: Solution) -> None:
    """Per context: which acceptance the rule used (measured, interpolated, extrapolated or
    embedded, and from what: `aat_note`), then the tree notation where a tree ends in 0."""
    out = wide_console()
    summ = solution.summary
    multi = summ["task"].nunique() > 1
    for s in summ.to_dict("records"):
        label = f"{s['task']}, L={s['context']}" if multi else f"L={s['context']}"
        out.print(f"  {label}: AAT {s['aat_basis']}: {s['aat_note']}", highlight=False,
                  soft_wrap=True)
    trees = list(summ["best_tree"]) + list(solution.schedule.get("tree", []))
    if any(str(t).split()[-1:] == ["0"] for t in trees if t):
        out.print(f"  {TRAILING_ZERO}", highlight=False, soft_wrap=True)


def _passes(n: int) -> str:
    return f"{n} pass" if n == 1 else f"{n} passes"


#: Printed under the regime table, one line each: the symbols it uses (docs/glossary.md defines them all).
LEGEND = (
    "regime: from the engine's verify passes at the x reported (AD, best, Naive, Ori): "
    "memory-bound where each is load- or store-bound, compute-bound where each is "
    "compute-bound, else mixed; bound: the unit with the most work (as `fpgasim simulate` "
    "reports it)",
    "ridge_tokens: the board sheet's ridge, peak MAC/cycle over weights streamed per cycle "
    "(as in `fpgasim boards`)",
    "alpha: the draft cost relative to AD, weight bytes of all draft passes over those of "
    "one AD pass; a step's cost in AD steps is (T_v + T_d) / T_v(1), SD pays where the "
    "tokens it accepts exceed it",
)
#: The legend lines of the columns that need every x timed (--every-x).
EVERY_X_LEGEND = (
    "x_R: the x where this engine's measured roofline P(x) = x/T_v(x) turns flat; "
    "P_max/P(1): the roofline's ceiling over AD; every symbol: docs/glossary.md",
)
NOT_EVERY_X = ("x_R and P_max/P(1) (the primary roofline over every x): with --every-x; "
               "every symbol: docs/glossary.md")


def _print_tables(solution: Solution, board: Board, show_fit: bool = False) -> None:
    """The solution's tables; `show_fit` adds fits_memory beside tokens/s (FlightLLM boards)."""
    out = wide_console()
    summ = solution.summary
    first = summ.iloc[0]
    multi = summ["task"].nunique() > 1
    files = ", ".join(sorted({f for f in summ["aat_file"] if f}))
    head = (
        f"{first['board']} / {first['model']} / {first['algorithm']} / engine {first['engine']}"
        f", lowering {board.lowering} / AAT {first['aat_source']}"
        + (f" ({files})" if files else "")
    )
    ridge = ridge_tokens(board)
    rows = []
    for s in summ.to_dict("records"):
        row = {"task": s["task"]} if multi else {}
        row.update(
            {
                "context": s["context"],
                "decision": s["decision"],
                "speedup": s["best_speedup"],
                "best x": _x(s["best_verify_len"]),
                "best tok/s": s["best_tokens_per_s"],
                "AD tok/s": s["ad_tokens_per_s"],
                "ori x": _x(s["ori_verify_len"]),
                "ori tok/s": s["ori_tokens_per_s"],
                "ori speedup": s["ori_speedup"],
                "naive x": _x(s["naive_verify_len"]),
                "naive tok/s": s["naive_tokens_per_s"],
                "naive speedup": s["naive_speedup"],
                "AD tok/J": s["ad_tokens_per_j"],
                "best tok/J": s["best_tokens_per_j"],
            }
        )
        if show_fit:
            row["fits_memory"] = bool(s["fits_memory"])
            row["fits_dsps"] = s["fits_dsps"]
        rows.append(row)
    out.print(rich_table(rows, title=f"Best / Ori / Naive sets ({first['objective']}): {head}",
                         floatfmt="{:.3g}"))
    for line in decision_lines(summ):
        out.print(line, highlight=False, soft_wrap=True)
    _print_energy_lines(summ, multi)
    model_rows = []
    every = bool(summ["every_x"].all())
    for s in summ.to_dict("records"):
        row = {"task": s["task"]} if multi else {}
        row.update(
            {
                "context": s["context"],
                "decision": s["decision"],
                "regime": s["regime"],
                "AD bound": s["ad_bound"],
                "best bound": s["best_bound"],
                "T_v(best)/T_v(1)": s["best_verify_ratio"],
            }
        )
        if every:
            row.update({"x_R": _x(s["x_ridge"]) if _x(s["x_ridge"]) != "" else "none",
                        "P_max/P(1)": s["p_gain"]})
        row.update(
            {
                "ridge_tokens": ridge,
                "alpha(best)": s["alpha_best"],
                "best tree": s["best_tree"],
                "AAT A": s["aat_a"],
                "AAT B": s["aat_b"],
                "AAT C": s["aat_c"],
                "R² fit": s["aat_r2_fit"],
                "R² all": s["aat_r2_all"],
                "fit x": s["aat_fit_points"]
                if s["aat_n_fit_points"] <= 8
                else f"all {s['aat_n_fit_points']}",
            }
        )
        model_rows.append(row)
    out.print(rich_table(model_rows, title="Regime, roofline ridge and AAT fit", floatfmt="{:.3g}"))
    for line in (*LEGEND, *(EVERY_X_LEGEND if every else (NOT_EVERY_X,))):
        out.print(f"  {line}", highlight=False, soft_wrap=True)
    for s in summ.to_dict("records"):
        label = f"{s['task']}, L={s['context']}" if multi else f"L={s['context']}"
        out.print(f"  {label}: {s['regime']}: {s['regime_reason']}", highlight=False)
    if not solution.unified.empty:
        urows = [
            {
                "context": u["context"],
                "task": u["task"],
                "best x": u["best_verify_len"],
                "best speedup": u["best_speedup"],
                "unified x": u["unified_verify_len"],
                "unified speedup": u["unified_speedup"],
                "unified/best": u["unified_vs_best"],
            }
            for u in solution.unified.to_dict("records")
        ]
        mean = solution.unified["mean"].iloc[0]
        out.print(
            rich_table(
                urows,
                title=f"Across tasks: unified x from the {mean} mean AAT curve",
                floatfmt="{:.3g}",
            )
        )
    srows = [
        {
            "context from": r["context_from"],
            "context to (excl.)": "∞" if pd.isna(r["context_to"]) else int(r["context_to"]),
            "x": r["verify_len"],
            "tree": r["tree"],
            "decision": r["decision"],
            "solved at": r["solved_contexts"],
        }
        for r in solution.schedule.to_dict("records")
    ]
    out.print(rich_table(srows, title="Dynamic schedule (context range -> x, tree)"))
