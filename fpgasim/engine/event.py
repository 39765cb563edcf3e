"""The `event` engine: the instruction stream run on simpy, one process per hardware unit.

`env.now` is in cycles (integers). Each unit (LD, ST, MPE, SFU) is a process that executes
its queue in order; the load and store ports of the channel groups are `simpy.Resource`s
(capacity 1: one transfer at a time per port), on-chip buffers are `simpy.Container`s of
bytes (bounded in realistic mode).
The same-cycle tie-break of `fpgasim.engine.cycle` is enforced with event priorities:
completions (priority 0) are processed before start attempts, and start attempts run in unit
order (priority 10 + unit index), independent of event creation order.
"""

from __future__ import annotations

import numpy as np
import simpy

from fpgasim.dataflow.instructions import N_BUFFERS, N_PORTS, Program
from fpgasim.engine.cycle import CycleEngine, DeadlockError, Schedule, check_runnable

COMPLETE = 0  # priority of instruction completions
PHASE = 10  # priority of start attempts: PHASE + unit index


class _At(simpy.Event):
    """An event that fires `delay` cycles from now with an explicit same-cycle priority.

    Built like simpy's own Timeout, whose priority is fixed.
    """

    def __init__(self, env: simpy.Environment, delay: int, priority: int) -> None:
        super().__init__(env)
        self._ok = True
        self._value = None
        env.schedule(self, priority, delay)


class _Machine:
    """Shared state of one simulation: completion times, ports, buffers, blocked units."""

    def __init__(self, program: Program) -> None:
        ins = program.instrs
        self.env = simpy.Environment()
        self.cycles = ins["cycles"].tolist()
        self.chan = ins["chan"].tolist()
        self.acq_buf = ins["acq_buf"].tolist()
        self.acq_bytes = ins["acq_bytes"].tolist()
        self.rel_buf = ins["rel_buf"].tolist()
        self.rel_bytes = ins["rel_bytes"].tolist()
        self.wait = [tuple(w for w in row if w >= 0) for row in ins["wait"].tolist()]
        n = len(ins)
        self.start = [-1] * n
        self.finish = [-1] * n
        self.ports = [simpy.Resource(self.env, capacity=1) for _ in range(N_PORTS)]
        self.buffers: list[simpy.Container | None] = [
            simpy.Container(self.env, capacity=cap) if cap >= 0 else None
            for cap in program.buffer_bytes[:N_BUFFERS]
        ]
        self.requests: dict[int, simpy.resources.resource.Request] = {}
        self.blocked: list[tuple[int, simpy.Event]] = []
        #: no ports and no buffers (FlightLLM's programs): a start depends only on the unit
        #: and the rows waited on, so a blocked unit sleeps on one unfinished row's
        #: completion instead of retrying after every completion (same start times)
        self.simple = not (ins["chan"] >= 0).any() and not (ins["acq_buf"] >= 0).any()
        self.done: dict[int, simpy.Event] = {}
        queues = program.unit_queues()
        self.units = [_Unit(self, u, queues[u].tolist()) for u in range(program.n_units)]

    def ready(self, i: int) -> bool:
        now = self.env.now
        finish = self.finish
        for d in self.wait[i]:
            f = finish[d]
            if f < 0 or f > now:
                return False
        c = self.chan[i]
        if c >= 0 and self.ports[c].users:
            return False
        b = self.acq_buf[i]
        if b >= 0:
            buf = self.buffers[b]
            if buf is not None and buf.level + self.acq_bytes[i] > buf.capacity:
                return False
        return True

    def begin(self, i: int) -> None:
        now = self.env.now
        self.start[i] = now
        self.finish[i] = now + self.cycles[i]
        c = self.chan[i]
        if c >= 0:
            self.requests[i] = self.ports[c].request()  # free: granted at once
        b = self.acq_buf[i]
        if b >= 0 and self.buffers[b] is not None:
            self.buffers[b].put(self.acq_bytes[i])  # room checked: done at once

    def pending(self, i: int) -> int:
        """A row that row i waits on and that has not finished by now (-1: none)."""
        now = self.env.now
        for d in self.wait[i]:
            f = self.finish[d]
            if f < 0 or f > now:
                return d
        return -1

    def done_event(self, d: int) -> simpy.Event:
        """An event triggered when row d completes."""
        event = self.done.get(d)
        if event is None:
            event = self.done[d] = simpy.Event(self.env)
        return event

    def end_simple(self, i: int) -> None:
        event = self.done.pop(i, None)
        if event is not None:
            event.succeed()

    def end(self, i: int) -> None:
        c = self.chan[i]
        if c >= 0:
            self.ports[c].release(self.requests.pop(i))
        b = self.rel_buf[i]
        if b >= 0 and self.buffers[b] is not None:
            self.buffers[b].get(self.rel_bytes[i])
        for unit, event in self.blocked:  # something changed: blocked units retry this cycle
            event._ok = True
            event._value = None
            self.env.schedule(event, PHASE + unit, 0)
        self.blocked.clear()

    def block(self, unit: int) -> simpy.Event:
        event = simpy.Event(self.env)
        self.blocked.append((unit, event))
        return event


class _Unit:
    """One hardware unit: a simpy process executing its instruction queue in order."""

    def __init__(self, machine: _Machine, index: int, queue: list[int]) -> None:
        self.machine = machine
        self.index = index
        self.queue = queue
        self.process = machine.env.process(self.run())

    def run(self):
        m, env, u = self.machine, self.machine.env, self.index
        yield _At(env, 0, PHASE + u)
        if m.simple:
            yield from self.run_simple()
            return
        for i in self.queue:
            while not m.ready(i):
                yield m.block(u)
            m.begin(i)
            yield _At(env, m.cycles[i], COMPLETE)
            m.end(i)
            yield _At(env, 0, PHASE + u)


    def run_simple(self):
        """Programs without ports or buffers: start = max(unit free, rows waited on)."""
        m, env = self.machine, self.machine.env
        for i in self.queue:
            d = m.pending(i)
            while d >= 0:
                yield m.done_event(d)
                d = m.pending(i)
            m.begin(i)
            yield _At(env, m.cycles[i], COMPLETE)
            m.end_simple(i)


class EventEngine(CycleEngine):
    """The reference simulator: simpy processes per unit over the instruction stream."""

    name = "event"
    version = "2"  # 2: cheaper-of MV/MM for a few tokens, tree-aware masks

    def __init__(self, window: bool = True, window_layers: tuple[int, ...] | None = None) -> None:
        super().__init__(window=window, window_layers=window_layers)

    def simulate(self, program: Program) -> Schedule:
        """Run every instruction; start/finish cycle of each."""
        check_runnable(program)
        m = _Machine(program)
        m.env.run()
        if any(f < 0 for f in m.finish):
            stuck = [program.unit_names[u.index] for u in m.units if u.process.is_alive]
            raise DeadlockError(
                f"{program.label}: deadlock at cycle {m.env.now}; units waiting: {stuck}"
            )
        return Schedule(program, np.asarray(m.start, np.int64), np.asarray(m.finish, np.int64))
