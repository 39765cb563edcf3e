"""The result cache's honesty and size limit cost: store, read-and-verify, and evict rows.

A sweep row (~700 bytes of JSON) is stored 20,000 times under distinct keys; reading them
back verifies every row's SHA-256 checksum. A third run keeps a 1 MiB limit while storing
8 MB of rows, so most puts evict. Targets: checksums and LRU bookkeeping stay far below the
simulation time of a point (the analytic engine: ~1 ms per point).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import get_engine
from fpgasim.simulate import Point, simulate_point
from fpgasim.sweep import SweepCache
from fpgasim.tree.draft_trees import tree_for_verify_len

ROWS = 20_000


def run() -> list[dict]:
    algo = load_algorithm("longspec")
    point = Point(load_board("u280"), load_model("llama-3.1-8b"), 1024, 17, algo,
                  tree_for_verify_len(algo, 17, "width"), 3)
    row = simulate_point(get_engine("analytic"), point)
    items = [(f"{i:064x}", "analytic", row) for i in range(ROWS)]
    with tempfile.TemporaryDirectory() as folder:
        with SweepCache(Path(folder) / "a") as cache:
            start = time.perf_counter()
            cache.put_many(items)
            put_us = (time.perf_counter() - start) / ROWS * 1e6
            start = time.perf_counter()
            found = cache.get_many([k for k, _, _ in items])
            get_us = (time.perf_counter() - start) / ROWS * 1e6
            assert len(found) == ROWS and cache.refused == 0
        with SweepCache(Path(folder) / "b", limit_mb=1) as cache:
            start = time.perf_counter()
            for chunk in range(0, ROWS // 2, 256):
                cache.put_many(items[chunk : chunk + 256])
            evict_us = (time.perf_counter() - start) / (ROWS // 2) * 1e6
            info = cache.info()
    return [
        {"benchmark": "cache store (per row)", "value": put_us, "unit": "us",
         "target": "<= 200 us", "ok": put_us <= 200},
        {"benchmark": "cache read + checksum (per row)", "value": get_us, "unit": "us",
         "target": "<= 200 us", "ok": get_us <= 200},
        {"benchmark": "cache store under a 1 MiB limit (per row)", "value": evict_us,
         "unit": "us", "target": "<= 500 us", "ok": evict_us <= 500},
        {"benchmark": "cache file / row bytes at the limit", "value":
         info.size_bytes / max(1, info.row_bytes), "unit": "x", "target": "<= 3",
         "ok": info.size_bytes <= 3 * info.row_bytes},
    ]
