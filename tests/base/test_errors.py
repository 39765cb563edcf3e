"""Every fpgasim error crosses a process boundary intact; a failing pool point is one line."""

from __future__ import annotations

import copy
import importlib
import inspect
import pickle
import pkgutil
from pathlib import Path

import pytest
import yaml

import fpgasim
from fpgasim.errors import ConfigError, FpgasimError
from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]


def all_error_types() -> list[type[FpgasimError]]:
    """FpgasimError and every subclass in the package (every module imported first)."""
    for info in pkgutil.walk_packages(fpgasim.__path__, "fpgasim."):
        if info.name.endswith("__main__"):  # runs the CLI on import
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional dependency (e.g. dask) is missing
            continue
    found, todo = [], [FpgasimError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def example(cls: type[FpgasimError]) -> FpgasimError:
    """An instance built through the class's own __init__ (strings for every argument)."""
    params = [
        p
        for p in inspect.signature(cls.__init__).parameters.values()
        if p.name != "self" and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        and p.default is p.empty
    ]
    if not params:
        return cls("a message")
    return cls(*[f"{p.name}-value" for p in params])


def test_every_error_type_is_found() -> None:
    names = {cls.__name__ for cls in all_error_types()}
    assert {"ConfigError", "InputError", "CacheError", "ValidationFailed", "GraphError"} <= names


@pytest.mark.parametrize("cls", all_error_types(), ids=lambda c: f"{c.__module__}.{c.__name__}")
def test_error_pickles_intact(cls: type[FpgasimError]) -> None:
    error = example(cls)
    error.__cause__ = None
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is cls
    assert str(back) == str(error) and back.args == error.args
    assert back.__dict__ == error.__dict__


def test_config_error_with_odd_value_pickles() -> None:
    error = ConfigError("f.yaml", "clock_mhz", {"nested": [1.5, None]}, "a number")
    back = pickle.loads(pickle.dumps(error))
    assert (back.source, back.field, back.value, back.allowed) == (
        "f.yaml", "clock_mhz", {"nested": [1.5, None]}, "a number")


def failing_board(tmp_path: Path) -> Path:
    """A board whose B buffer holds the x = 1 pass (MV mode) but not the K-block ring of the
    x = 64 one (MM tiles): it fails inside a worker, at one point of the sweep."""
    data = yaml.safe_load((REPO / "boards/u280.yaml").read_text())
    data = copy.deepcopy(data)
    data["overrides"] = {**data.get("overrides", {}), "design.buffers.b": B_ROWS}
    data["name"] = "u280-small"  # a sweep refuses two boards of one name
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


B_ROWS = 16


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["process", "inprocess", "dask"])
def test_failing_point_in_a_pool_is_one_line(tmp_path: Path, capsys, executor: str) -> None:
    if executor == "dask":
        pytest.importorskip("distributed")
    board = failing_board(tmp_path)
    out = tmp_path / "o.csv"
    res = run_cli(
        capsys, "sweep", "-b", f"u280,{board}", "-m", "llama-3.1-8b", "--contexts", "128",
        "--verify-lens", "1-4,64", "-e", "event", "--executor", executor, "--workers", "2",
        "--chunk-size", "1", "--no-cache", "--out", str(out),
    )
    assert res.code == 2, res
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fpgasim: error: "), res.err
    assert str(board) in lines[0] and f"buffers.b = {B_ROWS}" in lines[0]
    assert "BrokenProcessPool" not in res.err and "internal error" not in res.err
    assert not out.exists()
