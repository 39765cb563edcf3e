"""Capacity and DSPs decide the same way in every command and at every batch
(docs/hardware.md, "What does not fit"): a point whose weights and KV caches outgrow the
board's memory, or a board whose arrays exceed what the part leaves a design, is timed as if
it fit and marked: `fits_memory` / `fits_dsps` false in every row that shows its speed, one
warning line per resource on stderr, and left out of every ranking. Before, Llama-3.1-8B
fp16 on the 8 GiB U280 was timed with a warning at batch 1 and refused at batch 8.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.cli_helpers import run_cli

#: Llama-3.1-8B in fp16 (16 GB of weights) on the study's 8 GiB U280: fits at no batch
U280 = ("--board", "u280", "--model", "llama-3.1-8b")


def warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("fpgasim: warning:")]


@pytest.mark.parametrize("batch", ["1", "8"])
def test_simulate_marks_at_every_batch(capsys, batch: str) -> None:
    result = run_cli(capsys, "simulate", *U280, "-L", "1024", "--batch", batch, "-e", "analytic",
                     "--format", "json")
    assert result.code == 0, result.err
    row = json.loads(result.out)
    assert row["fits_memory"] is False and row["fits_dsps"] is True
    [line] = warnings(result.err)
    assert "u280 has 8 GiB" in line and "fits_memory = False" in line


def test_solve_marks_every_batch_and_ranks_none(capsys) -> None:
    result = run_cli(capsys, "solve", *U280, "-a", "longspec", "--task", "gov_report",
                     "--contexts", "1024", "--batch", "1,8", "-e", "analytic", "--format", "json")
    assert result.code == 0, result.err
    out = json.loads(result.out)
    assert sorted(r["batch"] for r in out["summary"]) == [1, 8]
    assert all(r["fits_memory"] is False for r in out["summary"])
    [crossover] = out["crossover"]
    assert crossover["batches"] == "" and crossover["unfit_batches"] == "1,8"
    [line] = warnings(result.err)
    assert "for 8 requests" in line and "(also at L=1024)" in line
    table = run_cli(capsys, "solve", *U280, "-a", "longspec", "--task", "gov_report",
                    "--contexts", "1024", "--batch", "1,8", "-e", "analytic")
    assert "no batch solved fits the memory (1,8" in table.out


def test_generate_marks_a_batch_that_does_not_fit(capsys) -> None:
    """FlightLLM's VHK158 (32 GiB, int4 weights) holds 29 requests' caches at 4,000 tokens."""
    args = ["generate", "--board", "flightllm-vhk158", "--model", "llama2-7b-flightllm",
            "-P", "4000", "-D", "2", "--engine", "analytic", "--format", "json"]
    fits = json.loads(run_cli(capsys, *args, "--batch", "29").out)["summary"]
    result = run_cli(capsys, *args, "--batch", "30")
    assert result.code == 0, result.err
    summary = json.loads(result.out)["summary"]
    assert fits["fits_memory"] is True and summary["fits_memory"] is False
    [line] = warnings(result.err)
    assert "for 30 requests" in line and "at most 29 requests fit at L=4" in line


def test_arrays_beyond_the_part_are_marked_in_every_command(capsys) -> None:
    """The study's V80 array (16,384 fp16 MACs on 10,848 DSP58) in simulate, solve and
    compare-algorithms: the row says fits_dsps false, the warning says beyond the part."""
    board = ("--board", "v80", "--model", "llama-3.1-8b")
    runs = {
        "simulate": run_cli(capsys, "simulate", *board, "-L", "1024", "-x", "128", "-e",
                            "analytic", "--format", "json"),
        "solve": run_cli(capsys, "solve", *board, "-a", "longspec", "--task", "gov_report",
                         "--contexts", "1024", "-e", "analytic", "--format", "json"),
        "compare": run_cli(capsys, "compare-algorithms", *board, "--algorithms",
                           "longspec,eagle3", "--contexts", "1024", "--engine", "analytic",
                           "--format", "json"),
    }
    for name, result in runs.items():
        assert result.code == 0, (name, result.err)
        [line] = warnings(result.err)
        assert "beyond the part" in line and "fits_dsps = False" in line, name
        out = json.loads(result.out)
        rows = {"simulate": [out], "solve": out.get("summary"),
                "compare": out.get("table")}[name]
        assert rows and all(r["fits_dsps"] is False for r in rows), name


def test_the_batching_table_marks_the_oversized_arrays() -> None:
    """docs/batch_crossover.csv (`fpgasim reproduce batch_crossover`) carries fits_dsps per row,
    and docs/batching.md's table names the study's arrays beyond their parts."""
    from pathlib import Path
    docs = Path(__file__).resolve().parents[2] / "docs"
    frame = pd.read_csv(docs / "batch_crossover.csv")
    beyond = set(frame.loc[frame["fits_dsps"] == False, "board"])  # noqa: E712
    assert beyond == {"vhk158 (study)", "v80 (study)", "u250 (study)"}
    table = [line for line in (docs / "batching.md").read_text().splitlines()
             if line.startswith("| ") and "(study" in line]
    assert table and all(("beyond its DSPs" in line) == ("u280" not in line) for line in table)
