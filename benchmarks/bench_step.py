"""The pass service (fpgasim.step): what a remembered pass costs against timing it, and
`generate --algorithm longspec` on a study board (issue 18's target: <= 5 s).

The first rows are the measurements behind docs/scaling.md, "What is cached where": a
service hit against an analytic, a windowed `fast` and an `event` pass. CPU seconds
(`time.process_time`), so other jobs on the machine inflate them less than wall time.
"""

from __future__ import annotations

import time

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import get_engine
from fpgasim.step import PassService, verify_spec
from fpgasim.studies.generation import generate


def _cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def run() -> list[dict]:
    board, model = load_board("v80"), load_model("llama-3.1-8b")
    specs = [verify_spec(x, 1024) for x in range(1, 17)]
    rows = []

    def row(name: str, value: float, unit: str, target: str = "", ok: object = "") -> None:
        rows.append({"benchmark": name, "value": value, "unit": unit, "target": target, "ok": ok})

    analytic = get_engine("analytic")
    service = PassService(analytic)
    for s in specs:
        service.run_pass(s, board, model)
    hits = 200
    row("pass service hit", _cpu(lambda: [service.run_pass(s, board, model)
                                          for _ in range(hits) for s in specs])
        / (hits * len(specs)) * 1e6, "us")
    row("analytic pass", _cpu(lambda: [analytic.run_pass(s, board, model)
                                       for _ in range(20) for s in specs])
        / (20 * len(specs)) * 1e6, "us")
    for name, opts in (("fast", {"window": True}), ("event", {})):
        engine = get_engine(name, **opts)
        engine.run_pass(specs[0], board, model)  # numba JIT warm-up
        row(f"{name} pass (windowed)", _cpu(lambda e=engine: [e.run_pass(s, board, model)
                                                              for s in specs])
            / len(specs) * 1e3, "ms")
    seconds = _cpu(lambda: generate(get_engine("event"), load_board("vhk158"),
                                    load_model("llama2-chat-7b"), 128, 512,
                                    algorithm=load_algorithm("longspec")))
    row("generate longspec vhk158 P=128 D=512, event", seconds, "s CPU", "<= 5 s", seconds <= 5)
    return rows
