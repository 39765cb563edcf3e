"""A network's pass as one description: head nodes once, the layer's nodes repeated, the
tail once (docs/architecture.md, "One model description and its readers")."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fpgasim.dataflow.description.nodes import Node, Weight


@dataclass(frozen=True)
class ModelGraph:
    """The op graph of one network's pass, shape-free: `head` once, `layer` repeated
    `layers` times, `tail` once. `input` names the activation the pass receives
    (`input_width` wide); `embedding` is the token table (looked up, not streamed);
    `counts_norms`: the family's published parameter count includes its norms' gains and
    biases (GPT-2's), which the parameter reader then counts too."""

    family: str
    input: str
    input_width: int
    head: tuple[Node, ...]
    layer: tuple[Node, ...]
    layers: int
    tail: tuple[Node, ...]
    embedding: Weight | None = None
    counts_norms: bool = False

    def parts(self) -> Iterator[tuple[str, tuple[Node, ...]]]:
        """(part, nodes) of the head, the (one) layer and the tail, in pass order."""
        yield "head", self.head
        yield "layer", self.layer
        yield "tail", self.tail

    def kinds(self) -> frozenset[str]:
        """The node kinds the pass holds (what a reader must know)."""
        return frozenset(node.kind for _, nodes in self.parts() for node in nodes)
