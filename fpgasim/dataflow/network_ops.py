"""A drafter's network lowered to the study's ops (docs/accounting.md): the `analytic`
engine's element counts of a draft pass and the drafter's weight count are sums over them.

The one reader of `DraftNetwork` on the accounting side (`StudyOps`, one method per block
kind); the lowerings read the same description for their own layer types
(`lowerings/flightllm/drafts.py`).
"""

from __future__ import annotations

from dataclasses import replace

from fpgasim.config.board import Board
from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.drafters.network import (
    Block,
    CrossAttention,
    Decoder,
    DraftNetwork,
    Fc,
    LmHead,
    Lstm,
    Mlp,
    SelfAttention,
    read_block,
)
from fpgasim.dataflow.ops import PassOps
from fpgasim.dataflow.passes import Net


def network_ops(
    network: DraftNetwork, context: int, board: Board | None, model: TargetModel
) -> PassOps:
    """One draft pass of `network` at `context` cached tokens, as ops and their graph
    (`board` None: the elements only, see `passes.Net`)."""
    n, h = network.rows, model.hidden
    net = Net(f"{network.kind} n={n} L={context}{network.tag}", model, n, board)
    reader = StudyOps(net, context, network.input_multiple * h)
    for block in network.layer:  # the token embedding a wide norm concatenates to its input
        if block.embedding_multiple():
            reader.embeddings[id(block)] = net.act_input(
                "embeddings", n, block.embedding_multiple() * h)

    def run(blocks: tuple[Block, ...], x: str) -> str:
        """Each block's ops in order, threading the activation through."""
        for block in blocks:
            x = read_block(reader, block, x)
            reader.width = h
        return x

    x = net.act_input(network.input_name, n, network.input_multiple * h)
    return net.build(
        network.kind, context, 1, lambda x: run(network.head, x),
        lambda x: run(network.layer, x), lambda x: read_block(reader, network.lm_head, x), x,
    )


class StudyOps:
    """Reads a drafter's blocks as the study's ops (docs/accounting.md) on `net`: each method
    adds one block's ops over the activation `x` and returns its output activation.
    `width`: the running activation's width (the pass input's, then h); `embeddings`: the
    token-embedding input of each wide decoder norm, by the block's id."""

    def __init__(self, net: Net, context: int, width: int) -> None:
        self.net, self.context, self.width = net, context, width
        self.embeddings: dict[int, str] = {}

    def fc(self, block: Fc, x: str) -> str:
        """fc: fused_layers h -> h, its output the feature."""
        net, h = self.net, self.net.m.hidden
        fused = block.fused_layers * h
        return net.linear("fc", [x], fused, h, act_elems=net.n * fused, out="feature")

    def lstm(self, block: Lstm, x: str) -> str:
        """Each LSTM layer: gates = [x, h_prev] @ W (4h outputs); sigmoid/tanh and the cell
        update on the SFU."""
        net, n, h = self.net, self.net.n, self.net.m.hidden
        d_in = self.width
        for i in range(block.layers):
            state = net.act_input(f"lstm{i}.state", n, h)
            x = net.linear(
                f"lstm{i}", [x, state], d_in + h, 4 * h,
                act_elems=n * (d_in + h) + n * h, sfu_elems=n * 4 * h + 3 * n * h,
                out=f"lstm{i}.h",
            )
            d_in = h
        return x

    def self_attention(self, block: SelfAttention, x: str) -> str:
        """Norm, self-attention over the own cache (or its window), o plus the residual."""
        net, n, h, context = self.net, self.net.n, self.net.m.hidden, self.context
        dot = f"{block.name}." if block.name else ""
        if block.window_tokens is None:
            keys, cached = n + context, context
        else:
            keys = cached = min(block.window_tokens, n + context)
        xn = net.norm(f"{dot}norm", x, h)
        return net.out_proj(f"{dot}o", net.self_attention(block.name, xn, h, keys, cached), x)

    def cross_attention(self, block: CrossAttention, x: str) -> str:
        """Norm, q, attention over the target's cache, o plus the residual."""
        net, n, h, context = self.net, self.net.n, self.net.m.hidden, self.context
        p = block.name
        cn = net.norm(f"{p}.norm", x, h)
        q = net.linear(f"{p}.q", [cn], h, h, act_elems=n * h)
        cross = net.attention(p, q, None, None, n + context, context, cache="target")
        return net.out_proj(f"{p}.o", cross, x)

    def mlp(self, block: Mlp, x: str) -> str:
        """The gated MLP plus the residual."""
        return self.net.mlp(block.name, x)

    def decoder(self, block: Decoder, x: str) -> str:
        """Norm over input_multiple h (with the token embedding), self-attention over the
        whole context, o plus the residual, the MLP."""
        net, n, h, context = self.net, self.net.n, self.net.m.hidden, self.context
        wide = block.input_multiple * h
        embedding = self.embeddings.get(id(block))
        xn = net.norm("norm", x, wide, (embedding,) if embedding else ())
        q_factor = 2 if block.q_macs_twice else 1
        attn = net.self_attention("", xn, wide, n + context, context, q_factor)
        return net.mlp("mlp", net.out_proj("o", attn, x))

    def lm_head(self, block: LmHead, x: str) -> None:
        """The LM head (the target's vocabulary unless the drafter has its own)."""
        self.net.lm_head(x, block.rows, block.vocab or self.net.m.vocab)


def network_weight_count(network: DraftNetwork, model: TargetModel) -> int:
    """The weights of `network`'s linears (its own LM head included, a shared one not),
    counted from its ops: each linear's in x out matrix once."""
    ops = network_ops(replace(network, rows=1), 0, None, model)
    own_head = network.lm_head.own
    return sum(
        op.in_dim * op.out_dim
        for op in ops.template_ops()
        if op.kind == "linear" or (op.kind == "lm_head" and own_head)
    )
