"""No two modules of fpgasim share a file name (issue 44): a name says which module it is,
in a traceback, a grep or a doc, without its package (`__init__.py` excepted)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "fpgasim"


def test_no_two_modules_share_a_name() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            where[path.name].append(path.relative_to(PACKAGE).as_posix())
    shared = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert shared == {}
