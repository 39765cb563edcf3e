"""Tree benchmarks: prior-score search over 10^5 iterations, Sequoia's DP at N=128, D=10
(and the largest DP the limits accept: N=128, 128 ranks, 127 levels), and the
throughput-optimal tree search (issue 14) on V80 at L = 1024 with cached engine costs.

`run()` returns rows {benchmark, value, unit, target, ok}; timings are the best of three.
"""

from __future__ import annotations

import time

import numpy as np

from fpgasim.config import load_algorithm
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.tree.embedded import embedded_model
from fpgasim.tree.optimal import SequoiaDP
from fpgasim.tree.positional import PositionalModel, generate_traces
from fpgasim.tree.prior_score import prior_score_search

SEQUOIA = [0.6342, 0.1079, 0.0570, 0.0225, 0.0195, 0.0150, 0.0045, 0.0030, 0.0120]


def _best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def sequoia_128_ranks() -> list[float]:
    """Sequoia's 9 published ranks, then the unlisted mass (.0509) spread geometrically over 119."""
    tail = 0.97 ** np.arange(119)
    return SEQUOIA + list(tail / tail.sum() * 0.0509)


def run() -> list[dict]:
    """Time the prior-score search and the dynamic program."""
    algo = load_algorithm("longspec")
    model = embedded_model(algo)
    max_tree = TokenTree.from_shape(algo.max_tree, model)  # 84 nodes

    def search() -> None:
        traces = generate_traces(model, max_tree, 100_000, np.random.default_rng(0))
        prior_score_search(traces, max_tree).tree(max_tree.nodes)

    rows = [("prior-score search, 10^5 iterations, 84-node tree", _best_of(search), 1.0)]
    for label, vector in [("9 ranks", SEQUOIA), ("128 ranks", sequoia_128_ranks())]:
        dp_model = PositionalModel.from_vector(vector)
        seconds = _best_of(lambda m=dp_model: SequoiaDP(m, 128, 10).tree(128))
        rows.append((f"Sequoia DP, N=128, D=10, {label}", seconds, 2.0))
    wide = PositionalModel.from_vector(sequoia_128_ranks())
    rows.append(
        (
            "Sequoia DP, N=128, 128 ranks, depth 256 (127 levels)",
            _best_of(lambda: SequoiaDP(wide, 128, 256).tree(128), repeat=1),
            10.0,
        )
    )
    rows += throughput_rows()
    return [
        {
            "benchmark": name,
            "value": value,
            "unit": "s",
            "target": f"< {limit:g} s",
            "ok": value < limit,
        }
        for name, value, limit in rows
    ]


def throughput_rows() -> list[tuple[str, float, float]]:
    """Throughput search, V80, L = 1024, fast engine: engine passes first, then the search
    alone on cached costs (overall best, and the exact per-x curve)."""
    from fpgasim.config import load_board, load_model
    from fpgasim.engine import get_engine
    from fpgasim.solving.tree_design import EngineTreeCosts, design_trees

    rows = []
    for algorithm in ("longspec", "eagle3", "falcon"):
        algo = load_algorithm(algorithm)
        model = embedded_model(algo, 1024)
        costs = EngineTreeCosts(
            get_engine("fast"), load_board("v80"), load_model("llama-3.1-8b"), algo, 1024
        )
        start = time.perf_counter()
        design_trees(model, costs, per_size=False)
        rows.append(
            (
                f"throughput tree, {algorithm}, V80, engine passes + search",
                time.perf_counter() - start,
                30.0,
            )
        )
        rows.append(
            (
                f"throughput tree, {algorithm}, cached costs, best over all x",
                _best_of(lambda m=model, c=costs: design_trees(m, c, per_size=False)),
                5.0,
            )
        )
        if algorithm == "longspec":
            rows.append(
                (
                    f"throughput tree, {algorithm}, cached costs, exact per-x curve",
                    _best_of(lambda m=model, c=costs: design_trees(m, c, per_size=True), repeat=1),
                    30.0,
                )
            )
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
