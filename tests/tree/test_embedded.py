"""Embedded acceptance of the shipped algorithms: calibration, curves, trees for the sweep."""

from __future__ import annotations

import pandas as pd
import pytest

from fpgasim.config import load_algorithm
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import ConfigError
from fpgasim.tree.builders import dynamic_params, dynamic_tree
from fpgasim.tree.calibrate import calibrate, eagle1_depth_profile, spec_of
from fpgasim.tree.draft_trees import tree_for_verify_len
from fpgasim.tree.embedded import (
    default_tree_aat,
    embedded_curve,
    embedded_model,
    embedded_tree,
)
from fpgasim.tree.shapes import parse_shape

#: the published tau each shipped file is calibrated to, and the context it is taken at
#: (docs/models.md, "Acceptance length tau"; docs/trees.md)
PUBLISHED = {"longspec": (3.5, 4096), "eagle3": (6.13, 512)}


@pytest.mark.parametrize("name", ["longspec", "eagle3"])
def test_shipped_model_reproduces_published_tau(name: str) -> None:
    algo = load_algorithm(name)
    acc = algo.acceptance
    spec = spec_of(algo)
    assert acc is not None and spec is not None and acc.calibration
    assert (acc.tau_target, acc.context_ref) == (spec.tau, spec.context_ref) == PUBLISHED[name]
    assert default_tree_aat(algo) == pytest.approx(acc.tau_target, abs=0.005)
    assert embedded_model(algo).is_monotone()


@pytest.mark.parametrize("name", ["longspec", "eagle3"])
def test_calibration_recomputes_shipped_probabilities(name: str) -> None:
    algo = load_algorithm(name)
    assert calibrate(algo).probabilities == algo.acceptance.probabilities


@pytest.mark.parametrize("name", ["longspec", "eagle3"])
def test_calibration_recomputes_context_decay(name: str, aat_dir) -> None:
    algo = load_algorithm(name)
    assert calibrate(algo, aat_dir).context_decay == algo.acceptance.context_decay


def test_a_file_without_calibration_targets_is_refused_in_one_line() -> None:
    algo = load_algorithm("falcon")  # calibrated by tree/sar.py, not by `tree calibrate`
    assert spec_of(algo) is None
    with pytest.raises(ConfigError, match="acceptance.calibrated_to"):
        calibrate(algo)


def test_depth_profile_from_eagle_chain() -> None:
    profile = eagle1_depth_profile()
    assert profile[0] == 1.0 and len(profile) == 5 and all(0.8 < g < 1 for g in profile[1:])


@pytest.mark.parametrize("name", ["longspec", "eagle3"])
def test_embedded_curve(name: str) -> None:
    algo = load_algorithm(name)
    xs = [1, 2, 3, 10, 40, 85]
    frame = embedded_curve(algo, 2048, xs)
    want = ["verify_len", "aat", "tree_shape"]
    if name == "eagle3":
        want += ["draft_depth", "draft_top_k"]
    assert list(frame.columns) == want and frame["verify_len"].tolist() == xs
    assert frame["aat"].iloc[0] == 1.0 and frame["tree_shape"].iloc[0] == ""
    assert frame["aat"].is_monotonic_increasing
    depth_bound = algo.acceptance.max_depth
    for row in frame.iloc[1:].itertuples():
        shape = parse_shape(row.tree_shape)
        assert sum(shape) == row.verify_len - 1 and len(shape) <= depth_bound
    # a longer context loses acceptance (context_decay > 0)
    assert (embedded_curve(algo, 16384, xs)["aat"].iloc[1:] < frame["aat"].iloc[1:]).all()


def test_eagle3_depth_top_k_hold_the_optimal_tree() -> None:
    algo = load_algorithm("eagle3")
    model = embedded_model(algo, 1024)
    frame = embedded_curve(algo, 1024, range(2, 86))
    assert frame["draft_depth"].dtype == pd.Int64Dtype()
    for row in frame.itertuples():
        dyn = dynamic_tree(model, row.verify_len - 1, int(row.draft_depth), int(row.draft_top_k))
        assert model.expected_aat(dyn) == pytest.approx(row.aat, abs=1e-9)
    assert pd.isna(embedded_curve(algo, 1024, [1])["draft_depth"].iloc[0])


def test_embedded_tree_and_sweep_method() -> None:
    longspec = load_algorithm("longspec")
    tree = embedded_tree(longspec, 21)
    assert isinstance(tree, TokenTree) and tree.size == 21
    draft = tree_for_verify_len(longspec, 21, "optimal")
    assert draft.static_shape() == tree.level_widths()
    assert draft == TokenTree.from_shape(tree.level_widths())  # realised round robin
    assert tree_for_verify_len(longspec, 21, "optimal", context=16384).nodes == 20
    eagle3 = load_algorithm("eagle3")
    draft = tree_for_verify_len(eagle3, 61, "optimal")
    assert (draft.draft_depth, draft.top_k) == dynamic_params(embedded_tree(eagle3, 61))
    assert tree_for_verify_len(longspec, 21, "width").static_shape() == (4, 16)  # unchanged


def test_no_embedded_acceptance_is_a_config_error() -> None:
    algo = load_algorithm("longspec").model_copy(update={"acceptance": None})
    with pytest.raises(ConfigError, match="acceptance"):
        embedded_curve(algo, 1024, [2, 3])
    with pytest.raises(ConfigError):
        tree_for_verify_len(algo, 5, "optimal")
