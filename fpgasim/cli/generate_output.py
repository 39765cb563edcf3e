"""How `fpgasim generate` shows a run: the summary (table, JSON or CSV), the decode steps by
context and the lines under them."""

from __future__ import annotations

from pathlib import Path

from fpgasim.cli.common import (
    TRAILING_ZERO,
    csv_text,
    dumps_json,
    json_records,
    json_row,
    report_written,
    rich_table,
    wide_console,
)
from fpgasim.cli.options import OutputFormat
from fpgasim.solving.decision import rests_on
from fpgasim.studies.generation import Generation
from fpgasim.validation import validation_line


def show_generation(
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
    out_console = wide_console()
    _print_tables(result, s, lowering, validation, out_console)
    for path, line in (
        (steps_out, f"wrote {len(result.steps)} steps to {steps_out}"),
        (plot, f"wrote figure to {plot}"),
    ):
        if path is not None:
            report_written(line, out_console)


def _print_tables(result: Generation, s: dict, lowering: str, validation: str,
                  out_console) -> None:
    """The summary table, the steps by context, and SD's lines (speedup, energy, AAT,
    decisions)."""
    title = (
        f"{s['board']} / {s['model']} / P={s['prompt_len']} D={s['decode_len']}"
        + (f" / batch {s['batch']}" if s["batch"] > 1 else "")
        + f" / {s['algorithm'] or 'AD'} / {s['engine']} ({lowering} lowering)"
    )
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
