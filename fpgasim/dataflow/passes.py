"""Lowering of target and draft forward passes to ops (ACCOUNTING.md, item by item).

Symbols: n tokens of the pass, L cached context, h hidden, i intermediate, H heads,
kv = kv_heads*head_dim (= s*h), V vocabulary. Weights are reread every
`weight_reuse_tokens` input tokens. Every op carries exactly the accounting's elements,
so `PassOps.totals()` equals the closed form of the `analytic` engine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from fpgasim.config.schema import Board, Eagle3Drafter, FalconDrafter, LongSpecDrafter, TargetModel
from fpgasim.dataflow.ops import Op, PassOps


@dataclass(frozen=True)
class PassSpec:
    """One forward pass to cost: which network, how many input tokens, at which context."""

    kind: str  # "target", "longspec", "eagle3", "falcon"
    tokens: int
    context: int
    first: bool = False  # EAGLE-3: the first draft pass also runs fc
    #: parent index of each of the `tokens` tree tokens (-1 for the root), or None for a
    #: dense (fully visible) block; engines that model the tree mask use it, analytic ignores it
    tree_parents: tuple[int, ...] | None = None
    #: levels per mask block: 1 = causal tree mask; k > 1 = Falcon's relaxed mask (a token
    #: also sees the rest of its own k-block); used with tree_parents (treemask.visibility)
    mask_block: int = 1
    #: decode (or verify) pass, or a prefill pass over `tokens` prompt tokens (FlightLLM boards)
    phase: Literal["decode", "prefill"] = "decode"


def weight_reads(n: int, reuse_tokens: int) -> int:
    """How many times a pass streams its weights: ceil(n / reuse_tokens)."""
    return max(1, math.ceil(n / reuse_tokens))


def _norm(name: str, n: int, width: int, passes: int) -> Op:
    return Op(
        name, "norm", n, act_elems=n * width, store_elems=n * width, sfu_elems=n * width * passes
    )


def _linear(
    name: str,
    n: int,
    d_in: int,
    d_out: int,
    reads: int,
    act_elems: int,
    mac_factor: int = 1,
    sfu_elems: int = 0,
) -> Op:
    return Op(
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


def _attention(
    prefix: str, n: int, keys: int, cached: int, m: TargetModel, softmax_passes: int
) -> list[Op]:
    """QK^T, softmax and PV of n queries over `keys` keys, `cached` of them read from the cache."""
    h, kv, heads = m.hidden, m.kv_heads * m.head_dim, m.heads
    scores = n * keys * heads
    return [
        Op(
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
        ),
        Op(
            f"{prefix}.softmax",
            "softmax",
            n,
            sfu_elems=scores * softmax_passes,
            keys=keys,
            heads=heads,
        ),
        Op(
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
        ),
    ]


def _mlp(prefix: str, n: int, m: TargetModel, reads: int, norm_passes: int) -> list[Op]:
    h, i = m.hidden, m.intermediate
    return [
        _norm(f"{prefix}.post_norm", n, h, norm_passes),
        _linear(f"{prefix}.gate", n, h, i, reads, act_elems=n * h),
        _linear(f"{prefix}.up", n, h, i, reads, act_elems=n * h + n * i, sfu_elems=2 * n * i),
        _linear(f"{prefix}.down", n, i, h, reads, act_elems=n * i + n * h, sfu_elems=n * h),
    ]


def _lm_head(n: int, h: int, vocab: int, reads: int) -> Op:
    return Op(
        "lm_head",
        "lm_head",
        n,
        weight_elems=h * vocab * reads,
        act_elems=n * h,
        store_elems=n * vocab,
        macs=n * h * vocab,
        in_dim=h,
        out_dim=vocab,
    )


def target_pass(m: TargetModel, n: int, context: int, board: Board) -> PassOps:
    """Target forward pass over n tree tokens at context L (n = 1 is AD)."""
    h, kv = m.hidden, m.kv_heads * m.head_dim
    reads = weight_reads(n, board.weight_reuse_tokens)
    np_, sp = board.sfu.norm_passes, board.sfu.softmax_passes
    layer = [
        _norm("attn_norm", n, h, np_),
        _linear("q", n, h, h, reads, act_elems=n * h),
        _linear("k", n, h, kv, reads, act_elems=n * h),
        _linear("v", n, h, kv, reads, act_elems=n * h),
        *_attention("attn", n, n + context, context, m, sp),
        _linear("o", n, h, h, reads, act_elems=2 * n * h, sfu_elems=n * h),
        *_mlp("mlp", n, m, reads, np_),
    ]
    tail = [_norm("final_norm", n, h, np_), _lm_head(n, h, m.vocab, reads)]
    return PassOps("target", n, context, m.layers, tuple(layer), tuple(tail))


def longspec_pass(
    m: TargetModel, d: LongSpecDrafter, n: int, context: int, board: Board
) -> PassOps:
    """One LongSpec draft pass: windowed self-attention, cross-attention over the target KV, MLP."""
    h, kv = m.hidden, m.kv_heads * m.head_dim
    reads = weight_reads(n, board.weight_reuse_tokens)
    np_, sp = board.sfu.norm_passes, board.sfu.softmax_passes
    window = min(d.window_tokens, n + context)
    ops = [
        _norm("self.norm", n, h, np_),
        _linear("self.q", n, h, h, reads, act_elems=n * h),
        _linear("self.k", n, h, kv, reads, act_elems=n * h),
        _linear("self.v", n, h, kv, reads, act_elems=n * h),
        *_attention("self", n, window, window, m, sp),
        _linear("self.o", n, h, h, reads, act_elems=2 * n * h, sfu_elems=n * h),
        _norm("cross.norm", n, h, np_),
        _linear("cross.q", n, h, h, reads, act_elems=n * h),
        *_attention("cross", n, n + context, context, m, sp),
        _linear("cross.o", n, h, h, reads, act_elems=2 * n * h, sfu_elems=n * h),
        *_mlp("mlp", n, m, reads, np_),
    ]
    return PassOps("longspec", n, context, 1, tuple(ops), (_lm_head(n, h, m.vocab, reads),))


def eagle3_pass(
    m: TargetModel, d: Eagle3Drafter, n: int, context: int, board: Board, first: bool
) -> PassOps:
    """One EAGLE-3 draft pass (fc on the first pass), its own KV cache over the context."""
    h, kv = m.hidden, m.kv_heads * m.head_dim
    reads = weight_reads(n, board.weight_reuse_tokens)
    np_, sp = board.sfu.norm_passes, board.sfu.softmax_passes
    wide = d.input_multiple * h
    q_factor = 2 if d.q_charged_twice else 1
    head: tuple[Op, ...] = ()
    if first:
        fused = d.fused_layers * h
        head = (_linear("fc", n, fused, h, reads, act_elems=n * fused),)
    ops = [
        _norm("norm", n, wide, np_),
        _linear("q", n, wide, h, reads, act_elems=n * wide, mac_factor=q_factor),
        _linear("k", n, wide, kv, reads, act_elems=n * wide),
        _linear("v", n, wide, kv, reads, act_elems=n * wide),
        *_attention("attn", n, n + context, context, m, sp),
        _linear("o", n, h, h, reads, act_elems=2 * n * h, sfu_elems=n * h),
        *_mlp("mlp", n, m, reads, np_),
    ]
    vocab = d.draft_vocab or m.vocab
    return PassOps("eagle3", n, context, 1, tuple(ops), (_lm_head(n, h, vocab, reads),), head)


def falcon_pass(m: TargetModel, d: FalconDrafter, n: int, context: int, board: Board) -> PassOps:
    """One Falcon SAR draft pass over n tokens (the k-block just proposed) emitting the next one.

    LSTM layers over concat(embedding, feature) (layer 1: 2h -> h, then h -> h; four gates,
    batched over the n tokens), one decoder layer with the relaxed causal mask over its own KV
    cache of the context, the MLP, and the shared LM head over max(n, k) positions (each
    position of a k-block predicts one token of the next block). docs/falcon.md has the
    element-by-element accounting.
    """
    h, kv = m.hidden, m.kv_heads * m.head_dim
    k = d.tokens_per_pass
    reads = weight_reads(n, board.weight_reuse_tokens)
    np_, sp = board.sfu.norm_passes, board.sfu.softmax_passes
    ops: list[Op] = []
    d_in = 2 * h
    for layer in range(d.lstm_layers):
        # gates = [x, h_prev] @ W (4h outputs); sigmoid/tanh and the cell update on the SFU
        ops.append(
            _linear(
                f"lstm{layer}",
                n,
                d_in + h,
                4 * h,
                reads,
                act_elems=n * (d_in + h) + n * h,
                sfu_elems=n * 4 * h + 3 * n * h,
            )
        )
        d_in = h
    ops += [
        _norm("norm", n, h, np_),
        _linear("q", n, h, h, reads, act_elems=n * h),
        _linear("k", n, h, kv, reads, act_elems=n * h),
        _linear("v", n, h, kv, reads, act_elems=n * h),
        *_attention("attn", n, n + context, context, m, sp),
        _linear("o", n, h, h, reads, act_elems=2 * n * h, sfu_elems=n * h),
        *_mlp("mlp", n, m, reads, np_),
    ]
    # position j of a k-block predicts the token k places on (the next block): one LM-head
    # row per position, and at least k rows so that a pass always emits a full k-block
    lm = _lm_head(max(n, k), h, m.vocab, reads)
    return PassOps("falcon", n, context, 1, tuple(ops), (lm,))


def lower_pass(
    spec: PassSpec,
    board: Board,
    model: TargetModel,
    drafter: LongSpecDrafter | Eagle3Drafter | FalconDrafter | None,
) -> PassOps:
    """Dispatch a PassSpec to its lowering."""
    if spec.kind == "target":
        return target_pass(model, spec.tokens, spec.context, board)
    if spec.kind == "longspec" and isinstance(drafter, LongSpecDrafter):
        return longspec_pass(model, drafter, spec.tokens, spec.context, board)
    if spec.kind == "eagle3" and isinstance(drafter, Eagle3Drafter):
        return eagle3_pass(model, drafter, spec.tokens, spec.context, board, spec.first)
    if spec.kind == "falcon" and isinstance(drafter, FalconDrafter):
        return falcon_pass(model, drafter, spec.tokens, spec.context, board)
    raise ValueError(f"no lowering for pass kind {spec.kind!r} with drafter {drafter!r}")
