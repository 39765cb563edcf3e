"""Every function of fpgasim/cli/ fits on a screen: at most 60 lines, decorators included.

A command parses its flags, builds its request, makes one library call and hands the
result to one renderer (the output modules, e.g. cli/solve_output.py); a longer function
is doing a second job that belongs in a helper or in the library. Read with `ast`;
ALLOWED lists the exceptions with their reason, and an entry that is no longer long fails,
so the list only shrinks.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parents[2] / "fpgasim" / "cli"
MAX_LINES = 60

#: (file under fpgasim/cli/, function) -> why it is longer for now.
ALLOWED: dict[tuple[str, str], str] = {
}


def function_lengths(tree: ast.Module) -> dict[str, int]:
    """{qualified name: lines from its first decorator to its last line} of every function,
    nested ones and methods included."""
    out: dict[str, int] = {}

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = [*scope, child.name]
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    out[".".join(inner)] = child.end_lineno - first + 1
                visit(child, inner)
            else:
                visit(child, scope)

    visit(tree, [])
    return out


@cache
def _long() -> dict[tuple[str, str], int]:
    return {(path.relative_to(CLI).as_posix(), name): n
            for path in sorted(CLI.rglob("*.py"))
            for name, n in function_lengths(ast.parse(path.read_text(encoding="utf-8"))).items()
            if n > MAX_LINES}


@pytest.mark.slow  # parses every module: over 0.3 s on 2 loaded cores
def test_every_cli_function_is_at_most_60_lines() -> None:
    """Parse, build the request, one call, one renderer: no CLI function over 60 lines."""
    over = {k: n for k, n in _long().items() if k not in ALLOWED}
    assert not over, (f"CLI functions over {MAX_LINES} lines (decorators included); move the "
                      f"output to an output module and the checks to the request: {over}")


@pytest.mark.slow  # parses every module: over 0.3 s on 2 loaded cores
def test_the_allow_list_names_only_long_functions() -> None:
    """A listed function that is now short enough leaves ALLOWED."""
    stale = sorted(set(ALLOWED) - set(_long()))
    assert not stale, f"ALLOWED lists functions of {MAX_LINES} lines or fewer: {stale}"


def test_decorators_count() -> None:
    """A decorator's lines count with the function it decorates, as do nested functions."""
    tree = ast.parse("@a\n@b(\n  1)\ndef f():\n    def g():\n        pass\n    return g\n")
    assert function_lengths(tree) == {"f": 7, "f.g": 2}
