"""Everything a command can know is checked before any work: a drafter the board's lowering
cannot lower is refused up front; an unusable matplotlib folder gives no warnings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fpgasim.cli import mpl_config
from tests.cli_helpers import run_cli

FLIGHT = ["-b", "flightllm-vhk158", "-m", "llama2-7b-flightllm"]
COMMANDS = [
    ["solve", *FLIGHT, "-a", "eagle3", "--contexts", "512"],
    ["compare-algorithms", *FLIGHT, "--contexts", "512"],
    ["generate", *FLIGHT, "-P", "128", "-D", "64", "-a", "eagle3"],
    ["simulate", *FLIGHT, "-a", "falcon", "-L", "512"],
    ["sweep", *FLIGHT, "-a", "eagle3", "--contexts", "512", "--verify-lens", "1-4",
     "--no-cache", "--out", "{tmp}/s.csv"],
    ["explore", "--board", "flightllm-vhk158", "--vary", "design.mv_lanes=1,2", "-m",
     "llama2-7b-flightllm", "-a", "eagle3", "--contexts", "1024", "--no-cache",
     "--out", "{tmp}/e.csv"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_an_unsupported_drafter_is_refused_before_any_work(command: list[str], tmp_path: Path,
                                                           capsys, monkeypatch) -> None:
    # FlightLLM's compiler lowers every block of the built-in drafters' networks: a lowering
    # without EAGLE-3's fc and Falcon's LSTM stands in for one that cannot lower them
    from dataclasses import replace

    from fpgasim.dataflow.drafters.network import Fc, Lstm
    from fpgasim.dataflow.lowerings import registry

    flight = registry.LOWERINGS["flightllm"]
    monkeypatch.setitem(registry.LOWERINGS, "flightllm",
                        replace(flight, block_kinds=flight.block_kinds - {Fc.kind, Lstm.kind}))
    # the up-front check (lowering.check_drafter) names the board; the late one did not
    res = run_cli(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in command])
    assert res.code == 2, res.err
    (line,) = res.err.strip().splitlines()
    assert "--algorithm" in line and "on flightllm-vhk158" in line, line
    assert "Fc" in line or "Lstm" in line, line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("env", [{"MPLCONFIGDIR": "/proc/no-such-folder"},
                                 {"HOME": "/proc", "XDG_CONFIG_HOME": ""}])
@pytest.mark.slow
def test_an_unusable_matplotlib_folder_prints_nothing(env: dict[str, str],
                                                      tmp_path: Path) -> None:
    base = {k: v for k, v in os.environ.items() if k not in ("MPLCONFIGDIR", "XDG_CONFIG_HOME")}
    # the accounting alone: the figure (matplotlib) is the point, not the simulator beside it
    proc = subprocess.run([sys.executable, "-m", "fpgasim", "reproduce", "fig1", "--engine",
                           "analytic", "--out", str(tmp_path)], env={**base, **env},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"fig1: wrote {tmp_path}/fig1.csv, {tmp_path}/fig1.md, {tmp_path}/fig1.png"]


def test_a_usable_folder_is_kept_and_an_unusable_one_replaced(monkeypatch,
                                                              tmp_path: Path) -> None:
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "mpl"))
    assert mpl_config.use_usable_dir() == tmp_path / "mpl"
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "file" / "mpl"))
    chosen = mpl_config.use_usable_dir()
    assert chosen != tmp_path / "file" / "mpl" and chosen.is_dir()
    assert os.environ["MPLCONFIGDIR"] == str(chosen)
