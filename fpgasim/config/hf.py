"""A target model read from a Hugging Face `config.json` (docs/models.md, "From a Hugging
Face config").

The architectures whose decoder fpgasim's graph describes are read: Llama
(`LlamaForCausalLM`), Mistral (`MistralForCausalLM`) and Qwen2 (`Qwen2ForCausalLM`): RMSNorm,
a gated MLP, RoPE, grouped-query attention; and the mixtures of experts Mixtral,
Qwen2-MoE, Qwen3-MoE and OLMoE, whose MLP is an MoE block (`TargetModel.moe`,
docs/moe-sd.md, "Reading an MoE config"). The file is read as transformers reads it: the
configuration class is chosen by `model_type` (else the one class `architectures` names),
and each key fpgasim needs takes that class's default where it is absent, and where it is
null if the class reads null as its default (`num_key_value_heads`, `head_dim`); the
activation is any name transformers' `ACT2FN` knows. Anything fpgasim cannot lower (another
architecture, expert keys in a dense architecture, an MLP bias, a dense model's head_dim
other than hidden_size / num_attention_heads) is refused in one line naming the file, the
key as the file writes it, and what is read. The tables below are transformers' (v4.46
and v5 agree on each entry; docs/models.md cites the files).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from fpgasim.config.schema import TargetModel
from fpgasim.errors import ConfigError, printable


@dataclass(frozen=True)
class HfArchitecture:
    """One configuration class of transformers as fpgasim reads it: the class, the causal-LM
    class that uses it, its defaults for the keys read, and the keys only it reads."""

    config_class: str
    causal_lm: str
    #: the class's default of each key read when the key is absent (None: derived from
    #: other keys, as the class derives it)
    defaults: Mapping[str, object]
    #: q/k/v projections built with biases whatever the keys say (Qwen2's attention class)
    qkv_bias_built_in: bool = False
    #: keys this class reads that the others ignore
    own_keys: frozenset[str] = field(default_factory=frozenset)


_COMMON = {
    "hidden_act": "silu", "tie_word_embeddings": False, "head_dim": None,
}

#: by `model_type`: transformers' models/{llama,mistral,qwen2}/configuration_*.py
ARCHITECTURES: dict[str, HfArchitecture] = {
    "llama": HfArchitecture(
        "LlamaConfig", "LlamaForCausalLM",
        {**_COMMON, "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": None,
         "max_position_embeddings": 2048, "attention_bias": False, "mlp_bias": False},
        own_keys=frozenset({"attention_bias", "mlp_bias"}),
    ),
    "mistral": HfArchitecture(
        "MistralConfig", "MistralForCausalLM",
        {**_COMMON, "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
         "max_position_embeddings": 4096 * 32, "sliding_window": 4096},
        own_keys=frozenset({"sliding_window"}),
    ),
    "qwen2": HfArchitecture(
        "Qwen2Config", "Qwen2ForCausalLM",
        {**_COMMON, "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
         "max_position_embeddings": 32768, "use_sliding_window": False,
         "sliding_window": 4096, "max_window_layers": 28},
        qkv_bias_built_in=True,  # transformers, models/qwen2/modeling_qwen2.py: bias=True
        own_keys=frozenset({"sliding_window", "use_sliding_window", "max_window_layers",
                            "layer_types"}),
    ),
    # mixtures of experts (docs/moe-sd.md, "Reading an MoE config": transformers'
    # models/{mixtral,qwen2_moe,qwen3_moe,olmoe}/configuration_*.py)
    "mixtral": HfArchitecture(
        "MixtralConfig", "MixtralForCausalLM",
        {**_COMMON, "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
         "max_position_embeddings": 4096 * 32, "sliding_window": None,
         "num_local_experts": 8, "num_experts_per_tok": 2},
        own_keys=frozenset({"sliding_window", "moe"}),
    ),
    "qwen2_moe": HfArchitecture(
        "Qwen2MoeConfig", "Qwen2MoeForCausalLM",
        {**_COMMON, "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632,
         "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16,
         "max_position_embeddings": 32768, "use_sliding_window": False,
         "sliding_window": 4096, "max_window_layers": 28, "decoder_sparse_step": 1,
         "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
         "num_experts_per_tok": 4, "num_experts": 60, "norm_topk_prob": False},
        qkv_bias_built_in=True,  # modeling_qwen2_moe.py: q/k/v bias=True
        own_keys=frozenset({"sliding_window", "use_sliding_window", "max_window_layers",
                            "layer_types", "moe"}),
    ),
    "qwen3_moe": HfArchitecture(
        "Qwen3MoeConfig", "Qwen3MoeForCausalLM",
        {**_COMMON, "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144,
         "num_hidden_layers": 24, "num_attention_heads": 32, "num_key_value_heads": 4,
         "max_position_embeddings": 32768, "attention_bias": False,
         "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28,
         "decoder_sparse_step": 1, "moe_intermediate_size": 768, "num_experts_per_tok": 8,
         "num_experts": 128, "norm_topk_prob": False},
        own_keys=frozenset({"attention_bias", "sliding_window", "use_sliding_window",
                            "max_window_layers", "layer_types", "moe"}),
    ),
    "olmoe": HfArchitecture(
        "OlmoeConfig", "OlmoeForCausalLM",
        {**_COMMON, "vocab_size": 50304, "hidden_size": 2048, "intermediate_size": 2048,
         "num_hidden_layers": 16, "num_attention_heads": 16, "num_key_value_heads": None,
         "max_position_embeddings": 4096, "attention_bias": False, "num_experts": 64,
         "num_experts_per_tok": 8, "norm_topk_prob": False},
        own_keys=frozenset({"attention_bias", "moe"}),
    ),
    # transformers' models/gpt2/configuration_gpt2.py: its own key names (n_embd, ...)
    "gpt2": HfArchitecture(
        "GPT2Config", "GPT2LMHeadModel",
        {"vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12,
         "n_head": 12, "n_inner": None, "activation_function": "gelu_new",
         "tie_word_embeddings": True},
        qkv_bias_built_in=True,  # GPT-2's c_attn (Conv1D) always has a bias
    ),
}

#: GPT-2's keys (GPT2Config's names) for the TargetModel fields they fill
GPT2_FIELD_KEYS = {
    "hidden": "n_embd", "intermediate": "n_inner", "layers": "n_layer", "heads": "n_head",
    "kv_heads": "n_head", "head_dim": "n_embd", "vocab": "vocab_size",
    "window_tokens": "n_positions", "hf_name": "_name_or_path",
}

#: the activation names of transformers' ACT2FN (activations.py, v5; v4.46's are a subset).
#: The gated MLP is act(gate) * up whatever the name; silu and swish are the one SiLU.
ACTIVATIONS = frozenset({
    "gelu", "gelu_10", "gelu_fast", "gelu_new", "gelu_python", "gelu_pytorch_tanh",
    "gelu_python_tanh", "gelu_accurate", "hardswish", "laplace", "leaky_relu", "linear",
    "mish", "quick_gelu", "relu", "relu2", "relu6", "sigmoid", "silu", "sqrtsoftplus",
    "swish", "tanh", "prelu", "xielu",
})
SILU_NAMES = frozenset({"silu", "swish"})

#: keys of a mixture-of-experts MLP: refused, not silently ignored
_EXPERT_KEYS = ("num_local_experts", "num_experts", "moe_intermediate_size")

#: the TargetModel field -> the config.json key it is read from (errors name the key)
FIELD_KEYS = {
    "hidden": "hidden_size", "intermediate": "intermediate_size",
    "layers": "num_hidden_layers", "heads": "num_attention_heads",
    "kv_heads": "num_key_value_heads", "head_dim": "head_dim", "vocab": "vocab_size",
    "hf_name": "_name_or_path",
}

#: the longest window a model may state (TargetModel.window_tokens)
_MAX_WINDOW = next(m.le for m in TargetModel.model_fields["window_tokens"].metadata
                   if getattr(m, "le", None) is not None)


def is_hf_config(path: Path) -> bool:
    """Whether a model path names a Hugging Face config (a .json file)."""
    return path.suffix.lower() == ".json"


class _Reader:
    """The keys of one config.json read for one architecture (absent and null keys as the
    class reads them), noting each default taken."""

    def __init__(self, data: dict, source: str, arch: HfArchitecture) -> None:
        self.data, self.source, self.arch = data, source, arch
        self.defaulted: list[str] = []

    def get(self, key: str) -> object:
        """The key's value; absent: the class's default (None where the class derives it
        from other keys, as it does from a null `num_key_value_heads` or `head_dim`)."""
        if key not in self.data:
            default = self.arch.defaults.get(key)
            if default is not None and not isinstance(default, bool):
                self.defaulted.append(f"{key} {default}")
            return default
        return self.data[key]

    def whole(self, key: str, value: object = None) -> int:
        """A whole number >= 1 (bool is not a number here)."""
        value = self.get(key) if value is None else value
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(self.source, key, value, "a whole number >= 1")
        return value

    def flag(self, key: str) -> bool:
        """A true/false key; null reads as false (as transformers v4 tests it)."""
        value = self.get(key)
        if value is not None and not isinstance(value, bool):
            raise ConfigError(self.source, key, value, "true, false or null")
        return bool(value)

    def refuse(self, key: str, value: object, allowed: str) -> ConfigError:
        """The one-line error naming this file and key."""
        return ConfigError(self.source, key, value, allowed)


def architecture_of(data: dict, source: str) -> tuple[str, HfArchitecture]:
    """The configuration class the file names: by `model_type` (as transformers'
    AutoConfig chooses it), else by the class `architectures` names (every entry a causal
    LM of one architecture); both given must agree."""
    names = {a.causal_lm: t for t, a in ARCHITECTURES.items()}
    allowed = f"one of {', '.join(names)} (the decoders fpgasim lowers)"
    archs = data.get("architectures")
    by_arch = None
    if archs is not None:
        if (not isinstance(archs, list) or not archs
                or not all(isinstance(a, str) and a in names for a in archs)
                or len({names[a] for a in archs}) > 1):
            raise ConfigError(source, "architectures", archs, f"a list of {allowed}")
        by_arch = names[archs[0]]
    kind = data.get("model_type")
    if kind is None:
        if by_arch is None:
            raise ConfigError(source, "model_type", None, "one of "
                              f"{', '.join(ARCHITECTURES)}, or `architectures` [{allowed}]")
        return by_arch, ARCHITECTURES[by_arch]
    if not isinstance(kind, str) or kind not in ARCHITECTURES:
        raise ConfigError(source, "model_type", kind,
                          f"one of {', '.join(ARCHITECTURES)} (the decoders fpgasim lowers)")
    if by_arch is not None and by_arch != kind:
        raise ConfigError(source, "architectures", archs,
                          f"{ARCHITECTURES[kind].causal_lm}, as model_type {kind!r} says")
    return kind, ARCHITECTURES[kind]


def model_from_hf(data: dict, source: str) -> TargetModel:
    """The TargetModel a Hugging Face config mapping describes (module docstring)."""
    kind, arch = architecture_of(data, source)
    read = _Reader(data, source, arch)
    if kind == "gpt2":
        return _gpt2_from_hf(read, data, source)
    moe = _moe(read, kind) if "moe" in arch.own_keys else None
    if moe is None:
        for name in _EXPERT_KEYS:
            if data.get(name):
                raise read.refuse(name, data[name], f"absent, 0 or null: {arch.config_class} "
                                  "is a dense decoder (MoE: Mixtral, Qwen2-MoE, Qwen3-MoE, "
                                  "OLMoE)")
    if "mlp_bias" in arch.own_keys and read.flag("mlp_bias"):
        raise read.refuse("mlp_bias", True, "false: fpgasim lowers an MLP without biases")
    act = read.get("hidden_act")
    if not isinstance(act, str) or act not in ACTIVATIONS:
        raise read.refuse("hidden_act", act, "a name of transformers' ACT2FN, e.g. silu, "
                          "swish, gelu_new")
    hidden = read.whole("hidden_size")
    heads = read.whole("num_attention_heads")
    kv_heads = read.get("num_key_value_heads")
    kv_heads = read.whole("num_key_value_heads", heads if kv_heads is None else kv_heads)
    if heads % kv_heads:
        raise read.refuse("num_key_value_heads", kv_heads, f"a divisor of num_attention_heads "
                          f"= {heads} (grouped-query attention)")
    head_dim = read.get("head_dim")
    if head_dim is None:
        if hidden % heads:
            raise read.refuse("hidden_size", hidden, f"a multiple of num_attention_heads = "
                              f"{heads} (no head_dim given)")
        head_dim = hidden // heads
    head_dim = read.whole("head_dim", head_dim)
    if head_dim * heads != hidden and moe is None:
        raise read.refuse("head_dim", head_dim, f"hidden_size / num_attention_heads = "
                          f"{hidden / heads:g}: fpgasim's graph projects the heads back to "
                          "hidden_size (a head_dim that differs is not lowered)")
    window, window_key, window_note = _window(read, kind)
    bias = arch.qkv_bias_built_in or ("attention_bias" in arch.own_keys
                                      and read.flag("attention_bias"))
    notes = [f"Hugging Face config {printable(Path(source).name)} ({arch.config_class})",
             window_note]
    if act not in SILU_NAMES:
        notes.append(f"hidden_act {act}: costed as SiLU's one special-function pass per "
                     "element (docs/models.md)")
    if moe is not None:
        notes.append(f"MoE: {moe['experts']} experts, top-{moe['experts_per_token']}, "
                     f"width {moe['expert_intermediate']}"
                     + (f", shared {moe['shared_intermediate']}"
                        if moe["shared_intermediate"] else "")
                     + "; the router's softmax and top-k not costed"
                     + ("; q/k norms not costed" if kind in ("qwen3_moe", "olmoe") else ""))
    if arch.qkv_bias_built_in:
        notes.append("q/k/v biases: built into the architecture's attention class")
    fields = {
        "id": _model_id(data, source),
        "hf_name": _text(data.get("_name_or_path"), 200),
        "hidden": hidden,
        "intermediate": read.whole("intermediate_size"),
        "layers": read.whole("num_hidden_layers"),
        "heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "vocab": read.whole("vocab_size"),
        "window_tokens": window,
        "tied_embeddings": read.flag("tie_word_embeddings"),
        "attention_bias": bias,
        "dtype": _dtype(data, source),
        "source": "",
    }
    if moe is not None:
        fields["moe"] = moe
    if read.defaulted:
        notes.append(f"{arch.config_class} defaults: {', '.join(read.defaulted)}")
    fields["source"] = "; ".join(notes)[:500]
    from fpgasim.config.loader import validate_mapping

    keys = {**FIELD_KEYS, "window_tokens": window_key}
    try:
        model = validate_mapping(TargetModel, fields, source)
    except ConfigError as exc:  # name the key the file writes, not the field it fills
        if exc.field not in keys:
            raise
        raise ConfigError(source, keys[exc.field], exc.value, exc.allowed) from None
    model._keys = keys  # later errors (the lowering's) name these keys too
    return model


def _moe(read: _Reader, kind: str) -> dict:
    """The MoE block of a Mixtral, Qwen2-MoE, Qwen3-MoE or OLMoE config (docs/moe-sd.md's
    table of keys): E, k, the expert width, the shared expert, and the dense layers (Qwen:
    layer i is sparse iff i is not in `mlp_only_layers` and (i + 1) % `decoder_sparse_step`
    is 0)."""
    data = read.data
    if kind == "mixtral":
        key_e = "num_local_experts" if "num_local_experts" in data or "num_experts" not in data \
            else "num_experts"
    else:
        key_e = "num_experts" if "num_experts" in data or "num_local_experts" not in data \
            else "num_local_experts"
    experts = read.whole(key_e, read.get(key_e) if key_e in data else
                         read.arch.defaults.get("num_experts",
                                                read.arch.defaults.get("num_local_experts")))
    per_token = read.whole("num_experts_per_tok")
    if per_token > experts:
        raise read.refuse("num_experts_per_tok", per_token, f"1 to {key_e} = {experts}")
    width_key = "moe_intermediate_size" if kind.startswith("qwen") else "intermediate_size"
    block = {"experts": experts, "experts_per_token": per_token,
             "expert_intermediate": read.whole(width_key), "shared_intermediate": 0,
             "shared_gate": False,
             "norm_topk_prob": True if kind == "mixtral" else read.flag("norm_topk_prob"),
             "dense_layers": ()}
    if kind == "qwen2_moe":
        block["shared_intermediate"] = read.whole("shared_expert_intermediate_size")
        block["shared_gate"] = True
    if kind.startswith("qwen"):
        layers = read.whole("num_hidden_layers")
        step = read.whole("decoder_sparse_step")
        only = data.get("mlp_only_layers")
        only = [] if only is None else only
        if (not isinstance(only, list) or any(isinstance(i, bool) or not isinstance(i, int)
                                              or not 0 <= i < layers for i in only)):
            raise read.refuse("mlp_only_layers", only, f"a list of layers in [0, {layers}) "
                              "or null")
        block["dense_layers"] = tuple(i for i in range(layers)
                                      if i in only or (i + 1) % step)
    return block


def _gpt2_from_hf(read: _Reader, data: dict, source: str) -> TargetModel:
    """A GPT-2 config (`GPT2LMHeadModel`): n_embd, n_layer, n_head, n_inner (null: 4 x
    n_embd, as GPT2MLP builds it), n_positions, vocab_size; the LM head is tied (GPT-2
    always ties it: a false `tie_word_embeddings` is refused)."""
    act = read.get("activation_function")
    if not isinstance(act, str) or act not in ACTIVATIONS:
        raise read.refuse("activation_function", act, "a name of transformers' ACT2FN, "
                          "e.g. gelu_new")
    if "tie_word_embeddings" in data and data["tie_word_embeddings"] is False:
        raise read.refuse("tie_word_embeddings", False, "true or absent: GPT-2's LM head "
                          "is its token table")
    hidden = read.whole("n_embd")
    heads = read.whole("n_head")
    if hidden % heads:
        raise read.refuse("n_embd", hidden, f"a multiple of n_head = {heads}")
    inner = read.get("n_inner")
    inner = read.whole("n_inner", 4 * hidden if inner is None else inner)
    fields = {
        "id": _model_id(data, source),
        "architecture": "gpt2",
        "hf_name": _text(data.get("_name_or_path"), 200),
        "hidden": hidden,
        "intermediate": inner,
        "layers": read.whole("n_layer"),
        "heads": heads,
        "kv_heads": heads,
        "head_dim": hidden // heads,
        "vocab": read.whole("vocab_size"),
        "window_tokens": read.whole("n_positions"),
        "tied_embeddings": True,
        "attention_bias": True,
        "dtype": _dtype(data, source),
        "source": (f"Hugging Face config {printable(Path(source).name)} (GPT2Config); "
                   f"n_inner {'null: 4 x n_embd' if data.get('n_inner') is None else inner}; "
                   f"activation {act}")[:500],
    }
    from fpgasim.config.loader import validate_mapping

    try:
        model = validate_mapping(TargetModel, fields, source)
    except ConfigError as exc:
        if exc.field not in GPT2_FIELD_KEYS:
            raise
        raise ConfigError(source, GPT2_FIELD_KEYS[exc.field], exc.value, exc.allowed) from None
    model._keys = dict(GPT2_FIELD_KEYS)
    return model


def _text(value: object, limit: int) -> str:
    """A bookkeeping string as shown (anything else: empty), control characters escaped."""
    return printable(value)[:limit] if isinstance(value, str) else ""


def _dtype(data: dict, source: str) -> str:
    """The released weights' dtype: `dtype` (transformers v5), else `torch_dtype`."""
    for key in ("dtype", "torch_dtype"):
        value = data.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ConfigError(source, key, value, "a dtype name such as bfloat16, or null")
        return printable(value)[:32]
    return ""


