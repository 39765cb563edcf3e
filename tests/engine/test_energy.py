"""The energy model (fpgasim/engine/energy.py, docs/energy.md) and energy in every answer.

The formula is re-derived here by hand from the constants and a timing's counts, so a change
of a term or a unit in the module fails; bad constants are one line, exit 2.
"""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import get_engine
from fpgasim.engine.energy import (
    MAC_PJ,
    MEMORY_PJ_PER_BIT,
    STATIC_W_PER_SLR,
    U280_READOUT_W,
    energy_constants,
    node_scale,
    pass_energy,
)
from fpgasim.engine.timing import Timing
from fpgasim.errors import ConfigError, InputError
from fpgasim.simulate import Point, simulate_point, verify_timing
from fpgasim.solving.solver import SolveOptions, Timer, best_set, solve
from fpgasim.studies.explore import pareto_energy_flags
from fpgasim.studies.generation import generate
from tests.cli_helpers import run_cli

U280 = "flightllm-u280"
MODEL = "llama2-7b-flightllm"


def test_u280_static_is_the_xd027_readout() -> None:
    """The U280 file states the readout: 12.136 V x 1.578 A + 12.111 V x 1.560 A."""
    c = energy_constants(load_board(U280))
    assert c.static_w.value == pytest.approx(19.150608 + 18.89316, abs=0.01)
    assert not c.static_w.assumption
    assert U280_READOUT_W == pytest.approx(38.0438, abs=1e-3)


def test_static_by_slrs_where_the_file_is_silent() -> None:
    """V80 (3 SLRs) and VHK158 (4) take the per-SLR assumption, labelled as such."""
    for name, slrs in (("v80", 3), ("vhk158", 4)):
        c = energy_constants(load_board(name))
        assert c.static_w.value == pytest.approx(U280_READOUT_W / 3 * slrs)
        assert c.static_w.assumption
    assert STATIC_W_PER_SLR.assumption


def test_constants_follow_kind_and_precision() -> None:
    """HBM2 7 pJ/bit on the U280, HBM2e 6 on the V80, DDR4 28 on the U250; int8 on DSP48E2
    for FlightLLM's recipe, fp16 for the study's."""
    assert energy_constants(load_board("u280")).memory_pj_per_bit.value == 7.0
    assert energy_constants(load_board("v80")).memory_pj_per_bit.value == 6.0
    assert energy_constants(load_board("u250")).memory_pj_per_bit.value == 28.0
    assert MEMORY_PJ_PER_BIT["DDR4"].value == 7.0 / 0.25
    assert energy_constants(load_board(U280)).mac_pj == MAC_PJ["DSP48E2", "int8"]
    assert energy_constants(load_board("u280")).mac_pj == MAC_PJ["DSP48E2", "fp16"]
    # constant-field scaling: 16 nm at 0.85 V against 45 nm at 0.9 V
    assert node_scale("UltraScale+") == pytest.approx(16 / 45 * (0.85 / 0.9) ** 2)


def test_pass_energy_by_hand() -> None:
    """Every term of the formula, recomputed from a hand-made timing."""
    board = load_board(U280)
    c = energy_constants(board)
    t = Timing(cycles=2_250_000, clock_hz=board.clock_hz, ld_cycles=1, st_cycles=1,
               compute_cycles=1, sfu_cycles=1000, weight_bytes=8_000_000,
               act_load_bytes=1_000_000, act_store_bytes=500_000, macs=3_000_000,
               duration_divisor=board.duration_divisor)
    e = pass_energy(t, board, "fast")
    seconds = 2_250_000 / (225e6 * 3)
    offchip = 8_000_000 + 1_000_000 + 500_000  # every engine counts the bytes moved
    sfu = 1000 * 16
    rails = (offchip * 8 * c.memory_pj_per_bit.value
             + 3_000_000 * c.mac_pj.value
             + (2 * offchip * 8 + sfu * 2 * 8) * c.sram_pj_per_bit.value
             + sfu * c.sfu_pj.value
             + 6144 * seconds * 225e6 * c.clock_pj_per_dsp_cycle.value) * 1e-12
    assert e.seconds == pytest.approx(seconds)
    assert e.dynamic_j == pytest.approx(rails / 0.88)
    assert e.energy_j == pytest.approx(38.04 * seconds + rails / 0.88)
    assert e.power_w == pytest.approx(e.energy_j / seconds)
    # the analytic engine counts the same bytes, and no MACs
    a = pass_energy(t, board, "analytic")
    assert a.memory_j == pytest.approx((8_000_000 + 1_500_000) * 8 * 7.0e-12)
    assert a.mac_j == pytest.approx(1 * board.peak_macs_per_cycle * c.mac_pj.value * 1e-12)


