"""The AAT model of docs/method.md: AAT(x) = A + B·ln(x − C), fitted with C below the smallest x.

For a fixed C the model is linear in (A, B), so the fit profiles the squared error over
d = min(x) − C > 0 (scipy's bounded Brent search on ln d after a coarse grid) and solves
A, B by least squares at each d. This finds the global least-squares optimum reliably
even from 3-4 points, where a joint nonlinear fit often stalls at the C bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fpgasim.errors import InputError

#: Search range of d = min(x) − C, relative to the spread of the fitted x (plus 1).
MIN_GAP = 1e-6
MAX_GAP_SCALE = 1e5
GRID_POINTS = 241


@dataclass(frozen=True)
class AatFit:
    """A fitted AAT(x) = a + b·ln(x − c) and its quality.

    fit_verify_lens: the x values fitted; r2_fit: R² on them; r2_all: R² on every measured
    point of the curve (equal to r2_fit when nothing else was given).
    """

    a: float
    b: float
    c: float
    fit_verify_lens: tuple[int, ...]
    r2_fit: float
    r2_all: float

    def predict(self, verify_len: float | Sequence[float] | np.ndarray) -> np.ndarray:
        """AAT at x (tokens per iteration); x must exceed c."""
        x = np.asarray(verify_len, dtype=float)
        return self.a + self.b * np.log(x - self.c)

    def slope(self, verify_len: float | Sequence[float] | np.ndarray) -> np.ndarray:
        """dAAT/dx = b / (x − c), tokens per extra verified token."""
        x = np.asarray(verify_len, dtype=float)
        return self.b / (x - self.c)


def r_squared(observed: Sequence[float] | np.ndarray, predicted: Sequence[float]) -> float:
    """Coefficient of determination 1 − SS_res/SS_tot (1.0 for a perfect fit of constants)."""
    y = np.asarray(observed, dtype=float)
    yhat = np.asarray(predicted, dtype=float)
    ss_res = float(np.sum((y - yhat) ** 2))
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    if ss_tot == 0.0:
        return 1.0 if ss_res == 0.0 else 0.0
    return 1.0 - ss_res / ss_tot


def _linear_given_c(x: np.ndarray, y: np.ndarray, c: float) -> tuple[float, float, float]:
    """Least-squares (a, b) for a fixed c, and the squared error."""
    design = np.column_stack([np.ones_like(x), np.log(x - c)])
    (a, b), *_ = np.linalg.lstsq(design, y, rcond=None)
    sse = float(np.sum((design @ np.array([a, b]) - y) ** 2))
    return float(a), float(b), sse


#: Grid points whose closed-form error is within this (relative, and of the total sum of
#: squares) of the least are re-evaluated with lstsq; the closed form is accurate to ~1e-12.
NEAR_MIN = 1e-3


def _ss(y: np.ndarray) -> float:
    return float(np.sum((y - y.mean()) ** 2))


def _grid_sse(x: np.ndarray, y: np.ndarray, x_min: float, gaps: np.ndarray) -> np.ndarray:
    """Least-squares error of y ~ a + b·ln(x − c) at c = x_min − gap for every gap.

    ln(x − c) − ln(x_min − c) = log1p((x − x_min)/gap) keeps the regressor accurate when the
    gap is huge; SSE = S_yy − S_dy² / S_dd (centred sums).
    """
    d = np.log1p((x[None, :] - x_min) / gaps[:, None])
    dc = d - d.mean(axis=1, keepdims=True)
    yc = y - y.mean()
    s_dd = np.sum(dc * dc, axis=1)
    s_dy = dc @ yc
    with np.errstate(divide="ignore", invalid="ignore"):
        out = float(np.sum(yc * yc)) - np.where(s_dd > 0, s_dy * s_dy / s_dd, 0.0)
    return np.maximum(out, 0.0)


def fit_aat(verify_lens: Sequence[float], aat: Sequence[float]) -> AatFit:
    """Fit AAT(x) = A + B·ln(x − C), C < min(x), to at least 3 distinct x (least squares)."""
    from scipy.optimize import minimize_scalar  # lazy: keeps CLI start-up fast

    x = np.asarray(verify_lens, dtype=float)
    y = np.asarray(aat, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("verify_lens and aat must be 1-D of the same length")
    if len(np.unique(x)) < 3:
        raise InputError(
            "fit_points",
            ",".join(str(int(v)) for v in x),
            "at least 3 distinct measured x values (A, B and C are fitted)",
        )
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("verify_lens and aat must be finite")
    x_min = float(x.min())
    span = float(x.max() - x_min) + 1.0
    lo, hi = np.log(MIN_GAP), np.log(MAX_GAP_SCALE * span)

    def sse(log_gap: float) -> float:
        """Squared error of the best (A, B) at C = min(x) − exp(log_gap): the profiled loss."""
        return _linear_given_c(x, y, x_min - float(np.exp(log_gap)))[2]

    grid = np.linspace(lo, hi, GRID_POINTS)
    # the grid's errors in closed form (vectorised); lstsq only where they are near the least,
    # so k is exactly the first argmin of the lstsq errors over the whole grid
    rough = _grid_sse(x, y, x_min, np.exp(grid))
    near = np.flatnonzero(rough <= rough.min() * (1 + NEAR_MIN) + NEAR_MIN * _ss(y))
    exact = np.array([sse(grid[i]) for i in near])
    k = int(near[int(np.argmin(exact))])
    step = grid[1] - grid[0]
    result = minimize_scalar(
        sse,
        bounds=(max(lo, grid[k] - step), min(hi, grid[k] + step)),
        method="bounded",
        options={"xatol": 1e-10},
    )
    log_gap = float(result.x) if result.fun <= float(exact.min()) else float(grid[k])
    c = x_min - float(np.exp(log_gap))
    a, b, _ = _linear_given_c(x, y, c)
    r2 = r_squared(y, a + b * np.log(x - c))
    fitted = tuple(int(v) for v in np.unique(x))
    return AatFit(a=a, b=b, c=c, fit_verify_lens=fitted, r2_fit=r2, r2_all=r2)


def fit_curve(
    verify_lens: Sequence[int],
    aat: Sequence[float],
    fit_points: Sequence[int] | None = None,
) -> AatFit:
    """Fit on the `fit_points` subset of a measured curve (all points if None); R² on both."""
    x = np.asarray(verify_lens, dtype=float)
    y = np.asarray(aat, dtype=float)
    if fit_points is None:
        chosen = np.ones(len(x), dtype=bool)
    else:
        missing = sorted(set(int(p) for p in fit_points) - set(int(v) for v in x))
        if missing:
            raise InputError(
                "fit_points",
                ",".join(map(str, missing)),
                f"x values of the curve: {','.join(str(int(v)) for v in x)}",
            )
        chosen = np.isin(x, np.asarray(list(fit_points), dtype=float))
    fit = fit_aat(x[chosen], y[chosen])
    r2_all = r_squared(y, fit.predict(x))
    return AatFit(fit.a, fit.b, fit.c, fit.fit_verify_lens, fit.r2_fit, r2_all)


def naive_verify_len(fit: AatFit, candidates: Sequence[int], threshold: float = 0.02) -> int:
    """Slope rule: the smallest candidate x with fitted dAAT/dx = B/(x−C) < threshold, else max."""
    if threshold <= 0:
        raise InputError("naive_threshold", threshold, "a positive slope, tokens per token")
    xs = sorted(int(v) for v in candidates)
    if not xs:
        raise ValueError("no candidate x")
    for x in xs:
        if float(fit.slope(x)) < threshold:
            return x
    return xs[-1]
