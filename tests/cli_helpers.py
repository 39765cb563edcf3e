"""Run the real CLI entry point in-process or as a subprocess and capture its exit."""

from __future__ import annotations

import signal
import subprocess
import sys
from dataclasses import dataclass

import pytest

from fpgasim.cli import main


def default_sigint() -> None:
    """`preexec_fn` of a child that a test interrupts: Ctrl-C as at a terminal. A shell that
    runs the tests in the background ignores SIGINT and its children inherit that, so the
    child's Python would install no KeyboardInterrupt handler and never see the signal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_cli(capsys: pytest.CaptureFixture, *args: str) -> Result:
    """`fpgasim ARGS` through `fpgasim.cli.main`, in this process."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)


def run_subprocess(*args: str, timeout: float = 120) -> Result:
    """`python -m fpgasim ARGS` as a real subprocess."""
    proc = subprocess.run([sys.executable, "-m", "fpgasim", *args], capture_output=True,
                          text=True, timeout=timeout)
    return Result(proc.returncode, proc.stdout, proc.stderr)
