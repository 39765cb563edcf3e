"""matplotlib is imported in one package, `fpgasim.figures` (`style` loads it and holds the
shared panels and captions, `plots` draws the commands' figures): no other module imports
it (`fileio.write_figure` only closes the figure it saves; each experiment kind draws its
figure through `figures.style`), and every command that draws calls a function of
`figures.plots`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "fpgasim"
FIGURES = PACKAGE / "figures"
PLOT = FIGURES / "plots.py"
STYLE = FIGURES / "style.py"
#: Modules that may import matplotlib without drawing, and why.
SAVERS = {PACKAGE / "fileio.py": "write_figure closes the figure it saved (pyplot.close)"}
#: The modules of the commands that draw a figure (solve draws in its output module).
DRAWING_COMMANDS = ("solve_output", "generate_cmd", "explore_cmd", "compare_cmd", "tree_cmd")


def _imports(path: Path) -> set[str]:
    """Every module name imported anywhere in the file (functions included)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.slow
def test_only_the_figures_package_imports_matplotlib() -> None:
    drawing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if any(n.split(".")[0] == "matplotlib" for n in _imports(path)):
            drawing.append(path)
    assert {PLOT, STYLE} <= set(drawing)
    outside = {p for p in drawing if FIGURES not in p.parents}
    assert outside <= set(SAVERS), [str(p) for p in outside]


def test_every_kind_figure_draws_through_the_style_module() -> None:
    from fpgasim.reproduce import experiment_kinds

    for kind in experiment_kinds().values():
        if kind.plot is not None:
            module = PACKAGE.parent / (kind.plot.__module__.replace(".", "/") + ".py")
            assert "fpgasim.figures" in _imports(module), kind.name


def test_every_drawing_command_uses_the_plotting_module() -> None:
    for name in DRAWING_COMMANDS:
        assert "fpgasim.figures.plots" in _imports(PACKAGE / "cli" / f"{name}.py"), name
