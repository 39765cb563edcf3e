"""The silicon ledger (fpgasim/validation.py) and the `validation` field of every command that
prints an absolute figure."""

from __future__ import annotations

import json

import pytest

from fpgasim.config import load_board, load_model
from fpgasim.config.board_loader import board_of
from fpgasim.engine import get_engine
from fpgasim.simulate import Point, simulate_point
from fpgasim.validation import FLIGHTLLM_U280, LEDGER, validation_line, validation_of
from tests.cli_helpers import run_cli


def test_the_ledger_is_what_the_model_gives_against_the_measurement() -> None:
    """Each check's errors are the model's figures over the measured ones, recomputed here
    on the checked board at each context (to 0.01 percentage point): a change of the model
    that moves them fails until the ledger and docs/validation.md say so."""
    check = FLIGHTLLM_U280
    board = load_board("flightllm-u280")
    assert (board.design.name, board.fpga.name) == (check.design, check.fpga)
    model = load_model("llama2-7b-flightllm")
    for t, speed, power in zip(check.contexts, check.speed_error, check.power_error,
                               strict=True):
        row = simulate_point(get_engine("fast"), Point(board, model, t - 1, 1))
        assert row["verify_tokens_per_s"] / check.tokens_per_s - 1 == pytest.approx(speed,
                                                                                    abs=1e-4)
        assert row["power_w"] / check.power_w - 1 == pytest.approx(power, abs=1e-4)
    measured = check.tokens_per_s / check.power_w
    assert check.energy_error[0] == pytest.approx(
        (1 + check.speed_error[0]) / (1 + check.power_error[0]) - 1)
    assert measured == pytest.approx(1.2222, abs=1e-4)


def test_the_docs_state_the_ledger() -> None:
    """docs/validation.md's comparison table quotes the ledger's errors."""
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "docs" / "validation.md").read_text()
    section = text[text.index("### The comparison (round 2 against silicon)"):]
    s, p = FLIGHTLLM_U280.speed_error, FLIGHTLLM_U280.power_error
    assert f"**{s[0]:+.0%} / {s[1]:+.0%}**" in section
    assert f"**{p[0]:+.0%} / {p[1]:+.0%}**" in section


@pytest.mark.parametrize(("board", "engine", "basis", "says"), [
    (lambda: load_board("flightllm-u280"), "fast", "validated", "FlightLLM on U280 against"),
    (lambda: load_board("flightllm-u280", [("design.mv_lanes", 4),
                                            ("design.mv_macs_per_lane", 1024)]), "fast",
     "nearest", "nearest silicon check"),
    (lambda: load_board("u280"), "event", "nearest", "this board is not validated"),
    (lambda: board_of("u55c", "flightllm"), "fast", "nearest", "nearest silicon check"),
    (lambda: load_board("v80"), "fast", "not validated", "not validated against silicon"),
    (lambda: load_board("flightllm-u280"), "analytic", "accounting", "the study's accounting"),
])
def test_each_board_names_its_check(board, engine: str, basis: str, says: str) -> None:
    v = validation_of(board(), engine)
    assert v.basis == basis and says in v.text
    if basis in ("validated", "nearest"):
        assert "tokens/s +66% to +55%" not in v.text  # a range is written low to high
        assert "tokens/s +55% to +66%" in v.text and "W +34%" in v.text


def test_assumptions_are_named() -> None:
    """A part with no idle readout, no measured access model, or a GiB/s reading says so;
    the U280 and U55C, whose sources give both, say neither."""
    v80 = validation_of(load_board("v80"), "fast").text
    assert "static power assumed (no idle readout of v80)" in v80
    assert "transfer efficiencies assumed" in v80
    vhk = validation_of(load_board("flightllm-vhk158"), "fast").text
    assert "read as GiB/s" in vhk
    for board in (load_board("flightllm-u280"), board_of("u55c", "flightllm")):
        text = validation_of(board, "fast").text
        assert "assumed" not in text and "GiB" not in text
    assert validation_line(["a", "b", "a"]) == ["validation: a (docs/validation.md)",
                                                "validation: b (docs/validation.md)"]
    assert LEDGER[0] is FLIGHTLLM_U280


def test_simulate_json_carries_the_done_when_fields(capsys) -> None:
    """Issue 40's 'done when': simulate's JSON on FlightLLM's U280 decode gives tokens/s,
    power and a validation field."""
    out = run_cli(capsys, "simulate", "--board", "flightllm-u280", "--model",
                  "llama2-7b-flightllm", "--context", "511", "--verify-len", "1", "--format",
                  "json", "--engine", "fast")
    assert out.code == 0, out.err
    row = json.loads(out.out)
    assert row["verify_tokens_per_s"] > 0 and row["power_w"] > 0
    assert row["validation"].startswith("FlightLLM on U280 against silicon")
    assert (row["bandwidth_reading"], row["transfer_basis"]) == ("decimal", "access model")


@pytest.mark.slow
def test_solve_carries_and_prints_it(capsys) -> None:
    args = ["solve", "--board", "flightllm-u280", "--model", "llama2-7b-flightllm",
            "--algorithm", "eagle3", "--contexts", "511", "--engine", "fast"]
    table = run_cli(capsys, *args)
    assert table.code == 0, table.err
    assert table.out.count("validation: FlightLLM on U280 against silicon") == 1
    data = json.loads(run_cli(capsys, *args, "--format", "json").out)
    assert all(r["validation"].startswith("FlightLLM on U280") for r in data["summary"])


def test_generate_carries_and_prints_it(capsys) -> None:
    args = ["generate", "--board", "flightllm-u280", "--model", "llama2-7b-flightllm", "-P",
            "16", "-D", "2", "--engine", "fast", "--workers", "1"]
    table = run_cli(capsys, *args)
    assert table.code == 0, table.err
    assert table.out.count("validation: FlightLLM on U280 against silicon") == 1
    summary = json.loads(run_cli(capsys, *args, "--format", "json").out)["summary"]
    assert summary["validation"].startswith("FlightLLM on U280 against silicon")


def test_a_board_read_as_gib_says_so_in_boards() -> None:
    """Issue 42, one bandwidth: the one pair that reads its part's GB/s as GiB/s (FlightLLM's
    VHK158 configuration) says so beside the bandwidth `fpgasim boards` prints."""
    from fpgasim.cli.boards_cmd import board_row
    rows = {name: board_row(load_board(name)) for name in
            ("flightllm-vhk158", "flightllm-u280", "u280", "v80", "vhk158", "u250")}
    assert rows["flightllm-vhk158"]["reading"] == "gib"
    assert rows["flightllm-vhk158"]["bandwidth_gb_s"] == pytest.approx(819.2 * 1.024**3)
    for name in ("flightllm-u280", "u280", "v80", "vhk158", "u250"):
        row = rows[name]
        assert row["reading"] == "decimal"
        assert row["bandwidth_gb_s"] == pytest.approx(load_board(name).fpga.memory.bandwidth_gb_s)
