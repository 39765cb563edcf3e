"""Operator-level description of a forward pass: what each op streams, stores and computes.

Element counts follow the study's accounting (docs/accounting.md) item by item, so that summing
the ops of a pass gives the `analytic` engine's totals; the event engine tiles each op into
instructions without changing those totals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fpgasim.dataflow.graph import Graph

OpKind = Literal["norm", "linear", "attn_qk", "softmax", "attn_pv", "silu_mul", "lm_head"]


@dataclass(frozen=True)
class Op:
    """One operator of a pass. Element counts, not bytes; `tokens` decides MV vs MM mode.

    weight_elems  weights streamed over the wide channel group (already times the reread factor)
    act_elems     activations loaded over the narrow group (excluding the KV cache)
    kv_elems      cached K/V elements loaded over the narrow group
    store_elems   elements stored over the narrow group
    macs          multiply-accumulates on the MPE
    sfu_elems     element-passes charged to the SFU (elements x passes)
    in_dim, out_dim  for linears: the matrix is in_dim x out_dim; for attention: keys, head dims
    """

    name: str
    kind: OpKind
    tokens: int
    weight_elems: int = 0
    act_elems: int = 0
    kv_elems: int = 0
    store_elems: int = 0
    macs: int = 0
    sfu_elems: int = 0
    in_dim: int = 0
    out_dim: int = 0
    keys: int = 0
    heads: int = 0


@dataclass(frozen=True)
class PassOps:
    """A forward pass: `head` ops once, `layer` ops repeated `layers` times, `tail` ops once.

    `graph` is the pass's dataflow graph as the lowering instantiates it: the head, the first
    min(layers, 2) layer blocks (nodes prefixed `L0.`, `L1.`; later blocks repeat block 1)
    and the tail. Its nodes are in the order of `template_ops()`, one op per node, and every
    dependency the lowering uses comes from its tensors.
    """

    kind: str
    tokens: int
    context: int
    layers: int
    head: tuple[Op, ...]
    layer: tuple[Op, ...]
    tail: tuple[Op, ...]
    graph: Graph

    @property
    def template_blocks(self) -> int:
        """Layer blocks in the template graph (and program): min(layers, 2)."""
        return min(self.layers, 2)

    def template_ops(self) -> list[Op]:
        """The ops of the template, aligned with `graph.nodes`: head, blocks x layer, tail."""
        return [*self.head, *(self.layer * self.template_blocks), *self.tail]

    def totals(self) -> dict[str, int]:
        """Summed element counts over the whole pass."""
        out = dict.fromkeys(
            ("weight_elems", "act_elems", "kv_elems", "store_elems", "macs", "sfu_elems"), 0
        )
        for group, mult in ((self.head, 1), (self.layer, self.layers), (self.tail, 1)):
            for op in group:
                for key in out:
                    out[key] += getattr(op, key) * mult
        return out
