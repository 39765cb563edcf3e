"""The executable form every lowering returns: instruction rows in a NumPy structured array.

One row per instruction: LD/ST (bytes over a channel group), MM/MV (a tile on the MPE), MISC
(an SFU pass) or SYS (a synchronisation point: FlightLLM's compiler,
`fpgasim.dataflow.lowerings.flightllm`, ends every part with one; other dependencies are
explicit `wait` rows). Each row names its unit
(LD, ST, MPE, SFU), its duration in cycles (fixed at lowering), the rows it waits on
(`wait`, up to MAX_WAIT indices) and the on-chip buffer space it takes when it starts
(`acq_*`, loads) or frees when it finishes (`rel_*`, the consuming tiles). A lowering
builds programs from a pass's graph and returns them as an `Executable` (parts run in
order, units named and given roles); the engines execute the parts and aggregate busy time
by role, never by a unit's name. See docs/engines.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

from fpgasim.bounded import memoised

# opcodes
LD, ST, MM, MV, MISC, SYS = range(6)
OPCODE_NAMES = ("LD", "ST", "MM", "MV", "MISC", "SYS")
# units; the index is also the same-cycle start priority (LD first)
UNIT_LD, UNIT_ST, UNIT_MPE, UNIT_SFU = range(4)
UNIT_NAMES = ("LD", "ST", "MPE", "SFU")
N_UNITS = 4
# unit roles: what a unit does, the only thing engines aggregate by (names are labels)
ROLE_LOAD, ROLE_STORE, ROLE_COMPUTE, ROLE_SFU, ROLE_SYNC = (
    "load", "store", "compute", "special-function", "sync"
)
ROLES = (ROLE_LOAD, ROLE_STORE, ROLE_COMPUTE, ROLE_SFU, ROLE_SYNC)
#: roles of the four units of a `Program` without its own (LD, ST, compute, SFU)
UNIT_ROLES = (ROLE_LOAD, ROLE_STORE, ROLE_COMPUTE, ROLE_SFU)
# channel groups (bandwidth) and their ports: each port is used by one unit only (checked by
# engine.cycle.check_runnable), so a port is never contended and engines do not arbitrate it
GROUP_WEIGHT, GROUP_ACT = 0, 1
GROUP_NAMES = ("weight", "activation")
PORT_WEIGHT_LOAD, PORT_ACT_LOAD, PORT_ACT_STORE = range(3)
PORT_NAMES = ("weight loads", "activation loads", "activation stores")
N_PORTS = 3
# traffic kinds of LD/ST rows
TRAFFIC_NONE, TRAFFIC_WEIGHT, TRAFFIC_ACT, TRAFFIC_KV, TRAFFIC_STORE = range(5)
# on-chip buffers
BUF_WEIGHT, BUF_ACT = 0, 1
N_BUFFERS = 2
MAX_WAIT = 4
#: int64's largest value: sums past it are kept as Python ints (`class_sums`)
INT64_MAX = 2**63 - 1

INSTR_DTYPE = np.dtype(
    [
        ("opcode", np.uint8),
        ("unit", np.uint8),
        ("op", np.int32),  # index into Program.op_names
        ("layer", np.int32),  # -1 head, 0..layers-1, `layers` for the tail
        ("cycles", np.int64),  # duration once started (>= 1)
        ("nbytes", np.int64),  # LD/ST bytes
        ("work", np.int64),  # MM/MV: accounted MACs; MISC: SFU element-passes
        ("traffic", np.uint8),  # TRAFFIC_* of LD/ST rows
        ("group", np.int8),  # bandwidth group of LD/ST rows (-1: none)
        ("chan", np.int8),  # channel-group port the transfer uses (PORT_*, -1: none)
        ("acq_buf", np.int8),  # buffer whose space this row takes when it starts (-1: none)
        ("acq_bytes", np.int64),
        ("rel_buf", np.int8),  # buffer whose space this row frees when it finishes (-1: none)
        ("rel_bytes", np.int64),
        ("wait", np.int32, (MAX_WAIT,)),  # rows that must have finished (-1: unused slot)
    ]
)


@dataclass(frozen=True, eq=False)
class RowStructure:
    """What every pricing of one set of rows shares (programs equal in each column a
    schedule depends on but `cycles`: unit, opcode, wait, chan, acq_*, rel_*; e.g. a part
    priced for several boards), computed once by the lowering that made the rows and
    compared by identity (an engine keys what it derives from the rows by it)."""

    #: `part_key_prefix` of the rows: the hash of their units and waits, never updated in
    #: place (`key_of` adds a pricing's durations to a copy)
    key_prefix: hashlib.blake2b
    #: whether the rows' transfers use channel-group ports (the cycle engines' unit rows)
    uses_ports: bool

    def key_of(self, cycles: np.ndarray) -> hashlib.blake2b:
        """`part_key`'s hash of a pricing of these rows with durations `cycles` (unfinished:
        a template's key adds its copy count)."""
        digest = self.key_prefix.copy()
        digest.update(np.ascontiguousarray(cycles).tobytes())
        return digest


