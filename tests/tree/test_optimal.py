"""Optimal trees: greedy vs Sequoia's DP vs brute force, and EAGLE's dynamic tree."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from fpgasim.errors import InputError
from fpgasim.tree.builders import dynamic_params, dynamic_tree
from fpgasim.tree.optimal import (
    SequoiaDP,
    greedy_parents,
    greedy_tree,
    optimal_tree,
    optimal_trees,
    sequoia_tree,
)
from fpgasim.tree.positional import PositionalModel

SEQUOIA = [0.6342, 0.1079, 0.0570, 0.0225, 0.0195, 0.0150, 0.0045, 0.0030, 0.0120]


def random_model(rng: np.random.Generator, monotone: bool, depth_rows: int) -> PositionalModel:
    rows = []
    for _ in range(depth_rows):
        k = int(rng.integers(1, 7))
        row = rng.dirichlet(np.ones(k + 1))[:k]
        rows.append(sorted(row, reverse=True) if monotone else list(row))
    return PositionalModel.from_rows(rows)


def brute_force(model: PositionalModel, size: int, max_depth: int) -> float:
    """Best expected AAT over every tree with contiguous sibling ranks (small sizes)."""

    @cache
    def best(depth: int, budget: int) -> float:  # best sum below a node at `depth`, <= budget
        if depth >= max_depth or budget <= 1:
            return 0.0
        row = model.row(depth + 1)

        @cache
        def children(rank: int, left: int) -> float:  # ranks >= `rank` share `left` nodes
            if left == 0:
                return 0.0
            p = float(row[rank]) if rank < len(row) else 0.0
            return max(
                0.0,
                *(
                    p * (1 + best(depth + 1, m)) + children(rank + 1, left - m)
                    for m in range(1, left + 1)
                ),
            )

        return children(0, budget - 1)

    return 1.0 + best(0, size)


@pytest.mark.parametrize("seed", range(12))
def test_greedy_equals_dp_when_non_increasing(seed: int) -> None:
    rng = np.random.default_rng(seed)
    model = random_model(rng, monotone=True, depth_rows=int(rng.integers(1, 4)))
    depth = int(rng.integers(1, 8))
    dp = SequoiaDP(model, 40, depth)
    parents = greedy_parents(model, 40, depth)
    for n in range(1, 41):
        greedy = model.expected_aat(greedy_tree(model, n, depth).tree)
        assert greedy == pytest.approx(dp.expected_aat(n), rel=1e-12, abs=1e-12)
        assert greedy_tree(model, n, depth).tree.parents == parents[:n]  # prefix property


@pytest.mark.parametrize("seed", range(8))
def test_dp_equals_brute_force(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    model = random_model(rng, monotone=False, depth_rows=2)
    for size, depth in [(4, 2), (6, 3), (7, 9)]:
        result = sequoia_tree(model, size, depth)
        assert result.tree.size == size and result.tree.depth <= depth
        assert result.expected_aat == pytest.approx(brute_force(model, size, depth), abs=1e-12)
        assert greedy_tree(model, size, depth).expected_aat <= result.expected_aat + 1e-12


def test_dp_beats_greedy_on_non_monotone_vector() -> None:
    model = PositionalModel.from_vector([0.3, 0.05, 0.6])
    dp, greedy = sequoia_tree(model, 4, 3), greedy_tree(model, 4, 3)
    assert dp.expected_aat == pytest.approx(1 + 0.3 + 0.05 + 0.6)
    assert dp.expected_aat > greedy.expected_aat + 0.4
    assert optimal_tree(model, 4, 3).method == "dp"
    seq = PositionalModel.from_vector(SEQUOIA)
    assert sequoia_tree(seq, 128, 9).expected_aat > greedy_tree(seq, 128, 9).expected_aat + 1e-3


def test_sequoia_vector_trees() -> None:
    model = PositionalModel.from_vector(SEQUOIA)
    values = [sequoia_tree(model, n, 9).expected_aat for n in (16, 64, 128)]
    assert values[0] < values[1] < values[2]
    for n, v in zip((16, 64, 128), values, strict=True):
        assert v == pytest.approx(model.expected_aat(sequoia_tree(model, n, 9).tree))
        assert sequoia_tree(model, n, 9).tree.depth <= 9


def test_optimal_trees_batch_and_bounds() -> None:
    model = PositionalModel.from_vector([0.8, 0.1])
    trees = optimal_trees(model, [1, 2, 5], 2)
    assert [t.size for t in trees] == [1, 2, 5] and trees[2].depth <= 2
    assert sequoia_tree(model, 1, 0).tree.size == 1
    with pytest.raises(InputError):
        sequoia_tree(model, 5, 0)
    with pytest.raises(InputError):
        greedy_tree(model, 0)
    with pytest.raises(InputError):
        sequoia_tree(model, 5, -1)


def test_dp_pads_with_zero_probability_nodes() -> None:
    model = PositionalModel.from_vector([0.5])  # only one rank carries probability
    result = sequoia_tree(model, 6, 2)
    assert result.tree.size == 6
    assert result.expected_aat == pytest.approx(1 + 0.5 + 0.25)


def test_dynamic_tree_matches_greedy_when_loose() -> None:
    model = PositionalModel.from_vector([0.7, 0.12, 0.05, 0.03, 0.02])
    for nodes in (1, 5, 20, 40):
        greedy = greedy_tree(model, nodes + 1, 6)
        depth, top_k = dynamic_params(greedy.tree)
        dyn = dynamic_tree(model, nodes, depth, top_k)
        assert dyn.depth <= depth + 1
        assert model.expected_aat(dyn) == pytest.approx(greedy.expected_aat)
    tight = dynamic_tree(model, 10, 2, 2)
    assert tight.depth <= 3 and int(tight.ranks.max()) < 2
    with pytest.raises(InputError):
        dynamic_tree(model, 100, 1, 2)
