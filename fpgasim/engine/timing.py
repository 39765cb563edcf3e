"""`Timing`: what every engine returns for a pass or a sequence of passes."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, fields

from fpgasim.errors import PassOutOfRange

#: The largest count (cycles, bytes, MACs) a Timing holds: int64's, the range of every
#: table column it reaches (CSV, Parquet, the SQLite cache), so no total is ever wrapped.
MAX_COUNT = 2**63 - 1
MAX_COUNT_SHOWN = "2**63 - 1"


class CountOutOfRange(PassOutOfRange):
    """A count of a pass (`field`) is negative, not finite or past `MAX_COUNT`.

    The pass service names the input that drove it there (`step.service.time_pass`)."""

    def __init__(self, field: str, value: float) -> None:
        self.field = field
        self.value = value
        super().__init__(
            f"{field} = {count_shown(value)}",
            f"cycles and bytes from 0 to {MAX_COUNT_SHOWN}, the simulator's 64-bit range",
        )


def count_shown(value: object) -> str:
    """A count as an error shows it: four significant digits (a count past int64 has
    twenty), anything else as its repr."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return repr(value)
    if isinstance(value, int) and value.bit_length() >= 1024:  # past a float's range
        return f"a {value.bit_length()}-bit integer"
    return f"{value:.4g}"


def check_count(field: str, value: float) -> None:
    """Refuse a count (cycles, bytes) that is negative, not finite or past MAX_COUNT."""
    if not (isinstance(value, int) or math.isfinite(value)) or not 0 <= value <= MAX_COUNT:
        raise CountOutOfRange(field, value)


def whole_count(field: str, value: float) -> int:
    """A fractional count rounded up to a whole one (`check_count`'s range), e.g. the
    analytic engine's cycles."""
    check_count(field, value)
    return math.ceil(value)


@dataclass(frozen=True)
class Timing:
    """Cycles of one or more forward passes, the per-unit work behind them and the bound.

    cycles            wall-clock cycles of the pass(es), of the configured clock and before the
                      board's duration_divisor (multiples of 2**-24: FlightLLM's compiler
                      times instructions in ticks of 2**-24 cycle, its durations fractional)
    ld_cycles         load-unit cycles (weights + activations/KV), st_cycles store-unit cycles,
                      compute_cycles MPE cycles, sfu_cycles SFU cycles (0 where not charged)
    weight_bytes      weight bytes the pass's loads move: the recipe's one weight size
                      (docs/hardware.md), what the memory holds and the energy counts
    act_load_bytes    activation + KV bytes loaded (not weights)
    kv_bytes          the part of act_load_bytes that reads the KV cache
    act_store_bytes   bytes stored over the activation group
    bound             the unit with the most work: "load", "store" or "compute" (ties in that
                      order); the cycle-level engines also report "sfu" when the SFU's busy
                      cycles exceed all three (the analytic engine does not charge the SFU)
    unit_busy_cycles  per-unit busy cycles (event/fast engines)
    passes            number of forward passes summed
    macs              MACs of the MPE work (event/fast engines; 0 where not counted)
    mv_cycles, mv_macs  the part of compute_cycles / macs run in MV mode (event/fast), so
                      MPE time splits into MV-rate and padded-MM excess over the array rate
    duration_divisor  the board's duration_divisor: seconds = cycles / (clock_hz * divisor)
    """

    cycles: float
    clock_hz: float
    ld_cycles: float
    st_cycles: float
    compute_cycles: float
    sfu_cycles: float = 0
    weight_bytes: int = 0
    act_load_bytes: int = 0
    act_store_bytes: int = 0
    kv_bytes: int = 0
    bound: str = "load"
    unit_busy_cycles: dict[str, float] = field(default_factory=dict)
    passes: int = 1
    macs: int = 0
    mv_cycles: int = 0
    mv_macs: int = 0
    duration_divisor: float = 1.0

    def __post_init__(self) -> None:
        """Every count is within `check_count`'s range (a total past it is refused, never
        wrapped or rounded to inf)."""
        for f in fields(self):
            if f.name in _COUNTS:
                check_count(f.name, getattr(self, f.name))
        for unit, busy in self.unit_busy_cycles.items():
            check_count(f"busy cycles of {unit}", busy)

    @property
    def seconds(self) -> float:
        """Wall time in seconds: cycles / (clock_hz · duration_divisor)."""
        return seconds_of(self.cycles, self.clock_hz, self.duration_divisor)


def seconds_of(cycles: float, clock_hz: float, duration_divisor: float = 1.0) -> float:
    """Wall time of `cycles` (a `Timing`'s, or a bound's, so both round alike)."""
    return cycles / (clock_hz * duration_divisor)


#: The fields of a Timing that count cycles, bytes or MACs.
_COUNTS = frozenset({"cycles", "ld_cycles", "st_cycles", "compute_cycles", "sfu_cycles",
                     "weight_bytes", "act_load_bytes", "act_store_bytes", "kv_bytes", "macs",
                     "mv_cycles",
                     "mv_macs"})

ZERO = Timing(0, 1.0, 0, 0, 0, passes=0)


def combine(timings: Iterable[Timing]) -> Timing:
    """Sequential passes: cycles and work add; the bound is the unit with most summed work."""
    items = list(timings)
    if not items:
        return ZERO
    busy: dict[str, int] = {}
    for t in items:
        for k, v in t.unit_busy_cycles.items():
            busy[k] = busy.get(k, 0) + v
    ld = sum(t.ld_cycles for t in items)
    st = sum(t.st_cycles for t in items)
    comp = sum(t.compute_cycles for t in items)
    return Timing(
        cycles=sum(t.cycles for t in items),
        clock_hz=items[0].clock_hz,
        ld_cycles=ld,
        st_cycles=st,
        compute_cycles=comp,
        sfu_cycles=sum(t.sfu_cycles for t in items),
        weight_bytes=sum(t.weight_bytes for t in items),
        act_load_bytes=sum(t.act_load_bytes for t in items),
        kv_bytes=sum(t.kv_bytes for t in items),
        act_store_bytes=sum(t.act_store_bytes for t in items),
        bound=bound_of(ld, st, comp),
        unit_busy_cycles=busy,
        passes=sum(t.passes for t in items),
        macs=sum(t.macs for t in items),
        mv_cycles=sum(t.mv_cycles for t in items),
        mv_macs=sum(t.mv_macs for t in items),
        duration_divisor=items[0].duration_divisor,
    )


def bound_of(ld: float, st: float, comp: float) -> str:
    """Name of the largest of the three unit workloads (ties: load, then compute)."""
    best = max(ld, st, comp)
    if ld == best:
        return "load"
    if comp == best:
        return "compute"
    return "store"
