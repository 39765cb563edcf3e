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


class _Layers:
    """The layer builders both graphs share: every op names the tensors it reads and writes."""

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
        g = self.g
        w = g.input(f"{name}.weight", (d_in, d_out), self.wdt, "weights")
        ins = [src, w]
        if cfg.bias:
            ins.append(g.input(f"{name}.bias", (d_out,), self.bdt, "weights"))
        out = g.tensor(f"{name}.out", (self.rows, d_out), self.act, "hbm")
        g.op(name, "linear", ins, [out], sparse_ratio=cfg.sparse_ratio, bias=cfg.bias)
        return out

    def eltwise(self, name: str, a: str, b: str, fn: str) -> str:
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
        s = self.eltwise(f"{name}.rope_sin", src, self.sin, "mul")
        c = self.eltwise(f"{name}.rope_cos", src, self.cos, "mul")
        return self.eltwise(f"{name}.rope_add", s, c, "add")

    def silu(self, name: str, src: str, width: int) -> str:
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
    b = _Layers(g, model, extras, rows)
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
    dense = FlightLinear()
    g = GraphBuilder(f"flightllm longspec draft {model.id} rows={rows} window={window}")
    b = _Layers(g, model, extras, rows)
    n1 = b.rmsnorm("self.norm", b.x)
    q = b.rope("self.q", b.linear("self.q_proj", n1, h, h, dense))
    k = b.rope("self.k", b.linear("self.k_proj", n1, h, h, dense))
    v = b.linear("self.v_proj", n1, h, h, dense)
    k_all, v_all = b.concat("self", k, v, window)
    att = b.attention("self", q, k_all, v_all, window, -1)
    x1 = b.eltwise("self.residual", b.linear("self.o_proj", att, h, h, dense), b.x, "add")
    n2 = b.rmsnorm("cross.norm", x1)
    cq = b.linear("cross.q_proj", n2, h, h, dense)
    tk = g.input("target.k_cache", (heads, target_keys, hd), b.act, "kv_cache")
    tv = g.input("target.v_cache", (heads, target_keys, hd), b.act, "kv_cache")
    cross = b.attention("cross", cq, tk, tv, target_keys, -1)
    x2 = b.eltwise("cross.residual", b.linear("cross.o_proj", cross, h, h, dense), x1, "add")
    n3 = b.rmsnorm("mlp.norm", x2)
    act_out = b.silu("mlp.silu", b.linear("mlp.gate_proj", n3, h, inter, dense), inter)
    up = b.linear("mlp.up_proj", n3, h, inter, dense)
    gated = b.eltwise("mlp.gated", up, act_out, "mul")
    x3 = b.eltwise("mlp.residual", b.linear("mlp.down_proj", gated, inter, h, dense), x2, "add")
    b.linear("lm_head", x3, h, model.vocab, dense)
    return g.build()


def _draft_decoder(b: _Layers, x: str, width: int, keys: int) -> str:
    """A draft model's decoder layer over its own KV cache: RMSnorm of `x` (`width` wide),
    q/k (RoPE) and v from it, concat onto the cache, attention over `keys` keys, o plus the
    residual; the MLP. Dense int8 linears without biases, at the target's sizes."""
    h, inter = b.h, b.inter
    dense = FlightLinear()
    n1 = b.rmsnorm("norm", x, width)
    q = b.rope("q", b.linear("q_proj", n1, width, h, dense))
    k = b.rope("k", b.linear("k_proj", n1, width, h, dense))
    v = b.linear("v_proj", n1, width, h, dense)
    k_all, v_all = b.concat("self", k, v, keys)
    att = b.attention("self", q, k_all, v_all, keys, -1)
    residual = b.residual
    x1 = b.eltwise("residual_attn", b.linear("o_proj", att, h, h, dense), residual, "add")
    n2 = b.rmsnorm("post_norm", x1)
    act_out = b.silu("silu", b.linear("gate_proj", n2, h, inter, dense), inter)
    up = b.linear("up_proj", n2, h, inter, dense)
    gated = b.eltwise("gated", up, act_out, "mul")
    return b.eltwise("residual_mlp", b.linear("down_proj", gated, inter, h, dense), x1, "add")


def build_eagle3_graph(
    model: TargetModel, extras: FlightLLMModel, rows: int, keys: int, first: bool,
    fused_layers: int, input_multiple: int, vocab: int,
) -> Graph:
    """An EAGLE-3 draft pass in FlightLLM's layer types (an extension; FlightLLM has no drafter).

    First pass only: fc fuses `fused_layers` target hidden states (fused_layers h -> h). Then
    one decoder layer whose norm and q/k/v read the token embedding concatenated with the
    feature (`input_multiple` h wide, assembled in HBM), over the drafter's own KV cache of
    keys - rows positions plus the `rows` new ones; the residual is the feature; the LM head
    (`vocab` outputs) without a final norm. The study charges q's MACs twice; here q is
    compiled once, as the network runs it.
    """
    h = model.hidden
    dense = FlightLinear()
    g = GraphBuilder(f"flightllm eagle3 draft {model.id} rows={rows} keys={keys}")
    b = _Layers(g, model, extras, rows)
    if first:
        fused = g.input("target_features", (rows, fused_layers * h), b.act, "hbm")
        feature = b.linear("fc", fused, fused_layers * h, h, dense)
    else:
        feature = b.x
    wide = g.input("embedding_feature", (rows, input_multiple * h), b.act, "hbm")
    b.residual = feature
    x = _draft_decoder(b, wide, input_multiple * h, keys)
    b.linear("lm_head", x, h, vocab, dense)
    return g.build()


def build_falcon_graph(
    model: TargetModel, extras: FlightLLMModel, rows: int, keys: int, lstm_layers: int,
    head_rows: int,
) -> Graph:
    """A Falcon SAR draft pass in FlightLLM's layer types (an extension).

    Each LSTM layer: one linear over [input, previous state] (2h + h -> 4h in layer 1,
    h + h -> 4h after; the concatenation assembled in HBM) fused with a SiLU over its 4h
    gate outputs (the stand-in for sigmoid and tanh: FlightLLM's MISC unit has neither,
    and SiLU runs at the same 16 elements/cycle), then the cell update as three stand-alone
    eltwise layers over h (f * c, + i * g, o * tanh(c)). Then one decoder layer over the
    drafter's own KV cache (residual: the LSTM output) and the shared LM head over
    `head_rows` rows (max(rows, k): each position of a k-block predicts one token).
    """
    h = model.hidden
    dense = FlightLinear()
    g = GraphBuilder(f"flightllm falcon draft {model.id} rows={rows} keys={keys}")
    b = _Layers(g, model, extras, rows)
    x = ""
    for i in range(lstm_layers):
        d_in = 2 * h if i == 0 else h
        src = g.input(f"lstm{i}.in", (rows, d_in + h), b.act, "hbm")
        gates = b.silu(f"lstm{i}.gates", b.linear(f"lstm{i}.proj", src, d_in + h, 4 * h, dense),
                       4 * h)
        cell = g.input(f"lstm{i}.cell", (rows, h), b.act, "hbm")
        forget = b.eltwise(f"lstm{i}.forget", cell, gates, "mul")
        new_cell = b.eltwise(f"lstm{i}.cell_update", forget, gates, "add")
        x = b.eltwise(f"lstm{i}.out", new_cell, gates, "mul")
    b.residual = x
    x = _draft_decoder(b, x, h, keys)
    if head_rows != rows:
        x = g.input("lm_head.rows", (head_rows, h), b.act, "hbm")
    b.linear("lm_head", x, h, model.vocab, dense)
    return g.build()
