"""The accounting and the simulator side by side: twin columns, ratios, reasons, prefetch.

Every new column is checked against an independent computation: the twins against the
simulator run alone, the ratio against the two columns, the reason's mechanisms against
hand-built timings, the prefetched passes against passes run in this process.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from fpgasim.config import load_board, load_model
from fpgasim.engine import Timing, get_engine
from fpgasim.reproduce import RunContext, load_experiment, run_experiment
from fpgasim.reproduce.beside import REASON_THRESHOLD, beside_columns
from fpgasim.reproduce.experiment_schema import Experiment
from fpgasim.reproduce.kind import experiment_kind
from fpgasim.reproduce.prefetch import simulator_passes
from fpgasim.solving.cross_check import attribute, parse_tree, reason_line
from fpgasim.step import Simulator, architecture, pass_key
from fpgasim.sweep.executors import InProcessExecutor

TIMED = ["table1", "table2", "table3", "table4", "fig1", "fig2", "fig4"]


def reduced(name: str) -> Experiment:
    """The experiment on one board, one model and its shortest context per workload group
    (the columns are the point here, not the numbers: short contexts are the cheap passes)."""
    exp = load_experiment(name)
    assert isinstance(exp, Experiment)
    workloads = [
        w.model_copy(update={"boards": w.boards[:1], "models": w.models[:1],
                             "contexts": [min(w.contexts)]})
        for w in exp.workloads
    ]
    return exp.model_copy(update={"workloads": workloads})


@pytest.fixture(scope="module")
def contexts(tmp_path_factory) -> dict[str, RunContext]:
    from tests.conftest import AAT_DIR

    fast = get_engine("fast", window=True)
    return {
        "both": RunContext(get_engine("analytic"), AAT_DIR, fast),
        "accounting": RunContext(get_engine("analytic"), AAT_DIR),
        "sim": RunContext(get_engine("fast"), AAT_DIR),
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", TIMED)
def test_twins_are_the_simulator_run_alone(name: str, contexts) -> None:
    exp = reduced(name)
    both = run_experiment(exp, ctx=contexts["both"]).table
    alone = run_experiment(exp, ctx=contexts["accounting"]).table
    sim = run_experiment(exp, ctx=contexts["sim"]).table
    # the accounting's columns are exactly the accounting run alone
    pd.testing.assert_frame_equal(both[list(alone.columns)], alone)
    spec = experiment_kind(exp.kind).beside
    assert spec is not None
    assert list(both.columns[len(alone.columns) :]) == beside_columns(exp.kind)
    for col in spec.values:
        pd.testing.assert_series_equal(
            both[f"{col}_sim"], sim[col], check_names=False, check_dtype=False
        )
    for col in spec.values:
        if col.endswith("speedup"):
            want = sim[col].astype(float) / alone[col].astype(float)
            assert (both[f"{col}_ratio"] - want).abs().max() < 1e-12
    assert set(both["sim_engine"]) == {"fast"}
    ratio = both[f"{spec.speedup}_ratio"].astype(float)
    x = both[spec.point[0]]
    far = (ratio - 1).abs() > REASON_THRESHOLD
    for has_reason, is_far, xv in zip(both["sim_reason"].fillna("") != "", far, x, strict=True):
        assert has_reason == (bool(is_far) and not pd.isna(xv) and int(xv) >= 2)


@pytest.mark.slow
def test_table4_reasons_name_the_mechanisms(contexts) -> None:
    """table4 at L = 256: U280 is MPE-bound in MV mode (its MV array is a quarter of a small
    array); on VHK158 and V80 the simulator's verify pass of x tokens runs x MV row groups
    of one token lane, each streaming the weights again (the accounting reads them once per
    128 tokens). On U250 (DDR4, a 128x128 array) the pass runs in MM mode with its weights
    over the A channels, read once as the accounting reads them: the two agree (SD pays).
    AD, one token, agrees within 10% everywhere."""
    import re

    from fpgasim.simulate import verify_timing

    exp = load_experiment("table4")
    exp = exp.model_copy(
        update={"workloads": [w.model_copy(update={"contexts": [256]}) for w in exp.workloads]}
    )
    table = run_experiment(exp, ctx=contexts["both"]).table.set_index("board")
    u280 = table.loc["u280"]
    assert u280["speedup_ratio"] < 0.9 and u280["sim_reason"].startswith("x=4 step ")
    assert "MV rate" in u280["sim_reason"]
    for board in ("vhk158", "v80"):
        row = table.loc[board]
        assert row["speedup_ratio"] < 0.9, board
        assert row["sim_reason"].startswith(f"x={row['best_verify_len']} step "), board
        assert "weight re-reads" in row["sim_reason"], board
    u250 = table.loc["u250"]
    assert u250["decision_sim"] == u250["decision"] == "use SD"
    assert 0.9 <= u250["speedup_ratio"] <= 1.1 and not u250["sim_reason"]
    for board, reason in table["sim_reason"].items():
        if not reason:  # the two agree: no reason given
            continue
        ad = float(re.search(r"; AD ([0-9.]+)x;", reason).group(1))
        # the AD passes agree within 10%, beyond the accounting's own GiB/s reading of the
        # part's bandwidth (7.4% more than the data sheet's GB/s the simulator reads)
        assert 0.9 <= ad <= 1.1 * 1.024**3, (board, reason)
    # the mechanism, checked on its own: x tokens stream the weights x times on the simulator
    model, fast = load_model("llama-3.1-8b"), get_engine("fast")
    board = load_board("vhk158")
    x = int(table.loc["vhk158", "best_verify_len"])
    one = verify_timing(fast, board, model, 1, 256).weight_bytes
    assert verify_timing(fast, board, model, x, 256).weight_bytes == x * one
    # and U250's MM-mode pass reads them about once (its x rows share one stream), not x times
    board = load_board("u250")
    x = int(table.loc["u250", "best_verify_len_sim"])
    one = verify_timing(fast, board, model, 1, 256).weight_bytes
    assert x > 2 and verify_timing(fast, board, model, x, 256).weight_bytes < 1.01 * one


def test_attribute_splits_mpe_excess_and_exposed_cycles() -> None:
    """MPE-critical pass: MV and padded-MM cycles above the array rate, and the idle rest."""
    account = Timing(1000, 1.0, 1000, 10, 400)
    sim = Timing(
        cycles=2000, clock_hz=1.0, ld_cycles=1000, st_cycles=10, compute_cycles=1800,
        macs=400 * 100, mv_cycles=1000, mv_macs=200 * 100,
    )  # fmt: skip
    got = attribute(account, sim, macs_per_cycle=100)
    # over = 1800 - 1000 = 800 of MV 800 + MM 600 extra cycles: shared 8/14
    assert math.isclose(got["MV rate"], 800 * 800 / 1400)
    assert math.isclose(got["padding"], 600 * 800 / 1400)
    assert got["stalls"] == 200 and got["SFU"] == 0 and got["loads"] == 0
    sfu = Timing(3000, 1.0, 1000, 10, 400, sfu_cycles=2500)
    got = attribute(account, sfu, macs_per_cycle=100)
    assert got["SFU"] == 1500 and got["stalls"] == 500 and got["MV rate"] == 0
    hidden = Timing(1000, 1.0, 1000, 10, 900)  # the simulator as fast as the accounting
    assert sum(attribute(account, hidden, macs_per_cycle=100).values()) == 0


def test_reason_line_and_tree_round_trip() -> None:
    line = reason_line(
        x=4, x_sim=2, step_ratio=3.5, ad_ratio=1.07,
        by_mech={"MV rate": 225e6 * 0.138, "stalls": 225e6 * 0.0046, "SFU": 0.0},
        clock_hz=225e6,
    )  # fmt: skip
    assert line == "x=4 step 3.50x: MV rate +138 ms, stalls +4.6 ms; AD 1.07x; sim x=2"
    assert parse_tree("4 16 16").static_shape() == (4, 16, 16)
    assert parse_tree("1 0").describe() == "1 0"  # an empty last level is kept (one more pass)
    assert parse_tree("depth=6 top_k=10").top_k == 10 and parse_tree("") is None


@pytest.mark.slow
def test_prefetched_passes_equal_passes_run_here() -> None:
    """The plan covers every pass the simulator's side of a solved experiment asks;
    prefetched results are exact."""
    from tests.conftest import AAT_DIR

    exps = [reduced("table4")]
    planned = RunContext(get_engine("analytic"), AAT_DIR, get_engine("fast", window=True))
    keys = simulator_passes(exps, planned)
    assert keys
    assert len({pass_key(*k) for k in keys}) == len(keys)  # each distinct pass once
    service = planned.sim
    with InProcessExecutor() as pool:
        assert service.prefetch(keys, pool) == len(keys)
    assert service.prefetch(keys, InProcessExecutor()) == 0  # all remembered now
    cached = {pass_key(*k): service.run_pass(*k) for k in keys}
    for exp in exps:
        run_experiment(exp, ctx=planned)
    assert service.remembered == len(keys)  # nothing asked beyond the plan
    fresh = get_engine("fast")  # no window: every layer simulated
    for key in keys[:: max(1, len(keys) // 12)]:
        assert fresh.run_pass(*key).cycles == cached[pass_key(*key)].cycles


@pytest.mark.slow
def test_a_bounded_search_is_planned_by_its_sure_passes_and_gives_the_same_table() -> None:
    """Fig. 4 reports the best x alone, found by the bounded search (`solver.best_set`):
    the plan lists the passes it times on any engine (T_v(1), the first x visited, the
    original and naive sets), the run times the other x it cannot rule out itself, and
    the table is the one of a run with nothing planned, which is `solve_curve`'s best
    (tests/solving/test_best_set.py)."""
    from tests.conftest import AAT_DIR

    exp = reduced("fig4")
    sim = get_engine("fast", window=True)
    planned = RunContext(get_engine("analytic"), AAT_DIR, sim)
    keys = simulator_passes([exp], planned)
    service = planned.sim  # the run's simulator of `sim`
    with InProcessExecutor() as pool:
        service.prefetch(keys, pool)
    with_plan = run_experiment(exp, ctx=planned)
    asked = service.remembered
    assert len(keys) < asked  # the search timed x the plan could not know
    unplanned = RunContext(get_engine("analytic"), AAT_DIR, get_engine("fast", window=True))
    without = run_experiment(exp, ctx=unplanned)
    assert unplanned.sim.remembered == asked  # the same passes, in all
    pd.testing.assert_frame_equal(with_plan.full, without.full)
    everything = [k for k in keys if k[0].kind == "target" and k[0].tokens > 1]
    assert everything, "the plan holds verify passes of the sets the search times for sure"


def test_passes_are_shared_across_models_of_one_architecture() -> None:
    a, b = load_model("vicuna-13b-v1.5"), load_model("longchat-13b")
    assert a != b and architecture(a) == architecture(b)
    assert architecture(a) != architecture(load_model("vicuna-7b-v1.5"))
    fast = Simulator(get_engine("fast", window=True))
    from fpgasim.simulate import verify_timing

    board = load_board("v80")
    ta = verify_timing(fast, board, a, 3, 512)
    assert fast.remembered == 1
    assert verify_timing(fast, board, b, 3, 512) == ta and fast.remembered == 1
    assert verify_timing(get_engine("fast"), board, b, 3, 512).cycles == ta.cycles
