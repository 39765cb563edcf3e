"""Every figure is drawn in one module, `fpgasim.figures.plots`: no other module imports
matplotlib (`fileio.write_figure` only closes the figure it saves), and every command that
draws calls a function of that module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "fpgasim"
PLOT = PACKAGE / "figures" / "plots.py"
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
def test_only_the_plotting_module_imports_matplotlib() -> None:
    drawing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if any(n.split(".")[0] == "matplotlib" for n in _imports(path)):
            drawing.append(path)
    assert PLOT in drawing
    assert set(drawing) - {PLOT} <= set(SAVERS), [str(p) for p in drawing]


def test_every_drawing_command_uses_the_plotting_module() -> None:
    for name in DRAWING_COMMANDS:
        assert "fpgasim.figures.plots" in _imports(PACKAGE / "cli" / f"{name}.py"), name
