"""End-to-end generation (studies/generation.py), prefill, and their CLIs (`simulate --phase
prefill`, `generate`): hand-checkable small cases on the analytic engine."""

from __future__ import annotations

import dataclasses
import json
import math

import pandas as pd
import pytest
import yaml

from fpgasim.acceptance.curves import embedded_curves
from fpgasim.config import load_algorithm, load_board, load_model, resolve
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine import get_engine
from fpgasim.engine.analytic import target_counts
from fpgasim.engine.fast import FastEngine
from fpgasim.errors import InputError
from fpgasim.simulate import Point, prefill_specs, prefill_timing, simulate_point
from fpgasim.step import pass_key
from fpgasim.studies.generation import decode_context, generate, planned_passes
from tests.cli_helpers import run_cli

BOARD, MODEL = "vhk158", "llama2-chat-7b"


@pytest.fixture(scope="module")
def setup():
    return get_engine("analytic"), load_board(BOARD), load_model(MODEL)


def test_decode_context_alignment() -> None:
    # T = ceil16(P + i + 1), context = T - 1
    assert decode_context(10, 0, 16) == 15
    assert decode_context(10, 5, 16) == 15  # 16 tokens attended
    assert decode_context(10, 6, 16) == 31  # 17 -> 32
    assert decode_context(128, 0, 16) == 143
    assert decode_context(128, 511, 16) == 639
    assert decode_context(7, 3, 1) == 10  # no alignment: P + i


def test_ad_groups_and_totals(setup) -> None:
    engine, board, model = setup
    gen = generate(engine, board, model, prompt_len=10, decode_len=20)
    steps = gen.steps
    # steps 0..5 attend 11..16 tokens -> T = 16; steps 6..19 attend 17..30 -> T = 32
    assert list(steps["context"]) == [15] * 6 + [31] * 14
    groups = gen.groups()
    assert list(groups["context"]) == [15, 31] and list(groups["steps"]) == [6, 14]
    # each group's step time is one AD pass at that context, computed independently
    for context in (15, 31):
        expect = engine.run_pass(PassSpec("target", 1, context), board, model).seconds
        assert (steps.loc[steps["context"] == context, "step_s"] == expect).all()
    s = gen.summary
    assert s["decode_s"] == pytest.approx(steps["step_s"].sum(), rel=1e-12)
    assert s["decode_s"] == pytest.approx(groups["group_s"].sum(), rel=1e-12)
    assert s["total_s"] == pytest.approx(s["ttft_s"] + s["decode_s"], rel=1e-12)
    assert s["tpot_s"] == pytest.approx(s["decode_s"] / 20, rel=1e-12)
    assert s["decode_tokens_per_s"] == pytest.approx(20 / s["decode_s"], rel=1e-12)
    assert s["decode_steps"] == 20 and s["decode_contexts"] == 2 and s["sd_steps"] == 0
    assert steps["elapsed_s"].iloc[-1] == pytest.approx(s["total_s"], rel=1e-12)
    # the prefill: 10 tokens aligned to 128, at context 0
    assert s["prompt_len_aligned"] == 128
    [spec] = prefill_specs(board, 10)
    assert (spec.tokens, spec.context, spec.phase) == (128, 0, "prefill")
    assert s["ttft_s"] == engine.run_pass(PassSpec("target", 128, 0), board, model).seconds


@pytest.mark.slow
def test_prefill_is_causal(setup) -> None:
    analytic, board, model = setup
    [spec] = prefill_specs(board, 130)
    assert (spec.tokens, spec.context, spec.phase) == (256, 0, "prefill")
    causal = get_engine("event").run_pass(spec, board, model)
    # the study's accounting charges every row against every key (dense attention)
    dense = analytic.run_pass(PassSpec("target", 256, 0), board, model)
    n, h, i, layers = 256, model.hidden, model.intermediate, model.layers
    kv = model.kv_heads * model.head_dim
    linear = layers * (2 * n * h * h + 2 * n * kv * h + 3 * n * h * i) + n * h * model.vocab
    dense_attention = layers * 2 * n * n * h
    assert target_counts(model, n, 0, board)["macs"] - linear == dense_attention
    # the causal mask skips the attention tiles above the diagonal (at least half the work
    # is left: the diagonal tiles are whole); the weights are the same two streams
    assert dense_attention / 2 < causal.macs - linear < dense_attention
    assert causal.weight_bytes == dense.weight_bytes


