"""One in-memory cache bounded by the size of what it holds, least recently used out.

The lowerings and the engines keep compiled rows, structures and plans between passes
(docs/scaling.md, "What is cached where"); each bounds its memory by a budget of rows (or
of entries) rather than by a count of keys, because one entry may hold a handful of rows
and the next a million. A value larger than the whole budget is returned but not kept.
Caching only: a hit returns the object a miss would have stored, so nothing computed
through one of these caches depends on what it holds.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class BoundedCache(Generic[V]):
    """Values by key, at most `budget` in total `size_of(value)` (least recently used out)."""

    def __init__(self, budget: int, size_of: Callable[[V], int] = lambda value: 1) -> None:
        self.budget = budget
        self.size_of = size_of
        self.held = 0  # total size of the values held
        self.items: OrderedDict[Hashable, V] = OrderedDict()

    def get(self, key: Hashable) -> V | None:
        """The value stored under `key` (now the most recently used), or None."""
        value = self.items.get(key)
        if value is not None:
            self.items.move_to_end(key)
        return value

    def put(self, key: Hashable, value: V) -> V:
        """Store `value` under `key`, evicting the least recently used values to stay within
        the budget (a value larger than the budget is not stored); the value."""
        size = self.size_of(value)
        if size > self.budget:
            return value
        old = self.items.pop(key, None)
        if old is not None:
            self.held -= self.size_of(old)
        while self.held + size > self.budget:
            _, evicted = self.items.popitem(last=False)
            self.held -= self.size_of(evicted)
        self.items[key] = value
        self.held += size
        return value

    def __call__(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value under `key`, made by `make()` and stored on a miss."""
        value = self.get(key)
        return value if value is not None else self.put(key, make())

    def __len__(self) -> int:
        return len(self.items)

    def cache_clear(self) -> None:
        """Forget every value."""
        self.items.clear()
        self.held = 0
