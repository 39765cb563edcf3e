"""Oracle (issue 41): the weight bytes of a verify pass of x tokens on an MoE target are,
per layer, attention + shared expert + router + E[D](x) x one expert's bytes, plus the LM
head: the closed form of docs/moe-sd.md ("Weight bytes of a verify pass") written out here
from the model's shapes and the uniform-routing E[D] = E (1 - (1 - k/E)^x), not from the
compiler or routing.py. On the 4-lane design every weight of a pass of x <= 4 tokens streams
once (its rows fit one MV row group or MM tile), so no re-streaming enters."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fpgasim.config import load_model
from fpgasim.config.board_loader import board_of
from fpgasim.engine.fast import FastEngine
from fpgasim.simulate import experts_streamed, verify_timing

HF = Path(__file__).resolve().parents[3] / "workloads" / "models" / "hf"
MOE = [p for p in sorted(HF.glob("*.json")) if load_model(str(p)).moe is not None]


def padded(n: int, group: int) -> int:
    return math.ceil(n / group) * group


def routers(m) -> int:
    """Linears of one layer narrower than one MV group: the router, the shared gate."""
    return 1 + bool(m.moe.shared_gate)


def closed_form(m, board, experts_per_layer: float) -> float:
    """Bytes of one pass streaming each weight once, `experts_per_layer` routed experts.

    A projection's N pads to the 512-output MV group (docs/flightllm-model.md §4.2); the
    routers (E outputs; the shared expert's one gate) are narrower than one group and load
    the 16-wide blocks their outputs fill (less §4.2's small correction: the test's
    slack), dense and unbiased. Biases at bias_bits where the recipe or the architecture
    (Qwen2-MoE's q/k/v) has them."""
    r, group, b = board.recipe, board.compiler.mv_group_outputs, board.compiler.block
    h, d, kv = m.hidden, m.head_dim, m.kv_heads * m.head_dim
    e = m.moe
    bits = r.weight_bits / 8

    def proj(name: str, k: int, n: int, model_bias: bool = False) -> float:
        bias = n * r.bias_bits / 8 if (r.linear(name).bias or model_bias) else 0
        return k * padded(n, group) * bits * r.linear(name).sparse_ratio + bias

    qkv = m.attention_bias
    attention = (proj("q", h, m.heads * d, qkv) + proj("k", h, kv, qkv)
                 + proj("v", h, kv, qkv) + proj("o", m.heads * d, h))
    router = h * padded(e.experts, b) * bits
    expert = (proj("gate", h, e.expert_intermediate) + proj("up", h, e.expert_intermediate)
              + proj("down", e.expert_intermediate, h))
    shared = 0.0
    if e.shared_intermediate:
        s = e.shared_intermediate
        shared = proj("gate", h, s) + proj("up", h, s) + proj("down", s, h)
        if e.shared_gate:
            shared += h * b * bits
    layer = attention + router + shared
    return m.layers * (layer + experts_per_layer * expert) + proj("lm_head", h, m.vocab)


def router_slack(m, board) -> float:
    """§4.2's correction for outputs narrower than a group: at most a block's square per
    missing block of the group, per K chunk the weights stream in (bytes)."""
    comp = board.compiler
    b, c = comp.block, comp.mv_group_outputs // comp.block
    chunks = math.ceil(m.hidden // b / comp.mv_k_chunk_blocks)
    return m.layers * routers(m) * b * b * c * chunks * board.recipe.weight_bits / 8


@pytest.mark.parametrize("path", MOE, ids=lambda p: p.stem)
@pytest.mark.parametrize("x", [1, 2, 4])
def test_verify_weight_bytes_are_the_closed_form(path: Path, x: int) -> None:
    m = load_model(str(path))
    board = board_of("v80", "flightllm-mv4")
    assert board.fit.mv_lanes >= 4
    e, k = m.moe.experts, m.moe.experts_per_token
    expected_d = e * (1 - (1 - k / e) ** x)
    streamed = experts_streamed(m, x)
    assert abs(streamed - expected_d) <= 1 / m.layers  # whole experts, within one in all
    if x == 1:
        assert streamed == k  # one token streams its k experts in every layer
    t = verify_timing(FastEngine(), board, m, x, 511)
    expect = closed_form(m, board, streamed)
    dense = all(board.recipe.linear(p).sparse_ratio == 1
                for p in ("q", "k", "v", "o", "gate", "up", "down", "lm_head"))
    slack = 0 if dense else expect / 4096  # each sparse load rounds to whole bytes
    slack += router_slack(m, board)
    assert expect - slack <= t.weight_bytes <= expect + slack / 2, (t.weight_bytes, expect)
    # and against the expectation itself, within one expert over the whole model
    expert_bytes = (closed_form(m, board, 1) - closed_form(m, board, 0)) / m.layers
    assert abs(t.weight_bytes - closed_form(m, board, expected_d)) <= expert_bytes + slack


def test_capacity_counts_every_expert() -> None:
    from fpgasim.simulate import memory_bytes

    m = load_model(str(HF / "Qwen3-30B-A3B.json"))
    board = board_of("v80", "flightllm")
    one_token = verify_timing(FastEngine(), board, m, 1, 511).weight_bytes
    held = memory_bytes(board, m, 0, 0)
    # all 128 experts held, 8 streamed per layer: the held weights are several times more
    e = m.moe
    per_expert = 3 * m.hidden * e.expert_intermediate * board.recipe.weight_bits / 8
    assert held > m.layers * e.experts * per_expert * min(
        board.recipe.linear(p).sparse_ratio for p in ("gate", "up", "down"))
    assert held > 4 * one_token
