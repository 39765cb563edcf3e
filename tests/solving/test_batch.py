"""Batch > 1 (docs/batching.md): B requests decoded together on one datapath. Checked
against independent counts: the weights every request's MV row groups stream, each
request's own KV cache, the rows the projections see, the memory each request adds, and
batch 1 against the single-request numbers."""

from __future__ import annotations

import json
from dataclasses import replace

import pandas as pd
import pytest

from fpgasim.acceptance.curves import acceptance_curves
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.lowerings.flightllm import fixed_floor_cycles, lower_fixed
from fpgasim.engine import get_engine
from fpgasim.errors import InputError
from fpgasim.simulate import (
    Point,
    fit_warnings,
    fits_memory,
    largest_batch,
    memory_bytes,
    simulate_point,
)
from fpgasim.solving.solver import (
    Timer,
    batch_crossover,
    best_set,
    solve,
    solve_batches,
    solve_curve,
)
from fpgasim.step import simulator_of, target_spec, verify_spec
from tests.cli_helpers import run_cli

FLIGHT = ("flightllm-vhk158", "llama2-7b-flightllm")


def _inputs(names=FLIGHT):
    return load_board(names[0]), load_model(names[1])


@pytest.mark.parametrize("engine", ["analytic", "fast"])
def test_batch_one_is_the_single_request(engine: str) -> None:
    board, model = _inputs()
    eng = get_engine(engine)
    for x in (1, 4):
        a = eng.run_pass(verify_spec(x, 1024), board, model)
        b = eng.run_pass(replace(verify_spec(x, 1024), batch=1), board, model)
        assert a == b


@pytest.mark.parametrize("engine", ["analytic", "fast"])
@pytest.mark.parametrize("batch", [2, 8])
def test_each_request_reads_its_own_cache(engine: str, batch: int) -> None:
    """KV bytes of a decode pass: B times one request's, exactly (each cache read once)."""
    board, model = _inputs()
    eng = get_engine(engine)
    one = eng.run_pass(verify_spec(1, 2048), board, model)
    many = eng.run_pass(verify_spec(1, 2048, batch=batch), board, model)
    assert many.kv_bytes == batch * one.kv_bytes


def test_one_lane_streams_the_weights_once_per_row() -> None:
    """FlightLLM's one MV lane: each of the B x 1 rows is its own MV row group and streams
    every weight again, so B requests at x = 1 read B times the weights (below the rows at
    which MM tiles pay), while the accounting streams them once per 128 rows. The int32
    biases of q, k, v and o (FlightLLM's recipe) load once per layer."""
    board, model = _inputs()
    fast, analytic = get_engine("fast"), get_engine("analytic")
    one = fast.run_pass(verify_spec(1, 1024), board, model).weight_bytes
    kv = model.kv_heads * model.head_dim
    biases = model.layers * (2 * model.hidden + 2 * kv) * board.recipe.bias_bits // 8
    for batch in (2, 4):
        assert fast.run_pass(verify_spec(1, 1024, batch=batch), board, model).weight_bytes \
            == batch * (one - biases) + biases
        assert analytic.run_pass(verify_spec(1, 1024, batch=batch), board, model).weight_bytes \
            == analytic.run_pass(verify_spec(1, 1024), board, model).weight_bytes


@pytest.mark.parametrize(("x", "batch"), [(1, 4), (2, 8), (4, 16)])
def test_the_projections_see_batch_times_x_rows(x: int, batch: int) -> None:
    """The context-free parts of a batch's pass are those of one request's pass over
    batch x x tokens (the projections, norms and LM head see rows, not requests)."""
    board, model = _inputs()
    fast = get_engine("fast")
    a = lower_fixed(verify_spec(x, 1024, batch=batch), board, model)
    b = lower_fixed(verify_spec(x * batch, 1024), board, model)
    assert a is b or fast._parts_ticks(a) == fast._parts_ticks(b)


