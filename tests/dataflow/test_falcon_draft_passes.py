"""Falcon's SAR schedule (passes shrink by k), its relaxed causal mask, and its draft passes
on FlightLLM's compiler (which costs a mask count-level: causal, relaxed and dense alike)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.draft_passes import block_parents
from fpgasim.dataflow.drafters import draft_passes, lower_pass
from fpgasim.dataflow.passes import PassSpec
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.dataflow.treemask import visibility
from fpgasim.engine import get_engine
from fpgasim.engine.event import EventEngine
from fpgasim.engine.fast import FastEngine
from fpgasim.simulate import draft_timing

VICUNA = load_model("vicuna-7b-v1.5")
FALCON = {k: load_algorithm(n) for k, n in ((2, "falcon"), (3, "falcon-k3"), (4, "falcon-k4"))}
LONGSPEC = load_algorithm("longspec")
DEFAULT = TokenTree.from_shape((4, 4, 16, 16, 24, 24, 39, 39))


# --------------------------------------------------------------------------- schedule


@pytest.mark.parametrize("k", [2, 3, 4])
def test_passes_shrink_by_k(k: int) -> None:
    falcon = FALCON[k]
    assert falcon.drafter.tokens_per_pass == k
    passes = draft_passes(falcon, DEFAULT, 3, 1024)
    assert len(passes) == math.ceil(8 / k)  # depth 8 in ceil(8/k) passes
    assert len(draft_passes(LONGSPEC, DEFAULT, 3, 1024)) == 8  # an AR drafter: one per level
    shape = DEFAULT.static_shape()
    want = [3] + [sum(shape[s : s + k]) for s in range(0, len(shape) - k, k)]
    assert [p.tokens for p in passes] == want
    assert all(p.kind == "falcon" and p.mask_block == k for p in passes)
    for p in passes:
        assert p.tree_parents is not None and len(p.tree_parents) == p.tokens
    assert falcon.drafter.passes == math.ceil(8 / k)


@pytest.mark.parametrize("depth", range(1, 9))
def test_any_depth_costs_ceil_depth_over_k_passes(depth: int) -> None:
    tree = TokenTree.from_shape(DEFAULT.static_shape()[:depth])
    for k, falcon in FALCON.items():
        assert len(draft_passes(falcon, tree, 2, 512)) == math.ceil(depth / k)


def test_block_parents_round_robin() -> None:
    assert block_parents((4, 4)) == (-1, -1, -1, -1, 0, 1, 2, 3)
    assert block_parents((2, 3, 1)) == (-1, -1, 0, 1, 0, 2)


# --------------------------------------------------------------------------- the mask


def test_relaxed_mask_on_a_chain_is_block_causal() -> None:
    chain = tuple(range(-1, 5))  # 6 tokens, k = 2: blocks {0,1} {2,3} {4,5}
    causal = visibility(chain)
    relaxed = visibility(chain, 2)
    assert (causal == np.tril(np.ones((6, 6), bool))).all()
    want = np.array([[j <= i or j // 2 == i // 2 for j in range(6)] for i in range(6)])
    assert (relaxed == want).all()
    assert (visibility(chain, 3)[0] == [True] * 3 + [False] * 3).all()


def test_relaxed_mask_on_a_tree_block() -> None:
    parents = block_parents((2, 4))  # roots 0, 1; 2 and 4 under 0, 3 and 5 under 1
    vis = visibility(parents, 2)
    assert vis[0].tolist() == [True, False, True, False, True, False]  # sees its block children
    assert vis[2].tolist() == [True, False, True, False, False, False]  # not its sibling 4
    assert (visibility(parents, 1) <= vis).all()
    with pytest.raises(ValueError):
        visibility(parents, 0)


@pytest.mark.parametrize("board", ["u280", "flightllm-vhk158"])
def test_the_compiler_costs_every_mask_alike(board: str) -> None:
    """FlightLLM's compiler costs attention count-level (docs/validation.md): a Falcon pass
    with its relaxed mask, with a causal one and with none takes the same time and moves
    the same bytes (the study lowering's tile skipping was retired with it)."""
    b, falcon = load_board(board), FALCON[2]
    eng = FastEngine()
    for spec in draft_passes(falcon, DEFAULT, 3, 1024)[1:]:
        causal = dataclasses.replace(spec, mask_block=1)
        dense = dataclasses.replace(spec, tree_parents=None)
        c, r, d = (eng.run_pass(s, b, VICUNA, falcon.drafter) for s in (causal, spec, dense))
        assert c == r == d


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 3, 4])
def test_event_equals_fast(k: int) -> None:
    falcon = FALCON[k]
    tree = TokenTree.from_shape((3, 3, 4, 4, 2, 2, 1, 1))
    for board in (load_board("u280"), load_board("flightllm-vhk158")):
        for spec in draft_passes(falcon, tree, 3, 700):
            ev = EventEngine().run_pass(spec, board, VICUNA, falcon.drafter)
            assert ev == FastEngine().run_pass(spec, board, VICUNA, falcon.drafter)


def test_lm_head_rows_and_draft_timing() -> None:
    board = load_board("v80")
    for k, falcon in FALCON.items():
        ops = lower_pass(PassSpec("falcon", 8, 512), board, VICUNA, falcon.drafter)
        lm = ops.tail[0]
        assert lm.kind == "lm_head" and lm.tokens == 8  # one row per position of the block
        one = lower_pass(PassSpec("falcon", 1, 512), board, VICUNA, falcon.drafter)
        assert one.tail[0].tokens == k
    eng = get_engine("analytic")
    two = draft_timing(eng, board, VICUNA, FALCON[2], DEFAULT, 3, 1024)
    four = draft_timing(eng, board, VICUNA, FALCON[4], DEFAULT, 3, 1024)
    assert (two.passes, four.passes) == (4, 2)
    assert four.weight_bytes * 2 == two.weight_bytes  # same drafter, half the passes


def test_accounting_closed_form() -> None:
    """docs/falcon.md's element counts of one pass, against the lowered ops."""
    m, board, d = VICUNA, load_board("v80"), FALCON[2].drafter
    h, i, heads, s, vocab = m.hidden, m.intermediate, m.heads, m.kv_ratio, m.vocab
    for n, ctx in ((1, 300), (8, 1000), (48, 4096)):
        t = lower_pass(PassSpec("falcon", n, ctx), board, m, d).totals()
        r = max(n, 2)
        scores = n * (n + ctx) * heads
        assert t["weight_elems"] == 20 * h * h + (2 + 2 * s) * h * h + 3 * h * i + h * vocab
        assert t["act_elems"] == n * h * (18 + 2 * s) + 2 * n * i + scores + r * h
        assert t["kv_elems"] == 2 * s * h * ctx
        assert t["store_elems"] == n * h * (14 + 2 * s) + 2 * n * i + scores + r * vocab
        assert t["macs"] == (
            (20 + 2 + 2 * s) * n * h * h + 2 * n * (n + ctx) * h + 3 * n * h * i + r * h * vocab
        )
