"""`generate` with measured AAT reads each step's context by the acceptance rule (measured,
or interpolated between measured contexts). (The study boards calibrated to FlightLLM,
boards/*-flightllm.yaml, were retired with the study lowering: the study's boards run on
FlightLLM's compiler, tests/dataflow/lowerings/test_one_compiler.py, and FlightLLM's design is
a design file,
tests/config/test_config.py.)"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fpgasim.acceptance.curves import measured_curves
from fpgasim.acceptance.measured import load_aat_tables
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import get_engine
from fpgasim.studies.generation import generate, measured_curve_at


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
