"""FlightLLM's LLaMA-style graph (docs/flightllm-model.md §5) on the dataflow graph IR.

One decoder layer, in IR order: RMSnorm; q, k (each with the RoPE triple: mul by the sin
cache, mul by the cos cache, add); v; decode only: concat of the new k and v onto the
caches; QK^T, softmax, PV; o plus the residual add; RMSnorm; gate, SiLU; up times the SiLU
output; down plus the residual add. Then the final RMSnorm and the LM head. Every op names
the tensors it reads and writes; the compiler fuses from those, never from op names.
"""

from __future__ import annotations

from fpgasim.config.schema import FlightLinear, FlightLLMModel, TargetModel
from fpgasim.dataflow.graph import Graph, GraphBuilder

#: op kinds of the graph (the compiler's layer types before fusion)
KINDS = (
    "rmsnorm", "linear", "eltwise", "silu", "concat", "attention_qk", "softmax", "attention_pv"
)


def _dtype(bits: int) -> str:
    return {4: "int4", 8: "int8", 16: "fp16", 32: "int32"}[bits]


class Layers:
    """The layer builders of FlightLLM's graphs (the target's here, the drafters' in their
    plug-ins): every op names the tensors it reads and writes."""

    def __init__(self, g: GraphBuilder, model: TargetModel, extras: FlightLLMModel, rows: int):
        self.g, self.rows = g, rows
        self.h, self.heads, self.hd = model.hidden, model.heads, model.head_dim
        self.inter = model.intermediate
        self.residual = ""
        self.act = _dtype(extras.activation_bits)
        self.wdt = _dtype(extras.weight_bits)
        self.bdt = _dtype(extras.bias_bits)
        self.x = g.input("x", (rows, self.h), self.act, "hbm")
        self.sin = g.input("rope_sin", (1, rows, self.h), self.act, "hbm")
        self.cos = g.input("rope_cos", (1, rows, self.h), self.act, "hbm")

    def linear(self, name: str, src: str, d_in: int, d_out: int, cfg: FlightLinear) -> str:
        """A projection d_in -> d_out with its weights (and bias) and sparsity; its output."""
        g = self.g
        w = g.input(f"{name}.weight", (d_in, d_out), self.wdt, "weights")
        ins = [src, w]
        if cfg.bias:
            ins.append(g.input(f"{name}.bias", (d_out,), self.bdt, "weights"))
        out = g.tensor(f"{name}.out", (self.rows, d_out), self.act, "hbm")
        g.op(name, "linear", ins, [out], sparse_ratio=cfg.sparse_ratio, bias=cfg.bias)
        return out

    def eltwise(self, name: str, a: str, b: str, fn: str) -> str:
        """An element-wise `fn` (add, mul) of two tensors of one shape; its output."""
        out = self.g.tensor(f"{name}.out", self.g.shape(a), self.act, "hbm")
        self.g.op(name, "eltwise", [a, b], [out], fn=fn)
        return out

    def rmsnorm(self, name: str, src: str, width: int | None = None) -> str:
        """RMSnorm of `src`, `width` wide (default the hidden size)."""
        width = width or self.h
        scale = self.g.input(f"{name}.scale", (1, width), self.act, "weights")
        out = self.g.tensor(f"{name}.out", (self.rows, width), self.act, "hbm")
        self.g.op(name, "rmsnorm", [src, scale], [out])
        return out

    def rope(self, name: str, src: str) -> str:
        """Rotary embedding as FlightLLM runs it: two multiplies and an add."""
        s = self.eltwise(f"{name}.rope_sin", src, self.sin, "mul")
        c = self.eltwise(f"{name}.rope_cos", src, self.cos, "mul")
        return self.eltwise(f"{name}.rope_add", s, c, "add")

    def silu(self, name: str, src: str, width: int) -> str:
        """SiLU over `width` columns (fused into the producing linear layer later)."""
        out = self.g.tensor(f"{name}.out", (self.rows, width), self.act, "hbm")
        self.g.op(name, "silu", [src], [out])
        return out

    def concat(self, p: str, k: str, v: str, keys: int) -> tuple[str, str]:
        """Append the new rows' k and v to caches of keys - rows positions."""
        g, shape = self.g, (self.heads, keys - self.rows, self.hd)
        kc = g.input(f"{p}.k_cache", shape, self.act, "kv_cache")
        vc = g.input(f"{p}.v_cache", shape, self.act, "kv_cache")
        k_all = g.tensor(f"{p}.k_all", (self.heads, keys, self.hd), self.act, "hbm")
        v_all = g.tensor(f"{p}.v_all", (self.heads, keys, self.hd), self.act, "hbm")
        g.op(f"{p}.concat_k", "concat", [kc, k], [k_all])
        g.op(f"{p}.concat_v", "concat", [vc, v], [v_all])
        return k_all, v_all

    def attention(self, p: str, q: str, k: str, v: str, keys: int, layer: int) -> str:
        """QK^T, softmax and PV of the rows over `keys` keys (`layer` picks the prefill mask)."""
        g, act = self.g, self.act
        scores = g.tensor(f"{p}.scores", (self.heads, self.rows, keys), act, "hbm")
        g.op(f"{p}.qk", "attention_qk", [q, k], [scores], layer=layer)
        probs = g.tensor(f"{p}.probs", (self.heads, self.rows, keys), act, "hbm")
        g.op(f"{p}.softmax", "softmax", [scores], [probs])
        out = g.tensor(f"{p}.attn", (self.rows, self.h), act, "hbm")
        g.op(f"{p}.pv", "attention_pv", [probs, v], [out], layer=layer)
        return out

    def draft_decoder(self, x: str, width: int, keys: int) -> str:
        """A draft model's decoder layer over its own KV cache: RMSnorm of `x` (`width` wide),
        q/k (RoPE) and v from it, concat onto the cache, attention over `keys` keys, o plus the
        residual; the MLP. Dense int8 linears without biases, at the target's sizes."""
        h, inter = self.h, self.inter
        dense = FlightLinear()
        n1 = self.rmsnorm("norm", x, width)
        q = self.rope("q", self.linear("q_proj", n1, width, h, dense))
        k = self.rope("k", self.linear("k_proj", n1, width, h, dense))
        v = self.linear("v_proj", n1, width, h, dense)
        k_all, v_all = self.concat("self", k, v, keys)
        att = self.attention("self", q, k_all, v_all, keys, -1)
        o = self.linear("o_proj", att, h, h, dense)
        x1 = self.eltwise("residual_attn", o, self.residual, "add")
        n2 = self.rmsnorm("post_norm", x1)
        act_out = self.silu("silu", self.linear("gate_proj", n2, h, inter, dense), inter)
        up = self.linear("up_proj", n2, h, inter, dense)
        gated = self.eltwise("gated", up, act_out, "mul")
        down = self.linear("down_proj", gated, inter, h, dense)
        return self.eltwise("residual_mlp", down, x1, "add")


