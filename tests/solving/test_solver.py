"""Solver: regimes on constructed boards, the Best/Ori/Naive sets, tasks, the done-when table."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from fpgasim.acceptance.measured import AAT_COLUMNS, load_aat_tables
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.errors import InputError
from fpgasim.solving.dynamic_schedule import lookup
from fpgasim.solving.solver import CURVE_COLUMNS, SUMMARY_COLUMNS, SolveOptions, solve
from fpgasim.tree.shapes import depth_based, width_based

MAX_TREE = (4, 16, 16, 16, 16, 16)
DONE_CONTEXTS = [128, 512, 2048, 4096, 8192, 16384]


def synthetic_aat(
    folder: Path, contexts=(128, 4096), tasks=("gov_report",), builder=width_based
) -> Path:
    """A measured-layout table: AAT = A + B·ln(x − C) at x = 2..85 (+ an Ori row).

    Trees: `builder` (width- or depth-based) over the maximal tree 4 16 16 16 16 16."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for t, task in enumerate(tasks):
        for context in contexts:
            a, b, c = 1.45 - 0.05 * t, 0.85 - 0.05 * math.log2(context / 128) / 7, 0.4
            for x in range(2, 86):
                shape = " ".join(map(str, builder(x - 1, MAX_TREE)))
                aat = min(x, a + b * math.log(x - c))
                rows.append(
                    [
                        "longspec",
                        "llama-3.1-8b",
                        task,
                        context,
                        "tree",
                        "prior_score",
                        x,
                        shape,
                        round(aat, 4),
                    ]
                )
            rows.append(
                [
                    "longspec",
                    "llama-3.1-8b",
                    task,
                    context,
                    "tree",
                    "original",
                    69,
                    "4 16 16 16 16",
                    round(a + b * math.log(69 - c) - 0.3, 4),
                ]
            )
    path = folder / "synthetic.csv"
    pd.DataFrame(rows, columns=list(AAT_COLUMNS)).to_csv(path, index=False)
    return folder


def board_file(repo: Path, tmp_path: Path, name: str, **overrides) -> Path:
    """A board file: v80's pair (the study's arrays on the V80) with `overrides`
    ('design.x' / 'fpga.x' -> value), as a user writes one."""
    data = yaml.safe_load((repo / "boards" / "v80.yaml").read_text())
    data["name"] = name
    data["overrides"] = {**data.get("overrides", {}), **overrides}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(scope="module")
def workload():
    return load_model("llama-3.1-8b"), load_algorithm("longspec")


def test_compute_poor_board_uses_ad(repo, tmp_path, workload) -> None:
    board = load_board(
        str(
            board_file(
                repo,
                tmp_path,
                "compute-poor",
                # the smallest array the compiler tiles (64 rows of one 16-block), a 16-MAC
                # MV array and a 10 MHz clock: ~10 GMAC/s against ~880 GB/s
                **{"design.mm_rows": 64, "design.mm_cols": 16,
                   "design.mv_macs_per_lane": 16, "design.clock_mhz": 10},
            )
        )
    )
    sol = solve(board, *workload, [128, 4096],
                SolveOptions(aat_dir=synthetic_aat(tmp_path / "aat")))
    s = sol.summary
    assert (s["regime"] == "compute-bound").all()
    assert (s["decision"] == "use AD").all()
    assert (s["best_speedup"] < 1).all() and (s["p_gain"] < 1.1).all()
    assert (sol.curves["speedup"] < 1).all()  # every x loses
    assert sol.schedule["verify_len"].tolist() == [1]
    assert sol.schedule["decision"].tolist() == ["use AD"]


def test_bandwidth_poor_board_verifies_long_trees(repo, tmp_path, workload) -> None:
    """Compute for free, 1 GB/s: memory-bound, SD pays, and the trees are long; the best x is
    not the largest, because the accounting's activation and score traffic (4 of 32
    channels at 0.35, docs/accounting.md) grows with every verified token, the more so at a
    long context (L x heads scores per token)."""
    arrays = {"design.mm_cols": 1 << 16, "design.mv_macs_per_lane": 1 << 20}
    # depth-based trees: the draft depth (and so T_d) stops growing at x = 7
    folder = synthetic_aat(tmp_path / "aat", builder=depth_based)
    sols = {
        bw: solve(load_board(str(board_file(repo, tmp_path, f"bandwidth-poor-{bw:g}", **arrays,
                                            **{"fpga.memory.bandwidth_gb_s": bw}))),
                  *workload, [128, 4096], SolveOptions(aat_dir=folder))
        for bw in (1.0, 2.0)
    }
    s = sols[1.0].summary
    assert (s["regime"] == "memory-bound").all()
    assert (s["decision"] == "use SD").all()
    assert (s["best_speedup"] > s["naive_speedup"]).all()
    best = s.set_index("context")["best_verify_len"]
    mixed = solve(load_board("v80"), *workload, [128, 4096], SolveOptions(aat_dir=folder)).summary
    assert (best > mixed.set_index("context")["best_verify_len"]).all()  # v80 is mixed
    assert best[4096] < best[128] < 85
    # bandwidth-bound at every x: twice the bandwidth halves every pass and keeps the best x
    fast, slow = sols[2.0].curves, sols[1.0].curves
    for col in ("verify_s", "draft_s"):
        np.testing.assert_allclose(fast[col] * 2, slow[col], rtol=1e-6)
    assert sols[2.0].summary["best_verify_len"].tolist() == best.tolist()


