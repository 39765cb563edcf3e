"""Outputs that say what they rest on (issue 42): `solve --batch` as complete as the plain
solve, crossover lines that claim only what was solved, a batch figure of the solved points
titled with its board, explore's "fewest changes" rule and its figure."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from fpgasim.config import load_algorithm, load_model
from fpgasim.config.board_loader import BoardBase
from fpgasim.figures import plots as plot_module
from fpgasim.figures.plots import plot_batch_speedups, plot_explore
from fpgasim.solving.solver import SUMMARY_COLUMNS, batch_crossover, crossover_lines
from fpgasim.studies.explore import cheapest_paying, explore
from fpgasim.sweep.space import parse_vary
from tests.cli_helpers import run_cli
from tests.figures.test_figures import assert_inside

BATCH = ("solve", "-b", "flightllm-vhk158", "-m", "llama-3.1-8b", "-a", "eagle3",
         "--contexts", "1024", "--batch", "1,8")


@pytest.mark.slow
def test_batch_summary_is_the_plain_summary_per_batch(capsys) -> None:
    """Every column of the plain summary (AAT basis and note, trees, tokens/J, regime, fit)
    is in the batch JSON, and batch 1's row is the plain solve's; the table names the tree
    and tokens/J and says which AAT each context rests on. Before: no aat_note, tree or
    tokens/J in the batch table, none of them in its JSON."""
    res = run_cli(capsys, *BATCH, "-f", "json")
    assert res.code == 0, res.err
    rows = json.loads(res.out)["summary"]
    assert set(SUMMARY_COLUMNS) <= set(rows[0])
    plain = run_cli(capsys, *BATCH[:-2], "-f", "json")
    (one,) = json.loads(plain.out)["summary"]
    first = next(r for r in rows if r["batch"] == 1)
    for column in SUMMARY_COLUMNS:
        assert first[column] == one[column], column
    assert first["aat_note"] and first["best_tree"].startswith("depth=")
    table = run_cli(capsys, *BATCH)
    assert "best tree" in table.out and "tok/J" in table.out
    assert "L=1024: AAT measured: measured eagle3_dynamic curve" in table.out


@pytest.mark.slow
def test_batch_options_mean_what_they_mean_without_batches(capsys) -> None:
    """--objective energy with a list of batches was silently ignored (the batch summary
    was the throughput optimum); now every batch is solved for it and says so."""
    res = run_cli(capsys, *BATCH, "--objective", "energy", "-f", "json")
    assert res.code == 0, res.err
    rows = json.loads(res.out)["summary"]
    assert {r["objective"] for r in rows} == {"energy"}
    for r in rows:
        assert r["best_verify_len"] == r["energy_best_verify_len"]


def test_crossover_line_names_where_sd_pays_and_where_not() -> None:
    """AD at B = 1 and SD at B = 8 read 'SD pays at no batch solved (1,8; 0.918x at 1);
    pays again at 8'; now each solved batch is named with its speedup, and nothing between
    them is claimed."""
    summary = pd.DataFrame(
        [("t", 1024, 1, "use AD", 0.918), ("t", 1024, 8, "use SD", 1.2),
         ("t", 2048, 1, "use AD", 0.8), ("t", 2048, 8, "use AD", 0.9),
         ("t", 4096, 1, "use SD", 1.5), ("t", 4096, 2, "use SD", 1.3),
         ("t", 4096, 8, "use AD", 0.9)],
        columns=["task", "context", "batch", "decision", "best_speedup"])
    lines = crossover_lines(batch_crossover(summary), summary)
    assert lines[0] == "  L=1024: SD pays at B = 8 (1.2x); AD at B = 1 (0.918x) (batches " \
                      "solved: 1,8)"
    assert lines[1].startswith("  L=2048: SD pays at no batch solved; AD at B = 1 (0.8x), 8")
    assert lines[2] == ("  L=4096: SD pays up to batch 2 and not from 8 on: SD at B = 1 "
                        "(1.5x), 2 (1.3x); AD at B = 8 (0.9x)")


def test_batch_figure_draws_the_solved_points_titled_with_the_board(tmp_path: Path,
                                                                      monkeypatch) -> None:
    captured = {}
    monkeypatch.setattr(plot_module, "write_figure", lambda fig, _p: captured.update(fig=fig))
    summary = pd.DataFrame({"board": "flightllm-vhk158", "task": "t", "context": 1024,
                            "batch": [1, 8], "best_speedup": [0.918, 1.2],
                            "batch_tokens_per_s": [80.0, 700.0], "algorithm": "eagle3",
                            "model": "llama-3.1-8b", "engine": "fast"})
    plot_batch_speedups(summary, tmp_path / "b.png")
    fig = captured["fig"]
    assert "flightllm-vhk158" in fig.get_suptitle()
    for ax in fig.axes:
        for line in ax.get_lines():
            if len(line.get_xdata()) > 1 and line.get_label() != "SD = AD":
                assert line.get_linestyle() == "None", line.get_label()
    assert_inside(fig, "solve --batch --plot")


@pytest.fixture(scope="module")
def explored():
    """v80 varied at and off its own values (mm_cols 128 is the base's, bandwidth 819.2 its
    data sheet's), on the accounting, two contexts."""
    variation = parse_vary(["design.mm_cols=64,128", "fpga.memory.bandwidth_gb_s=819.2,1638"])
    return explore(BoardBase("v80"), variation, load_model("llama-3.1-8b"),
                   [load_algorithm("longspec")], [256, 4096], engine="analytic",
                   executor="inprocess")


def test_explore_changes_count_only_fields_off_the_base(explored) -> None:
    """A variant at the base's value of a field does not list it: the base itself reads
    'none (the base)', so "fewest changes" breaks a tie as documented."""
    s = explored.summary
    at = s.set_index(["design.mm_cols", "fpga.memory.bandwidth_gb_s"])["changes"]
    assert set(at.loc[(128, 819.2)]) == {"none (the base)"}
    assert set(at.loc[(64, 819.2)]) == {"design.mm_cols=64"}
    assert set(at.loc[(128, 1638)]) == {"fpga.memory.bandwidth_gb_s=1638"}
    tie = pd.DataFrame({"algorithm": "a", "batch": 1, "context": 1, "decision": "use SD",
                        "fits": True, "dsps_used": 100, "speedup": [1.5, 1.2],
                        "changes": ["design.x=1; fpga.y=2", "design.x=1"]})
    assert cheapest_paying(tie)["changes"].tolist() == ["design.x=1"]


@pytest.mark.slow
def test_explore_figure_shows_every_context_on_a_break_even_scale(explored, tmp_path,
                                                                 monkeypatch) -> None:
    """Heat maps for every context (not the last only), the speedup's colours centred on
    1.0 so a paying cell is never red, the Pareto axis one DSP count when every variant
    shares it, and the title inside the canvas."""
    captured = {}
    monkeypatch.setattr(plot_module, "write_figure", lambda fig, _p: captured.update(fig=fig))
    plot_explore(explored, tmp_path / "e.png")
    fig = captured["fig"]
    titles = [ax.get_title() for ax in fig.axes]
    for context in ("256", "4,096"):
        assert sum(f"L = {context}" in t for t in titles) == 2, titles
    for ax in fig.axes:
        if "speedup" in ax.get_title():
            (image,) = ax.get_images()
            assert image.norm.vcenter == 1.0
            assert image.norm(1.0001) > 0.5 > image.norm(0.9999)
    assert_inside(fig, "explore")
    same = explored.summary.assign(dsps_used=6144)
    plot_explore(type(explored)(same, explored.points, explored.stats, explored.axes),
                 tmp_path / "f.png")
    ax = captured["fig"].axes[0]
    low, high = ax.get_xlim()
    assert low < 6144 < high and high - low >= 0.1 * 6144
    assert "every variant: 6,144 DSPs" in ax.get_title()
