"""A mixture of experts' MLP in FlightLLM's compiler (docs/moe-sd.md, "Routed experts in
the compiler").

One MoE decoder layer's MLP, after the post-attention RMSnorm, in program order:

- the router, a linear h -> E (its E outputs padded to whole blocks); its softmax
  and top-k (n x E elements) are not costed (docs/models.md);
- the shared expert, if any (Qwen2-MoE): gate (SiLU fused), up (times the SiLU output,
  fused), down, and its sigmoid gate as a linear h -> 1 whose product with the shared
  output is fused into down;
- D routed experts, D the experts this layer's n routed tokens touch (routing.py: the
  expectation, whole per layer by rounding the running sum over layers, so the pass streams
  the expected expert bytes to within one expert). The n x k routed rows are split as
  evenly as whole rows go over the D experts (n k // D each, the first n k % D one more):
  the fewest row groups an expert can need, which decides each expert's MV or MM form as the
  compiler decides any projection's. Each expert: gate (SiLU fused), up (times SiLU
  fused), down (times the token's routing weight fused: one operand set); only these D
  experts' weights are loaded. The dispatched rows are read from the post-norm output by
  address (a gather is a load pattern, not an op);
- the combine: per choice r < k, an element-wise add of the tokens' r-th scaled expert
  rows onto the running sum (the first onto the attention residual, and the shared
  expert's output when there is one).

A dense layer of a model with some (Qwen's `mlp_only_layers`) is refused before this
(its description, `description/families/moe_family.py`). Capacity counts every expert
(`description.parameters.TargetArithmetic.stored_bytes`).
"""

from __future__ import annotations

from dataclasses import replace

from fpgasim.bounded import memoised
from fpgasim.config.design import Linear, Recipe
from fpgasim.config.schema import MoeBlock, TargetModel
from fpgasim.dataflow.lowerings.flightllm.flightllm_graph import (
    GraphParams,
    Layers,
    build_graph,
    ceil_to,
)
from fpgasim.dataflow.lowerings.flightllm.layers import hardware_layers
from fpgasim.dataflow.routing import touched_per_layer


def expert_rows(routed_rows: int, touched: int) -> tuple[int, ...]:
    """Rows of each of `touched` experts when `routed_rows` (n x k) rows split as evenly as
    whole rows go (at least one each)."""
    touched = max(1, min(touched, routed_rows))
    base, extra = divmod(routed_rows, touched)
    return (base + 1,) * extra + (base,) * (touched - extra)


def _linear(b: Layers, name: str, src: str, rows: int, d_in: int, d_out: int,
            cfg: Linear) -> str:
    """A projection of `rows` rows (an expert's, not the pass's): its weights and output."""
    g = b.g
    w = g.input(f"{name}.weight", (d_in, d_out), b.wdt, "weights")
    ins = [src, w]
    if cfg.bias:
        ins.append(g.input(f"{name}.bias", (d_out,), b.bdt, "weights"))
    out = g.tensor(f"{name}.out", (rows, d_out), b.act, "hbm")
    g.op(name, "linear", ins, [out], sparse_ratio=cfg.sparse_ratio, bias=cfg.bias)
    return out


def _eltwise(b: Layers, name: str, a: str, other: str, fn: str) -> str:
    """An element-wise `fn` of `a` and a tensor of its shape; its output."""
    out = b.g.tensor(f"{name}.out", b.g.shape(a), b.act, "hbm")
    b.g.op(name, "eltwise", [a, other], [out], fn=fn)
    return out


def _swiglu(b: Layers, p: str, src: str, rows: int, width: int, recipe: Recipe,
            scale: str | None) -> str:
    """gate (SiLU), up (times it), down (times `scale` when given) over `rows` rows."""
    h = b.h
    gate = _linear(b, f"{p}.gate_proj", src, rows, h, width, recipe.linear("gate"))
    act = b.g.tensor(f"{p}.silu.out", (rows, width), b.act, "hbm")
    b.g.op(f"{p}.silu", "silu", [gate], [act])
    up = _linear(b, f"{p}.up_proj", src, rows, h, width, recipe.linear("up"))
    gated = _eltwise(b, f"{p}.gated", up, act, "mul")
    down = _linear(b, f"{p}.down_proj", gated, rows, width, h, recipe.linear("down"))
    if scale is None:
        return down
    return _eltwise(b, f"{p}.scaled", down, scale, "mul")


