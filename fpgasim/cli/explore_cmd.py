"""`fpgasim explore`: hypothetical boards -> best x and speedup.

With --pe-arrays: the base board's PE array and bandwidth are varied. Without, on a
FlightLLM-lowered base board: the FlightLLM design (MV lanes and width, MM tile rows,
bandwidth, clock) for several drafters, with each design's DSP budget and the Pareto front
(fpgasim.analysis.design_space).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd
import typer

from fpgasim.analysis.design_space import (
    cheapest_paying,
    designs,
    explore_designs,
    plot_design_space,
)
from fpgasim.analysis.explore import explore, plot_explore, verdict
from fpgasim.cli.common import (
    RichProgress,
    console,
    err_console,
    report_written,
    rich_table,
    wide_console,
)
from fpgasim.cli.options import (
    aat_dir_option,
    algorithm_option,
    check_png,
    contexts_option,
    engine_option,
    model_option,
    out_option,
    parse_contexts,
    parse_float_list,
    parse_int_list,
    parse_name_list,
    plot_option,
    workers_option,
)
from fpgasim.cli.sweep_options import (
    cache_dir_option,
    cache_limit_option,
    check_executor,
    executor_option,
    no_cache_option,
    open_cache,
    scheduler_option,
)
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.schema import BANDWIDTH_GB_S, CLOCK_MHZ, Board, TargetModel
from fpgasim.dataflow.lowerings.registry import check_drafter, lowering_of
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
        ..., "--base-board", help="Board whose design is varied (name or YAML)."
    ),
    pe_arrays: str | None = typer.Option(
        None,
        "--pe-arrays",
        help="PE arrays ROWSxCOLS, comma separated, e.g. 64x48,128x128 (study-lowering base).",
    ),
    bandwidths: str | None = typer.Option(
        None,
        "--bandwidths",
        help="Off-chip bandwidths in GB/s, comma separated, e.g. 77,460,819 "
        "(FlightLLM base: default its own).",
    ),
    model: str = model_option(),
    algorithm: str | None = algorithm_option(
        None, "SD algorithm (longspec, eagle3, falcon); study-lowering base."
    ),
    algorithms: str = typer.Option(
        "longspec,eagle3,falcon",
        "--algorithms",
        help="FlightLLM base: the drafters, comma separated.",
    ),
    mv_lanes: str | None = typer.Option(
        None, "--mv-lanes", help="FlightLLM base: MV token lanes (MV_PARALLEL_M), e.g. 1,2,4,8."
    ),
    mv_widths: str | None = typer.Option(
        None,
        "--mv-widths",
        help="FlightLLM base: MAC/cycle of one MV lane (MV_PARALLEL_N x K), e.g. 512,1024,2048 "
        "(default: the base's).",
    ),
    mm_tile_rows: str | None = typer.Option(
        None,
        "--mm-tile-rows",
        help="FlightLLM base: MM tile rows (MM_PARALLEL_M), e.g. 16,32,128 (default: the base's).",
    ),
    clocks: str | None = typer.Option(
        None, "--clocks", help="FlightLLM base: clocks in MHz, e.g. 225,300 (default: the base's)."
    ),
    verify_lens: str | None = typer.Option(
        None,
        "--verify-lens",
        help="FlightLLM base: search the best x only over these x of the AAT curves, "
        "e.g. 2-16,24,32,48,64 (default: every x).",
    ),
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
    """Explore hypothetical boards: "more DSPs or more bandwidth?", or FlightLLM designs.

    Every combination of --pe-arrays and --bandwidths applied to --base-board (clock,
    buffers, efficiencies and the MV share of the array kept) is costed at every x of the
    AAT curve per context; the best x maximises P_eff = AAT / (T_v + T_d). Writes the
    summary table and a heat map of best tokens/s, speedup and best x over
    (MAC/cycle, bandwidth), and prints which direction pays more.

    Example: fpgasim explore --base-board v80 --pe-arrays 64x48,128x64,128x128,256x128
    --bandwidths 77,460,819,1638 --model llama-3.1-8b --algorithm longspec --contexts 1024

    Without --pe-arrays, a FlightLLM-lowered base board (lowering: flightllm) explores
    FlightLLM designs instead:
    every combination of --mv-lanes, --mv-widths, --mm-tile-rows, --bandwidths and --clocks,
    for each drafter of --algorithms; the table adds each design's DSPs (MM + MV arrays),
    whether they fit the device, and the Pareto front of speedup against DSPs; the PNG
    shows the fronts and heat maps of speedup over (MV lanes, MV width).

    Example: fpgasim explore --base-board flightllm-vhk158 --model llama2-7b-flightllm
    --mv-lanes 1,2,4,8 --mm-tile-rows 16,128 --contexts 256,1023
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
    m = load_model(model)
    ctxs = parse_contexts(contexts)
    flight_only = {
        "--mv-lanes": mv_lanes,
        "--mv-widths": mv_widths,
        "--mm-tile-rows": mm_tile_rows,
        "--clocks": clocks,
        "--verify-lens": verify_lens,
    }
    if base.flightllm is not None and pe_arrays is None:
        if algorithm is not None:
            raise InputError("--algorithm", algorithm, "only with --pe-arrays (FlightLLM "
                             "designs take --algorithms)")
        if aat_dir is not None:
            raise InputError("--aat-dir", str(aat_dir), "only with --pe-arrays")
        _explore_designs(
            base, m, ctxs, algorithms, mv_lanes, mv_widths, mm_tile_rows, bandwidths, clocks,
            verify_lens, out, png, engine, executor, workers, scheduler, cache_dir, no_cache,
            cache_limit_mb,
        )
        return
    for flag, value in flight_only.items():
        if value is not None:
            raise InputError(flag, value, "only with a FlightLLM-lowered --base-board "
                             "and no --pe-arrays")
    if pe_arrays is None or bandwidths is None or algorithm is None:
        missing = [f for f, v in (("--pe-arrays", pe_arrays), ("--bandwidths", bandwidths),
                                  ("--algorithm", algorithm)) if v is None]
        raise InputError(missing[0], None, "required with a study-lowering --base-board")
    arrays = parse_pe_arrays(pe_arrays)
    bws = parse_bandwidths(bandwidths)
    algo = load_algorithm(algorithm)
    check_drafter(base, algo)
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
            *(["fits_memory"] if lowering_of(base).model_precision else []),
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
    report_written(f"wrote {out} and {png}")


