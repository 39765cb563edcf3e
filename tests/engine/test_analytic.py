"""The analytic engine: calibration, closed form vs op sums, monotonicity, draft schedules."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.board import Board
from fpgasim.config.schema import Eagle3Drafter, LongSpecDrafter, TargetModel
from fpgasim.dataflow.drafters import draft_passes, lower_pass
from fpgasim.dataflow.passes import PassSpec
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.engine import get_engine
from fpgasim.engine.analytic import counts_for, target_counts, weight_reads_array
from fpgasim.simulate import draft_timing, verify_timing

ENGINE = get_engine("analytic")
LLAMA = load_model("llama-3.1-8b")
BOARDS = {name: load_board(name) for name in ("u280", "vhk158", "v80", "u250")}
LONGSPEC = load_algorithm("longspec")
EAGLE3 = load_algorithm("eagle3")


def tokens_per_s(board: str, context: int, x: int = 1) -> float:
    t = verify_timing(ENGINE, BOARDS[board], LLAMA, x, context)
    return x / t.seconds


def test_calibration_u280() -> None:
    # The study's calibration (docs/hardware.md): 22.12 tokens/s at 256, 6.92 at 16384.
    assert tokens_per_s("u280", 256) == pytest.approx(22.12, abs=0.05)
    assert tokens_per_s("u280", 16384) == pytest.approx(6.92, abs=0.05)


def test_vhk158_and_v80_same_ad_speed() -> None:
    for context in (256, 1024, 4096, 16384):
        assert tokens_per_s("vhk158", context) == pytest.approx(tokens_per_s("v80", context))


def test_ad_is_memory_bound_everywhere() -> None:
    for board in BOARDS.values():
        assert verify_timing(ENGINE, board, LLAMA, 1, 1024).bound == "load"


# docs/accounting.md's element counts of the two study drafters, transcribed by hand: the
# analytic engine counts a draft pass as the sums over its ops, and these closed forms are the
# independent check that those ops are the study's accounting.
def longspec_counts(m: TargetModel, d: LongSpecDrafter, n, context, board: Board) -> dict:
    """Element counts of one LongSpec draft pass (self-attn, cross-attn, MLP, LM head)."""
    n = np.asarray(n, dtype=np.float64)
    L = np.asarray(context, dtype=np.float64)
    h, i, H, s, V = m.hidden, m.intermediate, m.heads, m.kv_ratio, m.vocab
    nk = n + L
    W = np.minimum(d.window_tokens, nk)
    weights = (2 + 2 * s) * h * h + 2 * h * h + 3 * h * i + h * V
    return {
        "weight": weights * weight_reads_array(n),
        "act": n * h * (7 + 2 * s)
        + n * W * H
        + n * h * (5 + 2 * s)
        + n * nk * H
        + 4 * n * h
        + 2 * n * i
        + n * h,
        "kv": 2 * s * h * W + 2 * s * h * L,
        "store": n * h * (4 + 2 * s)
        + n * W * H
        + 4 * n * h
        + n * nk * H
        + 2 * n * h
        + 2 * n * i
        + n * V,
        "macs": (2 + 2 * s) * n * h * h
        + 2 * n * W * h
        + 2 * n * h * h
        + 2 * n * nk * h
        + 3 * n * h * i
        + n * h * V,
    }


def eagle3_counts(
    m: TargetModel, d: Eagle3Drafter, n, context, board: Board, first: bool
) -> dict:
    """Element counts of one EAGLE-3 draft pass (fc on the first pass only)."""
    n = np.asarray(n, dtype=np.float64)
    L = np.asarray(context, dtype=np.float64)
    h, i, H, s = m.hidden, m.intermediate, m.heads, m.kv_ratio
    V = d.draft_vocab or m.vocab
    nk = n + L
    q_mult = 4 if d.q_charged_twice else 2
    weights = 2 * h * h + 2 * (2 * h * s * h) + h * h + 3 * h * i + h * V
    act = (
        2 * n * h
        + 6 * n * h
        + n * h * (1 + s)
        + n * nk * H
        + n * h * s
        + 2 * n * h
        + n * h
        + n * h
        + (n * h + n * i)
        + (n * i + n * h)
        + n * h
    )
    store = (
        2 * n * h
        + n * h * (1 + 2 * s)
        + n * nk * H
        + n * h
        + n * h
        + n * h
        + 2 * n * i
        + n * h
        + n * V
    )
    macs = (
        q_mult * n * h * h
        + 4 * s * n * h * h
        + 2 * n * nk * h
        + n * h * h
        + 3 * n * h * i
        + n * h * V
    )
    if first:
        weights = weights + 3 * h * h
        act = act + 3 * n * h
        store = store + n * h
        macs = macs + 3 * n * h * h
    return {
        "weight": weights * weight_reads_array(n),
        "act": act,
        "kv": 2 * s * h * L + 0 * n,
        "store": store,
        "macs": macs,
    }


def closed_form(spec: PassSpec, board, drafter) -> dict:
    """The transcribed closed form of a target, LongSpec or EAGLE-3 pass."""
    if spec.kind == "target":
        return target_counts(LLAMA, spec.tokens, spec.context, board)
    if spec.kind == "longspec":
        return longspec_counts(LLAMA, drafter, spec.tokens, spec.context, board)
    return eagle3_counts(LLAMA, drafter, spec.tokens, spec.context, board, spec.first)


def assert_counts_equal(spec: PassSpec, board, drafter) -> None:
    """The analytic engine's counts equal the closed form and the lowered ops, bit for bit."""
    closed = closed_form(spec, board, drafter)
    engine = counts_for(spec, board, LLAMA, drafter)
    ops = lower_pass(spec, board, LLAMA, drafter).totals()
    names = {"weight": "weight_elems", "act": "act_elems", "kv": "kv_elems"}
    names |= {"store": "store_elems", "macs": "macs"}
    for key, total in names.items():
        assert float(engine[key]) == float(closed[key]) == ops[total], (spec, key)


