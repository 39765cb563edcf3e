"""The `event` engine: execution semantics, ideal mode vs analytic, windowing, Timing, trace."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fpgasim.dataflow.lowerings.study import lower

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.instructions import (
    INSTR_DTYPE,
    LD,
    MAX_WAIT,
    MM,
    PORT_ACT_LOAD,
    ST,
    UNIT_LD,
    UNIT_MPE,
    UNIT_ST,
    Program,
    full,
    window,
)
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine import DEFAULT_ENGINE, ENGINES, get_engine
from fpgasim.engine.analytic import AnalyticEngine
from fpgasim.engine.cycle import DeadlockError, steady_state
from fpgasim.engine.event import EventEngine, stall_counts
from fpgasim.engine.fast import FastEngine, run_loop
from fpgasim.step import service_for
from tests.cli_helpers import run_cli

LLAMA = load_model("llama-3.1-8b")
BOARDS = {name: load_board(name) for name in ("u280", "vhk158", "v80", "u250")}
LONGSPEC = load_algorithm("longspec").drafter
EAGLE3 = load_algorithm("eagle3").drafter


def mode(board: str, overlap: str):
    return BOARDS[board].model_copy(update={"overlap": overlap})


# --------------------------------------------------------------------------- semantics


def program(rows: list[dict], buffers: tuple[int, int] = (-1, -1)) -> Program:
    """A hand-written program (no layers): rows give unit, cycles and optional fields."""
    arr = np.zeros(len(rows), dtype=INSTR_DTYPE)
    arr["chan"] = arr["acq_buf"] = arr["rel_buf"] = -1
    arr["wait"] = -1
    for i, r in enumerate(rows):
        arr[i]["unit"] = r["unit"]
        arr[i]["opcode"] = {UNIT_LD: LD, UNIT_ST: ST}.get(r["unit"], MM)
        arr[i]["cycles"] = r["cycles"]
        arr[i]["chan"] = r.get("chan", -1)
        arr[i]["acq_buf"], arr[i]["acq_bytes"] = r.get("acq", (-1, 0))
        arr[i]["rel_buf"], arr[i]["rel_bytes"] = r.get("rel", (-1, 0))
        wait = list(r.get("wait", ())) + [-1] * MAX_WAIT
        arr[i]["wait"] = wait[:MAX_WAIT]
    arr.flags.writeable = False
    return Program(arr, ("op",), len(rows), 0, 0, 0, buffers, 1e6, False, "hand")


RUNNERS = {
    "event": lambda p: EventEngine().simulate(p),
    "fast": lambda p: FastEngine().simulate(p),
    "python": lambda p: run_loop(p, compiled=False),
}


@pytest.fixture(params=sorted(RUNNERS))
def runner(request):
    return RUNNERS[request.param]


def test_waits_and_in_order_queues(runner) -> None:
    sched = runner(
        program(
            [
                {"unit": UNIT_LD, "cycles": 10},
                {"unit": UNIT_MPE, "cycles": 5, "wait": (0,)},
                {"unit": UNIT_MPE, "cycles": 3},  # in order behind row 1
                {"unit": UNIT_ST, "cycles": 4, "wait": (2,)},
                {"unit": UNIT_LD, "cycles": 2},
            ]
        )
    )
    assert sched.start.tolist() == [0, 10, 15, 18, 10]
    assert sched.finish.tolist() == [10, 15, 18, 22, 12]
    assert sched.makespan == 22


def test_bounded_buffer_gives_back_pressure(runner) -> None:
    rows = [
        {"unit": UNIT_LD, "cycles": 10, "acq": (0, 60)},
        {"unit": UNIT_LD, "cycles": 10, "acq": (0, 60)},  # waits for row 2 to free 60
        {"unit": UNIT_MPE, "cycles": 7, "wait": (0,), "rel": (0, 60)},
        {"unit": UNIT_MPE, "cycles": 7, "wait": (1,), "rel": (0, 60)},
    ]
    bounded = runner(program(rows, buffers=(100, -1)))
    assert bounded.start.tolist() == [0, 17, 10, 27]
    unbounded = runner(program(rows))
    assert unbounded.start.tolist() == [0, 10, 10, 20]


def test_same_cycle_tie_break_is_unit_order(runner) -> None:
    # ST has waited for buffer room since cycle 0, LD since cycle 1; both could start when
    # the MPE frees 60 bytes at cycle 6, and the room fits one of them.
    rows = [
        {"unit": UNIT_LD, "cycles": 1, "acq": (0, 60)},
        {"unit": UNIT_MPE, "cycles": 5, "wait": (0,), "rel": (0, 60)},
        {"unit": UNIT_ST, "cycles": 4, "acq": (0, 60)},
        {"unit": UNIT_LD, "cycles": 3, "acq": (0, 60)},
        {"unit": UNIT_MPE, "cycles": 2, "wait": (3,), "rel": (0, 60)},
    ]
    sched = runner(program(rows, buffers=(100, -1)))
    assert sched.start.tolist() == [0, 1, 11, 6, 9]  # LD wins cycle 6 although ST asked first


def test_a_port_serves_one_unit(runner) -> None:
    # ports are not arbitrated: a program sharing one between two units is refused
    rows = [
        {"unit": UNIT_LD, "cycles": 5, "chan": PORT_ACT_LOAD},
        {"unit": UNIT_ST, "cycles": 4, "chan": PORT_ACT_LOAD},
    ]
    with pytest.raises(ValueError, match="used by units"):
        runner(program(rows))


def test_stalls_by_kind_no_port_stalls() -> None:
    # docs/engines.md quotes these counts: waits and buffers stall units, ports never do
    for spec, board in (
        (PassSpec("target", 16, 4096), "v80"),
        (PassSpec("target", 64, 1024), "u280"),
    ):
        template = lower(spec, BOARDS[board], LLAMA)
        stalls = stall_counts(window(template, 4))
        assert stalls["port"] == 0
        assert stalls["dependency"] > 0 and stalls["buffer"] > 0
        plain = EventEngine().simulate(window(template, 4))
        assert plain.makespan == FastEngine().simulate(window(template, 4)).makespan


def test_deadlock_and_bad_rows_are_errors(runner) -> None:
    with pytest.raises(DeadlockError):
        runner(
            program(
                [
                    {"unit": UNIT_LD, "cycles": 1, "wait": (1,)},
                    {"unit": UNIT_MPE, "cycles": 1, "wait": (0,)},
                ]
            )
        )
    with pytest.raises(ValueError):
        runner(program([{"unit": UNIT_LD, "cycles": 0}]))


# --------------------------------------------------------------------------- ideal vs analytic


@pytest.mark.parametrize("board", sorted(BOARDS))
@pytest.mark.parametrize("context", [128, 16384])
def test_ideal_event_matches_analytic(board: str, context: int) -> None:
    b = mode(board, "ideal")
    event, analytic = EventEngine(), AnalyticEngine()
    for x in (1, 16, 85):
        for kind, d, first in (
            ("target", None, False),
            ("longspec", LONGSPEC, False),
            ("eagle3", EAGLE3, True),
            ("eagle3", EAGLE3, False),
        ):
            spec = PassSpec(kind, x, context, first=first)
            got = event.run_pass(spec, b, LLAMA, d)
            want = analytic.run_pass(spec, b, LLAMA, d)
            assert got.cycles == pytest.approx(want.cycles, rel=0.005)
            assert got.cycles >= max(want.ld_cycles, want.st_cycles, want.compute_cycles) - 1
            assert got.weight_bytes == want.weight_bytes
            assert got.act_load_bytes == want.act_load_bytes
            assert got.act_store_bytes == want.act_store_bytes
            assert got.sfu_cycles == 0


# --------------------------------------------------------------------------- windowing


@pytest.mark.parametrize(
    ("board", "x", "context"),
    [
        ("v80", 1, 128),
        ("v80", 16, 4096),
        ("u280", 85, 1024),
        ("u250", 8, 16384),
        ("vhk158", 33, 700),
    ],
)
def test_window_extrapolation_equals_full_simulation(board: str, x: int, context: int) -> None:
    spec = PassSpec("target", x, context)
    b = BOARDS[board]
    windowed = EventEngine()
    t = windowed.run_pass(spec, b, LLAMA)
    assert windowed.last_method.startswith("window")
    assert t.cycles == EventEngine(window=False).run_pass(spec, b, LLAMA).cycles


def test_steady_state_proof_is_refused_when_states_differ() -> None:
    # ideal mode has no waits: the load unit drifts ahead and no two layers start alike
    template = lower(PassSpec("target", 16, 1024), mode("v80", "ideal"), LLAMA)
    engine = EventEngine()
    assert steady_state(engine.simulate(full(template))) is None
    engine.run_pass(PassSpec("target", 16, 1024), mode("v80", "ideal"), LLAMA)
    assert engine.last_method == "full"


# --------------------------------------------------------------------------- realism


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_realistic_never_faster_than_ideal(board: str) -> None:
    real, ideal = EventEngine(), EventEngine()
    for context in (128, 1024, 16384):
        for x in (1, 2, 8, 16, 64, 85):
            for kind, d in (("target", None), ("longspec", LONGSPEC)):
                spec = PassSpec(kind, x, context)
                r = real.run_pass(spec, mode(board, "realistic"), LLAMA, d)
                i = ideal.run_pass(spec, mode(board, "ideal"), LLAMA, d)
                assert r.cycles >= i.cycles
                assert r.sfu_cycles > 0


def test_deterministic() -> None:
    b = BOARDS["u280"]
    spec = PassSpec("target", 24, 2048, tree_parents=tuple(range(-1, 23)))
    first = EventEngine().run_pass(spec, b, LLAMA)
    second = EventEngine().run_pass(spec, b, LLAMA)
    assert first == second
    prog = full(lower(PassSpec("longspec", 7, 3000), b, LLAMA, LONGSPEC))
    a, c = EventEngine().simulate(prog), EventEngine().simulate(prog)
    assert (a.start == c.start).all() and (a.finish == c.finish).all()


# --------------------------------------------------------------------------- results


def test_timing_fields_cache_and_utilisation(monkeypatch) -> None:
    engine = EventEngine()
    calls = []
    real = engine.simulate
    monkeypatch.setattr(engine, "simulate", lambda p: calls.append(1) or real(p))
    b = BOARDS["v80"]
    spec = PassSpec("target", 16, 1024)
    service = service_for(engine)
    t = service.run_pass(spec, b, LLAMA)
    n_calls = len(calls)
    assert service.run_pass(spec, b, LLAMA) is t and len(calls) == n_calls  # remembered
    assert engine.run_pass(spec, b, LLAMA) == t and len(calls) > n_calls  # the engine: none
    assert set(t.unit_busy_cycles) == {"LD", "ST", "MPE", "SFU"}
    assert t.ld_cycles == t.unit_busy_cycles["LD"] and t.sfu_cycles == t.unit_busy_cycles["SFU"]
    assert t.cycles >= max(t.unit_busy_cycles.values())
    assert t.bound in ("load", "store", "compute", "sfu")
    rows = service.last_utilisation
    assert [r["resource"] for r in rows[:4]] == ["LD", "ST", "MPE", "SFU"]
    assert all(0 <= r["utilisation"] <= 1 for r in rows)
    service.run_pass(PassSpec("longspec", 4, 1024), b, LLAMA, LONGSPEC)
    assert service.last_utilisation is rows  # still the verify pass
    assert engine.name == "event" and engine.version


def test_trace_is_chrome_trace_json(tmp_path) -> None:
    path = tmp_path / "trace.json"
    b = BOARDS["u280"]
    EventEngine().trace(PassSpec("target", 4, 512), b, LLAMA, path)
    data = json.loads(path.read_text())
    events = data["traceEvents"]
    lanes = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert lanes == {"LD", "ST", "MPE", "SFU"}
    spans = [e for e in events if e["ph"] == "X"]
    prog = full(lower(PassSpec("target", 4, 512), b, LLAMA))
    assert len(spans) == len(prog.instrs)
    assert all(e["dur"] > 0 and e["ts"] >= 0 and e["tid"] in range(4) for e in spans)
    end_us = max(e["ts"] + e["dur"] for e in spans)
    cycles = EventEngine(window=False).run_pass(PassSpec("target", 4, 512), b, LLAMA).cycles
    assert end_us == pytest.approx(cycles / b.clock_mhz, rel=1e-6)
    assert any(e["ph"] == "C" for e in events)  # buffer occupancy counters


def test_registry_and_cli(tmp_path, capsys) -> None:
    assert DEFAULT_ENGINE == "event"
    assert {"analytic", "event", "fast"} <= set(ENGINES)
    assert get_engine("fast").name == "fast"
    path = tmp_path / "v.json"
    res = run_cli(
        capsys, "simulate", "-b", "v80", "-m", "llama-3.1-8b", "-L", "512", "-x", "4",
        "--trace", str(path),
    )  # fmt: skip
    assert res.code == 0, res.err
    assert "per-unit utilisation" in res.out and "weight group LD" in res.out
    assert json.loads(path.read_text())["traceEvents"]
    res = run_cli(
        capsys, "simulate", "-b", "v80", "-m", "llama-3.1-8b", "-L", "512", "-x", "4",
        "--overlap", "ideal", "--format", "json",
    )  # fmt: skip
    row = json.loads(res.out)
    assert row["engine"] == "event" and row["sfu_cycles"] == 0
