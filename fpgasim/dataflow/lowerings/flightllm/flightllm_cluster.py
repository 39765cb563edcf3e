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
from collections.abc import Callable
from dataclasses import dataclass, replace

from fpgasim.bounded import BoundedCache, bounded_cache
from fpgasim.config.board import Board
from fpgasim.config.cluster import Cluster
from fpgasim.config.fpga import Fpga
from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.instructions import TRAFFIC_NONE, Executable, Program
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
    # a decoder layer's hardware layers are the same objects in every layer
    # (`hardware_layers_of`): their shares are too, so the pass is planned as one period
    # (`_periodic_plan`) and not layer by layer
    shares: dict[int, tuple[HwLayer, ...]] = {}

    def collective(after: HwLayer, message_bytes: float, width: int) -> CollectiveLayer:
        cost = all_reduce(message_bytes, c, rate, n)
        return CollectiveLayer(COLLECTIVE, f"{after.name}.all_reduce", after.rows, width, width,
                               seconds=cost.seconds, port_bytes=cost.port_bytes, form=cost.form)

    def share(L: HwLayer) -> tuple[HwLayer, ...]:
        role = L.name.rsplit(".", 1)[-1]
        if L.kind == "linear" and role in ("q_proj", "k_proj", "v_proj", "gate_proj",
                                           "up_proj", "lm_head"):
            if role == "lm_head":
                return (replace(L, n=L.n // n),
                        collective(L, L.rows * ARGMAX_PAIR_BYTES, ARGMAX_PAIR_BYTES))
            return (replace(L, n=L.n // n),)
        if L.kind == "linear" and role in ("o_proj", "down_proj"):
            return replace(L, k=L.k // n), collective(L, L.rows * L.n * act_bytes, L.n)
        if L.kind in ("concat", "attention_qk", "attention_pv"):
            return (replace(L, heads=L.heads // n),)
        return (L,)

    for L in hw:
        mine = shares.get(id(L))
        if mine is None:
            mine = shares[id(L)] = share(L)
        out.extend(mine)
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
    pipeline stages a hop of the activations before each stage but the first (the stages
    are cut at the hops: `stage_layers`). Kept per hardware-layer tuple (`_CLUSTER_LAYERS`),
    so a pass of a shape seen before is neither split nor planned again."""
    c = board.cluster
    key = (id(hw), c, board.fpga.network.port_bytes_per_s, act_bytes)
    return _CLUSTER_LAYERS(key, lambda: (hw, _cluster_layers(hw, board, act_bytes)))[1]


#: one card's hardware layers of recent passes, by the identity of the pass's layers (held)
_CLUSTER_LAYERS: BoundedCache[tuple[tuple, tuple[HwLayer, ...]]] = bounded_cache(
    "flightllm.cluster_layers", owner="fpgasim.dataflow.lowerings.flightllm.flightllm_cluster",
    keys="a hardware-layer tuple's identity (held), cluster, port rate, activation bytes",
    budget=256, why="a 70B verify pass on 8 cards split its 80 layers afresh at every ask "
    "(the lowering, the link columns, each pipeline stage) and was planned layer by layer: "
    "kept, the split tuple is planned once")


def _cluster_layers(hw: tuple[HwLayer, ...], board: Board,
                    act_bytes: float) -> tuple[HwLayer, ...]:
    """`cluster_layers` computed."""
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


def is_hop(L: HwLayer) -> bool:
    """Whether the layer is a pipeline stage's hop (a point-to-point send of activations)."""
    return isinstance(L, CollectiveLayer) and L.form == "p2p"


def stage_layers(hw: tuple[HwLayer, ...]) -> tuple[tuple[HwLayer, ...], ...]:
    """A pipelined pass's layers (`cluster_layers`) cut into its stages, each but the first
    starting with its hop; kept per tuple (`_STAGES`), so each stage's tuple is the same
    object at every ask and is planned once (`part_plan.plan`)."""

    def cut() -> tuple[tuple, tuple[tuple[HwLayer, ...], ...]]:
        starts = [0] + [i for i, L in enumerate(hw) if is_hop(L)] + [len(hw)]
        return hw, tuple(hw[a:b] for a, b in zip(starts, starts[1:], strict=False) if b > a)

    return _STAGES(id(hw), cut)[1]


_STAGES: BoundedCache[tuple[tuple, tuple[tuple[HwLayer, ...], ...]]] = bounded_cache(
    "flightllm.pipeline_stages", owner="fpgasim.dataflow.lowerings.flightllm.flightllm_cluster",
    keys="a pipelined pass's hardware-layer tuple's identity (held)", budget=256,
    why="each stage's layers as one tuple object, so the stage is planned once per pass "
    "shape (`flightllm.plans` is keyed by identity)")


def micro_batch_sizes(batch: int, micro_batches: int) -> tuple[int, ...]:
    """The requests of each micro-batch: `batch` cut into `micro_batches` as evenly as whole
    requests allow, the larger first (5 into 2: 3 and 2)."""
    q, r = divmod(batch, micro_batches)
    return tuple(q + 1 if j < r else q for j in range(micro_batches))


@dataclass(frozen=True)
class Schedule:
    """A pipelined pass's stage occupancy: when it ends, each stage card's busy ticks and
    the collective seconds on its critical path."""

    makespan_ticks: int
    busy_ticks: tuple[int, ...]  # per stage: its micro-batches' work and the hops it takes part in
    sync_s: float  # collective seconds (all-reduces and hops) on the critical path

    @property
    def bubble_share(self) -> float:
        """The stage cards' idle share of the pass: 1 - busy / (stages x makespan)."""
        if self.makespan_ticks == 0:
            return 0.0
        return 1.0 - sum(self.busy_ticks) / (len(self.busy_ticks) * self.makespan_ticks)


def schedule(hop_ticks: list[list[int]], work_ticks: list[list[int]],
             hop_sync_s: list[list[float]], work_sync_s: list[list[float]]) -> Schedule:
    """The GPipe forward schedule of m micro-batches over p stages (`[j][s]`: micro-batch j,
    stage s): each stage takes the micro-batches in order; micro-batch j's hop into stage s
    (s > 0) starts when stage s-1 has finished j and stage s has finished j-1, and holds
    both cards (a SYS instruction on each, between barriers: docs/multi-fpga.md,
    "Micro-batches"); then stage s works on j. The bubble is what the schedule leaves idle:
    with equal stages and free hops it is (p-1)/(m+p-1) of every card's time. The sync
    seconds of each hop and of each stage's work (its all-reduces) are summed along the
    path that sets each start (the later of the two cards; the sender's on a tie)."""
    m, p = len(work_ticks), len(work_ticks[0])
    free = [(0, 0.0)] * p  # per card: when it is free, and the critical path's sync to then
    busy = [0] * p
    for j in range(m):
        for s in range(p):
            if s == 0:
                t, k = free[0]
            else:
                ready, mine = free[s - 1], free[s]  # stage s-1 has just finished j
                t, k = ready if ready[0] >= mine[0] else mine
                t += hop_ticks[j][s]
                k += hop_sync_s[j][s]
                busy[s - 1] += hop_ticks[j][s]
                busy[s] += hop_ticks[j][s]
                free[s - 1] = (t, k)
            free[s] = (t + work_ticks[j][s], k + work_sync_s[j][s])
            busy[s] += work_ticks[j][s]
    end, sync = free[p - 1]
    return Schedule(end, tuple(busy), sync)


@dataclass(frozen=True)
class Pipelined(Executable):
    """A pipelined pass: every micro-batch's stages in `parts`/`order` (what its totals,
    bytes and energy count: every card's work), and where each (micro-batch, stage) runs
    in `order`; the engines time it by its stage occupancy (`Pipelined.schedule`), not by
    the sum of its parts."""

    #: [j][s]: (first, end) of micro-batch j's stage s in `order`, its hop first (s > 0)
    slots: tuple[tuple[tuple[int, int], ...], ...] = ()
    #: [j][s]: the seconds of that slot's hop, and of its all-reduces
    hop_sync_s: tuple[tuple[float, ...], ...] = ()
    work_sync_s: tuple[tuple[float, ...], ...] = ()
    micro_batches: int = 1

    @property
    def stages(self) -> int:
        """Pipeline stages (a unit's utilisation is its busy time over theirs: the engines'
        per-unit rows)."""
        return len(self.slots[0]) if self.slots else 1

    def schedule(self, part_ticks: Callable[[Program], int]) -> Schedule:
        """The pass's stage occupancy, each part's makespan from `part_ticks` (an engine's)."""
        ticks = [part_ticks(p) for p in self.parts]
        hop: list[list[int]] = []
        work: list[list[int]] = []
        for slots in self.slots:
            hop.append([])
            work.append([])
            for s, (a, b) in enumerate(slots):
                first = ticks[self.order[a]] if s else 0
                hop[-1].append(first)
                work[-1].append(sum(ticks[k] for k in self.order[a:b]) - first)
        return schedule(hop, work, [list(x) for x in self.hop_sync_s],
                        [list(x) for x in self.work_sync_s])


def lower_pipelined(spec: PassSpec, board: Board, model: TargetModel) -> Pipelined:
    """A target pass on a pipeline of stages: its batch cut into micro-batches
    (`Cluster.micro_batches_of`, `micro_batch_sizes`), each micro-batch's pass compiled as
    FlightLLM compiles one card's share (`cluster_layers`) and cut at its hops into
    stages, each stage planned and compiled like a pass of its own."""
    # flightllm_lowering imports this module: its names are read when a pass is lowered
    from fpgasim.dataflow.lowerings.flightllm.flightllm_lowering import compiled_parts
    from fpgasim.dataflow.lowerings.flightllm.flightllm_lowering import pass_layers as _layers
    from fpgasim.dataflow.lowerings.flightllm.part_plan import plan

    m = board.cluster.micro_batches_of(spec.batch)
    by_size: dict[int, tuple[list[Executable], list[float]]] = {}
    label = ""
    for b in sorted(set(micro_batch_sizes(spec.batch, m)), reverse=True):
        hw, rates, masks, label_b = _layers(replace(spec, batch=b), board, model)
        label = label or label_b
        stages = []
        for k, layers in enumerate(stage_layers(hw)):
            stages.append(compiled_parts(*plan(layers), rates, masks, f"{label_b} stage {k}",
                                         board))
        hops = [layers[0].seconds if is_hop(layers[0]) else 0.0 for layers in stage_layers(hw)]
        works = [collective_totals(layers[1:] if is_hop(layers[0]) else layers)[0]
                 for layers in stage_layers(hw)]
        by_size[b] = stages, (hops, works)
    parts: list[Program] = []
    index: dict[int, int] = {}
    order: list[int] = []
    slots = []
    hop_sync, work_sync = [], []
    for b in micro_batch_sizes(spec.batch, m):
        stages, (hops, works) = by_size[b]
        row = []
        for ex in stages:
            first = len(order)
            for k in ex.order:
                part = ex.parts[k]
                if id(part) not in index:
                    index[id(part)] = len(parts)
                    parts.append(part)
                order.append(index[id(part)])
            row.append((first, len(order)))
        slots.append(tuple(row))
        hop_sync.append(tuple(hops))
        work_sync.append(tuple(works))
    if m > 1:
        label += f" micro-batches={m}"
    roles = next(iter(by_size.values()))[0][0].unit_roles
    return Pipelined(parts=tuple(parts), order=tuple(order), label=label, unit_roles=roles,
                     slots=tuple(slots), hop_sync_s=tuple(hop_sync),
                     work_sync_s=tuple(work_sync), micro_batches=m)


def collective_totals(hw: tuple[HwLayer, ...]) -> tuple[float, float]:
    """(seconds, bytes per port) of a pass's collectives."""
    layers = [L for L in hw if isinstance(L, CollectiveLayer)]
    return sum(L.seconds for L in layers), sum(L.port_bytes for L in layers)


def link_seconds(spec: PassSpec, board: Board, model: TargetModel,
                 engine: object = None) -> tuple[float, float]:
    """(seconds the pass waits on its collectives, seconds one port is busy sending) of a
    target pass on the board's cluster; (0, 0) on one card or for a drafter's pass. A pass
    cut into micro-batches waits on the collectives of its schedule's critical path
    (`Schedule.sync_s`, timed on `engine`), and a port sends for every micro-batch."""
    if board.cluster.is_single or spec.kind != "target":
        return 0.0, 0.0
    # flightllm_lowering imports this module: its names are read when a pass is lowered
    from fpgasim.dataflow.lowerings.flightllm.flightllm_lowering import pass_layers as _layers

    m = board.cluster.micro_batches_of(spec.batch)
    if m == 1:
        hw = _layers(spec, board, model)[0]
        seconds, port_bytes = collective_totals(hw)
        return seconds, _port_bytes(hw, port_bytes) / board.fpga.network.port_bytes_per_s
    port_bytes = 0.0
    for b in micro_batch_sizes(spec.batch, m):
        hw = _layers(replace(spec, batch=b), board, model)[0]
        port_bytes += _port_bytes(hw, collective_totals(hw)[1])
    sync_s = lower_pipelined(spec, board, model).schedule(part_ticks_of(engine)).sync_s
    return sync_s, port_bytes / board.fpga.network.port_bytes_per_s


def _port_bytes(hw: tuple[HwLayer, ...], port_bytes: float) -> float:
    """The bytes one card's port sends in a pass whose collectives send `port_bytes` in
    all: a card's port sends its own stage's hop, not every stage's."""
    hops = [L for L in hw if is_hop(L)]
    if hops:
        hop_bytes = sum(L.port_bytes for L in hops)
        port_bytes += hop_bytes / len(hops) - hop_bytes
    return port_bytes


def part_ticks_of(engine: object) -> Callable[[Program], int]:
    """The part makespans of a cycle engine (or of the engine a pass service wraps)."""
    inner = getattr(engine, "engine", engine)
    ticks = getattr(inner, "part_ticks", None)
    if ticks is None:
        raise InputError("engine", getattr(inner, "name", inner), "event or fast for a "
                         "pipeline of several stages (its schedule is of timed parts)")
    return ticks


def pipeline_columns(spec: PassSpec, board: Board, model: TargetModel,
                     engine: object = None) -> dict:
    """A row's pipeline columns: the target pass's `micro_batches` and `bubble_share` (its
    stage cards' idle share, from its schedule timed on `engine`; 1 and 0.0 without a
    pipeline)."""
    sched = pass_schedule(spec, board, model, engine)
    if sched is None:
        return {"micro_batches": 1, "bubble_share": 0.0}
    return {"micro_batches": board.cluster.micro_batches_of(spec.batch),
            "bubble_share": sched.bubble_share}


def pass_schedule(spec: PassSpec, board: Board, model: TargetModel,
                  engine: object = None) -> Schedule | None:
    """The stage occupancy of a target pass on a pipeline, timed on `engine` (None without
    a pipeline)."""
    if board.cluster.pp_stages == 1 or spec.kind != "target":
        return None
    return lower_pipelined(spec, board, model).schedule(part_ticks_of(engine))


def cluster_columns(board: Board, sync_s: float, link_busy_s: float, step_s: float,
                    pipeline: dict | None = None) -> dict:
    """A result row's cluster columns: cards, parallel, tp_cards, pp_stages, hop_latency_s,
    link_busy_share (one port's sending time / the step), sync_share (the step's time
    waiting on collectives), micro_batches and bubble_share (`pipeline_columns`)."""
    return {**board.cluster.columns(), "link_busy_share": link_busy_s / step_s,
            "sync_share": sync_s / step_s,
            **(pipeline or {"micro_batches": 1, "bubble_share": 0.0})}
