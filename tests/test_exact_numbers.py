"""No wrapped or non-finite number leaves fpgasim: exact totals, checked int64, valid JSON.

Cycle and byte totals are exact integers up to the int64 range every table column holds
(`engine.timing.MAX_COUNT`); a pass past it is one line naming the input. Every JSON output
goes through one writer (`fileio.json_text`) that refuses a non-finite number. A property
test drives extreme-but-valid boards, models and contexts through every engine.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fpgasim.config.loader import validate_mapping
from fpgasim.config.schema import Board, TargetModel
from fpgasim.dataflow.instructions import INSTR_DTYPE, LD, TRAFFIC_WEIGHT, Program, totals
from fpgasim.engine import get_engine
from fpgasim.engine.timing import MAX_COUNT, CountOutOfRange, Timing
from fpgasim.errors import FpgasimError
from fpgasim.fileio import json_text
from fpgasim.simulate import Point, simulate_point
from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[1]
U280 = yaml.safe_load((REPO / "boards/u280.yaml").read_text())
LLAMA = yaml.safe_load((REPO / "workloads/models/llama-3.1-8b.yaml").read_text())
#: the largest model the schema accepts (every dimension at its bound, hidden = heads x head_dim)
HUGE = {**LLAMA, "id": "huge", "hidden": 1 << 17, "intermediate": 1 << 19, "layers": 1024,
        "heads": 1024, "kv_heads": 1024, "head_dim": 128, "vocab": 1 << 22}
#: a 70B-shaped model (Llama-2-70B's dimensions)
BIG70 = {**LLAMA, "id": "big70", "hidden": 8192, "intermediate": 28672, "layers": 80,
         "heads": 64, "kv_heads": 8, "head_dim": 128, "vocab": 32000, "params_b": 69.0}


def slow_board(**changes: object) -> dict:
    """The slowest board the schema accepts: 1 GB/s at 0.01 efficiency, 32-bit, a 1x1 array,
    5 GHz (the most cycles per byte), buffers at their largest (few, long instructions)."""
    board = copy.deepcopy(U280)
    board.update(name="slow", clock_mhz=5000, pe_array={"rows": 1, "cols": 1},
                 mv_macs_per_cycle=1,
                 precision={"weight_bits": 32, "activation_bits": 32, "kv_bits": 32},
                 buffers={"weight_kib": 1 << 20, "activation_kib": 1 << 20,
                          "prefetch_depth": 1})
    board["memory"]["bandwidth_gb_s"] = 1
    for group in ("weight_group", "activation_group"):
        board["memory"][group].update(load_efficiency=0.01, store_efficiency=0.01)
    board.update(changes)
    return board


def write_yaml(path: Path, data: dict) -> str:
    path.write_text(yaml.safe_dump(data))
    return str(path)


# --------------------------------------------------------------------------- exact totals


def test_totals_are_exact_past_int64() -> None:
    """A layer block's loads times its layers sum past 2**63: the total is the exact integer
    (it wrapped to a negative int64 before)."""
    rows = np.zeros(3, INSTR_DTYPE)
    rows["opcode"], rows["unit"], rows["traffic"], rows["group"] = LD, 0, TRAFFIC_WEIGHT, 0
    rows["cycles"] = [1, 2**62, 2**62]
    rows["nbytes"] = [1, 2**61, 2**61]
    rows["wait"] = -1
    rows["chan"], rows["acq_buf"], rows["rel_buf"] = -1, -1, -1
    program = Program(rows, ("load",), head_len=1, layer_len=1, layers=2, total_layers=40,
                      buffer_bytes=(-1, -1), clock_hz=1e9, ideal=False, label="wide")
    out = totals(program)
    assert out["busy_LD"] == 1 + 2**62 + 39 * 2**62
    assert out["weight_bytes"] == 1 + 2**61 + 39 * 2**61
    assert out["busy_LD"] > MAX_COUNT  # so a Timing refuses it (below)


def test_a_timing_refuses_counts_past_int64_and_non_finite() -> None:
    Timing(cycles=MAX_COUNT, clock_hz=1e9, ld_cycles=MAX_COUNT, st_cycles=0, compute_cycles=0)
    for bad in ({"ld_cycles": MAX_COUNT + 1}, {"st_cycles": -1}, {"cycles": math.inf},
                {"compute_cycles": math.nan}, {"weight_bytes": 2**64}):
        fields = {"cycles": 1, "clock_hz": 1e9, "ld_cycles": 1, "st_cycles": 1,
                  "compute_cycles": 1} | bad
        with pytest.raises(CountOutOfRange, match=next(iter(bad))):
            Timing(**fields)


@pytest.mark.parametrize("engine", ["fast", "event", "analytic"])
def test_a_pass_past_int64_cycles_is_one_line_naming_the_context(
    tmp_path: Path, capsys, engine: str
) -> None:
    """The issue's input: the slowest board, the largest model, -L 10000000. `fast` and
    `event` printed a wrapped ld_cycles (3788115872117186832 < verify_cycles), exit 0."""
    board = write_yaml(tmp_path / "slow.yaml", slow_board())
    model = write_yaml(tmp_path / "huge.yaml", HUGE)
    res = run_cli(capsys, "simulate", "-b", board, "-m", model, "-L", "10000000", "-e", engine,
                  "-f", "json")
    assert res.code == 2 and res.out == "", res.out[:300]
    (line,) = res.err.strip().splitlines()[-1:]
    assert line.startswith("fpgasim: error: argument --context = 10000000: "), line
    assert "2**63 - 1" in line and "verify pass" in line


def test_a_70b_model_on_the_slowest_board_is_exact(tmp_path: Path, capsys) -> None:
    """Within the int64 range the cycle engines' totals are exact and consistent: the pass
    takes at least as long as its busiest unit (a wrapped total was below it)."""
    board = write_yaml(tmp_path / "slow.yaml", slow_board())
    model = write_yaml(tmp_path / "big70.yaml", BIG70)
    rows = {}
    for engine in ("fast", "event"):
        res = run_cli(capsys, "simulate", "-b", board, "-m", model, "-L", "10000000", "-e",
                      engine, "-f", "json")
        assert res.code == 0, res.err
        rows[engine] = row = json.loads(res.out)
        units = [row[k] for k in ("ld_cycles", "st_cycles", "compute_cycles", "sfu_cycles")]
        assert all(isinstance(v, int) and 0 <= v <= MAX_COUNT for v in units)
        assert row["verify_cycles"] >= max(units)
    assert rows["fast"]["verify_cycles"] == rows["event"]["verify_cycles"]


# --------------------------------------------------------------------------- JSON


def test_the_json_writer_refuses_non_finite_numbers() -> None:
    assert json.loads(json_text({"a": np.float64(1.5), "b": [np.int64(2)], "c": None})) == {
        "a": 1.5, "b": [2], "c": None}
    for bad in (math.inf, -math.inf, math.nan, np.float32("inf")):
        with pytest.raises(FpgasimError, match=r"output best\.t_sd_s = .*finite"):
            json_text({"best": {"t_sd_s": bad}})


def test_hetero_solve_json_is_json_for_a_tiny_peak_rate(tmp_path: Path, capsys) -> None:
    """A GPU of 1e-320 TFLOP/s (valid: > 0) printed `Infinity` in its JSON, exit 0."""
    data = yaml.safe_load((REPO / "platforms/rtx4090.yaml").read_text())
    data["gpu"]["peak_tflop_s"] = 1e-320
    platform = write_yaml(tmp_path / "tiny.yaml", data)
    for fmt in ("json", "csv", "table"):
        res = run_cli(capsys, "hetero", "solve", "-p", platform, "-m", "llama2-chat-7b", "-f", fmt)
        assert res.code == 2 and "Infinity" not in res.out and "inf" not in res.out, res.out[:200]
        (line,) = res.err.strip().splitlines()
        assert line.startswith(f"fpgasim: error: {platform}: "), line
        assert "finite" in line


# --------------------------------------------------------------------------- property


PROPS = settings(max_examples=45, derandomize=True, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow])
BITS = st.sampled_from([4, 8, 16, 32])
BOARD_CHANGES = st.fixed_dictionaries({
    "clock_mhz": st.sampled_from([1.0, 225.0, 5000.0]),
    "bandwidth_gb_s": st.sampled_from([1.0, 460.0, 100_000.0]),
    "efficiency": st.sampled_from([0.01, 0.35, 1.0]),
    "pe": st.sampled_from([(1, 1), (64, 48), (4096, 4096)]),
    "weight_bits": BITS,
    "activation_bits": st.sampled_from([8, 16, 32]),
    "kv_bits": BITS,
    "overlap": st.sampled_from(["realistic", "ideal"]),
})


def extreme_board(c: dict) -> Board:
    """u280 with the drawn extremes and its buffers at their largest (a pass's instructions
    are then few and long: the test stays quick at 10 million tokens of context)."""
    data = copy.deepcopy(U280)
    data["clock_mhz"] = c["clock_mhz"]
    data["pe_array"] = {"rows": c["pe"][0], "cols": c["pe"][1]}
    data["mv_macs_per_cycle"] = min(c["pe"][0] * c["pe"][1], 10**7)
    data["memory"]["bandwidth_gb_s"] = c["bandwidth_gb_s"]
    for group in ("weight_group", "activation_group"):
        data["memory"][group].update(load_efficiency=c["efficiency"],
                                     store_efficiency=c["efficiency"])
    data["precision"] = {k: c[k] for k in ("weight_bits", "activation_bits", "kv_bits")}
    data["overlap"] = c["overlap"]
    data["buffers"] = {"weight_kib": 1 << 20, "activation_kib": 1 << 20, "prefetch_depth": 1}
    return validate_mapping(Board, data, "extreme.yaml")


MODELS = {name: validate_mapping(TargetModel, data, f"{name}.yaml")
          for name, data in (("llama", LLAMA), ("big70", BIG70), ("huge", HUGE))}
COUNTS = ("verify_cycles", "ld_cycles", "st_cycles", "compute_cycles", "sfu_cycles",
          "weight_bytes", "act_load_bytes", "act_store_bytes", "memory_bytes")


@PROPS
@given(changes=BOARD_CHANGES, model=st.sampled_from(sorted(MODELS)),
       context=st.sampled_from([1, 4096, 10_000_000]), x=st.sampled_from([1, 85]),
       engine=st.sampled_from(["analytic", "event", "fast"]))
def test_extreme_valid_inputs_give_exact_counts_or_one_line(
    changes: dict, model: str, context: int, x: int, engine: str
) -> None:
    board = extreme_board(changes)
    try:
        row = simulate_point(get_engine(engine), Point(board, MODELS[model], context, x))
    except FpgasimError as exc:
        assert "\n" not in str(exc) and str(exc), exc
        return
    for key in COUNTS:
        value = row[key]
        assert isinstance(value, int) and not isinstance(value, bool), (key, value)
        assert 0 <= value <= MAX_COUNT, (key, value)
    busiest = max(row[k] for k in ("ld_cycles", "st_cycles", "compute_cycles"))
    assert row["verify_cycles"] >= busiest, row
    assert all(math.isfinite(v) for v in row.values() if isinstance(v, float)), row
    json.loads(json_text(row))
