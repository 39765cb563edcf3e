"""The `fast` engine: identical cycles to `event`, ideal grid vs analytic, monotonicity."""

from __future__ import annotations

import numpy as np
import pytest
from fpgasim.dataflow.lowerings.study import lower

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.schema import Buffers, Padding, PeArray, TargetModel
from fpgasim.dataflow.instructions import full
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.analytic import AnalyticEngine
from fpgasim.engine.event import EventEngine
from fpgasim.engine.fast import FastEngine, run_loop

LLAMA = load_model("llama-3.1-8b")
BOARDS = {name: load_board(name) for name in ("u280", "vhk158", "v80", "u250")}
ALGOS = {name: load_algorithm(name) for name in ("longspec", "eagle3", "falcon")}
KINDS = ("target", "longspec", "eagle3", "falcon")


def random_case(rng: np.random.Generator):
    """A small random (board, model, pass) with an optional random token tree."""
    board = BOARDS[str(rng.choice(sorted(BOARDS)))]
    head_dim = int(rng.choice([32, 64, 128]))
    heads = int(rng.choice([2, 4, 8]))
    kv_heads = int(rng.choice([k for k in (1, 2, 4, 8) if heads % k == 0]))
    hidden = head_dim * heads
    model = TargetModel(
        id="random",
        hidden=hidden,
        intermediate=hidden * int(rng.integers(2, 5)),
        layers=int(rng.integers(1, 12)),
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        vocab=int(rng.integers(500, 5000)),
        params_b=0.1,
    )
    board = board.model_copy(
        update={
            "buffers": Buffers(
                weight_kib=int(rng.integers(64, 2048)),
                activation_kib=int(rng.integers(64, 1024)),
                prefetch_depth=int(rng.integers(1, 4)),
            ),
            "pe_array": PeArray(rows=int(rng.choice([16, 32, 64])), cols=int(rng.choice([16, 48]))),
            "mv_macs_per_cycle": int(rng.choice([64, 256])),
            "padding": Padding(
                mm_token_multiple=int(rng.choice([1, 4, 16])),
                decode_multiple=16,
                prefill_multiple=128,
            ),
            "overlap": str(rng.choice(["realistic", "realistic", "ideal"])),
        }
    )
    x = int(rng.integers(1, 40))
    context = int(rng.integers(1, 3000))
    kind = str(rng.choice(KINDS))
    drafter = ALGOS[kind].drafter if kind in ALGOS else None
    parents = None
    if rng.random() < 0.5:
        parents = tuple([-1] + [int(rng.integers(-1, i)) for i in range(1, x)])
    spec = PassSpec(kind, x, context, first=bool(rng.random() < 0.5), tree_parents=parents)
    return board, model, spec, drafter


def test_fast_equals_event_on_random_cases() -> None:
    rng = np.random.default_rng(20240501)
    windowed = 0
    for case in range(240):
        board, model, spec, drafter = random_case(rng)
        event = EventEngine(window_layers=(3, 5))  # windowed (when proven) ...
        fast = FastEngine()  # ... against every layer simulated
        got = event.run_pass(spec, board, model, drafter)
        want = fast.run_pass(spec, board, model, drafter)
        assert got.cycles == want.cycles, (case, board.name, model, spec)
        assert got == want
        windowed += event.last_method.startswith("window")
    assert windowed >= 20  # the extrapolation path is exercised too


@pytest.mark.parametrize(
    ("board", "kind", "x", "context"),
    [("u280", "target", 16, 1024), ("v80", "longspec", 4, 16384), ("u250", "eagle3", 1, 300)],
)
def test_same_schedule_instruction_by_instruction(board, kind, x, context) -> None:
    drafter = ALGOS[kind].drafter if kind in ALGOS else None
    prog = full(lower(PassSpec(kind, x, context, first=True), BOARDS[board], LLAMA, drafter))
    a = EventEngine().simulate(prog)
    b = FastEngine().simulate(prog)
    assert (a.start == b.start).all() and (a.finish == b.finish).all()
    if kind != "target":  # the uncompiled loop is slow; one short program suffices
        c = run_loop(prog, compiled=False)
        assert (c.start == b.start).all() and (c.finish == b.finish).all()


def test_ideal_grid_matches_analytic_within_half_a_percent() -> None:
    fast, analytic = FastEngine(), AnalyticEngine()
    worst = 0.0
    for board in BOARDS.values():
        b = board.model_copy(update={"overlap": "ideal"})
        for context in (128, 1024, 16384):
            for x in (1, 2, 4, 8, 16, 32, 64, 85):
                for kind, algo, first in (
                    ("target", None, False),
                    ("longspec", "longspec", False),
                    ("eagle3", "eagle3", True),
                    ("eagle3", "eagle3", False),
                ):
                    drafter = ALGOS[algo].drafter if algo else None
                    spec = PassSpec(kind, x, context, first=first)
                    got = fast.run_pass(spec, b, LLAMA, drafter).cycles
                    want = analytic.run_pass(spec, b, LLAMA, drafter).cycles
                    worst = max(worst, abs(got / want - 1))
    assert worst < 0.005


@pytest.mark.parametrize("board", ["u280", "v80"])
@pytest.mark.parametrize("kind", ["target", "longspec"])
def test_monotonic_in_x_and_context(board: str, kind: str) -> None:
    fast = FastEngine()
    b = BOARDS[board]
    drafter = ALGOS[kind].drafter if kind in ALGOS else None
    for context in (1000, 16384):
        cycles = [fast.run_pass(PassSpec(kind, x, context), b, LLAMA, drafter).cycles
                  for x in range(1, 86)]  # fmt: skip
        assert cycles == sorted(cycles)
    for x in (1, 16, 85):
        cycles = [fast.run_pass(PassSpec(kind, x, c), b, LLAMA, drafter).cycles
                  for c in range(100, 20000, 1333)]  # fmt: skip
        assert cycles == sorted(cycles)


def test_fast_version_and_name() -> None:
    assert FastEngine.name == "fast" and FastEngine.version
    assert FastEngine().window is False and EventEngine().window is True