@dataclass(frozen=True)
class ProgramFacts:
    """What engines read of a program besides its rows, computed once by the lowering that
    built it and never changed (`Program.facts`; `ProgramFacts.of` computes them from the
    rows alone). A program made from another (a window, a relabelled part) keeps them only
    where they still hold: `Program` checks the rows and layers they were computed for."""

    #: `part_key` of the program
    part_key: bytes
    #: `part_key` of a template without its copy count (one window proof for any count;
    #: None: not a template)
    template_key: bytes | None
    #: the unit roles `totals` sums by, and `totals` for them (read-only)
    unit_roles: tuple[str, ...]
    totals: Mapping[str, int]
    #: whether the rows' transfers use channel-group ports
    uses_ports: bool
    #: whether the rows' durations sum past the simulator's time range, `MAX_PART_TICKS`
    #: (summed as floats: an int64 sum of many long rows could wrap)
    too_slow: bool
    #: shared with every pricing of the same rows (None: the program's own)
    structure: RowStructure | None
    #: what of the program they were computed for they depend on besides the rows' values
    #: (`program_shape`): a program refuses facts of another
    shape: tuple

    @classmethod
    def of(cls, program: Program, unit_roles: tuple[str, ...] = UNIT_ROLES) -> ProgramFacts:
        """The facts of a program computed from its rows (no structure shared)."""
        return cls(part_key=_digest(program), template_key=None, unit_roles=unit_roles,
                   totals=MappingProxyType(_totals(program, unit_roles)),
                   uses_ports=rows_use_ports(program.instrs),
                   too_slow=sums_past_range(program.instrs["cycles"]),
                   structure=None, shape=program_shape(program))


#: the largest tick count a part may reach (int64 with headroom)
MAX_PART_TICKS = 1 << 62


def sums_past_range(cycles: np.ndarray) -> bool:
    """Whether durations sum past `MAX_PART_TICKS` (summed as floats: an int64 sum of many
    long rows could wrap)."""
    return float(cycles.sum(dtype=np.float64)) >= MAX_PART_TICKS


def rows_use_ports(rows: np.ndarray) -> bool:
    """Whether any row's transfer uses a channel-group port."""
    return bool((rows["chan"] >= 0).any())


def program_shape(program: Program) -> tuple:
    """What `ProgramFacts.shape` records of a program: its row count, its blocks (head,
    block rows, blocks, layers), its unit names and its time unit (the keys of `totals`
    and the hash of `part_key` depend on them)."""
    return (len(program.instrs), program.head_len, program.layer_len, program.layers,
            program.total_layers, program.unit_names, program.ticks_per_cycle)


