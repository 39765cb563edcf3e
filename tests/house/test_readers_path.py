"""The reader's path (issue 42): a README a newcomer reads in five minutes, with the two
commands and one example on a pair that fits, its output as the command prints it; timings
in docs/benchmarks.md; no committed outputs; `--format table|json|csv` on every command
that prints a result; names case-insensitive with "did you mean"; an FPGA given as a board
answered with the `--fpga/--design` form; a shipped config's model name usable."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import typer

from fpgasim.cli import app
from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
#: commands that print no result of their own: a verdict per file (validate), a file written
#: and a one-line summary (sweep, tree search), an action (cache clear)
NO_RESULT = {"validate", "sweep", "cache clear", "tree search"}


def test_readme_is_short_and_holds_no_measurements() -> None:
    """287 lines that opened with timings under a load average and stale test counts; now a
    page: what it answers, the two commands, one example, where to go next."""
    assert len(README.splitlines()) <= 90
    for measured in ("load average", "s wall", "s CPU", "tests) took", "min wall"):
        assert measured not in README, measured
    assert "docs/benchmarks.md" in README


def test_readme_two_commands() -> None:
    """Two commands (running installs no test tools); .ci/run runs the test one; the Python
    version is stated before them."""
    commands = re.findall(r"```bash\n(.*?)\n```", README.split("## Examples")[0], flags=re.S)
    assert commands == [
        "python -m pip install . && fpgasim reproduce all --out results/",  # no test tools
        'python -m pip install -e ".[dev]" && python -m pytest',
    ]
    assert commands[1] in (REPO / ".ci" / "run").read_text()
    assert "Python 3.11" in README.split("```bash")[0]


@pytest.mark.slow
def test_readme_example_fits_and_prints_what_the_readme_shows(capsys) -> None:
    """The example runs a pair that fits (the first example used to run Llama-3.1-8B fp16
    on the 8 GiB U280), and its decision lines are the command's, character for character."""
    block = re.search(r"```console\n\$ fpgasim (.*?)\n(.*?)```", README, flags=re.S)
    argv, shown = block.group(1).split(), block.group(2)
    res = run_cli(capsys, *argv)
    assert res.code == 0, res.err
    wanted = [line for line in shown.splitlines() if "rests on:" in line or "AAT " in line]
    assert len(wanted) >= 3
    printed = set(res.out.splitlines())
    for line in wanted:
        assert line in printed, line
    summary = json.loads(run_cli(capsys, *argv, "--format", "json").out)["summary"]
    assert all(s["fits_memory"] is True and s["fits_dsps"] is True for s in summary)


def test_timings_live_in_docs_benchmarks() -> None:
    text = (REPO / "docs" / "benchmarks.md").read_text()
    for bench in (REPO / "benchmarks").glob("bench_*.py"):
        assert bench.name in text, bench.name


def test_no_committed_outputs() -> None:
    """explore.csv and explore.png were committed at the root; they are outputs, ignored."""
    ignored = (REPO / ".gitignore").read_text().splitlines()
    assert "/explore.csv" in ignored and "/explore.png" in ignored
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.splitlines()
    assert not [f for f in tracked if "/" not in f and f.endswith((".png", ".parquet"))
                or f in ("explore.csv",)]


def _leaves(command: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """(name, command) of every runnable command under a group."""
    if hasattr(command, "list_commands"):  # a group (typer's click, or its lazy group)
        out = []
        for name in command.list_commands(None):
            sub = command.get_command(None, name)
            out += _leaves(sub, f"{prefix} {name}".strip())
        return out
    return [(prefix, command)]


def test_every_result_command_takes_the_three_formats() -> None:
    """`boards --format json` failed (its flag was --json); simulate and design fit refused
    csv. Every command that prints a result now takes --format table|json|csv (some more)."""
    leaves = _leaves(typer.main.get_command(app))
    assert len(leaves) > 15
    for name, command in leaves:
        if name in NO_RESULT:
            continue
        formats = [p for p in command.params if "--format" in getattr(p, "opts", ())]
        assert formats, f"{name}: no --format"
        choices = {m.value for m in formats[0].type_descriptor.annotation}
        assert {"table", "json", "csv"} <= choices, (name, choices)


@pytest.mark.slow
def test_formats_print_what_they_say(capsys) -> None:
    res = run_cli(capsys, "boards", "--format", "json")
    assert res.code == 0 and {"boards", "fpgas", "designs", "fits"} <= set(json.loads(res.out))
    assert json.loads(run_cli(capsys, "boards", "--json").out) == json.loads(res.out)
    res = run_cli(capsys, "boards", "--json", "--format", "csv")
    assert res.code == 2 and "--json" in res.err
    res = run_cli(capsys, "simulate", "-b", "v80", "-m", "llama-3.1-8b", "-L", "256",
                  "-e", "analytic", "--format", "csv")
    assert res.code == 0, res.err
    row = pd.read_csv(io.StringIO(res.out))
    assert len(row) == 1 and row.loc[0, "board"] == "v80" and row.loc[0, "verify_cycles"] > 0
    res = run_cli(capsys, "design", "fit", "--fpga", "u55c", "--design", "flightllm",
                  "--format", "csv")
    assert res.code == 0 and pd.read_csv(io.StringIO(res.out)).loc[0, "fits"]


@pytest.mark.parametrize(("args", "expected"), [
    (["--fpga", "U55C", "--design", "FlightLLM"], None),
    (["--board", "V80"], None),
    (["--fpga", "u55", "--design", "flightllm"], "did you mean u55c"),
    (["--board", "u28"], "did you mean u280"),
    (["--board", "u55c"], "--fpga u55c --design D"),
    (["--board", "flightllm"], "--design flightllm --fpga F"),
])
def test_names_are_case_insensitive_and_suggest(capsys, args, expected) -> None:
    res = run_cli(capsys, "simulate", *args, "-m", "llama-3.1-8b", "-L", "256", "-e",
                  "analytic", "--format", "json")
    if expected is None:
        assert res.code == 0, res.err
        return
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1, res.err
    assert expected in res.err, res.err


def test_a_shipped_config_is_a_model_name(capsys) -> None:
    """`fpgasim models` lists the shipped Hugging Face configs by name and `-m` takes that
    name (any case); a near name says which one and its path."""
    listed = json.loads(run_cli(capsys, "models", "--format", "json").out)
    assert "Qwen2-7B-Instruct" in [m["model"] for m in listed]
    for name in ("Qwen2-7B-Instruct", "qwen2-7b-instruct"):
        res = run_cli(capsys, "simulate", "-b", "v80", "-m", name, "-L", "256", "-e",
                      "analytic", "--format", "json")
        assert res.code == 0 and json.loads(res.out)["model"] == "Qwen2-7B-Instruct", res.err
    res = run_cli(capsys, "simulate", "-b", "v80", "-m", "Qwen2-7B", "-L", "256")
    assert res.code == 2
    assert "did you mean Qwen2-7B-Instruct (workloads/models/hf/Qwen2-7B-Instruct.json)" in \
        res.err
