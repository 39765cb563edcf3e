"""The `fast` engine: the `event` engine's semantics in one numba-compiled loop.

The loop visits only the cycles at which an instruction finishes: complete everything that
finishes now, then let idle units start their next instruction in unit order (LD, ST, MPE,
SFU), then jump to the earliest finish. Cycle counts are identical to `event` (tested on
random configurations). numba is imported and the kernel compiled on first use.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from fpgasim.bounded import BoundedCache, bounded_cache, memoised
from fpgasim.dataflow.instructions import (
    MAX_WAIT,
    N_BUFFERS,
    Program,
    RowStructure,
    check_window,
    full,
)
from fpgasim.engine.cycle import (
    CycleEngine,
    DeadlockError,
    Timeline,
    check_cycles,
    check_runnable,
    check_time_range,
    least_cycles,
)
from fpgasim.interrupts import interrupts_deferred

#: the loop's "no finish yet" sentinel for the earliest next finish (np.iinfo(np.int64).max)
INT64_MAX = 9223372036854775807


def _loop(unit_ptr, unit_idx, cycles, acq_buf, acq_bytes, rel_buf, rel_bytes, wait, cap,
          start, finish, pc, cur, level):
    """Fill start/finish of every instruction (both -1 on entry; pc, level 0 and cur -1 on
    entry: each unit's next row and running row, each buffer's fill); (last cycle, status
    0 = done or 1 = deadlock) (see module doc). The caller allocates every array: numba's
    np.full and np.zeros cost more to compile than the loop (0.59 s against 0.26 s)."""
    n = cycles.shape[0]
    n_units = unit_ptr.shape[0] - 1
    remaining = n
    t = 0
    big = INT64_MAX
    while remaining > 0:
        # completions at t: free buffer space
        for u in range(n_units):
            i = cur[u]
            if i >= 0 and finish[i] == t:
                if rel_buf[i] >= 0 and cap[rel_buf[i]] >= 0:
                    level[rel_buf[i]] -= rel_bytes[i]
                cur[u] = -1
                pc[u] += 1
                remaining -= 1
        # starts at t, in unit order
        for u in range(n_units):
            if cur[u] >= 0 or pc[u] >= unit_ptr[u + 1] - unit_ptr[u]:
                continue
            i = unit_idx[unit_ptr[u] + pc[u]]
            ok = True
            for k in range(wait.shape[1]):
                d = wait[i, k]
                if d >= 0 and (finish[d] < 0 or finish[d] > t):
                    ok = False
                    break
            b = acq_buf[i]
            if ok and b >= 0 and cap[b] >= 0 and level[b] + acq_bytes[i] > cap[b]:
                ok = False
            if ok:
                start[i] = t
                finish[i] = t + cycles[i]
                cur[u] = i
                if b >= 0 and cap[b] >= 0:
                    level[b] += acq_bytes[i]
        if remaining == 0:
            break
        nxt = big
        for u in range(n_units):
            if cur[u] >= 0 and finish[cur[u]] < nxt:
                nxt = finish[cur[u]]
        if nxt == big:
            return t, 1
        t = nxt
    return t, 0


def numba_cache_dir() -> Path:
    """Where the compiled loop is cached: `<fpgasim's cache folder>/numba`.

    The folder rule is the result cache's (`fpgasim.sweep.cache.default_cache_dir`, a higher
    layer): `$FPGASIM_CACHE_DIR`, else `$XDG_CACHE_HOME/fpgasim`, else `~/.cache/fpgasim`.
    Not numba's default beside this file: inside an installed package that cache outlives
    `pip uninstall`, and the leftover `fpgasim/` folder in site-packages then hides a later
    editable install of fpgasim (the README's test command after its run command).
    """
    env = os.environ.get("FPGASIM_CACHE_DIR")
    if env:
        return Path(env).expanduser() / "numba"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "fpgasim" / "numba"


def _expand(h, lam, layers, n_units, unit, cycles, acq_buf, acq_bytes, rel_buf, rel_bytes, wait):
    """The loop's inputs for `window(template, layers)` from a two-block template's columns
    (`instructions.window` row for row: head and block 0, block 1 `layers - 1` times with
    its waits past the head moved one layer per copy, the tail moved `layers - 2`)."""
    nt = cycles.shape[0]
    nw = wait.shape[1]
    lead = h + lam
    n = nt + (layers - 2) * lam
    # element loops, not slice assignments: the same copies, compiled in a tenth of the time
    # (numba's array-expression machinery took 3.5 s to compile this function)
    src = np.empty((6, nt), np.int64)
    for r in range(nt):
        src[0, r] = unit[r]
        src[1, r] = cycles[r]
        src[2, r] = acq_buf[r]
        src[3, r] = acq_bytes[r]
        src[4, r] = rel_buf[r]
        src[5, r] = rel_bytes[r]
    out = np.empty((6, n), np.int64)
    out_wait = np.empty((n, nw), np.int64)
    for r in range(lead):
        for c in range(6):
            out[c, r] = src[c, r]
        for j in range(nw):
            out_wait[r, j] = wait[r, j]
    # (first row, template row it copies from, rows, wait shift) of block 1's copies and the tail
    for k in range(layers):
        if k < layers - 1:
            first, t0, rows, shift = lead + k * lam, lead, lam, k * lam
        else:
            first, t0, rows, shift = lead + k * lam, lead + lam, nt - lead - lam, (k - 1) * lam
        for r in range(rows):
            for c in range(6):
                out[c, first + r] = src[c, t0 + r]
            for j in range(nw):
                w = wait[t0 + r, j]
                out_wait[first + r, j] = w + shift if w >= h else w
    counts = np.zeros(n_units, np.int64)
    for r in range(n):
        counts[out[0, r]] += 1
    ptr = np.zeros(n_units + 1, np.int64)
    for u in range(n_units):
        ptr[u + 1] = ptr[u] + counts[u]
    fill = ptr[:n_units].copy()
    order = np.empty(n, np.int64)
    for r in range(n):
        u = out[0, r]
        order[fill[u]] = r
        fill[u] += 1
    return ptr, order, out[1], out[2], out[3], out[4], out[5], out_wait


@memoised("fast.kernels", owner="fpgasim.engine.fast", keys="the Python loop function",
          budget=16, why="numba compiles (or loads from its disk cache) each loop once per "
          "process, a second or two")
def _compiled(fn):
    """`fn` compiled by numba (imported here so `import fpgasim` stays light), cached on
    disk in `numba_cache_dir()` unless NUMBA_CACHE_DIR says otherwise; compiled in memory
    (each run compiles again, a second or two) where no cache folder can be written: no
    HOME, a read-only HOME, an installed package (numba's "no locator available")."""
    import numba

    if not numba.config.CACHE_DIR:  # the user's NUMBA_CACHE_DIR wins
        folder = numba_cache_dir()
        if not _writable_folder(folder):  # else numba would cache beside fpgasim's source
            return numba.njit(nogil=True)(fn)
        numba.config.CACHE_DIR = str(folder)
    try:
        return numba.njit(cache=True, nogil=True)(fn)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return numba.njit(nogil=True)(fn)


def _writable_folder(folder: Path) -> bool:
    """Whether `folder` exists or can be made, and a file can be created in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def _kernel():
    """The compiled loop."""
    return _compiled(_loop)


def warm_kernels() -> None:
    """Compile (or load from numba's disk cache) the loop kernel for the one signature the
    engine calls it with (`run_loop` passes C-contiguous int64 arrays). numba compiles on
    first call otherwise, in every process that makes one: a run that forks workers calls
    this first, so they inherit the compiled code (1.0 s of compilation, measured cold).
    `_expand` (0.5 s cold) is left to its first call: only a template whose window proves
    nothing is expanded (`full_makespan`), and no pass of `reproduce all` has one."""
    from numba import types

    row, table = types.int64[::1], types.int64[:, ::1]
    _kernel().compile((row,) * 7 + (table,) + (row,) * 6)


#: the instruction columns the loop reads
COLUMNS = ("unit", "cycles", "acq_buf", "acq_bytes", "rel_buf", "rel_bytes", "wait")


def run_loop(program: Program, compiled: bool = True) -> Timeline:
    """Simulate a program with the numba loop (or the same loop in Python if not compiled)."""
    ins = program.instrs
    least, ptr, order, *cols, wait = _fixed_of(program)
    check_cycles(program, least)
    n = len(ins)
    cycles = np.ascontiguousarray(ins["cycles"], np.int64)
    cols = [np.full(n, c, np.int64) if isinstance(c, int) else c for c in cols]
    start, finish = _simulate(program, (ptr, order, cycles, *cols, wait), compiled)
    return Timeline(program, start, finish)


#: the loop's fixed inputs (`_fixed_inputs`) of recent program structures
#: (`ProgramFacts.structure`, by identity, held), up to this many rows in all (about 40
#: bytes a row; least recently used out): a design-space sweep prices a part for the
#: boards of one instruction group one after the other, and FlightLLM's verify passes
#: share a few hundred part structures
FIXED_CACHE_ROWS = 1_000_000
_FIXED: BoundedCache[tuple[RowStructure, tuple]] = bounded_cache(
    "fast.fixed_inputs", owner="fpgasim.engine.fast", unit="rows",
    keys="a row structure's identity (held)", budget=FIXED_CACHE_ROWS,
    size_of=lambda value: len(value[1][2]),
    why="the `fast` loop's unit, wait and order arrays are built once per part structure, "
    "its durations per part: sharing both took the FlightLLM `generate` passes from 8.7 to "
    "7.3 s of CPU in one process (docs/flightllm-sd.md, \"Speed\")")


def _fixed_of(program: Program) -> tuple:
    """`_fixed_inputs` of a program, shared by the programs of its structure."""
    structure = program.facts.structure if program.facts is not None else None
    if structure is None:
        return _fixed_inputs(program)
    # keyed by identity: the entry holds `structure`, so no other `RowStructure` has its id
    # while kept
    return _FIXED(id(structure), lambda: (structure, _fixed_inputs(program)))[1]


def _fixed_inputs(program: Program) -> tuple:
    """(least duration, then the loop's inputs but the durations: ptr, order, acq_buf,
    acq_bytes, rel_buf, rel_bytes, wait) of a program, its ports checked: programs whose
    rows differ only in durations share them (`ProgramFacts.structure`). A buffer
    column whose rows are all alike is kept as that value (they are kept a while)."""
    least = least_cycles(program)
    ins = program.instrs
    unit = ins["unit"].astype(np.int64)
    nu = program.n_units
    # each unit's rows in program order (a stable sort by unit, without sorting)
    order = np.concatenate([np.flatnonzero(unit == u) for u in range(nu)]).astype(np.int64)
    ptr = np.zeros(nu + 1, np.int64)
    ptr[1:] = np.cumsum(np.bincount(unit, minlength=nu)[:nu])
    cols: list[np.ndarray | int] = []
    for name in COLUMNS[2:-1]:
        col = np.ascontiguousarray(ins[name], np.int64)
        cols.append(int(col[0]) if len(col) and (col == col[0]).all() else col)
    wait = np.ascontiguousarray(ins["wait"], np.int64).reshape(len(ins), MAX_WAIT)
    return (least, ptr, order, *cols, wait)


def full_makespan(template: Program) -> int:
    """Makespan of `full(template)`: its rows are expanded from the template's in compiled
    code (`_expand`), never built as a structured array."""
    if template.layers < 2 or template.total_layers == template.layers:
        return run_loop(full(template)).makespan
    check_runnable(template)  # the full program's rows are the template's, repeated
    check_time_range(template, template.total_layers - template.layers + 1)
    check_window(template)
    ins = template.instrs
    nu = template.n_units
    cols = [np.ascontiguousarray(ins[name], np.int64) for name in COLUMNS]
    if int(cols[0].max()) >= nu:
        raise ValueError(f"{template.label}: a row names a unit beyond its {nu} units")
    cols[-1] = cols[-1].reshape(len(ins), MAX_WAIT)
    h, lam, layers = template.head_len, template.layer_len, template.total_layers
    with interrupts_deferred():  # the first call compiles
        args = _compiled(_expand)(h, lam, layers, nu, *cols)
    _, finish = _simulate(template, args, True)
    return int(finish.max()) if len(finish) else 0


def _simulate(program: Program, args: tuple, compiled: bool) -> tuple[np.ndarray, np.ndarray]:
    """(start, finish) of every row from the loop's inputs (ptr, order, cycles, acq_buf,
    acq_bytes, rel_buf, rel_bytes, wait); DeadlockError names `program`."""
    cap = np.asarray(program.buffer_bytes[:N_BUFFERS], np.int64)
    n, n_units = len(args[2]), len(args[0]) - 1
    start, finish = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    state = (np.zeros(n_units, np.int64), np.full(n_units, -1, np.int64),
             np.zeros(len(cap), np.int64))  # fmt: skip
    if compiled:
        with interrupts_deferred():  # the first call compiles
            t, status = _kernel()(*args, cap, start, finish, *state)
    else:
        t, status = _loop(*args, cap, start, finish, *state)
    if status:
        ptr, order = args[0], args[1]
        names = program.unit_names
        nu = program.n_units
        stuck = [names[u] for u in range(nu) if (finish[order[ptr[u] : ptr[u + 1]]] < 0).any()]
        raise DeadlockError(f"{program.label}: deadlock at cycle {t}; units waiting: {stuck}")
    return start, finish


class FastEngine(CycleEngine):
    """numba loop over the instruction stream; same cycles as `event`."""

    name = "fast"
    version = "2"  # 2: cheaper-of MV/MM for a few tokens, tree-aware masks

    def __init__(self, window: bool = False, window_layers: tuple[int, ...] | None = None) -> None:
        super().__init__(window=window, window_layers=window_layers)

    def simulate(self, program: Program) -> Timeline:
        """Each row's start and finish, from the compiled loop."""
        return run_loop(program)

    def full_makespan(self, template: Program) -> int:
        """The makespan of the template's full program, without building it (`_expand`)."""
        return full_makespan(template)
