"""memory_bytes counts the drafter: its weights equal those of its draft graph, its KV cache
follows its attention; fits_memory appears beside tokens/s on every board (every board runs on
FlightLLM's compiler)."""

from __future__ import annotations

import math

import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.drafters import drafter_weight_count, lower_pass
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.analytic import AnalyticEngine
from fpgasim.engine.fast import FastEngine
from fpgasim.simulate import (
    memory_bytes,
    simulate_prefill,
    target_weight_count,
)
from fpgasim.studies.generation import generate


def graph_weights(algorithm: str, model_id: str) -> int:
    """Elements of every weight tensor of the algorithm's (first) draft pass graph, less the
    LM head when the drafter shares the target's."""
    algo = load_algorithm(algorithm)
    model = load_model(model_id)
    kind = algo.kind
    spec = PassSpec(kind, 1, 256, first=True) if kind == "eagle3" else PassSpec(kind, 1, 256)
    graph = lower_pass(spec, load_board("v80"), model, algo.drafter).graph
    total = 0
    for name, t in graph.tensors.items():
        if t.location != "weights" or (name.endswith("lm_head.w") and kind != "eagle3"):
            continue
        total += math.prod(t.shape)
    return total


@pytest.mark.parametrize("algorithm", ["longspec", "eagle3", "falcon", "falcon-k3"])
@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "vicuna-13b-v1.5"])
def test_drafter_weights_equal_the_draft_graph(algorithm: str, model_id: str) -> None:
    model, drafter = load_model(model_id), load_algorithm(algorithm).drafter
    counted = drafter_weight_count(model, drafter)
    assert counted == graph_weights(algorithm, model_id) == closed_form_weights(model, drafter)


def closed_form_weights(model, drafter) -> int:
    """The drafters' weights written out by hand (docs/accounting.md): the oracle of the
    count derived from their networks' ops."""
    h, kv, i = model.hidden, model.kv_heads * model.head_dim, model.intermediate
    if drafter.kind == "longspec":  # self q, o; k, v; cross q, o; the MLP (shared head)
        return 2 * h * h + 2 * h * kv + 2 * h * h + 3 * h * i
    if drafter.kind == "eagle3":  # fc, q/k/v over the wide concat, o, the MLP, its own head
        wide = drafter.input_multiple * h
        head = (drafter.draft_vocab or model.vocab) * h
        return drafter.fused_layers * h * h + wide * (h + 2 * kv) + h * h + 3 * h * i + head
    lstm, d_in = 0, 2 * h  # Falcon: 4 gates over [input, state]; one layer; the MLP
    for _ in range(drafter.lstm_layers):
        lstm, d_in = lstm + (d_in + h) * 4 * h, h
    return lstm + 2 * h * h + 2 * h * kv + 3 * h * i


def test_memory_adds_the_drafter_weights_and_its_own_kv() -> None:
    board, model = load_board("v80"), load_model("llama-3.1-8b")  # fp16 weights and KV
    kv = model.kv_heads * model.head_dim
    target = memory_bytes(board, model, 1000, 4)
    assert target == 2 * target_weight_count(model) + 2 * 2 * model.layers * kv * 1004
    longspec = load_algorithm("longspec").drafter  # window 512: its KV stops growing
    extra = memory_bytes(board, model, 1000, 4, longspec) - target
    assert extra == 2 * drafter_weight_count(model, longspec) + 2 * 2 * kv * 512
    eagle = load_algorithm("eagle3").drafter  # one layer over the whole context
    extra = memory_bytes(board, model, 1000, 4, eagle) - target
    assert extra == 2 * drafter_weight_count(model, eagle) + 2 * 2 * kv * 1004


def test_flightllm_board_counts_the_models_stored_precision() -> None:
    board, model = load_board("flightllm-u280"), load_model("llama2-7b-flightllm")
    # the one weight size (docs/hardware.md): int4 as stored, moved and timed, q and k at 0.7
    # of it, int32 biases on q, k, v and o, the untied embedding table at int4; int8 KV
    h, i, layers, vocab = model.hidden, model.intermediate, model.layers, model.vocab
    layer = (2 * h * h * 0.7 + 2 * h * h + 3 * h * i) * 0.5 + 4 * h * 4
    weights = layers * layer + 2 * h * vocab * 0.5
    kv = 2 * model.layers * model.kv_heads * model.head_dim * 512
    assert memory_bytes(board, model, 511, 1) == math.ceil(weights) + kv
    assert memory_bytes(board, model, 511, 1) < target_weight_count(model) / 2 + kv


def test_fits_memory_is_shown_on_every_board() -> None:
    model = load_model("llama2-7b-flightllm")
    row = simulate_prefill(FastEngine(), load_board("flightllm-u280"), model, 128)
    assert row["fits_memory"] is True and row["memory_bytes"] > 3e9  # int4 weights
    gen = generate(FastEngine(), load_board("flightllm-u280"), model, 100, 20).summary
    # the last step attends T = ceil16(100 + 19 + 1) = 128 tokens: context 127 + 1
    assert gen["memory_bytes"] == memory_bytes(load_board("flightllm-u280"), model, 127, 1)
    # the study's fp16 design on the U280: Llama-3.1-8B's 16 GB of weights on 8 GiB of HBM
    u280, llama = load_board("u280"), load_model("llama-3.1-8b")
    kv = 2 * 2 * llama.layers * llama.kv_heads * llama.head_dim  # fp16 K and V per token
    study = simulate_prefill(AnalyticEngine(), u280, llama, 128)
    assert study["fits_memory"] is False
    assert study["memory_bytes"] == 2 * target_weight_count(llama) + kv * 128
    study_gen = generate(AnalyticEngine(), u280, llama, 100, 4).summary
    # the last step attends T = ceil16(100 + 3 + 1) = 112 tokens
    assert study_gen["fits_memory"] is False
    assert study_gen["memory_bytes"] == 2 * target_weight_count(llama) + kv * 112
