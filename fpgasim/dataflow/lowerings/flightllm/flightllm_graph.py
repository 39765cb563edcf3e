"""FlightLLM's LLaMA-style graph (docs/flightllm-model.md §5), generalised, on the graph IR.

One decoder layer, in IR order: RMSnorm; q, k (each with the RoPE triple: mul by the sin
cache, mul by the cos cache, add); v; decode only: the KV append (FlightLLM's concat of the
new k and v onto the caches, or the projections storing straight into the cache); QK^T,
softmax, PV; o plus the residual add; RMSnorm; gate, SiLU; up times the SiLU output; down
plus the residual add. Then the final RMSnorm and the LM head. Every op names the tensors it
reads and writes; the compiler fuses from those, never from op names. The layer is not
described here: `FlightLLMReader` lowers the target's description (`dataflow/description/`)
and a drafter's decoder layer's (`draft_decoder_layer`) node by node onto `Layers`.

Generalised (docs/flightllm-sd.md, "One compiler"): precision and compression come from the
design's recipe; k and v project to `kv_heads` heads (grouped-query attention: in decode and
verify passes the g = heads / kv_heads query heads of a KV head are g x rows query rows over
one K/V stream, token-major); attention over more keys than `key_tile` is tiled over the
keys, each tile's softmax keeping a running max and sum, the running output rescaled by an
element-wise multiply and add per tile after the first and normalised once at the end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fpgasim.config.design import Linear, Recipe
from fpgasim.config.schema import TargetModel, model_source
from fpgasim.dataflow.description import Reader, describe_target
from fpgasim.dataflow.description.families.llama_family import EMBEDDINGS, draft_decoder_layer
from fpgasim.dataflow.description.nodes import (
    Activation,
    Attention,
    LmHead,
    Node,
    Residual,
    Rope,
    RoutedExperts,
    Router,
    SharedExperts,
)
from fpgasim.dataflow.description.nodes import Linear as LinearNode
from fpgasim.dataflow.description.nodes import Norm as NormNode
from fpgasim.dataflow.graph import Graph, GraphBuilder
from fpgasim.errors import ConfigError

#: op kinds of the graph (the compiler's layer types before fusion)
KINDS = (
    "rmsnorm", "linear", "eltwise", "silu", "concat", "attention_qk", "softmax", "attention_pv"
)


def _dtype(bits: int) -> str:
    return {4: "int4", 8: "int8", 16: "fp16", 32: "int32"}[bits]


@dataclass(frozen=True)
class GraphParams:
    """What a pass's graph depends on besides the model and its shape: the recipe, the keys
    one attention tile holds and how the decode KV append runs."""

    recipe: Recipe
    key_tile: int
    kv_append: str
    #: the compiler's block (FSB_BLOCK_SIZE): an MoE router's outputs pad to it (moe.py)
    block: int = 16

    @classmethod
    def of(cls, board) -> GraphParams:
        """The board's: its recipe, the A buffer's depth in keys (PV's credit A_DEPTH // K
        is at least one up to it, docs/flightllm-model.md §4.4), its KV append, its block."""
        return cls(board.recipe, board.design.buffers.a, board.compiler.kv_append,
                   board.compiler.block)


def key_tiles(keys: int, key_tile: int, rows: int, block: int = 16) -> list[tuple[int, int]]:
    """(first key, keys) of each attention tile over `keys` keys whose last `rows` are the
    pass's new tokens: tiles of `key_tile` keys from the first, the rest last, except that
    no boundary falls among the new tokens (the last tile then starts at the first new token,
    rounded down to a block): every tile but the last is wholly in every row's past. One tile
    when all keys fit."""
    if keys <= key_tile:
        return [(0, keys)]
    starts = list(range(0, keys, key_tile))
    first_new = keys - rows
    if starts[-1] > first_new:
        starts[-1] = first_new // block * block
        if starts[-1] <= starts[-2]:
            starts.pop()
    ends = [*starts[1:], keys]
    return [(a, b - a) for a, b in zip(starts, ends, strict=True)]


class Layers:
    """The layer builders of FlightLLM's graphs (the target's here, the drafters' in their
    plug-ins): every op names the tensors it reads and writes."""

    def __init__(self, g: GraphBuilder, model: TargetModel, params: GraphParams, rows: int,
                 requests: int = 1):
        recipe = params.recipe
        # a batch of `requests` requests of `rows` new tokens each: the linears see all
        # requests' rows, attention runs per request over its own cache (docs/batching.md)
        self.g, self.rows, self.requests, self.per_request = g, rows * requests, requests, rows
        self.model = model
        self.h, self.heads, self.hd = model.hidden, model.heads, model.head_dim
        self.kv_heads = model.kv_heads
        self.kv_width = model.kv_heads * model.head_dim
        self.q_width = model.q_width  # heads x head_dim: hidden but in Qwen3-MoE
        self.inter = model.intermediate
        self.key_tile, self.append_mode = params.key_tile, params.kv_append
        self.residual = ""
        self.act = _dtype(recipe.activation_bits)
        self.kv = _dtype(recipe.kv_bits)
        self.wdt = _dtype(recipe.weight_bits)
        self.bdt = _dtype(recipe.bias_bits)
        self.x = g.input("x", (self.rows, self.h), self.act, "hbm")
        self._rope: dict[int, tuple[str, str]] = {}

    def linear(self, name: str, src: str, d_in: int, d_out: int, cfg: Linear,
               bias: bool = False) -> str:
        """A projection d_in -> d_out with its weights (and bias) and sparsity; its output.
        `bias`: the architecture's own bias (Qwen2's q/k/v), besides the recipe's."""
        g = self.g
        w = g.input(f"{name}.weight", (d_in, d_out), self.wdt, "weights")
        ins = [src, w]
        has_bias = cfg.bias or bias
        if has_bias:
            ins.append(g.input(f"{name}.bias", (d_out,), self.bdt, "weights"))
        out = g.tensor(f"{name}.out", (self.rows, d_out), self.act, "hbm")
        g.op(name, "linear", ins, [out], sparse_ratio=cfg.sparse_ratio, bias=has_bias)
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
        """Rotary embedding as FlightLLM runs it: two multiplies and an add, by the sin and
        cos caches of the projection's width."""
        width = self.g.shape(src)[1]
        if width not in self._rope:
            suffix = "" if width == self.h else f"_{width}"
            self._rope[width] = (
                self.g.input(f"rope_sin{suffix}", (1, self.rows, width), self.act, "hbm"),
                self.g.input(f"rope_cos{suffix}", (1, self.rows, width), self.act, "hbm"),
            )
        sin, cos = self._rope[width]
        s = self.eltwise(f"{name}.rope_sin", src, sin, "mul")
        c = self.eltwise(f"{name}.rope_cos", src, cos, "mul")
        return self.eltwise(f"{name}.rope_add", s, c, "add")

    def silu(self, name: str, src: str, width: int) -> str:
        """SiLU over `width` columns (fused into the producing linear layer later)."""
        out = self.g.tensor(f"{name}.out", (self.rows, width), self.act, "hbm")
        self.g.op(name, "silu", [src], [out])
        return out

    def kv_append(self, p: str, k: str, v: str, keys: int) -> tuple[str, str, tuple[str, ...]]:
        """The caches of `keys` positions after appending the new rows' k and v, and the new
        tensors attention must follow.

        reread (FlightLLM, §4.7): concat reads the whole cache of keys - rows positions and
        stores 0 bytes. store: the projections' stores are the append (they write into the
        cache), so attention reads the cache, which now holds the new rows too."""
        g = self.g
        streams = self.kv_heads * self.requests  # each request's own cache
        shape = (streams, keys - self.per_request, self.hd)
        all_shape = (streams, keys, self.hd)
        if self.append_mode == "store":
            kc = g.input(f"{p}.k_cache", all_shape, self.kv, "kv_cache")
            vc = g.input(f"{p}.v_cache", all_shape, self.kv, "kv_cache")
            return kc, vc, (k, v)
        kc = g.input(f"{p}.k_cache", shape, self.kv, "kv_cache")
        vc = g.input(f"{p}.v_cache", shape, self.kv, "kv_cache")
        k_all = g.tensor(f"{p}.k_all", all_shape, self.kv, "hbm")
        v_all = g.tensor(f"{p}.v_all", all_shape, self.kv, "hbm")
        g.op(f"{p}.concat_k", "concat", [kc, k], [k_all])
        g.op(f"{p}.concat_v", "concat", [vc, v], [v_all])
        return k_all, v_all, ()

    def attention(self, p: str, q: str, k: str, v: str, keys: int, layer: int,
                  after: tuple[str, ...] = (), grouped: bool = True) -> str:
        """QK^T, softmax and PV of the rows over `keys` keys (`layer` picks the prefill mask).

        grouped: the g query heads of a KV head are its g x rows query rows (decode and
        verify passes); else each query head runs over its KV head's keys (prefill, §4.5).
        Over more than `key_tile` keys, per tile: QK^T and softmax (running max and sum), PV,
        and from the second tile on the running output rescaled (mul) and added; at the end
        one normalisation (mul). A batch's requests are more K/V streams (heads): each
        request's query rows over its own keys."""
        g, act = self.g, self.act
        group = self.heads // self.kv_heads if grouped else 1
        heads = (self.kv_heads if grouped else self.heads) * self.requests
        rows = self.per_request
        tiles = key_tiles(keys, self.key_tile, rows)
        acc = ""
        for t, (start, n) in enumerate(tiles):
            tag = "" if len(tiles) == 1 else f".t{t}"
            scores = g.tensor(f"{p}.scores{tag}", (heads, group * rows, n), act, "hbm")
            past = min(keys - rows - start, n)  # keys of the tile before the first row
            g.op(f"{p}.qk{tag}", "attention_qk", [q, k, *after], [scores], layer=layer,
                 group=group, past=past, requests=self.requests)
            probs = g.tensor(f"{p}.probs{tag}", (heads, group * rows, n), act, "hbm")
            outs = [probs]
            if len(tiles) > 1:  # the running max and sum: a rescale factor per row and head
                stats = g.tensor(f"{p}.rescale{tag}", (self.rows, self.q_width), act, "hbm")
                outs.append(stats)
            g.op(f"{p}.softmax{tag}", "softmax", [scores], outs)
            out = g.tensor(f"{p}.attn{tag}", (self.rows, self.q_width), act, "hbm")
            g.op(f"{p}.pv{tag}", "attention_pv", [probs, v, *after], [out], layer=layer,
                 group=group, past=past, requests=self.requests)
            if t == 0:
                acc = out
            else:
                scaled = self.eltwise(f"{p}.rescale{tag}", acc, outs[1], "mul")
                acc = self.eltwise(f"{p}.accumulate{tag}", scaled, out, "add")
        if len(tiles) > 1:
            acc = self.eltwise(f"{p}.normalise", acc, outs[1], "mul")
        return acc

    def draft_decoder(self, x: str, width: int, keys: int) -> str:
        """A draft model's decoder layer over its own KV cache: dense linears without biases
        at the target's sizes, residual `self.residual` (docs/validation.md, draft passes),
        lowered from its description (`draft_decoder_layer`) by `FlightLLMReader`."""
        reader = FlightLLMReader(self, self.model, None, keys, prefill=False,
                                 skip=self.residual or None)
        return reader.read(draft_decoder_layer(self.model, width), "", EMBEDDINGS, x)


