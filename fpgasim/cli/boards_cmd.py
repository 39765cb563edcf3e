"""`fpgasim boards`: the shipped boards at a glance."""

from __future__ import annotations

from fpgasim.analysis.roofline import ridge_tokens
from fpgasim.cli.common import console, dumps_json, rich_table
from fpgasim.cli.options import json_option
from fpgasim.config import available, load_board
from fpgasim.config.loader import KIND_DIRS, data_root
from fpgasim.config.resources import resource_columns
from fpgasim.config.board import Board
from fpgasim.errors import ConfigError


def board_row(b: Board) -> dict:
    """Summary facts of one board, including the one-token-per-MAC ridge point."""
    return {
        "board": b.name,
        "description": b.description,
        "pe_array": f"{b.pe_array.rows}x{b.pe_array.cols}",
        "macs_per_cycle": b.macs_per_cycle,
        "memory": b.memory.kind,
        "bandwidth_gb_s": b.memory.bandwidth_gb_s,
        "clock_mhz": b.clock_mhz,
        "peak_tmac_s": b.macs_per_cycle * b.clock_hz / 1e12,
        # the sheet's ridge (not the measured x_R of `solve`): each weight element is used
        # once per token, so a pass turns compute-bound near (MAC/cycle) / (weights/cycle)
        "ridge_tokens": ridge_tokens(b),
        **{k: v for k, v in resource_columns(b).items() if k in BOARD_RESOURCE_COLUMNS},
    }


#: The resource facts `fpgasim boards` shows (FlightLLM-lowered boards; empty otherwise).
BOARD_RESOURCE_COLUMNS = ("dsp_kind", "dsps_used", "dsps_available", "fits_dsps")


def boards(
    as_json: bool = json_option("Print JSON instead of a table."),
) -> None:
    """List the shipped boards: PE array, MAC/cycle, bandwidth, clock, ridge_tokens and DSPs.

    ridge_tokens is the board sheet's ridge: the verification length x at which one
    weight-streaming pass would stop being memory-bound at the array's peak (MAC/cycle over
    weight elements streamed per cycle at the weight group's efficiency). `solve` reports
    it beside x_R, the ridge measured on the engine's roofline, which padding, MV-mode
    passes, attention and stalls push higher (docs/glossary.md). For FlightLLM-lowered
    boards, dsps_used is the DSP slices the MM and MV arrays need under the DSP kind's int8
    packing, against the device's dsps (fits_dsps); see docs/flightllm-sd.md.
    """
    rows = [board_row(load_board(name)) for name in available("board")]
    if not rows:
        raise ConfigError(
            str(data_root() / KIND_DIRS["board"]),
            "boards",
            "no board file",
            "a folder of board YAML files (set FPGASIM_HOME to a folder holding boards/)",
        )
    if as_json:
        print(dumps_json(rows))
    else:
        console.print(
            rich_table(
                rows, title="shipped boards", columns=[c for c in rows[0] if c != "description"]
            )
        )
