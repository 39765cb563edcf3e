"""The `event` engine: a discrete-event list scheduler over the units' in-order queues.

`now` is in cycles (integers). The event list holds two kinds of events: an instruction
completing, and a unit trying to start its next instruction. Completions at a cycle are
processed before start attempts (priority COMPLETE < PHASE), and start attempts in unit
order LD, ST, MPE, SFU (priority PHASE + unit index): the same-cycle tie-break of
`fpgasim.engine.cycle`, independent of the order in which events were created.

An instruction starts when every row it waits on has finished and its on-chip buffer has
room for the bytes it takes (buffers are byte counters, bounded in realistic mode). A unit
that cannot start is parked and retried at the next completion. Channel-group ports are not
arbitrated: each port has exactly one in-order unit (`check_runnable`), so a transfer never
finds its port busy; `stall_counts` measures this on real programs (docs/engines.md).
"""

from __future__ import annotations

import heapq

import numpy as np

from fpgasim.dataflow.instructions import N_BUFFERS, Program
from fpgasim.engine.cycle import CycleEngine, DeadlockError, Timeline, check_runnable

COMPLETE = 0  # priority of instruction completions
PHASE = 10  # priority of start attempts: PHASE + unit index

#: why a start attempt failed (the first reason found, in this order)
STALL_KINDS = ("dependency", "buffer", "port")


class _Run:
    """State of one simulation: the event list, unit positions, buffer levels, stalls."""

    def __init__(self, program: Program, count_stalls: bool = False) -> None:
        ins = program.instrs
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
        self.capacity = [cap for cap in program.buffer_bytes[:N_BUFFERS]]
        self.level = [0] * N_BUFFERS
        self.queues = [q.tolist() for q in program.unit_queues()]
        self.n_units = program.n_units
        self.pos = [0] * self.n_units  # next queue position of each unit
        self.running = [-1] * self.n_units  # row each unit executes, -1 when idle
        self.parked: list[int] = []  # units whose next row could not start
        #: without buffer space to wait for (FlightLLM's programs), a unit blocked on a
        #: dependency is parked on that row alone and retried when it completes (same starts,
        #: far fewer retries); otherwise parked units retry at every completion
        self.by_row = not (ins["acq_buf"] >= 0).any()
        self.waiting: dict[int, list[int]] = {}
        self.events: list[tuple[int, int, int, int]] = []  # (cycle, priority, seq, unit/row)
        self.seq = 0
        self.now = 0
        self.count_stalls = count_stalls
        self.pending = -1
        self.stalls = dict.fromkeys(STALL_KINDS, 0)

    def push(self, cycle: int, priority: int, what: int) -> None:
        """Queue an event at `cycle`; equal (cycle, priority) pop in the order pushed."""
        heapq.heappush(self.events, (cycle, priority, self.seq, what))
        self.seq += 1

    def blocker(self, i: int) -> str | None:
        """Why row i cannot start now (None: it can)."""
        now, finish = self.now, self.finish
        for d in self.wait[i]:
            f = finish[d]
            if f < 0 or f > now:
                self.pending = d
                return "dependency"
        b = self.acq_buf[i]
        if b >= 0:
            cap = self.capacity[b]
            if cap >= 0 and self.level[b] + self.acq_bytes[i] > cap:
                return "buffer"
        if self.count_stalls:  # measured, not enforced: see the module docstring
            c = self.chan[i]
            if c >= 0 and any(r >= 0 and self.chan[r] == c for r in self.running):
                return "port"
        return None

    def attempt(self, unit: int) -> None:
        """Start the unit's next row if it can; otherwise park the unit."""
        if self.running[unit] >= 0 or self.pos[unit] >= len(self.queues[unit]):
            return
        i = self.queues[unit][self.pos[unit]]
        why = self.blocker(i)
        if why is not None:
            self.stalls[why] += 1
            if self.by_row and why == "dependency":
                self.waiting.setdefault(self.pending, []).append(unit)
            else:
                self.parked.append(unit)
            return
        self.start[i] = self.now
        self.finish[i] = self.now + self.cycles[i]
        self.running[unit] = i
        b = self.acq_buf[i]
        if b >= 0 and self.capacity[b] >= 0:
            self.level[b] += self.acq_bytes[i]
        self.push(self.finish[i], COMPLETE, unit)

    def complete(self, unit: int) -> None:
        """The unit's row finishes: free its buffer space; it and the parked units retry."""
        i = self.running[unit]
        b = self.rel_buf[i]
        if b >= 0 and self.capacity[b] >= 0:
            self.level[b] -= self.rel_bytes[i]
        self.running[unit] = -1
        self.pos[unit] += 1
        self.push(self.now, PHASE + unit, unit)
        for u in self.waiting.pop(i, ()):
            self.push(self.now, PHASE + u, u)
        for u in self.parked:
            self.push(self.now, PHASE + u, u)
        self.parked.clear()

    def run(self) -> None:
        """Every unit tries to start at cycle 0; then events are handled until none is left."""
        for u in range(self.n_units):
            self.push(0, PHASE + u, u)
        while self.events:
            cycle, priority, _, unit = heapq.heappop(self.events)
            self.now = cycle
            if priority == COMPLETE:
                self.complete(unit)
            else:
                self.attempt(unit)


class EventEngine(CycleEngine):
    """The reference simulator: a discrete-event list over the units' instruction queues."""

    name = "event"
    version = "2"  # 2: cheaper-of MV/MM for a few tokens, tree-aware masks

    def __init__(self, window: bool = True, window_layers: tuple[int, ...] | None = None) -> None:
        super().__init__(window=window, window_layers=window_layers)

    def simulate(self, program: Program) -> Timeline:
        """Run every instruction; start/finish cycle of each."""
        return _simulate(program, count_stalls=False)[0]


def _simulate(program: Program, count_stalls: bool) -> tuple[Timeline, dict[str, int]]:
    check_runnable(program)
    run = _Run(program, count_stalls)
    run.run()
    if any(f < 0 for f in run.finish):
        names = program.unit_names
        stuck = [names[u] for u in range(run.n_units) if run.pos[u] < len(run.queues[u])]
        raise DeadlockError(f"{program.label}: deadlock at cycle {run.now}; units waiting: {stuck}")
    timeline = Timeline(program, np.asarray(run.start, np.int64), np.asarray(run.finish, np.int64))
    return timeline, run.stalls


def stall_counts(program: Program) -> dict[str, int]:
    """Failed start attempts of a full run by reason: dependency, buffer, port.

    A port stall would be a transfer whose channel-group port another running transfer
    holds; the engine does not arbitrate ports, so a nonzero count would mean the program
    breaks the one-unit-per-port rule. The schedule is the same as `simulate`'s.
    """
    return _simulate(program, count_stalls=True)[1]