@dataclass(frozen=True)
class Program:
    """An instruction stream: `head` rows, `layers` identical layer blocks, then the tail.

    Layer block k (k >= 1) equals block 1 with every wait index >= head_len shifted by
    (k - 1) * layer_len; the tail's waits into the layers point at the last two blocks.
    """

    instrs: np.ndarray
    op_names: tuple[str, ...]
    head_len: int
    layer_len: int
    layers: int
    total_layers: int  # layers of the pass (a windowed program simulates fewer)
    buffer_bytes: tuple[int, ...]  # capacity per buffer, -1 = unbounded
    ideal: bool
    label: str
    #: names of the in-order units, indexed by the rows' `unit` (FlightLLM: six units)
    unit_names: tuple[str, ...] = UNIT_NAMES
    #: time units per clock cycle of `cycles` (1; FlightLLM programs: TICKS_PER_CYCLE)
    ticks_per_cycle: int = 1
    #: what engines read besides the rows, computed by the lowering (`ProgramFacts`; None:
    #: computed from the rows when asked, e.g. for a window an engine simulates)
    facts: ProgramFacts | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.facts is not None and self.facts.shape != program_shape(self):
            raise ValueError(f"{self.label}: facts of {self.facts.shape} given to a program "
                             f"of {program_shape(self)} (`program_shape`): pass facts=None "
                             "to a program made from another")

    @property
    def n_units(self) -> int:
        """How many in-order units the rows' `unit` indexes."""
        return len(self.unit_names)

    @property
    def tail_start(self) -> int:
        """Row index of the tail's first row: after the head and every layer block."""
        return self.head_len + self.layers * self.layer_len

    def unit_queues(self) -> list[np.ndarray]:
        """Row indices of each unit's in-order queue."""
        unit = self.instrs["unit"]
        return [np.flatnonzero(unit == u) for u in range(self.n_units)]

    def region_counts(self) -> np.ndarray:
        """[head, per layer, tail] row counts of each unit, shape (3, N_UNITS)."""
        unit = self.instrs["unit"]
        nu = self.n_units
        out = np.zeros((3, nu), dtype=np.int64)
        bounds = (0, self.head_len, self.head_len + self.layer_len, self.tail_start, len(unit))
        regions = ((bounds[0], bounds[1]), (bounds[1], bounds[2]), (bounds[3], bounds[4]))
        for r, (lo, hi) in enumerate(regions):
            out[r] = np.bincount(unit[lo:hi], minlength=nu)[:nu]
        return out


def window(template: Program, layers: int) -> Program:
    """The program of the same pass with `layers` layer blocks (1 <= layers <= total_layers)."""
    rows = _window_rows(template, layers)
    if rows is None:
        return template
    src = template.instrs
    h, lam = template.head_len, template.layer_len
    # gathered as bytes: numpy gathers a structured array ten times slower
    raw = src.view(np.uint8).reshape(len(src), src.dtype.itemsize)
    instrs = raw[rows].reshape(-1).view(src.dtype)
    blocks = slice(h + lam, len(rows) - (len(src) - h - 2 * lam))  # block 1's copies
    tail = slice(blocks.stop, len(rows))
    # copy k of block 1 is layer k: its waits past the head move k - 1 layers on; the
    # tail's move layers - 2 (on a contiguous copy: a structured array's field is slow)
    wait = np.take(np.ascontiguousarray(src["wait"]), rows, axis=0)
    shift = np.zeros(len(rows), dtype=wait.dtype)
    shift[blocks] = np.repeat(np.arange(layers - 1, dtype=wait.dtype) * lam, lam)
    shift[tail] = (layers - 2) * lam
    instrs["wait"] = wait + shift[:, None] * (wait >= h)
    instrs["layer"][blocks] = np.repeat(np.arange(1, layers, dtype=np.int32), lam)
    instrs["layer"][tail] = layers
    instrs.flags.writeable = False
    return replace(template, instrs=instrs, layers=layers, facts=None)


