"""State is explicit (issue 44): no object of fpgasim gets attributes set from outside its
own constructor. A program's derived facts are a frozen record its lowering builds
(`ProgramFacts`), never a mutable bag written by whoever reads it first (`Program.derived`,
`Program.memo` before it); an engine's pass service is owned by one `Simulator`, never set
on the engine (`setattr(engine, "_pass_service", ...)`) or found by the engine's id. Read
from the source with `ast`, so a comment or a docstring naming them does not count."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from fpgasim.config import load_board, load_model
from fpgasim.dataflow.instructions import Program, ProgramFacts, RowStructure, window
from fpgasim.dataflow.lowerings.flightllm import lower
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.fast import FastEngine

PACKAGE = Path(__file__).resolve().parents[2] / "fpgasim"
#: attributes that were hidden state: a program's mutable bags and an engine's service
BANNED_ATTRIBUTES = {"derived", "memo", "_pass_service"}
#: constructors, where a frozen dataclass sets its own derived fields
#: (`object.__setattr__(self, ...)`, the idiom for `field(init=False)`)
CONSTRUCTORS = {"__init__", "__post_init__"}
#: functions outside a constructor that still set a field of their own frozen object, and
#: why they stay (none may set one on an engine or a program)
ALLOWED = {
    ("dataflow/graph.py", "_dependencies"): "a Graph's dependencies, set on first use on "
    "the graph itself and shared per structure (`graph.dependencies`); no engine or "
    "program is involved",
}


def _offences(path: Path, root: Path = PACKAGE, text: str | None = None) -> list[str]:
    """Each banned attribute read or written, each `setattr(...)` and each
    `__setattr__(...)` outside a constructor (or `ALLOWED`), in a file."""
    where = path.relative_to(root).as_posix()
    out = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node.name
        if isinstance(node, ast.Attribute) and node.attr in BANNED_ATTRIBUTES:
            out.append(f"{where}:{node.lineno} .{node.attr}")
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "setattr":
                out.append(f"{where}:{node.lineno} setattr(...)")
            elif (isinstance(func, ast.Attribute) and func.attr == "__setattr__"
                  and function not in CONSTRUCTORS and (where, function) not in ALLOWED):
                out.append(f"{where}:{node.lineno} __setattr__(...) in {function}")
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(ast.parse(path.read_text() if text is None else text), "")
    return out


def test_no_hidden_state_in_the_source() -> None:
    """No `.derived`, `.memo` or `._pass_service`, no `setattr(`, and no
    `object.__setattr__(` outside a constructor anywhere in the package."""
    # parsed where the text names one of them (the rest cannot hold one)
    named = re.compile(r"\.(" + "|".join(BANNED_ATTRIBUTES) + r")\b|setattr")
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        if named.search(text):
            offences += _offences(path, PACKAGE, text)
    assert offences == []


def test_the_scan_finds_what_it_bans(tmp_path: Path) -> None:
    """The scan is not vacuous: each banned form in a file is reported."""
    sample = tmp_path / "sample.py"
    sample.write_text("def f(p, e, s):\n    p.derived.x = 1\n    e.memo\n"
                      "    setattr(e, '_pass_service', s)\n"
                      "    object.__setattr__(p, 'facts', s)\n"
                      "class C:\n    def __post_init__(self):\n"
                      "        object.__setattr__(self, 'x', 1)\n")
    assert len(_offences(sample, tmp_path)) == 4  # a constructor's own field is not one


def test_programs_and_their_facts_are_frozen() -> None:
    """A program, its facts and its row structure refuse assignment; a compiled part's
    totals are read-only; a program built from another (a window) does not keep facts that
    no longer hold, and a program refuses facts of another shape."""
    for cls in (Program, ProgramFacts, RowStructure):
        assert cls.__dataclass_params__.frozen, cls.__name__
    exe = lower(PassSpec("target", 16, 700), load_board("flightllm-vhk158"),
                load_model("llama2-7b-flightllm"))
    part = next(p for p in exe.parts if p.total_layers > p.layers)  # a template part
    assert part.facts is not None and part.facts.structure is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        part.facts = None  # type: ignore[misc]
    with pytest.raises(TypeError):
        part.facts.totals["busy_LD"] = 0  # type: ignore[index]
    assert window(part, part.total_layers).facts is None
    for change in ({"total_layers": part.total_layers + 1}, {"unit_names": tuple("ABCDEF")}):
        with pytest.raises(ValueError, match="facts of"):
            dataclasses.replace(part, **change)


@pytest.mark.slow
def test_engines_carry_no_service() -> None:
    """A simulator times passes on an engine that refuses any attribute set after its
    construction: nothing is set on it, and its passes are remembered by the simulator."""
    from fpgasim.simulate import verify_timing
    from fpgasim.step import Simulator, verify_spec

    class Sealed(FastEngine):
        """A cycle engine that refuses attributes once built."""

        def __init__(self) -> None:
            super().__init__()
            self._sealed = True

        def __setattr__(self, name: str, value: object) -> None:
            if getattr(self, "_sealed", False):
                raise AssertionError(f"attribute {name} set on an engine")
            super().__setattr__(name, value)

    sim = Simulator(Sealed())
    board, model = load_board("flightllm-vhk158"), load_model("llama2-7b-flightllm")
    first = verify_timing(sim, board, model, 2, 64)
    assert verify_timing(sim, board, model, 2, 64) is first and sim.remembered == 1
    assert first.cycles == FastEngine().run_pass(verify_spec(2, 64), board, model).cycles
