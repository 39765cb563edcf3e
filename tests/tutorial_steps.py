"""The commands of docs/tutorial.md, read from its own text, and how to run them.

`read_tutorial(path)` returns the files the tutorial writes (fenced blocks whose first line
is `# file: NAME`) and its steps (every `$ ...` line of its ```console blocks, with the
output printed under it). `run_step` runs one step with a given `fpgasim` command (e.g.
`[sys.executable, "-m", "fpgasim"]` in a checkout, or an installed wheel's script), and
`missing_key_lines` lists the key lines of the pasted output (the answers: decisions,
"SD-or-AD differs", "fastest", "ok", "wrote") that the run no longer prints. Used by
tests/house/test_tutorial.py and reusable by a test of an installed wheel.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"
#: An output line holding one of these is a key line: it must still be printed.
KEY_MARKERS = ("use SD", "use AD", "SD-or-AD differs", "fastest", ": ok", "wrote ")
FILE_MARKER = re.compile(r"^# file: (\S+)\s*$")


@dataclass(frozen=True)
class Step:
    """One command of the tutorial: as written, split into argv, and its pasted output."""

    command: str
    argv: tuple[str, ...]
    output: tuple[str, ...]

    def key_lines(self) -> list[str]:
        """The pasted output lines that carry an answer, whitespace- and box-normalised."""
        return [normalise(line) for line in self.output if any(m in line for m in KEY_MARKERS)]


@dataclass(frozen=True)
class Tutorial:
    """files: name -> text the tutorial writes; steps: its commands in order."""

    files: dict[str, str]
    steps: tuple[Step, ...]


def normalise(line: str) -> str:
    """A line with rich's table borders dropped and runs of spaces collapsed."""
    for ch in "│┃║":
        line = line.replace(ch, " ")
    return " ".join(line.split())


def _fences(text: str) -> list[tuple[str, list[str]]]:
    """(info string, lines) of every fenced block of a Markdown text."""
    blocks, info, body = [], None, []
    for line in text.splitlines():
        if line.startswith("```"):
            if info is None:
                info, body = line[3:].strip(), []
            else:
                blocks.append((info, body))
                info = None
        elif info is not None:
            body.append(line)
    return blocks


def _steps(lines: list[str]) -> list[Step]:
    """The `$ ` commands of one console block (a trailing backslash continues a command)
    and the lines under each up to the next command."""
    steps: list[Step] = []
    command: str | None = None
    output: list[str] = []
    continued = False
    for line in lines:
        if continued and command is not None:
            command = f"{command} {line.strip().rstrip(chr(92)).strip()}"
            continued = line.rstrip().endswith("\\")
            continue
        if line.startswith("$ "):
            if command is not None:
                steps.append(Step(command, tuple(shlex.split(command)), tuple(output)))
            command, output = line[2:].rstrip().rstrip("\\").strip(), []
            continued = line.rstrip().endswith("\\")
        elif command is not None:
            output.append(line)
    if command is not None:
        steps.append(Step(command, tuple(shlex.split(command)), tuple(output)))
    return steps


def read_tutorial(path: Path = TUTORIAL) -> Tutorial:
    """The files and steps of a tutorial in Markdown."""
    files: dict[str, str] = {}
    steps: list[Step] = []
    for info, body in _fences(path.read_text()):
        if body and (m := FILE_MARKER.match(body[0])):
            files[m.group(1)] = "\n".join(body) + "\n"
        elif info == "console":
            steps.extend(_steps(body))
    return Tutorial(files, tuple(steps))


def write_files(tutorial: Tutorial, folder: Path) -> None:
    """Write the tutorial's files into `folder` (the working folder of its commands)."""
    for name, text in tutorial.files.items():
        (folder / name).write_text(text)


def run_step(
    step: Step, cwd: Path, fpgasim: list[str], env: dict[str, str], timeout_s: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run one step in `cwd`; a leading `fpgasim` is replaced by the `fpgasim` argv."""
    argv = list(step.argv)
    if argv and argv[0] == "fpgasim":
        argv = [*fpgasim, *argv[1:]]
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s, check=False
    )


def missing_key_lines(step: Step, stdout: str) -> list[str]:
    """Key lines of the pasted output that `stdout` does not contain (normalised)."""
    printed = {normalise(line) for line in stdout.splitlines()}
    return [line for line in step.key_lines() if line not in printed]
