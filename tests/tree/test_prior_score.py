"""Prior-score search: valid prefixes, exact empirical AAT, convergence to the optimal tree."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import InputError
from fpgasim.tree.optimal import greedy_tree
from fpgasim.tree.positional import PositionalModel, generate_traces, walk
from fpgasim.tree.prior_score import prior_score_search, trie_tree
from fpgasim.tree.traces import traces_from_paths

MODEL = PositionalModel.from_rows([[0.62, 0.17, 0.07, 0.035], [0.56, 0.2, 0.08], [0.55, 0.2]])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 8), min_size=1, max_size=5),
    st.integers(1, 400),
    st.integers(0, 2**31),
)
def test_every_prefix_is_a_valid_tree(shape: list[int], iterations: int, seed: int) -> None:
    max_tree = TokenTree.from_shape(shape, MODEL)
    traces = generate_traces(MODEL, max_tree, iterations, np.random.default_rng(seed))
    result = prior_score_search(traces, max_tree)
    order = result.order.tolist()
    assert order[0] == 0 and sorted(order) == list(range(max_tree.size))
    position = {node: i for i, node in enumerate(order)}
    for node in order[1:]:
        assert position[max_tree.parents[node]] < position[node]  # parent first
    scores = result.scores[result.order]
    assert np.all(np.diff(scores) <= 0)  # by score, descending
    for n in range(max_tree.nodes + 1):
        tree = result.tree(n)  # raises if a prefix were not a tree
        assert tree.nodes == n
        assert set(tree.rank_paths()) <= set(max_tree.rank_paths())


def test_empirical_aat_is_the_trace_mean() -> None:
    max_tree = TokenTree.from_shape((3, 5, 4), MODEL)
    traces = generate_traces(MODEL, max_tree, 3000, np.random.default_rng(5))
    result = prior_score_search(traces, max_tree)
    for n in (0, 1, 4, 12):
        sub = result.tree(n)
        direct = 1 + (walk(sub, traces.ranks) >= 0).sum(axis=1).mean()
        assert result.aat(n) == pytest.approx(direct)
    frame = result.to_frame()
    assert frame["verify_len"].tolist() == list(range(2, max_tree.size + 1))
    assert frame["aat"].is_monotonic_increasing


def test_converges_to_the_optimal_tree() -> None:
    sizes = range(2, 41)
    max_tree = greedy_tree(MODEL, 60, 6).tree  # holds every optimal tree up to 60 nodes
    best = np.array([greedy_tree(MODEL, x, 6).expected_aat for x in sizes])
    gaps = []
    for iterations in (30, 1000, 100_000):
        traces = generate_traces(MODEL, max_tree, iterations, np.random.default_rng(11))
        result = prior_score_search(traces, max_tree)
        found = np.array([MODEL.expected_aat(result.tree(x - 1)) for x in sizes])
        assert np.all(found <= best + 1e-12)
        gaps.append(float(np.mean(best - found)))
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[2] < 1e-3


def test_trie_of_logged_paths() -> None:
    traces = traces_from_paths([[0, 2], [1], [0, 2, 0], [], [3]])
    tree = trie_tree(traces)
    assert sorted(tree.rank_paths()) == [(), (0,), (0, 2), (0, 2, 0), (1,), (3,)]
    result = prior_score_search(traces, tree)
    assert result.truncated == 0
    assert result.tree(1).rank_paths() == [(), (0,)]
    assert result.aat(tree.nodes) == pytest.approx(traces.mean_aat())
    with pytest.raises(InputError):
        result.tree(tree.nodes + 1)


def test_truncated_paths_are_counted() -> None:
    traces = traces_from_paths([[0, 0, 0], [5], [0]])
    result = prior_score_search(traces, TokenTree.from_shape((1, 1)))
    assert result.truncated == 2
    assert result.scores.tolist() == [3, 2, 1]
