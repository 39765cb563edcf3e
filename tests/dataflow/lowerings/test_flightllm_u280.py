"""boards/flightllm-u280.yaml (FlightLLM's design fitted to the U280) follows from the U280's
data-sheet facts by the formulas of docs/validation.md ("FlightLLM on U280"), and differs
from FlightLLM's VHK158 model only there.

The facts are restated here from the data sheet (DS963, UG1393, as fpgas/u280.yaml cites
them) and FlightLLM's artefact, so a change to the files or the fit that breaks a
derivation fails here.
"""

from __future__ import annotations

import pytest

from fpgasim.config import load_board, load_model
from fpgasim.dataflow.lowerings.flightllm.compiler import Rates
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.fast import FastEngine

U280 = load_board("flightllm-u280")
VHK158 = load_board("flightllm-vhk158")
MODEL = load_model("llama2-7b-flightllm")

# data-sheet facts (DS963 / PG276) and FlightLLM's U280 artefact
U280_SLRS = 3
U280_DSP48E2 = 9024
U280_PSEUDO_CHANNELS = 32
U280_HBM_B_PER_S = 460e9  # decimal GB/s
U280_HBM_GIB = 8
# AMD's measured HBM access (fpgas/u280.yaml, docs/hbm_patterns.csv): one pseudo-channel streamed
# sequentially at 13.10 of 14.375 GB/s; a lateral crossing of the switch at half (PG276)
U280_SEQUENTIAL_EFFICIENCY, PG276_LATERAL_SHARE = 0.9115, 0.5
#: FlightLLM's VHK158 constants (its profiler's config, docs/flightllm-model.md section 1)
FLIGHTLLM_SAME, FLIGHTLLM_CROSS = 0.7, 0.35
U280_BRAM36, U280_URAM = 2016, 960  # 36 Kb and 288 Kb blocks
ARTEFACT_LOGICAL_CHANNELS = 8  # pseudo-channels 0, 4, ..., 28
# FlightLLM's channel map of one pipeline (its config, section 1): A/global, B group, instructions
CHANNELS_PER_PIPELINE_EXTRA = 2


def pipelines(board) -> float:
    """The divisor hypothesis: pipelines = min(SLRs, HBM channels / channels per pipeline)."""
    return min(board.fpga.slrs, board.fpga.memory.channels / (board.fit.channels_a
                                                              + CHANNELS_PER_PIPELINE_EXTRA))


def test_divisor_hypothesis_reproduces_vhk158_and_gives_the_u280_value() -> None:
    assert pipelines(VHK158) == pytest.approx(3.2, rel=1e-12)  # 32 / 10 < 4 SLRs
    assert VHK158.duration_divisor == pytest.approx(pipelines(VHK158), rel=1e-12)
    assert U280.fpga.slrs == U280_SLRS
    assert U280.duration_divisor == pipelines(U280) == 3  # 3 SLRs < 32 / 10
    # the three pipelines' channels fit the U280's pseudo-channels
    assert U280_SLRS * (ARTEFACT_LOGICAL_CHANNELS + CHANNELS_PER_PIPELINE_EXTRA) <= 32


def test_memory_rates_follow_the_data_sheet() -> None:
    rates = Rates.of(U280)
    assert rates.channel_bytes_per_s == pytest.approx(U280_HBM_B_PER_S / U280_PSEUDO_CHANNELS,
                                                      rel=1e-12)  # 14.375 GB/s
    assert U280.memory.channels == U280_PSEUDO_CHANNELS
    assert U280.memory.capacity_gib == U280_HBM_GIB
    assert U280.fit.channels_a == ARTEFACT_LOGICAL_CHANNELS


def test_arrays_and_buffers_fit_the_device() -> None:
    buffers, channels_a = U280.design.buffers, U280.fit.channels_a
    # WP486: two INT8 MACs sharing a weight per DSP48E2 (MM rows share weights); MV on the
    # same DSP chains
    per_pipeline = U280.mm_macs_per_cycle // 2
    assert per_pipeline <= U280_DSP48E2 / U280_SLRS  # one pipeline per SLR
    assert U280_SLRS * per_pipeline == U280.fit.dsps_used <= U280.fpga.dsps == U280_DSP48E2
    assert U280_SLRS * (per_pipeline + U280.mv_macs_per_cycle) > U280_DSP48E2  # separate MV: no
    # buffer bytes per pipeline from section 1's depths and widths (A and global over 8
    # channels at 256 B, B 32 B, meta 16 B, FSB 1 B, bias 64 B)
    a = buffers.a * 256 * channels_a
    glob = buffers.global_ * 256 * channels_a
    b = buffers.b * 32
    meta = buffers.meta * 16
    fsb = buffers.fsb * 1
    bias = 4096 * 64
    mbit = U280_SLRS * (a + glob + b + meta + fsb + bias) * 8 / 2**20
    onchip = (U280_BRAM36 * 36 + U280_URAM * 288) / 1024  # Mb (2**20 bits)
    assert U280.fit.onchip_mb_used == pytest.approx(mbit, rel=1e-12)
    assert mbit <= onchip == U280.fpga.onchip_mb


@pytest.mark.parametrize("T", [128, 512])
def test_u280_decode_is_the_vhk158_stream_at_u280_rates(T: int) -> None:
    """Same compiler parameters, so the same instructions: LD/ST time scales by the HBM
    rate ratio and the transfer efficiencies' (the U280's measured access model over
    FlightLLM's constants; both transfer classes alike, as 0.35 is half of 0.7 and a lateral
    crossing half of a stream), MV/MISC cycles are equal (same clock), seconds divide by 3
    not 3.2."""
    spec = PassSpec("target", 1, T - 1)
    u = FastEngine().run_pass(spec, U280, MODEL)
    v = FastEngine().run_pass(spec, VHK158, MODEL)
    assert FLIGHTLLM_CROSS / FLIGHTLLM_SAME == PG276_LATERAL_SHARE
    rate_ratio = ((819.2 * 2**30) / U280_HBM_B_PER_S) * (
        FLIGHTLLM_SAME / U280_SEQUENTIAL_EFFICIENCY)
    assert u.ld_cycles == pytest.approx(v.ld_cycles * rate_ratio, rel=1e-9)
    assert u.st_cycles == pytest.approx(v.st_cycles * rate_ratio, rel=1e-9)
    assert u.compute_cycles == pytest.approx(v.compute_cycles, rel=1e-12)
    assert u.sfu_cycles == pytest.approx(v.sfu_cycles, rel=1e-12)
    # decode on U280 is load-bound (8 x 0.7 x 2 x 14.375 GB/s < 1024 weights per cycle)
    assert u.ld_cycles > u.compute_cycles and v.ld_cycles < v.compute_cycles
    assert u.seconds == pytest.approx(u.cycles / (225e6 * 3), rel=1e-12)


def test_cli_simulate_on_the_u280_board(capsys) -> None:
    import json

    from tests.cli_helpers import run_cli

    res = run_cli(capsys, "simulate", "--board", "flightllm-u280", "--model",
                  "llama2-7b-flightllm", "--context", "511", "--verify-len", "1",
                  "--engine", "fast", "--format", "json")
    assert res.code == 0, res.err
    row = json.loads(res.out)
    assert row["fits_memory"] is True and row["bound"] == "load"
    assert row["verify_tokens_per_s"] == pytest.approx(1 / row["verify_s"])
