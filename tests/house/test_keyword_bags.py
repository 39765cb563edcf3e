"""No keyword bags between fpgasim's layers: typed requests travel instead.

A `**name` parameter or a `f(**mapping)` call hides what crosses a boundary: a misspelt or
unhonoured option goes through silently (issue 43's class of bug). Read with `ast`, every
`**` in a function's parameters or in a call anywhere in fpgasim fails unless it is listed
in ALLOWED (file, function, reason): passthroughs to another library's keyword API
(pandas, matplotlib, scipy, click, rich), decorators that forward whatever they wrap, and
record copies of a mapping of fields. Dict displays (`{**a, **b}`) build records, not
calls, and are not counted. A listed entry that no longer holds a `**` fails too, so the
list stays short and true.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "fpgasim"

#: (file under fpgasim/, enclosing function's qualified name) -> why the `**` stays.
ALLOWED: dict[tuple[str, str], str] = {
    ("datafiles.py", "read_table"): "pandas passthrough: read_csv's keyword options",
    ("bounded.py", "memoised.wrap.memo"): "decorator: forwards whatever the memoised "
    "function takes",
    ("tree/semantics.py", "brentq"): "scipy passthrough: scipy.optimize.brentq's arguments",
    ("figures/style.py", "draw_rooflines"): "matplotlib passthrough: a line style mapping",
    ("figures/style.py", "draw_aat_ar"): "matplotlib passthrough: the AAT and AR line styles",
    ("figures/style.py", "legend_with_twin"): "matplotlib passthrough: Axes.legend's options",
    ("reproduce/kinds/fit_table.py", "fit_table"): "pandas passthrough: DataFrame.assign "
    "of the common columns",
    ("dataflow/lowerings/flightllm/layers.py", "hardware_layers"): "record copy: one "
    "HwLayer's shared fields, then the fields that differ",
    ("step/service.py", "architecture"): "record copy: pydantic's model_construct of a model's "
    "fields with the untimed ones replaced",
    ("dataflow/graph.py", "GraphBuilder.op"): "IR node attributes: each op kind carries its "
    "own attributes, stored sorted on the node (inside one lowering, not between layers)",
    ("cli/common.py", "OutputConsole.__init__"): "rich passthrough: Console's options",
    ("cli/common.py", "OutputConsole.render_str"): "rich passthrough: render_str's options",
    ("cli/common.py", "OutputConsole.print"): "rich passthrough: Console.print's options",
    ("cli/lazy.py", "LazyGroup.__init__"): "click passthrough: Group's options",
    ("cli/options.py", "cluster_options.run"): "decorator: the command's own parameters "
    "forwarded once the cluster flags are taken",
}


def _bags(tree: ast.Module) -> set[str]:
    """Qualified names of the functions holding a `**` parameter or a `**` call argument."""
    found: set[str] = set()

    def visit(node: ast.AST, scope: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = [*scope, child.name]
                if not isinstance(child, ast.ClassDef) and child.args.kwarg is not None:
                    found.add(".".join(inner))
                visit(child, inner)
                continue
            if isinstance(child, ast.Call) and any(k.arg is None for k in child.keywords):
                found.add(".".join(scope) or "<module>")
            visit(child, scope)

    visit(tree, [])
    return found


@cache
def _all_bags() -> frozenset[tuple[str, str]]:
    return frozenset((path.relative_to(PACKAGE).as_posix(), name)
                     for path in sorted(PACKAGE.rglob("*.py"))
                     for name in _bags(ast.parse(path.read_text(encoding="utf-8"))))


@pytest.mark.slow  # parses every module: over 0.3 s on 2 loaded cores
def test_no_keyword_bag_crosses_a_layer() -> None:
    """Every `**` parameter or call in fpgasim is a listed passthrough, decorator or record
    copy; an option between layers travels as a typed request (SolveOptions, EngineSpec)."""
    unlisted = sorted(_all_bags() - set(ALLOWED))
    assert not unlisted, (
        "keyword bags (**) between layers; pass a typed request instead, or list a "
        f"library passthrough in ALLOWED with its reason: {unlisted}")


@pytest.mark.slow  # parses every module: over 0.3 s on 2 loaded cores
def test_the_allow_list_names_only_bags_that_exist() -> None:
    """A listed (file, function) that no longer holds a `**` is removed from ALLOWED."""
    stale = sorted(set(ALLOWED) - _all_bags())
    assert not stale, f"ALLOWED lists functions without a **: {stale}"


def test_the_checker_sees_both_kinds_of_bag() -> None:
    """The AST walk finds a `**` parameter and a `**` call, and not a dict display."""
    tree = ast.parse("def f(a, **options):\n    return g(**options)\n"
                     "def h(x):\n    return {**x, 'y': 1}\n"
                     "class C:\n    def m(self):\n        return k(**self.d)\n")
    assert _bags(tree) == {"f", "C.m"}
