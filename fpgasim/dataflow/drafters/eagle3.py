"""EAGLE-3: a one-layer drafter over the target's fused hidden states that grows a dynamic
tree, top-k nodes per level to a depth (docs/accounting.md)."""

from __future__ import annotations

from typing import ClassVar

from fpgasim.config.schema import Eagle3Drafter
from fpgasim.dataflow.drafters.base import DrafterKind
from fpgasim.dataflow.drafters.network import Decoder, DraftNetwork, Fc, LmHead
from fpgasim.dataflow.passes import PassSpec
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import InputError


class Eagle3:
    """The EAGLE-3 drafter plug-in."""

    kind: ClassVar[DrafterKind] = DrafterKind("eagle3")
    schema: ClassVar[type[Eagle3Drafter]] = Eagle3Drafter

    def draft_passes(
        self, drafter: Eagle3Drafter, tree: TokenTree, accepted: int, context: int
    ) -> list[PassSpec]:
        """A first pass (with fc) over the accepted tokens, then `depth` passes of top-k."""
        if not tree.is_dynamic:
            raise InputError("depth/top_k", tree.describe(), "EAGLE-3 needs depth and top-k")
        return [PassSpec(self.kind, accepted, context, first=True)] + [
            PassSpec(self.kind, tree.top_k, context) for _ in range(tree.draft_depth)
        ]

    def network(self, spec: PassSpec, drafter: Eagle3Drafter) -> DraftNetwork:
        """First pass only: fc fusing `fused_layers` target hidden states into the feature
        (later passes take the feature). Then one decoder layer whose norm and q/k/v read the
        token embedding concatenated with the feature (`input_multiple` h wide) over its own
        cache of the whole context, residual the feature (the study charges q's MACs twice),
        and its own LM head, no final norm (draft_vocab, else the target's vocabulary)."""
        n = spec.tokens
        layer = (Decoder(drafter.input_multiple, drafter.q_charged_twice),)
        head = LmHead(n, drafter.draft_vocab, own=True, vocab_field="draft_vocab")
        if spec.first:
            fc = (Fc(drafter.fused_layers),)
            return DraftNetwork(self.kind, n, "target_features", drafter.fused_layers, fc,
                                layer, head, " first")
        return DraftNetwork(self.kind, n, "feature", 1, (), layer, head)
