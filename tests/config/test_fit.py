"""A design fitted to a part (config/fit.py, docs/hardware.md "Fitting a design to a part"):
DSP slices per packing rule, hand-computed; arrays, pipelines and channels; what binds; a
design that does not fit is refused or marked, and results say so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from fpgasim.config import board_of, load_board, load_design
from fpgasim.config.fit import DesignDoesNotFit, dsp_rule
from fpgasim.errors import ConfigError
from tests.cli_helpers import run_cli

GIB = 1.024**3


def int8_rule(kind: str):
    return dsp_rule(kind, load_design("flightllm").recipe)


def fp16_rule(kind: str):
    return dsp_rule(kind, load_design("study").recipe)


def test_dsp58_int8_packs_three_terms_of_a_dot_product() -> None:
    # 16 terms -> ceil(16/3) = 6 slices per dot product, whatever the token rows
    rule = int8_rule("DSP58")
    assert rule.slices(1, 64, 16) == 64 * 6
    assert rule.slices(4, 16, 16) == 4 * 16 * 6
    assert rule.slices(1, 1, 3) == 1
    assert rule.slices(1, 1, 4) == 2


def test_dsp48e2_int8_packs_two_tokens_sharing_a_weight() -> None:
    rule = int8_rule("DSP48E2")
    assert rule.slices(1, 64, 16) == 1024  # no partner token
    assert rule.slices(2, 64, 16) == 1024  # the second lane is free
    assert rule.slices(3, 64, 16) == 2048
    assert rule.slices(128, 2, 16) == 64 * 2 * 16


@pytest.mark.parametrize("kind", ["DSP58", "DSP48E2"])
def test_fp16_is_one_slice_per_mac(kind: str) -> None:
    rule = fp16_rule(kind)
    assert rule.slices(128, 4, 16) == 128 * 4 * 16
    assert rule.slices(1, 3, 5) == 15
    assert rule.assumption is (kind == "DSP48E2")  # AMD publishes no fp16 DSP48E2 rule


def test_published_vhk158_design() -> None:
    # MM 128 x 2 x 16 = 4096 MAC/cycle: 128 * 2 * 6 = 1536 DSP58; MV 1 x 64 x 16: 64 * 6 = 384;
    # one shared chain of 1536 per pipeline, 4 built (one per SLR): 6144 of 7392
    f = load_board("flightllm-vhk158").fit
    assert (f.mm_rows, f.mm_cols, f.mv_lanes, f.mv_macs_per_lane) == (128, 32, 1, 1024)
    assert (f.mm_dsps, f.mv_dsps, f.pipelines_built, f.dsps_used) == (1536, 384, 4, 6144)
    assert f.dsps_available == 7392 and f.fits_dsps is True
    # 4 SLRs, but 32 channels feed 32 / (8 A + 1 shared + 1 instruction) = 3.2 pipelines
    assert (f.pipelines, f.binding_resource, f.ports_per_pipeline) == (3.2, "memory channels", 10)
    # the next wider array (N = 3: 128 x 3 x 6 = 2304) does not fit 7392 / 4 = 1848 per SLR
    assert 128 * 3 * 6 > 7392 // 4


def test_flightllm_u280_design() -> None:
    # DSP48E2: MM ceil(128/2) * 2 * 16 = 2048, MV 64 * 16 = 1024; 3 pipelines x 2048 = 6144
    # (the derivation of boards/flightllm-u280.yaml states the same 6,144 of 9,024)
    f = load_board("flightllm-u280").fit
    assert (f.mm_dsps, f.mv_dsps, f.pipelines_built, f.dsps_used) == (2048, 1024, 3, 6144)
    assert (f.pipelines, f.binding_resource) == (3.0, "SLRs")
    assert f.fits_dsps is True and f.fits is True
    assert 64 * 3 * 16 > 9024 // 3  # N = 3 would not fit one SLR's share


def test_design_fit_cli_is_the_flightllm_u280_derivation(capsys) -> None:
    res = run_cli(capsys, "design", "fit", "--fpga", "u280", "--design", "flightllm",
                  "--format", "json")
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert {k: out[k] for k in ("pipelines", "channels_per_pipeline", "dsps_used",
                                "dsps_available", "fits", "binding_resource")} == {
        "pipelines": 3.0, "channels_per_pipeline": 10, "dsps_used": 6144,
        "dsps_available": 9024, "fits": True, "binding_resource": "SLRs"}


def test_a_design_that_does_not_fit_is_flagged() -> None:
    # a fixed 128 x 128 MM array and a 16384-MAC MV lane: max(128 x 8 x 6, 1024 x 6) = 6144
    # per pipeline, x 4 pipelines = 24,576 DSP58 > 7,392
    f = load_board("flightllm-vhk158", [("design.mm_cols", 128),
                                        ("design.mv_macs_per_lane", 16384)]).fit
    assert (f.mm_dsps, f.mv_dsps) == (128 * 8 * 6, 1024 * 6)
    assert f.dsps_used == 4 * 6144 and f.fits_dsps is False and f.fits is False


def test_mv_lanes_up_to_the_mm_chain_are_free() -> None:
    # a 4096 MAC/cycle MV lane (4 x the published) uses 256 x 6 = 1536 DSP58: the MM chain's
    lane = [("design.mv_macs_per_lane", 4096)]
    assert load_board("flightllm-vhk158", lane).fit.dsps_used == 6144
    # a wider lane than the MM chain costs its own slices (the MM array fixed at 128 x 32)
    wide = [("design.mm_cols", 32), ("design.mv_macs_per_lane", 8192)]
    assert load_board("flightllm-vhk158", wide).fit.dsps_used == 4 * 3072
    # four lanes of 1024 (flightllm-mv4) on DSP58: 4 x 64 x 6 = 1536, free again
    assert board_of("vhk158", "flightllm-mv4").fit.mv_dsps == 1536
    # on DSP48E2, two lanes share a weight: 2 lanes cost what 1 does
    one, two = (load_board("flightllm-u280", [("design.mv_lanes", n)]).fit for n in (1, 2))
    assert one.mv_dsps == two.mv_dsps == 1024


@pytest.mark.parametrize(("name", "mm", "mv", "fits"), [
    # the study's fp16 arrays, one slice per MAC, one pipeline: the chain is the MM array
    ("u280", 64 * 48, 768, True),
    ("vhk158", 128 * 64, 2048, False),  # 8,192 > 7,392
    ("v80", 128 * 128, 4096, False),    # 16,384 > 10,848
    ("u250", 128 * 128, 4096, False),   # 16,384 > 12,288
])
def test_study_boards_are_costed_and_marked(name: str, mm: int, mv: int, fits: bool) -> None:
    board = load_board(name)
    f = board.fit
    assert (f.mm_dsps, f.mv_dsps, f.pipelines_built, f.dsps_used) == (mm, mv, 1, mm)
    assert f.fits_dsps is fits
    assert f.mm_source == f"design table for {name}"
    assert board.columns()["fits_dsps"] is fits


def test_a_one_pipeline_design_scales_the_closest_listed_part() -> None:
    # U55C has the U280's 9,024 DSP48E2: the U280's 64x48
    f = board_of("u55c", "study").fit
    assert (f.mm_rows, f.mm_cols) == (64, 48) and "u280" in f.mm_source
    # VCK190 (1,968 DSP58): closest DSP58 part is the VHK158 (7,392; 128x64):
    # 64 x 1968 / 7392 = 17.04 -> 16 columns (whole 16-blocks)
    f = board_of("vck190", "study").fit
    assert (f.mm_rows, f.mm_cols) == (128, 16) and "vhk158" in f.mm_source


def test_a_ddr_part_shares_its_channels() -> None:
    """U250: 4 DDR4 channels < the 10 ports of one FlightLLM pipeline: one effective
    pipeline, each port at the memory's bandwidth / 10 (the data sheet's decimal GB/s), and
    one built: before, four were built (12,288 of 12,288 DSPs) and three idled."""
    f = board_of("u250", "flightllm").fit
    assert (f.pipelines, f.binding_resource, f.ports_per_pipeline) == (1.0, "memory channels", 10)
    assert f.port_bytes_per_s == pytest.approx(77 * 1e9 / 10, rel=1e-12)
    assert (f.bandwidth_reading, f.transfer_basis) == ("decimal", "assumed")
    assert f.pipelines_built == 1
    # the array fits what the platform leaves in an SLR (2,877 of 3,072): N = 2, not 3
    assert (f.slr_dsps, f.mm_cols, f.mm_dsps) == (2877, 32, 64 * 2 * 16)
    assert (f.dsps_used, f.dsps_available, f.platform_dsps) == (2048, 4 * 2877, 780)
def test_the_platform_share_is_not_fitted_to() -> None:
    """A design may use what the card's platform leaves (docs/hardware.md): the study's
    one-pipeline array is checked against 11,508 DSPs on the U250, not 12,288; a per-SLR
    design's chain against its SLR's share. A part without platform figures keeps its own
    count (the U280's shell keeps 4 DSPs by a third-party resource file, not used)."""
    assert board_of("u250", "study").fit.dsps_available == 11508
    changed = board_of("u250", "flightllm", [("design.mm_cols", 48)])
    assert changed.fit.mm_dsps == 3072 and changed.fit.fits_dsps is False  # 3072 > 2877
    assert board_of("u280", "flightllm").fit.dsps_available == 9024


def test_unpublished_dsp_count_gives_no_verdict() -> None:
    """U50: no DSP count in the sources. A fixed array is fitted without a DSP verdict; an
    array the fit must size from the DSPs is refused naming the field."""
    board = board_of("u50", "flightllm", [("design.mm_cols", 32)])
    assert board.fit.fits_dsps is None and board.fit.fits is None
    assert board.fit.dsps_used == 2 * 2048  # 2 SLRs
    with pytest.raises(ConfigError) as info:
        board_of("u50", "flightllm")
    assert info.value.field == "dsps" and "give mm_cols" in str(info.value)


def _part(tmp_path: Path, repo: Path, **changes) -> str:
    data = yaml.safe_load((repo / "fpgas" / "u280.yaml").read_text())
    data.update(changes)
    path = tmp_path / "part.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_too_few_dsps_for_one_pipeline_is_refused(tmp_path: Path, repo: Path) -> None:
    # the smallest FlightLLM array, 128 x 16 int8 on DSP48E2: 64 x 1 x 16 = 1024 per SLR
    part = _part(tmp_path, repo, dsps=3000)
    with pytest.raises(DesignDoesNotFit) as info:
        board_of(part, "flightllm")
    text = str(info.value)
    assert info.value.field == "dsps" and "= 3000" in text
    assert "at least 1024 per SLR a design may use" in text and "leaves 1000" in text
    assert "\n" not in text


def test_too_little_onchip_ram(tmp_path: Path, repo: Path) -> None:
    # one FlightLLM pipeline's buffers: 75.5 Mb on the U280 (8 A channels)
    with pytest.raises(DesignDoesNotFit) as info:
        board_of(_part(tmp_path, repo, bram36=100, uram=100), "flightllm")
    assert info.value.field == "bram36/uram" and "75.5 Mb" in str(info.value)
    # room for two of three pipelines: the on-chip RAM binds
    f = board_of(_part(tmp_path, repo, bram36=0, uram=2 * 76 * 1024 // 288 + 1),
                 "flightllm").fit
    assert (f.pipelines_built, f.pipelines, f.binding_resource) == (2, 2.0, "on-chip RAM")


@pytest.mark.slow
def test_boards_and_simulate_show_the_dsps(capsys, tmp_path: Path) -> None:
    res = run_cli(capsys, "boards", "--json")
    assert res.code == 0, res.err
    rows = {r["board"]: r for r in json.loads(res.out)["boards"]}
    assert rows["flightllm-vhk158"]["dsps_used"] == 6144
    assert rows["u280"]["dsps_used"] == 3072 and rows["u280"]["fits"] is True
    assert rows["vhk158"]["fits"] is False
    big = tmp_path / "big.yaml"
    big.write_text("extends: flightllm\nname: big\nmm_cols: 128\nmv_macs_per_lane: 16384\n")
    res = run_cli(capsys, "simulate", "--fpga", "vhk158", "--design", str(big), "-m",
                  "llama2-7b-flightllm", "-L", "127", "--engine", "analytic", "--format", "json")
    assert res.code == 0, res.err
    row = json.loads(res.out)
    assert (row["fits_dsps"], row["dsps_used"], row["dsps_available"]) == (False, 24576, 7392)
    assert "24,576 DSP58 slices (4 pipeline(s) x max(MM 6,144, MV 6,144))" in res.err
    assert "7,392" in res.err
