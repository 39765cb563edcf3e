"""docs/trees.md: generated blocks match the code, and its examples run."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from fpgasim.config import load_algorithm
from fpgasim.tree.calibrate import agreement_markdown, calibration_markdown
from fpgasim.tree.optimal import greedy_tree, sequoia_tree
from fpgasim.tree.positional import PositionalModel
from fpgasim.tree.traces import load_traces
from tests.cli_helpers import run_cli

DOC = Path(__file__).resolve().parents[2] / "docs" / "trees.md"
SEQUOIA = [0.6342, 0.1079, 0.0570, 0.0225, 0.0195, 0.0150, 0.0045, 0.0030, 0.0120]


def block(name: str) -> str:
    text = DOC.read_text()
    match = re.search(rf"<!-- BEGIN {name} -->\n(.*?)\n<!-- END {name} -->", text, re.S)
    assert match, f"docs/trees.md has no block {name}"
    return match.group(1)


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), re.S)


def sequoia_markdown() -> str:
    model = PositionalModel.from_vector(SEQUOIA)
    lines = ["| N | expected AAT (DP) | greedy | tree shape |", "| ---: | ---: | ---: | --- |"]
    for n in (16, 64, 128):
        dp = sequoia_tree(model, n, 9)
        greedy = greedy_tree(model, n, 9)
        lines.append(
            f"| {n} | {dp.expected_aat:.4f} | {greedy.expected_aat:.4f} | {dp.tree.shape_str()} |"
        )
    return "\n".join(lines)


def test_sequoia_block() -> None:
    assert block("sequoia") == sequoia_markdown()


def test_calibration_block() -> None:
    algos = [load_algorithm("longspec"), load_algorithm("eagle3")]
    assert block("calibration") == calibration_markdown(algos)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["longspec", "eagle3"])
def test_agreement_blocks(name: str, aat_dir: Path) -> None:
    assert block(f"agreement-{name}") == agreement_markdown(load_algorithm(name), aat_dir)


@pytest.mark.slow
def test_examples_run(capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (csv,) = code_blocks("csv")
    (tmp_path / "traces.csv").write_text(csv)
    traces = load_traces(tmp_path / "traces.csv", context=1024)
    assert traces.accepted.tolist() == [4, 1, 3, 5]
    (python,) = code_blocks("python")
    scope: dict = {}
    exec(python, scope)  # noqa: S102 - the documented example itself
    assert list(scope["frame"].columns)[:3] == ["verify_len", "aat", "tree_shape"]
    monkeypatch.chdir(tmp_path)
    (bash,) = code_blocks("bash")
    commands = [line for line in bash.splitlines() if line.startswith("fpgasim tree")]
    assert len(commands) == 7
    for line in commands:
        res = run_cli(capsys, *shlex.split(line)[1:])
        assert res.code == 0, (line, res.err)
    assert (tmp_path / "compare.png").is_file() and (tmp_path / "trees.csv").is_file()
