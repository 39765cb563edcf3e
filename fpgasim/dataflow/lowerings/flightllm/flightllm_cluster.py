"""FlightLLM's lowering over a cluster of cards: Megatron tensor parallelism (docs/multi-fpga.md).

Each card compiles its 1/N of every decoder layer (heads, KV heads and FFN columns; the LM
head by vocabulary) and, after the row-parallel o-projection and down-projection, an
all-reduce of the layer's output: a hardware layer of its own (LD of the partial vector from
HBM, the collective on FlightLLM's SYS unit, whose role is `sync`, ST of the sum), between
two SYS barriers like every FlightLLM layer, so it overlaps nothing: FlightLLM's barriers
serialise hardware layers (docs/flightllm-model.md section 3). Its duration is the α-β cost
of docs/multi-fpga.md "Cost model", the cheaper of the ring and the gather-then-sum forms
per message. The LM head's scores end with a (value, index) all-reduce of 8 bytes a row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from fpgasim.config.board import Board
from fpgasim.config.cluster import Cluster
from fpgasim.config.fpga import Fpga
from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.instructions import TRAFFIC_NONE
from fpgasim.dataflow.lowerings.flightllm.flightllm_emitter import (
    FIXED,
    LD,
    ST,
    SYS,
    FlightLLMEmitter,
    mask_of,
)
from fpgasim.dataflow.lowerings.flightllm.layers import HwLayer
from fpgasim.dataflow.passes import PassSpec
from fpgasim.errors import ConfigError, InputError

#: the hardware-layer kind of a collective
COLLECTIVE = "collective"
#: bytes of one (score, token index) pair of the LM head's argmax all-reduce (docs/multi-fpga.md,
#: "Tensor parallelism": fp16 score + int32 index, padded to 8)
ARGMAX_PAIR_BYTES = 8
#: Aurora 64B/66B framing (docs/multi-fpga.md, "Link layers"): an 8-byte separator block per
#: frame and 8 clock-compensation characters every 4,992 user clocks (PG074)
AURORA_SEPARATOR_BYTES = 8
AURORA_CC_SHARE = 8 / 4992
#: Ethernet's per-frame bytes (preamble 8, header 14, FCS 4, gap 12) and its largest payload;
#: UDP/IPv4 adds 28 bytes of headers (docs/multi-fpga.md, "Link layers")
ETHERNET_FRAME_BYTES, ETHERNET_PAYLOAD_BYTES = 38, 1500
UDP_FRAME_BYTES, UDP_PAYLOAD_BYTES = 66, 1472


@dataclass(frozen=True)
class Collective:
    """One collective's cost: its form, seconds, steps and the bytes each port sends."""

    form: str  # "ring" (reduce-scatter + all-gather) or "gather" (gather, then local sum)
    seconds: float
    steps: int
    port_bytes: float


def payload_share(message_bytes: float, link_layer: str) -> float:
    """Payload / wire bytes of one message on the link layer (docs/multi-fpga.md table)."""
    m = max(message_bytes, 1.0)
    if link_layer == "aurora":
        return (1 - AURORA_CC_SHARE) * m / (m + AURORA_SEPARATOR_BYTES)
    frame, payload = ((ETHERNET_FRAME_BYTES, ETHERNET_PAYLOAD_BYTES) if link_layer == "ethernet"
                      else (UDP_FRAME_BYTES, UDP_PAYLOAD_BYTES))
    frames = math.ceil(m / payload)
    wire = max(m, 46 * frames) + frame * frames  # short payloads padded to 46 B
    return m / wire


def all_reduce(message_bytes: float, cluster: Cluster, port_bytes_per_s: float,
               cards: int) -> Collective:
    """An all-reduce of `message_bytes` over `cards` cards: the cheaper of the ring and the
    gather-then-sum forms (docs/multi-fpga.md, "Cost model"; a switch: one port per card)."""
    n, s, alpha = cards, float(message_bytes), cluster.hop_latency_s
    if n == 1:
        return Collective("none", 0.0, 0, 0.0)

    def beta(step_bytes: float) -> float:
        return port_bytes_per_s * payload_share(step_bytes, cluster.link_layer)

    if cluster.topology == "ring":
        # both directions of the ring (two ports): each carries half of every ring step
        ring_step = s / n / 2
        ring = Collective("ring", 2 * (n - 1) * (alpha + ring_step / beta(ring_step)),
                          2 * (n - 1), (n - 1) / n * s)
        c = math.ceil((n - 1) / 2)
        gather = Collective("gather", c * (alpha + s / beta(s)), c, c * s)
    else:  # one port to a switch: a ring through it, or every vector sent to every card
        ring_step = s / n
        ring = Collective("ring", 2 * (n - 1) * (alpha + ring_step / beta(ring_step)),
                          2 * (n - 1), 2 * (n - 1) / n * s)
        gather = Collective("gather", alpha + (n - 1) * s / beta(s), 1, (n - 1) * s)
    return ring if ring.seconds <= gather.seconds else gather


