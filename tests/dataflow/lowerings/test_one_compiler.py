"""One compiler for every model, context and board (docs/validation.md, "One compiler").

Each check is independent of the compiler's code: the passes of a model without grouped-query
attention are the ones the compiler gave before it was generalised (tests/data/flightllm:
their cycles; their weight bytes, recorded at the int8 operand width the instructions carry,
map to the int4 bytes the loads move, docs/hardware.md "One weight size"); weight bytes per
decode pass are the model's linear parameters at the recipe's width and sparse ratios, plus
FlightLLM's 512-column padding and biases, computed here from the shapes; KV bytes per added
token are 2 x layers x kv_heads x head_dim x bytes; time is monotone across a key tile.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import pytest

from fpgasim.config import available, load_algorithm, load_board, load_model
from fpgasim.dataflow.lowerings.flightllm.flightllm_graph import key_tiles
from fpgasim.engine.fast import FastEngine
from fpgasim.errors import InputError
from fpgasim.simulate import (
    Point,
    draft_timing,
    memory_bytes,
    prefill_specs,
    prefill_timing,
    verify_timing,
)
from fpgasim.step import simulator_of
from fpgasim.tree.draft_trees import default_tree
from tests.cli_helpers import run_cli

BEFORE = json.loads((Path(__file__).resolve().parents[2] / "data" / "flightllm" /
                     "before_one_compiler.json").read_text())
#: FlightLLM's recipe written as overrides of the study design (the old -flc boards ran it)
FLIGHTLLM_RECIPE = [
    ("design.datapath.weight_bits", [16, 8, 4]),  # the stored int4 weights have a path
    ("design.recipe.name", "flightllm"), ("design.recipe.weight_bits", 4),
    ("design.recipe.activation_bits", 8),
    ("design.recipe.kv_bits", 8), ("design.recipe.q.sparse_ratio", 0.7),
    ("design.recipe.q.bias", True), ("design.recipe.k.sparse_ratio", 0.7),
    ("design.recipe.k.bias", True), ("design.recipe.v.bias", True),
    ("design.recipe.o.bias", True), ("design.compiler.kv_append", "reread"),
    ("design.memory.mm_weight_path", "cross"),  # the old boards' FlightLLM weight path
]

#: the shipped Llama-family models (FlightLLM's lowering refuses GPT-2: tests/config/test_gpt2.py)
LLAMA_MODELS = [n for n in available("model") if load_model(n).architecture == "llama"]


#: how the boards read their memory when these passes were stored (issue 40 changed it: every
#: part read at its data sheet's decimal GB/s, transfers at its measured access model): the
#: stored passes check the compiler, so each board is read as it was then
MEMORY_AS_STORED = {
    "flightllm-u280": [("design.memory.transfer_model", "design_constants")],
    "flightllm-vhk158": [],
}
STUDY_MEMORY_AS_STORED = [("design.memory.bandwidth_reading", "gib"),
                          ("design.memory.transfer_model", "design_constants")]


def as_stored(board: str) -> list:
    """The overrides that read `board`'s memory as when the passes were stored."""
    return MEMORY_AS_STORED.get(board, STUDY_MEMORY_AS_STORED)


@cache
def engine() -> FastEngine:
    return FastEngine()


def moved_weight_bytes(recorded: int, draft: bool) -> tuple[float, float]:
    """The weight bytes a pass of llama2-7b-flightllm under FlightLLM's recipe moves, from
    the bytes recorded before (at the int8 operand width), within +- its rounding: a
    draft pass's dense weights move half their operand bytes; a verify pass streams its
    projections (q and k at 0.35 of their operand bytes, the rest 0.5) S times each and its
    int32 biases once per layer, where S = (recorded - biases) / one stream's operand bytes is
    a whole number (one form for every layer); otherwise it lies between 0.35 and 0.5 of
    what the weights took. Each load rounds to whole bytes (at most 0.5 off, and a load
    carries at least 4 KiB)."""
    slack = 0.5 * recorded / 4096
    if draft:
        return recorded / 2, slack
    m = load_model("llama2-7b-flightllm")
    h, i, pad = m.hidden, m.intermediate, 512
    n_pad = math.ceil(i / pad) * pad
    qk = 2 * h * h
    rest = 2 * h * h + 2 * h * n_pad + i * h
    stream = m.layers * (qk + rest) + h * math.ceil(m.vocab / pad) * pad
    moved = m.layers * (qk * 0.35 + rest * 0.5) + h * math.ceil(m.vocab / pad) * pad * 0.5
    biases = m.layers * 4 * h * 4
    streams, left = divmod(recorded - biases, stream)
    if left == 0:
        return streams * moved + biases, slack
    weights = recorded - biases
    return (0.35 + 0.5) / 2 * weights + biases, (0.5 - 0.35) / 2 * weights + slack


