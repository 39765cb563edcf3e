"""The CLI under a plain ASCII locale (LC_ALL=C, PYTHONUTF8=0, no PYTHONIOENCODING): output
never crashes on the terminal's encoding; non-ASCII symbols are spelt in ASCII."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fpgasim.cli.terminal import ASCII_SPELLINGS, ERROR_HANDLER


def ascii_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONIOENCODING", "LANG", "LANGUAGE") and not k.startswith("LC_")}
    return {**env, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


COMMANDS = [
    ["--help"],
    ["solve", "--help"],
    ["simulate", "--help"],
    ["reproduce", "--help"],
    ["solve", "-b", "u280", "-m", "llama-3.1-8b", "-a", "longspec", "--contexts", "512", "-e",
     "fast"],
    ["reproduce", "table1", "--out", "{tmp}/t1"],
    ["simulate", "-b", "u280", "-m", "llama-3.1-8b", "-a", "longspec", "--context", "512"],
    ["boards"],
    ["simulate", "-b", "u280", "-m", "llama-3.1-8b", "--context", "-5"],  # an error line
]


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c)[:40])
def test_commands_under_an_ascii_locale(command: list[str], tmp_path: Path) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    proc = subprocess.run([sys.executable, "-m", "fpgasim", *args], env=ascii_env(),
                          capture_output=True, timeout=300)
    err = proc.stderr.decode("ascii")  # every byte printed is ASCII
    proc.stdout.decode("ascii")
    assert "internal error" not in err and "Traceback" not in err, err
    expected = 2 if "-5" in args else 0
    assert proc.returncode == expected, err
    if expected == 2:
        assert len(err.strip().splitlines()) == 1


def test_the_interpreter_really_uses_ascii_there() -> None:
    code = "import sys; print(sys.stdout.encoding)"
    out = subprocess.run([sys.executable, "-c", code], env=ascii_env(), capture_output=True,
                         text=True).stdout
    assert out.strip().lower() in ("ascii", "ansi_x3.4-1968")


def test_spellings_are_ascii_and_unknown_characters_become_a_question_mark() -> None:
    assert all(s.isascii() for s in ASCII_SPELLINGS.values())
    assert "R² · 5 µs ✓ 漢".encode("ascii", ERROR_HANDLER) == b"R^2 . 5 us ok ?"
