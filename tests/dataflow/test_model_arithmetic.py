"""The target model's arithmetic is read off its description once (description.parameters);
the closed forms written out by hand (the study's accounting, the old per-module counts)
are its oracles, for every shipped model, a tied-embedding one and Qwen2's q/k/v biases."""

from __future__ import annotations

from pathlib import Path

import pytest

from fpgasim.config import load_board, load_model
from fpgasim.dataflow.description.parameters import target_arithmetic
from fpgasim.engine.analytic import target_counts
from fpgasim.heterogeneous.costs import target_streamed_params, target_total_params
from fpgasim.simulate import memory_bytes, target_weight_count

MODELS = Path(__file__).resolve().parents[2] / "workloads" / "models"
#: Llama-family files (GPT-2's closed form is tests/config/test_gpt2.py's)
ALL_FILES = [p for p in sorted(MODELS.glob("*.yaml")) + sorted((MODELS / "hf").glob("*.json"))
             if load_model(str(p)).architecture == "llama"]
#: mixtures of experts: their own closed form below (docs/moe-sd.md)
MOE_FILES = [p for p in ALL_FILES if load_model(str(p)).moe is not None]
FILES = [p for p in ALL_FILES if p not in MOE_FILES]


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


#: docs/moe-sd.md, "Parameters, total and active": (total, active) counted there, norms
#: included; the op graph leaves the norm gains out (2h per layer and the final h)
MOE_COUNTS = {
    "Mixtral-8x7B-v0.1": (46_702_792_704, 12_879_925_248),
    "Qwen3-30B-A3B": (30_532_122_624, 3_353_032_704),
    "Qwen1.5-MoE-A2.7B-Chat": (14_315_784_192, 2_689_173_504),
}


def test_every_shipped_moe_model_is_checked() -> None:
    assert sorted(load_model(str(p)).id for p in MOE_FILES) == sorted(MOE_COUNTS)


@pytest.mark.parametrize("path", MOE_FILES, ids=lambda p: p.name)
def test_moe_parameters_total_and_active(path: Path) -> None:
    """Total and active parameters against the chapter's closed form and its counts."""
    from fpgasim.simulate import target_active_weight_count

    m = load_model(str(path))
    e = m.moe
    h, d, kv = m.hidden, m.head_dim, m.kv_heads * m.head_dim
    attention = h * m.heads * d + 2 * h * kv + m.heads * d * h
    if m.attention_bias:
        attention += m.heads * d + 2 * kv
    shared = 3 * h * e.shared_intermediate + (h if e.shared_gate else 0)
    expert = 3 * h * e.expert_intermediate
    norms = m.layers * 2 * h + h
    if m.id == "Qwen3-30B-A3B":  # its q/k norms: one head_dim-wide scale each per layer
        norms += m.layers * 2 * d
    tables = 2 * m.vocab * h

    def count(experts: int) -> int:
        return m.layers * (attention + h * e.experts + shared + experts * expert) + tables

    total, active = MOE_COUNTS[m.id]
    assert target_weight_count(m) == count(e.experts) == total - norms
    assert target_active_weight_count(m) == count(e.experts_per_token) == active - norms
    with pytest.raises(Exception, match="mixture-of-experts|routed experts"):
        target_streamed_params(m)


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
