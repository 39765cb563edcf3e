"""FlightLLM's LLaMA-style graph (FLIGHTLLM.md section 5) on the dataflow graph IR.

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
    h, heads, hd, inter = model.hidden, model.heads, model.head_dim, model.intermediate
    act = _dtype(extras.activation_bits)
    wdt = _dtype(extras.weight_bits)
    bdt = _dtype(extras.bias_bits)
    g = GraphBuilder(f"flightllm {model.id} {phase} rows={rows} context={context}")
    x = g.input("x", (rows, h), act, "hbm")
    sin = g.input("rope_sin", (1, rows, h), act, "hbm")
    cos = g.input("rope_cos", (1, rows, h), act, "hbm")

    def linear(name: str, src: str, d_in: int, d_out: int, cfg: FlightLinear) -> str:
        w = g.input(f"{name}.weight", (d_in, d_out), wdt, "weights")
        ins = [src, w]
        if cfg.bias:
            ins.append(g.input(f"{name}.bias", (d_out,), bdt, "weights"))
        out = g.tensor(f"{name}.out", (rows, d_out), act, "hbm")
        g.op(name, "linear", ins, [out], sparse_ratio=cfg.sparse_ratio, bias=cfg.bias)
        return out

    def eltwise(name: str, a: str, b: str, fn: str) -> str:
        out = g.tensor(f"{name}.out", g.shape(a), act, "hbm")
        g.op(name, "eltwise", [a, b], [out], fn=fn)
        return out

    def rmsnorm(name: str, src: str) -> str:
        scale = g.input(f"{name}.scale", (1, h), act, "weights")
        out = g.tensor(f"{name}.out", (rows, h), act, "hbm")
        g.op(name, "rmsnorm", [src, scale], [out])
        return out

    def rope(name: str, src: str) -> str:
        s = eltwise(f"{name}.rope_sin", src, sin, "mul")
        c = eltwise(f"{name}.rope_cos", src, cos, "mul")
        return eltwise(f"{name}.rope_add", s, c, "add")

    for layer in range(model.layers if layers is None else layers):
        p = f"l{layer}"
        n1 = rmsnorm(f"{p}.input_norm", x)
        q = rope(f"{p}.q", linear(f"{p}.q_proj", n1, h, h, extras.q))
        k = rope(f"{p}.k", linear(f"{p}.k_proj", n1, h, h, extras.k))
        v = linear(f"{p}.v_proj", n1, h, h, extras.v)
        if phase == "decode":
            kc = g.input(f"{p}.k_cache", (heads, context - rows, hd), act, "kv_cache")
            vc = g.input(f"{p}.v_cache", (heads, context - rows, hd), act, "kv_cache")
            k_all = g.tensor(f"{p}.k_all", (heads, context, hd), act, "hbm")
            v_all = g.tensor(f"{p}.v_all", (heads, context, hd), act, "hbm")
            g.op(f"{p}.concat_k", "concat", [kc, k], [k_all])
            g.op(f"{p}.concat_v", "concat", [vc, v], [v_all])
            k, v = k_all, v_all
        scores = g.tensor(f"{p}.scores", (heads, rows, context), act, "hbm")
        g.op(f"{p}.qk", "attention_qk", [q, k], [scores], layer=layer)
        probs = g.tensor(f"{p}.probs", (heads, rows, context), act, "hbm")
        g.op(f"{p}.softmax", "softmax", [scores], [probs])
        att = g.tensor(f"{p}.attn", (rows, h), act, "hbm")
        g.op(f"{p}.pv", "attention_pv", [probs, v], [att], layer=layer)
        x1 = eltwise(f"{p}.residual_attn", linear(f"{p}.o_proj", att, h, h, extras.o), x, "add")
        n2 = rmsnorm(f"{p}.post_norm", x1)
        gate = linear(f"{p}.gate_proj", n2, h, inter, extras.gate)
        act_out = g.tensor(f"{p}.silu.out", (rows, inter), act, "hbm")
        g.op(f"{p}.silu", "silu", [gate], [act_out])
        up = eltwise(f"{p}.gated", linear(f"{p}.up_proj", n2, h, inter, extras.up), act_out, "mul")
        down = linear(f"{p}.down_proj", up, inter, h, extras.down)
        x = eltwise(f"{p}.residual_mlp", down, x1, "add")
    nf = rmsnorm("final_norm", x)
    linear("lm_head", nf, h, model.vocab, extras.lm_head)
    return g.build()


def build_longspec_graph(
    model: TargetModel, extras: FlightLLMModel, rows: int, window: int, target_keys: int
) -> Graph:
    """A LongSpec draft pass in FlightLLM's layer types (an extension; FlightLLM has no drafter).

    One block over `rows` new tokens: RMSnorm, q/k (RoPE) and v, concat onto the sliding-window
    cache (window - rows positions), self-attention over `window` keys, o + residual; RMSnorm,
    the drafter's own q, cross-attention over the target's cached K/V (`target_keys` keys, read
    in place: no concat), its own o + residual; the MLP; the shared LM head. Its linears are
    dense, without biases, at the model's FlightLLM precision.
    """
    h, heads, hd, inter = model.hidden, model.heads, model.head_dim, model.intermediate
    act = _dtype(extras.activation_bits)
    wdt = _dtype(extras.weight_bits)
    dense = FlightLinear()
    g = GraphBuilder(f"flightllm longspec draft {model.id} rows={rows} window={window}")
    x = g.input("x", (rows, h), act, "hbm")
    sin = g.input("rope_sin", (1, rows, h), act, "hbm")
    cos = g.input("rope_cos", (1, rows, h), act, "hbm")

    def linear(name: str, src: str, d_in: int, d_out: int) -> str:
        w = g.input(f"{name}.weight", (d_in, d_out), wdt, "weights")
        out = g.tensor(f"{name}.out", (rows, d_out), act, "hbm")
        g.op(name, "linear", [src, w], [out], sparse_ratio=dense.sparse_ratio, bias=False)
        return out

    def eltwise(name: str, a: str, b: str, fn: str) -> str:
        out = g.tensor(f"{name}.out", g.shape(a), act, "hbm")
        g.op(name, "eltwise", [a, b], [out], fn=fn)
        return out

    def rmsnorm(name: str, src: str) -> str:
        scale = g.input(f"{name}.scale", (1, h), act, "weights")
        out = g.tensor(f"{name}.out", (rows, h), act, "hbm")
        g.op(name, "rmsnorm", [src, scale], [out])
        return out

    def rope(name: str, src: str) -> str:
        s = eltwise(f"{name}.rope_sin", src, sin, "mul")
        c = eltwise(f"{name}.rope_cos", src, cos, "mul")
        return eltwise(f"{name}.rope_add", s, c, "add")

    def attention(name: str, q: str, k: str, v: str, keys: int) -> str:
        scores = g.tensor(f"{name}.scores", (heads, rows, keys), act, "hbm")
        g.op(f"{name}.qk", "attention_qk", [q, k], [scores], layer=-1)
        probs = g.tensor(f"{name}.probs", (heads, rows, keys), act, "hbm")
        g.op(f"{name}.softmax", "softmax", [scores], [probs])
        out = g.tensor(f"{name}.attn", (rows, h), act, "hbm")
        g.op(f"{name}.pv", "attention_pv", [probs, v], [out], layer=-1)
        return out

    n1 = rmsnorm("self.norm", x)
    q = rope("self.q", linear("self.q_proj", n1, h, h))
    k = rope("self.k", linear("self.k_proj", n1, h, h))
    v = linear("self.v_proj", n1, h, h)
    kc = g.input("self.k_cache", (heads, window - rows, hd), act, "kv_cache")
    vc = g.input("self.v_cache", (heads, window - rows, hd), act, "kv_cache")
    k_all = g.tensor("self.k_all", (heads, window, hd), act, "hbm")
    v_all = g.tensor("self.v_all", (heads, window, hd), act, "hbm")
    g.op("self.concat_k", "concat", [kc, k], [k_all])
    g.op("self.concat_v", "concat", [vc, v], [v_all])
    x1 = eltwise("self.residual",
                 linear("self.o_proj", attention("self", q, k_all, v_all, window), h, h), x, "add")
    n2 = rmsnorm("cross.norm", x1)
    cq = linear("cross.q_proj", n2, h, h)
    tk = g.input("target.k_cache", (heads, target_keys, hd), act, "kv_cache")
    tv = g.input("target.v_cache", (heads, target_keys, hd), act, "kv_cache")
    x2 = eltwise("cross.residual",
                 linear("cross.o_proj", attention("cross", cq, tk, tv, target_keys), h, h), x1,
                 "add")
    n3 = rmsnorm("mlp.norm", x2)
    gate = linear("mlp.gate_proj", n3, h, inter)
    act_out = g.tensor("mlp.silu.out", (rows, inter), act, "hbm")
    g.op("mlp.silu", "silu", [gate], [act_out])
    up = eltwise("mlp.gated", linear("mlp.up_proj", n3, h, inter), act_out, "mul")
    x3 = eltwise("mlp.residual", linear("mlp.down_proj", up, inter, h), x2, "add")
    linear("lm_head", x3, h, model.vocab)
    return g.build()