@pytest.mark.slow
@pytest.mark.parametrize("names", [FLIGHT, ("u280", "llama-3.1-8b"), ("v80", "llama-3.1-8b")])
def test_floor_below_bound_below_pass(names) -> None:
    """`best_set`'s two lower bounds: the floor from sizes alone <= the compiled bound <=
    the pass, at every batch and x tried."""
    board, model = _inputs(names)
    service = simulator_of(get_engine("fast"))
    for batch in (1, 4, 16):
        for x in (1, 3, 8, 24):
            spec = verify_spec(x, 512, batch=batch)
            floor = service.floor_s(spec, board, model)
            bound = service.bound_s(spec, board, model)
            seconds = service.run_pass(spec, board, model).seconds
            assert 0 < floor <= bound <= seconds, (batch, x, floor, bound, seconds)
            cycles = fixed_floor_cycles(spec, board, model)
            assert cycles is not None and cycles > 0


@pytest.mark.slow
@pytest.mark.parametrize("names", [FLIGHT, ("u280", "llama-3.1-8b")])
def test_best_set_is_the_full_curve_best_at_every_batch(names) -> None:
    board, model = _inputs(names)
    algorithm = load_algorithm("longspec")
    curves = acceptance_curves(algorithm, model.id, [1024])
    for batch in (1, 4):
        timer = Timer(get_engine("fast"), board, model, algorithm, batch)
        for curve in curves:
            fast = best_set(timer, curve)
            full = solve_curve(timer, curve, roofline=False).summary
            assert fast.verify_len == full["best_verify_len"]
            assert fast.p_eff_tokens_per_s == full["best_tokens_per_s"]
            assert fast.speedup == full["best_speedup"]


def test_memory_grows_by_a_cache_per_request() -> None:
    board, model = _inputs()
    kv_one = 2 * model.layers * model.kv_heads * model.head_dim * (4000 + 1)  # int8 KV
    assert memory_bytes(board, model, 4000, 1, None, 3) - memory_bytes(board, model, 4000, 1) \
        == 2 * kv_one
    capacity = int(board.fpga.memory.capacity_gib * 2**30)
    largest = (capacity - memory_bytes(board, model, 4000, 1)) // kv_one + 1
    assert largest_batch(board, model, 4000, 1) == largest
    assert fits_memory(board, model, 4000, 1, None, largest)
    assert not fits_memory(board, model, 4000, 1, None, largest + 1)
    [line] = fit_warnings(board, model, [(4000, 1, None, largest + 1)])
    assert f"at most {largest} requests fit at L=4000" in line and "fits_memory = False" in line


def test_prefill_passes_run_one_request_at_a_time() -> None:
    board, model = _inputs()
    spec = replace(target_spec(128, 0, prefill=True), batch=2)
    with pytest.raises(InputError, match="prefill"):
        get_engine("fast").run_pass(spec, board, model)


def test_crossover_rule() -> None:
    """The largest batch of the leading run where SD pays, the next batch, and any later
    batch where it pays again."""
    rows = [("t", 512, b, d, s) for b, d, s in [(1, "use SD", 1.5), (2, "use SD", 1.2),
                                                  (4, "use AD", 0.9), (8, "use SD", 1.1)]]
    rows += [("t", 1024, b, "use AD", 0.8) for b in (1, 2)]
    summary = pd.DataFrame(rows, columns=["task", "context", "batch", "decision",
                                          "best_speedup"])
    out = batch_crossover(summary).set_index("context")
    assert out.loc[512, "largest_sd_batch"] == 2 and out.loc[512, "first_ad_batch"] == 4
    assert out.loc[512, "speedup_there"] == 1.2 and out.loc[512, "pays_again_at"] == "8"
    assert pd.isna(out.loc[1024, "largest_sd_batch"]) and out.loc[1024, "first_ad_batch"] == 1


@pytest.mark.slow
def test_solve_batches_batch_one_equals_solve() -> None:
    board, model = _inputs()
    algorithm = load_algorithm("longspec")
    full = solve(board, model, algorithm, [512, 2048], engine="fast").summary
    light = solve_batches(board, model, algorithm, [512, 2048], [1, 4], engine="fast").summary
    one = light[light["batch"] == 1].reset_index(drop=True)
    for col in ("best_verify_len", "best_tokens_per_s", "best_speedup", "decision",
                "ad_tokens_per_s"):
        assert list(one[col]) == list(full[col]), col
    four = light[light["batch"] == 4]
    assert (four["batch_tokens_per_s"] == 4 / four["tpot_s"]).all()


