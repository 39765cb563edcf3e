"""The memory access model (fpgasim/config/memory_access.py) against the published HBM
measurements of docs/hbm_patterns.csv, and the transfer efficiencies designs run at."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from fpgasim.config import load_board, load_fpga
from fpgasim.config.board_loader import board_of
from fpgasim.config.memory_access import (
    AccessModel,
    Pattern,
    pattern_gb_s,
    transaction_ns,
    transfer_efficiencies,
)

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT / "docs" / "hbm_patterns.csv"
#: the issue's bound: the model within 10% of every published case used
TOLERANCE = 0.10


def _pattern(row: dict) -> Pattern:
    return Pattern(int(row["transaction_bytes"]), bool(row["sequential"]), int(row["channels"]),
                   bool(row["reorders"]), int(row["masters_per_channel"]), bool(row["lateral"]),
                   float(row["issue_ns"]))


def _rows() -> list[dict]:
    return pd.read_csv(CSV).to_dict("records")


def test_the_table_has_its_columns_and_a_source_for_every_case() -> None:
    frame = pd.read_csv(CSV)
    assert list(frame.columns[:4]) == ["case", "source", "measured_gb_s", "model_gb_s"]
    assert frame["source"].str.len().min() > 20
    assert frame["case"].is_unique
    assert len(frame) >= 40


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r["case"])
def test_every_published_case_within_ten_percent(row: dict) -> None:
    """The CSV's model column is what the part's access model gives (recomputed here), and it
    is within 10% of the measurement."""
    mem = load_fpga(row["part"]).memory
    model = row["streams"] * pattern_gb_s(mem.bandwidth_gb_s / mem.channels, mem.access,
                                          _pattern(row))
    assert row["model_gb_s"] == pytest.approx(model, rel=1e-6)
    assert abs(model / row["measured_gb_s"] - 1) <= TOLERANCE


def test_the_constants_follow_from_their_calibration_cases() -> None:
    """Each measured constant of the U280's file is what its one calibration case implies,
    derived here by hand from the tutorial's numbers (the other cases are checks)."""
    access = load_fpga("u280").memory.access
    by = {r["role"]: r for r in _rows() if r["role"] != "check"}
    seq = by["calibrates sequential_efficiency"]["measured_gb_s"]
    assert access.sequential_efficiency == pytest.approx(seq / 14.375, abs=5e-5)
    rnd = by["calibrates random_transaction_ns"]["measured_gb_s"]
    assert access.random_transaction_ns == pytest.approx(64 / rnd, abs=5e-3)
    drain = by["calibrates reorder_drain_ns"]["measured_gb_s"]
    # 64 B over 2 channels in order: the one-channel random time plus half a drain
    assert access.reorder_drain_ns == pytest.approx(2 * (64 / drain - 64 / rnd), abs=0.05)
    rama = by["calibrates the tutorial kernel issue overhead (2 cycles)"]
    assert rama["issue_ns"] == pytest.approx(3 / 0.3)  # (1 beat + 2) cycles at 300 MHz
    assert 64 / rama["measured_gb_s"] == pytest.approx(10.0, rel=1e-4)
    assert access.lateral_share == 0.5 and access.port_gb_s == pytest.approx(0.450 * 32)


def test_the_hbm_parts_share_one_subsystem() -> None:
    """U50, U280 and U55C carry the same measured HBM2 access model (UG1393: one subsystem)."""
    models = {name: load_fpga(name).memory.access for name in ("u50", "u280", "u55c")}
    assert len(set(models.values())) == 1
    for name in ("u250", "v80", "vck190", "vhk158"):
        assert load_fpga(name).memory.access is None


MODEL = AccessModel(sequential_efficiency=0.9, random_transaction_ns=13.0, reorder_drain_ns=140.0,
                    lateral_share=0.5, port_gb_s=14.4)


def test_pattern_mechanisms() -> None:
    """Each mechanism acts as stated: sequential streams at the sequential rate whatever the
    size; random small reads bound by the row time; in-order channel changes add the drain;
    reordering shares a channel's time; lateral halves; masters share a channel."""
    seq = [pattern_gb_s(14.375, MODEL, Pattern(s)) for s in (64, 512, 4096)]
    assert seq == pytest.approx([14.375 * 0.9] * 3)
    assert pattern_gb_s(14.375, MODEL, Pattern(64, sequential=False)) == pytest.approx(64 / 13.0)
    in_order = transaction_ns(14.375, MODEL, Pattern(64, sequential=False, channels=4))
    assert in_order == pytest.approx(13.0 + 0.75 * 140.0)
    reorder = transaction_ns(14.375, MODEL, Pattern(64, sequential=False, channels=4,
                                                    reorders=True))
    assert reorder == pytest.approx(64 / 14.4)  # the port binds once the row time is shared
    assert pattern_gb_s(14.375, MODEL, Pattern(512, lateral=True)) == pytest.approx(
        14.375 * 0.9 * 0.5)
    assert pattern_gb_s(14.375, MODEL, Pattern(512, masters_per_channel=2)) == pytest.approx(
        14.375 * 0.9 / 2)
    with pytest.raises(ValueError, match="at least one"):
        Pattern(0)
    with pytest.raises(ValueError, match="finite"):
        Pattern(64, issue_ns=math.inf)


def test_transfer_efficiencies_and_their_basis() -> None:
    """Same-channel transfers are sequential streams; cross-channel ones cross the switch
    laterally; FlightLLM's VHK158 configuration keeps its constants; a part with no measured
    model runs at the design's constants, an assumption the result names."""
    u280 = load_board("flightllm-u280").fit
    assert (u280.transfer_basis, u280.bandwidth_reading) == ("access model", "decimal")
    assert u280.same_channel_efficiency == pytest.approx(0.9115)
    assert u280.cross_channel_efficiency == pytest.approx(0.9115 * 0.5)
    vhk = load_board("flightllm-vhk158").fit
    assert (vhk.transfer_basis, vhk.bandwidth_reading) == ("design constants", "gib")
    assert (vhk.same_channel_efficiency, vhk.cross_channel_efficiency) == (0.7, 0.35)
    plain = board_of("vhk158", "flightllm").fit
    assert (plain.transfer_basis, plain.bandwidth_reading) == ("assumed", "decimal")
    study_u250 = load_board("u250").fit  # 32 virtual channels over 4 DDR channels
    assert study_u250.transfer_basis == "assumed"
    fixed = transfer_efficiencies(14.375, load_fpga("u280").memory.access, "design_constants",
                                  0.6, 0.3)
    assert (fixed.same, fixed.cross, fixed.basis) == (0.6, 0.3, "design constants")


def test_the_decode_loads_follow_the_efficiency() -> None:
    """FlightLLM's U280 decode on the access model: every transfer runs 0.9115 / 0.7 faster
    than at FlightLLM's constants (both classes scale alike: lateral = half, as 0.35 = 0.7 / 2),
    and nothing else moves."""
    from fpgasim.config import load_model
    from fpgasim.dataflow.passes import PassSpec
    from fpgasim.engine import get_engine

    model, engine = load_model("llama2-7b-flightllm"), get_engine("fast")
    spec = PassSpec("target", tokens=1, context=511)
    measured = engine.run_pass(spec, load_board("flightllm-u280"), model)
    constants = engine.run_pass(spec, load_board(
        "flightllm-u280", [("design.memory.transfer_model", "design_constants")]), model)
    assert measured.ld_cycles == pytest.approx(constants.ld_cycles * 0.7 / 0.9115, rel=1e-9)
    assert measured.compute_cycles == constants.compute_cycles
    assert measured.weight_bytes == constants.weight_bytes
