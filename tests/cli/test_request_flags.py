"""The typed requests and the flags that build them agree, and a flag means one thing.

1. Every field of a request the CLI builds from its flags (`SolveOptions` from `fpgasim
   solve`, `SimulateFlags` from `fpgasim simulate`) has a flag of that field's name in the
   command, or a listed alias, or is listed as library-only with the reason.
2. Two commands declaring one flag give it the same help and the same default, unless the
   flag is listed in HELP_DIFFERS / DEFAULT_DIFFERS with the reason (a flag's help that
   says what it does in that command). A new shared flag that disagrees fails until it is
   declared once or its difference is listed; a listed flag that now agrees fails too.
"""

from __future__ import annotations

import dataclasses
from functools import cache

import pytest
import typer

from fpgasim.cli import app
from fpgasim.cli.simulate_cmd import SimulateFlags
from fpgasim.solving.solver import SolveOptions

#: loads every command's options: over 0.3 s on 2 loaded cores
pytestmark = pytest.mark.slow

#: field -> flag where the flag is not the field's name with dashes
ALIASES = {"tasks": "--task", "output_format": "--format"}
#: request fields no flag of the command sets, and why
LIBRARY_ONLY = {
    (SolveOptions, "beyond_window"): "the study's experiments that ran past the model's "
    "window (reproduce sets it); a user's solve is held to the window",
}

#: flags whose help differs between commands, and why
HELP_DIFFERS = {
    "--aat": "reproduce: the AAT source; tree optimal: an expected AAT to scale to",
    "--aat-dir": "each command says how it reads the tables",
    "--aat-source": "the sources each command offers differ",
    "--accepted": "simulate: one point; sweep: a grid axis",
    "--algorithm": "the algorithms each command takes and what it does with them",
    "--algorithms": "compare-algorithms: the list compared; explore: the drafters explored",
    "--batch": "one batch (simulate, generate) or a list (solve, sweep, explore)",
    "--board": "sweep/explore take lists; tree optimal only for --objective throughput",
    "--cache-dir": "cache info/clear read it; sweep/explore write it",
    "--context": "hetero, simulate and the tree commands each bound it differently",
    "--contexts": "each command's example",
    "--depth": "hetero: Dovetail's tree depth; simulate: EAGLE-3's draft depth",
    "--design": "design fit names the design to fit; the others pair it with --fpga",
    "--engine": "each command's default and why (fast where thousands of passes are timed)",
    "--executor": "issue 39 branch (i39cli declares sweep's and explore's flags once)",
    "--format": "each command says what its table, JSON and CSV hold",
    "--fpga": "design fit names the part to fit on; the others pair it with --design",
    "--max-tree": "tree compare and tree search bound different searches",
    "--model": "each command's example model",
    "--objective": "solve: throughput or energy; tree optimal: aat or throughput",
    "--out": "what each command writes",
    "--plot": "what each command's figure shows",
    "--prompt-len": "simulate: a prefill; generate: the prompt before decoding",
    "--routing": "solve's help points to simulate's",
    "--scheduler": "issue 39 branch (i39cli declares sweep's and explore's flags once)",
    "--task": "solve takes several tasks; the others one",
    "--vary": "design fit, sweep and explore vary different files",
    "--verify-lens": "sweep: the x axis; explore: the x searched",
}
#: flags whose default differs between commands, and why
DEFAULT_DIFFERS = {
    "--aat": "reproduce: measured; tree optimal: none",
    "--algorithms": "compare-algorithms compares three by default; explore every drafter",
    "--batch": "a list for solve/sweep/explore, one batch for simulate/generate",
    "--context": "hetero solve defaults to 512 (Dovetail's setting)",
    "--depth": "hetero solve defaults to Dovetail's 7",
    "--engine": "fast where thousands of passes are timed, event elsewhere",
    "--format": "boards and reproduce have their own choices",
    "--model": "required where a command has no natural default",
    "--objective": "two different choices of objective",
    "--out": "each command's default folder or file",
    "--verify-lens": "sweep: 1-85; explore: the drafter's own x",
}


def _commands(command, path=()):
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


@cache
def declared() -> dict[str, dict[str, tuple[str | None, object]]]:
    """{long flag: {command: (help, default)}} over every command of the app."""
    out: dict[str, dict[str, tuple[str | None, object]]] = {}
    for path, command in _commands(typer.main.get_command(app)):
        for param in getattr(command, "params", []):
            longs = [o for o in param.opts if o.startswith("--")]
            if longs and param.param_type_name == "option":
                out.setdefault(longs[0], {})[" ".join(path)] = (param.help, param.default)
    return out


def _flag(field: str) -> str:
    return ALIASES.get(field, "--" + field.replace("_", "-"))


def test_every_request_field_has_its_flag() -> None:
    """SolveOptions' fields are solve's flags, SimulateFlags' are simulate's."""
    flags = declared()
    for request, command in ((SolveOptions, "solve"), (SimulateFlags, "simulate")):
        for field in dataclasses.fields(request):
            if (request, field.name) in LIBRARY_ONLY:
                assert command not in flags.get(_flag(field.name), {}), field.name
                continue
            assert command in flags.get(_flag(field.name), {}), (
                f"{request.__name__}.{field.name}: `fpgasim {command}` has no "
                f"{_flag(field.name)}")


def _differs(which: int) -> set[str]:
    return {flag for flag, by in declared().items()
            if len(by) > 1 and len({repr(v[which]) for v in by.values()}) > 1}


def test_a_shared_flag_has_one_help_unless_listed() -> None:
    """A flag declared by two commands reads the same in both, or its difference is listed."""
    assert _differs(0) == set(HELP_DIFFERS), (
        f"unlisted: {sorted(_differs(0) - set(HELP_DIFFERS))}; listed but now agreeing: "
        f"{sorted(set(HELP_DIFFERS) - _differs(0))}")


def test_a_shared_flag_has_one_default_unless_listed() -> None:
    """A flag declared by two commands has one default, or its difference is listed."""
    assert _differs(1) == set(DEFAULT_DIFFERS), (
        f"unlisted: {sorted(_differs(1) - set(DEFAULT_DIFFERS))}; listed but now agreeing: "
        f"{sorted(set(DEFAULT_DIFFERS) - _differs(1))}")


def test_cluster_flags_are_declared_once() -> None:
    """--cards, --parallel and --hop-latency-us come from `cluster_options` alone: every
    command that takes them reads the same."""
    for flag in ("--cards", "--parallel", "--hop-latency-us"):
        by = declared().get(flag, {})
        assert len(by) >= 2 and len(set(by.values())) == 1, flag