def moe_builder(moe: MoeBlock, touched: int, block: int):
    """The MoE MLP of one decoder layer whose routed tokens touch `touched` experts; the
    routers' outputs (E, and the shared expert's one gate) padded to whole `block`s (the
    compiler tiles whole blocks; the padded outputs are loaded, as MV's 512-output groups
    are)."""

    def build(b: Layers, p: str, n2: str, x1: str, recipe: Recipe) -> str:
        g, h, n = b.g, b.h, b.rows
        _linear(b, f"{p}router", n2, n, h, ceil_to(moe.experts, block), Linear())
        shared = None
        if moe.shared_intermediate:
            scale = None
            if moe.shared_gate:  # its sigmoid (n values) is the scale's, not costed
                _linear(b, f"{p}shared.router", n2, n, h, block, Linear())
                scale = g.input(f"{p}shared.weight", (n, h), b.act, "hbm")
            shared = _swiglu(b, f"{p}shared", n2, n, moe.shared_intermediate, recipe, scale)
        for j, rows in enumerate(expert_rows(n * moe.experts_per_token, touched)):
            src = g.input(f"{p}expert{j}.rows", (rows, h), b.act, "hbm")
            weight = g.input(f"{p}expert{j}.weight", (rows, h), b.act, "hbm")
            _swiglu(b, f"{p}expert{j}", src, rows, moe.expert_intermediate, recipe, weight)
        # after the experts, so that no add joins the fused run of the op before it
        acc = x1 if shared is None else _eltwise(b, f"{p}shared.combine", shared, x1, "add")
        for r in range(moe.experts_per_token):
            routed = g.input(f"{p}routed{r}", (n, h), b.act, "hbm")
            acc = _eltwise(b, f"{p}combine{r}", routed, acc, "add")
        return acc

    return build


def layer_experts(model: TargetModel, phase: str, rows: int, requests: int) -> tuple[int, ...]:
    """Whole experts each layer's pass touches: `rows` tokens per request (a verify pass's
    x tree tokens, a prefill chunk's rows) over `requests` requests (routing.py)."""
    return touched_per_layer(model, rows, requests)


@memoised("flightllm.moe_layers", owner="fpgasim.dataflow.lowerings.flightllm.moe",
          keys="model, graph parameters, phase, rows, context, requests, experts touched",
          budget=64, why="one MoE decoder layer's fused layers per count of touched experts, "
          "shared by every layer of a pass that touches as many")
def _one_layer(model: TargetModel, params: GraphParams, phase: str, rows: int, context: int,
               requests: int, touched: int) -> tuple:
    """(decoder layer 0's hardware layers, the tail's) with `touched` experts."""
    graph = build_graph(model, params, rows, context, phase, layers=1, requests=requests,
                        moe_mlp=moe_builder(model.moe, touched, params.block))
    hw = hardware_layers(graph, prefill=phase == "prefill")
    per = tuple(x for x in hw if x.name.startswith("l0."))
    return per, tuple(hw[len(per):])


def moe_hardware_layers(model: TargetModel, params: GraphParams, phase: str, rows: int,
                        context: int, requests: int = 1) -> tuple:
    """The hardware layers of one pass of an MoE target: each decoder layer with its own
    count of touched experts (`layer_experts`), then the final norm and LM head."""
    out: list = []
    tail: tuple = ()
    for layer, touched in enumerate(layer_experts(model, phase, rows, requests)):
        per, tail = _one_layer(model, params, phase, rows, context, requests, touched)
        for x in per:
            if x.mask_layer >= 0:
                x = replace(x, name=f"l{layer}." + x.name.removeprefix("l0."),
                            mask_layer=layer)
            out.append(x)
    return tuple(out + list(tail))
