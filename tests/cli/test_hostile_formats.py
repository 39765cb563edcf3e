"""Hostile battery, round 4: each format read by its own rules (issue 43, Deliver 1).

A Hugging Face config.json is JSON read as transformers reads it: tabs and string escapes,
absent keys as each configuration class's defaults, null where the class derives the value,
any ACT2FN activation; errors name the key the file writes. `--vary` values follow the
YAML 1.2 core schema every file uses. The expected values are transcribed by hand from
transformers' sources (v4.46.3 and v5.24, docs/formats.md "Hugging Face config.json"), not
from fpgasim's tables.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from fpgasim.config import load_board, load_model
from fpgasim.config.loader import load_yaml_text
from fpgasim.errors import ConfigError
from fpgasim.sweep.space import parse_vary
from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
HF = REPO / "workloads" / "models" / "hf"
LLAMA2 = json.loads((HF / "Llama-2-7b-hf.json").read_text())


def write(folder: Path, data: dict | str, name: str = "config.json") -> Path:
    """A config file in `folder`: `data` as JSON, or raw text."""
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


# --------------------------------------------------------------------------- JSON as JSON


def test_tabs_and_string_escapes_are_json(tmp_path: Path, capsys) -> None:
    """Tab-indented JSON with escapes ("\\u0073ilu", "\\/") was parsed as YAML and refused."""
    text = json.dumps(LLAMA2, indent="\t").replace('"silu"', '"\\u0073ilu"')
    text = text.replace('"meta-llama/Llama-2-7b-hf"', '"meta-llama\\/Llama-2-7b-hf"')
    path = write(tmp_path, text)
    model = load_model(str(path))
    assert (model.hidden, model.layers, model.hf_name) == (4096, 32, "meta-llama/Llama-2-7b-hf")
    for args in (["models", str(path)], ["validate", str(path)]):
        res = run_cli(capsys, *args)
        assert res.code == 0, res.err


def test_json_forms_python_writes_are_read(tmp_path: Path) -> None:
    """A byte-order mark, NaN/Infinity in keys fpgasim does not read (transformers' own
    `json.loads` accepts them), numbers with exponents and one line without spaces."""
    data = {**LLAMA2, "initializer_range": float("nan"), "rms_norm_eps": float("inf")}
    text = "\ufeff" + json.dumps(data, separators=(",", ":"))
    path = tmp_path / "config.json"
    path.write_bytes(text.encode("utf-8"))
    assert load_model(str(path)).vocab == 32000


@pytest.mark.parametrize(("text", "field"), [
    ('{"a": 1, "a": 2}', "a"),  # a name twice: refused, as in YAML files
    ('{"model_type": "llama",}', "line 1, column 24"),
    ("[1, 2]", "(top level)"),
    ('{"model_type": "llama"', "line 1"),
    ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "deep nesting"),
    ('{"a": ' + "9" * 5000 + "}", "digits"),
], ids=["duplicate", "trailing-comma", "array", "unclosed", "deep", "long-int"])
def test_invalid_json_is_one_line(tmp_path: Path, capsys, text: str, field: str) -> None:
    path = write(tmp_path, text)
    res = run_cli(capsys, "models", str(path))
    assert res.code == 2, res
    (line,) = res.err.strip().splitlines()
    assert str(path) in line and field in line, line


def test_a_yaml_only_spelling_is_not_json(tmp_path: Path) -> None:
    """YAML is a superset of JSON; the reverse does not hold: `yes`, comments, no quotes."""
    path = write(tmp_path, "model_type: llama\nhidden_size: 4096\n")
    with pytest.raises(ConfigError, match="valid JSON"):
        load_model(str(path))


# --------------------------------------------------------------------------- defaults

#: (model_type, the keys a minimal file gives) -> the class's defaults for the rest:
#: LlamaConfig(vocab 32000, hidden 4096, intermediate 11008, 32 layers, 32 heads, KV heads
#: = heads, max_position_embeddings 2048); MistralConfig(32000, 4096, 14336, 32, 32, 8,
#: 4096 * 32, sliding_window 4096); Qwen2Config(151936, 4096, 22016, 32, 32, 32, 32768,
#: use_sliding_window false)
DEFAULTS = {
    "llama": dict(vocab=32000, hidden=4096, intermediate=11008, layers=32, heads=32,
                  kv_heads=32, head_dim=128, window_tokens=2048, attention_bias=False),
    "mistral": dict(vocab=32000, hidden=4096, intermediate=14336, layers=32, heads=32,
                    kv_heads=8, head_dim=128, window_tokens=4096, attention_bias=False),
    "qwen2": dict(vocab=151936, hidden=4096, intermediate=22016, layers=32, heads=32,
                  kv_heads=32, head_dim=128, window_tokens=32768, attention_bias=True),
}


@pytest.mark.parametrize("model_type", sorted(DEFAULTS))
def test_absent_keys_take_the_classes_defaults(tmp_path: Path, model_type: str) -> None:
    """`{"model_type": ...}` alone is a valid config for transformers: every key defaults
    (the architecture's class; Mistral's window is its 4,096-token sliding window)."""
    model = load_model(str(write(tmp_path, {"model_type": model_type})))
    assert {k: getattr(model, k) for k in DEFAULTS[model_type]} == DEFAULTS[model_type]
    assert "defaults" in model.source


@pytest.mark.parametrize(("changes", "expected"), [
    ({"num_key_value_heads": None}, {"kv_heads": 32}),  # null: num_attention_heads
    ({"head_dim": None}, {"head_dim": 128}),  # null: hidden_size / num_attention_heads
    ({"rope_scaling": None}, {"window_tokens": 4096}),
    ({"tie_word_embeddings": None}, {"tied_embeddings": False}),
    ({"hidden_act": "swish"}, {}),  # ACT2FN: the same SiLU class
    ({"hidden_act": "gelu_new"}, {}),  # ACT2FN names: the gated MLP stays
    ({"hidden_act": "gelu_pytorch_tanh"}, {}),
    ({"torch_dtype": None, "dtype": "bfloat16"}, {"dtype": "bfloat16"}),  # v5's key
    ({"rope_scaling": None, "rope_parameters": {"rope_type": "linear", "factor": 2.0,
                                                "rope_theta": 10000.0}},
     {"window_tokens": 8192}),  # v5 writes rope_parameters
    ({"architectures": None}, {"hidden": 4096}),  # model_type chooses the class
])
def test_values_the_reference_accepts_are_read(tmp_path: Path, changes: dict,
                                              expected: dict) -> None:
    model = load_model(str(write(tmp_path, {**LLAMA2, **changes})))
    assert {k: getattr(model, k) for k in expected} == expected
    if changes.get("hidden_act") not in (None, "swish"):
        assert f"hidden_act {changes['hidden_act']}" in model.source


def test_mistral_sliding_window_and_qwen2_use_sliding_window(tmp_path: Path) -> None:
    """Mistral: sliding_window absent is 4,096, null none; Qwen2: only with
    use_sliding_window true (absent: false) and a layer from max_window_layers on."""
    mistral = json.loads((HF / "Mistral-7B-v0.1.json").read_text())
    # num_key_value_heads: absent is MistralConfig's 8, null is num_attention_heads (32)
    no_kv = {k: v for k, v in mistral.items() if k != "num_key_value_heads"}
    assert load_model(str(write(tmp_path, {**no_kv, "num_attention_heads": 16,
                                           "hidden_size": 2048}))).kv_heads == 8
    assert load_model(str(write(tmp_path, {**mistral, "num_key_value_heads": None}))).kv_heads \
        == 32
    assert load_model(str(write(tmp_path, {**mistral, "sliding_window": None}))).window_tokens \
        == 32768
    del mistral["sliding_window"]
    assert load_model(str(write(tmp_path, mistral))).window_tokens == 4096
    qwen = json.loads((HF / "Qwen2-7B-Instruct.json").read_text())
    qwen["sliding_window"] = 4096
    for changes, window in (({}, 32768), ({"use_sliding_window": None}, 32768),
                            ({"use_sliding_window": True}, 32768),  # 28 of 28 layers full
                            ({"use_sliding_window": True, "max_window_layers": 20}, 4096)):
        data = {k: v for k, v in qwen.items() if k != "use_sliding_window"}
        assert load_model(str(write(tmp_path, {**data, **changes}))).window_tokens == window
    llama = {**LLAMA2, "sliding_window": 1024}  # LlamaConfig has no sliding window
    assert load_model(str(write(tmp_path, llama))).window_tokens == 4096


@pytest.mark.parametrize(("changes", "key"), [
    ({"hidden_size": 10**6}, "hidden_size"),  # not `hidden` (the internal field)
    ({"vocab_size": 1 << 30}, "vocab_size"),
    ({"num_hidden_layers": 5000}, "num_hidden_layers"),
    ({"max_sequence_length": 10**12}, "max_sequence_length"),  # not `window_tokens`
    ({"rope_scaling": {"type": "linear", "factor": 1e308}}, "rope_scaling.factor"),
    ({"rope_scaling": {"type": "linear", "factor": float("nan")}}, "rope_scaling.factor"),
    ({"rope_scaling": "linear"}, "rope_scaling"),
    ({"architectures": [["LlamaForCausalLM"]]}, "architectures"),  # a list in the list
    ({"architectures": {"a": 1}}, "architectures"),
    ({"model_type": ["llama"]}, "model_type"),
    ({"model_type": "mistral"}, "architectures"),  # disagrees with LlamaForCausalLM
    ({"hidden_act": ["silu"]}, "hidden_act"),
    ({"hidden_act": "Silu"}, "hidden_act"),  # ACT2FN's names are case-sensitive
    ({"hidden_size": 4096.0}, "hidden_size"),
    ({"head_dim": 64}, "head_dim"),
    ({"torch_dtype": ["float16"]}, "torch_dtype"),
    ({"tie_word_embeddings": "yes"}, "tie_word_embeddings"),
    ({"mlp_bias": True}, "mlp_bias"),
    ({"num_key_value_heads": 0}, "num_key_value_heads"),
])
def test_refusals_name_the_key_the_file_writes(tmp_path: Path, capsys, changes: dict,
                                               key: str) -> None:
    path = write(tmp_path, {**LLAMA2, **changes})
    res = run_cli(capsys, "simulate", "-b", "u280", "-m", str(path), "-L", "128", "-e",
                  "analytic")
    assert res.code == 2, res
    (line,) = res.err.strip().splitlines()
    assert f"{path}: {key} = " in line, line


# --------------------------------------------------------------------------- --vary


@pytest.mark.parametrize("text", ["1e3", "0225", "0x10", "0o17", "2:25", "1_000", "yes",
                                  "off", "true", "False", "null", "~", "4.5", ".5", "-.inf",
                                  ".nan", "nan", "2024-01-01", "x"])
def test_vary_reads_a_value_as_a_file_reads_it(text: str) -> None:
    """`--vary design.clock_mhz=1e3` was refused and `yes` read as true (YAML 1.1) while
    `clock_mhz: 1e3` in a file is 1000.0: both now follow the core schema."""
    (value,) = dict(parse_vary([f"design.clock_mhz={text}"]).axes)["design.clock_mhz"]
    in_file = load_yaml_text(f"overrides:\n  design.clock_mhz: {text}\n")["overrides"]
    expected = in_file["design.clock_mhz"]
    assert type(value) is type(expected)
    assert value == expected or value != value and expected != expected  # nan


def test_vary_and_a_board_file_build_the_same_board(tmp_path: Path) -> None:
    board = yaml.safe_load((REPO / "boards/u280.yaml").read_text())
    board["name"] = "u280"
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump(board) + "overrides:\n  design.clock_mhz: 2.5e2\n")
    from_file = load_board(str(path))
    (value,) = dict(parse_vary(["design.clock_mhz=2.5e2"]).axes)["design.clock_mhz"]
    from_vary = load_board("u280", [("design.clock_mhz", value)])
    assert from_file.design.model_dump() == from_vary.design.model_dump()
    assert from_vary.clock_mhz == 250.0


def test_vary_keeps_values_of_other_types_apart() -> None:
    """1, 1.0 and true hash alike: a dict merged them (true silently became 1)."""
    axes = dict(parse_vary(["design.mv_lanes=1,1.0,true,1"]).axes)
    assert axes["design.mv_lanes"] == (1, 1.0, True)


def test_vary_boolean_spellings_of_yaml_1_1_are_refused(capsys, tmp_path: Path) -> None:
    res = run_cli(capsys, "explore", "--board", "v80", "--vary",
                  "design.memory.mm_weight_path=yes", "-m", "llama-3.1-8b", "-a", "longspec",
                  "--contexts", "1024", "-e", "analytic", "--no-cache",
                  "--out", str(tmp_path / "e.csv"))
    assert res.code == 2
    (line,) = res.err.strip().splitlines()
    assert "mm_weight_path" in line and "'yes'" in line, line


# --------------------------------------------------------------------------- YAML 1.2 tabs


@pytest.mark.parametrize(("text", "value"), [
    ("a:\t1\n", {"a": 1}),  # a tab separates tokens in YAML 1.2
    ("{a: 1,\tb: [1,\t2]}\n", {"a": 1, "b": [1, 2]}),
    ('{\n\t"a": "x\\ty",\n\t"b": 2\n}\n', {"a": "x\ty", "b": 2}),  # JSON is YAML 1.2
    ("a: 'it\ts'\nb:\tit's\n", {"a": "it\ts", "b": "it's"}),  # quoted tabs kept
    ("a: 1\t# a comment\n", {"a": 1}),
])
def test_yaml_1_2_tabs_separate(text: str, value: dict) -> None:
    """PyYAML refused every tab outside a quoted scalar."""
    assert load_yaml_text(text) == value


def test_a_tab_indenting_a_block_is_still_refused() -> None:
    """YAML 1.2 forbids tabs in indentation: `\\tb: 1` under `a:` stays an error."""
    with pytest.raises(yaml.YAMLError):
        load_yaml_text("a:\n\tb: 1\n")


def test_a_design_written_as_tab_indented_json_loads(tmp_path: Path, capsys) -> None:
    design = load_yaml_text((REPO / "designs/study.yaml").read_text())
    path = tmp_path / "d.yaml"
    path.write_text(json.dumps(design, indent="\t"))
    res = run_cli(capsys, "simulate", "--fpga", "u280", "--design", str(path), "-m",
                  "llama-3.1-8b", "-L", "256", "-e", "analytic", "--format", "json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["design"] == "study"