@pytest.mark.parametrize("row", BEFORE["flightllm"],
                         ids=lambda r: f"{r['board']}-{r['variant']}-{r['pass']}-{r['context']}"
                         f"-{r['verify_len']}")
def test_passes_without_gqa_are_unchanged(row: dict) -> None:
    changes = ([("design.mv_lanes", 4), ("design.mv_macs_per_lane", 1024)]
               if row["variant"] == "mv4" else [])
    board = load_board(row["board"], [*as_stored(row["board"]), *changes])
    model = load_model("llama2-7b-flightllm")
    if row["pass"] == "verify":
        t = verify_timing(engine(), board, model, row["verify_len"], row["context"])
    else:
        algorithm = load_algorithm(row["pass"].split()[1])
        t = draft_timing(engine(), board, model, algorithm, default_tree(algorithm), 3,
                         row["context"])
    assert t.cycles == row["cycles"]
    expect, slack = moved_weight_bytes(row["weight_bytes"], row["pass"] != "verify")
    assert abs(t.weight_bytes - expect) <= slack, (t.weight_bytes, expect)


@pytest.mark.parametrize("row", BEFORE["flc"],
                         ids=lambda r: f"{r['board']}-{r['context']}-{r['verify_len']}")
def test_the_study_design_with_flightllm_recipe_is_the_old_flc_board(row: dict) -> None:
    name = row["board"].removesuffix("-flc")
    board = load_board(name, [*as_stored(name), *FLIGHTLLM_RECIPE])
    t = verify_timing(engine(), board, load_model("llama2-7b-flightllm"), row["verify_len"],
                      row["context"])
    assert t.cycles == row["cycles"]
    expect, slack = moved_weight_bytes(row["weight_bytes"], False)
    assert abs(t.weight_bytes - expect) <= slack, (t.weight_bytes, expect)


def linear_shapes(m) -> list[tuple[str, int, int]]:
    """(projection, K, N) of every linear layer of one decode pass, from the model's shapes."""
    h, kv, i = m.hidden, m.kv_heads * m.head_dim, m.intermediate
    layer = [("q", h, h), ("k", h, kv), ("v", h, kv), ("o", h, h), ("gate", h, i), ("up", h, i),
             ("down", i, h)]
    return layer * m.layers + [("lm_head", h, m.vocab)]


@pytest.mark.parametrize("board_name", ["u280", "flightllm-vhk158"])
@pytest.mark.parametrize("model_name", LLAMA_MODELS)
def test_weight_bytes_per_decode_pass_are_the_parameters(board_name: str, model_name: str):
    """K x N per projection at the recipe's stored width and sparse ratio, N padded to the
    512-output MV group (docs/flightllm-model.md §4.2: padded columns are loaded), plus the
    recipe's biases: the bytes a decode pass moves are the weights as the memory holds them
    (within each load's rounding to whole bytes)."""
    board, m = load_board(board_name), load_model(model_name)
    r, group = board.recipe, board.compiler.mv_group_outputs
    params = sum(k * n for _, k, n in linear_shapes(m))
    assert params == m.layers * (2 * m.hidden**2 + 2 * m.hidden * m.kv_heads * m.head_dim
                                 + 3 * m.hidden * m.intermediate) + m.hidden * m.vocab
    stored = sum(k * math.ceil(n / group) * group * r.weight_bits / 8 * r.linear(p).sparse_ratio
                 for p, k, n in linear_shapes(m))
    biases = sum(n for p, _, n in linear_shapes(m) if r.linear(p).bias) * r.bias_bits // 8
    t = verify_timing(engine(), board, m, 1, 511)
    dense = all(r.linear(p).sparse_ratio == 1 for p, _, _ in linear_shapes(m))
    slack = 0 if dense else 0.5 * stored / 4096
    assert abs(t.weight_bytes - (stored + biases)) <= slack
    # ... and the capacity check holds the same weights (no padding, no LM-head bias)
    unpadded = sum(k * n * r.weight_bits / 8 * r.linear(p).sparse_ratio
                   for p, k, n in linear_shapes(m))
    embedding = 0 if m.tied_embeddings else m.hidden * m.vocab * r.weight_bits / 8
    model_bias = m.layers * (m.hidden + 2 * m.kv_heads * m.head_dim) if m.attention_bias else 0
    qkv_bias = model_bias * r.bias_bits // 8 if not r.linear("q").bias else 0
    assert memory_bytes(board, m, 0, 0) == math.ceil(unpadded + biases + qkv_bias + embedding)