def _window_rows(template: Program, layers: int) -> np.ndarray | None:
    """The template row of each row of the `layers`-block window: head, block 0, then block
    1 `layers - 1` times, then the tail; None when the window is the template itself."""
    if not 1 <= layers <= template.total_layers:
        raise ValueError(f"window of {layers} layers outside 1..{template.total_layers}")
    if template.layers < 2 or layers == template.layers:
        if layers != template.layers:
            raise ValueError("a template with fewer than 2 layer blocks cannot be widened")
        return None
    if layers == 1:
        raise ValueError("window of 1 layer from a multi-layer template is not defined")
    check_window(template)
    h, lam, n = template.head_len, template.layer_len, len(template.instrs)
    block = np.arange(h + lam, h + 2 * lam)
    return np.concatenate(
        [np.arange(h + lam), np.tile(block, layers - 1), np.arange(h + 2 * lam, n)]
    )


def check_window(template: Program) -> None:
    """A template's layer block 1 may be copied to later layers: it waits on no head row."""
    h, lam = template.head_len, template.layer_len
    block_wait = template.instrs["wait"][h + lam : h + 2 * lam]
    if (block_wait[block_wait >= 0] < h).any():
        raise AssertionError("layer block 1 waits on the head; blocks would not be identical")


def full(template: Program) -> Program:
    """The program with all of the pass's layers."""
    return window(template, template.total_layers)


@dataclass(frozen=True)
class Executable:
    """A lowered pass: parts run in sequence, on units with names and roles.

    Part `order[j]` runs j-th. A pass of one part may be a template whose identical layer
    blocks an engine windows (`Program`; the retired study lowering's passes were). A pass
    of several parts (FlightLLM: one per barrier) has parts that each start on an idle
    machine (their first row waits on nothing) and end with a barrier row (SYS) that
    finishes after every other row of the part; in the whole program the next part's
    first row waits on that barrier. So the pass's time is exactly the sum of the parts'
    makespans, and a part that appears many times (identical layers) needs one simulation.

    `unit_roles[u]` says what unit u does (ROLES); engines total busy time, bytes and work
    by role. Every part uses the same units and time unit (`ticks_per_cycle` per cycle).
    """

    parts: tuple[Program, ...]
    order: tuple[int, ...]
    label: str
    unit_roles: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.parts or sorted(set(self.order)) != list(range(len(self.parts))):
            raise ValueError(f"{self.label}: order must run every part at least once")
        names, tpc = self.parts[0].unit_names, self.parts[0].ticks_per_cycle
        if any(p.unit_names != names or p.ticks_per_cycle != tpc for p in self.parts):
            raise ValueError(f"{self.label}: parts on different units or time units")
        if len(self.unit_roles) != len(names) or not set(self.unit_roles) <= set(ROLES):
            raise ValueError(f"{self.label}: one role of {ROLES} per unit of {names}")

    @property
    def unit_names(self) -> tuple[str, ...]:
        """The units' names, shared by every part (checked at construction)."""
        return self.parts[0].unit_names

    @property
    def ticks_per_cycle(self) -> int:
        """Time units per clock cycle, shared by every part (checked at construction)."""
        return self.parts[0].ticks_per_cycle

    def units_of(self, role: str) -> tuple[int, ...]:
        """Indices of the units with this role."""
        return tuple(u for u, r in enumerate(self.unit_roles) if r == role)

    def counts(self) -> list[int]:
        """How often each part runs."""
        out = [0] * len(self.parts)
        for k in self.order:
            out[k] += 1
        return out

    @property
    def rows(self) -> int:
        """Instructions of the whole pass."""
        return sum(len(full(self.parts[k]).instrs) for k in self.order)

    def concatenate(self) -> Program:
        """The whole pass as one program: parts in order, each chained to the previous barrier."""
        if len(self.order) == 1:
            return full(self.parts[0])
        pieces = []
        names: list[str] = []
        base = 0
        prev_last = -1
        for k in self.order:
            part = full(self.parts[k])
            rows = part.instrs.copy()
            rows["op"] += len(names)
            names += part.op_names
            wait = rows["wait"]
            wait[wait >= 0] += base
            if prev_last >= 0:
                free = np.flatnonzero(wait[0] < 0)
                wait[0, free[0]] = prev_last
            rows["wait"] = wait
            pieces.append(rows)
            base += len(rows)
            prev_last = base - 1
        instrs = np.concatenate(pieces) if pieces else np.zeros(0, INSTR_DTYPE)
        instrs.flags.writeable = False
        first = self.parts[0]
        return replace(
            first,
            instrs=instrs,
            op_names=tuple(names),
            head_len=len(instrs),
            layer_len=0,
            layers=1,
            total_layers=1,
            label=self.label,
            facts=None,
        )


