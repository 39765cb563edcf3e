"""The lowering registry: lowerings are peers chosen by `board.lowering`, and the engines
total busy time by unit role, never by a unit's name."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fpgasim.config import load_board, load_model
from fpgasim.dataflow.instructions import ROLES, Executable
from fpgasim.dataflow.lowerings import study
from fpgasim.dataflow.lowerings.registry import LOWERINGS, Lowering, lower, lowering_of
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.event import EventEngine
from fpgasim.engine.fast import FastEngine
from fpgasim.errors import ConfigError

LLAMA = load_model("llama-3.1-8b")


@pytest.mark.parametrize(
    "board, model, spec",
    [
        ("u280", "llama-3.1-8b", PassSpec("target", 4, 1024)),
        ("flightllm-vhk158", "llama2-7b-flightllm", PassSpec("target", 1, 255)),
    ],
)
def test_every_lowering_returns_an_executable_with_a_role_per_unit(board, model, spec) -> None:
    b = load_board(board)
    prog = lower(spec, b, load_model(model))
    assert isinstance(prog, Executable) and lowering_of(b).name == b.lowering
    assert len(prog.unit_roles) == len(prog.unit_names) and set(prog.unit_roles) <= set(ROLES)
    t = FastEngine().run_pass(spec, b, load_model(model))
    busy = t.unit_busy_cycles
    for role, total in (("load", t.ld_cycles), ("store", t.st_cycles),
                        ("compute", t.compute_cycles), ("special-function", t.sfu_cycles)):
        assert total == sum(busy[prog.unit_names[u]] for u in prog.units_of(role))


def _renamed(spec, board, model, drafter=None) -> Executable:
    """The study program on units named A-D: names are labels, roles carry the meaning."""
    prog = study.lower(spec, board, model, drafter)
    return Executable.of_program(replace(prog, unit_names=("A", "B", "C", "D")))


@pytest.mark.parametrize("engine", [EventEngine, FastEngine])
def test_engines_total_by_role_not_by_name(monkeypatch, engine) -> None:
    board = load_board("u280")
    spec = PassSpec("target", 16, 2048)
    want = engine().run_pass(spec, board, LLAMA)
    renamed = Lowering("study", _renamed, study_accounting=True, causal_prefill=True)
    monkeypatch.setitem(LOWERINGS, "study", renamed)
    got = engine().run_pass(spec, board, LLAMA)
    assert set(got.unit_busy_cycles) == {"A", "B", "C", "D"}
    assert list(got.unit_busy_cycles.values()) == list(want.unit_busy_cycles.values())
    assert replace(got, unit_busy_cycles={}) == replace(want, unit_busy_cycles={})


def test_an_unregistered_lowering_is_one_config_error(monkeypatch) -> None:
    board = load_board("u280")
    monkeypatch.delitem(LOWERINGS, "study")
    with pytest.raises(ConfigError, match="lowering = 'study': one of flightllm"):
        lower(PassSpec("target", 1, 128), board, LLAMA)


def test_a_buffer_too_small_names_the_board_field() -> None:
    board = load_board("u280")
    buffers = board.buffers.model_copy(update={"activation_kib": 1})
    tiny = board.model_copy(update={"buffers": buffers})
    with pytest.raises(ConfigError, match=r"board u280: buffers.activation_kib = 1: the act"):
        lower(PassSpec("target", 1, 128), tiny, LLAMA)
