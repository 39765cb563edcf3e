"""FLOPs and bytes of one target verification pass and one draft pass (Llama-family sizes).

The target's weights and KV width are its description's parameters
(`dataflow.description.parameters`); the Dovetail-family drafters are `DraftNetwork`s (not
fpgasim's drafter plug-ins: no schedule, no schema), read here by the GPU model's own reader
(`GpuDraftParams`).

Counts, not times: `timing.py` turns them into seconds on a device. A pass over n tokens at
context L reads every streamed weight once (the embedding table is only looked up), reads the
cached K/V of L tokens and writes the n new ones, and does 2 FLOPs per weight per token plus
attention (4·n·(L+n)·q_width per layer: QK^T and PV, the tree part charged dense).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fpgasim.config.schema import TargetModel, model_source
from fpgasim.dataflow.description.parameters import target_arithmetic
from fpgasim.dataflow.drafters.network import (
    Decoder,
    DraftNetwork,
    Fc,
    GatedFusion,
    LmHead,
    read_block,
)
from fpgasim.errors import ConfigError


@dataclass(frozen=True)
class Work:
    """What one forward pass costs: arithmetic and memory traffic."""

    flops: float
    bytes: float


def dovetail_network(name: str, fusion: Literal["fc", "dgf"], blocks: int,
                     width: int = 10) -> DraftNetwork:
    """A Dovetail-family drafter as a `DraftNetwork`: the fusion of the target's feature and
    the token embedding (2h), EAGLE-2's decoder layer and `blocks` (M) extra ones, then the
    target's LM head.

    fusion  "fc": EAGLE-2's concat + fc (2h -> h); "dgf": Dynamic Gated Fusion (W1, W2: h x h;
            Wz: 2h -> h gate), which replaces the fc
    width   tokens per draft pass after the first (top-k of the dynamic tree): the rows
    """
    head = (Fc(2),) if fusion == "fc" else (GatedFusion(),)
    return DraftNetwork(name, width, "embedding_feature", 2, head, (Decoder(),) * (1 + blocks),
                        LmHead(width))


EAGLE2 = dovetail_network("eagle2", "fc", 0)


def dovetail_drafter(blocks: int = 4, width: int = 10) -> DraftNetwork:
    """Dovetail's drafter: DGF + EAGLE-2's decoder layer + `blocks` extra blocks (M=4 default)."""
    return dovetail_network("dovetail", "dgf", blocks, width)


def drafter_for(method: str, blocks: int = 4, width: int = 10) -> DraftNetwork:
    """'EAGLE-2' / 'eagle2' -> EAGLE-2's head; 'Dovetail' / 'dovetail' -> Dovetail with M blocks."""
    key = method.lower().replace("-", "")
    if key == "eagle2":
        return dovetail_network("eagle2", "fc", 0, width)
    if key == "dovetail":
        return dovetail_drafter(blocks, width)
    raise ValueError(f"unknown drafter {method!r}; use EAGLE-2 or Dovetail")


def kv_width(m: TargetModel) -> int:
    """Elements of K (or V) per token per layer: kv_heads x head_dim."""
    return target_arithmetic(m).layer_kv_per_token // 2


def layer_params(m: TargetModel) -> int:
    """Weights of one Llama decoder layer: q, o (h x h), k, v (h x kv), SwiGLU MLP, two norms."""
    a = target_arithmetic(m)
    return a.layer_linear_weights + a.layer_norm_weights


def lm_head_params(m: TargetModel) -> int:
    """The untied LM head, h x V (the drafters share the target's)."""
    return target_arithmetic(m).lm_head_weights


def target_streamed_params(m: TargetModel) -> int:
    """Weights read by every target pass: all layers, the final norm and the LM head (a
    mixture of experts is refused: the GPU model has no routed experts, docs/moe-sd.md)."""
    if m.moe is not None:
        raise ConfigError(model_source(m), "model", m.id, "a dense target: the GPU+FPGA model "
                          "has no routed experts (docs/moe-sd.md)")
    return m.layers * layer_params(m) + target_arithmetic(m).final_norm_weights + lm_head_params(m)


