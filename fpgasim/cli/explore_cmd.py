"""`fpgasim explore`: a board varied over any field of its FPGA or design file, solved per
drafter and context: what each variant delivers, what it costs in DSPs, the Pareto front,
and which step pays more (fpgasim.studies.explore)."""

from __future__ import annotations

import math
from dataclasses import dataclass
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
from fpgasim.config.board import Board
from fpgasim.config.board_loader import BoardBase
from fpgasim.config.schema import Algorithm, TargetModel
from fpgasim.dataflow.lowerings.registry import check_drafter
from fpgasim.errors import InputError
from fpgasim.figures.plots import plot_explore
from fpgasim.fileio import check_input_path, check_out_path, write_frame
from fpgasim.simulate import MAX_BATCH
from fpgasim.studies.explore import (
    ExploreResult,
    cheapest_lines,
    explore,
    target_lines,
    verdict,
)
from fpgasim.sweep import EXECUTORS
from fpgasim.sweep.runner import engine_version
from fpgasim.sweep.space import Variation, parse_vary
from fpgasim.validation import validation_line

#: the command's flags, declared once each (the signature lists them one a line)
BOARD_FLAG = board_option("Base board (a named pair) or YAML path; or --fpga with --design.")
VARY_FLAG = vary_option(
    "A field of the FPGA or design file and its values, PATH=V1,V2 (repeatable; every "
    "combination is a board, the design re-fitted to the part), e.g. design.mv_lanes=1,2,4 "
    "or fpga.memory.bandwidth_gb_s=460,920 or fpga.dsps=9024,18048."
)
ALGORITHMS_FLAG = typer.Option(
    "longspec,eagle3,falcon", "--algorithms", "--algorithm", "-a",
    help="Drafters, comma separated.",
)
CONTEXTS_FLAG = contexts_option("Context lengths, e.g. 256,1024,4096.")
BATCH_FLAG = typer.Option(
    "1", "--batch", help="Batch sizes (requests decoded together), e.g. 1,4,16: every "
    "board is costed at each (docs/batching.md)."
)
VERIFY_LENS_FLAG = typer.Option(
    None,
    "--verify-lens",
    help="Search the best x only over these x of the AAT curves, e.g. 2-16,24,32 "
    "(default: every x).",
)
AAT_DIR_FLAG = aat_dir_option(
    "Folder (or file) of measured AAT tables. Default: builtin, the shipped tables, where "
    "they hold the algorithm and model (else the embedded acceptance model; the summary's "
    "aat_basis says which)."
)
TASK_FLAG = typer.Option(None, "--task", help="Task of the measured AAT tables.")
OUT_FLAG = out_option(
    Path("explore.csv"),
    "Summary table (.csv or .parquet); the figure goes next to it as .png.",
)
PLOT_FLAG = plot_option("Figure PNG (default: --out with .png).")
EXECUTOR_FLAG = executor_option(f"Where points run: {', '.join(EXECUTORS)}.")
SCHEDULER_FLAG = scheduler_option("Dask scheduler address (--executor dask).")
CACHE_DIR_FLAG = cache_dir_option("Result cache folder.")
TARGET_FLAG = typer.Option(
    None, "--target-tokens-per-s", help="Also name, per drafter and context, the cheapest "
    "fitting variant (fewest cards, then DSPs over its cards) delivering at least this "
    "many tokens/s (batch tokens/s with --batch; docs/multi-fpga.md, 'Exploring cluster "
    "sizes').")
FORMAT_FLAG = format_option(
    OutputFormat.table, "What stdout shows: table (the summary's main columns and the "
    "verdict lines), json (every summary column, the verdict and cheapest-board lines) "
    "or csv (every summary column; the lines on stderr). --out is written either way.")


@dataclass(frozen=True)
class Space:
    """What the flags name, each checked: the base board and its variation, the model,
    drafters, contexts, x and batches."""

    base: BoardBase
    first: Board
    variation: Variation
    model: TargetModel
    algorithms: list[Algorithm]
    contexts: list[int]
    verify_lens: list[int] | None
    batches: list[int]