#: FlightLLM's op names of a decoder layer's description nodes (the study's names); a
#: rotation takes its projection's short name, the SwiGLU product is `gated` (its SiLU `silu`);
#: a drafter's first norm is `norm` (`DRAFT_NAMES`)
FLIGHTLLM_NAMES = {
    "attn_norm": "input_norm", "q": "q_proj", "q.rope": "q", "k": "k_proj", "k.rope": "k",
    "v": "v_proj", "o": "o_proj", "attn_residual": "residual_attn",
    "mlp.post_norm": "post_norm", "mlp.gate": "gate_proj", "mlp.up": "up_proj",
    "mlp.act": "gated", "mlp.down": "down_proj", "mlp.residual": "residual_mlp",
}
DRAFT_NAMES = FLIGHTLLM_NAMES | {"attn_norm": "norm"}


class FlightLLMReader(Reader):
    """Lowers a target's description onto FlightLLM's layer types (`Layers`), one method
    per node kind: RMSnorm with its scale, each projection with the recipe's sparsity and
    bias (and the architecture's), the RoPE triple, the decode KV append and key-tiled
    attention, SiLU after the gate and the gated multiply after up, each residual an
    element-wise add; a mixture of experts' block through `moe_mlp` (moe.py). `recipe`
    None: a drafter's layer (dense, unbiased projections; `skip`, when given, the tensor
    its attention residual adds in place of the layer's input)."""

    what = "FlightLLM's lowering"

    def __init__(self, b: Layers, model: TargetModel, recipe: Recipe | None, keys: int,
                 prefill: bool, moe_mlp=None, skip: str | None = None) -> None:
        self.b, self.model, self.recipe, self.keys = b, model, recipe, keys
        self.prefill, self.moe_mlp, self.skip = prefill, moe_mlp, skip
        self.names = FLIGHTLLM_NAMES if recipe is not None else DRAFT_NAMES
        self.source = ""
        self.p, self.layer = "", -1
        self.tensors: dict[str, str] = {}
        self.skip_of: dict[str, str] = {}
        self.gate_of: dict[str, str] = {}  # a gated activation's gate -> its SiLU output
        self.silu: dict[str, str] = {}
        self.summed: set[str] = set()  # activations that already hold their residual

    def read(self, nodes: tuple[Node, ...], prefix: str, source: str, x: str,
             layer: int = -1) -> str:
        """Lower `nodes` (op names under `prefix`), whose input activation `source` is the
        graph tensor `x`; the tensor of the last node's output."""
        self.p, self.layer, self.source = prefix, layer, source
        self.tensors, self.silu, self.summed = {source: x}, {}, set()
        self.skip_of = {n.inputs[0]: n.inputs[1] for n in nodes if n.kind == "residual"}
        self.gate_of = {n.inputs[0]: n.name for n in nodes
                        if n.kind == "activation" and n.gated}
        for node in nodes:
            self.visit(node)
        return self.tensors[nodes[-1].output]

    def name(self, node: Node) -> str:
        """The op's FlightLLM name under the current prefix."""
        return self.p + self.names.get(node.name, node.name)

    def refuse(self, what: str) -> None:
        """One line: the model's architecture and what this lowering lacks."""
        raise ConfigError(model_source(self.model), "architecture", self.model.architecture,
                          f"a model FlightLLM's lowering reads (it has no {what})")

    def norm(self, node: NormNode) -> None:
        """RMSnorm with its scale."""
        if node.norm != "rms":
            self.refuse(f"{node.norm} norm")
        self.tensors[node.output] = self.b.rmsnorm(self.name(node),
                                                   self.tensors[node.inputs[0]], node.width)

    def linear(self, node: LinearNode) -> None:
        """A projection at the recipe's sparsity, with the recipe's or the architecture's
        bias; SiLU right after a gated activation's gate."""
        cfg = self.recipe.linear(node.role) if self.recipe is not None else Linear()
        out = self.b.linear(self.name(node), self.tensors[node.inputs[0]], node.d_in,
                            node.d_out, cfg, node.bias is not None)
        self.tensors[node.output] = out
        if node.output in self.gate_of:
            self.silu[node.output] = self.b.silu(f"{self.p}silu", out, node.d_out)

    def rope(self, node: Rope) -> None:
        """The RoPE triple: multiply by the sin and cos caches, add."""
        self.tensors[node.output] = self.b.rope(self.name(node), self.tensors[node.inputs[0]])

    def attention(self, node: Attention) -> None:
        """The decode KV append, then QK^T, softmax and PV tiled over the keys."""
        q, k, v = (self.tensors[name] for name in node.inputs)
        p = self.p.rstrip(".") or "self"
        after: tuple[str, ...] = ()
        if not self.prefill:
            k, v, after = self.b.kv_append(p, k, v, self.keys)
        self.tensors[node.output] = self.b.attention(p, q, k, v, self.keys, self.layer, after,
                                                     grouped=not self.prefill)

    def activation(self, node: Activation) -> None:
        """SwiGLU's product: up times the SiLU of the gate (`linear` ran the SiLU)."""
        if not node.gated or node.fn != "silu":
            self.refuse(f"{'plain ' if not node.gated else ''}{node.fn} activation")
        self.tensors[node.output] = self.b.eltwise(
            self.name(node), self.tensors[node.inputs[1]], self.silu[node.inputs[0]], "mul")

    def residual(self, node: Residual) -> None:
        """An element-wise add of the branch and its skip (a mixture of experts' block
        holds its residual already: moe.py)."""
        if node.inputs[0] in self.summed:
            self.tensors[node.output] = self.tensors[node.inputs[0]]
            self.summed.add(node.output)
            return
        skip = self.tensors[node.inputs[1]]
        if self.skip and node.inputs[1] == self.source:
            skip = self.skip
        self.tensors[node.output] = self.b.eltwise(self.name(node), self.tensors[node.inputs[0]],
                                                   skip, "add")

    def lm_head(self, node: LmHead) -> None:
        """The LM head, a projection at the recipe's LM-head sparsity."""
        self.tensors[node.output] = self.b.linear(
            self.name(node), self.tensors[node.inputs[0]], node.d_in, node.vocab,
            self.recipe.lm_head)

    def router(self, node: Router) -> None:
        """Lowered with its block (`routed_experts`)."""

    def routed_experts(self, node: RoutedExperts) -> None:
        """The whole MoE block, in moe.py's order (router, shared expert, the touched
        experts, the combine onto the attention residual)."""
        if self.moe_mlp is None:
            raise ValueError("an MoE target's graph needs its block's builder (moe.py)")
        skip = self.skip_of[node.output]
        out = self.moe_mlp(self.b, self.p, self.tensors[node.inputs[0]], self.tensors[skip],
                           self.recipe)
        self.tensors[node.output] = out
        self.summed.add(node.output)

    def shared_experts(self, node: SharedExperts) -> None:
        """Lowered with the routed experts' block (moe.py)."""
        self.tensors[node.output] = self.tensors[self.skip_of[node.output]]
        self.summed.add(node.output)


