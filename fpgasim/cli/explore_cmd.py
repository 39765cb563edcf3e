"""`fpgasim explore`: hypothetical boards (PE array x bandwidth) -> best x and speedup."""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd
import typer

from fpgasim.analysis.explore import explore, plot_explore, verdict
from fpgasim.cli.common import RichProgress, console, err_console, rich_table, wide_console
from fpgasim.cli.options import (
    aat_dir_option,
    algorithm_option,
    cache_dir_option,
    cache_limit_option,
    check_executor,
    check_png,
    contexts_option,
    engine_option,
    executor_option,
    model_option,
    no_cache_option,
    open_cache,
    out_option,
    parse_contexts,
    parse_float_list,
    plot_option,
    scheduler_option,
    workers_option,
)
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.schema import BANDWIDTH_GB_S
from fpgasim.dataflow.lowerings import check_drafter
from fpgasim.errors import InputError
from fpgasim.fileio import after_commit, check_input_path, check_out_path, write_frame
from fpgasim.sweep import EXECUTORS
from fpgasim.sweep.runner import engine_version
from fpgasim.sweep.space import parse_pe_arrays


def parse_bandwidths(text: str) -> list[float]:
    """'77,460,819' -> [77.0, 460.0, 819.0] (GB/s, within the board schema's range)."""
    return parse_float_list(text, "--bandwidths", *BANDWIDTH_GB_S, "GB/s")


def explore_out(summary: pd.DataFrame, lowering: str) -> pd.DataFrame:
    """The summary as written: the decision before the best x, the lowering beside the
    engine (provenance)."""
    out = summary.copy()
    out.insert(out.columns.get_loc("engine") + 1, "lowering", lowering)
    decision = out.pop("decision")
    out.insert(out.columns.get_loc("best_verify_len"), "decision", decision)
    return out


def explore_cmd(
    base_board: str = typer.Option(
        ..., "--base-board", help="Board whose PE array and bandwidth are varied (name or YAML)."
    ),
    pe_arrays: str = typer.Option(
        ..., "--pe-arrays", help="PE arrays ROWSxCOLS, comma separated, e.g. 64x48,128x128."
    ),
    bandwidths: str = typer.Option(
        ..., "--bandwidths", help="Off-chip bandwidths in GB/s, comma separated, e.g. 77,460,819."
    ),
    model: str = model_option(),
    algorithm: str = algorithm_option(..., "SD algorithm (longspec, eagle3, falcon)."),
    contexts: str = contexts_option("Context lengths, e.g. 256,1024,4096."),
    aat_dir: Path | None = aat_dir_option(
        "Measured AAT tables (default: the algorithm's embedded acceptance model)."
    ),
    task: str | None = typer.Option(None, "--task", help="Task of the measured AAT tables."),
    out: Path = out_option(
        Path("explore.csv"),
        "Summary table (.csv or .parquet); the heat map goes next to it as .png.",
    ),
    plot: Path | None = plot_option("Heat-map PNG (default: --out with .png)."),
    engine: str = engine_option(),
    executor: str = executor_option(f"Where points run: {', '.join(EXECUTORS)}."),
    workers: int | None = workers_option(),
    scheduler: str | None = scheduler_option("Dask scheduler address (--executor dask)."),
    cache_dir: Path | None = cache_dir_option("Result cache folder."),
    no_cache: bool = no_cache_option(),
    cache_limit_mb: int | None = cache_limit_option(),
) -> None:
    """Explore hypothetical boards: "more DSPs or more bandwidth?"

    Every combination of --pe-arrays and --bandwidths applied to --base-board (clock,
    buffers, efficiencies and the MV share of the array kept) is costed at every x of the
    AAT curve per context; the best x maximises P_eff = AAT / (T_v + T_d). Writes the
    summary table and a heat map of best tokens/s, speedup and best x over
    (MAC/cycle, bandwidth), and prints which direction pays more.

    Example: fpgasim explore --base-board v80 --pe-arrays 64x48,128x64,128x128,256x128
    --bandwidths 77,460,819,1638 --model llama-3.1-8b --algorithm longspec --contexts 1024
    """
    check_out_path(out, "--out")
    png = plot or out.with_suffix(".png")
    check_png(png, "--plot" if plot else "--out")
    check_input_path(aat_dir, "--aat-dir")
    check_executor(executor, scheduler)
    if task and aat_dir is None:
        raise InputError("--task", task, "only with --aat-dir (the embedded model has no tasks)")
    engine_version(engine)
    base = load_board(base_board)
    arrays = parse_pe_arrays(pe_arrays)
    bws = parse_bandwidths(bandwidths)
    m = load_model(model)
    algo = load_algorithm(algorithm)
    check_drafter(base, algo)
    ctxs = parse_contexts(contexts)
    progress = RichProgress(f"explore ({engine}, {executor})")
    with open_cache(cache_dir, no_cache, cache_limit_mb) as cache, progress:
        result = explore(
            base,
            arrays,
            bws,
            m,
            algo,
            ctxs,
            engine=engine,
            executor=executor,
            workers=workers,
            scheduler=scheduler,
            cache=cache,
            aat_dir=str(aat_dir) if aat_dir else None,
            task=task,
            progress=progress,
        )
    summary = explore_out(result.summary, base.lowering)
    write_frame(summary, out)
    plot_explore(summary, png, base.lowering)
    stats_line = result.stats.summary()
    after_commit(functools.partial(err_console.print, stats_line, highlight=False, soft_wrap=True))
    shown = summary[
        [
            "pe_array",
            "bandwidth_gb_s",
            "context",
            "decision",
            "speedup",
            "best_verify_len",
            "best_tokens_per_s",
            "ad_tokens_per_s",
            *(["fits_memory"] if base.lowering == "flightllm" else []),
        ]
    ]
    title = (
        f"explore: {m.id} / {algo.id} on {base.name} variants\n"
        f"engine {engine}, lowering {base.lowering} / AAT {summary['aat_source'].iloc[0]}"
    )
    heads = {"pe_array": "PE array", "bandwidth_gb_s": "GB/s", "best_verify_len": "best x"}
    heads |= {"best_tokens_per_s": "best tok/s", "ad_tokens_per_s": "AD tok/s"}
    rows = shown.rename(columns=heads).to_dict("records")
    wide_console().print(rich_table(rows, title=title))
    for line in verdict(result.summary):
        console.print(line, highlight=False, soft_wrap=True)
    wrote = f"wrote {out} and {png}"
    after_commit(functools.partial(console.print, wrote, highlight=False, soft_wrap=True))
