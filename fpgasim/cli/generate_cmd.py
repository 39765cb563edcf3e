"""`fpgasim generate`: end-to-end generation time (prefill, then decode; optionally SD)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from fpgasim.acceptance.rule import tables_for
from fpgasim.cli.common import (
    RichProgress,
)
from fpgasim.cli.generate_output import show_generation
from fpgasim.cli.options import (
    OutputFormat,
    aat_dir_option,
    algorithm_option,
    board_from,
    board_option,
    check_png,
    check_writable,
    cluster_options,
    design_option,
    engine_option,
    format_option,
    fpga_option,
    model_option,
    out_option,
    plot_option,
    prompt_len_option,
    workers_option,
)
from fpgasim.cli.terminal import warn_after_output
from fpgasim.config import load_algorithm, load_model
from fpgasim.config.schema import Algorithm
from fpgasim.dataflow.lowerings.registry import check_drafter
from fpgasim.engine import BULK_ENGINE, get_engine
from fpgasim.errors import InputError
from fpgasim.figures.plots import plot_generation
from fpgasim.fileio import atomic_write_bytes, check_input_path
from fpgasim.simulate import MAX_BATCH, fit_warnings
from fpgasim.step import Simulator
from fpgasim.studies.generation import (
    MAX_DECODE_LEN,
    CurveAt,
    acceptance_curve_at,
    generate,
    prefetch_generation,
)
from fpgasim.sweep.executors import default_workers
from fpgasim.validation import validation_of


class GenerateSource(StrEnum):
    """--aat-source: the AAT form (the acceptance rule decides where tables hold the pair)."""

    measured = "measured"
    fitted = "fitted"
    embedded = "embedded"


#: The flags of `generate_cmd` declared once (its signature lists them one a line).
GENERATE_DECODE_LEN_FLAG = typer.Option(
    ...,
    "--decode-len",
    "-D",
    min=1,
    max=MAX_DECODE_LEN,
    help="Tokens D to generate after the prompt.",
)
GENERATE_ALGORITHM_FLAG = algorithm_option(
    None,
    "SD algorithm (longspec, eagle3, falcon, ...): each step verifies the solver's best x "
    "at its context. Default: plain autoregressive decoding.",
)
GENERATE_AAT_DIR_FLAG = aat_dir_option(
    "Measured AAT tables (with --algorithm). Default: builtin, the tables shipped with "
    "fpgasim. Where they hold the algorithm and model, each step uses their curve at its "
    "own context (interpolated between measured contexts, extrapolated beyond); "
    "elsewhere the embedded acceptance model."
)
GENERATE_TASK_FLAG = typer.Option(
    None,
    "--task",
    "-t",
    help="Task of the measured AAT tables. Default: the one measured at the most contexts.",
)
GENERATE_AAT_SOURCE_FLAG = typer.Option(
    None,
    "--aat-source",
    help="measured (the measured x only; the default where tables hold the algorithm and model), fitted (the log model at every x), or embedded (the embedded model, even where tables exist).",
)
GENERATE_ENGINE_FLAG = engine_option(
    "Engine: analytic (the study's accounting), event (list-scheduler simulator), fast "
    "(event's cycles bit for bit, numba; the default here: a generation times thousands "
    "of passes).",
    default=BULK_ENGINE,
)
GENERATE_OUTPUT_FORMAT_FLAG = format_option(OutputFormat.table, "Output: table, json (the summary and the steps by context) or csv (the summary as one row).")
GENERATE_STEPS_OUT_FLAG = out_option(
    None, "Also write one CSV row per decode step to this file (docs/formats.md)."
)
GENERATE_PLOT_FLAG = plot_option(
    "Write the run's figure to this PNG: tokens generated against time for SD and AD, "
    "and per step the verification length x and the accepted tokens."
)
GENERATE_BATCH_FLAG = typer.Option(
    1, "--batch", "-B", min=1, max=MAX_BATCH,
    help="Requests generated together (docs/batching.md): their prompts prefilled one "
    "after another, then every step decodes all of them; the summary adds the batch's "
    "tokens/s.",
)


@cluster_options
def generate_cmd(
    board: str | None = board_option(),
    fpga: str | None = fpga_option(),
    design: str | None = design_option(),
    model: str = model_option("llama2-chat-7b"),
    prompt_len: int = prompt_len_option(..., "Prompt tokens P (prefilled first)."),
    decode_len: int = GENERATE_DECODE_LEN_FLAG,
    algorithm: str | None = GENERATE_ALGORITHM_FLAG,
    aat_dir: Path | None = GENERATE_AAT_DIR_FLAG,
    task: str | None = GENERATE_TASK_FLAG,
    aat_source: GenerateSource | None = GENERATE_AAT_SOURCE_FLAG,
    engine: str = GENERATE_ENGINE_FLAG,
    output_format: OutputFormat = GENERATE_OUTPUT_FORMAT_FLAG,
    steps_out: Path | None = GENERATE_STEPS_OUT_FLAG,
    plot: Path | None = GENERATE_PLOT_FLAG,
    workers: int | None = workers_option(),
    batch: int = GENERATE_BATCH_FLAG,
) -> None:
    """Time a whole generation: prefill of the prompt (TTFT), then D decode steps.

    Step i attends T = ceil_m(P + i + 1) tokens, m = the board's padding.decode_multiple.
    Steps at one aligned context are timed once.
    With --algorithm, each step verifies the solver's best x at its context
    and advances by that x's expected accepted tokens (AAT); the summary puts it beside
    plain decoding of the same tokens (the AD baseline) and gives SD's speedup.

    Example: fpgasim generate -b vhk158 -m llama2-chat-7b -P 128 -D 512 -a longspec
    """
    _check_inputs(steps_out, plot, aat_dir, algorithm, task, aat_source)
    b, m = board_from(board, fpga, design), load_model(model)
    eng = Simulator(get_engine(engine))  # the prefetch fills the memo `generate` reads
    algo = load_algorithm(algorithm) if algorithm else None
    check_drafter(b, algo)
    curve_at, run_task = _curve_at(algo, m.id, aat_dir, task, aat_source)
    what = f"generate ({engine}{', ' + algo.id if algo else ''})"
    with RichProgress(f"{what}: {engine} passes") as bar:
        prefetch_generation(eng, b, m, prompt_len, decode_len, algorithm=algo,
                            curve_at=curve_at, batch=batch,
                            workers=workers or default_workers(), progress=bar)
    with RichProgress(what) as progress:
        result = generate(eng, b, m, prompt_len, decode_len, algorithm=algo, curve_at=curve_at,
                          task=run_task, progress=progress, batch=batch)
    if steps_out is not None:
        atomic_write_bytes(steps_out, result.steps.to_csv(index=False).encode())
    if plot is not None:
        plot_generation(result, plot)
    show_generation(result, output_format, steps_out, b.lowering, plot, b.fit.fits_dsps,
                    validation=validation_of(b, engine).text)
    # as the summary's marks: the largest context and x (weights + every request's caches)
    drafter = algo.drafter if algo else None
    last = (int(result.steps["context"].max()), int(result.steps["verify_len"].max()))
    warn_after_output(fit_warnings(b, m, [(*last, drafter, batch)]))


def _check_inputs(steps_out: Path | None, plot: Path | None, aat_dir: Path | None,
                  algorithm: str | None, task: str | None,
                  aat_source: GenerateSource | None) -> None:
    """The output paths and the acceptance flags, before any file is read."""
    if steps_out is not None:
        if steps_out.suffix.lower() != ".csv":
            raise InputError("--out", str(steps_out), "a file ending in .csv")
        check_writable(steps_out)
    check_png(plot)
    check_input_path(aat_dir, "--aat-dir")
    if algorithm is None and (aat_dir is not None or task is not None or aat_source):
        given = str(aat_dir or task or (aat_source and aat_source.value))
        raise InputError("--aat-dir/--task/--aat-source", given, "only with --algorithm")
    if aat_source is GenerateSource.embedded and (aat_dir is not None or task is not None):
        raise InputError(
            "--aat-source", "embedded", "no --aat-dir or --task with the embedded model"
        )


def _curve_at(algo: Algorithm | None, model_id: str, aat_dir: Path | None, task: str | None,
              aat_source: GenerateSource | None) -> tuple[CurveAt | None, str]:
    """The acceptance each SD step reads (None for plain decoding) and the task it is of."""
    if algo is None:
        return None, ""
    tables = tables_for(aat_dir) if aat_source is not GenerateSource.embedded else None
    return acceptance_curve_at(algo, model_id, aat_dir=tables, task=task,
                               aat_source=aat_source.value if aat_source else None)
