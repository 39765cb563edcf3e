"""DFX's lowering (docs/dfx.md): event == fast at 1 and 4 cards, its MPU cycles against the
design's closed form, the ring's gathers, and its refusals."""

from __future__ import annotations

import math

import pytest

from fpgasim.config import load_model
from fpgasim.config.board_loader import board_of
from fpgasim.config.cluster import Cluster
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine import get_engine
from fpgasim.errors import ConfigError, InputError


def _board(cards: int = 1, hop_s: float = 0.25e-6):
    return board_of("u280", "dfx").with_cluster(Cluster(cards=cards, hop_latency_s=hop_s))


@pytest.mark.parametrize("cards", [1, 4])
@pytest.mark.parametrize("spec", [PassSpec("target", 1, 100),
                                  PassSpec("target", 16, 0, phase="prefill")],
                         ids=["decode", "prefill"])
def test_event_equals_fast(cards: int, spec: PassSpec) -> None:
    board, model = _board(cards), load_model("gpt2-345m")
    a = get_engine("event").run_pass(spec, board, model)
    b = get_engine("fast").run_pass(spec, board, model)
    assert a.cycles == b.cycles and a.unit_busy_cycles == b.unit_busy_cycles
    assert a.weight_bytes == b.weight_bytes


def test_mpu_cycles_are_the_tiles_plus_drains() -> None:
    """One card, one token: every weight tile of 64 x 16 once (12h^2/1024 per layer, the LM
    head's h/64 x ceil(V/16)), attention's tiles, and one 113-cycle drain per matrix
    instruction (6 per layer, 1 for the head)."""
    model, keys = load_model("gpt2-345m"), 101
    h, heads = model.hidden, model.heads
    t = get_engine("fast").run_pass(PassSpec("target", 1, keys - 1), _board(), model)
    layer = 12 * h * h // 1024 + heads * (math.ceil(keys / 16) + 4 * math.ceil(keys / 64))
    head = h // 64 * math.ceil(model.vocab / 16)
    assert t.unit_busy_cycles["MPU"] == model.layers * (layer + 6 * 113) + head + 113
    # the weights stream once: 12h^2 per layer and the tied head, FP16
    assert t.weight_bytes == 2 * (model.layers * 12 * h * h + h * model.vocab)


def test_gathers_cost_alpha_beta_on_the_router() -> None:
    """Four gathers per layer of (h, h, 4h, h) elements, N-1 steps of alpha + slice / beta,
    and the argmax pair gather."""
    model, n, alpha = load_model("gpt2-345m"), 4, 1e-6
    t = get_engine("fast").run_pass(PassSpec("target", 1, 63), _board(n, alpha), model)
    beta_per_cycle = 100e9 / 8 * 0.998 / 200e6
    h = model.hidden

    def gather(elements: int) -> int:
        return math.ceil((n - 1) * (alpha * 200e6 + elements // n * 2 / beta_per_cycle))

    per_layer = sum(gather(e) for e in (h, h, 4 * h, h))
    assert t.unit_busy_cycles["ROUTER"] == model.layers * per_layer + gather(4 * n) + 1


def test_more_cards_less_time_and_hop_latency_costs() -> None:
    model, spec = load_model("gpt2-345m"), PassSpec("target", 1, 64)
    fast = get_engine("fast")
    one, four = (fast.run_pass(spec, _board(n), model).seconds for n in (1, 4))
    assert four < one / 2
    slow = fast.run_pass(spec, _board(4, 2e-6), model).seconds
    assert slow > four


def test_refusals() -> None:
    fast = get_engine("fast")
    with pytest.raises(ConfigError, match="architecture.*DFX's lowering.*llama"):
        fast.run_pass(PassSpec("target", 1, 64), _board(), load_model("vicuna-7b-v1.5"))
    with pytest.raises(ConfigError, match="n_head = 25.*multiple of the 4 cards"):
        from fpgasim.config.loader import hf_models
        fast.run_pass(PassSpec("target", 1, 64), _board(4),
                      load_model(str(hf_models()["gpt2-xl"])))
    with pytest.raises(InputError, match="batch"):
        fast.run_pass(PassSpec("target", 1, 64, batch=2), _board(), load_model("gpt2-345m"))
    with pytest.raises(InputError, match="at most 64 tokens"):
        fast.run_pass(PassSpec("target", 65, 0, phase="prefill"), _board(),
                      load_model("gpt2-345m"))
