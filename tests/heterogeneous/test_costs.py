"""Dovetail's performance model: T_V limits, offloading condition, costs, acceptance, solver."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fpgasim.config import load_model
from fpgasim.errors import InputError
from fpgasim.heterogeneous import (
    EAGLE2,
    TreeAcceptance,
    beats_offloading,
    best_config,
    dovetail_drafter,
    draft_pass_time,
    fit_acceptance,
    fit_top1,
    load_dovetail1_inputs,
    load_platform,
    offload_token_time_s,
    overlap_time_s,
    pcie_transfer_s,
    sd_token_latency_s,
    solve_grid,
    verify_time,
)
from fpgasim.heterogeneous.costs import target_pass_work, target_total_params
from fpgasim.heterogeneous.device_time import drafter_fits_gpu

M7 = load_model("llama2-chat-7b")
SERVER = load_platform("xeon4214r-rtx2080s")
LAPTOP = load_platform("i5-9300h-gtx1050m")
FITTED = fit_acceptance(load_dovetail1_inputs())
times = st.floats(min_value=0.0, max_value=1e3, allow_nan=False)


# --------------------------------------------------------------------------- T_V formula


def test_overlap_limits() -> None:
    assert overlap_time_s(0.3, 0.5, 0.0) == 0.5  # beta = 0: max
    assert overlap_time_s(0.3, 0.5, 1.0) == pytest.approx(0.8)  # beta = 1: sum
    assert overlap_time_s(0.5, 0.3, 0.5) == pytest.approx(0.65)
    with pytest.raises(ValueError):
        overlap_time_s(0.3, 0.5, 1.5)


@given(times, times, st.floats(min_value=0, max_value=1))
def test_overlap_between_max_and_sum(tc: float, tp: float, beta: float) -> None:
    t = overlap_time_s(tc, tp, beta)
    assert max(tc, tp) * (1 - 1e-12) <= t <= (tc + tp) * (1 + 1e-12)
    assert t == overlap_time_s(tp, tc, beta)  # symmetric


def test_verify_time_grows_with_gamma_and_context() -> None:
    tv = [verify_time(SERVER, M7, g, 512).total_s for g in (0, 1, 8, 16, 60)]
    assert tv == sorted(tv) and tv[0] < tv[-1]
    assert verify_time(SERVER, M7, 16, 4096).total_s > verify_time(SERVER, M7, 16, 512).total_s
    ad = verify_time(SERVER, M7, 0, 512)
    assert ad.bound == "memory"  # an AD step streams the weights
    assert verify_time(SERVER, M7, 60, 512).bound == "compute"


def test_target_sizes_match_published_params() -> None:
    assert target_total_params(M7) / 1e9 == pytest.approx(M7.params_b, rel=0.01)
    w = target_pass_work(M7, 1, 0, 2.0, 2.0)
    attention = M7.layers * 4 * 1 * 1 * M7.hidden  # one token attending to itself
    assert w.flops == 2 * (target_total_params(M7) - M7.vocab * M7.hidden) + attention


# --------------------------------------------------------------------------- draft, PCIe


def test_draft_time_grows_with_blocks_and_fits_memory() -> None:
    t = [draft_pass_time(SERVER, M7, dovetail_drafter(mb), 512).total_s for mb in range(9)]
    assert t == sorted(t)
    assert draft_pass_time(SERVER, M7, EAGLE2, 512).total_s < t[0]  # fc (2h^2) < DGF (4h^2)
    assert drafter_fits_gpu(SERVER, M7, dovetail_drafter(8), 512)
    # 4 GB laptop GPU: M = 4 (published) fits, M = 8 does not
    assert drafter_fits_gpu(LAPTOP, M7, dovetail_drafter(4), 512)
    assert not drafter_fits_gpu(LAPTOP, M7, dovetail_drafter(8), 512)


def test_pcie_is_token_level() -> None:
    t = pcie_transfer_s(SERVER, M7, 16, 5.9)
    assert 2 * SERVER.pcie.latency_us * 1e-6 < t < 1e-3  # tens of microseconds
    assert pcie_transfer_s(load_platform("rtx4090"), M7, 60, 5.6) == 0.0


# --------------------------------------------------------------------------- offloading


def test_offloading_baseline_and_condition() -> None:
    t_off = offload_token_time_s(SERVER, M7)
    # fp16 weights over PCIe 3.0 x16 at 80%: about 13.2 GB / 12.6 GB/s
    assert t_off == pytest.approx(13.2e9 / (15.75e9 * 0.8), rel=0.02)
    assert beats_offloading(0.88, 5.90, t_off)  # Dovetail's row: 0.88 < 5.9 x 1.05
    assert not beats_offloading(7.0, 5.90, t_off)
    assert beats_offloading(t_off * 5.9 * 0.999, 5.90, t_off)
    assert not beats_offloading(t_off * 5.9, 5.90, t_off)  # strict inequality


def test_sd_latency_magicdec_form() -> None:
    assert sd_token_latency_s(8, 0.0072, 0.88, 5.90) == pytest.approx((8 * 0.0072 + 0.88) / 5.9)
    assert sd_token_latency_s(1, 0.0, 1.0, 1.0, 0.5) == 1.5
    with pytest.raises(ValueError):
        sd_token_latency_s(1, 0.1, 1.0, 0.0)


# --------------------------------------------------------------------------- acceptance


def test_acceptance_curve_is_a_valid_tree_curve() -> None:
    acc = FITTED.tree("Dovetail", 4, 8)
    omega, levels = acc.curve(64)
    assert omega[0] == 1.0 and levels[0] == 0
    gains = [omega[g + 1] - omega[g] for g in range(64)]
    assert all(0 <= x <= 1 for x in gains)
    assert all(gains[i + 1] <= gains[i] + 1e-12 for i in range(63))  # concave (greedy optimal)
    assert all(omega[g] <= g + 1 for g in range(65))
    assert max(levels) <= 8


def test_fit_recovers_published_points_and_checks_held_out() -> None:
    e = FITTED.tree("EAGLE-2", 0, 6)
    assert e.omega(16) == pytest.approx(4.69, abs=1e-6)
    assert FITTED.tree("Dovetail", 4, 8).omega(16) == pytest.approx(5.90, abs=1e-6)
    # held out: EAGLE-2's Omega(60) = 5.61 (2080 host) / 5.59 (4090), one parameter fitted at 16
    assert e.omega(60) == pytest.approx(5.61, rel=0.06)
    # Dovetail's drafter accepts more per position than EAGLE-2's head
    assert FITTED.dovetail_top1 > FITTED.eagle2_top1


@given(st.floats(min_value=0.3, max_value=0.95), st.integers(2, 40), st.integers(2, 10))
def test_fit_top1_roundtrip(top1: float, gamma: int, levels: int) -> None:
    shares = FITTED.shares
    omega = TreeAcceptance(top1, shares, levels).omega(gamma)
    assert fit_top1(gamma, omega, shares, levels) == pytest.approx(top1, abs=1e-6)


def test_block_gain_monotone_and_anchored() -> None:
    g = FITTED.gain
    tops = [g.top1(mb) for mb in range(12)]
    assert tops[0] == pytest.approx(FITTED.eagle2_top1)
    assert tops[4] == pytest.approx(FITTED.dovetail_top1)
    assert tops == sorted(tops) and tops[-1] < 1


# --------------------------------------------------------------------------- solver


def test_solve_grid_and_best_config() -> None:
    grid = solve_grid(SERVER, M7, FITTED, range(2, 65), range(0, 9), 512, depth=7)
    assert len(grid) == 63 * 9
    assert list(grid.columns[:7]) == [
        "platform", "model", "context", "depth", "width", "blocks", "gamma"
    ]  # fmt: skip
    best = best_config(grid)
    assert best["t_sd_s"] == grid["t_sd_s"].min()
    assert best["winner"] == "sd"
    assert best["speedup_vs_ad"] > 1 and best["speedup_vs_offload"] > 1
    assert 2 <= best["gamma"] <= 64
    row = grid[(grid.blocks == 4) & (grid.gamma == 16)].iloc[0]
    assert row.t_sd_s == pytest.approx(
        (row.draft_passes * row.t_draft_pass_s + row.t_verify_s + row.t_pcie_s) / row.omega
    )


def test_solve_gpu_only_host_has_no_offloading() -> None:
    grid = solve_grid(load_platform("rtx4090"), M7, FITTED, [8, 60], [0], 512)
    assert grid["t_offload_s"].isna().all()
    assert best_config(grid)["winner"] == "sd"


def test_solve_rejects_drafters_that_do_not_fit() -> None:
    grid = solve_grid(LAPTOP, M7, FITTED, [4, 8], [20, 30], 512, depth=4)
    assert not grid["drafter_fits_gpu"].any()
    with pytest.raises(InputError, match="fits the GPU"):
        best_config(grid)
    assert math.isfinite(grid["t_sd_s"].min())