@dataclass(frozen=True)
class CollectiveLayer(HwLayer):
    """A collective between two barriers: LD `rows x k` activations, the link, ST the sum."""

    seconds: float = 0.0
    port_bytes: float = 0.0
    form: str = ""

    def key(self) -> tuple:
        """The layer's key plus what prices its link row."""
        return (*super().key(), self.seconds, self.port_bytes, self.form)


def emit_collective(e: FlightLLMEmitter, L: CollectiveLayer) -> None:
    """LD the partial vector, the collective on the SYS unit (fixed cycles), ST the result."""
    r = e.r
    nbytes = L.rows * L.k * r.act_bytes
    e.ld(nbytes, rel=mask_of(SYS))
    e.row((SYS, max(L.seconds * r.clock_hz, 1.0), 0, 0, TRAFFIC_NONE, mask_of(LD),
           mask_of(ST), FIXED, 1.0))
    e.st(nbytes, wait=mask_of(SYS))


def check_ports(fpga: Fpga, cluster: Cluster) -> None:
    """Refuse a cluster of a part without known network ports, or a ring its ports cannot
    close (a ring of more than two cards needs two ports a card)."""
    if cluster.is_single:
        return
    ports = fpga.network.ports
    if not ports or fpga.network.port_bytes_per_s is None:
        raise ConfigError(f"fpga {fpga.name}", "network.ports", ports,
                          "at least 1 port with a known port_gbit_s for more than one card")
    if cluster.topology == "ring" and ports < 2 and cluster.cards > 2:
        raise InputError("cards", cluster.cards, f"at most 2 on a ring of {fpga.name} cards "
                         "(1 network port each; a longer ring needs 2 a card)")


def check_split(cluster: Cluster, model: TargetModel) -> None:
    """Refuse a model whose heads, KV heads, FFN columns or vocabulary do not divide over the
    tensor-parallel cards, or with fewer layers than pipeline stages."""
    if cluster.micro_batches > 1:
        raise InputError("micro_batches", cluster.micro_batches, "1 (a pass cut into "
                         "micro-batches is not lowered yet: docs/multi-fpga.md)")
    n = cluster.tp_cards
    for field, value in (("heads", model.heads), ("kv_heads", model.kv_heads),
                         ("intermediate", model.intermediate), ("vocab", model.vocab)):
        if value % n:
            raise InputError("cards", n, f"a divisor of {model.id}'s {field} = {value} "
                             "(tensor parallelism splits it over the cards)")
    if model.layers < cluster.pp_stages:
        raise InputError("cards", cluster.cards, f"at most {model.layers} pipeline stages "
                         f"({model.id} has {model.layers} layers)")


def check_cluster(board: Board, model: TargetModel) -> None:
    """Refuse a cluster the part or the model cannot run (`check_ports`, `check_split`)."""
    check_ports(board.fpga, board.cluster)
    check_split(board.cluster, model)


def per_card_share(cluster: Cluster, layers: int) -> float:
    """The share of the target's weights and KV cache the busiest card holds."""
    return math.ceil(layers / cluster.pp_stages) / layers / cluster.tp_cards


