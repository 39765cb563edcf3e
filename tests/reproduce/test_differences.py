"""Each cell where the analytic reproduction differs from the study's text has the mechanism
docs/reproduction.md ("Cells that differ from the study's text") gives: recomputed here."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pandas as pd
import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.reproduce import run_experiment
from fpgasim.solving.solver import SolveOptions, solve

AAT = "workloads/aat"
LONGSPEC = load_algorithm("longspec")
LLAMA = load_model("llama-3.1-8b")


def speedup_at(curves: pd.DataFrame, x: int, **where) -> float:
    rows = curves[curves["verify_len"] == x]
    for key, value in where.items():
        rows = rows[rows[key] == value]
    return float(rows["speedup"].iloc[0])


@lru_cache(maxsize=1)
def table1() -> pd.DataFrame:
    return run_experiment("table1", engine="analytic", aat_dir=AAT).table


def test_table1_naive_512_is_a_threshold_crossing_between_measured_x() -> None:
    s = solve(load_board("v80"), LLAMA, LONGSPEC, [512], SolveOptions(aat_dir=AAT))
    row = s.summary.iloc[0]
    b, c = row["aat_b"], row["aat_c"]
    assert row["naive_verify_len"] == 44
    measured = sorted(s.curves["verify_len"].unique())
    assert measured[measured.index(44) - 1] == 41  # 41 and 44 are neighbours
    slope_41 = b / (41 - c)
    assert 0.02 < slope_41 < 0.0205  # just above the threshold
    assert round(slope_41, 2) == 0.02  # two decimals: the study's cell under <=
    assert 41 < c + b / 0.02 < 42  # the crossing
    assert round(speedup_at(s.curves, 41), 2) == 1.18  # the study's cell
    assert round(speedup_at(s.curves, 44), 2) == 1.14


@pytest.mark.slow
def test_table2_best_x_on_a_flat_optimum_between_measured_x() -> None:
    tasks = ["multi_news", "qmsum"]
    s = solve(load_board("v80"), LLAMA, LONGSPEC, [1024], SolveOptions(aat_dir=AAT, tasks=tasks))
    best = dict(zip(s.summary["task"], s.summary["best_verify_len"], strict=True))
    assert best == {"multi_news": 9, "qmsum": 15}
    measured = set(s.curves["verify_len"])
    assert 12 not in measured and 14 not in measured  # the study's x are not measured
    mn = [speedup_at(s.curves, x, task="multi_news") for x in (9, 11, 13)]
    assert max(mn) / min(mn) < 1.025
    qm = [speedup_at(s.curves, x, task="qmsum") for x in (13, 15)]
    assert abs(qm[1] - qm[0]) / qm[1] < 0.01
    fitted = solve(load_board("v80"), LLAMA, LONGSPEC, [1024],
                   SolveOptions(aat_dir=AAT, tasks=["multi_news"], aat_source="fitted"))
    assert int(fitted.summary["best_verify_len"].iloc[0]) == 12  # the study's multi_news x


def test_table4_u250_4096_x_does_not_give_its_speed() -> None:
    s = solve(load_board("u250"), LLAMA, LONGSPEC, [4096], SolveOptions(aat_dir=AAT))
    c = s.curves.set_index("verify_len")["p_eff_tokens_per_s"]
    assert int(s.summary["best_verify_len"].iloc[0]) == 18
    near = c.loc[[16, 17, 18]]
    assert near.max() / near.min() < 1.007  # a near-tie from 16 to 18
    assert c.loc[18] / c.loc[17] < 1.001
    assert 0.02 < 1 - c.loc[14] / c.loc[18] < 0.025  # x = 14 is 2.2% slower


@pytest.mark.slow
def test_table1_is_v80_not_u280() -> None:
    t = table1()
    ad = t[t["method"] == "ad"].set_index("context")["tokens_per_s"]
    for board, same in (("v80", True), ("vhk158", True), ("u280", False)):
        s = solve(load_board(board), LLAMA, LONGSPEC, [512, 4096], SolveOptions(aat_dir=AAT))
        for row in s.summary.to_dict("records"):
            equal = math.isclose(row["ad_tokens_per_s"], ad[row["context"]], rel_tol=1e-12)
            assert equal is same
    options = SolveOptions(aat_dir=AAT)
    u280 = solve(load_board("u280"), LLAMA, LONGSPEC, [256], options).summary.iloc[0]
    v80 = solve(load_board("v80"), LLAMA, LONGSPEC, [256], options).summary.iloc[0]
    assert round(1 - u280["ad_tokens_per_s"] / v80["ad_tokens_per_s"], 2) == 0.44


@pytest.mark.slow
def test_table1_average_is_2_41_and_2_44_is_table4_v80() -> None:
    t = table1()
    best = t[t["method"] == "best"]["speedup"]
    assert len(best) == 6 and round(float(best.mean()), 2) == 2.41
    t4 = run_experiment("table4", engine="analytic", aat_dir=AAT).table
    v80 = t4[t4["board"] == "v80"]["speedup"]
    assert round(float(v80.mean()), 2) == 2.44


@pytest.mark.slow
@pytest.mark.parametrize("model_id", ["vicuna-7b-v1.5"])
def test_fig4_mechanisms_tested_do_not_give_a_uniform_3_to_5_percent(model_id: str) -> None:
    """The candidates docs list for Fig. 4's 3-5% gap: none raises the average by 3-5%."""
    m = load_model(model_id)
    ctx = [128, 1024, 16384]
    # as fig4: the study measured Vicuna v1.5 past its 4,096-token window (fig4.yaml says why)
    base = solve(load_board("v80"), m, LONGSPEC, ctx,
                 SolveOptions(aat_dir=AAT, aat_source="fitted", beyond_window=True))
    mean = float(base.summary["best_speedup"].mean())
    measured = solve(load_board("v80"), m, LONGSPEC, ctx,
                     SolveOptions(aat_dir=AAT, aat_source="measured", beyond_window=True))
    assert float(measured.summary["best_speedup"].mean()) < mean  # lower, not higher
    table = pd.read_csv(f"{AAT}/longspec_models_by_context.csv")
    free, interp = [], []
    for row in base.summary.to_dict("records"):
        cur = base.curves[base.curves["context"] == row["context"]]
        pts = table[(table["model"] == model_id) & (table["context"] == row["context"])]
        pts = pts.sort_values("verify_len")
        aat = np.interp(np.log(cur["verify_len"]), np.log(pts["verify_len"]), pts["aat"])
        interp.append((aat / (cur["verify_s"] + cur["draft_s"])).max() / row["ad_tokens_per_s"])
        free.append((cur["aat"] / cur["verify_s"]).max() / row["ad_tokens_per_s"])
    assert np.mean(free) / mean > 1.10  # a free draft: far more than 5%
    assert abs(np.mean(interp) / mean - 1) < 0.02  # interpolated AAT: under 2%
