"""Linears and the LM head: weight tiles streamed through the weight buffer, one MPE tile each.

Weights stream in tiles of whole output columns (or, when a prefetch slot holds fewer than
the PE array's columns, of PE-columns x part of the rows, partial sums kept on chip) sized
to weight_kib / prefetch_depth. A pass over n tokens rereads the weights every
`weight_reuse_tokens` tokens; each token block runs every tile. The op's SFU work (fused
activation or residual add) and its store follow the last row-tile of each column tile.
"""

from __future__ import annotations

from fpgasim.dataflow.buffers import BufferTooSmall
from fpgasim.dataflow.lowerings.study.machine import Machine, nbytes_of, split_exact, token_blocks
from fpgasim.dataflow.lowerings.study.plan import Plan, Step
from fpgasim.dataflow.ops import Op


def plan_linear(m: Machine, op: Op, index: int) -> Plan:
    """The plan of a linear or LM-head op."""
    n, d_in, d_out = op.tokens, op.in_dim, op.out_dim
    reads = op.weight_elems // (d_in * d_out)
    factor = op.macs // (n * d_in * d_out)
    if reads * d_in * d_out != op.weight_elems or factor * n * d_in * d_out != op.macs:
        raise ValueError(f"op {op.name!r}: weights/MACs are not whole passes over the matrix")
    slot_elems = (m.weight_buffer_bytes // m.depth) * 8 // m.weight_bits
    cols, rows = slot_elems // d_in, d_in  # tiles of whole columns if C of them fit
    if cols >= m.cols:
        cols = cols // m.cols * m.cols
    else:  # else C columns x part of the rows, partial sums kept on chip
        cols = min(m.cols, d_out)
        rows = slot_elems // cols
        if rows < 1:
            raise BufferTooSmall(
                "buffers.weight_kib",
                m.weight_buffer_bytes // 1024,
                f"the weight buffer slot ({m.weight_buffer_bytes // m.depth} bytes per "
                f"prefetch slot) must hold one {cols}-column tile row of op {op.name!r}; "
                "raise buffers.weight_kib or lower buffers.prefetch_depth",
            )
        rows = min(d_in, rows // m.rows * m.rows if rows >= m.rows else rows)
    cols = min(cols, d_out)
    widths = [min(cols, d_out - c) for c in range(0, d_out, cols)]
    heights = [min(rows, d_in - r) for r in range(0, d_in, rows)]
    blocks = token_blocks(n, reads, m.reuse)
    plan = Plan(op, index, operand_bytes=nbytes_of(op.act_elems, m.act_bits))
    shares = [nb * w for nb in blocks for w in widths]
    sfu = split_exact(op.sfu_elems, shares)
    k = 0
    for nb in blocks:
        for w in widths:
            for r, ht in enumerate(heights):
                last = r == len(heights) - 1
                tile = plan.add_stream(nbytes_of(ht * w, m.weight_bits))
                plan.steps.append(
                    Step(
                        mpe_cycles=m.mpe_cycles(nb, ht, w, factor=factor),
                        macs=nb * ht * w * factor,
                        streams=(tile,),
                        sfu_elements=sfu[k] if last else 0,
                        store_bytes=nbytes_of(nb * w, m.act_bits) if last else 0,
                    )
                )
            k += 1
    return plan
