"""Relocatable fragments: an op's rows emitted once, then copied into every program using them.

What the `PlanEmitter` writes for one call (an op's prefetched loads, or its body) depends
only on the op's plan, the board and how many rows it waits on, never on where those rows are:
the rows a call waits for (its inputs and its prefetched loads) enter only the `wait`
fields, and its own rows only as offsets from its first row. So a call is emitted once, on
row indices that tell the two apart (external rows 0..E-1, its own rows from E on), stored
with its waits coded, and a program is the concatenation of its fragments with every code
turned back into a row index (`Assembler.rows`): the same rows, bit for bit, as emitting
each call in place.

Plans and fragments of ops that do not read the KV cache (linears, the LM head, norms) are
cached per `Machine` (module level, bounded by `MAX_CACHED_ROWS`): a pass at a new context
replans only its attention. Attention's (QK^T, softmax, PV) depend on the context and the
tree, so no other pass uses them: they are cached for one lowering only, where the two
layer blocks of a template share them (and the collector never scans a cache of them).
The cache key of a plan is everything the plan functions read: the op's counts (not its
name: names appear only in errors, which are never cached), and for attention the head
geometry and the tree mask, for softmax the scores it exponentiates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from fpgasim.dataflow.emitter import check_program_rows
from fpgasim.dataflow.instructions import INSTR_DTYPE
from fpgasim.dataflow.lowerings.study.emit import PlanEmitter
from fpgasim.dataflow.lowerings.study.machine import Machine
from fpgasim.dataflow.lowerings.study.plan import Plan
from fpgasim.dataflow.ops import Op

#: rows kept in the fragment caches of all machines together before they are emptied
#: (about 71 bytes each: ~70 MB); the cache only saves time, results never depend on it
MAX_CACHED_ROWS = 1_000_000
#: wait code of an unused slot; codes >= 0 are own rows (offset from the fragment's first
#: row), codes <= -2 external rows (slot -code - 2 of the call's inputs + prefetched loads)
UNUSED = -1


class Fragment(NamedTuple):
    """The rows of one emitter call and their waits coded (see module doc); their `op`,
    `layer` and `wait` fields are set where the fragment is placed (`Assembler.rows`).

    A tuple of arrays and ints: the garbage collector stops tracking it, so a large cache
    costs no collection time."""

    rows: np.ndarray
    raw: np.ndarray  # the rows' bytes (uint8), what programs are concatenated from
    codes: np.ndarray  # (len(rows), MAX_WAIT) int64 wait codes
    done: int  # code of the row publishing the op's output (UNUSED: none)
    last_mpe: int  # code of the op's last MPE row (UNUSED: none)
    streams: tuple[int, ...]  # codes of the streamed loads the call emitted, in order


def _code(row: int, externals: int) -> int:
    if row < 0:
        return UNUSED
    return row - externals if row >= externals else -row - 2


def _record(
    mach: Machine,
    externals: int,
    call: Callable[[PlanEmitter, tuple[int, ...]], list[int]],
    op: int,
) -> Fragment:
    """Run `call(emitter, external rows)` on a fresh emitter whose row numbers start at
    `externals` (0..externals-1 stand for the external rows); the fragment it emitted."""
    low = PlanEmitter(mach)
    low.count = externals
    streams = call(low, tuple(range(externals)))
    rows = low.rows()
    wait = rows["wait"].astype(np.int64)
    codes = np.where(wait >= externals, wait - externals, np.where(wait >= 0, -wait - 2, UNUSED))
    rows.flags.writeable = False
    codes.flags.writeable = False
    return Fragment(
        rows=rows,
        raw=rows.view(np.uint8),
        codes=codes,
        done=_code(low.done.get(op, -1), externals),
        last_mpe=_code(low.last_mpe.get(op, -1), externals),
        streams=tuple(_code(r, externals) for r in streams),
    )


class Entry:
    """A cached plan and the fragments of its emitter calls."""

    __slots__ = ("plan", "shared", "prefetches", "bodies")

    def __init__(self, plan: Plan, shared: bool) -> None:
        self.plan = plan
        self.shared = shared  # in a machine's cache (its rows count towards MAX_CACHED_ROWS)
        #: whether the op's streamed loads may run ahead (it has some, none waits for inputs)
        self.prefetches = bool(plan.stream_bytes) and not plan.waits_for_inputs
        self.bodies: dict[tuple[int, int] | None, Fragment] = {}  # None: the prefetch


_CACHES: dict[Machine, dict[tuple, Entry]] = {}
_cached_rows = 0


def entries_of(mach: Machine) -> dict[tuple, Entry]:
    """The plan entries of a machine, by plan key (see `op_key`)."""
    entries = _CACHES.get(mach)
    if entries is None:
        entries = _CACHES[mach] = {}
    return entries


def _make_room(rows: int) -> None:
    """Count `rows` more cached rows (plan steps count as rows), emptying every cache first
    when they would exceed MAX_CACHED_ROWS."""
    global _cached_rows
    if _cached_rows + rows > MAX_CACHED_ROWS:
        for entries in _CACHES.values():
            entries.clear()
        _cached_rows = 0
    _cached_rows += rows


def store_plan(entries: dict[tuple, Entry], key: tuple, plan: Plan, shared: bool) -> Entry:
    """Cache a plan under its key (see `op_key`) in a machine's `entries_of` (`shared`), or
    in a dict of one lowering's; its entry."""
    if shared:
        _make_room(len(plan.steps) + len(plan.stream_bytes))
    entry = entries[key] = Entry(plan, shared)
    return entry


