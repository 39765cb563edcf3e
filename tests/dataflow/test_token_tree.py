"""TokenTree: construction, validity checks, shape round trips and the verification mask."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fpgasim.dataflow.draft_passes import block_parents
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import InputError
from fpgasim.tree.positional import PositionalModel

MODEL = PositionalModel.from_vector([0.6, 0.2, 0.1, 0.05])


@st.composite
def shapes(draw) -> tuple[int, ...]:
    levels = draw(st.integers(1, 6))
    return tuple(draw(st.integers(1, 12)) for _ in range(levels))


@st.composite
def parent_arrays(draw) -> list[int]:
    n = draw(st.integers(1, 40))
    return [-1] + [draw(st.integers(0, i - 1)) for i in range(1, n)]


@settings(max_examples=60, deadline=None)
@given(shapes(), st.booleans())
def test_shape_parents_round_trip(shape: tuple[int, ...], with_model: bool) -> None:
    tree = TokenTree.from_shape(shape, MODEL if with_model else None)
    assert tree.level_widths() == shape
    assert tree.nodes == sum(shape)
    again = TokenTree.from_parents(tree.parents)
    assert again.parents == tree.parents
    assert TokenTree.from_shape(again.level_widths(), MODEL if with_model else None).same_tree(tree)


@settings(max_examples=60, deadline=None)
@given(parent_arrays())
def test_parents_round_trip_and_mask(parents: list[int]) -> None:
    tree = TokenTree.from_parents(parents)
    assert list(tree.parents) == parents
    mask = tree.attention_mask()
    assert mask.dtype == bool and mask.shape == (tree.size, tree.size)
    assert np.all(np.diag(mask)) and not np.any(np.triu(mask, 1))  # topological order
    assert mask.sum() == tree.attended_pairs()
    for i in range(1, tree.size):  # a node sees exactly itself and its ancestors
        ancestors = {i}
        j = parents[i]
        while j >= 0:
            ancestors.add(j)
            j = parents[j]
        assert set(np.flatnonzero(mask[i])) == ancestors
        assert tree.depths[i] == len(ancestors) - 1
    assert sum(tree.level_widths()) == tree.nodes


def test_ranks_and_depth() -> None:
    tree = TokenTree.from_parents([-1, 0, 0, 1, 1, 2, 3])
    assert tree.ranks.tolist() == [0, 0, 1, 0, 1, 0, 0]
    assert tree.depths.tolist() == [0, 1, 1, 2, 2, 2, 3]
    assert tree.depth == 3 and tree.level_widths() == (2, 3, 1)
    assert tree.shape_str() == "2 3 1"
    assert tree.rank_paths()[5] == (1, 0)


def test_round_robin_shape() -> None:
    tree = TokenTree.from_shape((4, 16, 16))
    counts = tree.children_counts()
    assert counts[0] == 4 and all(counts[1:5] == 4) and all(counts[5:21] == 1)


def test_model_arrangement_favours_likely_parents() -> None:
    tree = TokenTree.from_shape((2, 3), MODEL)
    # slots: child0 of node1 (.36), child0 of node2 (.12), child1 of node1 (.12): parent-first
    assert tree.parents[3:] == (1, 1, 2)
    assert MODEL.expected_aat(tree) >= MODEL.expected_aat(TokenTree.from_shape((2, 3)))


def test_full_mask_and_tiles() -> None:
    tree = TokenTree.from_shape((2, 2))
    full = tree.full_attention_mask(3)
    assert full.shape == (5, 8) and full[:, :3].all() and TokenTree.context_visible()
    tiles = tree.mask_tiles(2)
    assert tiles.shape == (3, 3) and tiles[0, 0] and not tiles[0, 2]


def test_explicit_ranks() -> None:
    tree = TokenTree.from_parents([-1, 0, 0], ranks=[0, 0, 3])
    assert tree.rank_paths() == [(), (0,), (3,)]
    with pytest.raises(InputError, match="distinct"):
        TokenTree.from_parents([-1, 0, 0], ranks=[0, 1, 1])


@pytest.mark.parametrize(
    "parents, message",
    [([], "between 1"), ([0, 0], "root"), ([-1, 1], "parent index"), ([-1, 0, -1], "parent")],
)
def test_invalid_parents(parents: list[int], message: str) -> None:
    with pytest.raises(InputError, match=message):
        TokenTree.from_parents(parents)


def test_invalid_shape() -> None:
    with pytest.raises(InputError):
        TokenTree.from_shape((0, 3))
    with pytest.raises(InputError):
        TokenTree.from_shape((2, 0, 3))
    assert TokenTree.from_shape(()).size == 1


def test_one_tree_type_carries_what_the_drafters_need() -> None:
    # a static tree: its level widths, trailing empty levels kept (one more draft pass)
    tree = TokenTree.from_shape((2, 1, 0))
    assert tree.size == 4 and tree.level_widths() == (2, 1) and tree.empty_levels == 1
    assert tree.static_shape() == (2, 1, 0) and tree.describe() == "2 1 0"
    assert tree != TokenTree.from_shape((2, 1)) and not tree.is_dynamic
    # the verify mask of a shaped tree: the levels round robin under the root
    assert tree.parents == block_parents((1, 2, 1))
    # a dynamic tree before drafting: its expansion and the root
    dyn = TokenTree.dynamic(6, 10)
    assert dyn.is_dynamic and dyn.size == 1 and dyn.describe() == "depth=6 top_k=10"
    assert dyn == TokenTree.dynamic(6, 10) and hash(dyn) == hash(TokenTree.dynamic(6, 10))
    with pytest.raises(InputError, match="level widths"):
        dyn.static_shape()
    with pytest.raises(InputError, match="depth"):
        TokenTree.dynamic(1, 0)
    # equal trees are equal values (usable as keys), node order included
    assert {TokenTree.from_parents([-1, 0, 0]): 1}[TokenTree.from_shape((2,))] == 1
    assert TokenTree.from_parents([-1, 0, 0, 1]) != TokenTree.from_parents([-1, 0, 0, 2])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 12), min_size=1, max_size=8), st.integers(0, 2))
def test_a_shaped_trees_mask_is_the_round_robin_one(widths: list[int], empty: int) -> None:
    # what the verify pass was costed with before the tree types merged: block_parents
    tree = TokenTree.from_shape((*widths, *(0,) * empty))
    assert tree.parents == block_parents((1, *widths))
    assert tree.static_shape() == (*widths, *(0,) * empty)
