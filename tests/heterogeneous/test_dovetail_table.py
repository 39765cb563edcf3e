"""The dovetail1 table: measured speedups from the published inputs, and the model beside them."""

from __future__ import annotations

import math

import pytest

from fpgasim.config import load_model
from fpgasim.heterogeneous import (
    TABLE_COLUMNS,
    calibrations,
    dovetail1_detail,
    dovetail1_table,
    load_dovetail1_inputs,
    load_platform,
    verify_time,
)

#: The model may be off by up to 1.5x either way. It is calibrated on 3 of the table's 12
#: timings (T_T, T_V(60), Dovetail's T_D) and 2 of its 4 Omegas; its held-out T_V(16) is 22%
#: low (the measured T_V is concave in gamma, which max + beta·min cannot be), which alone
#: moves a speedup by about 25%. 1.5x tolerates that roofline-level error and still catches a
#: structural one: charging the draft per candidate token instead of per level moves the
#: RTX 4090 row by 2.7x, and a wrong regime (compute- vs memory-bound) by more.
BAND = 1.5


def test_columns_are_the_csv_contract() -> None:
    table = dovetail1_table()
    assert list(table.columns) == TABLE_COLUMNS
    assert TABLE_COLUMNS == ["method", "device", "gamma", "speedup_from_measurements",
                             "speedup_model"]  # fmt: skip
    assert len(table) == 4
    assert table.notna().all().all()
    assert "same" not in set(table["device"])


def test_measured_speedups_recomputed_from_published_inputs() -> None:
    """T_T·Omega / ((depth+1)·T_D + T_V), by hand, for each published row."""
    expected = [
        0.025 * 5.59 / (6 * 0.001 + 0.025),  # EAGLE-2, RTX 4090, depth 5
        0.45 * 5.61 / (6 * 0.0016 + 1.34),  # EAGLE-2, 2080 SUPER + 4214R, gamma 60
        0.45 * 4.69 / (6 * 0.0016 + 0.88),  # EAGLE-2, gamma 16
        0.45 * 5.90 / (8 * 0.0072 + 0.88),  # Dovetail, depth 7
    ]
    table = dovetail1_table()
    assert list(table["gamma"]) == [60, 60, 16, 16]
    assert list(table["method"]) == ["EAGLE-2", "EAGLE-2", "EAGLE-2", "Dovetail"]
    for got, want in zip(table["speedup_from_measurements"], expected, strict=True):
        assert got == pytest.approx(want, abs=5e-4)
    # Dovetail beats EAGLE-2 at the same gamma on the CPU host, and gamma 16 beats 60 there
    s = list(table["speedup_from_measurements"])
    assert s[3] > s[2] > s[1]


def test_per_token_charging_is_the_alternative() -> None:
    detail = dovetail1_detail()
    row = detail.iloc[0]
    assert row["speedup_per_token_charging"] == pytest.approx(0.025 * 5.59 / (60 * 0.001 + 0.025))
    assert row["speedup_from_measurements"] / row["speedup_per_token_charging"] > 2.5


def test_model_speedups_within_band() -> None:
    table = dovetail1_table()
    for _, r in table.iterrows():
        ratio = r["speedup_model"] / r["speedup_from_measurements"]
        assert 1 / BAND <= ratio <= BAND, (r["method"], r["gamma"], ratio)
        assert r["speedup_model"] > 1


def test_model_reproduces_what_it_was_calibrated_on() -> None:
    d = dovetail1_detail()
    cpu = d[d["calibrates"].str.contains("cpu")].iloc[0]
    assert cpu["model_t_target_s"] == pytest.approx(0.45, rel=0.01)
    assert cpu["model_t_verify_s"] == pytest.approx(1.34, rel=0.01)
    gpu = d[d["calibrates"].str.contains("gpu")].iloc[0]
    assert gpu["model_t_draft_s"] == pytest.approx(0.0072, rel=0.01)
    for _, r in d[d["calibrates"].str.contains("acceptance")].iterrows():
        assert r["model_omega"] == pytest.approx(r["omega"], abs=1e-6)


def test_held_out_quantities() -> None:
    """What the model was not fitted to, with the error it actually has."""
    d = dovetail1_detail().set_index(["method", "gamma", "platform"])
    tv16 = d.loc[("EAGLE-2", 16, "xeon4214r-rtx2080s"), "model_t_verify_s"]
    assert tv16 == pytest.approx(0.88, rel=0.25)  # model 0.69 s: the formula's known shortfall
    gpu = d.loc[("EAGLE-2", 60, "rtx4090")]
    assert gpu["model_t_draft_s"] == pytest.approx(0.001, rel=0.15)
    assert gpu["model_t_target_s"] == pytest.approx(0.025, rel=0.25)
    e60 = d.loc[("EAGLE-2", 60, "xeon4214r-rtx2080s")]
    assert e60["model_omega"] == pytest.approx(5.61, rel=0.06)


def test_platform_files_carry_the_calibrated_values() -> None:
    for _, r in calibrations().iterrows():
        assert r["in_file"] == pytest.approx(r["calibrated"], abs=6e-4), (r["platform"], r["field"])


def test_cpu_only_speed_check() -> None:
    """Published CPU-only LLaMA2-Chat-7B speed on the 2080 host (2.14 tokens/s) vs T_V(0)."""
    inputs = load_dovetail1_inputs()
    t_ad = verify_time(load_platform("xeon4214r-rtx2080s"), load_model("llama2-chat-7b"), 0,
                       inputs.context).total_s  # fmt: skip
    assert 1 / t_ad == pytest.approx(inputs.cpu_only_tokens_per_s, rel=0.05)


def test_inputs_file_is_the_only_source(tmp_path) -> None:
    """Changing a published input in a copy of the file changes the table."""
    import yaml

    from fpgasim.config import resolve

    data = yaml.safe_load(resolve("experiment", "dovetail1").read_text())
    data["rows"][3]["omega"] = 6.5
    path = tmp_path / "d1.yaml"
    path.write_text(yaml.safe_dump(data))
    table = dovetail1_table(load_dovetail1_inputs(str(path)))
    assert table["speedup_from_measurements"].iloc[3] == pytest.approx(
        0.45 * 6.5 / (8 * 0.0072 + 0.88), abs=5e-4
    )
    assert not math.isclose(
        table["speedup_model"].iloc[3], dovetail1_table()["speedup_model"].iloc[3]
    )


def test_docs_table_matches_the_code() -> None:
    """The dovetail1 table pasted in docs/heterogeneous.md is the code's current output."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "heterogeneous.md").read_text()
    section = text.split("\n## dovetail1\n", 1)[1]
    rows = [ln for ln in section.splitlines() if ln.startswith(("| EAGLE-2", "| Dovetail"))]
    table = dovetail1_table()
    for line, (_, r) in zip(rows[:4], table.iterrows(), strict=True):
        cells = [c.strip() for c in line.strip("|").split("|")]
        measured, model = r["speedup_from_measurements"], r["speedup_model"]
        expected = [r["method"], r["device"], str(r["gamma"]), f"{measured:.3f}", f"{model:.3f}"]
        assert cells == expected