def _rope(read: _Reader) -> dict | None:
    """The RoPE scaling mapping: `rope_scaling` (v4), else `rope_parameters` (v5, which
    converts the first into the second); a v5 mapping per layer type: its full-attention
    entry."""
    for key in ("rope_scaling", "rope_parameters"):
        value = read.data.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise read.refuse(key, value, "a mapping (rope_type, factor, ...) or null")
        nested = {k: v for k, v in value.items() if isinstance(v, dict)}
        if nested:
            value = nested.get("full_attention")
            if value is None:
                raise read.refuse(key, "{...}", "a mapping, or one per layer type with "
                                  "full_attention")
        return value
    return None


def _window(read: _Reader, kind: str) -> tuple[int, str, str]:
    """The longest sequence the model attends, the key it was read from, and how.

    `max_position_embeddings` is the trained length. Linear (position interpolation) and
    dynamic RoPE scaling without `original_max_position_embeddings` stretch it by `factor`
    (LongChat's configs: 4,096 x 8); scalings that state the original length (Llama-3.1's
    `llama3`, YaRN) already give the stretched one in `max_position_embeddings`. A sliding
    window narrower than that (Mistral's `sliding_window`, default 4,096; Qwen2's when
    `use_sliding_window` is true and some layer slides) bounds the window: the graph
    attends every key, so longer contexts are refused rather than costed as full
    attention."""
    trained = read.whole("max_position_embeddings")
    window, key = trained, "max_position_embeddings"
    how = f"window {trained} (max_position_embeddings)"
    scaling = _rope(read)
    if scaling is not None:
        rope_key = "rope_scaling" if read.data.get("rope_scaling") is not None else \
            "rope_parameters"
        rope_type = scaling.get("rope_type", scaling.get("type"))
        if rope_type is not None and not isinstance(rope_type, str):
            raise read.refuse(f"{rope_key}.rope_type", rope_type, "a RoPE type name")
        factor = scaling.get("factor")
        if (rope_type in ("linear", "dynamic")
                and "original_max_position_embeddings" not in scaling):
            if (isinstance(factor, bool) or not isinstance(factor, int | float)
                    or not math.isfinite(factor) or factor < 1):
                raise read.refuse(f"{rope_key}.factor", factor, "a finite number >= 1")
            if trained * factor > _MAX_WINDOW:
                raise read.refuse(f"{rope_key}.factor", factor, f"at most {_MAX_WINDOW} "
                                  f"tokens in all (max_position_embeddings {trained} x factor)")
            window, key = int(trained * factor), f"{rope_key}.factor"
            how = (f"window {window} (max_position_embeddings {trained} x {rope_type} RoPE "
                   f"{factor:g})")
    stated = read.data.get("max_sequence_length")  # LongChat's own key
    if isinstance(stated, int) and not isinstance(stated, bool) and stated > window:
        window, key, how = stated, "max_sequence_length", f"window {stated} (max_sequence_length)"
    sliding = _sliding_window(read, kind)
    if sliding is not None and sliding < window:
        window, key = sliding, "sliding_window"
        how = (f"window {sliding}: the sliding window (attention past it is not modelled; "
               "longer contexts are refused)")
    return window, key, how


