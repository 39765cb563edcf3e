"""`fpgasim boards`: the shipped FPGAs, designs and named boards, which pairs fit; or one file."""

from __future__ import annotations

import typer

from fpgasim.cli.common import console, csv_text, dumps_json, rich_table
from fpgasim.cli.options import OutputFormat, format_option, json_option, resolve_format
from fpgasim.config import available, load_board, load_design, load_fpga
from fpgasim.config.board import Board
from fpgasim.config.board_loader import fit_matrix
from fpgasim.config.describe import describe_file
from fpgasim.config.loader import KIND_DIRS, data_root
from fpgasim.errors import ConfigError
from fpgasim.solving.roofline import ridge_tokens


def board_row(b: Board) -> dict:
    """Summary facts of one named board: its pair, fitted arrays, the bandwidth as read,
    peak, ridge and DSPs."""
    f = b.fit
    return {
        "board": b.name,
        "fpga": b.fpga.name,
        "design": b.design.name,
        "pipelines": f.pipelines,
        "mm_array": f"{f.mm_rows}x{f.mm_cols}",
        "mv": f"{f.mv_lanes}x{f.mv_macs_per_lane}",
        "recipe": b.recipe.name,
        "bandwidth_gb_s": b.bandwidth_bytes_per_s / 1e9,
        # how the design reads the part's GB/s: the data sheet's decimal, or GiB/s
        # (FlightLLM's VHK158 configuration), which the row must say
        "reading": f.bandwidth_reading,
        "clock_mhz": b.clock_mhz,
        "peak_tmac_s": b.peak_macs_per_cycle * b.clock_hz / 1e12,
        # the sheet's ridge (not the measured x_R of `solve`): each weight element is used
        # once per token, so a pass turns compute-bound near (MAC/cycle) / (weights/cycle)
        "ridge_tokens": ridge_tokens(b),
        "dsps_used": f.dsps_used,
        "dsps_available": f.dsps_available,
        "fits": f.fits,
    }


def fpga_row(name: str) -> dict:
    """One data sheet's headline facts."""
    f = load_fpga(name)
    return {
        "fpga": f.name,
        "part": f.part,
        "dsps": f.dsps,
        "dsp_kind": f.dsp_kind,
        "slrs": f.slrs,
        "onchip_mb": None if f.onchip_mb is None else round(f.onchip_mb, 1),
        "memory": f.memory.kind,
        "capacity_gib": f.memory.capacity_gib,
        "bandwidth_gb_s": f.memory.bandwidth_gb_s,
        "channels": f.memory.channels,
    }


def design_row(name: str) -> dict:
    """One design's headline choices."""
    d = load_design(name)
    return {
        "design": d.name,
        "pipelines": d.pipelines,
        "clock_mhz": d.clock_mhz,
        "mm_rows": d.mm_rows,
        "mm_cols": d.mm_cols if d.mm_cols is not None else "fitted",
        "mv_lanes": d.mv_lanes,
        "recipe": d.recipe.name,
        "description": d.description,
    }


def boards(
    file: str | None = typer.Argument(
        None, help="Show one board, FPGA or design file (a name or a YAML path) instead."
    ),
    chosen: OutputFormat = format_option(
        OutputFormat.table, "Output: table, json (every table) or csv (the named boards; with "
        "FILE its fields as one row)."),
    as_json: bool = json_option(),
) -> None:
    """List the shipped FPGAs, designs and named boards, and which design fits which FPGA.

    A board is an FPGA data sheet (fpgas/) plus an accelerator design (designs/) fitted to
    it (docs/hardware.md): `--board NAME` names a shipped pair, `--fpga F --design D` any
    pair. The boards table shows each pair's fitted pipelines and arrays, its peak, its
    ridge_tokens (the board sheet's ridge: the verification length x at which a
    weight-streaming pass would stop being memory-bound at the arrays' peak; `solve`
    reports it beside x_R, the ridge measured on the simulator's roofline) and the DSPs its
    arrays need against the part's. With FILE: that file's fields (and, for a board, its
    fit).
    """
    fmt = resolve_format(chosen, as_json)
    if file is not None:
        _show_file(describe_file(file), fmt)
        return
    names = available("board")
    if not names:
        raise ConfigError(
            str(data_root() / KIND_DIRS["board"]),
            "boards",
            "no board file",
            "a folder of board YAML files (set FPGASIM_HOME to a folder holding boards/)",
        )
    fpgas, designs = available("fpga"), available("design")
    tables = {
        "boards": [board_row(load_board(name)) for name in names],
        "fpgas": [fpga_row(name) for name in fpgas],
        "designs": [design_row(name) for name in designs],
        "fits": fit_matrix(fpgas, designs),
    }
    if fmt is OutputFormat.json:
        print(dumps_json(tables))
        return
    if fmt is OutputFormat.csv:
        print(csv_text(tables["boards"]), end="")
        return
    _print_tables(tables)


def _show_file(shown: dict, fmt: OutputFormat) -> None:
    """One file's fields as JSON, one CSV row or a field/value table."""
    if fmt is OutputFormat.json:
        print(dumps_json(shown))
        return
    if fmt is OutputFormat.csv:
        print(csv_text([shown]), end="")
        return
    rows = [{"field": k, "value": v} for k, v in shown.items()]
    console.print(rich_table(rows, title=f"{shown['kind']} {shown['name']}"))


def _print_tables(tables: dict) -> None:
    """The boards, FPGAs and designs tables, then which design fits which FPGA."""
    console.print(rich_table(tables["boards"], title="named boards (FPGA + design, fitted)"))
    console.print(rich_table(tables["fpgas"], title="FPGA data sheets (fpgas/)"))
    console.print(rich_table(tables["designs"], title="accelerator designs (designs/)",
                             columns=[c for c in tables["designs"][0] if c != "description"]))
    grid = {}
    for row in tables["fits"]:
        if row["pipelines"] is None:
            cell = f"no ({row['short_of']})"
        elif row["fits"] is False:
            cell = f"no: {row['short_of']} ({row['pipelines']:g})"
        else:
            cell = f"{'yes' if row['fits'] else '?'} ({row['pipelines']:g})"
        grid.setdefault(row["design"], {"design": row["design"]})[row["fpga"]] = cell
    console.print(rich_table(
        list(grid.values()),
        title="which design fits which FPGA: yes / no: the resource short / ? (a count the "
        "check needs is unpublished); (effective pipelines)"))
