"""A drafter's network lowered to the study's ops (docs/accounting.md): the `analytic`
engine's element counts of a draft pass and the drafter's weight count are sums over them.

The one reader of `DraftNetwork` on the accounting side; the lowerings read the same
description for their own layer types (`lowerings/flightllm/drafts.py`).
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
    Lstm,
    Mlp,
    SelfAttention,
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
    embeddings = {  # the token embedding a wide decoder norm concatenates ahead of its input
        id(block): net.act_input("embeddings", n, (block.input_multiple - 1) * h)
        for block in network.layer
        if isinstance(block, Decoder) and block.input_multiple > 1
    }
    width = network.input_multiple * h  # the running activation's width

    def run(blocks: tuple[Block, ...], x: str) -> str:
        """Each block's ops in order, threading the activation through."""
        nonlocal width
        for block in blocks:
            x = _block(net, block, x, width, context, embeddings.get(id(block)))
            width = h
        return x

    def tail(x: str) -> None:
        """The LM head (the target's vocabulary unless the drafter has its own)."""
        head = network.lm_head
        net.lm_head(x, head.rows, head.vocab or model.vocab)

    x = net.act_input(network.input_name, n, network.input_multiple * h)
    return net.build(
        network.kind, context, 1, lambda x: run(network.head, x),
        lambda x: run(network.layer, x), tail, x,
    )


def _block(
    net: Net, block: Block, x: str, width: int, context: int, embedding: str | None
) -> str:
    """One block's ops over the activation `x` (`width` wide); its output activation."""
    n, h = net.n, net.m.hidden
    if isinstance(block, Fc):
        fused = block.fused_layers * h
        return net.linear("fc", [x], fused, h, act_elems=n * fused, out="feature")
    if isinstance(block, Lstm):
        d_in = width
        for i in range(block.layers):
            # gates = [x, h_prev] @ W (4h outputs); sigmoid/tanh and the cell update on the SFU
            state = net.act_input(f"lstm{i}.state", n, h)
            x = net.linear(
                f"lstm{i}", [x, state], d_in + h, 4 * h,
                act_elems=n * (d_in + h) + n * h, sfu_elems=n * 4 * h + 3 * n * h,
                out=f"lstm{i}.h",
            )
            d_in = h
        return x
    if isinstance(block, SelfAttention):
        dot = f"{block.name}." if block.name else ""
        if block.window_tokens is None:
            keys, cached = n + context, context
        else:
            keys = cached = min(block.window_tokens, n + context)
        xn = net.norm(f"{dot}norm", x, h)
        return net.out_proj(f"{dot}o", net.self_attention(block.name, xn, h, keys, cached), x)
    if isinstance(block, CrossAttention):
        p = block.name
        cn = net.norm(f"{p}.norm", x, h)
        q = net.linear(f"{p}.q", [cn], h, h, act_elems=n * h)
        cross = net.attention(p, q, None, None, n + context, context, cache="target")
        return net.out_proj(f"{p}.o", cross, x)
    if isinstance(block, Mlp):
        return net.mlp(block.name, x)
    if isinstance(block, Decoder):
        wide = block.input_multiple * h
        xn = net.norm("norm", x, wide, (embedding,) if embedding else ())
        q_factor = 2 if block.q_macs_twice else 1
        attn = net.self_attention("", xn, wide, n + context, context, q_factor)
        return net.mlp("mlp", net.out_proj("o", attn, x))
    raise TypeError(f"no ops for block {block!r}")


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
