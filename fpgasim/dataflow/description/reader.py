"""The visitor every reader of a model description derives from: one method per node kind,
dispatched on `node.kind` (never on a class), so a reader's capability is the set of
methods it has (docs/architecture.md, "One model description and its readers")."""

from __future__ import annotations

from typing import Any, ClassVar

from fpgasim.config.schema import TargetModel, model_source
from fpgasim.dataflow.description.model_graph import ModelGraph
from fpgasim.dataflow.description.nodes import Node
from fpgasim.errors import ConfigError

#: every node kind the description has (nodes.py)
NODE_KINDS = ("norm", "linear", "rope", "positions", "attention", "activation", "residual",
              "lm_head", "router", "routed_experts", "shared_experts")


class Reader:
    """A visitor over a `ModelGraph`: `visit(node)` calls the method named after the node's
    kind. `what` names the reader in a refusal."""

    what: ClassVar[str] = "this reader"

    @classmethod
    def kinds(cls) -> frozenset[str]:
        """The node kinds this reader has a method for."""
        return frozenset(k for k in NODE_KINDS if callable(getattr(cls, k, None)))

    def check(self, graph: ModelGraph, model: TargetModel) -> None:
        """Refuse, before any work, a graph holding a kind this reader has no method for
        (one line naming the model's file, its architecture and the kinds)."""
        missing = sorted(graph.kinds() - self.kinds())
        if missing:
            raise ConfigError(model_source(model), "architecture", graph.family,
                              f"a model {self.what} reads (it has no rule for "
                              f"{', '.join(missing)})")

    def visit(self, node: Node) -> Any:
        """Dispatch `node` to the method of its kind."""
        return getattr(self, node.kind)(node)
