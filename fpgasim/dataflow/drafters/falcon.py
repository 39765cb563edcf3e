"""Falcon: a semi-autoregressive drafter (LSTM + one decoder layer with a relaxed causal
mask) proposing k tree levels per pass (docs/falcon.md)."""

from __future__ import annotations

from typing import ClassVar

from fpgasim.config.schema import Board, FalconDrafter, TargetModel
from fpgasim.dataflow.draft_passes import DraftTree, block_parents
from fpgasim.dataflow.drafters.base import DrafterKind
from fpgasim.dataflow.ops import PassOps
from fpgasim.dataflow.passes import Net, PassSpec, identity


class Falcon:
    """The Falcon drafter plug-in."""

    kind: ClassVar[DrafterKind] = DrafterKind("falcon")
    schema: ClassVar[type[FalconDrafter]] = FalconDrafter

    def draft_passes(
        self, drafter: FalconDrafter, tree: DraftTree, accepted: int, context: int
    ) -> list[PassSpec]:
        return falcon_passes(drafter.tokens_per_pass, tree.static_shape(), accepted, context)

    def build_pass(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: FalconDrafter
    ) -> PassOps:
        return falcon_pass(model, drafter, spec.tokens, spec.context, board)

    def weight_count(self, model: TargetModel, drafter: FalconDrafter) -> int:
        """The LSTM layers (4 gates over [input, state]; the first input is 2h wide), one
        decoder layer and the MLP; the LM head is the target's."""
        h, kv = model.hidden, model.kv_heads * model.head_dim
        lstm = 0
        d_in = 2 * h
        for _ in range(drafter.lstm_layers):
            lstm += (d_in + h) * 4 * h
            d_in = h
        return lstm + 2 * h * h + 2 * h * kv + 3 * h * model.intermediate

    def kv_tokens(self, drafter: FalconDrafter, context: int, verify_len: int) -> int:
        """Its own one-layer cache over the whole context."""
        return context + verify_len


def falcon_pass(m: TargetModel, d: FalconDrafter, n: int, context: int, board: Board) -> PassOps:
    """One Falcon SAR draft pass over n tokens (the k-block just proposed) emitting the next one.

    LSTM layers over concat(embedding, feature) (layer 1: 2h -> h, then h -> h; four gates,
    batched over the n tokens), one decoder layer with the relaxed causal mask over its own KV
    cache of the context, the MLP, and the shared LM head over max(n, k) positions (each
    position of a k-block predicts one token of the next block). docs/falcon.md has the
    element-by-element accounting.
    """
    net = Net(f"falcon n={n} L={context}", m, n, board)
    h = m.hidden
    k = d.tokens_per_pass

    def layer(x: str) -> str:
        d_in = 2 * h
        for i in range(d.lstm_layers):
            # gates = [x, h_prev] @ W (4h outputs); sigmoid/tanh and the cell update on the SFU
            state = net.act_input(f"lstm{i}.state", n, h)
            x = net.linear(
                f"lstm{i}",
                [x, state],
                d_in + h,
                4 * h,
                act_elems=n * (d_in + h) + n * h,
                sfu_elems=n * 4 * h + 3 * n * h,
                out=f"lstm{i}.h",
            )
            d_in = h
        xn = net.norm("norm", x, h)
        attn = net.self_attention("", xn, h, n + context, context)
        return net.mlp("mlp", net.out_proj("o", attn, x))

    def tail(x: str) -> None:
        # position j of a k-block predicts the token k places on (the next block): one
        # LM-head row per position, and at least k rows so that a pass always emits a block
        net.lm_head(x, max(n, k), m.vocab)

    x = net.act_input("embedding_feature", n, 2 * h)
    return net.build("falcon", context, 1, identity, layer, tail, x)


def falcon_passes(k: int, shape: tuple[int, ...], accepted: int, context: int) -> list[PassSpec]:
    """Falcon's semi-autoregressive schedule: ceil(depth/k) passes with the relaxed mask.

    The first pass runs over the `accepted` tokens (a chain, block-causal in k-blocks) and
    proposes levels 1..k; each further pass runs over the k-block just proposed (levels
    jk+1..jk+k, their widths summed) and proposes the next k levels. A pass's tree_parents
    realise its block round robin (node j of a level hangs under node j mod w of the level
    above, as TokenTree.from_shape); the block's first level are roots (their ancestors
    sit in the drafter's KV cache). mask_block = k: a token sees its ancestors and the rest
    of its own k-block (the relaxed causal mask).
    """
    chain = tuple(range(-1, accepted - 1))
    passes = [PassSpec("falcon", accepted, context, tree_parents=chain, mask_block=k)]
    for start in range(0, len(shape) - k, k):
        block = shape[start : start + k]
        if 0 in block or shape[start + k] == 0:
            break
        parents = block_parents(block)
        passes.append(PassSpec("falcon", sum(block), context, tree_parents=parents, mask_block=k))
    return passes
