"""A fourth drafter defined outside fpgasim, to prove that adding one is one module + one
YAML (tests/data/test-mlp.yaml): norm + MLP + the shared LM head over the accepted tokens or
the last level, drafting a static tree level by level, in the study's accounting (its ops)
and (through `flightllm_graph`) on FlightLLM's compiler. `register()` adds it for a test."""

from __future__ import annotations

from typing import ClassVar, Literal

from fpgasim.config.board import Board
from fpgasim.config.design import Linear
from fpgasim.config.schema import DrafterSchema, TargetModel
from fpgasim.dataflow.draft_passes import level_passes
from fpgasim.dataflow.drafters import (
    DrafterKind,
    register_drafter,
    unregister_drafter,
)
from fpgasim.dataflow.graph import Graph, GraphBuilder
from fpgasim.dataflow.lowerings.flightllm.drafts import DraftGraph
from fpgasim.dataflow.lowerings.flightllm.graph import GraphParams, Layers
from fpgasim.dataflow.ops import PassOps
from fpgasim.dataflow.passes import Net, PassSpec, identity
from fpgasim.dataflow.token_tree import TokenTree


class MlpDrafter(DrafterSchema):
    """The test drafter's schema: no option beyond its kind."""

    kind: Literal["test-mlp"]


class Mlp:
    """The test drafter plug-in."""

    kind: ClassVar[DrafterKind] = DrafterKind("test-mlp")
    schema: ClassVar[type[MlpDrafter]] = MlpDrafter

    def draft_passes(
        self, drafter: MlpDrafter, tree: TokenTree, accepted: int, context: int
    ) -> list[PassSpec]:
        return level_passes(self.kind, tree, accepted, context)

    def build_pass(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: MlpDrafter
    ) -> PassOps:
        n = spec.tokens
        net = Net(f"test-mlp n={n} L={spec.context}", model, n, board)

        def layer(x: str) -> str:
            return net.mlp("mlp", x)  # its post-norm normalises the hidden state

        def tail(x: str) -> None:
            net.lm_head(x, n, model.vocab)

        x = net.act_input("hidden", n, model.hidden)
        return net.build(self.kind, spec.context, 1, identity, layer, tail, x)

    def weight_count(self, model: TargetModel, drafter: MlpDrafter) -> int:
        """The MLP (gate, up, down); the LM head is the target's."""
        return 3 * model.hidden * model.intermediate

    def kv_tokens(self, drafter: MlpDrafter, context: int, verify_len: int) -> int:
        """No attention, no KV cache."""
        return 0

    def flightllm_graph(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: MlpDrafter
    ) -> DraftGraph:
        """The same pass in FlightLLM's layer types: no keys, so only the rows matter."""
        return DraftGraph(mlp_flightllm_graph, (spec.tokens,), f"test-mlp rows={spec.tokens}")


def mlp_flightllm_graph(model: TargetModel, params: GraphParams, rows: int) -> Graph:
    """RMSnorm, the gated MLP plus the residual, and the shared LM head, dense (at the
    design's recipe widths)."""
    h, inter = model.hidden, model.intermediate
    dense = Linear()
    b = Layers(GraphBuilder(f"flightllm test-mlp draft {model.id} rows={rows}"), model, params,
               rows)
    n = b.rmsnorm("norm", b.x)
    act = b.silu("silu", b.linear("gate_proj", n, h, inter, dense), inter)
    gated = b.eltwise("gated", b.linear("up_proj", n, h, inter, dense), act, "mul")
    x = b.eltwise("residual", b.linear("down_proj", gated, inter, h, dense), b.x, "add")
    b.linear("lm_head", x, h, model.vocab, dense)
    return b.g.build()


def register() -> None:
    register_drafter(Mlp())


def unregister() -> None:
    unregister_drafter(Mlp.kind)
