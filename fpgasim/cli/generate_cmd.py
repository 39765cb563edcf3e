"""`fpgasim generate`: end-to-end generation time (prefill, then decode; optionally SD)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer

from fpgasim.acceptance.rule import tables_for
from fpgasim.cli.common import (
    TRAILING_ZERO,
    RichProgress,
    csv_text,
    dumps_json,
    json_records,
    json_row,
    report_written,
    rich_table,
    wide_console,
)
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
from fpgasim.dataflow.lowerings.registry import check_drafter
from fpgasim.engine import BULK_ENGINE, get_engine
from fpgasim.errors import InputError
from fpgasim.figures.plots import plot_generation
from fpgasim.fileio import atomic_write_bytes, check_input_path
from fpgasim.simulate import MAX_BATCH, fit_warnings
from fpgasim.solving.decision import rests_on
from fpgasim.step import Simulator
from fpgasim.studies.generation import (
    MAX_DECODE_LEN,
    Generation,
    acceptance_curve_at,
    generate,
    prefetch_generation,
)
from fpgasim.sweep.executors import default_workers
from fpgasim.validation import validation_line, validation_of


class GenerateSource(StrEnum):
    """--aat-source: the AAT form (the acceptance rule decides where tables hold the pair)."""

    measured = "measured"
    fitted = "fitted"
    embedded = "embedded"


@cluster_options
def generate_cmd(
    board: str | None = board_option(),
    fpga: str | None = fpga_option(),
    design: str | None = design_option(),
    model: str = model_option("llama2-chat-7b"),
    prompt_len: int = prompt_len_option(..., "Prompt tokens P (prefilled first)."),
    decode_len: int = typer.Option(
        ...,
        "--decode-len",
        "-D",
        min=1,
        max=MAX_DECODE_LEN,
        help="Tokens D to generate after the prompt.",
    ),
    algorithm: str | None = algorithm_option(
        None,
        "SD algorithm (longspec, eagle3, falcon, ...): each step verifies the solver's best x "
        "at its context. Default: plain autoregressive decoding.",
    ),
    aat_dir: Path | None = aat_dir_option(
        "Measured AAT tables (with --algorithm). Default: builtin, the tables shipped with "
        "fpgasim. Where they hold the algorithm and model, each step uses their curve at its "
        "own context (interpolated between measured contexts, extrapolated beyond); "
        "elsewhere the embedded acceptance model."
    ),
    task: str | None = typer.Option(
        None,
        "--task",
        "-t",
        help="Task of the measured AAT tables. Default: the one measured at the most contexts.",
    ),
    aat_source: GenerateSource | None = typer.Option(
        None,
        "--aat-source",
        help="measured (the measured x only; the default where tables hold the algorithm and model), fitted (the log model at every x), or embedded (the embedded model, even where tables exist).",
    ),
    engine: str = engine_option(
        "Engine: analytic (the study's accounting), event (list-scheduler simulator), fast "
        "(event's cycles bit for bit, numba; the default here: a generation times thousands "
        "of passes).",
        default=BULK_ENGINE,
    ),
    output_format: OutputFormat = format_option(OutputFormat.table, "Output: table, json (the summary and the steps by context) or csv (the summary as one row)."),
    steps_out: Path | None = out_option(
        None, "Also write one CSV row per decode step to this file (docs/formats.md)."
    ),
    plot: Path | None = plot_option(
        "Write the run's figure to this PNG: tokens generated against time for SD and AD, "
        "and per step the verification length x and the accepted tokens."
    ),
    workers: int | None = workers_option(),
    batch: int = typer.Option(
        1, "--batch", "-B", min=1, max=MAX_BATCH,
        help="Requests generated together (docs/batching.md): their prompts prefilled one "
        "after another, then every step decodes all of them; the summary adds the batch's "
        "tokens/s.",
    ),
) -> None:
    """Time a whole generation: prefill of the prompt (TTFT), then D decode steps.

    Step i attends T = ceil_m(P + i + 1) tokens, m = the board's padding.decode_multiple.
    Steps at one aligned context are timed once.
    With --algorithm, each step verifies the solver's best x at its context
    and advances by that x's expected accepted tokens (AAT); the summary puts it beside
    plain decoding of the same tokens (the AD baseline) and gives SD's speedup.

    Example: fpgasim generate -b vhk158 -m llama2-chat-7b -P 128 -D 512 -a longspec
    """
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
    b, m = board_from(board, fpga, design), load_model(model)
    eng = Simulator(get_engine(engine))  # the prefetch fills the memo `generate` reads
    algo = load_algorithm(algorithm) if algorithm else None
    check_drafter(b, algo)
    curve_at, run_task = None, ""
    if algo is not None:
        tables = tables_for(aat_dir) if aat_source is not GenerateSource.embedded else None
        curve_at, run_task = acceptance_curve_at(
            algo, m.id, aat_dir=tables, task=task,
            aat_source=aat_source.value if aat_source else None,
        )
    what = f"generate ({engine}{', ' + algo.id if algo else ''})"
    with RichProgress(f"{what}: {engine} passes") as bar:
        prefetch_generation(eng, b, m, prompt_len, decode_len, algorithm=algo,
                            curve_at=curve_at, batch=batch,
                            workers=workers or default_workers(), progress=bar)
    with RichProgress(what) as progress:
        result = generate(
            eng,
            b,
            m,
            prompt_len,
            decode_len,
            algorithm=algo,
            curve_at=curve_at,
            task=run_task,
            progress=progress,
            batch=batch,
        )
    if steps_out is not None:
        atomic_write_bytes(steps_out, result.steps.to_csv(index=False).encode())
    if plot is not None:
        plot_generation(result, plot)
    _print(result, output_format, steps_out, b.lowering, plot, b.fit.fits_dsps,
           validation=validation_of(b, engine).text)
    # as the summary's marks: the largest context and x (weights + every request's caches)
    drafter = algo.drafter if algo else None
    last = (int(result.steps["context"].max()), int(result.steps["verify_len"].max()))
    warn_after_output(fit_warnings(b, m, [(*last, drafter, batch)]))


def _print(
    result: Generation,
    output_format: OutputFormat,
    steps_out: Path | None,
    lowering: str,
    plot: Path | None = None,
    fits_dsps: bool | None = None,
    validation: str = "",
) -> None:
    """The summary (with the board's lowering beside the engine: provenance; the AD
    baseline and SD's speedup over it) and the decode steps by context, each with its
    decision and SD's best speedup over AD."""
    s = {}
    for k, v in result.summary.items():
        s[k] = v
        if k == "engine":
            s["lowering"] = lowering
    s["fits_dsps"] = fits_dsps
    if validation:  # the silicon check of its absolute figures (fpgasim/validation.py)
        s["validation"] = validation
    if output_format is OutputFormat.json:
        print(dumps_json({"summary": json_row(s), "contexts": json_records(result.groups())}))
        return
    if output_format is OutputFormat.csv:
        print(csv_text([json_row(s)]), end="")
        return
    title = (
        f"{s['board']} / {s['model']} / P={s['prompt_len']} D={s['decode_len']}"
        + (f" / batch {s['batch']}" if s["batch"] > 1 else "")
        + f" / {s['algorithm'] or 'AD'} / {s['engine']} ({lowering} lowering)"
    )
    out_console = wide_console()
    out_console.print(
        rich_table(
            [{"quantity": k, "value": v} for k, v in s.items() if k != "validation"],
            title=title, floatfmt="{:.6g}"
        )
    )
    for line in validation_line([validation] if validation else []):
        out_console.print(f"  {line}", highlight=False, soft_wrap=True)
    out_console.print(
        rich_table(
            json_records(result.groups()), title="decode steps by context", floatfmt="{:.4g}"
        )
    )
    groups = result.groups()
    if any(str(t).split()[-1:] == ["0"] for t in groups["tree"] if t):
        out_console.print(f"  {TRAILING_ZERO}", highlight=False, soft_wrap=True)
    if s["algorithm"]:
        out_console.print(
            f"  SD decodes {s['decode_len']} tokens in {s['decode_s']:.4g} s, AD in "
            f"{s['ad_decode_s']:.4g} s: {s['decode_speedup']:.3g}x ({s['total_speedup']:.3g}x "
            f"with the {s['ttft_s']:.4g} s prefill)",
            highlight=False,
            soft_wrap=True,
        )
        out_console.print(
            f"  energy: {s['energy_decision']}: SD {s['decode_tokens_per_j']:.4g} tokens/J, "
            f"AD {s['ad_decode_tokens_per_j']:.4g} tokens/J (docs/energy.md)",
            highlight=False,
            soft_wrap=True,
        )
        out_console.print(f"  AAT {s['aat_basis']}: {s['aat_note']}", highlight=False,
                          soft_wrap=True)
        out_console.print(f"  decisions: {rests_on(s)}", highlight=False, soft_wrap=True)
    for path, line in (
        (steps_out, f"wrote {len(result.steps)} steps to {steps_out}"),
        (plot, f"wrote figure to {plot}"),
    ):
        if path is not None:
            report_written(line, out_console)
