"""Kill a real `fpgasim sweep` mid-way (SIGKILL, Ctrl-C) and resume it from the cache."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fpgasim.sweep import SweepCache
from fpgasim.sweep.runner import SLOWDOWN_ENV
from tests.cli_helpers import default_sigint

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

GRID = [
    "-b",
    "u280,v80",
    "-m",
    "llama-3.1-8b",
    "-a",
    "longspec",
    "--contexts",
    "128,1024",
    "--verify-lens",
    "1-40",
    "-e",
    "analytic",
]
TOTAL = 2 * 2 * 40
SUMMARY = re.compile(r"(\d+) points: (\d+) computed, (\d+) from the cache")


def sweep(out: Path, cache: Path, *extra: str, slow: float = 0.0, **kw) -> subprocess.Popen:
    env = {**os.environ, SLOWDOWN_ENV: str(slow), "FPGASIM_CACHE_DIR": str(cache)}
    return subprocess.Popen(
        [sys.executable, "-m", "fpgasim", "sweep", *GRID, "--out", str(out), *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=default_sigint,
        **kw,
    )


def stored(cache: Path) -> int:
    if not SweepCache(cache).path.exists():
        return 0
    with SweepCache(cache) as c:
        return len(c)


def wait_for_points(proc: subprocess.Popen, cache: Path, at_least: int) -> None:
    deadline = time.monotonic() + 60
    while stored(cache) < at_least:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the sweep stored nothing in 60 s"
        time.sleep(0.05)


def group_gone(pgid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def finish_and_compare(tmp_path: Path, cache: Path, out: Path, before: int) -> None:
    """Rerun without slow-down: only the missing points are computed; output = uncached run."""
    proc = sweep(out, cache)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    total, computed, cached = map(int, SUMMARY.search(err).groups())
    assert (total, cached, computed) == (TOTAL, before, TOTAL - before)
    reference = tmp_path / "reference.csv"
    proc = sweep(reference, tmp_path / "unused", "--no-cache")
    assert proc.wait(timeout=120) == 0
    assert out.read_bytes() == reference.read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["inprocess", "process"])
def test_sigkill_then_resume(tmp_path: Path, executor: str) -> None:
    cache, out = tmp_path / "cache", tmp_path / "out" / "sweep.csv"
    proc = sweep(
        out, cache, "--executor", executor, "--workers", "2", "--chunk-size", "8", slow=0.05
    )
    try:
        wait_for_points(proc, cache, 16)
        proc.kill()  # the sweep process only: its pool workers must follow by themselves
        proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        # pool workers die with the parent (PR_SET_PDEATHSIG), no output file, no temp file
        assert group_gone(proc.pid), "worker processes outlived the killed sweep"
    finally:
        if proc.poll() is None or not group_gone(proc.pid, 0.1):
            os.killpg(proc.pid, signal.SIGKILL)
    # no output, no temporary file (the missing folder is only created with the output)
    assert not out.parent.exists() or list(out.parent.iterdir()) == []
    before = stored(cache)
    assert 16 <= before < TOTAL and before % 8 == 0  # whole chunks only
    finish_and_compare(tmp_path, cache, out, before)


@pytest.mark.slow
def test_ctrl_c_then_resume(tmp_path: Path) -> None:
    cache, out = tmp_path / "cache", tmp_path / "sweep.csv"
    proc = sweep(out, cache, "--workers", "2", "--chunk-size", "8", slow=0.05)
    try:
        wait_for_points(proc, cache, 16)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130
    assert err.strip().splitlines() == ["fpgasim: interrupted"], err
    assert not out.exists()
    before = stored(cache)
    assert 16 <= before < TOTAL
    finish_and_compare(tmp_path, cache, out, before)
