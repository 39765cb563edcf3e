"""The Llama family (Llama, Mistral, Qwen2; docs/models.md): RMSNorm, RoPE on q and k,
grouped-query attention, q/k/v biases where the model has them (Qwen2's
`attention_bias`), a SwiGLU MLP and an LM head, tied to the embedding or not.

Node names are the study's op names (docs/accounting.md): `attn_norm`, `q`, `k`, `v`,
`attn`, `o`, `mlp.post_norm`, `mlp.gate`, `mlp.up`, `mlp.down`, `final_norm`, `lm_head`.
"""

from __future__ import annotations

from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.description.families import ModelFamily, register_family
from fpgasim.dataflow.description.model_graph import ModelGraph
from fpgasim.dataflow.description.nodes import (
    Activation,
    Attention,
    Linear,
    LmHead,
    Node,
    Norm,
    Residual,
    Rope,
    Weight,
)

#: the activation a target's pass receives: the looked-up token embeddings
EMBEDDINGS = "embeddings"


def out(name: str) -> str:
    """The activation a node named `name` writes."""
    return f"{name}.out"


def rms_norm(name: str, x: str, width: int) -> Norm:
    """An RMSNorm of `x` with its gain."""
    return Norm(name=name, inputs=(x,), output=out(name), width=width, norm="rms",
                gain=Weight("norm_gain", (width,)))


def linear(name: str, x: str, role: str, d_in: int, d_out: int, bias: bool = False) -> Linear:
    """A projection of `x`, `d_in` -> `d_out`, compressed as recipe projection `role`."""
    return Linear(name=name, inputs=(x,), output=out(name), role=role, d_in=d_in, d_out=d_out,
                  weight=Weight(role, (d_in, d_out)),
                  bias=Weight("bias", (d_out,)) if bias else None)


def attention_part(model: TargetModel, x: str, rope: bool = True, width: int | None = None,
                   bias: bool | None = None) -> tuple[list[Node], str]:
    """A decoder layer up to the attention residual: the norm of `x` (`width` wide, default
    the hidden size), q, k, v (biased as the model's unless `bias` says; RoPE on q and k
    unless `rope` is False), attention over the layer's own cache, o, the residual add onto
    `x`; the nodes and the residual's output."""
    h, qw, kvw = model.hidden, model.q_width, model.kv_heads * model.head_dim
    width = width or h
    bias = model.attention_bias if bias is None else bias
    norm = rms_norm("attn_norm", x, width)
    q = linear("q", norm.output, "q", width, qw, bias)
    k = linear("k", norm.output, "k", width, kvw, bias)
    v = linear("v", norm.output, "v", width, kvw, bias)
    nodes: list[Node] = [norm, q, k, v]
    q_in, k_in = q.output, k.output
    if rope:  # each rotation right after its projection (the order FlightLLM runs them)
        nodes = [norm, q, Rope(name="q.rope", inputs=(q.output,), output=out("q.rope"), width=qw),
                 k, Rope(name="k.rope", inputs=(k.output,), output=out("k.rope"), width=kvw), v]
        q_in, k_in = out("q.rope"), out("k.rope")
    attn = Attention(name="attn", inputs=(q_in, k_in, v.output), output=out("attn"),
                     heads=model.heads, kv_heads=model.kv_heads, head_dim=model.head_dim)
    o = linear("o", attn.output, "o", qw, h)
    residual = Residual(name="attn_residual", inputs=(o.output, x), output=out("attn_residual"),
                        width=h)
    return [*nodes, attn, o, residual], residual.output


def swiglu_mlp(model: TargetModel, x: str) -> list[Node]:
    """The SwiGLU MLP after the attention residual `x`: the post-norm, gate and up,
    SiLU(gate) x up, down, the residual add onto `x`."""
    h, i = model.hidden, model.intermediate
    norm = rms_norm("mlp.post_norm", x, h)
    gate = linear("mlp.gate", norm.output, "gate", h, i)
    up = linear("mlp.up", norm.output, "up", h, i)
    act = Activation(name="mlp.act", inputs=(gate.output, up.output), output=out("mlp.act"),
                     fn="silu", width=i, gated=True)
    down = linear("mlp.down", act.output, "down", i, h)
    residual = Residual(name="mlp.residual", inputs=(down.output, x),
                        output=out("mlp.residual"), width=h)
    return [norm, gate, up, act, down, residual]


def tail(model: TargetModel, x: str, norm: Norm | None = None) -> tuple[Node, ...]:
    """The final norm (RMSNorm unless given) and the LM head."""
    h = model.hidden
    norm = norm or rms_norm("final_norm", x, h)
    head = LmHead(name="lm_head", inputs=(norm.output,), output=out("lm_head"), d_in=h,
                  vocab=model.vocab, weight=Weight("lm_head", (h, model.vocab)),
                  tied=model.tied_embeddings)
    return (norm, head)


def embedding(model: TargetModel) -> Weight:
    """The token table, vocab x hidden, looked up (not streamed)."""
    return Weight("embedding", (model.vocab, model.hidden), streamed=False)


def describe(model: TargetModel) -> ModelGraph:
    """A dense Llama-family target's pass."""
    layer, x = attention_part(model, EMBEDDINGS)
    layer += swiglu_mlp(model, x)
    return ModelGraph("llama", EMBEDDINGS, model.hidden, (), tuple(layer), model.layers,
                      tail(model, out("mlp.residual")), embedding(model))


def draft_decoder_layer(model: TargetModel, width: int) -> tuple[Node, ...]:
    """A drafter's decoder layer at the target's sizes (docs/validation.md, draft passes):
    Llama's layer over an input `width` wide, without biases (its projections are dense:
    no recipe compresses a drafter's)."""
    layer, x = attention_part(model, EMBEDDINGS, width=width, bias=False)
    return tuple(layer + swiglu_mlp(model, x))


register_family(ModelFamily(
    "llama", lambda m: m.architecture == "llama" and m.moe is None, describe))
