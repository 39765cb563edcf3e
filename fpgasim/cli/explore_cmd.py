"""`fpgasim explore`: a board varied over any field of its FPGA or design file, solved per
drafter and context: what each variant delivers, what it costs in DSPs, the Pareto front,
and which step pays more (fpgasim.studies.explore)."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from fpgasim.cli.common import (
    RichProgress,
    console,
    dumps_json,
    err_console,
    json_records,
    report_written,
    rich_table,
    wide_console,
)
from fpgasim.cli.options import (
    OutputFormat,
    aat_dir_option,
    board_option,
    check_png,
    cluster_axes,
    cluster_options,
    contexts_option,
    design_option,
    engine_option,
    format_option,
    fpga_option,
    model_option,
    out_option,
    parse_contexts,
    parse_int_list,
    parse_name_list,
    plot_option,
    vary_option,
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
from fpgasim.cli.terminal import after_output
from fpgasim.config import load_algorithm, load_model
from fpgasim.config.board_loader import BoardBase
from fpgasim.dataflow.lowerings.registry import check_drafter
from fpgasim.errors import InputError
from fpgasim.figures.plots import plot_explore
from fpgasim.fileio import check_input_path, check_out_path, write_frame
from fpgasim.simulate import MAX_BATCH
from fpgasim.studies.explore import cheapest_lines, explore, target_lines, verdict
from fpgasim.sweep import EXECUTORS
from fpgasim.sweep.runner import engine_version
from fpgasim.sweep.space import parse_vary
from fpgasim.validation import validation_line


@cluster_options
def explore_cmd(
    board: str | None = board_option("Base board (a named pair) or YAML path; or --fpga "
                                     "with --design."),
    fpga: str | None = fpga_option(),
    design: str | None = design_option(),
    vary: list[str] = vary_option(
        "A field of the FPGA or design file and its values, PATH=V1,V2 (repeatable; every "
        "combination is a board, the design re-fitted to the part), e.g. design.mv_lanes=1,2,4 "
        "or fpga.memory.bandwidth_gb_s=460,920 or fpga.dsps=9024,18048."
    ),
    model: str = model_option(),
    algorithms: str = typer.Option(
        "longspec,eagle3,falcon", "--algorithms", "--algorithm", "-a",
        help="Drafters, comma separated.",
    ),
    contexts: str = contexts_option("Context lengths, e.g. 256,1024,4096."),
    batch: str = typer.Option(
        "1", "--batch", help="Batch sizes (requests decoded together), e.g. 1,4,16: every "
        "board is costed at each (docs/batching.md)."
    ),
    verify_lens: str | None = typer.Option(
        None,
        "--verify-lens",
        help="Search the best x only over these x of the AAT curves, e.g. 2-16,24,32 "
        "(default: every x).",
    ),
    aat_dir: Path | None = aat_dir_option(
        "Folder (or file) of measured AAT tables. Default: builtin, the shipped tables, where "
        "they hold the algorithm and model (else the embedded acceptance model; the summary's "
        "aat_basis says which)."
    ),
    task: str | None = typer.Option(None, "--task", help="Task of the measured AAT tables."),
    out: Path = out_option(
        Path("explore.csv"),
        "Summary table (.csv or .parquet); the figure goes next to it as .png.",
    ),
    plot: Path | None = plot_option("Figure PNG (default: --out with .png)."),
    engine: str = engine_option(),
    executor: str = executor_option(f"Where points run: {', '.join(EXECUTORS)}."),
    workers: int | None = workers_option(),
    scheduler: str | None = scheduler_option("Dask scheduler address (--executor dask)."),
    cache_dir: Path | None = cache_dir_option("Result cache folder."),
    no_cache: bool = no_cache_option(),
    cache_limit_mb: int | None = cache_limit_option(),
    target_tokens_per_s: float | None = typer.Option(
        None, "--target-tokens-per-s", help="Also name, per drafter and context, the cheapest "
        "fitting variant (fewest cards, then DSPs over its cards) delivering at least this "
        "many tokens/s (batch tokens/s with --batch; docs/multi-fpga.md, 'Exploring cluster "
        "sizes')."),
    output_format: OutputFormat = format_option(
        OutputFormat.table, "What stdout shows: table (the summary's main columns and the "
        "verdict lines), json (every summary column, the verdict and cheapest-board lines) "
        "or csv (every summary column; the lines on stderr). --out is written either way."),
) -> None:
    """Explore a design space: a board varied over any field of its FPGA or design file.

    Every combination of the --vary values is applied to the base's files and the design is
    fitted to the part again (so "double the DSPs", fpga.dsps, re-sizes the arrays), then
    costed with the simulator at AD and at every x of each drafter's AAT curve per context.
    The table gives, per board, drafter and context: what the board delivers (the faster of
    SD at its best x and AD, with the decision), its tokens/J (docs/energy.md) and the
    energy-optimal x, its DSPs and whether it fits, the Pareto front of delivered tokens/s
    against DSPs and that of tokens/s, tokens/J and DSPs together; the figure draws the fronts and heat
    maps over the first two varied fields. Lines below say which fitting board is fastest,
    which step pays more ("one step up the diagonal": from every grid point, one value up a
    compute field against one value up the bandwidth, geometric mean of the gains), and
    where the study's accounting decides SD-or-AD otherwise.

    Example: fpgasim explore --board flightllm-vhk158 --model llama2-7b-flightllm
    --vary design.mv_lanes=1,2,4 --vary fpga.memory.bandwidth_gb_s=460,819.2 --contexts 1024
    """
    check_out_path(out, "--out")
    if target_tokens_per_s is not None and not 0 < target_tokens_per_s < math.inf:
        raise InputError("--target-tokens-per-s", target_tokens_per_s, "a positive number of "
                         "tokens/s")
    png = plot or out.with_suffix(".png")
    check_png(png, "--plot" if plot else "--out")
    check_input_path(aat_dir, "--aat-dir")
    check_executor(executor, scheduler)
    engine_version(engine)
    base = BoardBase(board, fpga, design)
    variation = parse_vary(cluster_axes(vary))
    m = load_model(model)
    ctxs = parse_contexts(contexts)
    algos = [load_algorithm(a) for a in parse_name_list(algorithms, "--algorithms")]
    ids = [a.id for a in algos]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:  # as compare-algorithms: a repeated algorithm would only repeat its rows
        raise InputError("--algorithms", ",".join(dup), "each algorithm once")
    first = base.build()
    for algo in algos:
        check_drafter(first, algo)
    lens = parse_int_list(verify_lens, "--verify-lens", 2, 10**5) if verify_lens else None
    batches = sorted(set(parse_int_list(batch, "--batch", 1, MAX_BATCH)))
    n_boards = len(variation.combinations())
    progress = RichProgress(f"explore ({engine}, {executor}, {n_boards} boards)")
    with open_cache(cache_dir, no_cache, cache_limit_mb) as cache, progress:
        result = explore(
            base, variation, m, algos, ctxs, engine=engine, executor=executor, workers=workers,
            scheduler=scheduler, cache=cache, progress=progress, verify_lens=lens,
            aat_dir=str(aat_dir) if aat_dir else None, task=task, batches=batches,
        )
    summary = result.summary
    write_frame(summary, out)
    plot_explore(result, png)
    stats_line = result.stats.summary()
    after_output(stats_line)
    lines = [*verdict(summary, result.axes), *cheapest_lines(summary),
             *(target_lines(summary, target_tokens_per_s) if target_tokens_per_s else [])]
    if output_format is OutputFormat.json:
        print(dumps_json({"summary": json_records(summary), "lines": lines}))
        report_written(f"wrote {out} and {png}", err_console)
        return
    if output_format is OutputFormat.csv:
        print(summary.to_csv(index=False), end="")
        for line in lines:
            err_console.print(line, highlight=False, soft_wrap=True)
        report_written(f"wrote {out} and {png}", err_console)
        return
    batched = len(batches) > 1 or batches[0] > 1
    shown = summary[["algorithm", *(["batch"] if batched else []), "context",
                     *result.axes, "decision", "best_verify_len",
                     "batch_tokens_per_s" if batched else "tokens_per_s", "ad_tokens_per_s",
                     "speedup", "tokens_per_j", "ad_tokens_per_j", "energy_best_verify_len",
                     "dsps_used", "fits", "pareto", "pareto_energy",
                     *[c for c in ("cards", "cluster_w", "pareto_cards", "pareto_watts")
                       if c in summary]]]
    heads = {"best_verify_len": "SD best x", "tokens_per_s": "delivered tok/s",
             "batch_tokens_per_s": "batch tok/s (delivered)",
             "ad_tokens_per_s": "AD tok/s per request", "tokens_per_j": "delivered tok/J",
             "ad_tokens_per_j": "AD tok/J", "energy_best_verify_len": "SD energy x",
             "pareto": "pareto tok/s-DSPs", "pareto_energy": "pareto tok/s-tok/J-DSPs",
             "cluster_w": "cluster W", "pareto_cards": "pareto tok/s-cards",
             "pareto_watts": "pareto tok/s-W"}
    title = (f"explore: {m.id} on {first.fpga.name} / {first.design.name} variants "
             f"(engine {engine}, AAT {'/'.join(sorted(set(summary['aat_basis'])))})")
    wide_console().print(rich_table(shown.rename(columns=heads).to_dict("records"), title=title))
    for line in validation_line(list(summary["validation"])):
        console.print(f"  {line}", highlight=False, soft_wrap=True)
    for line in lines:
        console.print(line, highlight=False, soft_wrap=True)
    report_written(f"wrote {out} and {png}")
