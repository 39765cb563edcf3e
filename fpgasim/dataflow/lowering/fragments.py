"""Relocatable fragments: an op's rows emitted once, then copied into every program using them.

What the `Emitter` writes for one call (an op's prefetched loads, or its body) depends only
on the op's plan, the board and how many rows it waits on, never on where those rows are:
the rows a call waits for (its inputs and its prefetched loads) enter only the `wait`
fields, and its own rows only as offsets from its first row. So a call is emitted once, on
row indices that tell the two apart (external rows 0..E-1, its own rows from E on), stored
with its waits coded, and a program is the concatenation of its fragments with every code
turned back into a row index (`Assembler.rows`): the same rows, bit for bit, as emitting
each call in place.

Plans and fragments are cached per `Machine` (module level, bounded by `MAX_CACHED_ROWS`):
a pass at a new context replans only its attention, and the two layer blocks of a template
share every fragment. The cache key of a plan is everything the plan functions read: the
op's counts (not its name: names appear only in errors, which are never cached), and for
attention the head geometry and the tree mask, for softmax the scores it exponentiates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from fpgasim.dataflow.instructions import INSTR_DTYPE, concat_rows
from fpgasim.dataflow.lowering.emit import Emitter
from fpgasim.dataflow.lowering.machine import Machine
from fpgasim.dataflow.lowering.plan import Plan
from fpgasim.dataflow.ops import Op

#: rows kept in the fragment caches of all machines together before they are emptied
#: (about 71 bytes each: ~70 MB); the cache only saves time, results never depend on it
MAX_CACHED_ROWS = 1_000_000
#: wait code of an unused slot; codes >= 0 are own rows (offset from the fragment's first
#: row), codes <= -2 external rows (slot -code - 2 of the call's inputs + prefetched loads)
UNUSED = -1


@dataclass(frozen=True)
class Fragment:
    """The rows of one emitter call, `wait` coded (see module doc), `op`/`layer` zero."""

    rows: np.ndarray
    codes: np.ndarray  # (len(rows), MAX_WAIT) int64 wait codes
    done: int  # code of the row publishing the op's output (UNUSED: none)
    last_mpe: int  # code of the op's last MPE row (UNUSED: none)
    streams: tuple[int, ...]  # codes of the streamed loads the call emitted, in order


def _code(row: int, externals: int) -> int:
    if row < 0:
        return UNUSED
    return row - externals if row >= externals else -row - 2


def _record(
    mach: Machine, externals: int, call: Callable[[Emitter, tuple[int, ...]], list[int]], op: int
) -> Fragment:
    """Run `call(emitter, external rows)` on a fresh emitter whose first `externals` rows
    stand for the external rows; the fragment of what it appended."""
    low = Emitter(mach)
    low.rows = [()] * externals
    streams = call(low, tuple(range(externals)))
    own = low.rows[externals:]
    rows = np.array(own, dtype=INSTR_DTYPE) if own else np.zeros(0, INSTR_DTYPE)
    wait = rows["wait"].astype(np.int64)
    codes = np.where(wait >= externals, wait - externals, np.where(wait >= 0, -wait - 2, UNUSED))
    rows["op"] = 0
    rows["wait"] = UNUSED
    rows.flags.writeable = False
    codes.flags.writeable = False
    return Fragment(
        rows=rows,
        codes=codes,
        done=_code(low.done.get(op, -1), externals),
        last_mpe=_code(low.last_mpe.get(op, -1), externals),
        streams=tuple(_code(r, externals) for r in streams),
    )


class _Cache:
    """Plans and fragments of one machine."""

    def __init__(self) -> None:
        self.plans: dict[tuple, Plan] = {}
        self.fragments: dict[tuple, Fragment] = {}


_CACHES: dict[Machine, _Cache] = {}
_cached_rows = 0


def cache_of(mach: Machine) -> _Cache:
    """The plan and fragment cache of a machine."""
    cache = _CACHES.get(mach)
    if cache is None:
        cache = _CACHES[mach] = _Cache()
    return cache


def _make_room(rows: int) -> None:
    """Count `rows` more cached rows (plan steps count as rows), emptying every cache first
    when they would exceed MAX_CACHED_ROWS."""
    global _cached_rows
    if _cached_rows + rows > MAX_CACHED_ROWS:
        for cache in _CACHES.values():
            cache.fragments.clear()
            cache.plans.clear()
        _cached_rows = 0
    _cached_rows += rows


def store_plan(cache: _Cache, key: tuple, plan: Plan) -> Plan:
    """Cache a plan under its key (see `op_key`); the plan."""
    _make_room(len(plan.steps) + len(plan.stream_bytes))
    cache.plans[key] = plan
    return plan


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

    def __init__(self, mach: Machine, cache: _Cache) -> None:
        self.mach = mach
        self.cache = cache
        self.layer = -1  # layer field of the rows being placed (-1 head, blocks = tail)
        self.count = 0  # rows placed so far
        self.done: dict[int, int] = {}  # op position -> row that publishes its output
        self.last_mpe: dict[int, int] = {}  # op position -> its last MPE row
        self._placed: list[tuple[Fragment, int, int, int, int]] = []  # frag, base, op, layer, ext
        self._externals: list[int] = []

    def _fragment(self, key: tuple, externals: int, call, plan: Plan, index: int) -> Fragment:
        frag = self.cache.fragments.get(key)
        if frag is None:
            own = replace(plan, index=index)
            frag = _record(self.mach, externals, lambda low, ext: call(low, own, ext), index)
            _make_room(len(frag.rows))
            self.cache.fragments[key] = frag
        return frag

    def _place(self, frag: Fragment, index: int, external: tuple[int, ...] | list[int]) -> int:
        base = self.count
        self._placed.append((frag, base, index, self.layer, len(self._externals)))
        self._externals.extend(external)
        self.count += len(frag.rows)
        return base

    def _resolve(self, code: int, base: int, external: tuple[int, ...] | list[int]) -> int:
        if code == UNUSED:
            return -1
        return base + code if code >= 0 else external[-code - 2]

    def prefetch(self, plan_key: tuple, plan: Plan, index: int) -> list[int]:
        """The plan's prefetched streamed loads (`Emitter.prefetch_count`); their rows."""
        frag = self._fragment(("prefetch", plan_key), 0, _prefetch, plan, index)
        base = self._place(frag, index, ())
        return [base + c for c in frag.streams]

    def body(
        self,
        plan_key: tuple,
        plan: Plan,
        index: int,
        inputs: tuple[int, ...],
        streams: list[int],
    ) -> None:
        """The op's body (`Emitter.emit_body`) after its prefetched loads `streams`."""
        key = ("body", plan_key, len(inputs), len(streams))
        frag = self._fragment(key, len(inputs) + len(streams), _body_call(len(inputs)), plan, index)
        external = (*inputs, *streams)
        base = self._place(frag, index, external)
        self.done[index] = self._resolve(frag.done, base, external)
        self.last_mpe[index] = self._resolve(frag.last_mpe, base, external)

    def rows(self) -> np.ndarray:
        """Every placed fragment's rows, relocated: one instruction array."""
        if not self._placed:
            return np.zeros(0, INSTR_DTYPE)
        frags = [p[0] for p in self._placed]
        lengths = np.array([len(f.rows) for f in frags], dtype=np.int64)
        instrs = concat_rows([f.rows for f in frags])
        codes = np.concatenate([f.codes for f in frags])
        per_row = np.repeat(np.arange(len(frags)), lengths)
        bases = np.array([p[1] for p in self._placed], dtype=np.int64)[per_row]
        instrs["op"] = np.array([p[2] for p in self._placed], dtype=np.int32)[per_row]
        instrs["layer"] = np.array([p[3] for p in self._placed], dtype=np.int32)[per_row]
        ext_base = np.array([p[4] for p in self._placed], dtype=np.int64)[per_row][:, None]
        externals = np.array(self._externals or [0], dtype=np.int64)
        own = codes >= 0
        outside = codes <= -2
        wait = np.full(codes.shape, -1, dtype=np.int64)
        wait[own] = (codes + bases[:, None])[own]
        wait[outside] = externals[(ext_base - codes - 2)[outside]]
        instrs["wait"] = wait
        return instrs


def _prefetch(low: Emitter, plan: Plan, _ext: tuple[int, ...]) -> list[int]:
    streams: list[int] = []
    low.emit_loads(plan, (), range(low.prefetch_count(plan)), streams)
    return streams


def _body_call(n_inputs: int):
    def call(low: Emitter, plan: Plan, ext: tuple[int, ...]) -> list[int]:
        streams = list(ext[n_inputs:])
        low.emit_body(plan, ext[:n_inputs], streams)
        return []

    return call
