"""The tests' layout (tests/README.md): one folder per package or subject, a registered
`slow` marker that keeps the inner loop short, and no test file left at the top."""

from __future__ import annotations

import tomllib
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent


def test_no_test_file_at_the_top() -> None:
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == []


def test_every_test_folder_is_a_package_named_in_the_readme() -> None:
    readme = (TESTS / "README.md").read_text()
    folders = {p.parent for p in TESTS.rglob("test_*.py")}
    for folder in folders:
        rel = folder.relative_to(TESTS).as_posix()
        assert (folder / "__init__.py").is_file(), rel
        assert f"`{rel}/`" in readme, f"tests/README.md does not name {rel}/"


def test_the_slow_marker_is_registered_strictly_and_used() -> None:
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "--strict-markers" in options["addopts"]
    assert any(m.startswith("slow:") for m in options["markers"])
    marked = [p for p in TESTS.rglob("test_*.py") if "pytest.mark.slow" in p.read_text()]
    assert len(marked) >= 10, "the slow marker is used by almost no test"
