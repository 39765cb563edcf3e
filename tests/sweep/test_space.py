"""Design spaces for sweeps: `--vary` parsed into a Variation, re-fitted boards, their keys
(the hook of `fpgasim explore`)."""

from __future__ import annotations

import pytest

from fpgasim.config import load_board, load_model
from fpgasim.config.board_loader import BoardBase
from fpgasim.errors import ConfigError, InputError
from fpgasim.simulate import Point
from fpgasim.sweep import parse_vary, point_key
from fpgasim.sweep.space import MAX_VARIATION_BOARDS


def test_variation_grid() -> None:
    v80 = load_board("v80")
    variation = parse_vary(["design.mm_cols=48, 64,128,256",
                            "fpga.memory.bandwidth_gb_s=77,460,819,1638"])
    combos = variation.combinations()
    assert len(combos) == 16  # the product, the first axis slowest
    assert combos[1] == (("design.mm_cols", 48), ("fpga.memory.bandwidth_gb_s", 460))
    assert [c[0][1] for c in combos[::4]] == [48, 64, 128, 256]
    boards = variation.boards(BoardBase("v80"))
    assert len(boards) == 16 and len({b.name for b in boards}) == 16
    b = boards[1]
    assert b.name == "v80 mm_cols=48 bandwidth_gb_s=460"
    # the array change keeps the part's table rows (v80: 128); the rest is the base's
    assert (b.fit.mm_rows, b.fit.mm_cols, b.fpga.memory.bandwidth_gb_s) == (128, 48, 460)
    assert b.fit.mm_dsps == 128 * 48 and b.fit.dsps_available == v80.fit.dsps_available
    assert b.fpga.memory.channels == v80.fpga.memory.channels and b.clock_mhz == v80.clock_mhz
    # no axes: the base itself
    assert parse_vary([]).boards(BoardBase("v80")) == [v80]


def test_values_are_read_as_written() -> None:
    variation = parse_vary(["design.mv_lanes=1,2,2,4", "design.clock_mhz=0225,2:25",
                            "design.recipe.name=int8"])
    axes = dict(variation.axes)
    assert axes["design.mv_lanes"] == (1, 2, 4)  # repeats dropped, order kept
    # YAML 1.2 as in a file: 0225 is 225 (YAML 1.1: octal 149), 2:25 text (1.1: base 60)
    assert axes["design.clock_mhz"] == (225, "2:25")
    assert axes["design.recipe.name"] == ("int8",)
    with pytest.raises(ConfigError, match="clock_mhz"):
        variation.boards(BoardBase("u280"))


def test_same_hardware_same_key_other_hardware_other_key() -> None:
    v80, model = load_board("v80"), load_model("llama-3.1-8b")

    def key(board):
        return point_key(Point(board, model, 128, 1), "analytic", "1")

    # the data sheet's own bandwidth, named as v80: the same point
    same = load_board("v80", [("fpga.memory.bandwidth_gb_s", 819.2)])
    assert same.name != v80.name and key(same) != key(v80)  # the name is part of the key
    assert key(same.model_copy(update={"name": v80.name})) == key(v80)
    other = load_board("v80", [("fpga.memory.bandwidth_gb_s", 1638)])
    assert key(other.model_copy(update={"name": v80.name})) != key(v80)


@pytest.mark.parametrize(
    "items",
    [
        ["mm_cols=48"],  # no design./fpga. prefix
        ["design.mm_cols"],  # no values
        ["design.mm_cols="],
        ["=48"],
        ["design.mm_cols=48", "design.mm_cols=64"],  # a field twice
        ["design.mm_cols={a: 1}"],  # not a scalar
    ],
)
def test_bad_vary(items: list[str]) -> None:
    with pytest.raises(InputError, match="vary") as info:
        parse_vary(items)
    assert "\n" not in str(info.value)


def test_too_many_boards_refused_before_any_is_built() -> None:
    side = 65  # 65 x 65 = 4225 boards
    assert side * side > MAX_VARIATION_BOARDS >= side
    values = ",".join(str(16 * k) for k in range(1, side + 1))
    with pytest.raises(InputError, match=f"at most {MAX_VARIATION_BOARDS} boards"):
        parse_vary([f"design.mm_cols={values}", f"design.mm_rows={values}"])


def test_out_of_range_board_names_the_field() -> None:
    with pytest.raises(ConfigError, match="bandwidth_gb_s"):
        parse_vary(["fpga.memory.bandwidth_gb_s=-5"]).boards(BoardBase("v80"))
    with pytest.raises(ConfigError, match="mm_cols"):
        parse_vary(["design.mm_cols=0"]).boards(BoardBase("v80"))