def _constant_aat_curve(algorithm, aat: float):
    """Embedded curves with AAT replaced by a constant at x = 3..8 (x = 2 dropped)."""

    def curve_at(context: int):
        curve = embedded_curves(algorithm, [context])[0]
        pts = curve.points[(curve.points["verify_len"] >= 3) & (curve.points["verify_len"] <= 8)]
        pts = pts.assign(aat=aat).reset_index(drop=True)
        return dataclasses.replace(curve, points=pts)

    return curve_at


def test_sd_with_constant_aat(setup) -> None:
    engine, board, model = setup
    algorithm = load_algorithm("longspec")
    gen = generate(
        engine, board, model, prompt_len=125, decode_len=10, algorithm=algorithm,
        curve_at=_constant_aat_curve(algorithm, 2.5),
    )
    steps = gen.steps
    # g = 0, 2.5, 5, 7.5 (then 10 >= D): 4 steps; context = ceil16(125 + floor(g) + 1) - 1
    assert list(steps["generated_before"]) == [0.0, 2.5, 5.0, 7.5]
    assert list(steps["context"]) == [127, 127, 143, 143]
    assert (steps["aat"] == 2.5).all() and (steps["decision"] == "use SD").all()
    assert steps["verify_len"].between(3, 8).all()
    assert (steps["step_s"] == steps["verify_s"] + steps["draft_s"]).all()
    assert (steps["draft_s"] > 0).all()
    s = gen.summary
    assert s["decode_steps"] == 4 == math.ceil(10 / 2.5)
    assert s["decode_s"] == pytest.approx(steps["step_s"].sum(), rel=1e-12)
    assert s["tpot_s"] == pytest.approx(s["decode_s"] / 10, rel=1e-12)
    assert s["sd_steps"] == 4 and s["mean_aat"] == 2.5


@pytest.mark.slow
def test_sd_that_never_pays_is_plain_decoding(setup) -> None:
    engine, board, model = setup
    algorithm = load_algorithm("longspec")
    sd = generate(
        engine, board, model, prompt_len=40, decode_len=30, algorithm=algorithm,
        curve_at=_constant_aat_curve(algorithm, 1.0),
    )
    ad = generate(engine, board, model, prompt_len=40, decode_len=30)
    assert (sd.steps["decision"] == "use AD").all()
    cols = ["context", "verify_len", "aat", "step_s"]
    pd.testing.assert_frame_equal(sd.steps[cols], ad.steps[cols])
    assert sd.summary["decode_s"] == ad.summary["decode_s"]


class _Asking:
    """The analytic engine, recording every pass it is asked (keyed like the service)."""

    name, version = "asking", "1"

    def __init__(self) -> None:
        self.inner, self.asked = get_engine("analytic"), set()

    def run_pass(self, spec, board, model, drafter=None):
        self.asked.add(pass_key(spec, board, model, drafter))
        return self.inner.run_pass(spec, board, model, drafter)


