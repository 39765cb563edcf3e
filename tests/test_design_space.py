"""FlightLLM design space: derived boards, Pareto front, cheapest paying design, CLI."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from fpgasim.analysis.design_space import (
    DESIGN_SPACE_COLUMNS,
    cheapest_paying,
    designs,
    explore_designs,
    pareto_flags,
)

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.errors import InputError
from fpgasim.sweep.space import FlightDesign, derive_flightllm_board
from tests.cli_helpers import run_cli

BASE = load_board("flightllm-vhk158")
MODEL = load_model("llama2-7b-flightllm")


def test_designs_are_the_product_of_the_axes() -> None:
    space = designs([1, 2], [512, 1024], [16], [460.0, 819.2], [225.0])
    assert len(space) == 8
    assert space[0] == FlightDesign(1, 512, 16, 460.0, 225.0)


def test_derived_board_keeps_the_mm_array_and_sets_the_design() -> None:
    board = derive_flightllm_board(BASE, FlightDesign(1, 2048, 16, 460.0, 300.0))
    assert board.macs_per_cycle == BASE.macs_per_cycle == 4096
    assert (board.pe_array.rows, board.pe_array.cols) == (16, 256)
    assert board.flightllm.mm_tile_rows == board.flightllm.mm_start_rows == 16
    assert board.mv_macs_per_cycle == 2048
    assert board.memory.bandwidth_gb_s == 460.0 and board.clock_mhz == 300.0
    assert board.name == "flightllm-vhk158-mv1x2048-mm16-bw460-f300"


def test_bad_design_names_the_option() -> None:
    with pytest.raises(InputError, match="mm_tile_rows"):
        derive_flightllm_board(BASE, FlightDesign(1, 1024, 48, 819.2, 225.0))
    with pytest.raises(InputError, match="base_board"):
        derive_flightllm_board(load_board("u280"), FlightDesign(1, 1024, 16, 819.2, 225.0))


def test_pareto_front_by_hand() -> None:
    frame = pd.DataFrame(
        {
            "algorithm": ["a"] * 5 + ["b"],
            "context": [1] * 6,
            "dsps_used": [100, 200, 150, 300, 50, 10],
            "speedup": [1.0, 1.5, 0.9, 1.4, 2.0, 0.5],
            "fits_dsps": [True, True, True, True, False, True],
        }
    )
    # the 50-DSP design does not fit; among the rest 100 -> 1.0 and 200 -> 1.5 are the front
    # (150 is slower than 100, 300 slower than 200); group b is on its own
    assert pareto_flags(frame) == [True, True, False, False, False, True]


def test_cheapest_paying_by_hand() -> None:
    frame = pd.DataFrame(
        {
            "algorithm": ["a", "a", "a", "a", "b"],
            "context": [1, 1, 1, 1, 1],
            "dsps_used": [100, 200, 150, 150, 10],
            "speedup": [0.9, 1.5, 1.3, 1.2, 0.5],
            "fits_dsps": [True, True, True, True, True],
            "changes": ["none (the base design)", "x 1->2", "x 1->2; y 3->4", "x 1->4",
                        "none (the base design)"],
        }
    )
    # 150 DSPs is the cheapest paying cost; of the two, the one-field change wins over the
    # faster two-field one; b never pays
    best = cheapest_paying(frame)
    assert best[["algorithm", "dsps_used", "changes"]].values.tolist() == [["a", 150, "x 1->4"]]


@pytest.fixture(scope="module")
def small():
    space = designs([1], [1024, 4096], [16, 128], [819.2], [225.0])
    return explore_designs(BASE, space, MODEL, [load_algorithm("longspec")], [256],
                           engine="fast", executor="inprocess", verify_lens=[2, 4, 8, 16])


def test_small_space(small) -> None:
    s = small.summary
    assert list(s.columns) == DESIGN_SPACE_COLUMNS
    assert len(s) == 4 and set(s["algorithm"]) == {"longspec"}
    assert set(s["best_verify_len"]) <= {2, 4, 8, 16}
    by = s.set_index(["mv_width", "mm_tile_rows"])
    # the published design (mv 1x1024, 128-row tile): 4 pipelines x 1,536 DSP58
    assert by.loc[(1024, 128), "dsps_used"] == 6144
    # a 4x wider MV (256 x 6 = 1,536 DSP58) is the MM chain reconfigured: no more slices,
    # and AD gets faster
    assert by.loc[(4096, 128), "dsps_used"] == 6144
    assert by.loc[(4096, 128), "ad_tokens_per_s"] > by.loc[(1024, 128), "ad_tokens_per_s"]
    # the AD row is the same pass whatever the MM tile
    assert by.loc[(1024, 16), "ad_tokens_per_s"] == by.loc[(1024, 128), "ad_tokens_per_s"]
    assert s["pareto"].any()
    assert by.loc[(1024, 128), "changes"] == "none (the base design)"
    assert by.loc[(4096, 16), "changes"] == "mv_width 1024->4096; mm_tile_rows 128->16"


def test_cli_design_space(tmp_path: Path, capsys) -> None:
    out = tmp_path / "ds.csv"
    res = run_cli(capsys, "explore", "--base-board", "flightllm-vhk158", "--model",
                  "llama2-7b-flightllm", "--mm-tile-rows", "16,128", "--algorithms", "longspec",
                  "--contexts", "256", "--verify-lens", "2,4", "--engine", "fast",
                  "--executor", "inprocess", "--no-cache", "--out", str(out))
    assert res.code == 0, res.err
    frame = pd.read_csv(out)
    assert list(frame.columns) == DESIGN_SPACE_COLUMNS and len(frame) == 2
    assert (tmp_path / "ds.png").stat().st_size > 0


@pytest.mark.parametrize(
    "args",
    [
        # --pe-arrays on a FlightLLM base is the PE-array mode: it needs --bandwidths too
        ["--base-board", "flightllm-vhk158", "--pe-arrays", "64x48", "--bandwidths"],
        ["--base-board", "flightllm-vhk158", "--mv-lanes", "0"],
        ["--base-board", "flightllm-vhk158", "--mm-tile-rows", "48"],
        ["--base-board", "flightllm-vhk158", "--mm-tile-rows", "8"],
        ["--base-board", "flightllm-vhk158", "--mv-widths", "1000"],
        ["--base-board", "flightllm-vhk158", "--clocks", "0"],
        ["--base-board", "flightllm-vhk158", "--verify-lens", "1000"],
        ["--base-board", "v80", "--mv-lanes", "2"],
        ["--base-board", "v80", "--bandwidths", "460", "--pe-arrays"],
    ],
)
def test_cli_bad_input_one_line(tmp_path: Path, capsys, args: list[str]) -> None:
    # an odd list ends with the option the error must name; otherwise it is the last one given
    flag = args[-1] if len(args) % 2 else args[-2]
    given = args[:-1] if len(args) % 2 else args
    res = run_cli(capsys, "explore", *given, "--model", "llama2-7b-flightllm", "--contexts",
                  "256", "--algorithms", "longspec", "--engine", "fast", "--executor",
                  "inprocess", "--no-cache", "--out", str(tmp_path / "o.csv"))
    assert res.code == 2, res.err
    assert len(res.err.strip().splitlines()) == 1
    assert f"argument {flag} " in res.err  # names the option
    assert not (tmp_path / "o.csv").exists()


def test_solve_boards_agrees_with_the_solver() -> None:
    from fpgasim.analysis.design_space import solve_boards

    from fpgasim.analysis.solver import solve

    longspec = load_algorithm("longspec")
    rows = solve_boards([load_board("u280"), load_board("v80")], MODEL, [longspec], [256, 1024],
                        engine="analytic", executor="inprocess")
    assert len(rows) == 4 and rows["dsps_used"].isna().all()  # study boards: not costed
    for board in ("u280", "v80"):
        ref = solve(load_board(board), MODEL, longspec, [256, 1024], engine="analytic").summary
        mine = rows[rows["board"] == board].sort_values("context")
        assert mine["best_verify_len"].tolist() == ref["best_verify_len"].tolist()
        assert mine["speedup"].tolist() == pytest.approx(ref["best_speedup"].tolist(), rel=1e-12)


def test_two_mv_lanes_make_sd_pay_at_no_dsp_cost() -> None:
    # docs/flightllm-sd.md: published (1 lane) -> use AD; 2 lanes -> SD pays, same slices
    space = designs([1, 2], [1024], [128], [819.2], [225.0])
    s = explore_designs(BASE, space, MODEL, [load_algorithm("eagle3")], [256], engine="fast",
                        executor="inprocess", verify_lens=[2, 3, 4]).summary
    by = s.set_index("mv_lanes")
    assert by.loc[1, "speedup"] < 1 < by.loc[2, "speedup"]
    assert by.loc[1, "dsps_used"] == by.loc[2, "dsps_used"] == 6144
    assert by.loc[1, "ad_tokens_per_s"] == by.loc[2, "ad_tokens_per_s"]


def test_design_space_is_cached_and_resumes(tmp_path: Path) -> None:
    from fpgasim.sweep.cache import SweepCache

    space = designs([1, 2], [1024], [128], [819.2], [225.0])
    args = (BASE, space, MODEL, [load_algorithm("longspec")], [256])
    kwargs = {"engine": "fast", "executor": "inprocess", "verify_lens": [2, 4]}
    with SweepCache(tmp_path / "cache") as cache:
        first = explore_designs(*args, cache=cache, **kwargs)
        again = explore_designs(*args, cache=cache, **kwargs)
    assert first.stats.computed == first.stats.points > 0
    assert again.stats.computed == 0 and again.stats.cached == first.stats.points
    pd.testing.assert_frame_equal(first.summary, again.summary)
