"""The one in-memory cache mechanism: bounded, registered, clearable in one place.

Every in-memory cache of fpgasim is a `BoundedCache` made by `bounded_cache` (a store
that a module fills itself), `memoised` (a function's results by its arguments) or, for
one cache per instance (an engine's, a pass service's), `declare_cache(...).new()`, each
under a `CacheSpec` registered when its module is imported: its name, the module that
owns it, what it is keyed by, its budget, its lifetime and why it earns its place.
`clear_caches()` empties every one (a cold process); `inventory_markdown()` renders the
registry as docs/scaling.md's table, so the documented inventory is the registry
(`tests/base/test_bounded.py` compares them).

A cache bounds its memory by a budget of rows (or of entries) rather than by a count of
keys, because one entry may hold a handful of rows and the next a million (least recently
used out); a value larger than the whole budget is returned but not kept. Caching only: a
hit returns the object a miss would have stored, so nothing computed through a cache
depends on what it holds.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from functools import update_wrapper
from typing import Any, Generic, TypeVar

V = TypeVar("V")
F = TypeVar("F", bound=Callable[..., Any])

_MISSING: Any = object()


class BoundedCache(Generic[V]):
    """Values by key, at most `budget` in total `size_of(value)` (least recently used out)."""

    def __init__(self, budget: int, size_of: Callable[[V], int] = lambda value: 1) -> None:
        self.budget = budget
        self.size_of = size_of
        self.held = 0  # total size of the values held
        self.items: OrderedDict[Hashable, V] = OrderedDict()
        #: [hits, misses] of `get` and calls, shared by every cache of one spec (`cache_stats`)
        self.stats: list[int] = [0, 0]

    def get(self, key: Hashable) -> V | None:
        """The value stored under `key` (now the most recently used), or None."""
        value = self.items.get(key, _MISSING)
        if value is _MISSING:
            self.stats[1] += 1
            return None
        self.stats[0] += 1
        self.items.move_to_end(key)
        return value

    def put(self, key: Hashable, value: V) -> V:
        """Store `value` under `key`, evicting the least recently used values to stay within
        the budget (a value larger than the budget is not stored); the value."""
        size = self.size_of(value)
        if size > self.budget:
            return value
        old = self.items.pop(key, _MISSING)
        if old is not _MISSING:
            self.held -= self.size_of(old)
        while self.held + size > self.budget:
            _, evicted = self.items.popitem(last=False)
            self.held -= self.size_of(evicted)
        self.items[key] = value
        self.held += size
        return value

    def __call__(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value under `key` (None included), made by `make()` and stored on a miss."""
        value = self.items.get(key, _MISSING)
        if value is _MISSING:
            self.stats[1] += 1
            return self.put(key, make())
        self.stats[0] += 1
        self.items.move_to_end(key)
        return value

    def __contains__(self, key: Hashable) -> bool:
        return key in self.items

    def __len__(self) -> int:
        return len(self.items)

    def cache_clear(self) -> None:
        """Forget every value."""
        self.items.clear()
        self.held = 0


@dataclass(frozen=True)
class CacheSpec:
    """What one registered cache is: the row of docs/scaling.md's inventory.

    name      unique, dotted (`flightllm.parts`)
    owner     the module that creates and fills it
    keys      what an entry is keyed by
    budget    the most it holds, in `unit`s (least recently used out past it)
    unit      what the budget counts: "rows" (instruction rows), "entries", ...
    lifetime  how long an entry can live: "one process", "one engine", ...
    why       what it saves, measured (why it earns its place)
    """

    name: str
    owner: str
    keys: str
    budget: int
    unit: str
    lifetime: str
    why: str

    def new(self, size_of: Callable[[Any], int] | None = None) -> BoundedCache:
        """A new empty cache of this spec (one per owner instance for a per-instance cache),
        of at most `budget` in total `size_of(value)` (1 per entry by default)."""
        cache: BoundedCache = BoundedCache(self.budget, size_of or (lambda value: 1))
        cache.stats = _STATS[self.name]
        _LIVE[self.name].add(cache)
        return cache


