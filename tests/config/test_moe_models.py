"""Mixture-of-experts configs read (config/hf.py, TargetModel.moe): the keys of each
architecture as docs/moe-sd.md tabulates them, refusals in one line, and an MoE pass that
is the same on both cycle engines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fpgasim.config import load_model
from fpgasim.config.board_loader import board_of
from fpgasim.engine.event import EventEngine
from fpgasim.engine.fast import FastEngine
from fpgasim.errors import ConfigError
from fpgasim.simulate import verify_timing
from tests.cli_helpers import run_cli

HF = Path(__file__).resolve().parents[2] / "workloads" / "models" / "hf"


def test_shipped_configs_read_as_the_chapter_says() -> None:
    q3 = load_model(str(HF / "Qwen3-30B-A3B.json"))
    assert (q3.moe.experts, q3.moe.experts_per_token, q3.moe.expert_intermediate) == (128, 8, 768)
    assert q3.head_dim == 128 and q3.q_width == 4096 and q3.hidden == 2048
    assert q3.moe.norm_topk_prob and not q3.moe.shared_intermediate
    q15 = load_model(str(HF / "Qwen1.5-MoE-A2.7B-Chat.json"))
    e = q15.moe
    assert (e.experts, e.experts_per_token, e.shared_intermediate) == (60, 4, 5632)
    assert q15.moe.shared_gate and q15.attention_bias and not q15.moe.norm_topk_prob
    mx = load_model(str(HF / "Mixtral-8x7B-v0.1.json"))
    assert (mx.moe.experts, mx.moe.experts_per_token, mx.moe.expert_intermediate) == (8, 2, 14336)
    assert mx.moe.norm_topk_prob and mx.moe.dense_layers == ()


def _olmoe(tmp_path: Path, **changes) -> Path:
    """OLMoE-1B-7B-0924's structural keys (docs/moe-sd.md: not shipped)."""
    data = {"architectures": ["OlmoeForCausalLM"], "model_type": "olmoe", "hidden_size": 2048,
            "intermediate_size": 1024, "num_hidden_layers": 16, "num_attention_heads": 16,
            "num_key_value_heads": 16, "num_experts": 64, "num_experts_per_tok": 8,
            "vocab_size": 50304, "max_position_embeddings": 4096, "norm_topk_prob": False,
            "tie_word_embeddings": False, **changes}
    path = tmp_path / "olmoe.json"
    path.write_text(json.dumps(data))
    return path


def test_olmoe_counts_its_published_size(tmp_path: Path) -> None:
    from fpgasim.simulate import target_active_weight_count, target_weight_count

    m = load_model(str(_olmoe(tmp_path)))
    norms = m.layers * 2 * m.hidden + m.hidden  # left out by the op graph
    qk_norms = m.layers * (2 * m.hidden)  # OLMoE's q/k norms over H*d and KV*d: not read
    # docs/moe-sd.md: 6,919,161,856 total, 1,282,017,280 active (norms included)
    assert target_weight_count(m) == 6_919_161_856 - norms - qk_norms
    assert target_active_weight_count(m) == 1_282_017_280 - norms - qk_norms


@pytest.mark.parametrize(("changes", "field"), [
    ({"num_experts_per_tok": 65}, "num_experts_per_tok"),
    ({"num_experts": 0}, "num_experts"),
    ({"model_type": "deepseek_v3", "architectures": ["DeepseekV3ForCausalLM"]},
     "architectures"),
])
def test_moe_refusals_name_the_key(tmp_path: Path, changes: dict, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_model(str(_olmoe(tmp_path, **changes)))
    assert info.value.field == field


def test_qwen_dense_layers_are_read_and_refused_by_the_compiler(tmp_path: Path, capsys) -> None:
    data = json.loads((HF / "Qwen3-30B-A3B.json").read_text())
    data.update(decoder_sparse_step=2, mlp_only_layers=[1])
    path = tmp_path / "q.json"
    path.write_text(json.dumps(data))
    m = load_model(str(path))
    assert m.moe.dense_layers == tuple(i for i in range(48) if i % 2 == 0 or i == 1)
    res = run_cli(capsys, "simulate", "-b", "v80", "-m", str(path), "-L", "256")
    assert res.code == 2 and "mlp_only_layers" in res.err and len(res.err.splitlines()) == 1
    data["mlp_only_layers"] = [48]
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError) as info:
        load_model(str(path))
    assert info.value.field == "mlp_only_layers"


def test_analytic_engine_refuses_an_moe_target(capsys) -> None:
    res = run_cli(capsys, "simulate", "-b", "v80", "-m", str(HF / "Mixtral-8x7B-v0.1.json"),
                  "-L", "256", "-e", "analytic")
    assert res.code == 2 and "mixture-of-experts" in res.err and len(res.err.splitlines()) == 1


@pytest.mark.slow
def test_event_and_fast_agree_on_an_moe_verify_pass() -> None:
    board = board_of("v80", "flightllm-mv4")
    m = load_model(str(HF / "Qwen1.5-MoE-A2.7B-Chat.json"))
    a = verify_timing(EventEngine(), board, m, 5, 300)
    b = verify_timing(FastEngine(), board, m, 5, 300)
    assert a.cycles == b.cycles and a.weight_bytes == b.weight_bytes


def test_verify_len_one_streams_k_experts(capsys) -> None:
    res = run_cli(capsys, "simulate", "--fpga", "v80", "--design", "flightllm", "--model",
                  str(HF / "Qwen3-30B-A3B.json"), "--context", "4095", "--verify-len", "1",
                  "--format", "json")
    row = json.loads(res.out)
    assert row["experts_touched"] == 8 and row["weight_bytes"] > 0


@pytest.mark.slow
def test_routing_option(capsys, tmp_path: Path) -> None:
    model = str(HF / "Qwen3-30B-A3B.json")
    base = ["simulate", "--fpga", "v80", "--design", "flightllm-mv4", "-m", model, "-L", "512",
            "--verify-len", "16", "--format", "json"]
    plain = json.loads(run_cli(capsys, *base).out)
    local = json.loads(run_cli(capsys, *base, "--routing", "rho=0.35").out)
    assert plain["routing"] == "uniform, rho=0" and local["routing"] == "uniform, rho=0.35"
    assert local["experts_touched"] < plain["experts_touched"]
    assert local["weight_bytes"] < plain["weight_bytes"]
    trace = tmp_path / "t.csv"
    trace.write_text("layer,expert,count\n" + "".join(f"-1,{e},{1 + e % 3}\n"
                                                       for e in range(128)))
    traced = json.loads(run_cli(capsys, *base, "--routing", f"trace={trace}").out)
    assert traced["routing"] == "trace, rho=0"
    for bad in ("rho=1", "skew=-1", "skew=1,trace=x.csv", "mu=2"):
        res = run_cli(capsys, *base, "--routing", bad)
        assert res.code == 2 and "--routing" in res.err and len(res.err.splitlines()) == 1
