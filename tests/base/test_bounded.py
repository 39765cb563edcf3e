"""The one cache mechanism (fpgasim.bounded): least recently used out, by the size of what it
holds, a value larger than the budget returned but not kept; every cache registered, cleared
in one place and listed in docs/scaling.md from the registry."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import fpgasim
from fpgasim.bounded import (
    BoundedCache,
    bounded_cache,
    cache_specs,
    clear_caches,
    declare_cache,
    inventory_markdown,
    live_caches,
    memoised,
)


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


# --------------------------------------------------------------------------- the registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "scaling.md"
BLOCK = re.compile(r"(<!-- BEGIN caches -->\n)(.*?)(\n<!-- END caches -->)", re.S)


def import_everything() -> None:
    """Import every fpgasim module, so every cache is registered."""
    for module in pkgutil.walk_packages(fpgasim.__path__, "fpgasim."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)


def fpgasim_inventory() -> str:
    """The table of fpgasim's own caches (not those a test registers)."""
    return inventory_markdown([s for s in cache_specs() if s.owner.startswith("fpgasim.")])


def test_the_documented_inventory_is_the_registry() -> None:
    """docs/scaling.md's table of caches is the registry rendered (regenerate it with
    `python -m tests.base.test_bounded`)."""
    import_everything()
    match = BLOCK.search(DOC.read_text())
    assert match, "docs/scaling.md has no caches block"
    assert match.group(2) == fpgasim_inventory()
    assert len(cache_specs()) >= 30


def test_no_cache_outside_the_registry() -> None:
    """No functools cache and no BoundedCache made but through the registry: a new cache
    is registered, sized and cleared with the others."""
    for path in Path(fpgasim.__file__).parent.rglob("*.py"):
        text = path.read_text()
        for banned in ("lru_cache", "functools.cache", "@cache\n", "import cache\n"):
            assert banned not in text, f"{path}: {banned.strip()}"
        if path.name != "bounded.py":
            assert "BoundedCache(" not in text, path


def test_clear_caches_empties_every_cache_of_a_name_prefix() -> None:
    made = []

    @memoised("test.square", owner=__name__, keys="n", budget=2, why="a test")
    def square(n: int, *, none: bool = False) -> int | None:
        made.append(n)
        return None if none else n * n

    other = bounded_cache("test.other", owner=__name__, keys="k", budget=3, why="a test")
    per_instance = declare_cache("test.instances", owner=__name__, keys="k", budget=3,
                                 why="a test", lifetime="one test")
    first, second = per_instance.new(), per_instance.new()
    assert square(3) == 9 and square(3) == 9 and made == [3]
    assert square(4, none=True) is None and square(4, none=True) is None and made == [3, 4]
    square(5)
    square(3)  # 3 was the least recently used of a budget of 2: made again
    assert made == [3, 4, 5, 3]
    other.put("k", 1)
    first.put("a", 1)
    second.put("b", 2)
    clear_caches("test.inst")
    assert len(first) == len(second) == 0 and len(other) == 1 and len(square.cache) == 2
    clear_caches("test.")
    assert len(other) == 0 and len(square.cache) == 0
    assert per_instance in cache_specs() and per_instance.lifetime == "one test"
    with pytest.raises(ValueError, match="registered twice"):
        declare_cache("test.other", owner=__name__, keys="k", budget=3, why="a test")


def test_a_cold_process_gives_the_numbers_of_a_warm_one() -> None:
    """Every cache emptied (`clear_caches()`), a point is simulated again to the same row,
    bit for bit: no result depends on what a cache holds."""
    from fpgasim.config import load_algorithm, load_board, load_model
    from fpgasim.engine import get_engine
    from fpgasim.simulate import Point, point_result
    from fpgasim.tree.draft_trees import default_tree

    algorithm = load_algorithm("longspec")
    tree = default_tree(algorithm)
    point = Point(load_board("flightllm-vhk158"), load_model("llama2-7b-flightllm"), 1023,
                  tree.size, algorithm, tree, 3)
    warm = point_result(get_engine("fast"), point)
    assert point_result(get_engine("fast"), point) == warm
    assert len(live_caches("flightllm.parts")[0]) > 0
    clear_caches()
    assert all(len(cache) == 0 for spec in cache_specs() for cache in live_caches(spec.name))
    assert point_result(get_engine("fast"), point) == warm


if __name__ == "__main__":  # regenerate docs/scaling.md's table of caches
    import_everything()
    DOC.write_text(BLOCK.sub(lambda m: m.group(1) + fpgasim_inventory() + m.group(3),
                             DOC.read_text()))


def test_hits_and_misses_are_counted_per_spec_over_its_instances() -> None:
    from fpgasim import bounded

    spec = bounded.declare_cache("test.counted", owner=__name__, keys="ints", budget=4,
                                 why="a test")
    try:
        a, b = spec.new(), spec.new()
        a(1, lambda: "one")  # miss
        a(1, lambda: "never")  # hit
        assert b.get(2) is None  # miss, on the other instance
        b.put(2, "two")
        assert b.get(2) == "two"  # hit
        assert bounded.cache_stats()["test.counted"] == (2, 2)
        bounded.reset_stats()
        assert bounded.cache_stats()["test.counted"] == (0, 0)
    finally:  # the registry is the documented inventory: leave it as the package made it
        for table in (bounded._SPECS, bounded._LIVE, bounded._STATS):
            table.pop("test.counted", None)
