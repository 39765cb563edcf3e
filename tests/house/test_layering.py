"""One-way layering: every fpgasim import, read from the source with `ast`, goes downwards.

Stages run config -> dataflow -> engine -> sweep -> acceptance -> solving -> studies ->
figures -> reproduce -> cli
(docs/architecture.md). A module may import its own package and any lower layer; an
import of a higher layer, or of another package on the same layer, is a back-edge and
fails. Function-local imports of fpgasim modules fail too unless they are listed in
LOCAL_IMPORTS with the reason (an optional or heavy dependency behind them).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "fpgasim"

#: Layer of each top-level module or package of fpgasim (lower imports nothing higher).
LAYERS: dict[str, int] = {
    "errors": 0,  # exceptions every layer raises
    "fileio": 0,  # atomic writes, used by every layer that writes files
    "bounded": 0,  # the bounded least-recently-used cache of the lowerings and engines
    "lists": 0,  # the comma-list splitter every list option uses
    "datafiles": 0,  # data tables (CSV, Parquet) read within stated limits
    "interrupts": 0,  # Ctrl-C held over code that must not be interrupted half-way
    "config": 1,  # schemas and loaders of boards, models, algorithms
    "dataflow": 2,  # passes as graphs, their lowering to instruction programs
    "engine": 3,  # analytic / event / fast: a pass -> Timing
    "validation": 4,  # each absolute figure's silicon check (config + engine's energy constants)
    "tree": 4,  # acceptance models and draft-tree choice (config + dataflow's TokenTree)
    "step": 5,  # one SD step's passes (verify with its tree mask, drafts), and their timing
    "simulate": 6,  # one point: verify pass and draft passes
    "sweep": 7,  # grids of points, caching, executors
    "acceptance": 8,  # measured AAT tables, the AAT log model, the acceptance rule, curves
    "heterogeneous": 8,  # the GPU+FPGA platform model (beside acceptance, independent of it)
    "solving": 9,  # rooflines, the solver, decisions, schedules, the accounting's cross-check
    "studies": 10,  # explore, generate, the algorithm comparison (over many solves)
    "figures": 11,  # every plot (reads the solving and studies results)
    "reproduce": 12,  # the paper's experiments
    "cli": 13,  # the typer commands, and `fpgasim validate` (knows every file format)
    "__main__": 14,
    "__init__": 0,  # fpgasim/__init__.py: only __version__, imports nothing
}

#: (module, imported module) -> why the import stays inside a function.
LOCAL_IMPORTS: dict[tuple[str, str], str] = {
    ("fpgasim.dataflow.lowerings.flightllm.flightllm_cluster",
     "fpgasim.dataflow.lowerings.flightllm.flightllm_lowering"): (
        "a cycle: the FlightLLM lowering imports the cluster module to split a pass, and the "
        "cluster's link time and pipeline stages read the lowering's hardware layers and parts"
    ),
    ("fpgasim.dataflow.lowerings.flightllm.flightllm_cluster",
     "fpgasim.dataflow.lowerings.flightllm.part_plan"): (
        "imported beside flightllm_lowering's names (the same cycle), where a pipeline's "
        "stages are planned"
    ),
    ("fpgasim.cli.tree_cmd", "fpgasim.tree.calibrate"): (
        "imports scipy.optimize (about 0.3 s); only `fpgasim tree calibrate` needs it, and "
        "the module of `fpgasim tree` serves every tree subcommand"
    ),
    ("fpgasim.config.hf", "fpgasim.config.loader"): (
        "a cycle: config.loader reads a Hugging Face config.json through config.hf, which "
        "validates the model it builds with loader.validate_mapping (one validation path)"
    ),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str | None = None) -> list[tuple[str, int, bool]]:
    """(imported fpgasim module, line, inside a function?) of every import in the file.

    `module` is the file's dotted name (default: from its place in the package).
    """
    tree = ast.parse(path.read_text())
    out: list[tuple[str, int, bool]] = []
    package = module or _module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]

    def visit(node: ast.AST, local: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.split(".")[0] == "fpgasim":
                        out.append((alias.name, child.lineno, local))
            elif isinstance(child, ast.ImportFrom):
                if child.level:  # relative: resolve against the package
                    base = package.split(".")
                    base = base[: len(base) - child.level + 1]
                    name = ".".join(base + ([child.module] if child.module else []))
                else:
                    name = child.module or ""
                if name.split(".")[0] == "fpgasim":
                    if name == "fpgasim" or (child.module is None and child.level):
                        # `from fpgasim import x` / `from . import x`: x is a module
                        for alias in child.names:
                            out.append((f"{name}.{alias.name}", child.lineno, local))
                    else:
                        out.append((name, child.lineno, local))
            visit(child, inner)

    visit(tree, False)
    return out


def _layer_key(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _all_imports() -> list[tuple[str, str, int, bool]]:
    rows = []
    for path in sorted(PACKAGE.rglob("*.py")):
        me = _module_name(path)
        for target, line, local in _imports(path):
            rows.append((me, target, line, local))
    return rows


def test_every_module_has_a_layer() -> None:
    keys = {_layer_key(_module_name(p)) for p in PACKAGE.rglob("*.py")}
    assert keys <= set(LAYERS), f"add to LAYERS: {sorted(keys - set(LAYERS))}"


def test_no_back_edges() -> None:
    bad = []
    for me, target, line, _ in _all_imports():
        a, b = _layer_key(me), _layer_key(target)
        if a == b:
            continue
        if LAYERS[b] > LAYERS[a] or (LAYERS[b] == LAYERS[a] and LAYERS[a] != 0):
            bad.append(f"{me}:{line} imports {target} ({a} layer {LAYERS[a]} -> {b} {LAYERS[b]})")
    assert not bad, "back-edges:\n" + "\n".join(bad)


@pytest.mark.slow
def test_function_local_imports_are_listed_with_a_reason() -> None:
    local = {(me, target): line for me, target, line, is_local in _all_imports() if is_local}
    unlisted = [
        f"{me}:{line} imports {t} inside a function"
        for (me, t), line in local.items()
        if (me, t) not in LOCAL_IMPORTS
    ]
    assert not unlisted, "\n".join(unlisted)
    stale = [key for key in LOCAL_IMPORTS if key not in local]
    assert not stale, f"LOCAL_IMPORTS entries with no such import: {stale}"
    assert all(len(reason) > 20 for reason in LOCAL_IMPORTS.values())


@pytest.mark.slow
def test_lazy_commands_import_only_cli_modules() -> None:
    """The one import by name: `fpgasim.cli.lazy` loads a command's module when it runs.

    It is a deliberate function-local import (start-up time: docs/architecture.md), so it is
    held to the same rules: each target is an existing module of fpgasim.cli (same layer)
    defining the command, and no fpgasim module imports a command module at module level.
    """
    from fpgasim.cli.lazy import COMMANDS

    for name, spec in COMMANDS.items():
        path = PACKAGE.parent / (spec.module.replace(".", "/") + ".py")
        assert spec.module.startswith("fpgasim.cli.") and path.is_file(), (name, spec.module)
        body = ast.parse(path.read_text()).body
        defined = {n.name for n in body if isinstance(n, ast.FunctionDef)}
        defined |= {t.id for n in body if isinstance(n, ast.Assign) for t in n.targets
                    if isinstance(t, ast.Name)}
        assert spec.attribute in defined, (name, spec.module, spec.attribute)
    modules = {spec.module for spec in COMMANDS.values()}
    eager = [f"{me}:{line} imports {target}" for me, target, line, local in _all_imports()
             if not local and target in modules]
    assert not eager, f"command modules imported at module level (defeats lazy loading): {eager}"


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from fpgasim.cli import main\n", [("fpgasim.cli", 1, False)]),
        ("def f():\n    import fpgasim.acceptance.measured\n",
         [("fpgasim.acceptance.measured", 2, True)]),
        ("from . import measured\n", [("fpgasim.acceptance.measured", 1, False)]),
        (
            "class A:\n    def m(self):\n        from fpgasim import sweep\n",
            [("fpgasim.sweep", 3, True)],
        ),
    ],
)
def test_the_import_reader_sees_every_form(tmp_path: Path, source: str, expected) -> None:
    # the checks above are only as good as this reader: relative, aliased and nested forms
    path = tmp_path / "probe.py"
    path.write_text(source)
    assert _imports(path, "fpgasim.acceptance.probe") == expected


# --------------------------------------------------------------------------- citations

REPO = PACKAGE.parent
#: Where the repository's prose lives: code comments and docstrings, YAML comments, docs.
CITING = ("fpgasim", "boards", "workloads", "platforms", "docs", "tests", "benchmarks")
SPEC_CITATION = re.compile(
    r"(FLIGHTLLM|HARDWARE|ACCOUNTING|METHOD|MODELS|TABLES|DESIGN|STYLE)\.md|shared/"
)


def spec_citations(root: Path) -> list[str]:
    """Lines under `root` that cite a specification file or `../shared` (not in the repo)."""
    found = []
    files = [root / "README.md"] + [p for d in CITING for p in sorted((root / d).rglob("*"))]
    for path in files:
        if path.suffix not in (".py", ".md", ".yaml", ".yml", ".csv", ".txt") or path == THIS:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if SPEC_CITATION.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()[:100]}")
    return found


THIS = Path(__file__).resolve()


def test_no_citation_of_files_outside_the_repository() -> None:
    """A user who clones fpgasim has no ../shared: cite docs/ sections instead."""
    assert spec_citations(REPO) == []


def test_the_citation_check_sees_a_spec_name(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("fine\n")
    (tmp_path / "docs" / "a.md").write_text("see FLIGHTLLM.md 4.2\n")
    (tmp_path / "docs" / "b.yaml").write_text("x: 1  # [F] ../shared/spec/HARDWARE.md\n")
    assert [c.split(":")[0] for c in spec_citations(tmp_path)] == ["docs/a.md", "docs/b.yaml"]


#: a command-line flag inside a string: `--` and a lower-case word (not `--` or `---:`)
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants of a module, class or function."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _flag_strings(source: str) -> list[tuple[int, str]]:
    """(line, flag) of every flag in a string literal of the source, docstrings aside (they
    may say which command uses a function)."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    return [
        (node.lineno, flag)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
        for flag in FLAG.findall(node.value)
    ]


@pytest.mark.slow
def test_no_flag_strings_below_the_cli() -> None:
    # errors below cli/ name fields (`verify_len`); the CLI maps them to its flags
    bad = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {flag}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if _layer_key(_module_name(path)) not in ("cli", "__main__")
        for line, flag in _flag_strings(path.read_text())
    ]
    assert not bad, "flag strings below cli/ (raise the field name instead):\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "source, expected",
    [
        ('raise InputError("--context", 1, "x")\n', [(1, "--context")]),
        ('f"only with --executor {name}"\n', [(1, "--executor")]),
        ('ax.plot(ls="--")\nrow = "---:"\n', []),
        ('def f():\n    """Used by --dump-graph."""\n', []),
    ],
)
def test_the_flag_reader_sees_flags_in_literals_only(source: str, expected) -> None:
    assert _flag_strings(source) == expected
