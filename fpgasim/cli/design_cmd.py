"""`fpgasim design fit`: a design fitted to an FPGA, and the resources it uses."""

from __future__ import annotations

import typer

from fpgasim.cli.common import console, csv_text, dumps_json, rich_table
from fpgasim.cli.options import (
    OutputFormat,
    board_from,
    cluster_options,
    format_option,
    vary_option,
)
from fpgasim.sweep.space import parse_vary

design_app = typer.Typer(
    name="design",
    help="Accelerator designs fitted to FPGAs: pipelines, arrays, channels and resources.",
    no_args_is_help=True,
    add_completion=False,
)


@design_app.callback()
def design_group() -> None:
    """Accelerator designs fitted to FPGAs: pipelines, arrays, channels and resources."""


@design_app.command("fit")
@cluster_options
def fit_cmd(
    fpga: str = typer.Option(..., "--fpga", help="FPGA data sheet name or YAML path."),
    design: str = typer.Option(..., "--design", help="Accelerator design name or YAML path."),
    vary: list[str] = vary_option(
        "Change one field first, e.g. fpga.dsps=18048 or design.mv_lanes=4 (one value each; "
        "repeatable)."
    ),
    output_format: OutputFormat = format_option(OutputFormat.table, "Output: table, json or csv."),
) -> None:
    """Fit a design to an FPGA and print the result: pipelines, channels, arrays and DSPs.

    The rule (docs/hardware.md, "Fitting a design to a part"): pipelines from the SLRs, the
    on-chip RAM and the memory channels; arrays fixed by the design or sized from the part's
    DSPs under the recipe's packing rule. A design that cannot place one pipeline is refused
    with the resource that binds, what it needs and what the part has.

    Example: fpgasim design fit --fpga u55c --design flightllm --format json
    """
    variation = parse_vary(vary)
    combos = variation.combinations()
    if len(combos) != 1:
        raise typer.BadParameter("one value per --vary field (explore varies over several)",
                                 param_hint="--vary")
    board = board_from(None, fpga, design, combos[0])
    report = board.fit_report()
    if not board.cluster.is_single:  # every card fits alike; the ring's ports are checked
        report.update(board.cluster.columns())
    if output_format is OutputFormat.json:
        print(dumps_json(report))
        return
    if output_format is OutputFormat.csv:
        print(csv_text([report]), end="")
        return
    rows = [{"field": k, "value": v} for k, v in report.items()]
    console.print(rich_table(rows, title=f"design {report['design']} fitted to "
                             f"{report['fpga']}"))
