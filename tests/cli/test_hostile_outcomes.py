"""Hostile battery, round 4: a refusal is the only line, and a full disk ends a run at once
(issue 43: `generate`'s warning before a refusal, a full standard output, a cache on a full
file system).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
AAT = REPO / "workloads" / "aat"
#: u280 holds 8 GiB, LLaMA-3.1-8B needs ~15: every run below warns about memory
GENERATE = ["generate", "-b", "u280", "-m", "llama-3.1-8b", "-P", "128", "-D", "8", "-e",
            "analytic"]


def late_refusals(tmp_path: Path) -> list[list[str]]:
    """Five inputs `generate` refused after printing its memory warning."""
    bad_algo = tmp_path / "a.yaml"
    bad_algo.write_text("id: x\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "t.csv").write_bytes(b"\xff\xfe\x00" * 64)
    return [["-a", "nosuch"], ["-a", str(bad_algo)], ["-a", "longspec", "--aat-dir", str(empty)],
            ["-a", "longspec", "--aat-dir", str(AAT), "--task", "nosuch"],
            ["-a", "longspec", "--aat-dir", str(garbage)]]


def test_generate_prints_no_warning_before_a_refusal(tmp_path: Path, capsys) -> None:
    for extra in late_refusals(tmp_path):
        res = run_cli(capsys, *GENERATE, *extra)
        assert res.code == 2, (extra, res.err)
        lines = res.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("fpgasim: error: "), (extra, res.err)
    ok = run_cli(capsys, *GENERATE)  # the warning is still given when the run succeeds
    assert ok.code == 0 and "fpgasim: warning: llama-3.1-8b needs" in ok.err, ok.err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [
    ["simulate", "-b", "u280", "-m", "llama-3.1-8b", "-L", "256", "-e", "analytic"],
    GENERATE,
    ["sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128", "--verify-lens", "1",
     "-e", "analytic", "--no-cache", "--out", "{tmp}/s.csv"],
], ids=["simulate", "generate", "sweep"])
@pytest.mark.slow
def test_a_full_stdout_is_the_only_line(tmp_path: Path, args: list[str]) -> None:
    """The memory warning (simulate, generate) and the sweep's summary were printed before
    `stdout: No space left on device`; the sweep's line said its output was not written
    when its file was."""
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "fpgasim", *argv], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == 2
    if args[0] == "sweep":  # its file is committed before its "wrote" line fails
        out = tmp_path / "s.csv"
        assert out.stat().st_size > 0
        assert proc.stderr.strip().splitlines() == [
            f"fpgasim: error: stdout: No space left on device (the files were written: "
            f"{out}; the lines reporting them were not)"]
        return
    assert proc.stderr.strip().splitlines() == [
        "fpgasim: error: stdout: No space left on device (the output was not written)"]


def test_a_python_warning_is_held_until_success(capsys, monkeypatch) -> None:
    """A library's warning (numpy, matplotlib) raised during a run that is then refused is
    not shown; in a run that succeeds it follows the output."""
    import warnings

    import fpgasim.cli.simulate_cmd as cmd

    real = cmd.fit_warnings

    def noisy(*args, **kwargs):
        warnings.warn("overflow encountered", RuntimeWarning, stacklevel=1)
        return real(*args, **kwargs)

    monkeypatch.setattr(cmd, "fit_warnings", noisy)
    ok = run_cli(capsys, "simulate", "-b", "u280", "-m", "llama-3.1-8b", "-L", "256", "-e",
                 "analytic")
    assert ok.code == 0 and "RuntimeWarning: overflow encountered" in ok.err, ok.err
    refused = run_cli(capsys, "simulate", "-b", "u280", "-m", "llama-3.1-8b", "-L", "256",
                      "-e", "analytic", "--trace", "/proc/t.json")
    assert refused.code == 2 and len(refused.err.strip().splitlines()) == 1, refused.err


# --------------------------------------------------------------------------- full cache

#: a sweep whose chunks (128 points, about 50 KB pickled) fill the pool's pipe, on two
#: workers, with a cache whose every store fails as SQLite fails on a full disk
FULL_CACHE_SCRIPT = textwrap.dedent("""
    import sqlite3, sys
    import fpgasim.sweep.cache as cache
    from fpgasim.cli import main

    def full(self, *args, **kwargs):
        exc = sqlite3.OperationalError("database or disk is full")
        exc.sqlite_errorcode = 13  # SQLITE_FULL
        raise self._error(exc)

    cache.SweepCache.put_many = full
    main(sys.argv[1:])
