"""Emission: a plan's loads, tiles, SFU passes and stores become instruction rows.

`PlanEmitter` writes `Program` rows (`INSTR_DTYPE`) through the shared
`fpgasim.dataflow.emitter.Emitter`. Every row names its unit, its duration in cycles (bytes
/ channel-group rate, MACs / MPE rate, element passes / SFU rate), the rows it waits for
and the buffer space it takes or frees. An op's first rows wait for the rows that publish
its producers' outputs (the graph's direct producers); in ideal mode no row waits (the
analytic engine's overlap).
"""

from __future__ import annotations

from fpgasim.dataflow.emitter import Emitter
from fpgasim.dataflow.instructions import (
    GROUP_ACT,
    GROUP_WEIGHT,
    INSTR_DTYPE,
    LD,
    MAX_WAIT,
    MISC,
    MM,
    MV,
    PORT_ACT_LOAD,
    PORT_ACT_STORE,
    PORT_WEIGHT_LOAD,
    ST,
    TRAFFIC_ACT,
    TRAFFIC_NONE,
    TRAFFIC_STORE,
    TRAFFIC_WEIGHT,
    UNIT_LD,
    UNIT_MPE,
    UNIT_SFU,
    UNIT_ST,
)
from fpgasim.dataflow.lowerings.study.machine import Machine, xfer_cycles
from fpgasim.dataflow.lowerings.study.plan import Plan


class PlanEmitter(Emitter):
    """The study's rows of one program: plans to loads, tiles, SFU passes and stores, with
    their buffer space, channel-group ports and waits; one instance per lowering call."""

    ROW = INSTR_DTYPE

    def __init__(self, mach: Machine) -> None:
        super().__init__()
        self.mach = mach
        self.layer = -1  # layer field of the rows being emitted (-1 head, blocks = tail)
        self.done: dict[int, int] = {}  # op position -> row that publishes its output
        self.last_mpe: dict[int, int] = {}  # op position -> its last MPE row

    # ---------------------------------------------------------------- rows

    def instr(
        self,
        opcode: int,
        unit: int,
        op: int,
        cycles: int,
        *,
        nbytes: int = 0,
        work: int = 0,
        traffic: int = TRAFFIC_NONE,
        group: int = -1,
        chan: int = -1,
        acq: tuple[int, int] = (-1, 0),
        rel: tuple[int, int] = (-1, 0),
        wait: tuple[int, ...] = (),
    ) -> int:
        """Append one `Program` row of the current layer; returns its index."""
        # ideal mode is the analytic's perfect overlap: no row waits for another
        waits = () if self.mach.ideal else tuple(w for w in wait if w >= 0)
        if len(waits) > MAX_WAIT:
            raise ValueError(f"an instruction waits on {len(waits)} > {MAX_WAIT} rows")
        if cycles < 1:
            raise ValueError(f"instruction of op {op} has {cycles} cycles; every row needs >= 1")
        waits = waits + (-1,) * (MAX_WAIT - len(waits))
        return self.row(
            (opcode, unit, op, self.layer, cycles, nbytes, work, traffic, group, chan)
            + (acq[0], acq[1], rel[0], rel[1], waits)
        )

    def load(self, op: int, nbytes: int, traffic: int, buf: int, wait: tuple[int, ...]) -> int:
        """An LD row of `nbytes` on the weight or activation group (by `traffic`), taking
        `nbytes` of buffer `buf` (if any) unless ideal; returns its index."""
        m = self.mach
        weight = traffic == TRAFFIC_WEIGHT
        rate = m.weight_bytes_per_cycle if weight else m.load_bytes_per_cycle
        group = GROUP_WEIGHT if weight else GROUP_ACT
        acq = (buf, nbytes) if (buf >= 0 and not m.ideal) else (-1, 0)
        return self.instr(
            LD,
            UNIT_LD,
            op,
            xfer_cycles(nbytes, rate),
            nbytes=nbytes,
            traffic=traffic,
            group=group,
            chan=PORT_WEIGHT_LOAD if weight else PORT_ACT_LOAD,
            acq=acq,
            wait=wait,
        )

    def store(self, op: int, nbytes: int, wait: tuple[int, ...]) -> int:
        """An ST row of `nbytes` on the activation group's store rate; returns its index."""
        m = self.mach
        return self.instr(
            ST,
            UNIT_ST,
            op,
            xfer_cycles(nbytes, m.store_bytes_per_cycle),
            nbytes=nbytes,
            traffic=TRAFFIC_STORE,
            group=GROUP_ACT,
            chan=PORT_ACT_STORE,
            wait=wait,
        )

    # ---------------------------------------------------------------- emission

    def emit_loads(
        self, plan: Plan, inputs: tuple[int, ...], items: range, rows: list[int]
    ) -> None:
        """Streamed loads `items` of the plan, appended to `rows` (its row per item)."""
        for k in items:
            wait = inputs if plan.stream_waits[k] else ()
            nbytes = plan.stream_bytes[k]
            rows.append(
                self.load(plan.index, nbytes, plan.stream_traffic, plan.stream_buffer, wait)
            )

    def prefetch_count(self, plan: Plan) -> int:
        """Streamed loads issued ahead of the op's body: up to prefetch_depth, none when a
        load waits for a producer (`Plan.waits_for_inputs`)."""
        return 0 if plan.waits_for_inputs else min(self.mach.depth, len(plan.stream_bytes))

    def emit_body(self, plan: Plan, inputs: tuple[int, ...], streams: list[int]) -> None:
        """Operand load, remaining streamed loads, then per step MPE -> SFU -> store."""
        op = plan.index
        m = self.mach
        if plan.waits_for_inputs:  # loads that need no input go ahead of the waiting ones
            lead = plan.stream_waits.index(True)
            self.emit_loads(plan, inputs, range(len(streams), lead), streams)
        operand = -1
        if plan.operand_bytes > 0:
            operand = self.load(op, plan.operand_bytes, TRAFFIC_ACT, -1, inputs)
        self.emit_loads(plan, inputs, range(len(streams), len(plan.stream_bytes)), streams)
        gate = (operand,) if operand >= 0 else inputs
        last_mpe = last_out = -1
        for step in plan.steps:
            prev = gate if (step.needs_operand or operand < 0) else ()
            if step.mpe_cycles > 0:
                wait = prev + tuple(streams[k] for k in step.streams)
                rel = (-1, 0)
                if step.streams and not m.ideal:
                    freed = sum(plan.stream_bytes[k] for k in step.streams)
                    rel = (plan.stream_buffer, freed)
                opcode = MV if m.is_mv(step.macs, step.mpe_cycles) else MM
                last_mpe = self.instr(
                    opcode, UNIT_MPE, op, step.mpe_cycles, work=step.macs, rel=rel, wait=wait
                )
                prev = (last_mpe,)
            if step.sfu_elements > 0 and not m.ideal:
                cycles = m.sfu_cycles(step.sfu_elements)
                prev = (self.instr(MISC, UNIT_SFU, op, cycles, work=step.sfu_elements, wait=prev),)
            if step.store_bytes > 0:
                prev = (self.store(op, step.store_bytes, prev),)
            if prev:
                last_out = prev[0]
        self.done[op] = last_out if last_out >= 0 else (operand if operand >= 0 else -1)
        self.last_mpe[op] = last_mpe
