"""The one bounded cache (fpgasim.bounded): least recently used out, by the size of what it
holds, a value larger than the budget returned but not kept."""

from __future__ import annotations

from fpgasim.bounded import BoundedCache


def test_evicts_least_recently_used_by_size() -> None:
    cache: BoundedCache[list[int]] = BoundedCache(5, len)
    cache.put("a", [1, 2])
    cache.put("b", [1, 2])
    assert cache.get("a") == [1, 2]  # "a" is now the most recently used
    cache.put("c", [1, 2])  # 6 > 5: "b", the least recently used, goes
    assert cache.get("b") is None and cache.get("a") == [1, 2] and cache.get("c") == [1, 2]
    assert cache.held == 4 and len(cache) == 2


def test_oversized_values_are_returned_not_kept_and_replacing_a_key_counts_once() -> None:
    cache: BoundedCache[list[int]] = BoundedCache(3, len)
    made = []
    value = cache("big", lambda: made.append(1) or [0] * 4)
    assert value == [0] * 4 and cache.get("big") is None and cache.held == 0
    assert cache("x", lambda: [7]) == [7] and cache("x", lambda: [8]) == [7]  # a hit
    cache.put("x", [9, 9])
    assert cache.held == 2 and cache.get("x") == [9, 9]
    cache.cache_clear()
    assert cache.held == 0 and len(cache) == 0
