"""Any environment: the `fast` engine without a writable cache folder, tables at any width
and through pipes, and a closed, broken or full stdout."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from fpgasim.config import available, load_board

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "0"}
SIMULATE = ["simulate", "-b", "u280", "-m", "llama-3.1-8b", "-L", "1024", "-e", "fast",
            "-f", "json"]


def fpgasim(*args: str, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fpgasim", *args], capture_output=True,
                          text=True, timeout=300, env=env or ENV, **kwargs)


# --------------------------------------------------------------------------- numba's cache


def compiled_beside_the_source() -> dict[Path, int]:
    """numba's cache files in fpgasim's own source tree (its fallback when no other folder
    is writable: inside an installed package they outlive `pip uninstall`), with their
    modification times."""
    return {p: p.stat().st_mtime_ns for p in (REPO / "fpgasim").rglob("*.nb[ic]")}


@pytest.mark.slow
def test_fast_works_when_numba_finds_no_cache_location(tmp_path: Path) -> None:
    """No HOME, a read-only HOME or an installed package: numba raised "cannot cache
    function '_expand': no locator available" and `fast` (the default of generate and
    reproduce) failed. Here numba's locators are emptied, as in such an environment."""
    code = ("import numba.core.caching as c; c.CacheImpl._locator_classes = []; "
            "from fpgasim.cli import main; main()")
    env = {**ENV, "FPGASIM_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-c", code, *SIMULATE], capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verify_cycles"] > 0


@pytest.mark.slow
def test_fast_compiles_in_memory_when_the_cache_folder_cannot_be_written(
    tmp_path: Path,
) -> None:
    """An unwritable cache folder made numba fall back to caching beside fpgasim's source."""
    before = compiled_beside_the_source()
    blocker = tmp_path / "file"
    blocker.write_text("a regular file: no folder can be made under it")
    env = {k: v for k, v in ENV.items() if k not in ("XDG_CACHE_HOME", "NUMBA_CACHE_DIR")}
    for cache in (blocker / "cache", "/proc/fpgasim-cache"):
        proc = fpgasim(*SIMULATE, env={**env, "FPGASIM_CACHE_DIR": str(cache)})
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == "" or "warning" in proc.stderr, proc.stderr
    assert compiled_beside_the_source() == before


# --------------------------------------------------------------------------- tables


def on_a_terminal(*args: str, columns: str) -> str:
    """fpgasim's output on a pseudo-terminal whose COLUMNS is `columns`."""
    main, child = pty.openpty()
    env = {**ENV, "COLUMNS": columns, "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-m", "fpgasim", *args], stdout=child,
                            stderr=child, stdin=subprocess.DEVNULL, env=env)
    os.close(child)
    chunks, deadline = [], time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 1)
        if ready:
            try:
                data = os.read(main, 65536)
            except OSError:  # the child closed its side
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=30)
    os.close(main)
    assert proc.returncode == 0
    return b"".join(chunks).decode("utf-8", "replace")


def board_numbers() -> list[str]:
    """Every shipped board's name and its bandwidth and clock as `boards` prints them."""
    out = []
    for name in available("board"):
        b = load_board(name)
        out += [name, f"{b.memory.bandwidth_gb_s:.4g}", f"{b.clock_mhz:.4g}"]
    return out


@pytest.mark.slow
def test_a_piped_table_is_not_squeezed_to_80_columns() -> None:
    """`fpgasim boards | cat` cut names and numbers to fit 80 columns ("163…")."""
    proc = fpgasim("boards", stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and "…" not in proc.stdout, proc.stdout
    for text in board_numbers():
        assert text in proc.stdout, text


@pytest.mark.slow
@pytest.mark.parametrize("columns", ["0", "-3", "abc", "12", "45", "100"])
def test_a_table_prints_whole_at_any_terminal_width(columns: str) -> None:
    """COLUMNS=0 printed nothing and exited 0; a narrow terminal cut numbers with "…".
    Now every letter and digit of the table is printed (a cell too wide folds onto more
    lines), at any width."""
    out = on_a_terminal("boards", columns=columns)
    assert "…" not in out and "..." not in out, out[:400]
    whole = fpgasim("boards", stdin=subprocess.DEVNULL).stdout
    printed, needed = Counter(filter(str.isalnum, out)), Counter(filter(str.isalnum, whole))
    assert not needed - printed, needed - printed


# --------------------------------------------------------------------------- stdout


@pytest.mark.slow
def test_a_closed_pipe_exits_0_quietly() -> None:
    """`fpgasim boards | head -1`: "Exception ignored ... BrokenPipeError", exit 120."""
    proc = subprocess.Popen([sys.executable, "-m", "fpgasim", "boards", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    proc.stdout.close()  # the reader is gone before anything is written
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 0 and err == "", err


@pytest.mark.slow
def test_head_of_a_table_exits_0() -> None:
    shell = f"{sys.executable} -m fpgasim boards | head -1; exit ${{PIPESTATUS[0]}}"
    proc = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=120,
                          env=ENV)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert len(proc.stdout.splitlines()) == 1


@pytest.mark.slow
def test_a_full_stdout_is_one_line_and_exit_2() -> None:
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "fpgasim", "boards"], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120, env=ENV)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        "fpgasim: error: stdout: No space left on device (the output was not written)"]


@pytest.mark.slow
def test_a_closed_stdout_is_one_line_and_exit_2() -> None:
    """A closed descriptor 1 (`fpgasim boards >&-`): the table was dropped, exit 0."""
    proc = subprocess.run([sys.executable, "-m", "fpgasim", "boards"], stdin=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=120, env=ENV,
                          preexec_fn=lambda: os.close(1))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines() == [
        "fpgasim: error: stdout: Bad file descriptor (the output was not written)"]


@pytest.mark.slow
def test_a_closed_stdout_refuses_any_output_and_keeps_errors_on_stderr(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "fpgasim", "--version"], stderr=subprocess.PIPE,
                          text=True, timeout=120, env=ENV, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 2 and "stdout: Bad file descriptor" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "fpgasim", "validate", str(tmp_path / "x")],
                          stderr=subprocess.PIPE, text=True, timeout=120, env=ENV,
                          preexec_fn=lambda: os.close(1))
    assert proc.returncode == 2 and "not found" in proc.stderr  # its errors go to stderr
