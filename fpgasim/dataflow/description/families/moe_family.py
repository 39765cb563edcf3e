"""Mixtures of experts on the Llama family's attention (Mixtral, Qwen2-MoE, Qwen3-MoE,
OLMoE; docs/moe-sd.md): each layer's MLP is a router (h -> E), E routed SwiGLU experts
of which each token runs k, and (Qwen2-MoE) a shared expert with a sigmoid gate.

The routed experts' weighted sum joins the attention residual first and the shared
expert's output after it (a sum, in the order the study's op graph charges them).
"""

from __future__ import annotations

from fpgasim.config.schema import TargetModel, model_source
from fpgasim.dataflow.description.families import ModelFamily, register_family
from fpgasim.dataflow.description.families.llama_family import (
    EMBEDDINGS,
    attention_part,
    embedding,
    out,
    rms_norm,
    tail,
)
from fpgasim.dataflow.description.model_graph import ModelGraph
from fpgasim.dataflow.description.nodes import (
    Node,
    Residual,
    RoutedExperts,
    Router,
    SharedExperts,
    Weight,
)
from fpgasim.errors import ConfigError


def swiglu_weights(prefix: str, h: int, width: int) -> tuple[Weight, ...]:
    """gate, up (h x width) and down (width x h) of one SwiGLU expert."""
    return (Weight(f"{prefix}.gate", (h, width)), Weight(f"{prefix}.up", (h, width)),
            Weight(f"{prefix}.down", (width, h)))


def moe_mlp(model: TargetModel, x: str) -> list[Node]:
    """The MoE block after the attention residual `x`."""
    moe, h = model.moe, model.hidden
    norm = rms_norm("mlp.post_norm", x, h)
    router = Router(name="mlp.router", inputs=(norm.output,), output=out("mlp.router"),
                    experts=moe.experts, top_k=moe.experts_per_token,
                    weight=Weight("router", (h, moe.experts)),
                    norm_topk_prob=moe.norm_topk_prob)
    experts = RoutedExperts(name="mlp.experts", inputs=(norm.output, router.output),
                            output=out("mlp.experts"), experts=moe.experts,
                            top_k=moe.experts_per_token, d_in=h,
                            d_ff=moe.expert_intermediate,
                            weights_per_expert=swiglu_weights("experts", h,
                                                              moe.expert_intermediate))
    residual = Residual(name="mlp.residual", inputs=(experts.output, x),
                        output=out("mlp.residual"), width=h)
    nodes: list[Node] = [norm, router, experts, residual]
    if moe.shared_intermediate:
        s = moe.shared_intermediate
        shared = SharedExperts(name="mlp.shared", inputs=(norm.output,),
                               output=out("mlp.shared"), d_in=h, d_ff=s,
                               gate=Weight("shared.router", (h, 1)) if moe.shared_gate
                               else None,
                               expert_weights=swiglu_weights("shared", h, s))
        nodes += [shared, Residual(name="mlp.shared_residual",
                                   inputs=(shared.output, residual.output),
                                   output=out("mlp.shared_residual"), width=h)]
    return nodes


def describe(model: TargetModel) -> ModelGraph:
    """An MoE target's pass: Llama's attention, the MoE block, Llama's tail (a model with
    dense layers between its sparse ones refused: not described yet)."""
    if model.moe.dense_layers:
        raise ConfigError(model_source(model), model.key_of("mlp_only_layers"),
                          list(model.moe.dense_layers),
                          "no dense layers (mlp_only_layers [] and decoder_sparse_step 1): "
                          "MoE models with dense layers between sparse ones are not lowered yet")
    layer, x = attention_part(model, EMBEDDINGS)
    layer += moe_mlp(model, x)
    return ModelGraph("moe", EMBEDDINGS, model.hidden, (), tuple(layer), model.layers,
                      tail(model, layer[-1].output), embedding(model))


register_family(ModelFamily(
    "moe", lambda m: m.architecture == "llama" and m.moe is not None, describe))
