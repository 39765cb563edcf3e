"""GPT-2 family (issue 39 item 3): the HF reader, the built-in models, the parameter count
against GPT-2's closed form, and the refusals of the lowerings that do not model it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fpgasim.config import load_model
from fpgasim.config.hf import model_from_hf
from fpgasim.errors import ConfigError
from fpgasim.simulate import target_weight_count

HF = Path(__file__).resolve().parents[2] / "workloads" / "models" / "hf"


def gpt2_params(h: int, layers: int, vocab: int = 50257, positions: int = 1024) -> int:
    """GPT-2's parameters, written out: token and position tables, per layer q/k/v/o and the
    4h MLP with every bias (12h^2 + 13h) and two LayerNorms (4h), the final LayerNorm (2h);
    the LM head is the token table."""
    return vocab * h + positions * h + layers * (12 * h * h + 13 * h) + 2 * h


@pytest.mark.parametrize("name, h, layers, published", [
    ("gpt2-medium", 1024, 24, 354_823_168),
    ("gpt2-large", 1280, 36, 774_030_080),
    ("gpt2-xl", 1600, 48, 1_557_611_200),
])
def test_hf_gpt2_parameter_count(name: str, h: int, layers: int, published: int) -> None:
    model = load_model(str(HF / f"{name}.json"))
    assert model.architecture == "gpt2" and model.intermediate == 4 * h
    assert model.layers == layers and model.tied_embeddings and model.kv_heads == model.heads
    assert gpt2_params(h, layers) == published  # the closed form against HF's count
    assert target_weight_count(model) == published


@pytest.mark.parametrize("builtin, hf", [("gpt2-345m", "gpt2-medium"),
                                         ("gpt2-774m", "gpt2-large")])
def test_builtin_gpt2_matches_its_hf_config(builtin: str, hf: str) -> None:
    a, b = load_model(builtin), load_model(str(HF / f"{hf}.json"))
    for field in ("architecture", "hidden", "intermediate", "layers", "heads", "kv_heads",
                  "head_dim", "vocab", "window_tokens", "tied_embeddings", "attention_bias"):
        assert getattr(a, field) == getattr(b, field), field


def test_dfx_1p5b_is_not_gpt2_xl() -> None:
    m = load_model("gpt2-1.5b")
    assert (m.hidden, m.heads, m.layers, m.params_b) == (1536, 24, 48, None)
    assert target_weight_count(m) == gpt2_params(1536, 48) == 1_438_683_648


def test_n_inner_given_and_refusals(tmp_path: Path) -> None:
    data = json.loads((HF / "gpt2-medium.json").read_text())
    assert model_from_hf({**data, "n_inner": 2048}, "x.json").intermediate == 2048
    with pytest.raises(ConfigError, match="n_head"):
        model_from_hf({**data, "n_head": 0}, "x.json")
    with pytest.raises(ConfigError, match="tie_word_embeddings"):
        model_from_hf({**data, "tie_word_embeddings": False}, "x.json")
    with pytest.raises(ConfigError, match="n_embd"):
        model_from_hf({**data, "n_head": 3}, "x.json")


def test_flightllm_and_analytic_refuse_gpt2() -> None:
    from fpgasim.config import load_board
    from fpgasim.dataflow.passes import PassSpec
    from fpgasim.engine import get_engine

    board, model = load_board("u280"), load_model("gpt2-345m")
    spec = PassSpec("target", tokens=1, context=64)
    for engine, where in (("fast", "FlightLLM's lowering"), ("analytic", "accounting")):
        with pytest.raises(ConfigError, match=f"architecture.*{where}.*gpt2-345m"):
            get_engine(engine).run_pass(spec, board, model)