def _explore_designs(
    base: Board,
    model: TargetModel,
    contexts: list[int],
    algorithms: str,
    mv_lanes: str | None,
    mv_widths: str | None,
    mm_tile_rows: str | None,
    bandwidths: str | None,
    clocks: str | None,
    verify_lens: str | None,
    out: Path,
    png: Path,
    engine: str,
    executor: str,
    workers: int | None,
    scheduler: str | None,
    cache_dir: Path | None,
    no_cache: bool,
    cache_limit_mb: int | None,
) -> None:
    """The FlightLLM design space of `base`: table, Pareto/heat-map PNG, cheapest paying."""
    fl = base.flightllm
    assert fl is not None  # the caller checked that the board has a `flightllm:` section
    base_lanes = fl.mv_parallel_m
    space = designs(
        parse_int_list(mv_lanes, "--mv-lanes", 1, 4096) if mv_lanes else [base_lanes],
        parse_int_list(mv_widths, "--mv-widths", 1, 10**7)
        if mv_widths
        else [base.mv_macs_per_cycle // base_lanes],
        parse_int_list(mm_tile_rows, "--mm-tile-rows", 1, 4096)
        if mm_tile_rows
        else [fl.mm_tile_rows],
        parse_bandwidths(bandwidths) if bandwidths else [base.memory.bandwidth_gb_s],
        parse_float_list(clocks, "--clocks", *CLOCK_MHZ, "MHz") if clocks else [base.clock_mhz],
    )
    algos = [load_algorithm(a) for a in parse_name_list(algorithms, "--algorithms")]
    for algo in algos:
        check_drafter(base, algo)
    lens = parse_int_list(verify_lens, "--verify-lens", 2, 10**5) if verify_lens else None
    progress = RichProgress(f"explore ({engine}, {executor}, {len(space)} designs)")
    with open_cache(cache_dir, no_cache, cache_limit_mb) as cache, progress:
        result = explore_designs(
            base,
            space,
            model,
            algos,
            contexts,
            engine=engine,
            executor=executor,
            workers=workers,
            scheduler=scheduler,
            cache=cache,
            progress=progress,
            verify_lens=lens,
        )
    write_frame(result.summary, out)
    plot_design_space(result.summary, png)
    stats_line = result.stats.summary()
    after_commit(functools.partial(err_console.print, stats_line, highlight=False, soft_wrap=True))
    best = cheapest_paying(result.summary)
    shown = (
        best[["algorithm", "context", "changes", "dsps_used", "fits_dsps", "best_verify_len",
              "speedup"]]
        if len(best)
        else best
    )
    title = f"cheapest design where SD pays: {model.id} on {base.name} variants"
    if len(shown):
        wide_console().print(rich_table(shown.to_dict("records"), title=title))
    else:
        console.print(f"{title}: none of the {len(space)} designs", highlight=False)
    unpaid = sorted(
        set(zip(result.summary["algorithm"], result.summary["context"], strict=True))
        - set(zip(best["algorithm"], best["context"], strict=True))
    )
    for algorithm, context in unpaid:
        console.print(f"{algorithm} at L={context}: no fitting design pays", highlight=False)
    report_written(f"wrote {out} and {png}")