def _sliding_window(read: _Reader, kind: str) -> int | None:
    """The sliding window some layer attends within, or None. Mistral: `sliding_window`
    (absent: 4,096; null: none). Qwen2: only with `use_sliding_window` true, for the layers
    `layer_types` marks sliding (else those from `max_window_layers` on). Llama: none."""
    if "sliding_window" not in read.arch.own_keys:
        return None
    if "use_sliding_window" in read.arch.own_keys:
        if not read.flag("use_sliding_window"):
            return None
        types = read.data.get("layer_types")
        if isinstance(types, list):
            if "sliding_attention" not in types:
                return None
        elif read.whole("max_window_layers") >= read.whole("num_hidden_layers"):
            return None
    value = read.get("sliding_window")
    if value is None:
        return None
    return read.whole("sliding_window", value)


def _model_id(data: dict, source: str) -> str:
    """A short id: the file's stem (`Qwen2-7B-Instruct.json`), or for a file named
    config.json its folder's name (a Hugging Face snapshot), else the repository's name;
    control characters escaped (a name from the file system is data, never terminal
    control)."""
    path = Path(source)
    name = path.stem
    if name.lower() == "config":
        repo = data.get("_name_or_path")
        name = path.parent.name or (repo.rstrip("/").split("/")[-1]
                                    if isinstance(repo, str) else "")
    return printable(name)[:64] or "hf-model"
