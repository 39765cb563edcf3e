"""The `event` engine: execution semantics on hand-written programs, stalls, windowed
templates against every row simulated, determinism, Timing, trace, registry and CLI."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

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
from fpgasim.dataflow.lowerings.registry import lower
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine import DEFAULT_ENGINE, ENGINES, get_engine
from fpgasim.engine.cycle import (
    DeadlockError,
    Timeline,
    _anchor,
    affine_proof,
    extrapolated,
    steady_state,
)
from fpgasim.engine.event import EventEngine, stall_counts
from fpgasim.engine.fast import FastEngine, run_loop
from fpgasim.step import simulator_of
from tests.cli_helpers import run_cli

LLAMA = load_model("llama-3.1-8b")
LLAMA2 = load_model("llama2-7b-flightllm")
VHK158 = load_board("flightllm-vhk158")
LONGSPEC = load_algorithm("longspec").drafter
UNITS = ("LD", "ST", "MM", "MV", "MISC", "SYS")

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
    return Program(arr, ("op",), len(rows), 0, 0, 0, buffers, False, "hand")


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


@pytest.mark.parametrize(("board", "model", "spec"), [
    ("flightllm-vhk158", LLAMA2, PassSpec("target", 1, 1023)),
    ("u280", LLAMA, PassSpec("target", 16, 1024)),
])
@pytest.mark.slow
def test_stalls_by_kind_no_port_or_buffer_stalls(board: str, model, spec: PassSpec) -> None:
    """FlightLLM's programs: units wait on each other's tokens (explicit waits), never on
    buffer space (their credits are waits) or a port."""
    prog = lower(spec, load_board(board), model)
    for part in sorted(prog.parts, key=lambda p: -len(full(p).instrs))[:3]:
        whole = full(part)
        stalls = stall_counts(whole)
        assert stalls["port"] == 0 and stalls["buffer"] == 0
        assert stalls["dependency"] > 0
        assert EventEngine().simulate(whole).makespan == FastEngine().simulate(whole).makespan


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


# --------------------------------------------------------------------------- windowing


@pytest.mark.parametrize(
    ("board", "model", "x", "context", "repeats"),
    [
        ("flightllm-vhk158", LLAMA2, 1, 143, False),  # heads: loads run ahead, no state repeats
        ("flightllm-vhk158", LLAMA2, 24, 1023, True),  # MV row groups: a repeating state
        ("u280", LLAMA, 1, 4500, False),
        ("v80", LLAMA, 16, 700, True),
    ],
)
@pytest.mark.slow
def test_window_extrapolation_equals_full_simulation(board: str, model, x: int, context: int,
                                                     repeats: bool) -> None:
    """A pass's parts (templates of identical blocks, each windowed: its state repeats,
    `steady_state`, or every row's shift per block is proven, `affine_proof`) sum to the
    makespan of one simulation of every row of the pass."""
    b = load_board(board)
    spec = PassSpec("target", x, context)
    engine = EventEngine()
    t = engine.run_pass(spec, b, model)
    prog = lower(spec, b, model)
    templates = [p for p in prog.parts if p.layers == 2]
    assert templates  # some part is a template
    assert all(engine._window_proof(p) is not None for p in templates)  # every one windowed
    anchor_proofs = [steady_state(engine.simulate(window(p, 4)), _anchor(p)) for p in templates]
    assert any(proof is not None for proof in anchor_proofs) is repeats
    assert t.cycles == FastEngine().simulate(prog.concatenate()).makespan / prog.ticks_per_cycle


def hand_template(waits: bool, blocks: int = 8) -> Program:
    """A template of identical layer blocks: a 10-cycle LD, then a 5-cycle MPE row that
    waits on it (`waits`) or runs on its own."""
    rows = [{"unit": UNIT_LD, "cycles": 10}, {"unit": UNIT_MPE, "cycles": 5},
            {"unit": UNIT_LD, "cycles": 10}, {"unit": UNIT_MPE, "cycles": 5}]
    if waits:
        rows[1]["wait"], rows[3]["wait"] = (0,), (2,)
    prog = program(rows)
    return replace(prog, head_len=0, layer_len=2, layers=2, total_layers=blocks)


def test_a_steady_state_is_proven_only_when_layers_repeat() -> None:
    """With the MPE waiting on its LD, every layer starts alike: a window proves it and
    extrapolates; without the wait the LD queue drifts ahead of the MPE (the relative
    state never repeats), and the window is extrapolated by every row's proven shift
    instead (`affine_proof`). Both equal the full simulation at every block count."""
    for waits in (True, False):
        engine = EventEngine(window_layers=(4,))
        sched = engine.simulate(window(hand_template(waits), 4))
        assert (steady_state(sched, UNIT_MPE) is not None) is waits
        assert affine_proof(sched) is not None
        for blocks in (4, 5, 9, 40):
            template = hand_template(waits, blocks)
            assert engine.template_ticks(template) == (
                EventEngine().simulate(full(template)).makespan)
    assert EventEngine().simulate(full(hand_template(True))).makespan == 8 * 10 + 5
    assert EventEngine().simulate(full(hand_template(False))).makespan == 8 * 10


def shifting_template(mpe_cycles: int, blocks: int) -> Program:
    """Per block two 10-cycle loads, then an MPE row waiting on the second: the loads run
    ahead of an MPE slower than them (mpe_cycles > 20) without bound; a tail store waits on
    the last MPE row and the last load."""
    rows = [{"unit": UNIT_LD, "cycles": 3}]  # head
    for _ in range(2):
        base = len(rows)
        rows += [{"unit": UNIT_LD, "cycles": 10}, {"unit": UNIT_LD, "cycles": 10},
                 {"unit": UNIT_MPE, "cycles": mpe_cycles, "wait": (base + 1,)}]
    rows.append({"unit": UNIT_ST, "cycles": 7, "wait": (len(rows) - 1, len(rows) - 2)})
    prog = program(rows)
    return replace(prog, head_len=1, layer_len=3, layers=2, total_layers=blocks)


@pytest.mark.parametrize("mpe_cycles", [5, 20, 21, 35])
def test_the_affine_proof_extrapolates_exactly(mpe_cycles: int) -> None:
    """Loads faster, as fast as or slower than the MPE: the proven shifts extrapolate the
    window's end to the full simulation's at every block count, on both engines."""
    for engine in (EventEngine(window_layers=(3,)), FastEngine(window_layers=(3,))):
        sched = engine.simulate(window(shifting_template(mpe_cycles, 40), 3))
        proof = affine_proof(sched)
        assert proof is not None
        for blocks in (3, 4, 7, 25, 40):
            full_end = engine.simulate(full(shifting_template(mpe_cycles, blocks))).makespan
            assert extrapolated(proof, blocks - 3) == full_end


def test_the_affine_proof_refuses_what_it_cannot_prove() -> None:
    """Buffers (a row may wait for room, not only for rows), a window of fewer than three
    blocks, a row not started at its latest input's finish, and an input two blocks back
    (its shift is not measured) give no proof."""
    engine = EventEngine()
    sched = engine.simulate(window(shifting_template(35, 40), 3))
    buffered = replace(sched.program, instrs=sched.program.instrs.copy())
    buffered.instrs["acq_buf"][1] = 0
    assert affine_proof(Timeline(buffered, sched.start, sched.finish)) is None
    assert affine_proof(engine.simulate(window(shifting_template(35, 40), 2))) is None
    moved = sched.finish.copy()
    moved[-2] += 1  # the last MPE row ends later than its input allows: not this recurrence
    assert affine_proof(Timeline(sched.program, sched.start, moved)) is None
    four = engine.simulate(window(shifting_template(35, 40), 4))
    far = replace(four.program, instrs=four.program.instrs.copy())
    far.instrs["wait"][1 + 3 * 3 + 2, 1] = 1 + 1  # a last-block row on a row two blocks back
    assert affine_proof(Timeline(far, four.start, four.finish)) is None


# --------------------------------------------------------------------------- results


@pytest.mark.slow
def test_deterministic() -> None:
    spec = PassSpec("target", 24, 2047, tree_parents=tuple(range(-1, 23)))
    first = EventEngine().run_pass(spec, VHK158, LLAMA2)
    second = EventEngine().run_pass(spec, VHK158, LLAMA2)
    assert first == second
    prog = lower(PassSpec("longspec", 7, 3000), VHK158, LLAMA2, LONGSPEC).concatenate()
    a, c = EventEngine().simulate(prog), EventEngine().simulate(prog)
    assert (a.start == c.start).all() and (a.finish == c.finish).all()


def test_timing_fields_cache_and_utilisation(monkeypatch) -> None:
    engine = EventEngine()
    calls = []
    real = engine.simulate
    monkeypatch.setattr(engine, "simulate", lambda p: calls.append(1) or real(p))
    spec = PassSpec("target", 16, 1023)
    service = simulator_of(engine)
    t = service.run_pass(spec, VHK158, LLAMA2)
    n_calls = len(calls)
    assert service.run_pass(spec, VHK158, LLAMA2) is t and len(calls) == n_calls  # remembered
    engine._parts.cache_clear()
    engine._windows.cache_clear()
    assert engine.run_pass(spec, VHK158, LLAMA2) == t and len(calls) > n_calls  # recomputed
    assert tuple(t.unit_busy_cycles) == UNITS
    assert t.ld_cycles == t.unit_busy_cycles["LD"] and t.sfu_cycles == t.unit_busy_cycles["MISC"]
    assert t.compute_cycles == t.unit_busy_cycles["MM"] + t.unit_busy_cycles["MV"]
    assert t.cycles >= max(t.unit_busy_cycles.values())
    assert t.bound in ("load", "store", "compute")
    rows = service.timed(spec, VHK158, LLAMA2)[1]
    assert [r["resource"] for r in rows[:6]] == list(UNITS)
    assert all(0 <= r["utilisation"] <= 1 for r in rows)
    assert engine.name == "event" and engine.version


@pytest.mark.slow
def test_trace_is_chrome_trace_json(tmp_path) -> None:
    path = tmp_path / "trace.json"
    spec = PassSpec("longspec", 4, 511)  # one decoder block: a short trace
    EventEngine().trace(spec, VHK158, LLAMA2, path, LONGSPEC)
    data = json.loads(path.read_text())
    events = data["traceEvents"]
    lanes = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert lanes == set(UNITS)
    spans = [e for e in events if e["ph"] == "X"]
    prog = lower(spec, VHK158, LLAMA2, LONGSPEC).concatenate()
    assert len(spans) == len(prog.instrs)
    # every instruction takes time but the concat layers' 0-byte stores (self-attention)
    assert sum(e["dur"] == 0 for e in spans) == 2
    assert all(e["dur"] >= 0 and e["ts"] >= 0 and e["tid"] in range(6) for e in spans)
    end_us = max(e["ts"] + e["dur"] for e in spans)
    t = FastEngine().run_pass(spec, VHK158, LLAMA2, LONGSPEC)
    assert end_us == pytest.approx(t.seconds * 1e6, rel=1e-6)  # cycles / (clock x 3.2)


@pytest.mark.slow
def test_registry_and_cli(tmp_path, capsys) -> None:
    assert DEFAULT_ENGINE == "event"
    assert {"analytic", "event", "fast"} <= set(ENGINES)
    assert get_engine("fast").name == "fast"
    path = tmp_path / "v.json"
    small = tmp_path / "small.yaml"  # two layers of LLaMA2-7B: a short trace
    small.write_text("id: small\nhidden: 4096\nintermediate: 11008\nlayers: 2\nheads: 32\n"
                     "kv_heads: 32\nhead_dim: 128\nvocab: 32000\nwindow_tokens: 4096\n")
    res = run_cli(
        capsys, "simulate", "-b", "flightllm-vhk158", "-m", str(small), "-L", "511",
        "-x", "4", "--trace", str(path),
    )  # fmt: skip
    assert res.code == 0, res.err
    assert "per-unit utilisation" in res.out
    assert all(f"│ {unit} " in res.out for unit in UNITS)
    assert json.loads(path.read_text())["traceEvents"]
    # the overlap modes went with the study lowering: the flag is refused in one line
    res = run_cli(
        capsys, "simulate", "-b", "v80", "-m", "llama-3.1-8b", "-L", "512", "-x", "4",
        "--overlap", "ideal", "--format", "json",
    )  # fmt: skip
    assert res.code == 2 and res.out == "" and "--overlap" in res.err
    assert res.err.count("\n") == 1