@pytest.mark.parametrize("model_name", LLAMA_MODELS)
def test_kv_bytes_per_added_token(model_name: str) -> None:
    """The cache grows by 2 x layers x kv_heads x head_dim x bytes per token, and a pass reads
    it once (the study design appends by storing) or twice (FlightLLM's concat rereads it)."""
    m = load_model(model_name)
    per_token = 2 * m.layers * m.kv_heads * m.head_dim
    for board_name, reads in (("u280", 1), ("flightllm-vhk158", 2)):
        board = load_board(board_name)
        width = board.recipe.kv_bits // 8
        assert (memory_bytes(board, m, 1000, 2) - memory_bytes(board, m, 1000, 1)
                == per_token * width)
        if m.window_tokens >= 1536:  # 512 keys more: whole 512-key MV groups, no padding
            a = verify_timing(engine(), board, m, 1, 1023).kv_bytes
            b = verify_timing(engine(), board, m, 1, 1535).kv_bytes
            assert b - a == 512 * per_token * width * reads


def test_gqa_kv_per_token_is_a_quarter_of_llama2() -> None:
    board = load_board("u280")
    llama3, llama2 = load_model("llama-3.1-8b"), load_model("llama2-7b-flightllm")
    grow = {m.id: memory_bytes(board, m, 2000, 2) - memory_bytes(board, m, 2000, 1)
            for m in (llama3, llama2)}
    assert 4 * grow["llama-3.1-8b"] == grow["llama2-7b-flightllm"]
    reads = {m.id: verify_timing(engine(), board, m, 1, 2047).kv_bytes for m in (llama3, llama2)}
    assert 4 * reads["llama-3.1-8b"] == reads["llama2-7b-flightllm"]


def test_key_tiles() -> None:
    assert key_tiles(4096, 4096, 1) == [(0, 4096)]
    assert key_tiles(8192, 4096, 1) == [(0, 4096), (4096, 4096)]
    assert key_tiles(4112, 4096, 1) == [(0, 4096), (4096, 16)]
    # no boundary among the new tokens: the last tile starts at the first of them
    assert key_tiles(4112, 4096, 32) == [(0, 4080), (4080, 32)]
    tiles = key_tiles(131072, 4096, 85)
    assert sum(n for _, n in tiles) == 131072 and max(n for _, n in tiles) <= 4096


@pytest.mark.parametrize(("board_name", "model_name"), [
    ("u280", "llama-3.1-8b"), ("flightllm-vhk158", "llama2-7b-flightllm"),
])
def test_time_is_monotone_across_a_key_tile(board_name: str, model_name: str) -> None:
    """One more tile adds a QK^T, a PV and the rescale work; the pass grows by it and no more
    than the work of a few hundred keys (here under 2 %)."""
    board, m = load_board(board_name), load_model(model_name)
    times = [verify_timing(engine(), board, m, 1, L).seconds for L in range(4000, 4200, 16)]
    steps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert min(steps) >= 0
    assert max(steps) <= 0.02 * times[0]


@pytest.mark.slow
def test_prefill_beyond_one_tile_runs_in_chunks() -> None:
    board, m = load_board("u280"), load_model("llama-3.1-8b")
    specs = prefill_specs(board, 8192)
    assert [(s.tokens, s.context, s.phase) for s in specs] == [(4096, 0, "decode"),
                                                               (4096, 4096, "decode")]
    total = sum(simulator_of(engine()).run_pass(s, board, m).seconds for s in specs)
    assert prefill_timing(engine(), board, m, 8192).seconds == pytest.approx(total, rel=1e-12)


def test_a_context_past_the_window_is_refused() -> None:
    board, m = load_board("u280"), load_model("llama-3.1-8b")
    with pytest.raises(InputError, match="131072"):
        Point(board, m, 131072, 1).check()
    Point(board, m, 131071, 1).check()


@pytest.mark.slow
def test_llama3_runs_at_16k_on_the_compiler(capsys) -> None:
    result = run_cli(capsys, "simulate", "--board", "u280", "--model", "llama-3.1-8b",
                     "--context", "16383", "--verify-len", "16", "--format", "json")
    assert result.code == 0, result.err
    row = json.loads(result.out)
    assert row["lowering"] == "flightllm" and row["verify_s"] > 0
