"""No wrapped or non-finite number leaves fpgasim: exact totals, checked int64, valid JSON.

Cycle and byte totals are exact integers (cycles on FlightLLM's compiler: exact binary
fractions, multiples of 2**-24) up to the int64 range every table column holds
(`engine.timing.MAX_COUNT`); a pass past the simulator's limits is one line naming the
input. Every JSON output goes through one writer (`fileio.json_text`) that refuses a
non-finite number. A property test drives extreme-but-valid data sheets, designs, models and
contexts through every engine.
"""

from __future__ import annotations

import copy
import json
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fpgasim.config import board_of
from fpgasim.config.loader import validate_mapping
from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.instructions import INSTR_DTYPE, LD, TRAFFIC_WEIGHT, Program, totals
from fpgasim.engine import get_engine
from fpgasim.engine.timing import MAX_COUNT, CountOutOfRange, Timing
from fpgasim.errors import FpgasimError
from fpgasim.fileio import json_text
from fpgasim.simulate import Point, simulate_point
from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
U280 = yaml.safe_load((REPO / "fpgas/u280.yaml").read_text())
STUDY = yaml.safe_load((REPO / "designs/study.yaml").read_text())
LLAMA = yaml.safe_load((REPO / "workloads/models/llama-3.1-8b.yaml").read_text())
#: the largest model the schema accepts (every dimension at its bound, hidden = heads x
#: head_dim), with a window past 10 million tokens
HUGE = {**LLAMA, "id": "huge", "hidden": 1 << 17, "intermediate": 1 << 19, "layers": 1024,
        "heads": 1024, "kv_heads": 1024, "head_dim": 128, "vocab": 1 << 22,
        "window_tokens": 1 << 24}
#: a 70B-shaped model (Llama-2-70B's dimensions)
BIG70 = {**LLAMA, "id": "big70", "hidden": 8192, "intermediate": 28672, "layers": 80,
         "heads": 64, "kv_heads": 8, "head_dim": 128, "vocab": 32000, "params_b": 69.0,
         "window_tokens": 1 << 24}
TICKS = 1 << 24  # FlightLLM's compiler times in ticks of 2**-24 cycle


def slow_fpga() -> dict:
    """The U280's data sheet at 1 GB/s, the slowest memory the schema accepts."""
    fpga = copy.deepcopy(U280)
    fpga["name"] = "slow"
    fpga["memory"]["bandwidth_gb_s"] = 1
    return fpga


def slow_design(**changes: object) -> dict:
    """The slowest design the schema accepts: 5 GHz (the most cycles per byte), 1%
    efficiencies, the smallest array (64 x 16, a 16-MAC MV lane), fp16, its buffers at their
    largest (a pass's instructions are few and long)."""
    design = copy.deepcopy(STUDY)
    design.update(name="slow", clock_mhz=5000, mm_rows=64, mm_cols=16, mm_by_fpga=[],
                  mv_macs_per_lane=16)
    # the 1% efficiencies apply on any part (not the U280's measured access model)
    design["memory"].update(same_channel_efficiency=0.01, cross_channel_efficiency=0.01,
                            transfer_model="design_constants")
    design["padding"]["prefill_multiple"] = 64
    design["buffers"] = dict.fromkeys(("a", "b", "global", "meta", "fsb", "bias"), 1 << 20)
    design.update(changes)
    return design


def write_yaml(path: Path, data: dict) -> str:
    path.write_text(yaml.safe_dump(data))
    return str(path)


