"""DSP resources of FlightLLM arrays: hand-computed slice counts per packing rule."""

from __future__ import annotations

import pytest
from fpgasim.config.resources import (
    DSP_RULES,
    ArrayShape,
    array_dsps,
    board_resources,
    resource_columns,
)

from fpgasim.config import load_board
from fpgasim.config.board import Board
from fpgasim.errors import ConfigError


def variant(name: str = "flightllm-vhk158", **changes) -> Board:
    data = load_board(name).model_dump(by_alias=True)
    for key, value in changes.items():
        node = data
        *path, last = key.split(".")
        for part in path:
            node = node[part]
        node[last] = value
    return Board.model_validate(data)


def test_dsp58_packs_three_terms_of_a_dot_product() -> None:
    # 16 terms -> ceil(16/3) = 6 slices per dot product, whatever the token rows
    rule = DSP_RULES["DSP58"]
    assert array_dsps(ArrayShape("MV", 1, 64, 16), rule) == 64 * 6
    assert array_dsps(ArrayShape("MV", 4, 16, 16), rule) == 4 * 16 * 6
    assert array_dsps(ArrayShape("X", 1, 1, 3), rule) == 1
    assert array_dsps(ArrayShape("X", 1, 1, 4), rule) == 2


def test_dsp48e2_packs_two_tokens_sharing_a_weight() -> None:
    rule = DSP_RULES["DSP48E2"]
    assert array_dsps(ArrayShape("MV", 1, 64, 16), rule) == 1024  # no partner token
    assert array_dsps(ArrayShape("MV", 2, 64, 16), rule) == 1024  # the second lane is free
    assert array_dsps(ArrayShape("MV", 3, 64, 16), rule) == 2048
    assert array_dsps(ArrayShape("MM", 128, 2, 16), rule) == 64 * 2 * 16


def test_published_vhk158_design() -> None:
    # MM 128 x 2 x 16 = 4096 MAC/cycle: 128 * 2 * 6 = 1536 DSP58; MV 1 x 64 x 16: 64 * 6 = 384;
    # one shared chain of 1536 per pipeline, ceil(3.2) = 4 pipelines: 6144 of 7392
    res = board_resources(load_board("flightllm-vhk158"))
    assert res is not None
    assert (res.mm.tokens, res.mm.outputs, res.mm.k) == (128, 2, 16)
    assert (res.mv.tokens, res.mv.outputs, res.mv.k) == (1, 64, 16)
    assert (res.mm_dsps, res.mv_dsps, res.pipelines) == (1536, 384, 4)
    assert res.pipeline_dsps == 1536 and res.dsps_used == 6144
    assert res.dsps_available == 7392 and res.fits_dsps is True
    assert res.dsp_share == pytest.approx(6144 / 7392)
    # separate MV arrays (the sensitivity): 4 x (1536 + 384) = 7680 > 7392
    apart = board_resources(load_board("flightllm-vhk158"), separate_mv=True)
    assert apart.dsps_used == 7680 and apart.fits_dsps is False


def test_flightllm_u280_design() -> None:
    # DSP48E2: MM ceil(128/2) * 2 * 16 = 2048, MV 64 * 16 = 1024; 3 pipelines x 2048 = 6144
    # (the derivation of boards/flightllm-u280.yaml states the same 6,144 of 9,024)
    res = board_resources(load_board("flightllm-u280"))
    assert (res.mm_dsps, res.mv_dsps, res.pipelines, res.dsps_used) == (2048, 1024, 3, 6144)
    assert res.fits_dsps is True


def test_a_design_that_does_not_fit_is_flagged() -> None:
    # 4x the MM array and 16x the MV array: max(128 x 8 x 6, 1024 x 6) = 6144 per pipeline,
    # x 4 pipelines = 24,576 DSP58 > 7,392
    board = variant(**{"pe_array": {"rows": 128, "cols": 128}, "mv_macs_per_cycle": 16384})
    cols = resource_columns(board)
    assert cols["mm_dsps"] == 128 * 8 * 6
    assert cols["mv_dsps"] == 1024 * 6
    assert cols["dsps_used"] == 4 * 6144
    assert cols["fits_dsps"] is False


def test_mv_lanes_up_to_the_mm_chain_are_free() -> None:
    # a 4096 MAC/cycle MV (4 x the published) uses 256 x 6 = 1536 DSP58: the MM chain's count
    assert resource_columns(variant(mv_macs_per_cycle=4096))["dsps_used"] == 6144
    assert resource_columns(variant(mv_macs_per_cycle=8192))["dsps_used"] == 4 * 3072


def test_ultrascale_board_counts_with_dsp48e2() -> None:
    board = variant(dsp_kind="DSP48E2", dsps=9024, duration_divisor=1.0)
    res = board_resources(board)
    assert res is not None
    assert (res.mm_dsps, res.mv_dsps, res.dsps_used) == (2048, 1024, 2048)
    assert res.fits_dsps is True


def test_unpublished_count_gives_no_verdict() -> None:
    res = board_resources(variant(dsps=None))
    assert res is not None and res.fits_dsps is None and res.dsps_used == 6144


def test_study_boards_are_not_costed() -> None:
    assert board_resources(load_board("u280")) is None
    assert resource_columns(load_board("u280"))["dsps_used"] is None


def test_bad_inputs_name_the_field() -> None:
    with pytest.raises(ConfigError, match="dsp_kind"):
        board_resources(variant(dsp_kind="DSP48E1"))
    # a MV array that is not whole lanes of blocks: the board refuses it (one source of truth)
    with pytest.raises(ValueError, match="mv_macs_per_cycle"):
        variant(mv_macs_per_cycle=1000)


def test_boards_and_simulate_show_the_dsps(capsys, tmp_path) -> None:
    import json

    import yaml

    from tests.cli_helpers import run_cli

    res = run_cli(capsys, "boards", "--json")
    rows = {r["board"]: r for r in json.loads(res.out)}
    assert rows["flightllm-vhk158"]["dsps_used"] == 6144
    assert rows["flightllm-vhk158"]["fits_dsps"] is True
    assert rows["u280"]["dsps_used"] is None  # study lowering: fp16, not costed
    big = variant(**{"pe_array": {"rows": 128, "cols": 128}, "mv_macs_per_cycle": 16384})
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(big.model_dump(by_alias=True)))
    res = run_cli(capsys, "simulate", "-b", str(path), "-m", "llama2-7b-flightllm", "-L", "127",
                  "--engine", "fast", "--format", "json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["fits_dsps"] is False
    assert "24,576 DSP58 slices (4 pipeline(s) x max(MM 6,144, MV 6,144))" in res.err
    assert "7,392" in res.err


@pytest.mark.parametrize(
    ("name", "mm", "mv"),
    [
        # U280 DSP48E2: MM 64 x 3 x 16 -> 32 * 3 * 16; MV 1 x 48 x 16 -> 48 * 16 (no pairing)
        ("u280-flc", 1536, 768),
        # VHK158 DSP58: MM 128 x 4 x ceil(16/3); MV 1 x 128 x 6
        ("vhk158-flc", 3072, 768),
        ("v80-flc", 6144, 1536),
        ("u250-flc", 8192, 4096),
    ],
)
def test_study_boards_on_the_flightllm_compiler(name: str, mm: int, mv: int) -> None:
    # one pipeline (no divisor): the shared chain is the MM array
    res = board_resources(load_board(name))
    assert res is not None
    assert (res.mm_dsps, res.mv_dsps, res.pipelines, res.dsps_used) == (mm, mv, 1, mm)
    assert res.fits_dsps is True