DRAFTERS = {"longspec": LONGSPEC.drafter, "eagle3": EAGLE3.drafter}


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 300),
    context=st.integers(1, 40000),
    board=st.sampled_from(sorted(BOARDS)),
    kind=st.sampled_from(["target", "longspec", "eagle3", "eagle3-first"]),
)
def test_closed_form_equals_sum_of_ops(n: int, context: int, board: str, kind: str) -> None:
    drafter = DRAFTERS.get(kind.split("-")[0])
    spec = PassSpec(kind.split("-")[0], n, context, first=kind.endswith("first"))
    assert_counts_equal(spec, BOARDS[board], drafter)


@pytest.mark.parametrize("kind", ["longspec", "eagle3", "eagle3-first"])
def test_drafter_counts_equal_the_closed_form_on_a_grid(kind: str) -> None:
    # every board, tokens across the weight-reuse and window edges, contexts from 1 to 128k
    drafter = DRAFTERS[kind.split("-")[0]]
    for board in BOARDS.values():
        for n in (1, 2, 3, 15, 16, 17, 64, 85, 256, 511, 512, 513):
            for context in (1, 255, 511, 512, 1024, 4096, 16383, 131072):
                spec = PassSpec(kind.split("-")[0], n, context, first=kind.endswith("first"))
                assert_counts_equal(spec, board, drafter)


@settings(max_examples=60, deadline=None)
@given(
    x=st.integers(1, 200),
    context=st.integers(1, 30000),
    dx=st.integers(0, 50),
    dl=st.integers(0, 5000),
    board=st.sampled_from(sorted(BOARDS)),
)
def test_verify_time_monotone(x: int, context: int, dx: int, dl: int, board: str) -> None:
    b = BOARDS[board]
    base = verify_timing(ENGINE, b, LLAMA, x, context).cycles
    assert verify_timing(ENGINE, b, LLAMA, x + dx, context).cycles >= base
    assert verify_timing(ENGINE, b, LLAMA, x, context + dl).cycles >= base


def test_draft_time_grows_with_depth() -> None:
    b = BOARDS["v80"]
    shapes = [(4,), (4, 4), (4, 4, 4), (4, 4, 4, 4), (4, 4, 4, 4, 4)]
    trees = [TokenTree.from_shape(s) for s in shapes]
    times = [draft_timing(ENGINE, b, LLAMA, LONGSPEC, t, 2, 1024).cycles for t in trees]
    assert all(a < c for a, c in zip(times, times[1:], strict=False))
    eagle = [
        draft_timing(ENGINE, b, LLAMA, EAGLE3, TokenTree.dynamic(d, 8), 2, 1024).cycles
        for d in range(1, 8)
    ]
    assert all(a < c for a, c in zip(eagle, eagle[1:], strict=False))


def test_longspec_schedule_matches_accounting() -> None:
    passes = draft_passes(LONGSPEC, TokenTree.from_shape((4, 16, 16, 16, 16)), 3, 1024)
    assert [p.tokens for p in passes] == [3, 4, 16, 16, 16]
    passes = draft_passes(LONGSPEC, TokenTree.from_shape((2, 1, 0)), 1, 10)
    assert [p.tokens for p in passes] == [1, 2, 1]
    eagle = draft_passes(EAGLE3, TokenTree.dynamic(6, 10), 4, 1024)
    assert [(p.tokens, p.first) for p in eagle] == [(4, True)] + [(10, False)] * 6


def test_longspec_draft_grows_with_context() -> None:
    b = BOARDS["v80"]
    tree = TokenTree.from_shape((4, 16, 16, 16, 16))
    short = draft_timing(ENGINE, b, LLAMA, LONGSPEC, tree, 3, 128).cycles
    long = draft_timing(ENGINE, b, LLAMA, LONGSPEC, tree, 3, 16384).cycles
    assert long > short


def test_weights_reread_every_128_tokens() -> None:
    b = BOARDS["u280"]
    one = verify_timing(ENGINE, b, LLAMA, 128, 1).weight_bytes
    two = verify_timing(ENGINE, b, LLAMA, 129, 1).weight_bytes
    assert two == 2 * one


def test_falcon_passes_shrink_by_k() -> None:
    falcon = load_algorithm("falcon")
    tree = TokenTree.from_shape((4, 4, 16, 16, 24, 24, 39, 39))
    passes = draft_passes(falcon, tree, 3, 1024)
    # depth 8 with k = 2: 4 passes; each runs over the k-block just proposed
    assert [p.tokens for p in passes] == [3, 8, 32, 48]
    ar = draft_passes(LONGSPEC, tree, 3, 1024)
    assert len(ar) == 8
    t = draft_timing(ENGINE, BOARDS["v80"], load_model("vicuna-7b-v1.5"), falcon, tree, 3, 1024)
    assert t.passes == 4 and t.cycles > 0
