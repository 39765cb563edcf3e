"""`fpgasim explore`: a board varied over fields of its FPGA or design file (`--vary`), re-fitted,
solved per drafter and context: the delivered rate, DSPs, Pareto front, the cheapest paying
design, the heat maps, the cache. (The FlightLLM design-space cases of the retired
`studies/explore.py` are here too, against `--vary`.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.board_loader import BoardBase
from fpgasim.studies.explore import (
    RESULT_COLUMNS,
    cheapest_paying,
    explore,
    pareto_flags,
    solve_boards,
    verdict,
)
from fpgasim.sweep.space import parse_vary
from tests.cli_helpers import run_cli

LLAMA = load_model("llama-3.1-8b")
LONGSPEC = load_algorithm("longspec")
AXES = ("design.mm_cols", "fpga.memory.bandwidth_gb_s")


@pytest.fixture(scope="module")
def result():
    # the study's V80 (128-row array): 128x48 and 128x256 at 77 and 1638 GB/s
    variation = parse_vary(["design.mm_cols=48,256", "fpga.memory.bandwidth_gb_s=77,1638"])
    return explore(BoardBase("v80"), variation, LLAMA, [LONGSPEC], [1024], engine="analytic",
                   executor="inprocess")


def test_one_row_per_board_and_context(result) -> None:
    s = result.summary
    assert len(s) == 4 and result.axes == AXES
    assert list(s.columns[:5]) == ["board", "fpga", "design", *AXES]
    assert list(s.columns[5:]) == [c for c in RESULT_COLUMNS if c not in s.columns[:5]]
    assert set(s["design.mm_cols"]) == {48, 256}
    assert set(s["fpga.memory.bandwidth_gb_s"]) == {77, 1638}
    assert set(s["mm_macs_per_cycle"]) == {128 * 48, 128 * 256}
    assert result.stats.points == len(result.points)
    # the analytic engine is the accounting: no second opinion beside it
    assert s["decision_accounting"].isna().all()


def test_bandwidth_sets_ad_speed_and_compute_sets_best_x(result) -> None:
    s = result.summary.set_index(list(AXES))
    # AD is memory-bound: 21x the bandwidth gives ~21x the AD speed, whatever the array
    ratio = s.loc[(256, 1638), "ad_tokens_per_s"] / s.loc[(256, 77), "ad_tokens_per_s"]
    assert ratio == pytest.approx(1638 / 77, rel=0.05)
    # compute-rich + bandwidth-poor verifies the longest trees; compute-poor +
    # bandwidth-rich the shortest (the ridge point moves with MAC/cycle over bandwidth)
    assert s.loc[(256, 77), "best_verify_len"] >= s.loc[(48, 1638), "best_verify_len"]
    assert s.loc[(48, 1638), "speedup"] < s.loc[(256, 1638), "speedup"]
    # more of both never lowers the delivered throughput
    assert s.loc[(256, 1638), "tokens_per_s"] >= s["tokens_per_s"].max() - 1e-9


def test_delivered_rate_is_the_better_of_sd_and_ad(result) -> None:
    s = result.summary
    sd = s["decision"] == "use SD"
    assert (sd == (s["speedup"] > 1)).all()
    assert (s.loc[sd, "tokens_per_s"] == s.loc[sd, "best_sd_tokens_per_s"]).all()
    assert (s.loc[~sd, "tokens_per_s"] == s.loc[~sd, "ad_tokens_per_s"]).all()
    np.testing.assert_allclose(s["speedup"], s["best_sd_tokens_per_s"] / s["ad_tokens_per_s"])
    # 128x256 fp16 MACs need 32,768 DSP58 slices: more than the V80 has
    assert (s["fits_dsps"] == (s["dsps_used"] <= s["dsps_available"])).all()
    assert not s.loc[s["design.mm_cols"] == 256, "fits"].any()
    assert (s["pareto"] <= s["fits"]).all()


def test_verdict_names_a_direction(result) -> None:
    lines = verdict(result.summary, result.axes)
    assert len(lines) == 1 and lines[0].startswith("longspec L=1024: fastest fitting ")
    assert "one step up the diagonal: mm_cols x" in lines[0]
    assert "-> more mm_cols" in lines[0] or "-> more bandwidth_gb_s" in lines[0]
    # the fastest board (128x256 at 1638 GB/s) does not fit: named beside the fitting one
    assert "faster but not fitting: design.mm_cols=256; fpga.memory.bandwidth_gb_s=1638" \
        in lines[0]


@pytest.mark.slow
def test_cli_writes_table_and_figure(tmp_path: Path, capsys) -> None:
    out = tmp_path / "ex.csv"
    res = run_cli(capsys, "explore", "--board", "v80", "--vary", "design.mm_cols=48,128",
                  "--vary", "fpga.memory.bandwidth_gb_s=460,819", "--model", "llama-3.1-8b",
                  "--algorithm", "longspec", "--contexts", "256", "--engine", "analytic",
                  "--executor", "inprocess", "--no-cache", "--out", str(out))
    assert res.code == 0, res.err
    frame = pd.read_csv(out)
    assert len(frame) == 4 and list(frame.columns[:5]) == ["board", "fpga", "design", *AXES]
    assert (frame["fpga"] == "v80").all() and (frame["design"] == "study").all()
    assert (tmp_path / "ex.png").stat().st_size > 10_000
    assert "longspec L=256: fastest fitting" in res.out
    assert "cheapest fitting board where SD pays" in res.out
    cols = list(frame.columns)  # verdict first; provenance beside the engine
    assert cols.index("decision") == cols.index("best_verify_len") - 1
    assert (frame["engine"] == "analytic").all() and (frame["aat_basis"] == "measured").all()
    rule = frame["speedup"].gt(1).map({True: "use SD", False: "use AD"})
    assert (frame["decision"] == rule).all()
    # every row's absolute figures carry their validation, printed once under the table
    assert frame["validation"].str.startswith("the study's accounting").all()
    # (the verdict lines under it say what they rest on, the validation included)
    under = [line for line in res.out.splitlines()
             if line.lstrip().startswith("validation: the study's accounting")]
    assert len(under) == 1


def test_heat_map_greys_out_cells_where_ad_wins(result, tmp_path: Path, monkeypatch) -> None:
    """No SD colour where AD wins: such cells are NaN in the images (drawn grey, hatched,
    labelled AD with AD's rate) in every heat map; the others keep their colour."""
    import dataclasses

    import matplotlib.pyplot as plt

    from fpgasim.figures import plots as plot_module

    summary = result.summary.copy()
    first = summary.index[0]
    summary.loc[first, ["speedup", "decision"]] = [0.9, "use AD"]
    summary.loc[first, "tokens_per_s"] = summary.loc[first, "ad_tokens_per_s"]
    captured = {}
    monkeypatch.setattr(plot_module, "write_figure", lambda fig, _p: captured.update(fig=fig))
    plot_module.plot_explore(dataclasses.replace(result, summary=summary), tmp_path / "x.png")
    fig = captured["fig"]
    images = [im for ax in fig.axes for im in ax.get_images()]
    assert len(images) == 2  # delivered tokens/s and the speedup, one drafter
    n_ad = int((summary["decision"] == "use AD").sum())
    assert n_ad >= 1
    for im in images:
        assert int(np.isnan(np.asarray(im.get_array(), float)).sum()) == n_ad
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert sum(t.startswith("AD") for t in texts) == 2 * n_ad
    ad_rate = f"AD\n{summary.loc[first, 'ad_tokens_per_s']:.3g}"
    assert ad_rate in texts  # the delivered cell shows AD's rate
    legend = " ".join(t.get_text() for lg in fig.legends for t in lg.get_texts())
    assert "use AD" in legend
    plt.close(fig)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--vary", "mv_lanes=2"], "argument --vary"),
        (["--vary", "design.mm_cols=48", "--vary", "design.mm_cols=64"], "argument --vary"),
        (["--vary", "design.mv_lanes=0"], "mv_lanes = 0"),
        (["--vary", "design.mm_rows=48"], "rows = 48"),
        (["--vary", "design.mm_cols=8"], "mm_cols = 8"),
        (["--vary", "design.clock_mhz=0"], "clock_mhz = 0"),
        (["--vary", "fpga.memory.bandwidth_gb_s=fast"], "bandwidth_gb_s = 'fast'"),
        (["--vary", "fpga.memory.bandwidth_gb_s=-5"], "bandwidth_gb_s = -5"),
        (["--vary", "design.nope=3"], "design.nope = 3"),
        (["--verify-lens", "1000"], "argument --verify-lens"),
        (["--contexts", "0"], "--contexts"),
    ],
)
def test_cli_bad_input_one_line(tmp_path: Path, capsys, args: list[str], needle: str) -> None:
    contexts = [] if "--contexts" in args else ["--contexts", "256"]
    res = run_cli(capsys, "explore", "--board", "flightllm-vhk158", *args, *contexts,
                  "--model", "llama2-7b-flightllm", "--algorithms", "longspec", "--engine",
                  "fast", "--executor", "inprocess", "--no-cache", "--out",
                  str(tmp_path / "o.csv"))
    assert res.code == 2, res.err
    assert len(res.err.strip().splitlines()) == 1 and needle in res.err, res.err
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "o.png").exists()


