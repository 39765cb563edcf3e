"""A Hugging Face config.json read as a target model (docs/models.md, "From a Hugging Face
config"): the shipped examples against facts published beside them, every window rule, and
the refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fpgasim.config import load_model
from fpgasim.errors import ConfigError
from fpgasim.simulate import target_weight_count
from tests.cli_helpers import run_cli

HF = Path(__file__).resolve().parents[2] / "workloads" / "models" / "hf"

# Parameter counts published by the model cards (billions), independent of the shapes:
# Llama-2-7B 6.74 (Meta's model card: "7B" row of the 6.74B-parameter table), Llama-3.1-8B
# 8.03, Mistral-7B-v0.1 7.24 (Mistral AI's release: 7.3B, the Hub's safetensors count
# 7,241,732,096), Qwen2-7B 7.6 (Qwen2 technical report, Table 1: 7.6B).
PUBLISHED_B = {
    "Llama-2-7b-hf": (6.74, 0.002),
    "Llama-3.1-8B-Instruct": (8.03, 0.002),
    "Mistral-7B-v0.1": (7.24, 0.002),
    "Qwen2-7B-Instruct": (7.6, 0.01),
}


@pytest.mark.parametrize("name", sorted(PUBLISHED_B))
def test_parameter_count_matches_the_published_one(name: str) -> None:
    published, tolerance = PUBLISHED_B[name]
    counted = target_weight_count(load_model(str(HF / f"{name}.json"))) / 1e9
    assert abs(counted / published - 1) < tolerance, (counted, published)


def test_the_shipped_yaml_and_its_config_agree() -> None:
    """llama-3.1-8b.yaml was written by hand from the same config: every field agrees."""
    hf = load_model(str(HF / "Llama-3.1-8B-Instruct.json"))
    yaml = load_model("llama-3.1-8b")
    for field in ("hidden", "intermediate", "layers", "heads", "kv_heads", "head_dim", "vocab",
                  "window_tokens", "tied_embeddings", "attention_bias"):
        assert getattr(hf, field) == getattr(yaml, field), field


@pytest.mark.parametrize(
    ("name", "window", "how"),
    [
        ("Llama-2-7b-hf", 4096, "max_position_embeddings"),
        ("Llama-3.1-8B-Instruct", 131072, "max_position_embeddings"),  # llama3 states its own
        ("longchat-7b-v1.5-32k", 32768, "4096 x linear RoPE 8"),
        ("longchat-13b-16k", 16384, "2048 x linear RoPE 8"),
        ("Mistral-7B-v0.1", 4096, "sliding window"),
        ("Qwen2-7B-Instruct", 32768, "max_position_embeddings"),  # use_sliding_window false
    ],
)
def test_window_rules(name: str, window: int, how: str) -> None:
    m = load_model(str(HF / f"{name}.json"))
    assert m.window_tokens == window
    assert how in m.source


def test_qwen2_has_qkv_biases_and_seven_query_heads_per_kv_head() -> None:
    m = load_model(str(HF / "Qwen2-7B-Instruct.json"))
    assert (m.attention_bias, m.heads, m.kv_heads, m.group, m.head_dim) == (True, 28, 4, 7, 128)
    assert m.id == "Qwen2-7B-Instruct"


def _write(tmp_path: Path, **changes) -> Path:
    data = json.loads((HF / "Llama-2-7b-hf.json").read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"architectures": ["GPT2LMHeadModel"]}, "architectures"),
        ({"num_local_experts": 8}, "num_local_experts"),
        ({"hidden_act": "SiLU"}, "hidden_act"),  # ACT2FN's names are lower case
        ({"hidden_act": "gelu_foo"}, "hidden_act"),
        ({"hidden_size": 5000}, "hidden_size"),
        ({"num_attention_heads": 0}, "num_attention_heads"),
        ({"hidden_size": 4100}, "hidden_size"),
        ({"rope_scaling": {"type": "linear", "factor": "eight"}}, "rope_scaling.factor"),
        ({"num_key_value_heads": 5}, "num_key_value_heads"),
    ],
)
def test_refusals_name_the_key(tmp_path: Path, changes: dict, field: str) -> None:
    path = _write(tmp_path, **changes)
    with pytest.raises(ConfigError) as info:
        load_model(str(path))
    assert field in info.value.field
    assert str(path) in str(info.value)


def test_a_config_json_folder_name_is_the_id(tmp_path: Path) -> None:
    path = _write(tmp_path)
    assert load_model(str(path)).id == tmp_path.name[:64]


@pytest.mark.slow
def test_models_command_and_a_run_on_a_config(capsys) -> None:
    qwen = str(HF / "Qwen2-7B-Instruct.json")
    shown = run_cli(capsys, "models", qwen, "--json")
    assert shown.code == 0, shown.err
    row = json.loads(shown.out)
    assert row["gqa_group"] == 7 and row["window_tokens"] == 32768
    result = run_cli(capsys, "simulate", "--board", "flightllm-vhk158", "--model", qwen,
                     "--context", "8192", "--verify-len", "4", "--format", "json")
    assert result.code == 0, result.err
    out = json.loads(result.out)
    assert out["model"] == "Qwen2-7B-Instruct" and out["verify_s"] > 0
    refused = run_cli(capsys, "simulate", "--board", "flightllm-vhk158", "--model", qwen,
                      "--context", "32768")
    assert refused.code == 2 and "window" in refused.err