def part_key(part: Program) -> bytes:
    """Digest of what decides a part's schedule: units, durations and waits (not names):
    the lowering's (`ProgramFacts.part_key`, from `RowStructure.key_prefix` for rows priced
    again), else computed from the rows."""
    return part.facts.part_key if part.facts is not None else _digest(part)


def _digest(part: Program) -> bytes:
    h = part_key_prefix(part.instrs, part.unit_names, part.ticks_per_cycle)
    h.update(np.ascontiguousarray(part.instrs["cycles"]).tobytes())
    return h.digest()


def part_key_prefix(rows: np.ndarray, unit_names: tuple[str, ...],
                    ticks_per_cycle: int) -> hashlib.blake2b:
    """`part_key`'s hash of everything but the durations, before their bytes are added: a
    lowering that prices the same rows again copies it (`hashlib` objects copy their state)."""
    return columns_key_prefix(rows["unit"], rows["wait"], unit_names, ticks_per_cycle)


def columns_key_prefix(unit: np.ndarray, wait: np.ndarray, unit_names: tuple[str, ...],
                       ticks_per_cycle: int) -> hashlib.blake2b:
    """`part_key_prefix` from the rows' `unit` and `wait` columns alone (a lowering has them
    before it builds the rows: `RowStructure.key_prefix`)."""
    h = hashlib.blake2b(digest_size=20)
    for col in (unit, wait):
        h.update(np.ascontiguousarray(col).tobytes())
    h.update(repr((unit_names, ticks_per_cycle)).encode())
    return h


def totals(template: Program, unit_roles: tuple[str, ...] = UNIT_ROLES) -> dict[str, int]:
    """Busy cycles, off-chip bytes and work per unit, and bytes per traffic kind of the full
    pass (no simulation).

    `macs` is the work of the compute units, `sfu_elements` that of the special-function
    units (`unit_roles`); `mv_cycles` and `mv_macs` the part of them in MV-mode rows.
    """
    facts = template.facts
    if facts is not None and facts.unit_roles == unit_roles:
        return dict(facts.totals)
    return _totals(template, unit_roles)


def _totals(template: Program, unit_roles: tuple[str, ...]) -> dict[str, int]:
    """`totals` computed: each row's durations, bytes and work, times how many layers its
    block stands for, summed per `row_classes` class (the one definition of what each total
    sums, `class_totals`, shared with the totals of priced-again rows, `priced_totals`)."""
    src = template.instrs
    h, lam, blocks = template.head_len, template.layer_len, template.layers
    weights = np.ones(len(src), dtype=np.int64)
    if blocks == 2:
        weights[h + lam : h + 2 * lam] = template.total_layers - 1
    classes = row_classes(template, unit_roles)
    n = _classes_of(template)
    out: dict[str, int] = {}
    for value in ("cycles", "nbytes", "work"):
        per_class = class_sums(classes, src[value], n, weights)
        out |= class_totals(template, unit_roles, per_class, value)
    return {k: out[k] for k in _order(template)}