# ------------------------------------------------------------- Pareto front, cheapest design


def test_pareto_front_by_hand() -> None:
    frame = pd.DataFrame(
        {
            "algorithm": ["a"] * 5 + ["b"],
            "context": [1] * 6,
            "batch": [1] * 6,
            "dsps_used": [100, 200, 150, 300, 50, 10],
            "tokens_per_s": [1.0, 1.5, 0.9, 1.4, 2.0, 0.5],
            "fits": [True, True, True, True, False, True],
        }
    )
    # the 50-DSP design does not fit; among the rest 100 -> 1.0 and 200 -> 1.5 are the front
    # (150 is slower than 100, 300 slower than 200); group b is on its own
    assert pareto_flags(frame) == [True, True, False, False, False, True]


def test_cheapest_paying_by_hand() -> None:
    frame = pd.DataFrame(
        {
            "algorithm": ["a", "a", "a", "a", "a", "b"],
            "context": [1, 1, 1, 1, 1, 1],
            "batch": [1] * 6,
            "dsps_used": [100, 200, 150, 150, 120, 10],
            "decision": ["use AD", "use SD", "use SD", "use SD", "use SD", "use AD"],
            "speedup": [0.9, 1.5, 1.3, 1.2, 1.8, 0.5],
            "fits": [True, True, True, True, False, True],
            "changes": ["none (the base)", "x=2", "x=2; y=4", "x=4", "x=8", "none (the base)"],
        }
    )
    # 120 DSPs pays but does not fit; 150 is the cheapest fitting paying cost; of its two,
    # the one-field change wins over the faster two-field one; b never pays
    best = cheapest_paying(frame)
    assert best[["algorithm", "dsps_used", "changes"]].values.tolist() == [["a", 150, "x=4"]]