def tp_layers(hw: tuple[HwLayer, ...], board: Board, act_bytes: float) -> tuple[HwLayer, ...]:
    """One card's hardware layers of a pass under tensor parallelism over `tp_cards` cards:
    projections and attention split (Megatron), an all-reduce after o- and down-projection,
    and the LM head split by vocabulary with its argmax all-reduce."""
    c = board.cluster
    n = c.tp_cards
    rate = board.fpga.network.port_bytes_per_s
    out: list[HwLayer] = []

    def collective(after: HwLayer, message_bytes: float, width: int) -> CollectiveLayer:
        cost = all_reduce(message_bytes, c, rate, n)
        return CollectiveLayer(COLLECTIVE, f"{after.name}.all_reduce", after.rows, width, width,
                               seconds=cost.seconds, port_bytes=cost.port_bytes, form=cost.form)

    for L in hw:
        role = L.name.rsplit(".", 1)[-1]
        if L.kind == "linear" and role in ("q_proj", "k_proj", "v_proj", "gate_proj",
                                           "up_proj", "lm_head"):
            out.append(replace(L, n=L.n // n))
            if role == "lm_head":
                out.append(collective(L, L.rows * ARGMAX_PAIR_BYTES, ARGMAX_PAIR_BYTES))
        elif L.kind == "linear" and role in ("o_proj", "down_proj"):
            out.append(replace(L, k=L.k // n))
            out.append(collective(L, L.rows * L.n * act_bytes, L.n))
        elif L.kind in ("concat", "attention_qk", "attention_pv"):
            out.append(replace(L, heads=L.heads // n))
        else:
            out.append(L)
    return tuple(out)


def point_to_point(message_bytes: float, cluster: Cluster, port_bytes_per_s: float) -> Collective:
    """One pipeline stage's activations to the next: one hop (neighbours on the ring, or
    through the switch), α + S/β (docs/multi-fpga.md, "Cost model")."""
    beta = port_bytes_per_s * payload_share(message_bytes, cluster.link_layer)
    return Collective("p2p", cluster.hop_latency_s + message_bytes / beta, 1, message_bytes)


def cluster_layers(hw: tuple[HwLayer, ...], board: Board,
                   act_bytes: float) -> tuple[HwLayer, ...]:
    """The hardware layers one pass runs through on the board's cluster, as one card of
    each stage sees them in turn: each layer's tensor-parallel share (`tp_layers`), and with
    pipeline stages a hop of the activations before each stage but the first. A single
    micro-batch visits the stages one after the other (docs/multi-fpga.md, "Pipeline
    parallelism"), so the pass's time is the stages' times and the hops in sequence."""
    c = board.cluster
    if c.tp_cards > 1:
        hw = tp_layers(hw, board, act_bytes)
    if c.pp_stages == 1:
        return hw
    starts = [i for i, L in enumerate(hw) if L.name.endswith("input_norm")]
    per_stage = math.ceil(len(starts) / c.pp_stages)
    cuts = {starts[k] for k in range(per_stage, len(starts), per_stage)}
    rate = board.fpga.network.port_bytes_per_s
    out: list[HwLayer] = []
    for i, L in enumerate(hw):
        if i in cuts:
            width = L.k  # the residual stream entering the stage's first norm
            cost = point_to_point(L.rows * width * act_bytes, c, rate)
            out.append(CollectiveLayer(COLLECTIVE, f"{L.name}.stage_hop", L.rows, width, width,
                                       seconds=cost.seconds, port_bytes=cost.port_bytes,
                                       form=cost.form))
        out.append(L)
    return tuple(out)


def collective_totals(hw: tuple[HwLayer, ...]) -> tuple[float, float]:
    """(seconds, bytes per port) of a pass's collectives."""
    layers = [L for L in hw if isinstance(L, CollectiveLayer)]
    return sum(L.seconds for L in layers), sum(L.port_bytes for L in layers)


def link_seconds(spec: PassSpec, board: Board, model: TargetModel) -> tuple[float, float]:
    """(seconds the pass waits on its collectives, seconds one port is busy sending) of a
    target pass on the board's cluster; (0, 0) on one card or for a drafter's pass."""
    if board.cluster.is_single or spec.kind != "target":
        return 0.0, 0.0
    from fpgasim.dataflow.lowerings.flightllm import _layers  # the package imports this module

    hw = _layers(spec, board, model)[0]
    seconds, port_bytes = collective_totals(hw)
    hops = [L for L in hw if isinstance(L, CollectiveLayer) and L.form == "p2p"]
    if hops:  # a card's port sends its own stage's hop, not every stage's
        hop_bytes = sum(L.port_bytes for L in hops)
        port_bytes += hop_bytes / len(hops) - hop_bytes
    return seconds, port_bytes / board.fpga.network.port_bytes_per_s


def cluster_columns(board: Board, sync_s: float, link_busy_s: float, step_s: float) -> dict:
    """A result row's cluster columns: cards, parallel, tp_cards, pp_stages, hop_latency_s,
    link_busy_share (one port's sending time / the step) and sync_share (the step's time
    waiting on collectives)."""
    return {**board.cluster.columns(), "link_busy_share": link_busy_s / step_s,
            "sync_share": sync_s / step_s}
