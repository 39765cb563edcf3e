"""Falcon end to end: the solver on every engine, `fpgasim solve`, `fpgasim compare-algorithms`."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from fpgasim.acceptance.curves import embedded_curves
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import get_engine
from fpgasim.solving.solver import solve_curves
from fpgasim.studies.algorithm_comparison import (
    COMPARE_COLUMNS,
    WINNER_COLUMNS,
    compare_algorithms,
    drafted_levels,
)
from tests.cli_helpers import run_cli

VICUNA = load_model("vicuna-7b-v1.5")
FALCON = load_algorithm("falcon")


def small_solution(engine: str, board: str = "vhk158", x_max: int = 9,
                   contexts: tuple[int, ...] = (256, 2048), roofline: bool = True):
    curves = embedded_curves(FALCON, list(contexts), x_max=x_max)
    return solve_curves(get_engine(engine), load_board(board), VICUNA, FALCON, curves,
                        roofline=roofline)


@pytest.mark.slow
def test_solve_on_every_engine() -> None:
    sols = {e: small_solution(e) for e in ("analytic", "fast")}
    # the event engine (pure Python) at one context and x <= 4, without the roofline (whose
    # measured ridge times every x up to the board's: 170 passes, 29 s on `event`)
    tiny = {e: small_solution(e, x_max=4, contexts=(256,), roofline=False)
            for e in ("event", "fast")}
    for name, sol in [*sols.items(), ("event", tiny["event"])]:
        assert (sol.summary["engine"] == name).all()
        assert len(sol.summary) == len(set(sol.curves["context"]))
        assert sol.summary["best_speedup"].notna().all()
    ev, fa = tiny["event"].curves, tiny["fast"].curves
    cols = ["verify_s", "draft_s", "draft_passes", "alpha", "speedup"]
    assert len(ev) == 3  # x = 2..4
    pd.testing.assert_frame_equal(ev[cols], fa[cols])  # bit-identical engines
    # alpha comes from the analytic accounting, whatever the engine
    assert (sols["analytic"].curves["alpha"] == sols["fast"].curves["alpha"]).all()
    assert (sols["fast"].curves.loc[:2, "alpha"].to_numpy() == ev["alpha"].to_numpy()).all()


def test_curves_show_passes_shrinking_by_k() -> None:
    sol = small_solution("analytic", "v80", x_max=40)
    c = sol.curves
    depth = c["tree"].map(drafted_levels)
    assert (c["draft_passes"] == (depth / 2).map(math.ceil)).all()
    assert depth.max() > c["draft_passes"].max()
    # alpha(x) is the draft passes times one pass's weight share
    per_pass = c["alpha"] / c["draft_passes"]
    assert per_pass.max() - per_pass.min() < 1e-9


def test_cli_solve_shows_the_draft_phase(capsys) -> None:
    res = run_cli(
        capsys,
        *("solve", "-b", "u280", "-m", "vicuna-7b-v1.5", "-a", "falcon"),
        *("--contexts", "512", "--engine", "analytic"),
    )
    assert res.code == 0, res.err
    assert "draft at best x" in res.out and "(an autoregressive drafter:" in res.out
    assert "use SD" in res.out


COMPARE = (
    "compare-algorithms",
    *("-b", "v80", "-m", "vicuna-7b-v1.5", "--algorithms", "falcon,eagle3,longspec"),
    *("--contexts", "512,2048", "--engine", "analytic"),
)


def test_compare_library() -> None:
    algos = [load_algorithm(n) for n in ("falcon", "eagle3", "longspec")]
    cmp = compare_algorithms(load_board("u280"), VICUNA, algos, [512, 2048], engine="analytic")
    assert list(cmp.table.columns) == COMPARE_COLUMNS and len(cmp.table) == 6
    assert list(cmp.winners.columns) == WINNER_COLUMNS and len(cmp.winners) == 2
    for ctx, group in cmp.table.groupby("context"):
        assert sorted(group["rank"]) == [1, 2, 3]
        win = cmp.winners.set_index("context").loc[ctx]
        top = group.sort_values("rank").iloc[0]
        assert win["winner"] == top["algorithm"]
        assert win["lead"] == pytest.approx(win["aat_factor"] * win["step_factor"])
        second = group.sort_values("rank").iloc[1]
        assert win["lead"] == pytest.approx(
            top["best_tokens_per_s"] / second["best_tokens_per_s"], rel=1e-9
        )
    falcon = cmp.table[cmp.table["algorithm"] == "falcon"]
    assert (falcon["draft_passes"] == (falcon["tree_levels"] / 2).map(math.ceil)).all()
    assert (cmp.table.loc[cmp.table["algorithm"] == "longspec", "tokens_per_pass"] == 1).all()


@pytest.mark.slow
def test_compare_cli_table_csv_json_plot(capsys, tmp_path: Path) -> None:
    png = tmp_path / "cmp.png"
    res = run_cli(capsys, *COMPARE, "--plot", str(png))
    assert res.code == 0, res.err
    assert "wins (speedup" in res.out and "T_d ms" in res.out and "falcon" in res.out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 30_000
    res = run_cli(capsys, *COMPARE, "--format", "csv")
    assert res.code == 0, res.err
    frame = pd.read_csv(io.StringIO(res.out))
    assert list(frame.columns) == COMPARE_COLUMNS and len(frame) == 6
    res = run_cli(capsys, *COMPARE, "--format", "json")
    doc = json.loads(res.out)
    assert len(doc["table"]) == 6 and len(doc["winners"]) == 2


@pytest.mark.slow
def test_compare_cli_exit_2(capsys, tmp_path: Path) -> None:
    base = list(COMPARE)
    bare = yaml.safe_load(Path("workloads/algorithms/falcon.yaml").read_text())
    bare.pop("acceptance")
    bare["id"] = "falcon-bare"
    path = tmp_path / "falcon-bare.yaml"
    path.write_text(yaml.safe_dump(bare))
    cases = [
        ["--algorithms", "falcon,nope"],
        ["--algorithms", "falcon,falcon"],
        ["--algorithms", ","],
        ["--algorithms", f"falcon,{path}"],
        ["--contexts", "0"],
        ["--contexts", "abc"],
        ["--engine", "warp"],
        ["--plot", str(tmp_path / "x.pdf")],
        ["--format", "xml"],
    ]
    for extra in cases:
        args = base + extra
        res = run_cli(capsys, *args)
        assert res.code == 2, (extra, res.out, res.err)
        assert res.err.startswith("fpgasim: error:") and "Traceback" not in res.err
        assert res.err.count("\n") == 1
    res = run_cli(capsys, "compare-algorithms", "-b", "v80")  # missing options
    assert res.code == 2
    # a context whose verify passes run past Vicuna's 4,096-token window
    res = run_cli(capsys, *base, "--contexts", "4096")
    assert res.code == 2 and res.err.count("\n") == 1
    assert "--contexts" in res.err and "window is 4096 tokens" in res.err
