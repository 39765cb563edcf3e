"""Falcon's embedded SAR acceptance: calibrated to the published tau for k = 2, 3, 4."""

from __future__ import annotations

import numpy as np
import pytest

from fpgasim.config import load_algorithm
from fpgasim.tree.embedded import default_tree_aat, embedded_curve, embedded_model
from fpgasim.tree.sar import (
    FALCON_ACCEPTANCE_RANGE,
    FALCON_ALPHA,
    FALCON_TAU,
    block_position,
    calibrate_beta,
    calibrate_falcon,
    falcon_calibration_rows,
    sar_rows,
)

NAMES = {2: "falcon", 3: "falcon-k3", 4: "falcon-k4"}


@pytest.mark.parametrize("k", [2, 3, 4])
def test_shipped_model_reproduces_published_tau(k: int) -> None:
    algo = load_algorithm(NAMES[k])
    acc = algo.acceptance
    assert acc is not None and acc.tau_target == FALCON_TAU[k]
    assert abs(default_tree_aat(algo) - FALCON_TAU[k]) < 0.05
    assert abs(default_tree_aat(algo, acc.context_ref) - FALCON_TAU[k]) < 0.05


@pytest.mark.parametrize("k", [2, 3, 4])
def test_calibration_regenerates_the_shipped_rows(k: int) -> None:
    algo = load_algorithm(NAMES[k])
    fresh = calibrate_falcon(algo)
    assert np.allclose(fresh.probabilities, algo.acceptance.probabilities, atol=1.5e-4)
    assert fresh.context_decay == algo.acceptance.context_decay


def test_family_shape() -> None:
    alpha = FALCON_ACCEPTANCE_RANGE
    assert alpha[0] <= FALCON_ALPHA <= alpha[1]
    assert [block_position(d, 3) for d in range(1, 8)] == [0, 1, 2, 0, 1, 2, 0]
    rows = sar_rows(0.77, 0.5, 2, 4)
    assert rows[0] == rows[2] and rows[1] == rows[3]
    assert np.allclose(np.array(rows[1]), 0.5 * np.array(rows[0]))
    for k in (2, 3, 4):
        model = embedded_model(load_algorithm(NAMES[k]))
        assert model.is_monotone()  # greedy trees are optimal
        assert model.p(1, 0) == pytest.approx(FALCON_ALPHA)


def test_beta_falls_with_k_and_tau_with_it() -> None:
    rows = falcon_calibration_rows([load_algorithm(n) for n in NAMES.values()])
    betas = [r["beta"] for r in rows]
    assert betas[0] > betas[1] > betas[2]
    for r in rows:
        assert abs(r["tau_model"] - r["tau_published"]) < 0.05
    algo = load_algorithm("falcon")
    assert calibrate_beta(algo, 3.34) == pytest.approx(betas[0], abs=1e-3)


def test_embedded_curve_rises_and_decays_with_context() -> None:
    algo = load_algorithm("falcon")
    near = embedded_curve(algo, 512, [2, 5, 14, 60, 167])
    far = embedded_curve(algo, 16384, [2, 5, 14, 60, 167])
    assert near["aat"].is_monotonic_increasing
    assert (far["aat"] < near["aat"]).all()
    assert all(len(s.split()) <= 8 for s in near["tree_shape"])  # max_depth 8