def build_graph(
    model: TargetModel,
    params: GraphParams,
    rows: int,
    context: int,
    phase: str,
    layers: int | None = None,
    requests: int = 1,
    moe_mlp=None,
) -> Graph:
    """The graph of one pass: `rows` query rows (x in decode, L in prefill) over `context` keys,
    the target's description (`describe_target`) read by `FlightLLMReader`.

    Decode: the K/V caches hold context - rows positions and the append adds the new rows.
    Prefill: rows = context = L and K/V come straight from the projections. `layers`
    decoder layers (default: the model's), then the final norm and the LM head. `requests`:
    a batch of that many requests, each with these rows and its own cache. `moe_mlp`: the
    builder of a mixture of experts' MLP (moe.py), which replaces the dense one.
    """
    name = f"flightllm {model.id} {phase} rows={rows} context={context}"
    g = GraphBuilder(name + (f" requests={requests}" if requests > 1 else ""))
    b = Layers(g, model, params, rows, requests)
    described = describe_target(model)
    reader = FlightLLMReader(b, model, params.recipe, context, phase == "prefill", moe_mlp)
    reader.check(described, model)
    x, layer_in = b.x, described.head[-1].output if described.head else described.input
    for layer in range(model.layers if layers is None else layers):
        x = reader.read(described.layer, f"l{layer}.", layer_in, x, layer)
    reader.read(described.tail, "", described.layer[-1].output, x)
    return g.build()


def ceil_to(value: int, multiple: int) -> int:
    """`value` rounded up to a multiple of `multiple`."""
    return math.ceil(value / multiple) * multiple
