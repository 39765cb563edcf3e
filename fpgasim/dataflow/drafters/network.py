"""A drafter's network, described once and lowering-neutral: the blocks of one draft pass.

A drafter plug-in returns a `DraftNetwork` for a pass (`DrafterPlugin.network`); every
consumer lowers that one description: `dataflow/network_ops.py` to the study's ops (the
`analytic` engine's accounting and the drafter's weight count), and every lowering to its
own layer types (docs/architecture.md names them). Widths are multiples of the
target's hidden size h and keys follow from the pass's context in the lowering, so a
description holds no board and no model. Block names are the prefixes of their ops.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fc:
    """fc fusing `fused_layers` of the target's hidden states (fused_layers h -> h) into the
    feature the layer reads (EAGLE-3's first pass)."""

    fused_layers: int


@dataclass(frozen=True)
class Lstm:
    """`layers` LSTM layers: each one linear over [input, previous state] to 4 gates, then the
    cell update; the first input is the pass input (`input_multiple` h), later ones h."""

    layers: int


@dataclass(frozen=True)
class SelfAttention:
    """Norm, q/k/v (GQA, the target's head sizes), attention over the drafter's own cache,
    o plus the residual. `window_tokens`: a sliding-window cache (None: the whole context)."""

    name: str
    window_tokens: int | None = None


@dataclass(frozen=True)
class CrossAttention:
    """Norm, q, attention over the target's KV cache (read in place, no append), o plus the
    residual."""

    name: str


@dataclass(frozen=True)
class Mlp:
    """Norm, the gated MLP (gate, SiLU, up, down) plus the residual."""

    name: str


@dataclass(frozen=True)
class Decoder:
    """One decoder layer over the drafter's own cache of the whole context: norm over
    `input_multiple` h (the feature concatenated with the token embedding when above 1),
    q/k/v from it, attention, o plus the residual (the feature), the MLP.
    `q_macs_twice`: the study's accounting charges q's MACs twice (EAGLE-3,
    docs/accounting.md); a compiler runs q once."""

    input_multiple: int = 1
    q_macs_twice: bool = False


@dataclass(frozen=True)
class LmHead:
    """The LM head over `rows` positions. `vocab`: its outputs (None: the target's
    vocabulary); `own`: the drafter's own weights (else it shares the target's head);
    `vocab_field`: the drafter field that sets `vocab`, named when a lowering refuses it."""

    rows: int
    vocab: int | None = None
    own: bool = False
    vocab_field: str = ""


Block = Fc | Lstm | SelfAttention | CrossAttention | Mlp | Decoder


@dataclass(frozen=True)
class DraftNetwork:
    """One draft pass of `rows` new tokens: its input (`input_name`, `input_multiple` h
    wide), `head` blocks run once, one layer of `layer` blocks, then `lm_head`.
    `tag` is appended to the pass's name (" first": EAGLE-3's first pass)."""

    kind: str
    rows: int
    input_name: str
    input_multiple: int
    head: tuple[Block, ...]
    layer: tuple[Block, ...]
    lm_head: LmHead
    tag: str = ""

    def blocks(self) -> tuple[Block, ...]:
        """Every block, in the order they run (the LM head aside)."""
        return self.head + self.layer

    def own_cache_tokens(self, context: int, verify_len: int) -> int:
        """Positions of the drafter's own KV cache at `context` with `verify_len` tokens:
        its self-attention's window, or the whole sequence (0 without self-attention)."""
        total = context + verify_len
        tokens = 0
        for block in self.blocks():
            if isinstance(block, SelfAttention):
                window = block.window_tokens
                tokens += total if window is None else min(window, total)
            elif isinstance(block, Decoder):
                tokens += total
        return tokens
