"""The step service and the drafter registry: a drafter defined in tests/ (one module + one
YAML) runs through simulate, the solver and FlightLLM's compiler (or is refused there in
one line by a lowering without its network's blocks), and the AAT tables and calibrations
read its attributes; the traced pass is the timed one; unknown kinds are one-line errors."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from fpgasim.acceptance.measured import load_aat_tables, table_trees
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.drafters import DRAFTERS, first_network, lower_pass
from fpgasim.dataflow.drafters.network import Mlp
from fpgasim.dataflow.lowerings import registry as lowerings
from fpgasim.engine import get_engine
from fpgasim.errors import ConfigError
from fpgasim.simulate import Point, simulate_point
from fpgasim.solving.solver import SolveOptions, solve
from fpgasim.step import step_passes
from fpgasim.tree.calibrate import calibrate
from fpgasim.tree.draft_trees import default_tree
from fpgasim.tree.sar import calibrate_falcon
from tests import drafter_mlp
from tests.cli_helpers import run_cli

YAML = Path(__file__).resolve().parents[1] / "data" / "test-mlp.yaml"
LLAMA = load_model("llama-3.1-8b")
U280 = load_board("u280")


@pytest.fixture
def mlp_drafter():
    drafter_mlp.register()
    yield load_algorithm(str(YAML))
    drafter_mlp.unregister()


def test_an_unregistered_kind_is_a_config_error_naming_the_field() -> None:
    with pytest.raises(ConfigError) as err:
        load_algorithm(str(YAML))
    assert "drafter" in str(err.value) and "test-mlp" in str(err.value)


@pytest.mark.slow
def test_a_drafter_from_tests_runs_through_simulate(mlp_drafter) -> None:
    assert "test-mlp" in DRAFTERS
    tree = default_tree(mlp_drafter)
    point = Point(U280, LLAMA, 2048, 69, mlp_drafter, tree, 3)
    rows = {name: simulate_point(get_engine(name), point) for name in ("analytic", "event")}
    # 1 pass over the accepted tokens + one per level but the last (4 16 16 16 16)
    assert rows["analytic"]["draft_passes"] == rows["event"]["draft_passes"] == 5
    assert 0 < rows["analytic"]["draft_cycles"] <= rows["event"]["draft_cycles"]
    # the analytic counts are the ops' (one definition, no drift)
    spec = step_passes(69, 2048, mlp_drafter, tree, 3).drafts[1]
    ops = lower_pass(spec, U280, LLAMA, mlp_drafter.drafter).totals()
    assert spec.tokens == 4  # the first level of 4 16 16 16 16
    assert ops["macs"] == 4 * (3 * LLAMA.hidden * LLAMA.intermediate + LLAMA.hidden * LLAMA.vocab)


def test_a_drafter_from_tests_runs_through_the_solver(mlp_drafter) -> None:
    solution = solve(U280, LLAMA, mlp_drafter, [1024, 8192], engine="analytic")
    assert list(solution.summary["context"]) == [1024, 8192]
    assert (solution.summary["algorithm"] == "test-mlp").all()
    assert (solution.curves["algorithm"] == "test-mlp").all() and len(solution.curves) > 10


def test_a_drafter_from_tests_runs_on_measured_aat_tables(mlp_drafter, aat_dir,
                                                          tmp_path: Path) -> None:
    # its own measured table (LongSpec's Llama-3.1-8B rows under its id) beside the shipped
    # per-x tree table: the solver reads its rows as it reads a shipped drafter's
    shipped = (aat_dir / "longspec_llama31_tree.csv").read_text().splitlines()
    rows = [shipped[0]] + [r.replace("longspec,", "test-mlp,", 1) for r in shipped[1:]
                           if r.startswith("longspec,")]
    tree = aat_dir / "tree_shapes_by_verify_len.csv"
    for folder, table in (("mlp", rows), ("longspec", shipped)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "tree.csv").write_text("\n".join(table) + "\n")
        (tmp_path / folder / tree.name).write_text(tree.read_text())
    tables = load_aat_tables(tmp_path / "mlp")
    assert set(tables.rows["algorithm"]) == {"test-mlp"} and tables.tree_table is not None
    solution = solve(U280, LLAMA, mlp_drafter, [1024], SolveOptions(aat_dir=tmp_path / "mlp"),
                     engine="analytic")
    basis = set(solution.summary["aat_basis"])
    assert basis and all("measured" in b or "interpolated" in b for b in basis), basis
    assert (solution.curves["algorithm"] == "test-mlp").all() and len(solution.curves) > 10
    # the same rows under LongSpec's id give LongSpec's curve (the AAT side reads no kind)
    measured = solution.curves.set_index("verify_len")["aat"]
    longspec = solve(U280, LLAMA, load_algorithm("longspec"), [1024],
                     SolveOptions(aat_dir=tmp_path / "longspec"), engine="analytic")
    assert measured.to_dict() == longspec.curves.set_index("verify_len")["aat"].to_dict()


FLIGHT = ["-b", "flightllm-vhk158", "-m", "llama2-7b-flightllm", "-L", "512"]


@pytest.mark.slow
def test_a_drafter_from_tests_runs_on_flightllms_compiler(mlp_drafter, capsys) -> None:
    board, model = load_board("flightllm-vhk158"), load_model("llama2-7b-flightllm")
    lowering = lowerings.lowering_of(board)
    assert all(b.kind in lowering.block_kinds
               for b in first_network(mlp_drafter.drafter).blocks())
    tree = default_tree(mlp_drafter)
    spec = step_passes(69, 512, mlp_drafter, tree, 3).drafts[1]
    exe = lowerings.lower(spec, board, model, mlp_drafter.drafter)
    names = {n for part in exe.parts for n in part.op_names}
    assert {"mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", "lm_head"} <= names
    assert not any("qk" in n or "concat" in n for n in names)  # no attention, no KV cache
    timings = [get_engine(e).run_pass(spec, board, model, mlp_drafter.drafter) for e in
               ("event", "fast")]
    assert timings[0].cycles == timings[1].cycles > 0
    res = run_cli(capsys, "simulate", *FLIGHT, "--algorithm", str(YAML), "--format", "json")
    assert res.code == 0, res.err
    row = json.loads(res.out)
    row = row[0] if isinstance(row, list) else row
    assert row["draft_passes"] == 5 and row["draft_cycles"] > 0


def test_a_drafter_whose_blocks_a_lowering_lacks_is_refused_in_one_line(
    mlp_drafter, capsys, monkeypatch
) -> None:
    flight = lowerings.LOWERINGS["flightllm"]
    monkeypatch.setitem(lowerings.LOWERINGS, "flightllm",
                        replace(flight, block_kinds=flight.block_kinds - {Mlp.kind}))
    res = run_cli(capsys, "simulate", *FLIGHT, "--algorithm", str(YAML))
    assert res.code == 2
    (line,) = res.err.strip().splitlines()
    assert "--algorithm" in line and "test-mlp" in line and "flightllm-vhk158" in line, line
    assert "Mlp" in line, line


def test_a_drafter_from_tests_is_read_by_its_attributes_not_its_kind(mlp_drafter, aat_dir) -> None:
    # a per-x tree table: a static drafter reads its level-widths column
    tables = load_aat_tables(aat_dir)
    longspec = load_algorithm("longspec").drafter
    assert table_trees(tables.tree_table, mlp_drafter.drafter) == table_trees(
        tables.tree_table, longspec
    )
    # one level per pass: not a semi-autoregressive (Falcon) drafter
    with pytest.raises(ConfigError, match="drafter.kind"):
        calibrate_falcon(mlp_drafter)
    # no calibration targets in its file: `tree calibrate` names the field
    with pytest.raises(ConfigError, match="acceptance.calibrated_to"):
        calibrate(mlp_drafter)


@pytest.mark.slow
def test_the_trace_is_the_pass_that_was_timed(capsys, tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    small = tmp_path / "small.yaml"  # two layers of LLaMA2-7B: a short trace
    small.write_text("id: small\nhidden: 4096\nintermediate: 11008\nlayers: 2\nheads: 32\n"
                     "kv_heads: 32\nhead_dim: 128\nvocab: 32000\nwindow_tokens: 4096\n")
    args = ["simulate", "-b", "flightllm-vhk158", "-m", str(small), "--algorithm", "longspec"]
    args += ["--context", "1023", "--engine", "event", "--trace", str(path), "--format", "json"]
    result = run_cli(capsys, *args)
    assert result.code == 0, result.err
    row = json.loads(result.out)
    row = row[0] if isinstance(row, list) else row
    events = json.loads(path.read_text())["traceEvents"]
    end_us = max(e["ts"] + e["dur"] for e in events if e.get("ph") == "X")
    assert end_us == pytest.approx(row["verify_s"] * 1e6, rel=1e-9)