#: every registered cache by name, in registration order
_SPECS: dict[str, CacheSpec] = {}
#: the live caches of each name (several for a per-instance cache: one per engine, ...)
_LIVE: dict[str, weakref.WeakSet[BoundedCache]] = {}
#: [hits, misses] of every cache of each name since the process started (or `reset_stats`)
_STATS: dict[str, list[int]] = {}


def declare_cache(
    name: str,
    *,
    owner: str,
    keys: str,
    budget: int,
    why: str,
    unit: str = "entries",
    lifetime: str = "one process",
) -> CacheSpec:
    """Register a cache (at import time, so the inventory lists it before any is made) and
    return its spec; `spec.new()` makes one (a per-instance cache: one per engine, ...)."""
    if name in _SPECS:
        raise ValueError(f"cache {name!r} registered twice")
    spec = _SPECS[name] = CacheSpec(name, owner, keys, budget, unit, lifetime, why)
    _LIVE[name] = weakref.WeakSet()
    _STATS[name] = [0, 0]
    return spec


def bounded_cache(
    name: str,
    *,
    owner: str,
    keys: str,
    budget: int,
    why: str,
    size_of: Callable[[Any], int] | None = None,
    unit: str = "entries",
    lifetime: str = "one process",
) -> BoundedCache:
    """A registered module-level cache (`declare_cache` and one `new()`) of at most `budget`
    in total `size_of(value)` (1 per entry by default)."""
    spec = declare_cache(name, owner=owner, keys=keys, budget=budget, why=why, unit=unit,
                         lifetime=lifetime)
    return spec.new(size_of)


def memoised(
    name: str, *, owner: str, keys: str, budget: int, why: str, lifetime: str = "one process"
) -> Callable[[F], F]:
    """Decorator: the function's results kept by its (hashable) arguments in a registered
    cache of `budget` entries; the wrapper's `cache_clear()` empties it."""

    def wrap(fn: F) -> F:
        cache = bounded_cache(name, owner=owner, keys=keys, budget=budget, why=why,
                              lifetime=lifetime)

        def memo(*args: Any, **kwargs: Any) -> Any:
            key = (args, tuple(sorted(kwargs.items()))) if kwargs else args
            return cache(key, lambda: fn(*args, **kwargs))

        wrapper = update_wrapper(memo, fn)
        wrapper.cache = cache  # type: ignore[attr-defined]
        wrapper.cache_clear = cache.cache_clear  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return wrap


def clear_caches(prefix: str = "") -> None:
    """Empty every registered cache of this process whose name starts with `prefix` (all by
    default: a cold start; results are unchanged, only recomputed)."""
    for name, live in _LIVE.items():
        if name.startswith(prefix):
            for cache in list(live):
                cache.cache_clear()


def cache_specs() -> list[CacheSpec]:
    """Every registered cache's spec, by name (the caches of modules imported so far)."""
    return sorted(_SPECS.values(), key=lambda spec: spec.name)


def cache_stats() -> dict[str, tuple[int, int]]:
    """(hits, misses) of every registered cache by name, summed over its instances, since
    the process started or `reset_stats` (benchmarks/bench_cache_hits.py)."""
    return {name: (hits, misses) for name, (hits, misses) in sorted(_STATS.items())}


def reset_stats() -> None:
    """Count every cache's hits and misses from zero."""
    for counts in _STATS.values():
        counts[0] = counts[1] = 0


def live_caches(name: str) -> list[BoundedCache]:
    """The live caches registered under `name` (one per owner instance)."""
    return list(_LIVE.get(name, ()))


def inventory_markdown(specs: list[CacheSpec] | None = None) -> str:
    """The registry as a Markdown table (docs/scaling.md, "What is cached where")."""
    rows = [
        "| cache | owner | keyed by | budget | lifetime | why |",
        "| --- | --- | --- | ---: | --- | --- |",
    ]
    for s in cache_specs() if specs is None else specs:
        unit = s.unit if s.budget != 1 else {"entries": "entry"}.get(
            s.unit, s.unit.removesuffix("s"))
        budget = f"{s.budget:,} {unit}"
        rows.append(f"| `{s.name}` | `{s.owner}` | {s.keys} | {budget} | {s.lifetime} | "
                    f"{s.why} |")
    return "\n".join(rows)