def test_v80_mixed_and_invariants(tmp_path, workload) -> None:
    board = load_board("v80")
    sol = solve(board, *workload, [128, 4096],
                SolveOptions(aat_dir=synthetic_aat(tmp_path / "aat")))
    s, c = sol.summary, sol.curves
    assert list(s.columns) == SUMMARY_COLUMNS and list(c.columns) == CURVE_COLUMNS
    assert (s["regime"] == "mixed").all()
    assert (s["best_speedup"] >= s["naive_speedup"]).all()
    assert (s["best_speedup"] >= s["ori_speedup"]).all()
    assert (s["ori_aat_source"] == "measured").all() and (s["ori_verify_len"] == 69).all()
    # P_eff = AAT/(T_v+T_d), accepted = floor(AAT), best = argmax
    np.testing.assert_allclose(c["p_eff_tokens_per_s"], c["aat"] / (c["verify_s"] + c["draft_s"]))
    assert (c["accepted"] == np.floor(c["aat"]).clip(lower=1)).all()
    for row in s.to_dict("records"):
        part = c[c["context"] == row["context"]]
        assert row["best_tokens_per_s"] == pytest.approx(part["p_eff_tokens_per_s"].max())
        assert row["best_speedup"] == pytest.approx(part["speedup"].max())
        # the Naive x follows the slope rule on the fit
        slope = row["aat_b"] / (row["naive_verify_len"] - row["aat_c"])
        assert slope < 0.02
        prev = part[part["verify_len"] < row["naive_verify_len"]]["verify_len"]
        if not prev.empty:
            assert row["aat_b"] / (prev.max() - row["aat_c"]) >= 0.02
        assert row["aat_r2_fit"] > 0.999  # synthetic points lie on the model
    assert (c["tree_source"] == "measured").all()
    # alpha = Param_d/Param_v · Depth: proportional to the number of draft passes
    ratio = c["alpha"] / c["draft_passes"]
    assert ratio.max() / ratio.min() < 1.01


def test_threshold_moves_naive_x(tmp_path, workload) -> None:
    folder = synthetic_aat(tmp_path / "aat")
    loose = solve(load_board("v80"), *workload, [128],
                  SolveOptions(aat_dir=folder, naive_threshold=0.05))
    strict = solve(load_board("v80"), *workload, [128],
                   SolveOptions(aat_dir=folder, naive_threshold=0.01))
    assert loose.summary["naive_verify_len"][0] < strict.summary["naive_verify_len"][0]
    with pytest.raises(InputError, match="naive_threshold"):
        solve(load_board("v80"), *workload, [128],
              SolveOptions(aat_dir=folder, naive_threshold=-1))


def test_fitted_source_uses_tree_fallbacks(tmp_path, workload) -> None:
    folder = synthetic_aat(tmp_path / "aat")
    sol = solve(load_board("v80"), *workload, [128],
                SolveOptions(aat_dir=folder, aat_source="fitted", fit_points=[2, 5, 13, 33]))
    c = sol.curves
    assert c["verify_len"].tolist() == list(range(2, 86))
    assert set(c["tree_source"]) <= {"width", "embedded"}  # no per-x table in this folder
    assert sol.summary.loc[0, "aat_fit_points"] == "2,5,13,33"
    header = "verify_len,longspec_tree_shape,eagle3_depth,eagle3_top_k"
    lines = [f"{x},{' '.join(map(str, width_based(x - 1, MAX_TREE)))},3,3" for x in range(2, 40)]
    (folder / "shapes.csv").write_text("\n".join([header, *lines]) + "\n")
    sol = solve(load_board("v80"), *workload, [128],
                SolveOptions(aat_dir=folder, aat_source="fitted"))
    c = sol.curves
    assert c["verify_len"].max() == 39  # the per-x table bounds the modelled x
    assert set(c["tree_source"]) == {"table"}


