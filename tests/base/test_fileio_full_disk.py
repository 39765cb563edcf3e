"""A full disk while `reproduce` and `sweep` write their outputs: nothing is reported as
written unless it was, nothing half-written stays, and the error names the flag typed."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import fpgasim.fileio as fileio
from tests.cli_helpers import run_cli

SWEEP = ["sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128,256",
         "--verify-lens", "1-8", "--executor", "inprocess", "--no-cache"]
# the writes matter here, not the simulator
REPRODUCE = ["reproduce", "table1", "fig1", "fig4", "--engine", "analytic"]


def check_refusal(err: str, where: Path) -> None:
    """One error line naming --out and the full disk; no "wrote", no summary; no files."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "--out" in lines[0] and "No space left on device" in lines[0], err
    assert "argument output" not in lines[0]
    assert "wrote" not in err and "points:" not in err
    leftovers = [p for p in where.rglob("*") if p.is_file()] if where.exists() else []
    assert leftovers == [] or all(p.name == "filler" for p in leftovers), leftovers


@pytest.fixture
def no_space(monkeypatch):
    """Every output file creation fails as on a full file system (ENOSPC)."""
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    real = fileio.tempfile.mkstemp

    def mkstemp(*args, **kwargs):
        if kwargs.get("prefix", "").startswith(".fpgasim-probe-"):
            return real(*args, **kwargs)  # the early probe: an empty file still fits
        return full()
    monkeypatch.setattr(fileio.tempfile, "mkstemp", mkstemp)


@pytest.mark.slow
def test_reproduce_on_a_full_disk(no_space, tmp_path: Path, capsys) -> None:
    res = run_cli(capsys, *REPRODUCE, "--out", str(tmp_path / "out"))
    assert res.code == 2
    check_refusal(res.err, tmp_path / "out")


@pytest.mark.slow
def test_sweep_on_a_full_disk(no_space, tmp_path: Path, capsys) -> None:
    res = run_cli(capsys, *SWEEP, "--out", str(tmp_path / "s.csv"))
    assert res.code == 2
    check_refusal(res.err, tmp_path)
    assert res.out == ""


@pytest.mark.slow
def test_reports_follow_the_files_when_the_disk_has_room(tmp_path: Path, capsys) -> None:
    res = run_cli(capsys, *SWEEP, "--out", str(tmp_path / "s.csv"))
    assert res.code == 0 and "16 points" in res.err and "wrote 16 rows" in res.out
    assert (tmp_path / "s.csv").is_file()


@pytest.fixture
def full_tmpfs(tmp_path: Path):
    """A real 64 KiB tmpfs filled to the last block (skipped where mounting is refused)."""
    where = tmp_path / "full"
    where.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        fd = os.open(where / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        finally:
            os.close(fd)
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


@pytest.mark.slow
@pytest.mark.parametrize("command, out", [(REPRODUCE, "out"), (SWEEP, "s.csv")])
def test_a_real_full_file_system(command: list[str], out: str, full_tmpfs: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "fpgasim", *command, "--out",
                           str(full_tmpfs / out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    check_refusal(proc.stderr, full_tmpfs)