def target_total_params(m: TargetModel) -> int:
    """All target weights, embedding table included (what must be resident somewhere)."""
    return target_streamed_params(m) + target_arithmetic(m).embedding_weights


class GpuDraftParams:
    """Reads a drafter's blocks as the GPU model's streamed weights and attention layers
    (each method: (weights, layers with their own KV cache)) for target `m`."""

    def __init__(self, m: TargetModel) -> None:
        self.m = m

    def fc(self, block: Fc) -> tuple[int, int]:
        """EAGLE-2's fc: fused_layers h x h."""
        return block.fused_layers * self.m.hidden * self.m.hidden, 0

    def gated_fusion(self, block: GatedFusion) -> tuple[int, int]:
        """DGF: W1 (h x h) + W2 (h x h) + Wz (2h x h)."""
        return 4 * self.m.hidden * self.m.hidden, 0

    def decoder(self, block: Decoder) -> tuple[int, int]:
        """A decoder layer of the target's shape (`layer_params`), one attention layer."""
        if block.input_multiple != 1:
            raise ValueError(f"{block!r}: the GPU model's decoder layers read h, not "
                             f"{block.input_multiple} h")
        return layer_params(self.m), 1

    def lm_head(self, block: LmHead) -> tuple[int, int]:
        """The LM head, streamed by every pass, shared or not: h x vocab."""
        vocab = block.vocab
        return (lm_head_params(self.m) if vocab is None else self.m.hidden * vocab), 0


def _draft_params(m: TargetModel, d: DraftNetwork) -> tuple[int, int]:
    """(streamed weights, attention layers) of drafter `d`'s pass on the GPU."""
    reader = GpuDraftParams(m)
    read = [read_block(reader, block) for block in (*d.blocks(), d.lm_head)]
    return sum(weights for weights, _ in read), sum(layers for _, layers in read)


def drafter_streamed_params(m: TargetModel, d: DraftNetwork) -> int:
    """Weights read by every draft pass: fusion, 1+M decoder layers, the shared LM head."""
    return _draft_params(m, d)[0]


def _pass_work(
    streamed_params: int,
    layers: int,
    m: TargetModel,
    tokens: int,
    context: int,
    weight_bytes: float,
    kv_bytes: float,
) -> Work:
    q_width = m.heads * m.head_dim
    flops = 2.0 * streamed_params * tokens + layers * 4.0 * tokens * (context + tokens) * q_width
    weights = streamed_params * weight_bytes + tokens * m.hidden * weight_bytes  # + embedding rows
    kv = layers * 2.0 * kv_width(m) * (context + tokens) * kv_bytes  # read L cached, write n new
    return Work(flops=flops, bytes=weights + kv)


def target_pass_work(
    m: TargetModel, tokens: int, context: int, weight_bytes: float, kv_bytes: float
) -> Work:
    """One target forward pass over `tokens` tokens (1 = AD step) at context length `context`."""
    return _pass_work(
        target_streamed_params(m), m.layers, m, tokens, context, weight_bytes, kv_bytes
    )


def draft_pass_work(
    m: TargetModel, d: DraftNetwork, tokens: int, context: int, element_bytes: float
) -> Work:
    """One draft forward pass over `tokens` tokens (the drafter keeps its own KV cache)."""
    streamed, layers = _draft_params(m, d)
    return _pass_work(streamed, layers, m, tokens, context, element_bytes, element_bytes)


def drafter_resident_bytes(
    m: TargetModel, d: DraftNetwork, context: int, element_bytes: float
) -> float:
    """GPU memory the drafter needs: its weights, the shared embedding and LM head, its KV cache."""
    streamed, layers = _draft_params(m, d)
    weights = streamed + m.vocab * m.hidden
    kv = layers * 2.0 * kv_width(m) * context
    return (weights + kv) * element_bytes