def _order(template: Program) -> list[str]:
    """The keys of `totals`, in its order."""
    per_unit = [f"{k}_{name}" for name in template.unit_names for k in ("busy", "bytes", "work")]
    return per_unit + ["weight_bytes", "act_load_bytes", "act_store_bytes", "kv_bytes",
                       "weight_load_cycles", "act_load_cycles", "macs", "sfu_elements",
                       "mv_cycles", "mv_macs"]


def row_classes(template: Program, unit_roles: tuple[str, ...]) -> np.ndarray:
    """Each row's class for `totals` (its unit, traffic kind and whether it is an MV-mode
    compute row), numbered as `class_totals` reads them: the sums of durations, bytes and
    work per class give every total, so a program whose rows are priced again
    (FlightLLM's compiler, another link rate) sums its new durations by class and
    recomputes nothing else (`priced_totals`; tests/dataflow/lowerings/test_flightllm_reuse.py
    checks it against
    `totals`)."""
    src = template.instrs
    compute = _role_rows(template, unit_roles, ROLE_COMPUTE)
    mv = compute & (src["opcode"] == MV)
    kinds = TRAFFIC_STORE + 1
    return (src["unit"].astype(np.intp) * kinds + src["traffic"]) * 2 + mv


def class_sums(classes: np.ndarray, values: np.ndarray, n: int,
               weights: np.ndarray | None = None) -> np.ndarray:
    """Exact sums of the integer `values` (each times its `weights`, e.g. the layers a row
    stands for) per class 0..n-1: int64 where every sum fits it, else Python ints (an
    object array), never wrapped. Below 2**53 a float bincount, whose partial sums of
    non-negative integers are then never rounded."""
    if not len(values):
        return np.zeros(n, np.int64)
    least = int(values.min())
    bound = max(abs(least), abs(int(values.max()))) * (
        int(weights.sum()) if weights is not None else len(values))
    if least >= 0 and bound < 2**53:
        products = values if weights is None else values * weights
        return np.bincount(classes, weights=products, minlength=n)[:n].astype(np.int64)
    if bound <= INT64_MAX:
        products = values.astype(np.int64) if weights is None else values * weights
        sums = np.zeros(n, np.int64)
        np.add.at(sums, classes, products)
        return sums
    products = values.astype(object) if weights is None else (
        values.astype(object) * weights.astype(object))
    return np.array([sum(products[classes == c].tolist()) for c in range(n)], dtype=object)


def _classes_of(template: Program) -> int:
    """How many `row_classes` classes a program has."""
    return template.n_units * (TRAFFIC_STORE + 1) * 2


@memoised("instructions.class_matrix", owner="fpgasim.dataflow.instructions",
          keys="unit names, unit roles, summed column", budget=32,
          why="every part's totals multiply its per-class sums by one of a few 0/1 matrices")
