"""A fourth drafter defined outside fpgasim, to prove that adding one is one module + one
YAML (tests/data/test-mlp.yaml): norm + MLP + the shared LM head over the accepted tokens or
the last level, drafting a static tree level by level. It describes its network once; the
study's accounting (its ops), FlightLLM's compiler, simulate, the solver and the AAT tables
all take it from there. `register()` adds it for a test."""

from __future__ import annotations

from typing import ClassVar, Literal

from fpgasim.config.schema import DrafterSchema
from fpgasim.dataflow.draft_passes import level_passes
from fpgasim.dataflow.drafters import (
    DrafterKind,
    register_drafter,
    unregister_drafter,
)
from fpgasim.dataflow.drafters.network import DraftNetwork, LmHead, Mlp
from fpgasim.dataflow.passes import PassSpec
from fpgasim.dataflow.token_tree import TokenTree


class MlpDrafter(DrafterSchema):
    """The test drafter's schema: no option beyond its kind."""

    kind: Literal["test-mlp"]


class MlpPlugin:
    """The test drafter plug-in."""

    kind: ClassVar[DrafterKind] = DrafterKind("test-mlp")
    schema: ClassVar[type[MlpDrafter]] = MlpDrafter

    def draft_passes(
        self, drafter: MlpDrafter, tree: TokenTree, accepted: int, context: int
    ) -> list[PassSpec]:
        """One pass over the accepted tokens, then one per level but the last."""
        return level_passes(self.kind, tree, accepted, context)

    def network(self, spec: PassSpec, drafter: MlpDrafter) -> DraftNetwork:
        """The MLP (its norm normalises the hidden state), then the target's LM head."""
        n = spec.tokens
        return DraftNetwork(self.kind, n, "hidden", 1, (), (Mlp("mlp"),), LmHead(n))


def register() -> None:
    """Add the test drafter to the registry (its schema with it)."""
    register_drafter(MlpPlugin())


def unregister() -> None:
    """Remove it again."""
    unregister_drafter(MlpPlugin.kind)