@cluster_options
def explore_cmd(
    board: str | None = BOARD_FLAG,
    fpga: str | None = fpga_option(),
    design: str | None = design_option(),
    vary: list[str] = VARY_FLAG,
    model: str = model_option(),
    algorithms: str = ALGORITHMS_FLAG,
    contexts: str = CONTEXTS_FLAG,
    batch: str = BATCH_FLAG,
    verify_lens: str | None = VERIFY_LENS_FLAG,
    aat_dir: Path | None = AAT_DIR_FLAG,
    task: str | None = TASK_FLAG,
    out: Path = OUT_FLAG,
    plot: Path | None = PLOT_FLAG,
    engine: str = engine_option(),
    executor: str = EXECUTOR_FLAG,
    workers: int | None = workers_option(),
    scheduler: str | None = SCHEDULER_FLAG,
    cache_dir: Path | None = CACHE_DIR_FLAG,
    no_cache: bool = no_cache_option(),
    cache_limit_mb: int | None = cache_limit_option(),
    target_tokens_per_s: float | None = TARGET_FLAG,
    output_format: OutputFormat = FORMAT_FLAG,
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
    png = _checked_outputs(out, plot, target_tokens_per_s, aat_dir, executor, scheduler, engine)
    space = _space(board, fpga, design, vary, model, algorithms, contexts, verify_lens, batch)
    n_boards = len(space.variation.combinations())
    progress = RichProgress(f"explore ({engine}, {executor}, {n_boards} boards)")
    with open_cache(cache_dir, no_cache, cache_limit_mb) as cache, progress:
        result = explore(
            space.base, space.variation, space.model, space.algorithms, space.contexts,
            engine=engine, executor=executor, workers=workers, scheduler=scheduler,
            cache=cache, progress=progress, verify_lens=space.verify_lens,
            aat_dir=str(aat_dir) if aat_dir else None, task=task, batches=space.batches,
        )
    _show(result, space, engine, out, png, target_tokens_per_s, output_format)


def _checked_outputs(out: Path, plot: Path | None, target_tokens_per_s: float | None,
                     aat_dir: Path | None, executor: str, scheduler: str | None,
                     engine: str) -> Path:
    """The flags checked before any work; returns the figure's path."""
    check_out_path(out, "--out")
    if target_tokens_per_s is not None and not 0 < target_tokens_per_s < math.inf:
        raise InputError("--target-tokens-per-s", target_tokens_per_s, "a positive number of "
                         "tokens/s")
    png = plot or out.with_suffix(".png")
    check_png(png, "--plot" if plot else "--out")
    check_input_path(aat_dir, "--aat-dir")
    check_executor(executor, scheduler)
    engine_version(engine)
    return png


def _space(board: str | None, fpga: str | None, design: str | None, vary: list[str],
           model: str, algorithms: str, contexts: str, verify_lens: str | None,
           batch: str) -> Space:
    """The base board, its variation (the command's cluster as `cluster.` axes), the model,
    the drafters (each once, each lowerable on the base) and the lists, each checked."""
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
    return Space(base, first, variation, m, algos, ctxs, lens, batches)


def _show(result: ExploreResult, space: Space, engine: str, out: Path, png: Path,
          target_tokens_per_s: float | None, output_format: OutputFormat) -> None:
    """Write the summary and figure, then print them in the asked format."""
    summary = result.summary
    write_frame(summary, out)
    plot_explore(result, png)
    after_output(result.stats.summary())
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
    _table(result, space, engine)
    for line in lines:
        console.print(line, highlight=False, soft_wrap=True)
    report_written(f"wrote {out} and {png}")


def _table(result: ExploreResult, space: Space, engine: str) -> None:
    """The summary's main columns as a table, with the validation lines under it."""
    summary, batches = result.summary, space.batches
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
    first = space.first
    title = (f"explore: {space.model.id} on {first.fpga.name} / {first.design.name} variants "
             f"(engine {engine}, AAT {'/'.join(sorted(set(summary['aat_basis'])))})")
    wide_console().print(rich_table(shown.rename(columns=heads).to_dict("records"), title=title))
    for line in validation_line(list(summary["validation"])):
        console.print(f"  {line}", highlight=False, soft_wrap=True)
