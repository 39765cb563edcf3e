"""Rooflines: the piecewise fit and its ridge search, P_disc/AR/P_eff, the engine-built P(x)."""

from __future__ import annotations

import numpy as np
import pytest

from fpgasim.config import load_board, load_model
from fpgasim.engine import get_engine
from fpgasim.solving.roofline import effective, fit_roofline, primary_roofline


def test_ridge_found_by_search() -> None:
    x = np.arange(1, 41)
    p = np.minimum(30.0 * x + 5.0, 30.0 * 12 + 5.0)
    fit = fit_roofline(x, p)
    assert fit.x_ridge in (12, 13)  # the kink sits at x=12 (both fit it exactly)
    assert fit.a == pytest.approx(30.0) and fit.b == pytest.approx(5.0)
    assert fit.p_max_tokens_per_s == pytest.approx(365.0)
    assert fit.r2 == pytest.approx(1.0)
    np.testing.assert_allclose(fit.predict(x), p)


def test_no_flat_part_and_all_flat() -> None:
    x = np.arange(1, 30)
    rising = fit_roofline(x, 10.0 * x + 3)
    assert rising.x_ridge is None
    assert rising.p_max_tokens_per_s == pytest.approx(10.0 * 29 + 3)
    flat = fit_roofline(x, 40.0 - 0.001 * x)  # compute-bound: P(x) ~ P(1)
    assert flat.x_ridge is not None and flat.x_ridge <= 2
    assert flat.p_max_tokens_per_s == pytest.approx(40.0, rel=1e-3)


def test_effective_definitions() -> None:
    out = effective([1, 4], [0.02, 0.03], [0.0, 0.01], [1.0, 3.0])
    assert out["p_tokens_per_s"].tolist() == pytest.approx([50.0, 4 / 0.03])
    assert out["p_disc_tokens_per_s"].tolist() == pytest.approx([50.0, 100.0])
    assert out["ar"].tolist() == pytest.approx([1.0, 0.75])
    assert out["p_eff_tokens_per_s"].tolist() == pytest.approx([50.0, 75.0])
    # P_eff = P_disc * AR
    np.testing.assert_allclose(out["p_eff_tokens_per_s"], out["p_disc_tokens_per_s"] * out["ar"])


def test_primary_roofline_calibration_and_shape() -> None:
    eng = get_engine("analytic")
    frame = primary_roofline(eng, load_board("u280"), load_model("llama-3.1-8b"), 256, range(1, 33))
    assert list(frame.columns) == ["context", "verify_len", "verify_s", "p_tokens_per_s"]
    assert frame.loc[0, "p_tokens_per_s"] == pytest.approx(22.12, abs=0.05)  # AD calibration
    fit = fit_roofline(frame["verify_len"], frame["p_tokens_per_s"])
    assert fit.a > 0 and fit.r2 > 0.99
    p = frame.set_index("verify_len")["p_tokens_per_s"]
    assert p.loc[: fit.x_ridge - 1].is_monotonic_increasing
    flat = p.loc[fit.x_ridge :]
    assert flat.max() / flat.min() < 1.01  # flat (within 1%) from the ridge on
