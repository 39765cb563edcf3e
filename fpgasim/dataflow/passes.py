"""The study's op builder (`Net`): a pass's ops and their dataflow graph (docs/accounting.md),
for the target's description (`study_counts.py`) and the drafters' blocks (`network_ops.py`).

Symbols: n tokens of the pass, L cached context, h hidden, i intermediate, H heads,
kv = kv_heads*head_dim (= s*h), V vocabulary. Weights are reread every
`weight_reuse_tokens` input tokens. Every op carries exactly the accounting's elements,
so `PassOps.totals()` equals the closed form of the `analytic` engine.

Each op is also a node of the pass's `Graph`: it names the tensors it reads and writes
(weights, KV cache, activations in off-chip memory), and the lowering takes every
dependency from those names. Two choices of the study's schedule are visible in the graph:
- the SwiGLU product SiLU(gate) * up is charged to `up` (its SFU work and the n*i gate
  elements in its activation loads, docs/accounting.md), but `up` reads only the normed input:
  up streams beside gate, and `down` waits for both;
- norms have no weight tensor: the accounting does not count their h gains.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from fpgasim.config.board import Board
from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.graph import GraphBuilder
from fpgasim.dataflow.ops import Op, PassOps


@dataclass(frozen=True)
class PassSpec:
    """One forward pass to cost: which network, how many input tokens, at which context."""

    kind: str  # "target", or the drafter kind of a draft pass (fpgasim.dataflow.drafters)
    tokens: int
    context: int
    first: bool = False  # EAGLE-3: the first draft pass also runs fc
    #: parent index of each of the `tokens` tree tokens (-1 for the root), or None for a
    #: dense (fully visible) block; engines that model the tree mask use it, analytic ignores it
    tree_parents: tuple[int, ...] | None = None
    #: levels per mask block: 1 = causal tree mask; k > 1 = Falcon's relaxed mask (a token
    #: also sees the rest of its own k-block); used with tree_parents (treemask.visibility)
    mask_block: int = 1
    #: decode (or verify) pass, or a prefill pass over `tokens` prompt tokens
    phase: Literal["decode", "prefill"] = "decode"
    #: requests decoded together (docs/batching.md): each has these `tokens` at this
    #: `context` with its own KV cache; the linears see batch x tokens rows
    batch: int = 1


#: the study's accounting reads the weights again for every 128 input tokens of a pass
#: (docs/accounting.md)
WEIGHT_REUSE_TOKENS = 128


def weight_reads(n: int, reuse_tokens: int = WEIGHT_REUSE_TOKENS) -> int:
    """How many times a pass streams its weights: ceil(n / reuse_tokens)."""
    return max(1, math.ceil(n / reuse_tokens))


#: dtype of each element width a recipe allows
_DTYPES = {4: "int4", 8: "int8", 16: "fp16", 32: "fp32"}


class Net:
    """Builds a pass's ops and its graph together; `prefix` names the current layer block.

    `board` None: the elements only (one SFU pass each, fp16 tensors), for the model's
    parameters, which no board changes."""

    def __init__(self, name: str, m: TargetModel, n: int, board: Board | None) -> None:
        self.g = GraphBuilder(name)
        self.m, self.n, self.board = m, n, board
        self.reads = weight_reads(n)
        self.norm_passes = board.sfu.norm_passes if board else 1
        self.softmax_passes = board.sfu.softmax_passes if board else 1
        bits = (16, 16, 16) if board is None else (
            board.recipe.activation_bits, board.recipe.weight_bits, board.recipe.kv_bits)
        self.act_dtype, self.weight_dtype, self.kv_dtype = (_DTYPES[b] for b in bits)
        self.prefix = ""
        self.ops: list[Op] = []

    # ---------------------------------------------------------------- tensors

    def act(self, name: str, *shape: int) -> str:
        """An activation tensor written by an op (off-chip: stored and reloaded)."""
        return self.g.tensor(self.prefix + name, shape, self.act_dtype, "hbm")

    def act_input(self, name: str, *shape: int) -> str:
        """An activation the pass receives (embeddings, hidden states of an earlier pass)."""
        return self.g.input(self.prefix + name, shape, self.act_dtype, "hbm")

    def weight(self, name: str, *shape: int) -> str:
        """A weight tensor the pass reads (streamed from off-chip, at the weight precision)."""
        return self.g.input(self.prefix + name, shape, self.weight_dtype, "weights")

    def cache(self, name: str, *shape: int) -> str:
        """A KV-cache tensor (this block's own, or `name` unprefixed if it starts with '/')."""
        full = name[1:] if name.startswith("/") else self.prefix + name
        return self.g.input(full, shape, self.kv_dtype, "kv_cache")

    def add(self, op: Op, inputs: list[str], outputs: list[str]) -> None:
        """Record `op` and its graph node (named prefix + op name)."""
        self.ops.append(op)
        self.g.op(self.prefix + op.name, op.kind, inputs, outputs)

    # ---------------------------------------------------------------- ops

    def norm(self, name: str, x: str, width: int, before: tuple[str, ...] = ()) -> str:
        """A norm over `width`: loads and stores n x width elements, norm_passes SFU sweeps.
        `before`: activations concatenated ahead of `x` (they are part of the width)."""
        n = self.n
        out = self.act(f"{name}.out", n, width)
        op = Op(
            name,
            "norm",
            n,
            act_elems=n * width,
            store_elems=n * width,
            sfu_elems=n * width * self.norm_passes,
        )
        self.add(op, [*before, x], [out])
        return out

    def linear(
        self,
        name: str,
        inputs: list[str],
        d_in: int,
        d_out: int,
        act_elems: int,
        mac_factor: int = 1,
        sfu_elems: int = 0,
        out: str | None = None,
    ) -> str:
        """x @ W (d_in x d_out) over the n tokens; `inputs` are the activations it reads."""
        n, reads = self.n, self.reads
        w = self.weight(f"{name}.w", d_in, d_out)
        y = self.act(out or f"{name}.out", n, d_out)
        op = Op(
            name,
            "linear",
            n,
            weight_elems=d_in * d_out * reads,
            act_elems=act_elems,
            store_elems=n * d_out,
            macs=n * d_in * d_out * mac_factor,
            sfu_elems=sfu_elems,
            in_dim=d_in,
            out_dim=d_out,
        )
        self.add(op, [*inputs, w], [y])
        return y

    def attention(
        self,
        prefix: str,
        q: str,
        k_new: str | None,
        v_new: str | None,
        keys: int,
        cached: int,
        cache: str = "",
    ) -> str:
        """QK^T, softmax and PV of n queries over `keys` keys, `cached` of them from the cache.

        `k_new`/`v_new` are this pass's new keys and values (None: all keys are cached);
        `cache` names a KV cache outside this block (LongSpec's cross-attention reads the
        target's), default this block's own `{prefix}.k_cache`/`{prefix}.v_cache`.
        """
        m, n = self.m, self.n
        h, kv, heads = m.q_width, m.kv_heads * m.head_dim, m.heads
        scores = n * keys * heads
        where = f"/{cache}" if cache else f"{prefix}"
        k_cache = self.cache(f"{where}.k_cache", cached, kv)
        v_cache = self.cache(f"{where}.v_cache", cached, kv)
        s = self.act(f"{prefix}.scores", heads, n, keys)
        qk = Op(
            f"{prefix}.qk",
            "attn_qk",
            n,
            act_elems=n * h + n * kv,
            kv_elems=kv * cached,
            store_elems=scores,
            macs=n * keys * h,
            keys=keys,
            heads=heads,
            in_dim=h,
        )
        self.add(qk, [q, *([k_new] if k_new else []), k_cache], [s])
        p = self.act(f"{prefix}.probs", heads, n, keys)
        softmax = Op(
            f"{prefix}.softmax",
            "softmax",
            n,
            sfu_elems=scores * self.softmax_passes,
            keys=keys,
            heads=heads,
        )
        self.add(softmax, [s], [p])
        out = self.act(f"{prefix}.out", n, h)
        pv = Op(
            f"{prefix}.pv",
            "attn_pv",
            n,
            act_elems=scores + n * kv,
            kv_elems=kv * cached,
            store_elems=n * h,
            macs=n * keys * h,
            keys=keys,
            heads=heads,
            in_dim=h,
        )
        self.add(pv, [p, *([v_new] if v_new else []), v_cache], [out])
        return out

    def self_attention(
        self, prefix: str, x: str, width: int, keys: int, cached: int, q_factor: int = 1
    ) -> str:
        """q, k, v projections of the normed `x` (`width` wide), then attention over the cache."""
        m, n = self.m, self.n
        kv = m.kv_heads * m.head_dim
        dot = f"{prefix}." if prefix else ""
        q = self.linear(f"{dot}q", [x], width, m.q_width, act_elems=n * width,
                        mac_factor=q_factor)
        k = self.linear(f"{dot}k", [x], width, kv, act_elems=n * width)
        v = self.linear(f"{dot}v", [x], width, kv, act_elems=n * width)
        return self.attention(prefix or "attn", q, k, v, keys, cached)

    def out_proj(self, name: str, attn: str, residual: str) -> str:
        """o projection plus the residual add (its SFU pass and the residual's load)."""
        n, h, q = self.n, self.m.hidden, self.m.q_width
        return self.linear(name, [attn, residual], q, h, act_elems=n * q + n * h,
                           sfu_elems=n * h)

    def mlp(self, prefix: str, x: str) -> str:
        """post-norm, gate, up (charged the SiLU-multiply), down (plus the residual add)."""
        m, n = self.m, self.n
        h, i = m.hidden, m.intermediate
        xn = self.norm(f"{prefix}.post_norm", x, h)
        gate = self.linear(f"{prefix}.gate", [xn], h, i, act_elems=n * h)
        up = self.linear(f"{prefix}.up", [xn], h, i, act_elems=n * h + n * i, sfu_elems=2 * n * i)
        return self.linear(
            f"{prefix}.down", [gate, up, x], i, h, act_elems=n * i + n * h, sfu_elems=n * h
        )

    def lm_head(self, x: str, rows: int, vocab: int) -> None:
        """The LM head over `rows` positions (its weights read like every linear's)."""
        h, reads = self.m.hidden, self.reads
        w = self.weight("lm_head.w", h, vocab)
        logits = self.act("logits", rows, vocab)
        op = Op(
            "lm_head",
            "lm_head",
            rows,
            weight_elems=h * vocab * reads,
            act_elems=rows * h,
            store_elems=rows * vocab,
            macs=rows * h * vocab,
            in_dim=h,
            out_dim=vocab,
        )
        self.add(op, [x, w], [logits])

    # ---------------------------------------------------------------- the pass

    def build(
        self,
        kind: str,
        context: int,
        layers: int,
        head: Callable[[str], str],
        layer: Callable[[str], str],
        tail: Callable[[str], None],
        x: str,
    ) -> PassOps:
        """Run the part builders: head once, min(layers, 2) layer blocks, tail once.

        Each builder takes the incoming activation tensor and returns its output tensor;
        `layer` is called once per block with `prefix` set to the block's name.
        """
        head_start = len(self.ops)
        x = head(x)
        head_ops = tuple(self.ops[head_start:])
        blocks = min(layers, 2)
        block_ops: tuple[Op, ...] = ()
        for b in range(blocks):
            self.prefix = f"L{b}."
            start = len(self.ops)
            x = layer(x)
            if b == 0:
                block_ops = tuple(self.ops[start:])
        self.prefix = ""
        tail_start = len(self.ops)
        tail(x)
        tail_ops = tuple(self.ops[tail_start:])
        return PassOps(kind, self.n, context, layers, head_ops, block_ops, tail_ops, self.g.build())
