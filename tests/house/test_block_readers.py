"""A drafter's blocks are read by one visitor per reader (issue 44, item 1): every reader
dispatches on `block.kind` (`drafters.network.read_block`), so no module of fpgasim (the
readers live in dataflow/ and heterogeneous/) tests a block's class: no
`isinstance(x, Fc)`, no `type(x) is Fc` / `type(x) in {...}`, no `case Fc():`. Read from
the source with `ast`; the block classes are those of `drafters/network.py` with a kind, so
a new block is covered."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

from fpgasim.dataflow.drafters import network

PACKAGE = Path(__file__).resolve().parents[2] / "fpgasim"
#: the block classes and the union naming them all
BLOCK_NAMES = frozenset(
    name for name, cls in vars(network).items()
    if inspect.isclass(cls) and issubclass(cls, network._Block) and cls.kind
) | {"Block"}


def _names(node: ast.AST) -> set[str]:
    """Every name or attribute named inside `node` (`network.Fc` counts as Fc)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def _is_call_of(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def class_tests(source: str) -> list[tuple[int, str]]:
    """(line, text) of each test of a block's class in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if _is_call_of(node, "isinstance") and len(node.args) == 2:
            hit = _names(node.args[1]) & BLOCK_NAMES
        elif isinstance(node, ast.Compare) and any(
                _is_call_of(side, "type") for side in (node.left, *node.comparators)):
            hit = set().union(*map(_names, (node.left, *node.comparators))) & BLOCK_NAMES
        elif isinstance(node, ast.MatchClass):
            hit = _names(node.cls) & BLOCK_NAMES
        else:
            continue
        if hit:
            found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


def test_the_detector_finds_each_form_of_a_class_test() -> None:
    chain = (
        "if isinstance(block, Fc):\n    pass\n"
        "elif isinstance(block, (network.SelfAttention, Mlp)):\n    pass\n"
        "ok = type(block) in {Lstm, Decoder}\n"
        "same = type(b) is GatedFusion\n"
        "match block:\n    case CrossAttention():\n        pass\n"
        "fine = isinstance(x, int) and type(y) is str and block.kind == 'fc'\n"
    )
    assert sorted(line for line, _ in class_tests(chain)) == [1, 3, 5, 6, 8]


def test_no_module_tests_a_blocks_class() -> None:
    named = re.compile(r"\b(" + "|".join(sorted(BLOCK_NAMES)) + r")\b")
    sources = {path: path.read_text() for path in sorted(PACKAGE.rglob("*.py"))}
    found = {str(path.relative_to(PACKAGE)): hits for path, text in sources.items()
             if named.search(text) and (hits := class_tests(text))}  # parse where named
    assert {"dataflow", "heterogeneous"} <= {p.name for p in PACKAGE.iterdir()}
    assert not found, ("these modules test a drafter block's class; read blocks with a "
                       f"visitor (drafters.network.read_block): {found}")
