"""Start-up: a command imports what it needs when it needs it (fpgasim/cli/lazy.py).

`fpgasim --help` and `simulate --engine analytic` must import neither pandas nor numba (each
costs 0.3-0.7 s per call); the help lists every command from the summaries of the lazy
table, which must say what the commands' own help says. Times: benchmarks/bench_startup.py.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest
import typer

from fpgasim.cli import app
from fpgasim.cli.lazy import COMMANDS, load_command
from tests.cli_helpers import run_cli

HEAVY = ("pandas", "numba", "scipy", "matplotlib", "pyarrow")
#: Run the CLI in a fresh interpreter, then report which heavy packages it imported.
PROBE = """
import json, sys
from fpgasim.cli import main
code = 0
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print("\\nPROBE " + json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def imported_by(*args: str) -> dict:
    """Exit code and heavy packages imported by `fpgasim ARGS` in a fresh interpreter."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                          timeout=120)
    lines = [x for x in proc.stdout.splitlines() if x.startswith("PROBE ")]
    assert lines, proc.stderr
    got = json.loads(lines[-1][len("PROBE "):])
    return {"code": got["code"], "heavy": [m for m in got["modules"] if m in HEAVY]}


@pytest.mark.parametrize(
    "args, code",
    [
        (["--help"], 0),
        (["--version"], 0),
        (["simulate", "--help"], 0),
        (["simulate", "-b", "v80", "-m", "llama-3.1-8b", "-L", "256", "-x", "4",
          "--engine", "analytic"], 0),
    ],
)
@pytest.mark.slow
def test_light_commands_import_no_heavy_package(args: list[str], code: int) -> None:
    got = imported_by(*args)
    assert (got["code"] or 0) == code and got["heavy"] == [], got


@pytest.mark.slow
def test_a_data_command_does_import_pandas() -> None:
    """The probe sees heavy imports where there are some: `solve` builds DataFrames."""
    assert "pandas" in imported_by("solve", "--help")["heavy"]


def _first_paragraph(text: str) -> str:
    return " ".join(inspect.cleandoc(text).split("\n\n")[0].split())


@pytest.mark.parametrize("name", list(COMMANDS))
def test_summaries_match_the_commands_help(name: str) -> None:
    """The help's list comes from COMMANDS: each summary is the command's own first paragraph."""
    command = load_command(name)
    assert command.name == name
    assert _first_paragraph(COMMANDS[name].summary) == _first_paragraph(command.help), name


def test_the_group_lists_every_command_and_runs_each_help(capsys) -> None:
    group = typer.main.get_command(app)
    assert group.list_commands(None) == list(COMMANDS)
    top = run_cli(capsys, "--help")
    assert top.code == 0 and all(name in top.out for name in COMMANDS)
    for name in COMMANDS:
        res = run_cli(capsys, name, "--help")
        assert res.code == 0 and f"fpgasim {name}" in res.out, (name, res.err)


def test_an_unknown_command_still_suggests(capsys) -> None:
    res = run_cli(capsys, "simulat")
    assert res.code == 2 and "Did you mean 'simulate'?" in res.err, res.err


def test_version_is_the_package_version(capsys) -> None:
    import fpgasim

    res = run_cli(capsys, "--version")
    assert res.code == 0 and res.out.strip() == f"fpgasim {fpgasim.__version__}"


def test_the_program_collects_old_objects_rarely_and_a_caller_keeps_its_collector() -> None:
    """`fpgasim` itself sets `cli.GC_THRESHOLDS` (its pool workers inherit them) and, its
    outcome decided, freezes what it built so the shutdown does not collect it; a caller's
    in-process `main(argv)` leaves the caller's collector as it was."""
    probe = (
        "import gc, sys\n"
        "from fpgasim.cli import GC_THRESHOLDS, main\n"
        "before = gc.get_threshold(), gc.get_freeze_count()\n"
        "try:\n"
        "    main(['--version'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "in_process = gc.get_threshold(), gc.get_freeze_count()\n"
        "sys.argv = ['fpgasim', '--version']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(before == in_process, before[1] == 0, gc.get_freeze_count() > 0,\n"
        "      gc.get_threshold() == GC_THRESHOLDS, GC_THRESHOLDS)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120)
    assert proc.stdout.splitlines()[-1] == "True True True True (700, 10, 100)", proc.stderr[-400:]
