"""GPT-2 (docs/models.md, "GPT-2"): learned positions added to the token embeddings;
per layer a LayerNorm (gain and bias), q, k, v and o with biases, attention without RoPE
(kv_heads = heads), a LayerNorm, the plain MLP fc (`up`, h -> i) with GELU and its
projection (`down`, i -> h), both biased; a final LayerNorm and the LM head tied to the
token table. Its published parameter count includes the norms.
"""

from __future__ import annotations

from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.description.families import ModelFamily, register_family
from fpgasim.dataflow.description.families.llama_family import (
    EMBEDDINGS,
    embedding,
    linear,
    out,
    tail,
)
from fpgasim.dataflow.description.model_graph import ModelGraph
from fpgasim.dataflow.description.nodes import (
    Activation,
    Attention,
    Node,
    Norm,
    Positions,
    Residual,
    Weight,
)


def layer_norm(name: str, x: str, width: int) -> Norm:
    """A LayerNorm of `x` with its gain and bias."""
    return Norm(name=name, inputs=(x,), output=out(name), width=width, norm="layer",
                gain=Weight("norm_gain", (width,)), bias=Weight("norm_bias", (width,)))


def describe(model: TargetModel) -> ModelGraph:
    """A GPT-2 target's pass."""
    h, i = model.hidden, model.intermediate
    positions = Positions(name="positions", inputs=(EMBEDDINGS,), output=out("positions"),
                          table=Weight("positions", (model.window_tokens, h), streamed=False))
    x = positions.output
    norm = layer_norm("attn_norm", x, h)
    q, k, v = (linear(r, norm.output, r, h, h, bias=True) for r in ("q", "k", "v"))
    attn = Attention(name="attn", inputs=(q.output, k.output, v.output), output=out("attn"),
                     heads=model.heads, kv_heads=model.kv_heads, head_dim=model.head_dim)
    o = linear("o", attn.output, "o", h, h, bias=True)
    r1 = Residual(name="attn_residual", inputs=(o.output, x), output=out("attn_residual"),
                  width=h)
    norm2 = layer_norm("mlp.post_norm", r1.output, h)
    fc = linear("mlp.up", norm2.output, "up", h, i, bias=True)
    act = Activation(name="mlp.act", inputs=(fc.output,), output=out("mlp.act"), fn="gelu",
                     width=i)
    proj = linear("mlp.down", act.output, "down", i, h, bias=True)
    r2 = Residual(name="mlp.residual", inputs=(proj.output, r1.output),
                  output=out("mlp.residual"), width=h)
    layer: tuple[Node, ...] = (norm, q, k, v, attn, o, r1, norm2, fc, act, proj, r2)
    final = layer_norm("final_norm", r2.output, h)
    return ModelGraph("gpt2", EMBEDDINGS, h, (positions,), layer, model.layers,
                      tail(model, r2.output, final), embedding(model), counts_norms=True)


register_family(ModelFamily("gpt2", lambda m: m.architecture == "gpt2", describe))
