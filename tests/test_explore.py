"""`fpgasim explore`: hypothetical boards, best x and speedup over (MAC/cycle, bandwidth)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fpgasim.analysis.explore import explore, verdict
from fpgasim.config import load_algorithm, load_board, load_model
from tests.cli_helpers import run_cli

V80 = load_board("v80")
LLAMA = load_model("llama-3.1-8b")
LONGSPEC = load_algorithm("longspec")


@pytest.fixture(scope="module")
def result():
    return explore(V80, [(64, 48), (256, 128)], [77, 1638], LLAMA, LONGSPEC, [1024],
                   engine="analytic", executor="inprocess")


def test_one_row_per_board_and_context(result) -> None:
    s = result.summary
    assert len(s) == 4
    assert set(s["pe_array"]) == {"64x48", "256x128"}
    assert set(s["bandwidth_gb_s"]) == {77.0, 1638.0}
    assert result.stats.points == len(result.points)


def test_bandwidth_sets_ad_speed_and_compute_sets_best_x(result) -> None:
    s = result.summary.set_index(["pe_array", "bandwidth_gb_s"])
    # AD is memory-bound: 21x the bandwidth gives ~21x the AD speed, whatever the PE array
    ratio = s.loc[("256x128", 1638.0), "ad_tokens_per_s"] / s.loc[("256x128", 77.0),
                                                                  "ad_tokens_per_s"]
    assert ratio == pytest.approx(1638 / 77, rel=0.05)
    # compute-rich + bandwidth-poor verifies the longest trees; compute-poor +
    # bandwidth-rich the shortest (the ridge point moves with MAC/cycle over bandwidth)
    assert s.loc[("256x128", 77.0), "best_verify_len"] >= s.loc[("64x48", 1638.0),
                                                                "best_verify_len"]
    assert s.loc[("64x48", 1638.0), "speedup"] < s.loc[("256x128", 1638.0), "speedup"]
    # more of both never lowers the best throughput
    assert s.loc[("256x128", 1638.0), "best_tokens_per_s"] >= s["best_tokens_per_s"].max() - 1e-9


def test_verdict_names_a_direction(result) -> None:
    lines = verdict(result.summary)
    assert len(lines) == 1 and ("more bandwidth" in lines[0] or "more DSPs" in lines[0])


def test_cli_writes_table_and_heat_map(tmp_path: Path, capsys) -> None:
    out = tmp_path / "ex.csv"
    res = run_cli(capsys, "explore", "--base-board", "v80", "--pe-arrays", "64x48,128x128",
                  "--bandwidths", "460,819", "--model", "llama-3.1-8b", "--algorithm",
                  "longspec", "--contexts", "256", "--engine", "analytic", "--executor",
                  "inprocess", "--no-cache", "--out", str(out))
    assert res.code == 0, res.err
    frame = pd.read_csv(out)
    assert len(frame) == 4 and list(frame.columns[:4]) == ["board", "pe_array",
                                                          "macs_per_cycle", "bandwidth_gb_s"]
    assert (tmp_path / "ex.png").stat().st_size > 10_000
    assert "L=256" in res.out
    cols = list(frame.columns)  # verdict first; provenance beside the engine
    assert cols.index("decision") == cols.index("best_verify_len") - 1
    assert (frame["lowering"] == "study").all() and (frame["engine"] == "analytic").all()
    rule = frame["speedup"].gt(1).map({True: "use SD", False: "use AD"})
    assert (frame["decision"] == rule).all()


def test_heat_map_greys_out_cells_where_ad_wins(result, tmp_path: Path, monkeypatch) -> None:
    """No SD colour where AD wins: such cells are NaN in the images (drawn grey, hatched,
    labelled AD) in every panel; the others keep their colour."""
    import matplotlib.pyplot as plt

    from fpgasim.analysis import explore as explore_module

    summary = result.summary.copy()
    summary.loc[summary.index[0], ["speedup", "decision"]] = [0.9, "use AD"]
    captured = {}
    monkeypatch.setattr(explore_module, "write_figure", lambda fig, _p: captured.update(fig=fig))
    explore_module.plot_explore(summary, tmp_path / "x.png")
    fig = captured["fig"]
    images = [im for ax in fig.axes for im in ax.get_images()]
    assert len(images) == 3
    n_ad = int((summary["decision"] == "use AD").sum())
    for im in images:
        assert int(np.isnan(np.asarray(im.get_array(), float)).sum()) == n_ad
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert sum(t.startswith("AD") for t in texts) == 3 * n_ad
    legend = " ".join(t.get_text() for lg in fig.legends for t in lg.get_texts())
    assert "use AD" in legend
    plt.close(fig)


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--pe-arrays", "64by48"), ("--bandwidths", "fast"), ("--bandwidths", "-5"),
     ("--pe-arrays", "0x48")],
)
def test_cli_bad_input_exit_2(tmp_path: Path, capsys, flag: str, value: str) -> None:
    args = {"--pe-arrays": "64x48", "--bandwidths": "460", flag: value}
    res = run_cli(capsys, "explore", "--base-board", "v80", "--model", "llama-3.1-8b",
                  "--algorithm", "longspec", "--contexts", "256", "--engine", "analytic",
                  "--no-cache", "--out", str(tmp_path / "o.csv"), *[
                      x for kv in args.items() for x in kv])
    assert res.code == 2, res.err
    assert len(res.err.strip().splitlines()) == 1
    assert not (tmp_path / "o.csv").exists()