def test_simulate_row_energy_columns() -> None:
    """power = static + dynamic, energy = power x time, tokens/J = x / energy."""
    board, model = load_board(U280), load_model(MODEL)
    row = simulate_point(get_engine("fast"), Point(board, model, 511, 1))
    assert row["power_w"] == pytest.approx(row["static_w"] + row["dynamic_w"])
    assert row["energy_j"] == pytest.approx(row["power_w"] * row["verify_s"])
    assert row["tokens_per_j"] == pytest.approx(1 / row["energy_j"])
    assert 0 < row["dynamic_w"] < row["static_w"]  # decode on U280: the idle draw dominates
    # more energy per HBM bit, fewer tokens per joule; the time does not move
    dear = load_board(U280, [("fpga.memory.pj_per_bit", 14.0)])
    row2 = simulate_point(get_engine("fast"), Point(dear, model, 511, 1))
    assert row2["verify_s"] == row["verify_s"]
    assert row2["tokens_per_j"] < row["tokens_per_j"]


def test_sd_step_energy_counts_drafts() -> None:
    """With an algorithm the step's energy adds the draft passes and tokens are accepted."""
    board, model = load_board(U280), load_model(MODEL)
    algo = load_algorithm("longspec")
    from fpgasim.tree.draft_trees import default_tree
    tree = default_tree(algo)
    x = tree.size
    sd = simulate_point(get_engine("fast"), Point(board, model, 511, x, algo, tree, 2))
    ad_only = simulate_point(get_engine("fast"), Point(board, model, 511, x))
    assert sd["energy_j"] > ad_only["energy_j"]
    assert sd["tokens_per_j"] == pytest.approx(2 / sd["energy_j"])


def test_cli_simulate_json_prints_power(capsys) -> None:
    """The issue's command prints power_w and tokens_per_j."""
    result = run_cli(capsys, "simulate", "--board", U280, "--model", MODEL, "--context", "511",
                     "--verify-len", "1", "--format", "json")
    assert result.code == 0, result.err
    row = json.loads(result.out)
    for key in ("power_w", "static_w", "dynamic_w", "energy_j", "tokens_per_j"):
        assert math.isfinite(row[key]) and row[key] > 0


@pytest.mark.parametrize(("line", "field"), [
    ("  static_w: 300", "power.static_w"),
    ("  static_w: -1", "power.static_w"),
    ("  mac_pj: .nan", "power.mac_pj"),
    ("  sram_pj_per_bit: -0.1", "power.sram_pj_per_bit"),
    ("  regulator_efficiency: 0", "power.regulator_efficiency"),
])
def test_bad_power_constants_one_line(tmp_path, capsys, line: str, field: str) -> None:
    """Negative, non-finite or out-of-range constants: one line naming the field, exit 2."""
    from fpgasim.config.loader import data_root
    text = (data_root() / "fpgas" / "u280.yaml").read_text()
    text = text.replace("  static_w: 38.04", line if "static_w" in line else "  static_w: 38.04\n"
                        + line)
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    result = run_cli(capsys, "simulate", "--fpga", str(path), "--design", "flightllm", "--model",
                     MODEL, "--context", "511")
    assert result.code == 2
    lines = [x for x in (result.out + result.err).splitlines() if x.strip()]
    assert len(lines) == 1 and field in lines[0], result.err


def test_bad_memory_energy_one_line() -> None:
    """memory.pj_per_bit: negative refused with its field."""
    from fpgasim.config.board_loader import load_board as lb
    with pytest.raises(ConfigError) as err:
        lb(U280, [("fpga.memory.pj_per_bit", -3.0)])
    assert "memory.pj_per_bit" in str(err.value.field)


def test_solve_objective_energy_picks_most_tokens_per_joule() -> None:
    """--objective energy: the best x is the argmax of tokens/J over the curve; throughput
    keeps argmax tokens/s; both optima are in the summary either way."""
    board, model, algo = load_board("vhk158"), load_model("llama2-chat-7b"), load_algorithm(
        "longspec")
    time_sol = solve(board, model, algo, [1024], SolveOptions(aat_source="embedded"),
                     engine="analytic")
    energy_sol = solve(board, model, algo, [1024],
                       SolveOptions(aat_source="embedded", objective="energy"), engine="analytic")
    curve = energy_sol.curves
    e_best = curve.loc[curve["tokens_per_j"].idxmax()]
    t_best = curve.loc[curve["p_eff_tokens_per_s"].idxmax()]
    s_e, s_t = energy_sol.summary.iloc[0], time_sol.summary.iloc[0]
    assert s_e["best_verify_len"] == e_best["verify_len"] == s_e["energy_best_verify_len"]
    assert s_t["best_verify_len"] == t_best["verify_len"] == s_t["speed_best_verify_len"]
    assert s_e["objective"] == "energy" and s_t["objective"] == "throughput"
    assert s_e["best_tokens_per_j"] >= s_t["best_tokens_per_j"]
    # tokens/J of each x: AAT over the step's joules (verify + drafts)
    assert (curve["tokens_per_j"] == curve["aat"] / curve["energy_j"]).all()
    expected = "SD" if s_e["best_tokens_per_j"] > s_e["ad_tokens_per_j"] else "AD"
    assert s_e["energy_decision"].startswith(expected)
    assert (s_e["decision"] == "use SD") == (expected == "SD")