def exact_cycles(value: object) -> bool:
    """A cycle count as the engines report it: a whole number, or on FlightLLM's compiler a
    multiple of 2**-24 (exact in a float below 2**29 cycles x 2**24)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and (
        float(value) * TICKS).is_integer()


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
                      buffer_bytes=(-1, -1), ideal=False, label="wide")
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


def test_the_slowest_pair_and_the_largest_model_are_one_line(tmp_path: Path, capsys) -> None:
    """The issue's input, on today's files: the slowest data sheet and design, the largest
    model, -L 10000000. The cycle engines printed a wrapped ld_cycles, exit 0; now a part
    of the compiler's is past the time range (one line), and the accounting, whose widest
    element is 16 bits now, counts it exactly within int64."""
    fpga = write_yaml(tmp_path / "slow-fpga.yaml", slow_fpga())
    design = write_yaml(tmp_path / "slow-design.yaml", slow_design())
    model = write_yaml(tmp_path / "huge.yaml", HUGE)
    args = ["simulate", "--fpga", fpga, "--design", design, "-m", model, "-L", "10000000",
            "-f", "json"]
    for engine in ("fast", "event"):
        res = run_cli(capsys, *args, "-e", engine)
        assert res.code == 2 and res.out == "", res.out[:300]
        (line,) = res.err.strip().splitlines()[-1:]
        assert line.startswith("fpgasim: error: board slow@slow: memory.bandwidth_gb_s = "
                               "1.0: too slow: a layer would exceed the simulator's time "
                               "range"), line
    res = run_cli(capsys, *args, "-e", "analytic")
    assert res.code == 0, res.err
    row = json.loads(res.out)
    for key in ("verify_cycles", "ld_cycles", "weight_bytes", "kv_bytes", "memory_bytes"):
        assert isinstance(row[key], int) and 0 <= row[key] <= MAX_COUNT, key
    # the accounting's KV bytes: 2 x layers x kv_heads x head_dim x 2 B per cached token
    assert row["kv_bytes"] == 2 * 1024 * 1024 * 128 * 2 * 10_000_000


@pytest.mark.slow
def test_a_part_past_the_time_range_is_one_line(tmp_path: Path, capsys) -> None:
    """A 70B model at 10 million tokens on the slowest pair: one instruction of the
    compiler's would take more than 2**62 ticks (2**38 cycles). It was cast to a negative
    int64 ("internal error: every instruction must take >= 0 cycles"); now the part is too
    slow, in one line."""
    fpga = write_yaml(tmp_path / "slow-fpga.yaml", slow_fpga())
    design = write_yaml(tmp_path / "slow-design.yaml", slow_design())
    model = write_yaml(tmp_path / "big70.yaml", BIG70)
    for engine in ("fast", "event"):
        res = run_cli(capsys, "simulate", "--fpga", fpga, "--design", design, "-m", model,
                      "-L", "10000000", "-e", engine, "-f", "json")
        assert res.code == 2 and res.out == "", res.out[:300]
        (line,) = res.err.strip().splitlines()[-1:]
        assert "memory.bandwidth_gb_s = 1.0: too slow: a layer would exceed the " \
            "simulator's time range" in line, line


def test_a_70b_model_on_the_slowest_pair_is_exact(tmp_path: Path, capsys) -> None:
    """Within the range the cycle engines' totals are exact and consistent: the pass takes at
    least as long as its busiest unit (a wrapped total was below it)."""
    fpga = write_yaml(tmp_path / "slow-fpga.yaml", slow_fpga())
    design = write_yaml(tmp_path / "slow-design.yaml", slow_design())
    model = write_yaml(tmp_path / "big70.yaml", BIG70)
    rows = {}
    for engine in ("fast", "event"):
        res = run_cli(capsys, "simulate", "--fpga", fpga, "--design", design, "-m", model,
                      "-L", "100000", "-e", engine, "-f", "json")
        assert res.code == 0, res.err
        rows[engine] = row = json.loads(res.out)
        units = [row[k] for k in ("ld_cycles", "st_cycles", "compute_cycles", "sfu_cycles")]
        assert all(exact_cycles(v) and 0 <= v <= MAX_COUNT for v in units), units
        assert row["verify_cycles"] >= max(units) > 1e13
        for key in ("weight_bytes", "act_load_bytes", "act_store_bytes", "kv_bytes"):
            assert isinstance(row[key], int) and 0 <= row[key] <= MAX_COUNT, key
    assert rows["fast"] == rows["event"] | {"engine": "fast"}


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


PROPS = settings(max_examples=30, derandomize=True, deadline=None, database=None,
                 suppress_health_check=[HealthCheck.too_slow])
BITS = st.sampled_from([4, 8, 16])
CHANGES = st.fixed_dictionaries({
    "clock_mhz": st.sampled_from([1.0, 225.0, 5000.0]),
    "bandwidth_gb_s": st.sampled_from([1.0, 460.0, 100_000.0]),
    "efficiency": st.sampled_from([0.01, 0.35, 1.0]),
    "mm": st.sampled_from([(64, 16), (64, 48), (4096, 4096)]),
    "weight_bits": BITS,
    "activation_bits": st.sampled_from([8, 16]),
    "kv_bits": BITS,
})
#: the extreme pair's files: the U280's data sheet, and the study's design able to run any
#: recipe (its datapath widened) with its buffers at their largest, so a pass's instructions
#: are few and long (the test stays quick at 10 million tokens of context)
FILES = Path(tempfile.mkdtemp(prefix="fpgasim-exact-"))
EXTREME_FPGA = write_yaml(FILES / "fpga.yaml", {**copy.deepcopy(U280), "name": "extreme"})
EXTREME_DESIGN = write_yaml(FILES / "design.yaml", {
    **copy.deepcopy(STUDY), "name": "extreme", "mm_by_fpga": [], "mm_rows": 64, "mm_cols": 48,
    "padding": {"decode_multiple": 16, "prefill_multiple": 4096},
    "datapath": {"weight_bits": [4, 8, 16], "activation_bits": [8, 16], "kv_bits": [4, 8, 16]},
    "buffers": dict.fromkeys(("a", "b", "global", "meta", "fsb", "bias"), 1 << 20)})


def extreme_board(c: dict):
    """The extreme pair with the drawn extremes (the MV lane a quarter of the MM array, at
    most the schema's 10**7 MACs)."""
    rows, cols = c["mm"]
    changes = [("design.clock_mhz", c["clock_mhz"]),
               ("fpga.memory.bandwidth_gb_s", c["bandwidth_gb_s"]),
               ("design.memory.same_channel_efficiency", c["efficiency"]),
               ("design.memory.cross_channel_efficiency", c["efficiency"]),
               ("design.mm_rows", rows), ("design.mm_cols", cols),
               ("design.mv_macs_per_lane", min(rows * cols // 4, 10**7)),
               ("design.recipe.weight_bits", c["weight_bits"]),
               ("design.recipe.activation_bits", c["activation_bits"]),
               ("design.recipe.kv_bits", c["kv_bits"])]
    return board_of(EXTREME_FPGA, EXTREME_DESIGN, changes)


MODELS = {name: validate_mapping(TargetModel, data, f"{name}.yaml")
          for name, data in (("llama", {**LLAMA, "window_tokens": 1 << 24}), ("big70", BIG70),
                             ("huge", HUGE))}
CYCLES = ("verify_cycles", "ld_cycles", "st_cycles", "compute_cycles", "sfu_cycles")
BYTES = ("weight_bytes", "act_load_bytes", "act_store_bytes", "memory_bytes")


@PROPS
@given(changes=CHANGES, model=st.sampled_from(sorted(MODELS)),
       context=st.sampled_from([1, 4096, 10_000_000]), x=st.sampled_from([1, 85]),
       engine=st.sampled_from(["analytic", "event", "fast"]))
@pytest.mark.slow
def test_extreme_valid_inputs_give_exact_counts_or_one_line(
    changes: dict, model: str, context: int, x: int, engine: str
) -> None:
    board = extreme_board(changes)
    try:
        row = simulate_point(get_engine(engine), Point(board, MODELS[model], context, x))
    except FpgasimError as exc:
        assert "\n" not in str(exc) and str(exc), exc
        return
    for key in CYCLES:
        value = row[key]
        assert exact_cycles(value) and 0 <= value <= MAX_COUNT, (key, value)
    for key in BYTES:
        value = row[key]
        assert isinstance(value, int) and not isinstance(value, bool), (key, value)
        assert 0 <= value <= MAX_COUNT, (key, value)
    busiest = max(row[k] for k in ("ld_cycles", "st_cycles", "compute_cycles"))
    assert row["verify_cycles"] >= busiest, row
    assert all(math.isfinite(v) for v in row.values() if isinstance(v, float)), row
    json.loads(json_text(row))
