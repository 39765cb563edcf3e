"""The target model's arithmetic is read off its op graph once (dataflow.model_arithmetic);
the closed forms written out by hand (the study's accounting, the old per-module counts)
are its oracles, for every shipped model, a tied-embedding one and Qwen2's q/k/v biases."""

from __future__ import annotations

from pathlib import Path

import pytest

from fpgasim.config import load_board, load_model
from fpgasim.dataflow.model_arithmetic import target_arithmetic
from fpgasim.engine.analytic import target_counts
from fpgasim.heterogeneous.costs import target_streamed_params, target_total_params
from fpgasim.simulate import memory_bytes, target_weight_count

MODELS = Path(__file__).resolve().parents[2] / "workloads" / "models"
#: Llama-family files (GPT-2's closed form is tests/config/test_gpt2.py's)
FILES = [p for p in sorted(MODELS.glob("*.yaml")) + sorted((MODELS / "hf").glob("*.json"))
         if load_model(str(p)).architecture == "llama"]


def closed_form_weights(m) -> int:
    """Parameters as stored: attention (with q/k/v biases), SwiGLU MLP, the embedding and
    (unless tied to it) the LM head."""
    kv = m.kv_heads * m.head_dim
    attention = 2 * m.hidden * m.hidden + 2 * m.hidden * kv
    if m.attention_bias:
        attention += m.hidden + 2 * kv
    tables = 1 if m.tied_embeddings else 2
    return m.layers * (attention + 3 * m.hidden * m.intermediate) + tables * m.vocab * m.hidden


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_op_graph_counts_equal_the_closed_forms(path: Path) -> None:
    m = load_model(str(path))
    a = target_arithmetic(m)
    h, kv = m.hidden, m.kv_heads * m.head_dim
    assert target_weight_count(m) == a.weight_count == closed_form_weights(m)
    assert a.layer_kv_per_token == 2 * kv and a.kv_elements(10) == 2 * m.layers * kv * 10
    # the study's accounting streams the projections and the LM head (analytic, one read)
    streamed = target_counts(m, 1, 0, load_board("v80"))["weight"]
    assert streamed == m.layers * a.layer_linear_weights + a.lm_head_weights
    # the GPU model's: projections and both norms per layer, the final norm, the LM head
    layer = 2 * h * h + 2 * h * kv + 3 * h * m.intermediate + 2 * h
    assert target_streamed_params(m) == m.layers * layer + h + h * m.vocab
    assert target_total_params(m) == target_streamed_params(m) + m.vocab * h


def test_tied_embeddings_and_biases_count_once() -> None:
    base = load_model("llama-3.1-8b")
    tied = base.model_copy(update={"tied_embeddings": True, "attention_bias": True})
    assert target_weight_count(tied) == closed_form_weights(tied)
    assert target_weight_count(base) - target_weight_count(tied) == (
        base.vocab * base.hidden - base.layers * (base.hidden + 2 * base.kv_heads * base.head_dim)
    )


def test_memory_bytes_reads_the_arithmetic() -> None:
    board, m = load_board("v80"), load_model("llama-3.1-8b")  # fp16 weights and KV
    kv = 2 * m.layers * m.kv_heads * m.head_dim * 1004
    assert memory_bytes(board, m, 1000, 4) == 2 * closed_form_weights(m) + 2 * kv
