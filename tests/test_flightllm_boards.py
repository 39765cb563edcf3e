"""The study boards calibrated to FlightLLM's design (boards/*-flightllm.yaml) differ from
the study boards only in the fields docs/validation.md argues, with FlightLLM's values
(docs/flightllm-model.md); and `generate` with measured AAT reads each step's context by
the acceptance rule (measured, or interpolated between measured contexts)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fpgasim.analysis.aat import load_aat_tables
from fpgasim.analysis.aat_curves import measured_curves
from fpgasim.analysis.generation import generate, measured_curve_at
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import get_engine

BOARDS = ("u280", "vhk158", "v80", "u250")
CHANGED = {
    "name",
    "description",
    "memory.weight_group.channels",
    "memory.activation_group.channels",
    "memory.activation_group.load_efficiency",
    "buffers.weight_kib",
    "buffers.prefetch_depth",
    "precision.weight_bits",
    "precision.activation_bits",
    "precision.kv_bits",
    "padding.mm_token_multiple",
}
#: VHK158 is FlightLLM's own board: its MM and MV arrays are FlightLLM's
#: (docs/flightllm-model.md §1)
CHANGED_VHK158 = CHANGED | {"pe_array.cols", "mv_macs_per_cycle"}


def _flat(data: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in data.items():
        out.update(_flat(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


@pytest.mark.parametrize("name", BOARDS)
def test_only_the_argued_fields_change(name: str) -> None:
    study, cal = (
        _flat(load_board(name).model_dump()),
        _flat(load_board(f"{name}-flightllm").model_dump()),
    )
    changed = {k for k in study if study[k] != cal[k]}
    assert changed == (CHANGED_VHK158 if name == "vhk158" else CHANGED)


@pytest.mark.parametrize("name", BOARDS)
def test_flightllm_values(name: str) -> None:
    study, cal = load_board(name), load_board(f"{name}-flightllm")

    # INT4-timed weights over 8 channels stream as many weights per cycle as fp16 over 32
    def weights_per_cycle(b):
        g = b.memory.weight_group
        rate = b.bytes_per_cycle * g.channels / b.memory.channels * g.load_efficiency
        return rate * 8 / b.precision.weight_bits

    assert weights_per_cycle(cal) == pytest.approx(weights_per_cycle(study), rel=1e-12)
    assert (cal.memory.weight_group.channels, cal.memory.activation_group.channels) == (8, 8)
    assert cal.memory.activation_group.load_efficiency == 0.7
    assert (cal.precision.weight_bits, cal.precision.activation_bits) == (4, 8)
    assert cal.precision.kv_bits == 8
    assert cal.padding.mm_token_multiple == 128  # FlightLLM's 128-row MM tile
    assert cal.padding.decode_multiple == 16  # FlightLLM's decode context alignment
    # the MV weight ring: 4 sets of 1M weights at the INT4 timing width
    assert cal.buffers.prefetch_depth == 4
    assert cal.buffers.weight_kib * 1024 * 8 // cal.precision.weight_bits == 4 * 2**20
    assert cal.mv_macs_per_cycle * 4 == cal.macs_per_cycle  # MV:MM = 1:4 as FlightLLM
    if name == "vhk158":
        assert (cal.macs_per_cycle, cal.mv_macs_per_cycle) == (4096, 1024)


def test_generate_with_measured_aat(aat_dir: Path) -> None:
    board, model = load_board("v80"), load_model("llama-3.1-8b")
    algorithm = load_algorithm("longspec")
    tables = load_aat_tables(aat_dir)
    curve_at = measured_curve_at(tables, algorithm, model.id, "gov_report")
    # measured contexts 128, 256, 512, ...: a step at 512 reads the measured curve, one at
    # 362 (half way in log2 L) the mean of the curves at 256 and 512 at every x
    at = {c: measured_curves(tables, algorithm, model.id, [c], ["gov_report"])[0]
          for c in (256, 512)}
    assert curve_at(512).points["aat"].tolist() == at[512].points["aat"].tolist()
    got = curve_at(362)
    assert got.context == 362 and got.basis == "interpolated"
    weight = math.log2(362 / 256)
    lo, hi = (at[c].points.set_index("verify_len")["aat"] for c in (256, 512))
    for x, aat in got.points[["verify_len", "aat"]].itertuples(index=False):
        assert aat == pytest.approx(lo[x] + weight * (hi[x] - lo[x]), rel=1e-12)
    gen = generate(
        get_engine("analytic"), board, model, 250, 20, algorithm=algorithm, curve_at=curve_at
    )
    assert gen.summary["decode_s"] == pytest.approx(gen.steps["step_s"].sum(), rel=1e-12)
    assert (gen.steps["decision"] == "use SD").all()