class _AskingFast(FastEngine):
    """`fast`, recording every pass it times and every pass it bounds (keyed like the
    service)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked, self.bounded = set(), set()

    def run_pass_detail(self, spec, board, model, drafter=None):
        self.asked.add(pass_key(spec, board, model, drafter))
        return super().run_pass_detail(spec, board, model, drafter)

    def lower_bound_s(self, spec, board, model, drafter=None):
        self.bounded.add(pass_key(spec, board, model, drafter))
        return super().lower_bound_s(spec, board, model, drafter)


def _asked(board, model, prompt_len, decode_len, engine=None, **sd) -> tuple[set, set]:
    """(passes planned, passes `generate` asked its engine)."""
    engine = engine or _Asking()
    planned = planned_passes(engine, board, model, prompt_len, decode_len, **sd)
    generate(engine, board, model, prompt_len, decode_len, **sd)
    return {pass_key(*k) for k in planned}, engine.asked


@pytest.mark.slow
@pytest.mark.parametrize("prompt_len, decode_len", [(128, 40), (10, 20), (7, 1)])
def test_planned_passes_are_the_passes_asked(setup, prompt_len, decode_len) -> None:
    _, board, model = setup
    planned, asked = _asked(board, model, prompt_len, decode_len)
    assert planned == asked and len(asked) == 1 + len({
        decode_context(prompt_len, i, 16) for i in range(decode_len)})
    for algorithm in ("longspec", "eagle3"):
        sd = {"algorithm": load_algorithm(algorithm)}
        planned, asked = _asked(board, model, prompt_len, decode_len, **sd)
        assert planned == asked
    # `fast` bounds FlightLLM's passes: test_the_plan_on_flightllm_is_what_the_bounds_leave


def test_the_plan_on_flightllm_is_what_the_bounds_leave() -> None:
    board, model = load_board("flightllm-vhk158"), load_model("llama2-7b-flightllm")
    sd = {"algorithm": load_algorithm("longspec")}
    engine = _AskingFast()
    planned = planned_passes(engine, board, model, 128, 40, **sd)
    generate(engine, board, model, 128, 40, **sd)
    passes = {pass_key(*k) for k in planned}
    assert passes < engine.asked
    # beyond the plan, each context (40 tokens from P = 128: 3 contexts) times the few x
    # its floors and bounds leave (here one or two each), and their draft passes
    extra = {k[0].tokens for k in engine.asked - passes if k[0].kind == "target"}
    contexts = {k[0].context for k in planned if k[0].kind == "target"}
    verify = [k for k in engine.asked - passes if k[0].kind == "target"]
    assert len(contexts) - 1 == 3 and len(verify) <= 2 * 3 and extra
    assert len(engine.bounded) <= 2 * 3  # tighter bounds: only where a floor could not settle


def test_planned_passes_stop_where_a_step_may_jump_a_context(setup) -> None:
    _, board, model = setup
    algorithm = load_algorithm("longspec")
    # D = 40 after P = 10: contexts 15, 31, 47, 63 hold g = 0..5, 6..21, 22..37, 38..39.
    # AAT 16.5: a step advances floor(g) by up to 17 > 16 and may jump a whole context, so
    # the plan stops after the first (the run asks 15, 31, 47: g = 0, 16.5, 33). AAT 14.5:
    # at most 15, so 31 and 47 are sure, and 63 (2 tokens) may be jumped: the run
    # (g = 0, 14.5, 29) asks exactly the plan.
    for aat, contexts in ((16.5, [15]), (14.5, [15, 31, 47])):
        sd = {"algorithm": algorithm, "curve_at": _constant_aat_curve(algorithm, aat)}
        planned, asked = _asked(board, model, 10, 40, **sd)
        assert planned < asked if aat > 16 else planned == asked
        targets = {k[0].context for k in planned
                   if k[0].kind == "target" and k[0].context and k[0].tokens > 1}
        assert sorted(targets) == contexts
        # the AD baseline's passes: one token at every aligned context, all planned
        ad = {k[0].context for k in planned if k[0].kind == "target" and k[0].tokens == 1}
        assert sorted(ad) == [15, 31, 47, 63]


def test_model_window(setup) -> None:
    engine, board, model = setup
    small = model.model_copy(update={"window_tokens": 256})
    with pytest.raises(InputError, match="decode_len"):
        generate(engine, board, small, prompt_len=200, decode_len=57)  # 257 tokens
    generate(engine, board, small, prompt_len=200, decode_len=56)  # 256: fits
    with pytest.raises(InputError, match="prompt_len"):
        prefill_timing(engine, board, small, 257)
    prefill_timing(engine, board, small, 256)
    with pytest.raises(InputError, match="context"):
        simulate_point(engine, Point(board, small, 256, 1))
    simulate_point(engine, Point(board, small, 255, 1))


def test_simulate_prefill_cli(capsys) -> None:
    res = run_cli(capsys, "simulate", "-b", BOARD, "-m", MODEL, "--phase", "prefill",
                  "--prompt-len", "100", "--engine", "event", "--format", "json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["prompt_len_aligned"] == 128 and data["phase"] == "prefill"
    assert data["prefill_s"] == pytest.approx(data["prefill_cycles"] / 225e6, rel=1e-12)
    for unit in ("ld", "st", "mm", "misc"):
        assert data[f"busy_{unit}_cycles"] > 0
    assert data["busy_mv_cycles"] == 0  # a prefill runs on the MM array only
    assert data["busy_mm_cycles"] <= data["prefill_cycles"]


def test_simulate_decode_unchanged(capsys) -> None:
    res = run_cli(capsys, "simulate", "-b", BOARD, "-m", MODEL, "-L", "300", "-x", "4",
                  "--engine", "analytic", "--format", "json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    board, model = load_board(BOARD), load_model(MODEL)
    row = simulate_point(get_engine("analytic"), Point(board, model, 300, 4))
    assert data["verify_cycles"] == row["verify_cycles"]
    assert "phase" not in data


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["simulate", "--phase", "prefill"], "--prompt-len"),
        (["simulate", "--phase", "prefill", "--prompt-len", "0"], "--prompt-len"),
        (["simulate", "--phase", "prefill", "--prompt-len", "8", "-L", "4"], "--context"),
        (["simulate", "--phase", "prefill", "--prompt-len", "8", "-x", "4"], "--verify-len"),
        (["simulate", "--phase", "nope", "--prompt-len", "8"], "--phase"),
        (["simulate", "-L", "4", "--prompt-len", "8"], "--prompt-len"),
        (["generate", "-P", "8"], "--decode-len"),
        (["generate", "-P", "8", "-D", "0"], "--decode-len"),
        (["generate", "-P", "0", "-D", "4"], "--prompt-len"),
        (["generate", "-P", "8", "-D", "4", "--task", "qa"], "--aat-dir"),
        (["generate", "-P", "8", "-D", "4", "-a", "longspec", "--task", "qa"], "--task"),
        (["generate", "-P", "8", "-D", "4", "-o", "steps.txt"], "--out"),
    ],
)
def test_bad_input_one_line(capsys, args, needle) -> None:
    res = run_cli(capsys, *args[:1], "-b", BOARD, "-m", MODEL, *args[1:])
    assert res.code == 2
    assert needle in res.err and res.err.count("\n") == 1 and "Traceback" not in res.err


def test_generate_cli(capsys, tmp_path) -> None:
    out = tmp_path / "steps.csv"
    res = run_cli(capsys, "generate", "-b", BOARD, "-m", MODEL, "-P", "30", "-D", "40",
                  "--engine", "analytic", "--format", "json", "-o", str(out))
    assert res.code == 0, res.err
    data = json.loads(res.out)
    s = data["summary"]
    for key in ("ttft_s", "decode_s", "total_s", "decode_tokens_per_s", "tpot_s"):
        assert s[key] > 0
    # P + i + 1 = 31..32 -> T = 32, 33..48 -> 48, 49..64 -> 64, 65..70 -> 80
    assert [g["steps"] for g in data["contexts"]] == [2, 16, 16, 6]
    steps = pd.read_csv(out)
    assert len(steps) == 40 and steps["step_s"].sum() == pytest.approx(s["decode_s"])
    res = run_cli(capsys, "generate", "-b", BOARD, "-m", MODEL, "-P", "30", "-D", "8",
                  "-a", "longspec", "--engine", "analytic")
    assert res.code == 0, res.err
    assert "decode_tokens_per_s" in res.out and "use SD" in res.out


@pytest.mark.slow
def test_generate_workers_same_output(capsys) -> None:
    # the passes timed first on a pool of 2 (or 1: none) give the same bytes
    args = ["generate", "-b", BOARD, "-m", MODEL, "-P", "30", "-D", "40", "-a", "longspec",
            "--engine", "event", "--format", "json"]
    one = run_cli(capsys, *args, "--workers", "1")
    two = run_cli(capsys, *args, "--workers", "2")
    assert one.code == two.code == 0, one.err + two.err
    assert one.out == two.out


def test_model_window_cli(capsys, tmp_path) -> None:
    small = tmp_path / "small.yaml"
    text = resolve("model", MODEL).read_text()
    small.write_text(text.replace("window_tokens: 4096", "window_tokens: 256"))
    assert "window_tokens: 256" in small.read_text()
    for args, needle in (
        (["simulate", "--phase", "prefill", "-P", "256"], "--prompt-len"),  # fits
        (["simulate", "--phase", "prefill", "-P", "257"], "--prompt-len"),
        (["simulate", "-L", "256"], "--context"),  # 257 tokens attended
        (["generate", "-P", "200", "-D", "57"], "--decode-len"),  # 257 tokens
    ):
        res = run_cli(capsys, args[0], "-b", BOARD, "-m", str(small), *args[1:],
                      "--engine", "analytic", "--format", "json")
        if args[-1] == "256" and args[0] == "simulate" and "-P" in args:
            assert res.code == 0, res.err
            continue
        assert res.code == 2 and needle in res.err and "window is 256 tokens" in res.err, res.err
        assert res.err.count("\n") == 1


def test_a_board_the_design_refuses_is_named_by_its_file(capsys, tmp_path) -> None:
    # a board file whose override breaks the design's rules: the one-line error names the
    # file, not the board name, before any pass is compiled
    board = tmp_path / "bad.yaml"
    data = yaml.safe_load(resolve("board", "flightllm-vhk158").read_text())
    data.setdefault("overrides", {})["design.padding.decode_multiple"] = 8
    board.write_text(yaml.safe_dump(data))
    for args in (["generate", "-P", "128", "-D", "4"],
                 ["generate", "-P", "128", "-D", "4", "--workers", "1"],
                 ["simulate", "--phase", "prefill", "-P", "128"]):
        res = run_cli(capsys, args[0], "-b", str(board), "-m", "llama2-7b-flightllm", *args[1:])
        assert res.code == 2 and res.err.count("\n") == 1, res.err
        assert res.err.startswith(f"fpgasim: error: {board}: ")
        assert "decode_multiple = 8" in res.err and "multiple of block = 16" in res.err


def test_generate_puts_sd_beside_its_ad_baseline(setup) -> None:
    engine, board, model = setup
    ad = generate(engine, board, model, 30, 40)
    sd = generate(engine, board, model, 30, 40, algorithm=load_algorithm("longspec"))
    # the baseline is the plain run of the same tokens, step for step
    pd.testing.assert_frame_equal(sd.ad_steps, ad.steps)
    assert sd.summary["ad_decode_s"] == ad.summary["decode_s"]
    assert sd.summary["ad_total_s"] == ad.summary["total_s"]
    assert sd.summary["ad_decode_tokens_per_s"] == ad.summary["decode_tokens_per_s"]
    assert sd.summary["decode_speedup"] == pytest.approx(
        ad.summary["decode_s"] / sd.summary["decode_s"], rel=1e-12)
    assert sd.summary["total_speedup"] == pytest.approx(
        ad.summary["total_s"] / sd.summary["total_s"], rel=1e-12)
    assert ad.summary["decode_speedup"] == 1.0 and ad.summary["total_speedup"] == 1.0
    # no table holds llama2-chat-7b: the embedded model, and the summary says so
    assert sd.summary["aat_basis"] == "embedded"
    assert "no measured table holds longspec on llama2-chat-7b" in sd.summary["aat_note"]
    assert (sd.steps["aat_basis"] == "embedded").all() and (ad.steps["aat_basis"] == "").all()


@pytest.mark.slow
def test_generate_cli_shows_the_baseline_and_draws_the_run(capsys, tmp_path, monkeypatch) -> None:
    import fpgasim.figures.plots as plot_module
    from tests.figures.test_figures import assert_inside

    captured = {}
    real = plot_module.write_figure

    def keep(fig, path):
        assert_inside(fig, "generate --plot")  # before write_figure closes it
        captured["axes"] = [(a.get_xlabel(), a.get_ylabel(), a.get_title(),
                             [t.get_text() for t in a.get_legend().get_texts()])
                            for a in fig.axes]
        captured["title"] = fig.get_suptitle()
        real(fig, path)

    monkeypatch.setattr(plot_module, "write_figure", keep)
    png = tmp_path / "run.png"
    args = ["generate", "-b", BOARD, "-m", MODEL, "-P", "30", "-D", "40", "-a", "longspec",
            "--engine", "analytic"]
    res = run_cli(capsys, *args, "--plot", str(png))
    assert res.code == 0, res.err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote figure to {png}" in res.out
    assert "AD in" in res.out and "SD decodes 40 tokens in" in res.out
    (time_ax, step_ax) = captured["axes"]
    assert time_ax[:2] == ("time since the prompt arrived (s)", "tokens generated")
    assert any(t.startswith("AD: ") for t in time_ax[3])
    assert any(t.startswith("SD (longspec): ") for t in time_ax[3])
    assert step_ax[:2] == ("decode step", "tokens per step")
    assert [t.split(":")[0] for t in step_ax[3]] == ["x", "AAT(x)"]
    assert "longspec" in captured["title"] and "analytic engine" in captured["title"]
    res = run_cli(capsys, *args, "--format", "json")
    s = json.loads(res.out)["summary"]
    for key in ("ad_decode_s", "ad_total_s", "ad_decode_tokens_per_s", "decode_speedup",
                "total_speedup", "aat_basis", "aat_note"):
        assert key in s
    assert s["decode_speedup"] == pytest.approx(s["ad_decode_s"] / s["decode_s"], rel=1e-12)
    res = run_cli(capsys, *args, "--plot", str(tmp_path / "run.jpg"))
    assert res.code == 2 and "--plot" in res.err