@pytest.mark.slow
def test_best_set_energy_matches_solve() -> None:
    """The generation's best set under energy agrees with solve's."""
    board, model, algo = load_board(U280), load_model(MODEL), load_algorithm("longspec")
    sol = solve(board, model, algo, [512],
                SolveOptions(aat_source="embedded", objective="energy"), engine="fast")
    from fpgasim.acceptance.curves import embedded_curves
    curve = embedded_curves(algo, [512], model_id=model.id, why="test")[0]
    b = best_set(Timer(get_engine("fast"), board, model, algo), curve, "energy")
    s = sol.summary.iloc[0]
    assert b.verify_len == s["best_verify_len"]
    assert b.tokens_per_j == pytest.approx(s["best_tokens_per_j"])
    assert b.ad_tokens_per_j == pytest.approx(s["ad_tokens_per_j"])


def test_bad_objective() -> None:
    """An unknown objective is an InputError naming it."""
    with pytest.raises(InputError) as err:
        solve(load_board("u280"), load_model("llama2-chat-7b"), load_algorithm("longspec"), [512],
              SolveOptions(objective="joy"))
    assert err.value.field == "objective"


@pytest.mark.parametrize("board", ["u280", "vhk158", "v80", "u250", "flightllm-u280",
                                   "flightllm-vhk158"])
def test_cli_solve_objective_energy_every_board(capsys, board: str) -> None:
    """`solve --objective energy` runs on every shipped board."""
    result = run_cli(capsys, "solve", "--board", board, "--model", "llama2-chat-7b",
                     "--algorithm", "eagle3", "--contexts", "512", "--engine", "analytic",
                     "--objective", "energy", "--format", "json")
    assert result.code == 0, result.err
    s = json.loads(result.out)["summary"][0]
    assert s["objective"] == "energy" and s["ad_tokens_per_j"] > 0
    assert s["best_tokens_per_j"] == s["energy_best_tokens_per_j"]


def test_generate_energy() -> None:
    """decode_j is the steps' joules; AD's tokens/J is its own; the verdict compares them."""
    board, model = load_board(U280), load_model(MODEL)
    g = generate(get_engine("fast"), board, model, 128, 32, algorithm=load_algorithm("eagle3"))
    s = g.summary
    assert s["decode_j"] == pytest.approx(g.steps["step_j"].sum())
    assert s["ad_decode_j"] == pytest.approx(g.ad_steps["step_j"].sum())
    assert s["decode_tokens_per_j"] == pytest.approx(32 / s["decode_j"])
    ad_j = sum(verify_timing(get_engine("fast"), board, model, 1, c).seconds
               for c in g.ad_steps["context"])
    assert s["ad_decode_j"] > ad_j * 38.04  # at least the idle draw over the decode
    assert s["energy_decision"]


def test_pareto_energy_front() -> None:
    """A board is on the front unless another has <= DSPs, >= tokens/s and >= tokens/J."""
    frame = pd.DataFrame({
        "algorithm": ["a"] * 5, "context": [1] * 5, "fits": [True, True, True, True, False],
        "dsps_used": [100, 200, 200, 300, 50],
        "tokens_per_s": [10.0, 12.0, 11.0, 12.0, 99.0],
        "tokens_per_j": [1.0, 0.9, 0.8, 1.1, 9.0],
    })
    # 0: fewest DSPs; 1: fastest at 200; 2: dominated by 1; 3: most tokens/J; 4: does not fit
    assert pareto_energy_flags(frame) == [True, True, False, True, False]


def test_docs_blind_prediction_is_the_models() -> None:
    """docs/validation.md's blind power prediction, as the model gives it since one weight
    size (T = 512), on the board as round 1 derived it (FlightLLM's constant transfer
    efficiencies)."""
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "docs" / "validation.md").read_text()
    section = text[text.index("## FlightLLM on U280: power, predicted blind"):]
    round1 = [("design.memory.transfer_model", "design_constants")]
    board, model = load_board(U280, round1), load_model(MODEL)
    row = simulate_point(get_engine("fast"), Point(board, model, 511, 1))
    stated = (f"**{row['power_w']:.1f} W, {row['tokens_per_j']:.2f} tokens/J** at T = 512")
    assert stated in " ".join(section.split()), stated
    assert "55 tokens/s" in text[text.index("## FlightLLM on U280: the measured speed"):]