def build_graph(
    model: TargetModel,
    extras: FlightLLMModel,
    rows: int,
    context: int,
    phase: str,
    layers: int | None = None,
) -> Graph:
    """The graph of one pass: `rows` query rows (1 in decode, L in prefill) over `context` keys.

    Decode: the K/V caches hold context - rows positions and concat appends the new rows.
    Prefill: rows = context = L and K/V come straight from the projections. `layers`
    decoder layers (default: the model's), then the final norm and the LM head.
    """
    h, inter = model.hidden, model.intermediate
    g = GraphBuilder(f"flightllm {model.id} {phase} rows={rows} context={context}")
    b = Layers(g, model, extras, rows)
    x = b.x
    for layer in range(model.layers if layers is None else layers):
        p = f"l{layer}"
        n1 = b.rmsnorm(f"{p}.input_norm", x)
        q = b.rope(f"{p}.q", b.linear(f"{p}.q_proj", n1, h, h, extras.q))
        k = b.rope(f"{p}.k", b.linear(f"{p}.k_proj", n1, h, h, extras.k))
        v = b.linear(f"{p}.v_proj", n1, h, h, extras.v)
        if phase == "decode":
            k, v = b.concat(p, k, v, context)
        att = b.attention(p, q, k, v, context, layer)
        x1 = b.eltwise(f"{p}.residual_attn", b.linear(f"{p}.o_proj", att, h, h, extras.o), x, "add")
        n2 = b.rmsnorm(f"{p}.post_norm", x1)
        act_out = b.silu(f"{p}.silu", b.linear(f"{p}.gate_proj", n2, h, inter, extras.gate), inter)
        up = b.linear(f"{p}.up_proj", n2, h, inter, extras.up)
        gated = b.eltwise(f"{p}.gated", up, act_out, "mul")
        down = b.linear(f"{p}.down_proj", gated, inter, h, extras.down)
        x = b.eltwise(f"{p}.residual_mlp", down, x1, "add")
    nf = b.rmsnorm("final_norm", x)
    b.linear("lm_head", nf, h, model.vocab, extras.lm_head)
    return g.build()
