"""AAT log model: parameter recovery (property test), R², the slope rule of the Naive set."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fpgasim.acceptance.log_model import AatFit, fit_aat, fit_curve, naive_verify_len, r_squared
from fpgasim.errors import InputError

XS = np.array([2, 3, 4, 5, 7, 9, 13, 17, 21, 27, 33, 41, 51, 61, 71, 85], dtype=float)


@settings(max_examples=40, deadline=None)
@given(
    a=st.floats(0.8, 2.0),
    b=st.floats(0.3, 1.2),
    c=st.floats(-1.5, 1.5),
    noise=st.floats(0.0, 0.01),
    seed=st.integers(0, 2**32 - 1),
)
def test_recovers_known_parameters_from_noisy_points(a, b, c, noise, seed) -> None:
    rng = np.random.default_rng(seed)
    y = a + b * np.log(XS - c) + rng.normal(0.0, noise, size=XS.size)
    fit = fit_aat(XS, y)
    assert fit.c < XS.min()
    truth = a + b * np.log(XS - c)
    # predictions within a few noise sigmas everywhere on the fitted range
    assert np.max(np.abs(fit.predict(XS) - truth)) <= 0.02 + 6 * noise
    # parameters: B is well determined; A and C trade off a little under noise
    assert fit.b == pytest.approx(b, abs=0.05 + 8 * noise)
    assert fit.a == pytest.approx(a, abs=0.15 + 25 * noise)
    assert fit.c == pytest.approx(c, abs=0.3 + 60 * noise)
    if noise == 0.0:
        assert fit.r2_fit == pytest.approx(1.0, abs=1e-9)


def test_exact_recovery_without_noise() -> None:
    y = 1.4 + 0.8 * np.log(XS - 0.5)
    fit = fit_aat(XS, y)
    assert (fit.a, fit.b, fit.c) == pytest.approx((1.4, 0.8, 0.5), abs=1e-5)
    assert fit.r2_fit == pytest.approx(1.0)
    assert fit.fit_verify_lens == tuple(int(v) for v in XS)


def test_c_stays_below_smallest_fitted_x() -> None:
    # points that want a pole right at the first x: C is held strictly below it
    x = np.array([5.0, 6.0, 8.0, 12.0, 20.0])
    y = np.array([1.0, 2.0, 2.4, 2.8, 3.1])
    fit = fit_aat(x, y)
    assert fit.c < 5.0
    assert np.all(np.isfinite(fit.predict(x)))


def test_subset_fit_reports_r2_on_fit_and_all() -> None:
    y = 1.5 + 0.7 * np.log(XS - 0.2) + 0.02 * np.sin(XS)
    fit = fit_curve(XS.astype(int), y, [2, 5, 13, 33])
    assert fit.fit_verify_lens == (2, 5, 13, 33)
    assert fit.r2_fit > 0.99 and 0.95 < fit.r2_all < 1.0
    assert fit.r2_all == pytest.approx(r_squared(y, fit.predict(XS)))
    with pytest.raises(InputError, match="fit_points"):
        fit_curve(XS.astype(int), y, [2, 6, 13])  # 6 is not measured
    with pytest.raises(InputError, match="at least 3"):
        fit_curve(XS.astype(int), y, [2, 5])


def test_r_squared_edges() -> None:
    assert r_squared([1, 2, 3], [1, 2, 3]) == 1.0
    assert r_squared([2, 2, 2], [2, 2, 2]) == 1.0
    assert r_squared([1, 2, 3], [2, 2, 2]) == pytest.approx(0.0)


def test_slope_rule_smallest_x_below_threshold() -> None:
    fit = AatFit(a=1.5, b=0.8, c=0.5, fit_verify_lens=(), r2_fit=1.0, r2_all=1.0)
    # slope b/(x-c) < 0.02  <=>  x > c + b/0.02 = 40.5
    candidates = [2, 10, 20, 40, 41, 44, 60, 85]
    assert naive_verify_len(fit, candidates, 0.02) == 41
    assert naive_verify_len(fit, candidates, 0.04) == 40  # x > 20.5 -> the first candidate is 40
    assert naive_verify_len(fit, candidates, 0.005) == 85  # never flattens: the largest x
    assert naive_verify_len(fit, candidates, 1.0) == 2
    with pytest.raises(InputError, match="naive_threshold"):
        naive_verify_len(fit, candidates, 0.0)
    # exactly at the threshold does not count ("drops below")
    at = AatFit(a=0, b=1.0, c=0.0, fit_verify_lens=(), r2_fit=1, r2_all=1)
    assert naive_verify_len(at, [10, 11], 0.1) == 11


def test_grid_search_equals_brute_force_lstsq_grid() -> None:
    """fit_aat's closed-form grid + lstsq near the least picks the same C as lstsq at every
    grid point (the original brute force), on the shipped curves and on noisy random ones."""
    import pandas as pd
    from scipy.optimize import minimize_scalar

    from fpgasim.acceptance import log_model as m
    from tests.conftest import AAT_DIR

    def brute(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
        x_min, span = float(x.min()), float(x.max() - x.min()) + 1.0
        lo, hi = np.log(m.MIN_GAP), np.log(m.MAX_GAP_SCALE * span)

        def sse(g: float) -> float:
            return m._linear_given_c(x, y, x_min - float(np.exp(g)))[2]

        grid = np.linspace(lo, hi, m.GRID_POINTS)
        errors = np.array([sse(g) for g in grid])
        k = int(np.argmin(errors))
        step = grid[1] - grid[0]
        res = minimize_scalar(sse, bounds=(max(lo, grid[k] - step), min(hi, grid[k] + step)),
                              method="bounded", options={"xatol": 1e-10})  # fmt: skip
        g = float(res.x) if res.fun <= errors[k] else float(grid[k])
        c = x_min - float(np.exp(g))
        a, b, _ = m._linear_given_c(x, y, c)
        return a, b, c

    table = pd.read_csv(AAT_DIR / "longspec_llama31_tree.csv")
    curves = [
        (g["verify_len"].to_numpy(float), g["aat"].to_numpy(float))
        for _, g in table[table["method"] == "prior_score"].groupby("context")
    ]
    rng = np.random.default_rng(7)
    for _ in range(20):
        x = np.sort(rng.choice(np.arange(2, 90), size=rng.integers(3, 12), replace=False))
        c = rng.uniform(-5, 1.9)
        y = 1 + rng.uniform(0.2, 1.5) * np.log(x - c) + rng.normal(0, 0.05, len(x))
        curves.append((x.astype(float), y))
    for x, y in curves:
        fit = m.fit_aat(x, y)
        assert (fit.a, fit.b, fit.c) == brute(x, y)
