"""Hypothetical boards for design-space sweeps (the hook of `fpgasim explore`)."""

from __future__ import annotations

import pytest

from fpgasim.config import load_board, load_model
from fpgasim.errors import InputError
from fpgasim.simulate import Point
from fpgasim.sweep import derive_board, derive_boards, parse_pe_arrays, point_key


def test_derive_boards_grid() -> None:
    v80 = load_board("v80")
    pes = parse_pe_arrays("64x48, 128x64,128x128,256x128")
    boards = derive_boards(v80, pes, [77, 460, 819, 1638])
    assert len(boards) == 16 and len({b.name for b in boards}) == 16
    b = boards[1]
    assert b.name == "v80-pe64x48-bw460"
    assert (b.pe_array.rows, b.pe_array.cols, b.memory.bandwidth_gb_s) == (64, 48, 460)
    # MV mode keeps the base board's share of the array (v80: a quarter)
    assert b.mv_macs_per_cycle == 64 * 48 // 4
    assert b.memory.channels == v80.memory.channels and b.clock_mhz == v80.clock_mhz


def test_same_hardware_same_key_other_hardware_other_key() -> None:
    v80, model = load_board("v80"), load_model("llama-3.1-8b")
    same = derive_board(v80, 128, 128, 819.2).model_copy(
        update={"name": "v80", "description": v80.description}
    )
    assert point_key(Point(same, model, 128, 1), "analytic", "1") == point_key(
        Point(v80, model, 128, 1), "analytic", "1"
    )
    other = derive_board(v80, 128, 128, 1638)
    assert point_key(Point(other, model, 128, 1), "analytic", "1") != point_key(
        Point(v80, model, 128, 1), "analytic", "1"
    )


@pytest.mark.parametrize("text", ["", "128", "128x", "x64", "ax4", "12x-3"])
def test_bad_pe_arrays(text: str) -> None:
    with pytest.raises(InputError, match="pe_arrays"):
        parse_pe_arrays(text)


def test_out_of_range_board_is_input_error() -> None:
    with pytest.raises(InputError, match="bandwidth_gb_s"):
        derive_board(load_board("v80"), 128, 128, -5)
    with pytest.raises(InputError, match="pe_array.rows"):
        derive_board(load_board("v80"), 0, 128, 100)
