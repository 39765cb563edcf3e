"""The lowering registry: a board's lowering is looked up by `board.lowering` (one is
registered: FlightLLM's compiler, generalised), and the engines total busy time by unit
role, never by a unit's name."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fpgasim.config import load_board, load_model
from fpgasim.config.board import Board
from fpgasim.dataflow.instructions import ROLES, Executable
from fpgasim.dataflow.lowerings import flightllm
from fpgasim.dataflow.lowerings.registry import LOWERINGS, Lowering, lower, lowering_of
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.event import EventEngine
from fpgasim.engine.fast import FastEngine
from fpgasim.errors import ConfigError

LLAMA = load_model("llama-3.1-8b")
LLAMA2 = load_model("llama2-7b-flightllm")


def test_the_lowerings_are_registered_and_named_by_the_design() -> None:
    from fpgasim.config.board_loader import board_of

    assert sorted(LOWERINGS) == ["dfx", "flightllm"]
    assert all(load_board(b).lowering == "flightllm" for b in ("u280", "flightllm-vhk158"))
    assert board_of("u280", "dfx").lowering == "dfx"


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


NAMES = ("A", "B", "C", "D", "E", "F")


def _renamed(spec, board, model, drafter=None) -> Executable:
    """FlightLLM's program on units named A-F: names are labels, roles carry the meaning."""
    prog = flightllm.lower(spec, board, model, drafter)
    parts = tuple(replace(p, unit_names=NAMES, facts=None) for p in prog.parts)
    return Executable(parts=parts, order=prog.order, label=prog.label,
                      unit_roles=prog.unit_roles)


@pytest.mark.parametrize("engine", [EventEngine, FastEngine])
def test_engines_total_by_role_not_by_name(monkeypatch, engine) -> None:
    board = load_board("flightllm-vhk158")
    spec = PassSpec("target", 16, 1023)
    want = engine().run_pass(spec, board, LLAMA2)
    assert set(want.unit_busy_cycles) == {"LD", "ST", "MM", "MV", "MISC", "SYS"}
    renamed = replace(LOWERINGS["flightllm"], build=_renamed)
    assert isinstance(renamed, Lowering)
    monkeypatch.setitem(LOWERINGS, "flightllm", renamed)
    got = engine().run_pass(spec, board, LLAMA2)
    assert set(got.unit_busy_cycles) == set(NAMES)
    assert list(got.unit_busy_cycles.values()) == list(want.unit_busy_cycles.values())
    assert replace(got, unit_busy_cycles={}) == replace(want, unit_busy_cycles={})


def test_an_unregistered_lowering_is_one_config_error(monkeypatch) -> None:
    board = load_board("u280")
    monkeypatch.setattr(Board, "lowering", property(lambda self: "study"))
    with pytest.raises(ConfigError, match="lowering = 'study': one of dfx, flightllm$"):
        lower(PassSpec("target", 1, 128), board, LLAMA)


def test_a_buffer_too_small_names_the_board_field() -> None:
    tiny = load_board("u280", [("design.buffers.meta", 8)])
    with pytest.raises(ConfigError, match=r"^board u280 meta=8: buffers.meta = 8: at least 16"):
        lower(PassSpec("target", 1, 128), tiny, LLAMA)