# ------------------------------------------------ FlightLLM's design: MV lanes, cache, solve


def test_two_mv_lanes_make_sd_pay_at_no_dsp_cost() -> None:
    # docs/flightllm-sd.md: published (1 lane) -> use AD; 2 lanes -> SD pays, same slices
    s = explore(BoardBase("flightllm-vhk158"), parse_vary(["design.mv_lanes=1,2"]),
                load_model("llama2-7b-flightllm"), [load_algorithm("eagle3")], [256],
                engine="fast", executor="inprocess", verify_lens=[2, 3, 4]).summary
    by = s.set_index("design.mv_lanes")
    assert by.loc[1, "decision"] == "use AD" and by.loc[1, "speedup"] < 1 < by.loc[2, "speedup"]
    assert by.loc[1, "dsps_used"] == by.loc[2, "dsps_used"] == 6144  # 4 x 1,536 DSP58
    assert by.loc[2, "mv_macs_per_cycle"] == 2 * by.loc[1, "mv_macs_per_cycle"]
    assert by.loc[1, "ad_tokens_per_s"] == by.loc[2, "ad_tokens_per_s"]  # AD uses one lane
    assert by.loc[1, "changes"] == "none (the base)"  # the base has one lane
    assert by["pareto"].tolist() == [False, True]
    # the accounting has no MV limit: it says SD on both, and the disagreement is a line
    assert (by["decision_accounting"] == "use SD").all()
    lines = verdict(s, ("design.mv_lanes",))
    assert any("mv_lanes=1: SD-or-AD differs: the accounting says use SD" in x for x in lines)


def test_explore_is_cached_and_resumes(tmp_path: Path) -> None:
    from fpgasim.sweep.cache import SweepCache

    args = (BoardBase("flightllm-vhk158"), parse_vary(["design.clock_mhz=200,225"]),
            load_model("llama2-7b-flightllm"), [LONGSPEC], [256])
    kwargs = {"engine": "fast", "executor": "inprocess", "verify_lens": [2, 4],
              "accounting": False}
    with SweepCache(tmp_path / "cache") as cache:
        first = explore(*args, cache=cache, **kwargs)
        again = explore(*args, cache=cache, **kwargs)
    assert first.stats.computed == first.stats.points == 2 * 3 > 0
    assert again.stats.computed == 0 and again.stats.cached == first.stats.points
    pd.testing.assert_frame_equal(first.summary, again.summary)
    # a faster clock at the same bandwidth is never slower
    by = first.summary.set_index("design.clock_mhz")
    assert by.loc[225, "ad_tokens_per_s"] >= by.loc[200, "ad_tokens_per_s"]


def test_solve_boards_agrees_with_the_solver() -> None:
    from fpgasim.solving.solver import solve

    model = load_model("llama2-7b-flightllm")
    boards = [load_board("u280"), load_board("v80")]
    rows = solve_boards(boards, model, [LONGSPEC], [256, 1024], engine="analytic",
                        executor="inprocess")
    assert len(rows) == 4
    for board in boards:
        ref = solve(board, model, LONGSPEC, [256, 1024], engine="analytic").summary
        mine = rows[rows["board"] == board.name].sort_values("context")
        assert (mine["dsps_used"] == board.fit.dsps_used).all()
        assert mine["best_verify_len"].tolist() == ref["best_verify_len"].tolist()
        assert mine["speedup"].tolist() == pytest.approx(ref["best_speedup"].tolist(), rel=1e-12)
