"""Several processes on one result cache: concurrent sweeps, `cache clear` beside a sweep,
a lock held longer than SQLite's busy timeout, and a read-only cache (docs/scaling.md)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fpgasim.sweep import SweepCache
from fpgasim.sweep import cache as cache_module

# the `fast` engine: the cache is the point here, not the engine (event = fast is tested in
# tests/engine/test_event.py and tests/step/test_step_points.py); chunks of 2 points make many
# small writes
SWEEP = ["sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128,512",
         "--verify-lens", "1-24", "-e", "fast", "--chunk-size", "2"]


def start(*args: str, user: list[str] | None = None) -> subprocess.Popen:
    """`python -m fpgasim ARGS` started in the background (optionally as another user)."""
    return subprocess.Popen([*(user or []), sys.executable, "-m", "fpgasim", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    _, err = proc.communicate(timeout=300)
    return proc.returncode, err


@pytest.fixture(scope="module")
def serial(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The sweep's CSV from one process without a cache (the reference)."""
    out = tmp_path_factory.mktemp("serial") / "serial.csv"
    code, err = finish(start(*SWEEP, "--executor", "inprocess", "--no-cache", "--out", str(out)))
    assert code == 0, err
    return out.read_bytes()


@pytest.mark.parametrize("executor", [["--executor", "inprocess"],
                                      ["--executor", "process", "--workers", "2"]])
@pytest.mark.slow
def test_two_sweeps_on_one_cache_match_a_serial_run(executor: list[str], serial: bytes,
                                                    tmp_path: Path) -> None:
    cache = ["--cache-dir", str(tmp_path / "cache")]
    procs = [start(*SWEEP, *executor, *cache, "--out", str(tmp_path / f"{n}.csv"))
             for n in "ab"]
    for proc in procs:
        code, err = finish(proc)
        assert code == 0, err
        assert "48 points" in err and "locked" not in err
    assert (tmp_path / "a.csv").read_bytes() == serial
    assert (tmp_path / "b.csv").read_bytes() == serial
    again = start(*SWEEP, *executor, *cache, "--out", str(tmp_path / "c.csv"))
    code, err = finish(again)  # every point is now in the cache, intact
    assert code == 0 and "0 computed, 48 from the cache" in err, err
    assert (tmp_path / "c.csv").read_bytes() == serial


@pytest.mark.slow
def test_cache_clear_beside_a_sweep(serial: bytes, tmp_path: Path) -> None:
    cache = ["--cache-dir", str(tmp_path / "cache")]
    sweep = start(*SWEEP, "--executor", "inprocess", *cache, "--out", str(tmp_path / "a.csv"))
    clears = 0
    while sweep.poll() is None:
        proc = subprocess.run([sys.executable, "-m", "fpgasim", "cache", "clear", *cache],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and "removed" in proc.stdout, proc.stderr
        clears += 1
    code, err = finish(sweep)
    assert code == 0, err
    assert clears >= 1
    assert (tmp_path / "a.csv").read_bytes() == serial
    with SweepCache(tmp_path / "cache") as kept:  # still a valid database after it all
        assert 0 <= len(kept) <= 48


@pytest.mark.slow
def test_a_lock_held_past_the_busy_timeout_is_waited_for(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT_S", 0.05)
    with SweepCache(tmp_path) as cache:
        cache.put_many([("k0", "e", {"v": 0})])
    holder = sqlite3.connect(SweepCache(tmp_path).path, isolation_level=None,
                             check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another process's long write transaction
    release = threading.Timer(0.6, lambda: holder.execute("COMMIT"))
    release.start()
    started = time.monotonic()
    try:
        with SweepCache(tmp_path) as cache:
            cache.put_many([("k1", "e", {"v": 1})])
            assert cache.get_many(["k0", "k1"]) == {"k0": {"v": 0}, "k1": {"v": 1}}
    finally:
        release.join()
        holder.close()
    assert time.monotonic() - started >= 0.5  # it waited for the lock, past 0.05 s


@pytest.mark.slow
def test_a_lock_never_released_is_one_error_line(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(cache_module, "BUSY_TIMEOUT_S", 0.02)
    monkeypatch.setattr(cache_module, "RETRY_DEADLINE_S", 0.3)
    with SweepCache(tmp_path) as cache:
        cache.put_many([("k0", "e", {"v": 0})])
    holder = sqlite3.connect(SweepCache(tmp_path).path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(cache_module.CacheError, match="locked"), SweepCache(tmp_path) as c:
            c.put_many([("k1", "e", {"v": 1})])
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def _read_only_tmpfs(where: Path) -> Path | None:
    """A small tmpfs at `where` (None where this machine does not allow mounting)."""
    where.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        return None
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)],
                          capture_output=True)
    return where if proc.returncode == 0 else None


@pytest.mark.slow
def test_a_read_only_cache_holding_every_point_is_read(serial: bytes, tmp_path: Path) -> None:
    mount = _read_only_tmpfs(tmp_path / "ro")
    if mount is None:
        pytest.skip("cannot mount a tmpfs here")
    try:
        cache = ["--cache-dir", str(mount / "cache")]
        code, err = finish(start(*SWEEP, "--executor", "inprocess", *cache,
                                 "--out", str(tmp_path / "fill.csv")))
        assert code == 0, err
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        code, err = finish(start(*SWEEP, "--executor", "inprocess", *cache,
                                 "--out", str(tmp_path / "a.csv")))
        assert code == 0, err
        assert "0 computed, 48 from the cache" in err
        assert (tmp_path / "a.csv").read_bytes() == serial
        more = [*SWEEP[:8], "1-30", *SWEEP[9:]]  # 12 points the cache lacks: computed
        code, err = finish(start(*more, "--executor", "inprocess", *cache,
                                 "--out", str(tmp_path / "b.csv")))
        assert code == 0, err
        assert "12 computed, 48 from the cache" in err
        assert "read-only: 12 computed rows not stored" in err
        proc = subprocess.run([sys.executable, "-m", "fpgasim", "cache", "clear", *cache],
                              capture_output=True, text=True)
        assert proc.returncode == 2 and "read-only" in proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
    finally:
        subprocess.run(["umount", str(mount)], check=False)


