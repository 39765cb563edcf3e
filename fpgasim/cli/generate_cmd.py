"""`fpgasim generate`: end-to-end generation time (prefill, then decode; optionally SD)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path

import typer

from fpgasim.analysis.aat import load_aat_tables
from fpgasim.analysis.generation import (
    MAX_DECODE_LEN,
    Generation,
    PlannedPasses,
    decode_context,
    embedded_curve_at,
    generate,
    measured_curve_at,
    planned_passes,
)
from fpgasim.cli.common import (
    RichProgress,
    dumps_json,
    err_console,
    json_records,
    json_row,
    report_written,
    rich_table,
    wide_console,
)
from fpgasim.cli.options import (
    JsonTable,
    aat_dir_option,
    algorithm_option,
    board_option,
    check_writable,
    engine_option,
    format_option,
    model_option,
    out_option,
    prompt_len_option,
    workers_option,
)
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.schema import Board, TargetModel
from fpgasim.dataflow.lowerings.registry import check_drafter
from fpgasim.engine import BULK_ENGINE, Engine, get_engine
from fpgasim.engine.cycle import CycleEngine
from fpgasim.errors import InputError
from fpgasim.fileio import atomic_write_bytes
from fpgasim.simulate import check_prompt_mask, memory_warning, prefill_spec
from fpgasim.step import service_for, verify_spec
from fpgasim.sweep.executors import ProcessExecutor, default_workers


class MeasuredSource(StrEnum):
    """--aat-source with --aat-dir."""

    measured = "measured"
    fitted = "fitted"


def generate_cmd(
    board: str = board_option(),
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
        "Measured AAT tables (with --algorithm); a step uses the measured context nearest "
        "its own (geometric midpoints). Default: the embedded acceptance model."
    ),
    task: str | None = typer.Option(
        None, "--task", "-t", help="Task of the measured AAT tables (with --aat-dir)."
    ),
    aat_source: MeasuredSource | None = typer.Option(
        None,
        "--aat-source",
        help="With --aat-dir: measured (the measured x only; default) or fitted (the log model at every x).",
    ),
    engine: str = engine_option(
        "Engine: analytic (the study's accounting), event (list-scheduler simulator), fast "
        "(event's cycles bit for bit, numba; the default here: a generation times thousands "
        "of passes).",
        default=BULK_ENGINE,
    ),
    output_format: JsonTable = format_option(JsonTable.table, "Output: json or table."),
    steps_out: Path | None = out_option(
        None, "Also write one CSV row per decode step to this file (docs/formats.md)."
    ),
    workers: int | None = workers_option(),
) -> None:
    """Time a whole generation: prefill of the prompt (TTFT), then D decode steps.

    Step i attends T = ceil_m(P + i + 1) tokens, m = the board's padding.decode_multiple.
    Steps at one aligned context are timed once.
    With --algorithm, each step verifies the solver's best x at its context
    and advances by that x's expected accepted tokens (AAT).

    Example: fpgasim generate -b vhk158 -m llama2-chat-7b -P 128 -D 512 -a longspec
    """
    if steps_out is not None:
        if steps_out.suffix.lower() != ".csv":
            raise InputError("--out", str(steps_out), "a file ending in .csv")
        check_writable(steps_out)
    if algorithm is None and (aat_dir is not None or task is not None):
        raise InputError("--aat-dir/--task", str(aat_dir or task), "only with --algorithm")
    if aat_dir is None and task is not None:
        raise InputError(
            "--task", task, "only with --aat-dir (the embedded model is task-agnostic)"
        )
    if aat_dir is not None and task is None:
        raise InputError("--task", None, "required with --aat-dir (one measured task)")
    if aat_source is not None and aat_dir is None:
        raise InputError(
            "--aat-source", aat_source.value, "only with --aat-dir (measured AAT tables)"
        )
    aat_source = aat_source or MeasuredSource.measured
    b, m = load_board(board), load_model(model)
    eng = get_engine(engine)
    check_prompt_mask(eng, b, prompt_len)  # before any work
    last_context = decode_context(prompt_len, decode_len - 1, b.padding.decode_multiple)
    warning = memory_warning(b, m, last_context, 1) if 1 <= decode_len <= MAX_DECODE_LEN else None
    if warning is not None:  # as `simulate` warns, before the work
        err_console.print(f"fpgasim: warning: {warning}", highlight=False, soft_wrap=True)
    algo = load_algorithm(algorithm) if algorithm else None
    check_drafter(b, algo)
    curve_at, source = None, ""
    if algo is not None:
        if aat_dir is not None:
            tables = load_aat_tables(aat_dir)
            curve_at = measured_curve_at(tables, algo, m.id, task, aat_source.value)
            source = aat_source.value
        else:
            curve_at, source = embedded_curve_at(algo), "embedded"
    what = f"generate ({engine}{', ' + algo.id if algo else ''})"
    n = workers or default_workers()
    if n > 1 and isinstance(eng, CycleEngine):
        _prefetch(
            eng,
            b,
            m,
            prompt_len,
            functools.partial(
                planned_passes, eng, b, m, prompt_len, decode_len, algorithm=algo,
                curve_at=curve_at,
            ),
            n,
            f"{what}: {engine} passes",
        )
    with RichProgress(what) as progress:
        result = generate(
            eng,
            b,
            m,
            prompt_len,
            decode_len,
            algorithm=algo,
            curve_at=curve_at,
            aat_source=source,
            task=task or ("embedded" if algo else ""),
            progress=progress,
        )
    if steps_out is not None:
        atomic_write_bytes(steps_out, result.steps.to_csv(index=False).encode())
    _print(result, output_format, steps_out, b.lowering)


def _prefetch(
    engine: Engine,
    board: Board,
    model: TargetModel,
    prompt_len: int,
    plan: Callable[[], PlannedPasses],
    workers: int,
    what: str,
) -> None:
    """Time the planned passes (and compute the planned bounds) on a pool of `workers`
    processes (a progress bar on stderr), so `generate` finds them remembered: the first AD
    pass (planned whatever the algorithm) before the workers fork, so they inherit fast's
    numba kernels compiled (or loaded from disk) once instead of each compiling them, and
    the prefill (the longest pass) on a worker while `plan()` lists the rest. A pass that
    fails is left to `generate`, which asks it in its own order and reports it as a serial
    run does; an error of the plan itself is raised."""
    service = service_for(engine)
    failed: Exception | None = None  # the plan's own error
    try:
        first = decode_context(prompt_len, 0, board.padding.decode_multiple)
        service.run_pass(verify_spec(1, first), board, model)
        with ProcessExecutor(workers) as pool:
            finish = service.start([(prefill_spec(board, prompt_len), board, model, None)], pool)
            try:
                planned = plan()
            except Exception as error:
                failed = error
                raise
            finish()
            with RichProgress(what) as bar:
                shown = 0

                def advance(done: int, total: int) -> None:
                    """The prefetch's progress: start the bar on the first call, then catch
                    up."""
                    nonlocal shown
                    if shown == 0:
                        bar.start(total, 0)
                    bar.advance(done - shown)
                    shown = done

                service.prefetch(planned.passes, pool, progress=advance,
                                 bounds=planned.bounds)
    except Exception:  # noqa: BLE001 - a failed pass, a dead worker or a failed fork:
        if failed is not None:
            raise failed from None
        # the serial run below asks every pass again and reports as `--workers 1` does


def _print(
    result: Generation, output_format: JsonTable, steps_out: Path | None, lowering: str
) -> None:
    """The summary (with the board's lowering beside the engine: provenance) and the decode
    steps by context, each with its decision and SD's best speedup over AD."""
    s = {}
    for k, v in result.summary.items():
        s[k] = v
        if k == "engine":
            s["lowering"] = lowering
    if output_format is JsonTable.json:
        print(dumps_json({"summary": json_row(s), "contexts": json_records(result.groups())}))
        return
    title = (
        f"{s['board']} / {s['model']} / P={s['prompt_len']} D={s['decode_len']}"
        f" / {s['algorithm'] or 'AD'} / {s['engine']} ({lowering} lowering)"
    )
    out_console = wide_console()
    out_console.print(
        rich_table(
            [{"quantity": k, "value": v} for k, v in s.items()], title=title, floatfmt="{:.6g}"
        )
    )
    out_console.print(
        rich_table(
            json_records(result.groups()), title="decode steps by context", floatfmt="{:.4g}"
        )
    )
    if steps_out is not None:
        report_written(f"wrote {len(result.steps)} steps to {steps_out}", out_console)