@pytest.mark.slow
def test_several_tasks_give_unified_x(tmp_path, workload) -> None:
    folder = synthetic_aat(tmp_path / "aat", contexts=(1024,), tasks=("a", "b", "c"))
    sol = solve(load_board("v80"), *workload, [1024], SolveOptions(aat_dir=folder))
    assert sorted(sol.summary["task"]) == ["a", "b", "c"]
    u = sol.unified
    assert len(u) == 3 and u["unified_verify_len"].nunique() == 1
    assert (u["unified_speedup"] <= u["best_speedup"] + 1e-12).all()
    assert sol.unified_summary.loc[0, "aat_source"] == "geometric mean of 3 tasks"
    assert lookup(sol.schedule, 1024)["verify_len"] == u["unified_verify_len"].iloc[0]
    arith = solve(load_board("v80"), *workload, [1024],
                  SolveOptions(aat_dir=folder, mean="arithmetic"))
    assert arith.unified["mean"].iloc[0] == "arithmetic"


def test_input_errors(tmp_path, workload) -> None:
    folder = synthetic_aat(tmp_path / "aat")
    board = load_board("v80")
    with pytest.raises(InputError, match="tasks with a measured curve: gov_report"):
        solve(board, *workload, [256], SolveOptions(aat_dir=folder, tasks=["qa"]))
    llama2 = (load_model("llama2-chat-7b"), workload[1])  # no shipped table holds it
    with pytest.raises(InputError, match="the AAT tables for longspec hold: llama-3.1-8b"):
        solve(board, *llama2, [256], SolveOptions(aat_source="measured"))
    with pytest.raises(InputError, match="task-agnostic"):
        solve(board, *llama2, [256], SolveOptions(tasks=["gov_report"]))
    with pytest.raises(InputError, match="task-agnostic"):
        solve(board, *workload, [256], SolveOptions(tasks=["gov_report"], aat_source="embedded"))
    with pytest.raises(InputError, match="fit_points"):
        solve(board, *workload, [128], SolveOptions(aat_dir=folder, fit_points=[2, 200, 5]))


def test_unmeasured_context_is_interpolated(tmp_path, workload) -> None:
    # the synthetic table holds 128 and 4096: 256 lies 1/5 of the way in log2 L
    folder = synthetic_aat(tmp_path / "aat")
    tables = load_aat_tables(folder)
    sol = solve(load_board("v80"), *workload, [256], SolveOptions(aat_dir=folder),
                engine="analytic")
    s = sol.summary.iloc[0]
    assert s["aat_basis"] == "interpolated" and "L=128 and L=4096" in s["aat_note"]
    rows = tables.rows.set_index(["context", "verify_len"])["aat"]
    c = sol.curves.set_index("verify_len")["aat"]
    for x in (2, 13, 85):
        want = rows[(128, x)] + (rows[(4096, x)] - rows[(128, x)]) / 5
        assert c[x] == pytest.approx(want, rel=1e-12)


def test_embedded_source(workload) -> None:
    board = load_board("v80")
    sol = solve(board, *workload, [1024], SolveOptions(aat_source="embedded"))
    assert sol.summary.loc[0, "aat_source"] == "embedded"
    assert sol.summary.loc[0, "aat_basis"] == "embedded"
    assert sol.summary.loc[0, "task"] == "embedded"
    assert set(sol.curves["tree_source"]) == {"embedded"}
    assert sol.summary.loc[0, "ori_verify_len"] == 69
    assert sol.summary.loc[0, "ori_tree"] == "4 16 16 16 16"
    # without tables for the pair the rule falls back to the embedded model, and says so
    other = solve(board, load_model("llama2-chat-7b"), workload[1], [1024])
    assert other.summary.loc[0, "aat_basis"] == "embedded"
    assert "no measured table holds longspec on llama2-chat-7b" in other.summary.loc[0, "aat_note"]


def test_done_when_v80_gov_report(aat_dir, workload) -> None:
    sol = solve(load_board("v80"), *workload, DONE_CONTEXTS,
                SolveOptions(tasks=["gov_report"], aat_dir=aat_dir))
    s = sol.summary.set_index("context")
    assert list(s.index) == DONE_CONTEXTS
    assert (s["decision"] == "use SD").all() and (s["best_speedup"] > 1).all()
    assert (s["ori_verify_len"] == 69).all()
    assert s.loc[128, "ori_speedup"] < 1 < s.loc[16384, "ori_speedup"]  # GPU default: loses short
    assert (s["best_speedup"] >= s[["ori_speedup", "naive_speedup"]].max(axis=1)).all()
    assert s["ad_tokens_per_s"].is_monotonic_decreasing
    assert (s["aat_r2_all"] > 0.98).all()
    key = [
        "ad_tokens_per_s",
        "best_verify_len",
        "best_tokens_per_s",
        "ori_tokens_per_s",
        "naive_verify_len",
        "naive_tokens_per_s",
        "x_ridge",
        "aat_a",
        "aat_b",
        "aat_c",
    ]
    assert not s[key].isna().any().any()
    # the schedule covers every context once
    for context in [1, 127, 128, 300, 1000, 5000, 16384, 10**6]:
        assert lookup(sol.schedule, context)["decision"] == "use SD"