""")


@pytest.mark.slow
def test_a_full_cache_ends_the_run_at_once(tmp_path: Path) -> None:
    """The first failed store ended the run's work, but the exit then waited forever on the
    pool's feeder thread, still writing a chunk to workers already killed."""
    out = tmp_path / "s.csv"
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", FULL_CACHE_SCRIPT, "sweep", "-b", "u280,v80,u250", "-m",
         "llama-3.1-8b", "-a", "longspec", "--contexts", "128,256,512,1024,2048",
         "--verify-lens", "1-64", "-e", "analytic", "--workers", "2", "--chunk-size", "128",
         "--cache-dir", str(tmp_path / "cache"), "--out", str(out)],
        capture_output=True, text=True, timeout=240, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)})  # before the fix: never exited
    took = time.monotonic() - started
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "database or disk is full" in line and "--cache-dir" in line, line
    assert not out.exists()
    assert took < 120, took


@pytest.mark.slow
def test_a_killed_pool_with_a_full_pipe_exits(tmp_path: Path) -> None:
    """The mechanism alone: a pool stopped by an error while its feeder writes a chunk
    larger than the pipe holds (4 MiB items) lets the interpreter exit."""
    script = textwrap.dedent("""
        import time
        from fpgasim.sweep.executors import ProcessExecutor

        def work(item):
            time.sleep(0.2)
            return len(item)

        if __name__ == "__main__":
            try:
                with ProcessExecutor(workers=2) as pool:
                    for _ in pool.map_unordered(work, [b"x" * (4 << 20)] * 12):
                        raise RuntimeError("the first store failed")
            except RuntimeError:
                print("stopped", flush=True)
    """)
    path = tmp_path / "pool.py"
    path.write_text(script)
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0 and proc.stdout.strip() == "stopped", proc.stderr
    assert proc.stderr == ""


def _mount_tmpfs(folder: Path, size: str) -> bool:
    """Mount a tmpfs of `size` on `folder` (root only); whether it worked."""
    if os.geteuid() != 0:
        return False
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True)
    return proc.returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("size", ["16k", "64k"])
def test_a_cache_on_a_full_tmpfs(tmp_path: Path, size: str) -> None:
    """A real full file system: the right line (SQLite reports a failed write to its index
    as `disk I/O error` on 16 KiB), at once, no output, the database still valid."""
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    if not _mount_tmpfs(tiny, size):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        out = tmp_path / "s.csv"
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "fpgasim", "sweep", "-b", "u280,v80", "-m", "llama-3.1-8b",
             "--contexts", "128,256,512,1024", "--verify-lens", "1-64", "-e", "analytic",
             "--executor", "inprocess", "--cache-dir", str(tiny / "c"), "--out", str(out)],
            capture_output=True, text=True, timeout=240)
        took = time.monotonic() - started
        assert proc.returncode == 2, proc.stderr
        (line,) = proc.stderr.strip().splitlines()
        assert "database or disk is full" in line, line
        assert not out.exists() and took < 60, took
        kept = tmp_path / "kept"  # checked off the full file system (reading needs -shm)
        kept.mkdir()
        for part in (tiny / "c" / "v2").glob("points.sqlite*"):
            kept.joinpath(part.name).write_bytes(part.read_bytes())
        if (kept / "points.sqlite").exists():
            conn = sqlite3.connect(kept / "points.sqlite")
            try:
                assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            finally:
                conn.close()
    finally:
        subprocess.run(["umount", "-l", str(tiny)], capture_output=True)


def test_a_cache_on_a_file_system_with_no_free_block_refuses_before_work(
        tmp_path: Path, monkeypatch) -> None:
    """No block free when the cache opens: refused before any point is computed."""
    import fpgasim.sweep.cache as cache
    from fpgasim.sweep import CacheError, SweepCache

    class Full:
        f_bavail = 0

    monkeypatch.setattr(cache.os, "statvfs", lambda path: Full())
    with pytest.raises(CacheError, match="database or disk is full"):
        SweepCache(tmp_path).__enter__()
    assert errno.ENOSPC  # the condition SQLite reports as SQLITE_FULL or SQLITE_IOERR
