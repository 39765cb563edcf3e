"""Rooflines of docs/method.md: P(x) = x/T_v(x), its piecewise fit, P_disc, AR and P_eff.

All speeds are tokens per second, all times seconds. The piecewise fit is
`P(x) = a·x + b` for x < x_R and `P(x) = P_max` for x >= x_R; the ridge x_R is the
boundary (one of the sampled x) with the least squared error, ties to the smaller x; a
candidate whose linear part does not rise (a <= 0) is rejected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fpgasim.acceptance.log_model import r_squared
from fpgasim.config.board import Board
from fpgasim.config.schema import TargetModel
from fpgasim.engine import Engine
from fpgasim.engine.analytic import WEIGHT_EFFICIENCY, WEIGHT_SHARE
from fpgasim.simulate import verify_timing

#: Relative tolerance under which two candidate ridges fit equally well (ties -> smaller x_R).
TIE_RTOL = 1e-9


def ridge_tokens(board: Board) -> float:
    """The board sheet's ridge: x at which a weight-streaming pass would turn compute-bound
    if the array ran at its peak, MAC/cycle over weight elements streamed per cycle (the
    weight group's sustained bytes/cycle over bytes per weight). Not x_R: x_R is measured
    on an engine's roofline, where padding, MV-rate passes, attention and the SFU move it
    (docs/glossary.md, "ridge")."""
    weight_bytes_per_cycle = (board.bandwidth_bytes_per_s / board.clock_hz
                              * WEIGHT_SHARE * WEIGHT_EFFICIENCY)
    elems_per_cycle = weight_bytes_per_cycle / (board.recipe.weight_bits / 8)
    return board.peak_macs_per_cycle / elems_per_cycle


@dataclass(frozen=True)
class RooflineFit:
    """Piecewise fit of the primary roofline: a·x + b below x_ridge, p_max from x_ridge on.

    x_ridge is None when no flat part was found (the roofline rises over every sampled x).
    """

    a: float
    b: float
    p_max_tokens_per_s: float
    x_ridge: int | None
    r2: float

    def predict(self, verify_len: float | Sequence[float] | np.ndarray) -> np.ndarray:
        """Fitted P(x), tokens per second."""
        x = np.asarray(verify_len, dtype=float)
        line = self.a * x + self.b
        if self.x_ridge is None:
            return line
        return np.where(x < self.x_ridge, line, self.p_max_tokens_per_s)


def primary_roofline(
    engine: Engine,
    board: Board,
    model: TargetModel,
    context: int,
    verify_lens: Sequence[int],
    batch: int = 1,
) -> pd.DataFrame:
    """One row per x: context, verify_len, verify_s = T_v(x), p_tokens_per_s = x/T_v(x)
    (each request's, for a batch of `batch`)."""
    rows = []
    for x in sorted(set(int(v) for v in verify_lens)):
        seconds = verify_timing(engine, board, model, x, context, batch=batch).seconds
        rows.append(
            {
                "context": context,
                "verify_len": x,
                "verify_s": seconds,
                "p_tokens_per_s": x / seconds,
            }
        )
    return pd.DataFrame(rows)


def _segment_fit(x: np.ndarray, p: np.ndarray, k: int) -> tuple[float, float, float, float]:
    """(a, b, p_max, sse) with x[:k] on the line and x[k:] on the flat part."""
    lin_x, lin_p, flat_p = x[:k], p[:k], p[k:]
    p_max = float(flat_p.mean()) if len(flat_p) else float("nan")
    if len(lin_x) >= 2:
        a, b = np.polyfit(lin_x, lin_p, 1)
    elif len(lin_x) == 1:
        a, b = 0.0, float(lin_p[0])
    else:
        a, b = 0.0, p_max
    sse = float(np.sum((a * lin_x + b - lin_p) ** 2))
    if len(flat_p):
        sse += float(np.sum((flat_p - p_max) ** 2))
    return float(a), float(b), p_max, sse


def fit_roofline(verify_lens: Sequence[int], p_tokens_per_s: Sequence[float]) -> RooflineFit:
    """Search the ridge x_R over the sampled x (flat part >= 2 points, or none)."""
    order = np.argsort(np.asarray(verify_lens, dtype=float))
    x = np.asarray(verify_lens, dtype=float)[order]
    p = np.asarray(p_tokens_per_s, dtype=float)[order]
    if len(x) < 2:
        raise ValueError("the roofline fit needs at least two x")
    best: tuple[float, int | None, tuple[float, float, float]] | None = None
    scale = float(np.sum((p - p.mean()) ** 2)) + float(np.sum(p**2)) * 1e-30
    for k in [*range(0, len(x) - 1), len(x)]:  # k = first flat index; len(x) = no flat part
        a, b, p_max, sse = _segment_fit(x, p, k)
        if k >= 2 and a <= 0:  # below the ridge the roofline rises by definition
            continue
        ridge = int(x[k]) if k < len(x) else None
        if best is None or sse < best[0] - TIE_RTOL * scale:
            best = (sse, ridge, (a, b, p_max))
    assert best is not None
    _, ridge, (a, b, p_max) = best
    if ridge is None:
        p_max = float(a * x[-1] + b)
    fit = RooflineFit(a=a, b=b, p_max_tokens_per_s=p_max, x_ridge=ridge, r2=0.0)
    return RooflineFit(a, b, p_max, ridge, r_squared(p, fit.predict(x)))


def effective(
    verify_len: Sequence[int] | np.ndarray,
    verify_s: Sequence[float] | np.ndarray,
    draft_s: Sequence[float] | np.ndarray,
    aat: Sequence[float] | np.ndarray,
) -> pd.DataFrame:
    """P, P_disc = x/(T_v+T_d), AR = AAT/x and P_eff = AAT/(T_v+T_d) per x (tokens/s)."""
    x = np.asarray(verify_len, dtype=float)
    tv = np.asarray(verify_s, dtype=float)
    td = np.asarray(draft_s, dtype=float)
    acc = np.asarray(aat, dtype=float)
    step = tv + td
    return pd.DataFrame(
        {
            "p_tokens_per_s": x / tv,
            "p_disc_tokens_per_s": x / step,
            "ar": acc / x,
            "p_eff_tokens_per_s": acc / step,
        }
    )
