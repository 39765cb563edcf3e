"""How `fpgasim solve` shows its answer: the tables, the lines under them, the JSON and CSV
forms, the figure and the schedule file (the command parses, builds the request and calls
the solver; everything it prints is here)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from fpgasim.cli.common import (
    TRAILING_ZERO,
    dumps_json,
    err_console,
    json_records,
    report_written,
    rich_table,
    wide_console,
)
from fpgasim.cli.options import TableJsonCsv
from fpgasim.cli.terminal import warn_after_output
from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm
from fpgasim.figures.plots import plot_batch_speedups, plot_solution
from fpgasim.fileio import atomic_write_bytes
from fpgasim.simulate import fit_warnings
from fpgasim.solving.cross_check import CheckedBatches, CheckedSolution
from fpgasim.solving.decision import rests_on
from fpgasim.solving.dynamic_schedule import schedule_yaml
from fpgasim.solving.roofline import ridge_tokens
from fpgasim.solving.solver import Solution, crossover_lines, marked_points
from fpgasim.studies.algorithm_comparison import drafted_levels
from fpgasim.validation import validation_line, validation_of


def show_solution(solved: CheckedSolution, output_format: TableJsonCsv, plot: Path | None,
                  schedule_out: Path | None) -> None:
    """One batch size: the figure and schedule files, then the summary as a table (with the
    lines under it), JSON or CSV, then the fit warnings."""
    w = solved.workload
    b, m, a = w.board, w.model, w.algorithm
    solution, differs = solved.solution, solved.disagreements
    if plot is not None:
        plot_solution(solution, plot, b.lowering)
    if schedule_out is not None:
        meta = _meta(solution)
        atomic_write_bytes(schedule_out, schedule_yaml(solution.schedule, meta).encode())
    summary = summary_out(solution.summary, b)
    if output_format is TableJsonCsv.json:
        print(dumps_json({"summary": json_records(summary),
                          "unified": json_records(solution.unified),
                          "schedule": json_records(solution.schedule),
                          "disagreements": differs}))
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


def show_batches(checked: CheckedBatches, output_format: TableJsonCsv,
                 plot: Path | None) -> None:
    """Several batch sizes: `_batch_output`, then the fit warnings of the decisions taken."""
    w = checked.workload
    b, m, a = w.board, w.model, w.algorithm
    _batch_output(checked, b, output_format, plot)
    _warn_fit(b, m, marked_points(checked.result.summary, a.drafter, decision_taken=True))


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
    _print_sets(solution.summary, board, show_fit)
    _print_regimes(solution.summary, board)
    _print_unified_and_schedule(solution)


def _print_sets(summ: pd.DataFrame, board: Board, show_fit: bool) -> None:
    """The best, Ori and Naive sets per context, then the decision and energy lines."""
    out = wide_console()
    first = summ.iloc[0]
    multi = summ["task"].nunique() > 1
    files = ", ".join(sorted({f for f in summ["aat_file"] if f}))
    head = (
        f"{first['board']} / {first['model']} / {first['algorithm']} / engine {first['engine']}"
        f", lowering {board.lowering} / AAT {first['aat_source']}"
        + (f" ({files})" if files else "")
    )
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


def _print_regimes(summ: pd.DataFrame, board: Board) -> None:
    """The regime, roofline ridge and AAT fit per context, its legend and the regime lines."""
    out = wide_console()
    multi = summ["task"].nunique() > 1
    ridge = ridge_tokens(board)
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


def _print_unified_and_schedule(solution: Solution) -> None:
    """Across tasks the unified x beside each task's best (when several), then the dynamic
    schedule."""
    out = wide_console()
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
