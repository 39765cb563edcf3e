"""docs/tutorial.md runs as written: every command of its console blocks, in an empty
folder holding only the board file the tutorial writes, exits 0 and still prints the
answers pasted under it (decisions, "SD-or-AD differs", the explore verdict)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.tutorial_steps import missing_key_lines, read_tutorial, run_step, write_files

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = read_tutorial()


def test_tutorial_is_short_and_writes_its_board() -> None:
    assert 1 <= len(TUTORIAL.steps) < 10
    assert list(TUTORIAL.files) == ["vhk158-2xhbm.yaml"]
    assert all(s.argv[0] == "fpgasim" for s in TUTORIAL.steps)
    answers = [line for s in TUTORIAL.steps for line in s.key_lines()]
    assert any("use AD" in a for a in answers) and any("use SD" in a for a in answers)
    assert any("SD-or-AD differs" in a for a in answers)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("tutorial")
    write_files(TUTORIAL, work)
    return work


@pytest.mark.slow
@pytest.mark.parametrize("step", TUTORIAL.steps, ids=lambda s: " ".join(s.argv[1:3]))
def test_step_runs_and_prints_its_answer(step, folder: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg",
           "FPGASIM_CACHE_DIR": str(folder / ".cache")}  # fmt: skip
    proc = run_step(step, folder, [sys.executable, "-m", "fpgasim"], env)
    assert proc.returncode == 0, (step.command, proc.stderr)
    assert missing_key_lines(step, proc.stdout) == [], step.command