@pytest.mark.slow
def test_the_issue_command(capsys) -> None:
    result = run_cli(capsys, "solve", "--board", "flightllm-vhk158", "--model",
                     "llama2-7b-flightllm", "--algorithm", "longspec", "--contexts", "1024",
                     "--batch", "1,4,16", "--format", "json", "--engine", "fast")
    assert result.code == 0, result.err
    out = json.loads(result.out)
    rows = {r["batch"]: r for r in out["summary"]}
    assert sorted(rows) == [1, 4, 16]
    for r in rows.values():
        assert r["decision"] in ("use SD", "use AD") and r["best_verify_len"] >= 2
        assert r["batch_tokens_per_s"] > 0
    single = run_cli(capsys, "solve", "--board", "flightllm-vhk158", "--model",
                     "llama2-7b-flightllm", "--algorithm", "longspec", "--contexts", "1024",
                     "--format", "json", "--engine", "fast")
    s = json.loads(single.out)["summary"][0]
    assert rows[1]["best_speedup"] == s["best_speedup"]
    assert rows[1]["best_verify_len"] == s["best_verify_len"]
    assert rows[1]["batch_tokens_per_s"] == s["batch_tokens_per_s"]
    assert out["crossover"][0]["context"] == 1024


@pytest.mark.parametrize(
    ("args", "flag", "words"),
    [
        (["solve", "-a", "longspec", "--contexts", "1024", "--batch", "0"], "--batch", "1"),
        (["simulate", "-L", "1024", "--batch", "5000"], "--batch", "4096"),
    ],
)
def test_bad_batches_are_one_line(capsys, args, flag, words) -> None:
    result = run_cli(capsys, *args, "--board", FLIGHT[0], "--model", FLIGHT[1])
    assert result.code == 2, result.out
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0] and words in lines[0], lines


def test_generate_counts_the_batch(capsys) -> None:
    args = ["generate", "--board", FLIGHT[0], "--model", FLIGHT[1], "-P", "128", "-D", "32",
            "--format", "json", "--workers", "1"]
    one = json.loads(run_cli(capsys, *args).out)["summary"]
    four = json.loads(run_cli(capsys, *args, "--batch", "4").out)["summary"]
    assert four["batch"] == 4
    assert four["ttft_s"] == pytest.approx(4 * one["ttft_s"], rel=1e-12)
    assert four["batch_decode_tokens_per_s"] == pytest.approx(
        4 * four["decode_tokens_per_s"], rel=1e-12)


def test_simulate_and_sweep_rows_carry_the_batch(tmp_path, capsys) -> None:
    board, model = _inputs()
    row = simulate_point(get_engine("fast"), Point(board, model, 1024, 2, batch=4))
    assert row["batch"] == 4
    assert row["verify_tokens_per_s"] == pytest.approx(4 * 2 / row["verify_s"])
    out = tmp_path / "s.csv"
    result = run_cli(capsys, "sweep", "--board", FLIGHT[0], "--model", FLIGHT[1],
                     "--contexts", "512", "--verify-lens", "1,2", "--batch", "1,4",
                     "--engine", "fast", "--out", str(out), "--no-cache",
                     "--executor", "inprocess")
    assert result.code == 0, result.err
    frame = pd.read_csv(out)
    assert sorted(frame["batch"]) == [1, 1, 4, 4]


def test_energy_per_token_counts_every_request() -> None:
    """tokens/J of a batch's pass: the batch's tokens over the pass's joules; a batch of
    one-lane AD passes uses about as much energy per token as one request (the weights are
    streamed per row either way), never less than the static power's share allows."""
    board, model = _inputs()
    eng = get_engine("fast")
    one = simulate_point(eng, Point(board, model, 1024, 1))
    four = simulate_point(eng, Point(board, model, 1024, 1, batch=4))
    assert four["tokens_per_j"] == pytest.approx(4 / four["energy_j"], rel=1e-12)
    assert four["tokens_per_j"] == pytest.approx(one["tokens_per_j"], rel=0.05)
    light = solve_batches(board, model, load_algorithm("longspec"), [1024], [1, 4],
                          engine="fast").summary
    assert (light["ad_tokens_per_j"] > 0).all() and (light["tokens_per_j"] > 0).all()
