"""A target model read from a Hugging Face `config.json` (docs/models.md, "From a Hugging
Face config").

The architectures whose decoder fpgasim's graph describes are read: Llama
(`LlamaForCausalLM`), Mistral (`MistralForCausalLM`) and Qwen2 (`Qwen2ForCausalLM`): RMSNorm,
SwiGLU, RoPE, grouped-query attention. Each field of `TargetModel` comes from the key Hugging
Face's configuration class documents for it; where a key is absent, the class's default for
that architecture is used (and named in `source`). Anything else (another architecture, a
mixture of experts, a head_dim that does not divide hidden) is refused in one line naming
the file, the key and what is read.
"""

from __future__ import annotations

from pathlib import Path

from fpgasim.config.schema import TargetModel
from fpgasim.errors import ConfigError

#: architectures read, and whether their q/k/v projections carry biases by construction
#: (Qwen2's attention class builds q_proj/k_proj/v_proj with bias=True and has no config
#: key for it: transformers, models/qwen2/modeling_qwen2.py)
ARCHITECTURES: dict[str, bool] = {
    "LlamaForCausalLM": False,
    "MistralForCausalLM": False,
    "Qwen2ForCausalLM": True,
}

#: keys of a mixture-of-experts or otherwise different MLP: refused, not silently ignored
_UNSUPPORTED_KEYS = ("num_local_experts", "num_experts", "moe_intermediate_size", "mlp_bias")


def is_hf_config(path: Path) -> bool:
    """Whether a model path names a Hugging Face config (a .json file)."""
    return path.suffix.lower() == ".json"


def model_from_hf(data: dict, source: str) -> TargetModel:
    """The TargetModel a Hugging Face config mapping describes (module docstring)."""

    def key(name: str, default: object = None, required: bool = True) -> object:
        if name in data:
            return data[name]
        if required and default is None:
            raise ConfigError(source, name, None, "required key of a Hugging Face config")
        return default

    archs = key("architectures", required=True)
    arch = archs[0] if isinstance(archs, list) and len(archs) == 1 else archs
    if arch not in ARCHITECTURES:
        raise ConfigError(source, "architectures", archs,
                          f"one of {', '.join(ARCHITECTURES)} (the decoders fpgasim lowers)")
    for name in _UNSUPPORTED_KEYS:
        if data.get(name):
            raise ConfigError(source, name, data[name],
                              "absent or false: fpgasim lowers a dense SwiGLU MLP without biases")
    act = key("hidden_act", "silu")
    if act != "silu":
        raise ConfigError(source, "hidden_act", act, "silu (SwiGLU, as the graph lowers it)")
    hidden = _int(source, "hidden_size", key("hidden_size"))
    heads = _int(source, "num_attention_heads", key("num_attention_heads"))
    kv_heads = _int(source, "num_key_value_heads", key("num_key_value_heads", heads))
    if heads % kv_heads:
        raise ConfigError(source, "num_key_value_heads", kv_heads,
                          f"a divisor of num_attention_heads = {heads} (grouped-query attention)")
    head_dim = data.get("head_dim")
    if head_dim is None:
        if hidden % heads:
            raise ConfigError(source, "hidden_size", hidden,
                              f"a multiple of num_attention_heads = {heads} (no head_dim given)")
        head_dim = hidden // heads
    window, window_note = _window(data, source)
    notes = [f"Hugging Face config {Path(source).name} ({arch})", window_note]
    bias = ARCHITECTURES[arch] or bool(data.get("attention_bias", False))
    if ARCHITECTURES[arch]:
        notes.append("q/k/v biases: built into the architecture's attention class")
    fields = {
        "id": _model_id(data, source),
        "hf_name": str(data.get("_name_or_path", ""))[:200],
        "hidden": hidden,
        "intermediate": _int(source, "intermediate_size", key("intermediate_size")),
        "layers": _int(source, "num_hidden_layers", key("num_hidden_layers")),
        "heads": heads,
        "kv_heads": kv_heads,
        "head_dim": _int(source, "head_dim", head_dim),
        "vocab": _int(source, "vocab_size", key("vocab_size")),
        "window_tokens": window,
        "tied_embeddings": bool(data.get("tie_word_embeddings", False)),
        "attention_bias": bias,
        "dtype": str(data.get("torch_dtype", ""))[:32],
        "source": "; ".join(notes)[:500],
    }
    from fpgasim.config.loader import validate_mapping

    return validate_mapping(TargetModel, fields, source)


def _int(source: str, name: str, value: object) -> int:
    """A positive whole number read from the config (bool is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(source, name, value, "a whole number >= 1")
    return value


def _window(data: dict, source: str) -> tuple[int, str]:
    """The longest sequence the model attends, and how it was read.

    `max_position_embeddings` is the trained length. Linear (position interpolation) and
    dynamic RoPE scaling without `original_max_position_embeddings` stretch it by `factor`
    (LongChat's configs: 4,096 x 8); scalings that state the original length (Llama-3.1's
    `llama3`, YaRN) already give the stretched one in `max_position_embeddings`. A sliding
    window narrower than that (Mistral-7B-v0.1's 4,096, with `use_sliding_window` not
    false) bounds the window: the graph attends every key, so longer contexts are refused
    rather than costed as full attention."""
    trained = _int(source, "max_position_embeddings", data.get("max_position_embeddings"))
    window, how = trained, f"window {trained} (max_position_embeddings)"
    scaling = data.get("rope_scaling")
    if isinstance(scaling, dict):
        kind = scaling.get("type", scaling.get("rope_type"))
        factor = scaling.get("factor")
        if kind in ("linear", "dynamic") and "original_max_position_embeddings" not in scaling:
            if isinstance(factor, bool) or not isinstance(factor, int | float) or factor < 1:
                raise ConfigError(source, "rope_scaling.factor", factor, "a number >= 1")
            window = int(trained * factor)
            how = f"window {window} (max_position_embeddings {trained} x {kind} RoPE {factor:g})"
    stated = data.get("max_sequence_length")
    if isinstance(stated, int) and not isinstance(stated, bool) and stated > window:
        window, how = stated, f"window {stated} (max_sequence_length)"
    sliding = data.get("sliding_window")
    if (isinstance(sliding, int) and not isinstance(sliding, bool) and 0 < sliding < window
            and data.get("use_sliding_window", True) is not False):
        window = sliding
        how = (f"window {sliding}: the sliding window (attention past it is not modelled; "
               "longer contexts are refused)")
    return window, how


def _model_id(data: dict, source: str) -> str:
    """A short id: the file's stem (`Qwen2-7B-Instruct.json`), or for a file named
    config.json its folder's name (a Hugging Face snapshot), else the repository's name."""
    path = Path(source)
    name = path.stem
    if name.lower() == "config":
        name = path.parent.name or str(data.get("_name_or_path", "")).rstrip("/").split("/")[-1]
    return name[:64] or "hf-model"