def op_key(op: Op) -> tuple:
    """Everything of an op that a plan reads, its name aside."""
    return (
        op.kind,
        op.tokens,
        op.weight_elems,
        op.act_elems,
        op.kv_elems,
        op.store_elems,
        op.macs,
        op.sfu_elems,
        op.in_dim,
        op.out_dim,
        op.keys,
        op.heads,
    )


class Assembler:
    """A program's rows as fragments: each emitter call is looked up (or recorded) and
    placed after the rows so far; `rows()` relocates them into one array."""

    def __init__(self, mach: Machine) -> None:
        self.mach = mach
        self.layer = -1  # layer field of the rows being placed (-1 head, blocks = tail)
        self.count = 0  # rows placed so far
        self.done: dict[int, int] = {}  # op position -> row that publishes its output
        self.last_mpe: dict[int, int] = {}  # op position -> its last MPE row
        #: placed fragments: (fragment, first row, op position, layer, where its external
        #: rows start in _externals)
        self._placed: list[tuple[Fragment, int, int, int, int]] = []
        self._externals: list[int] = []

    def _place(self, frag: Fragment, index: int, external: tuple[int, ...]) -> int:
        base = self.count
        self._placed.append((frag, base, index, self.layer, len(self._externals)))
        self._externals.extend(external)
        self.count += len(frag.rows)
        check_program_rows(self.count)
        return base

    def prefetch(self, entry: Entry, index: int) -> list[int]:
        """The op's prefetched streamed loads (`PlanEmitter.prefetch_count` of them); their rows."""
        frag = entry.bodies.get(None)
        if frag is None:
            frag = _record_into(self.mach, entry, None, 0, _prefetch)
        base = self._place(frag, index, ())
        return [base + c for c in frag.streams]

    def body(self, entry: Entry, index: int, inputs: tuple[int, ...], streams: list[int]) -> None:
        """The op's body (`PlanEmitter.emit_body`) after its prefetched loads `streams`."""
        shape = (len(inputs), len(streams))
        frag = entry.bodies.get(shape)
        if frag is None:
            frag = _record_into(self.mach, entry, shape, sum(shape), _body_call(len(inputs)))
        external = (*inputs, *streams)
        base = self._place(frag, index, external)
        for table, code in ((self.done, frag.done), (self.last_mpe, frag.last_mpe)):
            if code == UNUSED:
                table[index] = -1
            else:
                table[index] = base + code if code >= 0 else external[-code - 2]

    def rows(self) -> np.ndarray:
        """Every placed fragment's rows, relocated: one instruction array."""
        if not self._placed:
            return np.zeros(0, INSTR_DTYPE)
        frags, bases, ops, layers, ext_starts = zip(*self._placed, strict=True)
        instrs = np.concatenate([f.raw for f in frags]).view(INSTR_DTYPE)
        codes = np.concatenate([f.codes for f in frags])
        per_row = np.repeat(np.arange(len(frags)), [len(f.rows) for f in frags])
        instrs["op"] = np.array(ops, dtype=np.int32)[per_row]
        instrs["layer"] = np.array(layers, dtype=np.int32)[per_row]
        base = np.array(bases, dtype=np.int64)[per_row][:, None]
        ext_start = np.array(ext_starts, dtype=np.int64)[per_row][:, None]
        externals = np.array(self._externals or [0], dtype=np.int64)
        own = codes >= 0
        outside = codes <= -2
        wait = np.full(codes.shape, -1, dtype=np.int64)
        wait[own] = (codes + base)[own]
        wait[outside] = externals[(ext_start - codes - 2)[outside]]
        instrs["wait"] = wait
        return instrs


#: an emitter call on a plan and the external rows; the streamed loads it emitted
Call = Callable[[PlanEmitter, Plan, tuple[int, ...]], list[int]]


def _record_into(
    mach: Machine, entry: Entry, shape: tuple[int, int] | None, externals: int, call: Call
) -> Fragment:
    """Record the fragment of `call` on the entry's plan and cache it (its rows' op and layer
    fields are set where it is placed)."""
    plan = entry.plan
    frag = _record(mach, externals, lambda low, ext: call(low, plan, ext), plan.index)
    if entry.shared:
        _make_room(len(frag.rows))
    entry.bodies[shape] = frag
    return frag


def _prefetch(low: PlanEmitter, plan: Plan, _ext: tuple[int, ...]) -> list[int]:
    streams: list[int] = []
    low.emit_loads(plan, (), range(low.prefetch_count(plan)), streams)
    return streams


def _body_call(n_inputs: int) -> Call:
    """`PlanEmitter.emit_body` with the first `n_inputs` external rows as its inputs and the
    rest as its prefetched loads."""

    def call(low: PlanEmitter, plan: Plan, ext: tuple[int, ...]) -> list[int]:
        """Emit the body; it reports no streamed-load rows (only a prefetch does)."""
        streams = list(ext[n_inputs:])
        low.emit_body(plan, ext[:n_inputs], streams)
        return []

    return call