def _class_matrix(unit_names: tuple[str, ...], unit_roles: tuple[str, ...],
                  value: str) -> tuple[tuple[str, ...], np.ndarray]:
    """The totals of `totals` that sum `value` and, per total, which `row_classes` classes
    it sums (a 0/1 matrix, one row per total)."""
    kinds = TRAFFIC_STORE + 1
    nu = len(unit_names)

    def classes(units=range(nu), traffic=range(kinds), mv=(0, 1)) -> list[int]:
        return [(u * kinds + k) * 2 + m for u in units for k in traffic for m in mv]

    compute = [u for u in range(min(nu, len(unit_roles))) if unit_roles[u] == ROLE_COMPUTE]
    sfu = [u for u in range(min(nu, len(unit_roles))) if unit_roles[u] == ROLE_SFU]
    moved = [k for k in range(kinds) if k != TRAFFIC_NONE]  # zero-fill loads move no bytes
    per_unit = {"cycles": ("busy", range(kinds)), "nbytes": ("bytes", moved),
                "work": ("work", range(kinds))}[value]
    rows = {f"{per_unit[0]}_{name}": classes(units=[u], traffic=per_unit[1])
            for u, name in enumerate(unit_names)}
    loads = classes(traffic=[TRAFFIC_ACT, TRAFFIC_KV])
    if value == "cycles":
        rows |= {"weight_load_cycles": classes(traffic=[TRAFFIC_WEIGHT]),
                 "act_load_cycles": loads, "mv_cycles": classes(units=compute, mv=[1])}
    elif value == "nbytes":
        rows |= {"weight_bytes": classes(traffic=[TRAFFIC_WEIGHT]), "act_load_bytes": loads,
                 "act_store_bytes": classes(traffic=[TRAFFIC_STORE]),
                 "kv_bytes": classes(traffic=[TRAFFIC_KV])}
    else:
        rows |= {"macs": classes(units=compute), "sfu_elements": classes(units=sfu),
                 "mv_macs": classes(units=compute, mv=[1])}
    matrix = np.zeros((len(rows), nu * kinds * 2), np.int64)
    for r, members in enumerate(rows.values()):
        matrix[r, members] = 1
    return tuple(rows), matrix


def class_totals(template: Program, unit_roles: tuple[str, ...], per_class: np.ndarray,
                 value: str) -> dict[str, int]:
    """The totals of `totals` that sum `value` ("cycles", "nbytes" or "work"), from its
    sums per `row_classes` class (`class_sums`)."""
    names, matrix = _class_matrix(template.unit_names, unit_roles, value)
    if per_class.dtype == object or sum(abs(v) for v in per_class.tolist()) > INT64_MAX:
        matrix, per_class = matrix.astype(object), per_class.astype(object)  # Python ints
    return dict(zip(names, (matrix @ per_class).tolist(), strict=True))


def other_totals(template: Program, unit_roles: tuple[str, ...], classes: np.ndarray,
                 nbytes: np.ndarray, work: np.ndarray,
                 weights: np.ndarray | None = None) -> dict[str, int]:
    """The totals of `totals` that do not depend on durations (bytes and work) of a
    program whose rows have the `row_classes` `classes`, each row counted `weights` times
    (`layer_weights`; None: once)."""
    n = _classes_of(template)
    if weights is not None:
        nbytes, work = nbytes * weights, work * weights
    return (class_totals(template, unit_roles, class_sums(classes, nbytes, n), "nbytes")
            | class_totals(template, unit_roles, class_sums(classes, work, n), "work"))


def layer_weights(rows: int, head_len: int, layer_len: int, total_layers: int) -> np.ndarray:
    """How many times each row of a two-block template stands in the full pass: block 1
    for `total_layers - 1` layers, every other row once (as `_totals` counts them)."""
    weights = np.ones(rows, dtype=np.int64)
    weights[head_len + layer_len : head_len + 2 * layer_len] = total_layers - 1
    return weights


def _role_rows(template: Program, unit_roles: tuple[str, ...], role: str) -> np.ndarray:
    """Which rows run on a unit of `role` (units beyond `unit_roles` have none)."""
    pad = [""] * max(0, template.n_units - len(unit_roles))
    return (np.array(list(unit_roles) + pad) == role)[template.instrs["unit"]]


def priced_totals(template: Program, unit_roles: tuple[str, ...], other: dict[str, int],
                  classes: np.ndarray, cycles: np.ndarray,
                  weights: np.ndarray | None = None) -> dict[str, int]:
    """`totals` of a program from its duration-free totals (`other_totals`) and its rows'
    durations, each counted `weights` times, summed per `row_classes` class (exact integer
    sums): what a lowering that prices rows again gives `ProgramFacts.totals`."""
    if weights is not None:
        cycles = cycles * weights
    per_class = class_sums(classes, cycles, _classes_of(template))
    out = other | class_totals(template, unit_roles, per_class, "cycles")
    return {k: out[k] for k in _order(template)}
