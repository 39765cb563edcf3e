"""A drafter's network, described once and lowering-neutral: the blocks of one draft pass.

A drafter plug-in returns a `DraftNetwork` for a pass (`DrafterPlugin.network`); every
consumer reads that one description: `dataflow/network_ops.py` as the study's ops (the
`analytic` engine's accounting and the drafter's weight count), every lowering as its own
layer types, the GPU model of `heterogeneous/` as its streamed parameters
(docs/architecture.md, "A drafter's blocks and their readers"). Widths are multiples of the
target's hidden size h and keys follow from the pass's context in the lowering, so a
description holds no board and no model. Block names are the prefixes of their ops.

A reader is a class with one method per block kind it reads, named by the kind
(`Fc.kind` "fc", ...): `read_block` dispatches on the kind, never on the class, and the
methods a reader has (`block_kinds`) are what it can read, so a lowering refuses a network
holding another kind before any work (`missing_blocks`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar


class _Block:
    """What every block has: the kind its readers dispatch on."""

    kind: ClassVar[str] = ""

    def embedding_multiple(self) -> int:
        """h-multiples of the token embedding the block concatenates ahead of its input (0)."""
        return 0


@dataclass(frozen=True)
class Fc(_Block):
    """fc over `fused_layers` h of the pass input -> h: the fusion of the target's hidden
    states into the feature the layer reads (EAGLE-3's first pass; EAGLE-2's concatenated
    feature and token embedding, `fused_layers` 2)."""

    kind: ClassVar[str] = "fc"
    fused_layers: int


@dataclass(frozen=True)
class GatedFusion(_Block):
    """Dovetail's Dynamic Gated Fusion of the feature and the token embedding (each h wide)
    in place of EAGLE-2's fc: W1 and W2 (h -> h) and the gate Wz (2h -> h)."""

    kind: ClassVar[str] = "gated_fusion"


@dataclass(frozen=True)
class Lstm(_Block):
    """`layers` LSTM layers: each one linear over [input, previous state] to 4 gates, then the
    cell update; the first input is the pass input (`input_multiple` h), later ones h."""

    kind: ClassVar[str] = "lstm"
    layers: int


@dataclass(frozen=True)
class SelfAttention(_Block):
    """Norm, q/k/v (GQA, the target's head sizes), attention over the drafter's own cache,
    o plus the residual. `window_tokens`: a sliding-window cache (None: the whole context)."""

    kind: ClassVar[str] = "self_attention"
    name: str
    window_tokens: int | None = None


@dataclass(frozen=True)
class CrossAttention(_Block):
    """Norm, q, attention over the target's KV cache (read in place, no append), o plus the
    residual."""

    kind: ClassVar[str] = "cross_attention"
    name: str


@dataclass(frozen=True)
class Mlp(_Block):
    """Norm, the gated MLP (gate, SiLU, up, down) plus the residual."""

    kind: ClassVar[str] = "mlp"
    name: str


@dataclass(frozen=True)
class Decoder(_Block):
    """One decoder layer over the drafter's own cache of the whole context: norm over
    `input_multiple` h (the feature concatenated with the token embedding when above 1),
    q/k/v from it, attention, o plus the residual (the feature), the MLP.
    `q_macs_twice`: the study's accounting charges q's MACs twice (EAGLE-3,
    docs/accounting.md); a compiler runs q once."""

    kind: ClassVar[str] = "decoder"
    input_multiple: int = 1
    q_macs_twice: bool = False

    def embedding_multiple(self) -> int:
        """The token embedding its wide norm concatenates: input_multiple - 1 h."""
        return self.input_multiple - 1


@dataclass(frozen=True)
class LmHead(_Block):
    """The LM head over `rows` positions. `vocab`: its outputs (None: the target's
    vocabulary); `own`: the drafter's own weights (else it shares the target's head);
    `vocab_field`: the drafter field that sets `vocab`, named when a lowering refuses it."""

    kind: ClassVar[str] = "lm_head"
    rows: int
    vocab: int | None = None
    own: bool = False
    vocab_field: str = ""


Block = Fc | GatedFusion | Lstm | SelfAttention | CrossAttention | Mlp | Decoder
#: every block kind a network may hold, the LM head's included
BLOCK_KINDS: tuple[str, ...] = tuple(
    cls.kind for cls in (Fc, GatedFusion, Lstm, SelfAttention, CrossAttention, Mlp, Decoder,
                         LmHead)
)


def read_block(reader: Any, block: Block | LmHead, *args: Any) -> Any:
    """`reader`'s method for the block's kind, called with the block and `args`."""
    method = getattr(reader, block.kind, None)
    if method is None:
        raise TypeError(f"{type(reader).__name__} reads no {block.kind} block ({block!r})")
    return method(block, *args)


def block_kinds(reader: type) -> frozenset[str]:
    """The block kinds `reader` reads: those it has a method for."""
    return frozenset(kind for kind in BLOCK_KINDS if callable(getattr(reader, kind, None)))


def missing_blocks(kinds: frozenset[str], blocks: Iterable[Block | LmHead]) -> list[str]:
    """Names of the block types among `blocks` whose kind is not in `kinds`, sorted, once
    each (what a refusal names)."""
    return sorted({type(block).__name__ for block in blocks if block.kind not in kinds})


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
        reader = _OwnCacheTokens(context + verify_len)
        return sum(read_block(reader, block) for block in self.blocks())


class _OwnCacheTokens:
    """Reads a block as the positions it keeps in the drafter's own KV cache, `total` the
    sequence's tokens."""

    def __init__(self, total: int) -> None:
        self.total = total

    def self_attention(self, block: SelfAttention) -> int:
        """Its window of the sequence, or the whole sequence."""
        window = block.window_tokens
        return self.total if window is None else min(window, self.total)

    def decoder(self, block: Decoder) -> int:
        """The whole sequence."""
        return self.total

    def _none(self, block: Block) -> int:
        """No cache of its own (the target's cache is read in place)."""
        return 0

    fc = gated_fusion = lstm = cross_attention = mlp = _none
