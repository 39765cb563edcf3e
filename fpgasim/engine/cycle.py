"""Shared machinery of the cycle-level engines (`event`, `fast`).

Execution semantics (both engines implement exactly this; time is integer cycles):
each unit (LD, ST, MPE, SFU) runs its queue in program order. At every cycle t at which
something finishes, first all instructions finishing at t complete (they free the buffer
space they hold; order among them does not matter), then the idle units try to start
their next instruction in the fixed order LD, ST, MPE, SFU (the same-cycle tie-break).
An instruction starts when every row it waits on has finished and its buffer has room; it
then holds the buffer space and finishes `cycles` later (always >= 1, so nothing started
at t finishes at t). Channel-group ports are not arbitrated: each serves one unit
(`check_runnable`), so a transfer never finds its port held.

Windowing: every layer block is identical, so an engine may simulate W < N layers and
extrapolate, but only after proving the steady state: at the cycle t_m at which the MPE
starts layer m, the machine state is each unit's position in its queue relative to layer m
plus its remaining busy cycles (completed instructions are exactly the queue prefixes, so
buffer levels follow; levels are compared too). If the state at t_{a+1}
equals the state at t_a, with every position inside the layer blocks, the future is the
same sequence shifted by one layer and delta = t_{a+1} - t_a cycles, hence
T(N) = T(W) + (N - W) * delta exactly. Where no state repeats (a unit running ahead without
bound), `affine_proof` proves how far each row moves per layer instead; failing both, the
engine simulates all N layers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from fpgasim.bounded import BoundedCache, declare_cache
from fpgasim.config.board import Board
from fpgasim.config.schema import DrafterSchema, TargetModel
from fpgasim.dataflow.instructions import (
    GROUP_NAMES,
    N_BUFFERS,
    OPCODE_NAMES,
    PORT_NAMES,
    ROLE_COMPUTE,
    ROLE_LOAD,
    ROLE_SFU,
    ROLE_STORE,
    SYS,
    UNIT_MPE,
    Executable,
    Program,
    full,
    part_key,
    rows_use_ports,
    totals,
    window,
)
from fpgasim.dataflow.lowerings.registry import lower, lower_bound, lowering_of
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.timing import CountOutOfRange, Timing, bound_of, seconds_of
from fpgasim.errors import InputError
from fpgasim.fileio import json_text

#: The largest token mask a lowering that reads it (`reads_tree_mask`) builds for one pass:
#: tokens x tokens booleans (and a padded copy of them), so 32,768 tokens at most.
MAX_MASK_BYTES = 1 << 30


def check_mask_tokens(tokens: int, board: Board, field: str, value: object) -> None:
    """Refuse, before lowering, a pass of `tokens` tokens under a token mask (a tree, a
    causal prompt) whose mask would outgrow `MAX_MASK_BYTES` on this board's lowering;
    `field` and `value` name the input that sized it."""
    if tokens * tokens <= MAX_MASK_BYTES or not lowering_of(board).reads_tree_mask:
        return
    raise InputError(
        field,
        value,
        f"at most {math.isqrt(MAX_MASK_BYTES)} tokens under a token mask on the cycle engines "
        f"(board {board.name}): the mask of {tokens} x {tokens} tokens would take "
        f"{tokens * tokens / 2**30:.1f} GiB against a budget of {MAX_MASK_BYTES / 2**30:g} "
        "GiB; use `engine` analytic (no masks) or fewer tokens",
    )


#: The most instructions a timeline of every row (`CycleEngine.timeline`, a `--trace`) may
#: hold: a trace event takes about 1.5 KB until it is written (a 2,047,108-row verify pass:
#: 3.3 GB), so 1,000,000 rows stay under 2 GB
MAX_TRACE_ROWS = 1_000_000


def check_trace_rows(rows: int, board: Board, what: str) -> None:
    """Refuse, before the work, a timeline of more than `MAX_TRACE_ROWS` instructions."""
    if rows > MAX_TRACE_ROWS:
        raise InputError(
            "trace",
            rows,
            f"a pass of at most {MAX_TRACE_ROWS} instructions to trace (every instruction is "
            f"an event held in memory until the trace is written): {what} on board "
            f"{board.name} has {rows}; trace fewer tokens or a shorter context",
        )


def check_pass_masks(spec: PassSpec, board: Board) -> None:
    """`check_mask_tokens` for a pass: a prefill's causal mask names the prompt, a tree's
    the verification length."""
    if spec.tree_parents is not None:
        field = "prompt_len" if spec.phase == "prefill" else "verify_len"
        check_mask_tokens(len(spec.tree_parents), board, field, spec.tokens)


class DeadlockError(RuntimeError):
    """The program cannot make progress (a lowering bug: waits or buffers form a cycle)."""


@dataclass(frozen=True)
class Timeline:
    """Start and finish cycle of every instruction of a simulated program."""

    program: Program
    start: np.ndarray
    finish: np.ndarray

    @property
    def makespan(self) -> int:
        """The program's length in ticks: its last row's finish."""
        return int(self.finish.max()) if len(self.finish) else 0


def check_runnable(program: Program) -> None:
    """Engines accept only programs whose rows all take at least one cycle (zero in
    tick-based programs without ports and buffers: FlightLLM's 0-byte concat store, safe
    since starts then depend on waits and unit order only) and whose channel-group ports
    each serve one unit (so no port is ever contended: see event.py)."""
    check_cycles(program, least_cycles(program))


def check_cycles(program: Program, least: int, repeats: int = 1) -> None:
    """Every row of `program` takes at least `least` (`least_cycles`) of its time units,
    and its durations (its layer block's `repeats` times over) stay within `MAX_TICKS`."""
    ins = program.instrs
    if len(ins) and int(ins["cycles"].min()) < least:
        raise ValueError(f"every instruction must take >= {least} cycle(s)")
    check_time_range(program, repeats)


#: The most ticks a program's durations may sum to: a schedule's makespan is at most that
#: sum (some unit is always busy until the end), so every start and finish time an engine
#: keeps (int64 in `fast`) stays below it, with room for the layers a window stands for.
MAX_TICKS = 1 << 62


def check_time_range(program: Program, repeats: int = 1) -> None:
    """CountOutOfRange when the durations of `program`, with its last layer block counted
    `repeats` times, reach `MAX_TICKS`: its times could not be kept exact."""
    cycles = program.instrs["cycles"]
    total = float(cycles.sum(dtype=np.float64))  # a float: an int64 sum could wrap
    if repeats > 1:
        first = program.head_len + (program.layers - 1) * program.layer_len
        block = cycles[first : first + program.layer_len]
        total += (repeats - 1) * float(block.sum(dtype=np.float64))
    if total >= MAX_TICKS:
        raise CountOutOfRange("summed instruction cycles", total / program.ticks_per_cycle)


def least_cycles(program: Program) -> int:
    """The shortest duration `check_runnable` accepts in `program`, after checking its
    ports: both read every column but the durations (programs that differ only in those,
    a part priced for another board, share them)."""
    ins = program.instrs
    if not len(ins):
        return 0
    shared = bool((ins["chan"] >= 0).any() or (ins["acq_buf"] >= 0).any())
    least = 1 if shared or program.ticks_per_cycle == 1 else 0
    chan = ins["chan"]
    used = chan >= 0
    # the distinct (port, unit) pairs, as one number each: a port in two pairs is shared
    pairs = np.unique(chan[used].astype(np.int64) * 256 + ins["unit"][used])
    ports = pairs // 256
    shared_ports = ports[1:][ports[1:] == ports[:-1]]
    if len(shared_ports):
        port = int(shared_ports.min())
        names = [program.unit_names[u] for u in pairs[ports == port] % 256]
        raise ValueError(f"port {PORT_NAMES[port]!r} is used by units {names}; give one")
    return least


# --------------------------------------------------------------------------- steady state


def _snapshot(
    program: Program,
    sched: Timeline,
    queues: list[np.ndarray],
    counts: np.ndarray,
    m: int,
    anchor: int,
) -> tuple[int, tuple, tuple, int, int] | None:
    """(t_m, relative unit state, buffer levels, lowest and highest layer of any position);
    t_m is the cycle at which unit `anchor` (a compute unit) starts layer m."""
    head, per = counts[0], counts[1]
    t = int(sched.start[queues[anchor][head[anchor] + m * per[anchor]]])
    state, lo, hi = [], program.layers, -1
    for u in range(program.n_units):
        q = queues[u]
        if len(q) == 0:
            continue
        k = int(np.searchsorted(sched.start[q], t, side="right"))
        busy = k > 0 and int(sched.finish[q[k - 1]]) > t
        pc = k - 1 if busy else k
        rem = int(sched.finish[q[k - 1]]) - t if busy else 0
        if per[u] == 0:  # no rows in a layer block: its head and tail rows, same position
            state.append((pc - int(head[u]), rem))
            continue
        layer = (pc - int(head[u])) // int(per[u]) if pc >= head[u] else -1
        lo, hi = min(lo, layer), max(hi, layer)
        state.append((pc - int(head[u]) - m * int(per[u]), rem))
    ins = program.instrs
    levels = []
    for b in range(N_BUFFERS):
        got = ins["acq_bytes"][(ins["acq_buf"] == b) & (sched.start <= t)].sum()
        freed = ins["rel_bytes"][(ins["rel_buf"] == b) & (sched.finish <= t)].sum()
        levels.append(int(got - freed))
    return t, tuple(state), tuple(levels), lo, hi


def steady_state(sched: Timeline, anchor: int = UNIT_MPE) -> tuple[int, int] | None:
    """(a, delta) if the state at layer a+1 equals the state at layer a shifted, else None;
    layers are located by when unit `anchor` (a compute unit) starts them."""
    program = sched.program
    if program.layers < 3:
        return None
    queues = program.unit_queues()
    counts = program.region_counts()
    previous = None
    for m in range(1, program.layers):
        snap = _snapshot(program, sched, queues, counts, m, anchor)
        if snap is None:
            return None
        if previous is not None:
            t0, s0, l0, lo0, _ = previous
            t1, s1, l1, _, hi1 = snap
            if lo0 >= 1 and hi1 <= program.layers - 1 and s0 == s1 and l0 == l1:
                return m - 1, t1 - t0
        previous = snap
    return None


#: (shift per block, latest finish in the window) pairs of a proven window: a program of
#: N >= W blocks ends at max(finish + (N - W) * shift) over the pairs
Extrapolation = tuple[tuple[int, int], ...]


def affine_proof(sched: Timeline) -> Extrapolation | None:
    """How a window's rows move with every block added, proven, or None (docs/engines.md,
    "Windowing without a repeating state").

    Without buffers a row starts at the latest finish among its inputs, its unit's previous
    row and the rows it waits on (the engines' rule, zero-tick rows included: see the module
    doc). Every input of a row of the last block precedes it and lies in that block, the
    one before, or the head (else no proof). Let s_r be how much row r moved from the block
    before the last to the last (head rows: 0). If every input of r moved by at most s_r
    and one that moved by s_r is among the latest, then in the next block r's latest input
    is again that one, moved by s_r, and r moves by s_r again: by induction over the
    blocks, in program order, every row of every later block keeps its shift. A tail row,
    fed by the last blocks, moves by its latest input's shift per block added on the same
    condition. So a part whose loads run ahead of its array without bound (no repeating
    state: `steady_state` never proves it) is extrapolated exactly: its end is the latest
    of each row's finish plus its shift times the blocks added."""
    program = sched.program
    ins = program.instrs
    w, h, lam = program.layers, program.head_len, program.layer_len
    if w < 3 or not len(ins) or (ins["acq_buf"] >= 0).any() or (ins["rel_buf"] >= 0).any():
        return None
    start = sched.start.astype(np.int64)
    finish = sched.finish.astype(np.int64)
    last = h + (w - 1) * lam  # the last block's first row
    shift = np.zeros(len(ins), np.int64)
    moved = finish[last:last + lam] - finish[last - lam:last]
    shift[last - lam:last] = moved
    shift[last:last + lam] = moved
    previous = _previous_on_unit(program)
    # each row's inputs from the last block on: the rows it waits on, its unit's previous
    inputs = np.concatenate([ins["wait"][last:].astype(np.int64),
                             previous[last:, None]], axis=1)
    valid = inputs >= 0
    rows = np.arange(last, len(ins))[:, None]
    if not valid.any(axis=1).all() or (valid & (inputs >= rows)).any():
        return None  # a unit's first row, or an input after its row: not this recurrence
    if (valid & (inputs >= h) & (inputs < last - lam)).any():
        return None  # an input two blocks back: its shift is not measured here
    at = np.where(valid, inputs, 0)
    done = np.where(valid, finish[at], -1)
    latest = done.max(axis=1)
    if (latest != start[last:]).any():
        return None
    # the last block's rows at once (their inputs' shifts are known), the tail's in order
    # (a tail row moves as its latest input, maybe an earlier tail row)
    for r in range(lam, len(inputs)):
        shift[last + r] = shift[at[r][valid[r]]].max()
    moves = np.where(valid, shift[at], np.iinfo(np.int64).min)
    own = shift[last:, None]
    if (moves > own).any() or not ((done == latest[:, None]) & (moves == own)).any(axis=1).all():
        return None
    # the end: the head's rows and the last block's and the tail's (earlier blocks' rows
    # are the last block's, earlier)
    ends: dict[int, int] = {}
    for lo, hi in ((0, h), (last, len(ins))):
        for s_r, f in zip(shift[lo:hi].tolist(), finish[lo:hi].tolist(), strict=True):
            if f > ends.get(s_r, -1):
                ends[s_r] = f
    return tuple(sorted(ends.items()))


def _previous_on_unit(program: Program) -> np.ndarray:
    """Each row's previous row in its unit's queue (-1 for a unit's first)."""
    previous = np.full(len(program.instrs), -1, np.int64)
    for queue in program.unit_queues():
        previous[queue[1:]] = queue[:-1]
    return previous


def extrapolated(proof: Extrapolation, blocks_added: int) -> int:
    """The end of a proven window's program with `blocks_added` more blocks."""
    return max(f + blocks_added * s_r for s_r, f in proof)


def _proof(sched: Timeline, anchor: int) -> Extrapolation | None:
    """A simulated window's proof: its repeating state (`steady_state`: the end moves one
    period a block), else every row's proven shift (`affine_proof`), else None."""
    state = steady_state(sched, anchor)
    if state is not None:
        return ((state[1], sched.makespan),)
    return affine_proof(sched)


# --------------------------------------------------------------------------- engine base


#: what a cycle engine keeps: the makespan of each part, the window proof of each template
PART_TICKS = declare_cache(
    "engine.part_ticks", owner="fpgasim.engine.cycle", lifetime="one engine",
    keys="a part's content (`part_key`: units, durations, waits)", budget=1_000_000,
    why="a FlightLLM pass is a sum of barrier-delimited parts and the linear-layer parts "
    "recur across contexts: 3.6 ms per pass with it, 4.0-4.2 ms without (56 passes, "
    "contexts 128-1023)")
WINDOW_PROOFS = declare_cache(
    "engine.window_proofs", owner="fpgasim.engine.cycle", lifetime="one engine",
    keys="a template part's content without its copy count", budget=100_000,
    why="the steady-state proof of a template depends on its blocks, not on how many "
    "copies a pass runs: found once for every count")


class CycleEngine:
    """Base of the instruction-level engines: lowering, windowing, Timing (passes are
    remembered by the pass service, fpgasim.step, not here)."""

    name = "cycle"
    version = "2"  # bump with any change to the lowering or the execution rules
    #: layer windows tried before simulating every layer
    window_layers: tuple[int, ...] = (4, 8)

    def __init__(self, window: bool = True, window_layers: tuple[int, ...] | None = None) -> None:
        self.window = window
        if window_layers is not None:
            self.window_layers = tuple(window_layers)
        #: makespan of each barrier-delimited part by content (FlightLLM programs repeat
        #: their parts within a pass and across passes: see `part_ticks`)
        self._parts: BoundedCache[int] = PART_TICKS.new()
        #: per template (its part key without the copy count): the window and the steady
        #: state proven on it, (window layers, window makespan, period), or None (none proven)
        self._windows: BoundedCache[tuple[int, int, int] | None] = WINDOW_PROOFS.new()

    # subclasses implement this
    def simulate(self, program: Program) -> Timeline:
        """Each row's start and finish (the engine's scheduler)."""
        raise NotImplementedError

    #: programs with more rows than this are windowed even when `window` is False
    max_full_rows = 2_000_000

    def pass_cycles(self, template: Program, anchor: int = UNIT_MPE,
                    windowed: bool | None = None) -> int:
        """Cycles of the whole pass, extrapolated from a window when the steady state is proven
        (layers located by compute unit `anchor`, see `steady_state`; `windowed` None: the
        engine's setting)."""
        n = template.total_layers
        huge = (
            len(template.instrs) + (n - template.layers) * template.layer_len > self.max_full_rows
        )
        if windowed is None:
            windowed = self.window
        if (windowed or huge) and template.layers == 2:
            for w in self.window_layers:
                if w >= n:
                    break
                sched = self.simulate(window(template, w))
                proof = _proof(sched, anchor)
                if proof is not None:
                    return extrapolated(proof, n - w)
        return self.full_makespan(template)

    def full_makespan(self, template: Program) -> int:
        """Makespan of the pass with every layer simulated."""
        return self.simulate(full(template)).makespan

    def template_ticks(self, part: Program) -> int:
        """Makespan of a part whose rows are a template of identical blocks (`Program`):
        from a window of its blocks whose steady state is proven (`steady_state`: the state
        at block a + 1 is the state at block a shifted by the period, so every later block
        repeats it; or `affine_proof`: every row's shift per block is proven), the window's
        end extrapolated; the full expansion when no window proves it or the part has fewer
        blocks than the window. The proof depends on the template, not on its copy count,
        so it is found once for every count (`_windows`)."""
        template_key = part.facts.template_key if part.facts is not None else None
        key = template_key or part_key(part)
        proof = self._windows(key, lambda: self._window_proof(part))
        n = part.total_layers
        if proof is not None and n >= proof[0]:
            w, ends = proof
            return extrapolated(ends, n - w)
        return self.full_makespan(part)

    def _window_proof(self, part: Program) -> tuple[int, Extrapolation] | None:
        """(w, how the end moves per block added) of the first window in `window_layers`
        whose steady state is proven, or None."""
        anchor = _anchor(part)
        wide = replace(part, total_layers=max(part.total_layers, max(self.window_layers)),
                       facts=None)
        for w in self.window_layers:
            sched = self.simulate(window(wide, w))
            proof = _proof(sched, anchor)
            if proof is not None:
                return w, proof
        return None

    def part_ticks(self, part: Program) -> int:
        """Makespan of one barrier-delimited part (cached by content across passes)."""
        return self._parts(part_key(part), lambda: self._part_ticks(part))

    def _part_ticks(self, part: Program) -> int:
        """`part_ticks` computed."""
        if part.total_layers > part.layers:  # a template of identical blocks
            return self.template_ticks(part)
        sched = self.simulate(part)
        ticks = sched.makespan
        last = len(part.instrs) - 1
        if part.instrs["opcode"][last] != SYS or int(sched.finish[last]) != ticks:
            raise AssertionError(f"{part.label}: the final barrier is not the last to finish")
        return ticks

    def executable_ticks(self, prog: Executable) -> int:
        """Time of a pass in its program's time unit.

        A pipelined pass (`flightllm_cluster.Pipelined`): its stage occupancy's end, each
        stage's parts summed. One part: `pass_cycles` (windowed when the steady state is
        proven). Several parts:
        the sum of their makespans, exact, not an extrapolation: each part starts when the
        previous part's barrier (SYS) finishes and ends with its own (tests compare it with
        one simulation of `prog.concatenate()` on both engines).
        """
        schedule = getattr(prog, "schedule", None)  # a pipeline's stages overlap
        if schedule is not None:
            return schedule(self.part_ticks).makespan_ticks
        if len(prog.order) == 1:
            return self.pass_cycles(prog.parts[0], prog.units_of(ROLE_COMPUTE)[0])
        return self._parts_ticks(prog)

    def _parts_ticks(self, prog: Executable) -> int:
        """The sum of the makespans of an executable's parts, each as often as it runs."""
        return sum(c * self.part_ticks(p) for p, c in zip(prog.parts, prog.counts(), strict=True))

    def run_pass(self, spec: PassSpec, board: Board, model: TargetModel, drafter=None) -> Timing:
        """Timing of one forward pass."""
        return self.run_pass_detail(spec, board, model, drafter)[0]

    def run_pass_detail(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter=None
    ) -> tuple[Timing, list[dict]]:
        """Timing of one forward pass and its per-unit and per-channel-group rows."""
        prog = self._lower(spec, board, model, drafter)
        return _timing(prog, self.executable_ticks(prog), board)

    @staticmethod
    def _lower(
        spec: PassSpec, board: Board, model: TargetModel, drafter: DrafterSchema | None
    ) -> Executable:
        """The pass lowered, its token masks checked against their budget first."""
        check_pass_masks(spec, board)
        return lower(spec, board, model, drafter)

    def lower_bound_s(
        self, spec: PassSpec, board: Board, model: TargetModel,
        drafter: DrafterSchema | None = None,
    ) -> float:
        """Seconds the pass takes at least, at a fraction of its cost: the makespans of the
        barrier parts its lowering's bound holds (`registry.lower_bound`), summed as
        `executable_ticks` sums the pass's parts; 0.0 when the lowering gives none. Every
        part's makespan is >= 0, so a sum over some of the pass's parts is at most the
        pass's (docs/engines.md, "Lower bounds")."""
        prog = lower_bound(spec, board, model, drafter)
        if prog is None:
            return 0.0
        return seconds_of(ticks_to_cycles(self._parts_ticks(prog), prog.ticks_per_cycle),
                          board.clock_hz, board.duration_divisor)

    def check_timeline(self, spec: PassSpec, board: Board, model: TargetModel,
                       drafter=None) -> None:
        """Refuse a pass whose timeline would hold more than `MAX_TRACE_ROWS` rows (the
        lowering is cached: the timing that follows reuses it)."""
        prog = self._lower(spec, board, model, drafter)
        what = "verify" if spec.kind == "target" else f"{spec.kind} draft"
        if spec.phase == "prefill":
            what = "prefill"
        check_trace_rows(prog.rows, board, f"the {what} pass of {spec.tokens} token(s) at "
                         f"context {spec.context}")

    def timeline(self, spec: PassSpec, board: Board, model: TargetModel, drafter=None) -> Timeline:
        """Every instruction's start/finish of one pass (all layers simulated)."""
        self.check_timeline(spec, board, model, drafter)
        prog = self._lower(spec, board, model, drafter)
        return self.simulate(prog.concatenate())

    def trace_events(self, spec: PassSpec, board: Board, model: TargetModel, drafter=None) -> dict:
        """Chrome trace-event JSON object of one pass (one lane per unit)."""
        timeline = self.timeline(spec, board, model, drafter)
        return chrome_trace(timeline, board.clock_mhz * board.duration_divisor)

    def trace(
        self, spec: PassSpec, board: Board, model: TargetModel, path: Path, drafter=None
    ) -> None:
        """Write the Chrome trace of one pass to `path` (opens in Perfetto)."""
        events = self.trace_events(spec, board, model, drafter)
        Path(path).write_text(json_text(events, compact=True))


def _anchor(template: Program) -> int:
    """The unit whose rows locate a template's layer blocks: the unit with the most rows in
    a block (every block has them; FlightLLM's row groups: MV, tiles: MM)."""
    block = template.instrs["unit"][template.head_len : template.head_len + template.layer_len]
    return int(np.bincount(block, minlength=template.n_units).argmax())


def ticks_to_cycles(ticks: int, ticks_per_cycle: int) -> float:
    """Clock cycles of a tick count (exact binary fractions on FlightLLM's programs)."""
    return ticks if ticks_per_cycle == 1 else ticks / ticks_per_cycle


def executable_totals(prog: Executable) -> dict[str, int]:
    """`instructions.totals` of every part times how often it runs (no simulation)."""
    out: dict[str, int] = {}
    for part, count in zip(prog.parts, prog.counts(), strict=True):
        for k, v in totals(part, prog.unit_roles).items():
            out[k] = out.get(k, 0) + count * v
    return out


def _timing(prog: Executable, ticks: int, board: Board) -> tuple[Timing, list[dict]]:
    """Timing and per-unit rows of a pass, every total taken by unit role.

    Tick-based programs (ticks_per_cycle > 1, FlightLLM's) report fractional cycles: ticks /
    ticks_per_cycle, exact binary fractions. Bytes are the bytes the rows move (FlightLLM's
    weight loads: the recipe's one weight size, int4 with q and k at 0.7, where the
    instructions carry int8 operand bytes; docs/hardware.md, "One weight size").
    """
    tot = executable_totals(prog)
    tpc = prog.ticks_per_cycle

    def cycles_of(value: int) -> float:
        return ticks_to_cycles(value, tpc)

    busy = {name: cycles_of(tot[f"busy_{name}"]) for name in prog.unit_names}

    def role_busy(role: str) -> float:
        return sum(busy[prog.unit_names[u]] for u in prog.units_of(role))

    cycles = cycles_of(ticks)
    ld, st = role_busy(ROLE_LOAD), role_busy(ROLE_STORE)
    comp, sfu = role_busy(ROLE_COMPUTE), role_busy(ROLE_SFU)
    bound = bound_of(ld, st, comp)
    if sfu > max(ld, st, comp):
        bound = "sfu"
    timing = Timing(
        cycles=cycles,
        clock_hz=board.clock_hz,
        ld_cycles=ld,
        st_cycles=st,
        compute_cycles=comp,
        sfu_cycles=sfu,
        weight_bytes=tot["weight_bytes"],
        act_load_bytes=tot["act_load_bytes"],
        act_store_bytes=tot["act_store_bytes"],
        kv_bytes=tot["kv_bytes"],
        bound=bound,
        unit_busy_cycles=busy,
        macs=tot["macs"],
        mv_cycles=cycles_of(tot["mv_cycles"]),
        mv_macs=tot["mv_macs"],
        duration_divisor=board.duration_divisor,
    )

    # a pipeline's rows run on its stages' cards: a unit's busy time is theirs, summed
    cards_time = cycles * getattr(prog, "stages", 1)

    def row(resource: str, busy_cycles: float, nbytes: int | None, work: int | None) -> dict:
        """work: MACs on compute units, element-passes on special-function units."""
        util = busy_cycles / cards_time if cycles else 0.0
        return {
            "resource": resource,
            "busy_cycles": busy_cycles,
            "utilisation": util,
            "bytes": nbytes,
            "work": work,
        }

    rows = []
    for name, role in zip(prog.unit_names, prog.unit_roles, strict=True):
        moves = role in (ROLE_LOAD, ROLE_STORE)
        works = role in (ROLE_COMPUTE, ROLE_SFU)
        nbytes = tot[f"bytes_{name}"] if moves else None
        rows.append(row(name, busy[name], nbytes, tot[f"work_{name}"] if works else None))
    if _uses_ports(prog):
        rows += [
            row(f"{GROUP_NAMES[0]} group LD", cycles_of(tot["weight_load_cycles"]),
                tot["weight_bytes"], None),
            row(f"{GROUP_NAMES[1]} group LD", cycles_of(tot["act_load_cycles"]),
                tot["act_load_bytes"], None),
            row(f"{GROUP_NAMES[1]} group ST", st, tot["act_store_bytes"], None),
        ]
    return timing, rows


def _uses_ports(prog: Executable) -> bool:
    """Whether the program's transfers use channel-group ports (per-group rows then)."""
    return any(_part_uses_ports(part) for part in prog.parts)


def _part_uses_ports(part: Program) -> bool:
    """Whether one part's transfers use channel-group ports (the lowering's fact, else read
    from the rows)."""
    if part.facts is not None:
        return part.facts.uses_ports
    return rows_use_ports(part.instrs)


# --------------------------------------------------------------------------- trace


def chrome_trace(sched: Timeline, clock_mhz: float) -> dict:
    """Chrome trace-event object: one thread per unit, an X event per instruction (us).

    `clock_mhz` is the clock times the board's duration divisor; a tick-based program's
    times are divided by its ticks per cycle as well."""
    program = sched.program
    ins = program.instrs
    pid = 1
    events: list[dict] = [
        {"name": "process_name", "ph": "M", "pid": pid, "args": {"name": program.label}},
    ]
    for u, name in enumerate(program.unit_names):
        events.append(
            {"name": "thread_name", "ph": "M", "pid": pid, "tid": u, "args": {"name": name}}
        )
        events.append(
            {
                "name": "thread_sort_index",
                "ph": "M",
                "pid": pid,
                "tid": u,
                "args": {"sort_index": u},
            }
        )
    scale = 1.0 / (clock_mhz * program.ticks_per_cycle)
    tpc = program.ticks_per_cycle
    last = program.layers
    for i in range(len(ins)):
        r = ins[i]
        layer = int(r["layer"])
        where = "head" if layer < 0 else ("tail" if layer >= last else f"L{layer}")
        opcode = OPCODE_NAMES[int(r["opcode"])]
        events.append(
            {
                "name": f"{opcode} {program.op_names[int(r['op'])]}",
                "cat": opcode,
                "ph": "X",
                "pid": pid,
                "tid": int(r["unit"]),
                "ts": round(float(sched.start[i]) * scale, 6),
                "dur": round(float(r["cycles"]) * scale, 6),
                "args": {
                    "layer": where,
                    "cycles": int(r["cycles"]) / tpc if tpc > 1 else int(r["cycles"]),
                    "start_cycle": int(sched.start[i]) / tpc if tpc > 1 else int(sched.start[i]),
                    "bytes": int(r["nbytes"]),
                    "work": int(r["work"]),
                },
            }
        )
    events.extend(_buffer_counters(sched, scale, pid))
    return {"traceEvents": events, "displayTimeUnit": "ns"}


def _buffer_counters(sched: Timeline, scale: float, pid: int) -> list[dict]:
    """Counter tracks of on-chip buffer occupancy (bytes) over time."""
    ins = sched.program.instrs
    out = []
    for b, name in enumerate(("weight buffer", "activation buffer")):
        acq = ins["acq_buf"] == b
        rel = ins["rel_buf"] == b
        if not acq.any():
            continue
        times = np.concatenate([sched.start[acq], sched.finish[rel]])
        deltas = np.concatenate([ins["acq_bytes"][acq], -ins["rel_bytes"][rel]])
        order = np.lexsort((deltas, times))  # frees before takes within a cycle
        times, level = times[order], np.cumsum(deltas[order])
        keep = np.append(times[1:] != times[:-1], True)
        for t, v in zip(times[keep], level[keep], strict=True):
            out.append(
                {
                    "name": name,
                    "ph": "C",
                    "pid": pid,
                    "ts": round(float(t) * scale, 6),
                    "args": {"bytes": int(v)},
                }
            )
    return out
