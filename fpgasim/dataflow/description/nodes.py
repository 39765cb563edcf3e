"""The node types of a model description (docs/architecture.md, "One model description and
its readers"): what a network's pass computes, named, shape-free and board-free.

Every node names the activations it reads (`inputs`) and the one it writes (`output`);
its `kind` is what a reader dispatches on (`reader.Reader`), never its class. Widths are
elements; a weight says its role (the recipe projection it is compressed as, or
`norm_gain`, `embedding`, ...) and its shape. No accounting convention lives here: which
elements a pass loads, stores or charges is a reader's business.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal


@dataclass(frozen=True)
class Weight:
    """A parameter tensor: its role, its shape (elements) and whether a pass streams it
    (False: looked up by row, e.g. an embedding or a learned position table)."""

    role: str
    shape: tuple[int, ...]
    streamed: bool = True

    @property
    def elements(self) -> int:
        """Elements of the tensor."""
        return math.prod(self.shape)


@dataclass(frozen=True, kw_only=True)
class Node:
    """One operation of a pass: its name, the activations it reads and the one it writes."""

    kind: ClassVar[str] = ""
    name: str
    inputs: tuple[str, ...]
    output: str

    def weights(self) -> tuple[Weight, ...]:
        """The parameter tensors the node holds (none by default)."""
        return ()


@dataclass(frozen=True, kw_only=True)
class Norm(Node):
    """A normalisation over `width` elements: RMSNorm (a gain) or LayerNorm (gain, bias)."""

    kind: ClassVar[str] = "norm"
    width: int
    norm: Literal["rms", "layer"] = "rms"
    gain: Weight | None = None
    bias: Weight | None = None

    def weights(self) -> tuple[Weight, ...]:
        """Its gain and bias, where it has them."""
        return tuple(w for w in (self.gain, self.bias) if w is not None)


@dataclass(frozen=True, kw_only=True)
class Linear(Node):
    """x @ W, `d_in` -> `d_out`, with an optional bias; `role` is the recipe projection it is
    compressed as (q, k, v, o, gate, up, down, router, experts.gate, ...)."""

    kind: ClassVar[str] = "linear"
    role: str
    d_in: int
    d_out: int
    weight: Weight
    bias: Weight | None = None

    def weights(self) -> tuple[Weight, ...]:
        """Its weight and bias, where it has one."""
        return (self.weight,) if self.bias is None else (self.weight, self.bias)


@dataclass(frozen=True, kw_only=True)
class Rope(Node):
    """The rotary position embedding of a projection's output, `width` wide."""

    kind: ClassVar[str] = "rope"
    width: int


@dataclass(frozen=True, kw_only=True)
class Positions(Node):
    """Learned absolute positions (GPT-2): a table row added to each token's embedding."""

    kind: ClassVar[str] = "positions"
    table: Weight

    def weights(self) -> tuple[Weight, ...]:
        """The position table (looked up, not streamed)."""
        return (self.table,)


#: which keys an attention reads: its own cache and the pass's rows (a target's)
KeySpan = Literal["own"]


@dataclass(frozen=True, kw_only=True)
class Attention(Node):
    """Scaled dot-product attention of q (inputs[0]) over k and v (inputs[1:3]): `heads`
    query heads over `kv_heads` K/V heads of `head_dim`; `keys` says which keys it reads,
    `appends` whether this pass adds its K/V rows to the cache."""

    kind: ClassVar[str] = "attention"
    heads: int
    kv_heads: int
    head_dim: int
    keys: KeySpan = "own"
    appends: bool = True

    @property
    def q_width(self) -> int:
        """Width of q and of the output: heads x head_dim."""
        return self.heads * self.head_dim

    @property
    def kv_width(self) -> int:
        """Width of K (and of V) per token: kv_heads x head_dim."""
        return self.kv_heads * self.head_dim


@dataclass(frozen=True, kw_only=True)
class Activation(Node):
    """An element-wise activation `fn` over `width` elements of inputs[0]; `gated`: its
    product with inputs[1] (SwiGLU's SiLU(gate) x up)."""

    kind: ClassVar[str] = "activation"
    fn: Literal["silu", "gelu"]
    width: int
    gated: bool = False


@dataclass(frozen=True, kw_only=True)
class Residual(Node):
    """The element-wise sum of a branch (inputs[0]) and the skip it rejoins (inputs[1])."""

    kind: ClassVar[str] = "residual"
    width: int


@dataclass(frozen=True, kw_only=True)
class LmHead(Node):
    """The LM head, `d_in` -> `vocab` logits per row; `tied`: its weight is the embedding."""

    kind: ClassVar[str] = "lm_head"
    d_in: int
    vocab: int
    weight: Weight
    tied: bool = False

    def weights(self) -> tuple[Weight, ...]:
        """Its weight (the embedding table's, when tied)."""
        return (self.weight,)


@dataclass(frozen=True, kw_only=True)
class Router(Node):
    """A mixture of experts' router: a linear h -> E whose top-k picks each token's experts."""

    kind: ClassVar[str] = "router"
    experts: int
    top_k: int
    weight: Weight
    norm_topk_prob: bool = False

    def weights(self) -> tuple[Weight, ...]:
        """The router's weight."""
        return (self.weight,)


@dataclass(frozen=True, kw_only=True)
class RoutedExperts(Node):
    """E SwiGLU experts of width `d_ff` (gate, up, down each), of which each token runs
    `top_k` (inputs: the normed rows, the router's choice); `weights_per_expert` one
    expert's."""

    kind: ClassVar[str] = "routed_experts"
    experts: int
    top_k: int
    d_in: int
    d_ff: int
    fn: Literal["silu", "gelu"] = "silu"
    weights_per_expert: tuple[Weight, ...] = ()

    def weights(self) -> tuple[Weight, ...]:
        """One expert's weights (`experts` of them are stored)."""
        return self.weights_per_expert


@dataclass(frozen=True, kw_only=True)
class SharedExperts(Node):
    """An always-run SwiGLU expert of width `d_ff` (Qwen2-MoE), with an optional sigmoid
    gate (a linear h -> 1) scaling its output."""

    kind: ClassVar[str] = "shared_experts"
    d_in: int
    d_ff: int
    gate: Weight | None = None
    expert_weights: tuple[Weight, ...] = ()

    def weights(self) -> tuple[Weight, ...]:
        """Its gate (where it has one), then gate, up and down."""
        return ((self.gate,) if self.gate is not None else ()) + self.expert_weights
