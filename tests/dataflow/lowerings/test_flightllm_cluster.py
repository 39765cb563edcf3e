"""FlightLLM's lowering over a cluster of cards (docs/multi-fpga.md): Megatron tensor
parallelism, its all-reduces and the refusals of what does not split."""

from __future__ import annotations

import pytest

from fpgasim.config.board_loader import BoardBase
from fpgasim.config.cluster import Cluster
from fpgasim.config.loader import load_model
from fpgasim.dataflow.lowerings.flightllm import lower, lower_fixed
from fpgasim.dataflow.lowerings.flightllm import pass_layers as _layers
from fpgasim.dataflow.lowerings.flightllm.flightllm_cluster import (
    COLLECTIVE,
    Pipelined,
    all_reduce,
    check_split,
    collective_totals,
    micro_batch_sizes,
    pass_schedule,
    schedule,
)
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine import get_engine
from fpgasim.errors import InputError
from fpgasim.simulate import verify_timing
from fpgasim.step import verify_spec
from tests.cli_helpers import run_cli

MODEL = "llama-3.1-8b"


def _board(cards: int = 1, hop_us: float = 0.25):
    base = BoardBase("flightllm-u280", None, None).build()
    return base if cards == 1 else base.with_cluster(Cluster(cards=cards,
                                                              hop_latency_s=hop_us * 1e-6))


def test_each_card_holds_its_share_and_two_all_reduces_per_layer() -> None:
    m = load_model(MODEL)
    one = _layers(PassSpec("target", 4, 1024), _board(), m)[0]
    four = _layers(PassSpec("target", 4, 1024), _board(4), m)[0]
    ops = [L for L in four if L.kind == COLLECTIVE]
    assert len(ops) == 2 * m.layers + 1  # o-proj, down-proj per layer, the LM head's argmax
    by_name = {L.name: L for L in one}
    split = {L.name: L for L in four if L.kind != COLLECTIVE}
    assert split["l0.q_proj"].n * 4 == by_name["l0.q_proj"].n
    assert split["l0.down_proj"].k * 4 == by_name["l0.down_proj"].k
    assert split["l0.qk"].heads * 4 == by_name["l0.qk"].heads


def test_all_reduce_follows_the_alpha_beta_formulas() -> None:
    c = Cluster(cards=8, hop_latency_s=1e-6)
    beta = 12.5e9
    big = all_reduce(1 << 20, c, beta, 8)  # a large message: the ring's fewer bytes win
    assert big.form == "ring" and big.steps == 14
    assert big.port_bytes == pytest.approx(7 / 8 * (1 << 20))
    assert big.seconds > 14 * 1e-6 + (1 << 20) * 7 / 8 / beta
    small = all_reduce(64, c, beta, 8)  # a tiny one: the gather's fewer steps win
    assert small.form == "gather" and small.steps == 4


@pytest.mark.slow
def test_cluster_is_faster_engines_agree_and_sync_grows_with_hop_latency() -> None:
    m = load_model(MODEL)
    fast, event = get_engine("fast"), get_engine("event")
    t1 = verify_timing(fast, _board(), m, 4, 1024).cycles
    t4 = verify_timing(fast, _board(4), m, 4, 1024)
    assert t4.cycles == verify_timing(event, _board(4), m, 4, 1024).cycles
    assert t4.cycles < t1 / 2
    slow = verify_timing(fast, _board(4, hop_us=2.0), m, 4, 1024).cycles
    hw = _layers(PassSpec("target", 4, 1024), _board(4), m)[0]
    hw_slow = _layers(PassSpec("target", 4, 1024), _board(4, hop_us=2.0), m)[0]
    extra_s = collective_totals(hw_slow)[0] - collective_totals(hw)[0]
    # collectives sit between barriers: every second of link latency lands on the pass
    assert (slow - t4.cycles) / 225e6 == pytest.approx(extra_s, rel=1e-6)


def test_splits_that_do_not_divide_are_refused() -> None:
    m = load_model(MODEL)
    with pytest.raises(InputError, match="kv_heads = 8"):
        check_split(Cluster(cards=16), m)
    with pytest.raises(InputError, match="heads = 32"):
        check_split(Cluster(cards=3), m)


@pytest.mark.parametrize("args, says", [
    (("--cards", "0"), "--cards = 0"),
    (("--cards", "3"), "--cards = 3"),
    (("--cards", "4", "--hop-latency-us", "-1"), "--hop-latency-us"),
])
def test_cli_refuses_in_one_line(capsys, args, says) -> None:
    r = run_cli(capsys, "simulate", "-b", "flightllm-u280", "-m", MODEL, "--context", "64",
                *args)
    assert r.code == 2 and says in r.err and len(r.err.strip().splitlines()) == 1


def test_cli_refuses_a_part_without_ports(capsys) -> None:
    r = run_cli(capsys, "simulate", "--fpga", "vhk158", "--design", "flightllm", "-m", MODEL,
                "--context", "64", "--cards", "2")
    assert r.code == 2 and "network.ports" in r.err


def test_rows_carry_the_cluster_and_per_card_memory() -> None:
    from fpgasim.simulate import Point, memory_bytes, simulate_point

    m = load_model(MODEL)
    fast = get_engine("fast")
    one = simulate_point(fast, Point(_board(), m, 256, 4, None, None, 1, 1))
    two = simulate_point(fast, Point(_board(2), m, 256, 4, None, None, 1, 1))
    assert (one["cards"], one["parallel"], one["sync_share"], one["link_busy_share"]) == (
        1, "none", 0.0, 0.0)
    assert (two["cards"], two["parallel"]) == (2, "tp")
    assert 0 < two["link_busy_share"] and 0 < two["sync_share"] < 1
    # the busiest card holds half the target (weights and KV cache)
    assert two["memory_bytes"] == pytest.approx(memory_bytes(_board(), m, 256, 4) / 2, rel=1e-6)
    # the cluster's power: both cards' static power at least
    assert two["static_w"] == pytest.approx(2 * one["static_w"])


def test_the_analytic_accounting_refuses_a_cluster() -> None:
    with pytest.raises(InputError, match="event or fast"):
        verify_timing(get_engine("analytic"), _board(2), load_model(MODEL), 1, 64)


def test_a_pipeline_is_one_card_plus_its_hops() -> None:
    m = load_model(MODEL)
    fast = get_engine("fast")
    pp = _board(1).with_cluster(Cluster(cards=4, parallel="pp"))
    one = verify_timing(fast, _board(), m, 4, 256).cycles
    four = verify_timing(fast, pp, m, 4, 256).cycles
    hw = _layers(PassSpec("target", 4, 256), pp, m)[0]
    hops = [L for L in hw if L.kind == COLLECTIVE]
    assert len(hops) == 3 and all(h.form == "p2p" for h in hops)
    # each hop adds its LD, link and ST between two barriers, nothing else changes
    assert four > one + sum(h.seconds for h in hops) * 225e6
    assert four < one * 1.01


@pytest.mark.parametrize("args, says", [
    (("--cards", "4", "--parallel", "tp-pp"), "--parallel = 'tp-pp'"),
    (("--cards", "4", "--parallel", "tp-pp", "--tp-cards", "3"), "--tp-cards = 3: a divisor of "
     "--cards 4: 1, 2, 4"),
    (("--cards", "4", "--parallel", "tp-pp", "--tp-cards", "0"), "--tp-cards = 0"),
    (("--cards", "4", "--parallel", "tp", "--tp-cards", "2"), "--tp-cards = 2: only with"),
    (("--cards", "16", "--parallel", "tp-pp", "--tp-cards", "16"), "kv_heads = 8"),
    (("--cards", "4", "--parallel", "pp", "--micro-batches", "2"), "--micro-batches = 2: "
     "between 1 and --batch 1"),
    (("--cards", "4", "--parallel", "pp", "--micro-batches", "5", "-B", "4"),
     "--micro-batches = 5"),
    (("--cards", "4", "--parallel", "pp", "--micro-batches", "0"), "--micro-batches = 0"),
    (("--cards", "4", "--parallel", "pp", "--micro-batches", "3", "-B", "2"),
     "--micro-batches = 3: between 1 and --batch 2"),
    (("--cards", "4", "--parallel", "tp", "--micro-batches", "2", "-B", "2"),
     "--micro-batches = 2: 1 without pipeline stages"),
    (("--cards", "8", "--parallel", "tp-pp", "--tp-cards", "3"), "--tp-cards = 3"),
])
def test_cli_refuses_bad_pipelines_in_one_line(capsys, args, says) -> None:
    r = run_cli(capsys, "simulate", "-b", "flightllm-u280", "-m", MODEL, "--context", "64",
                *args)
    assert r.code == 2 and says in r.err and len(r.err.strip().splitlines()) == 1, r.err


def test_a_stage_split_that_does_not_divide_the_heads_is_refused(capsys) -> None:
    # 6 cards as 2 stages of 3: Llama-3.1-8B's 32 heads do not split over 3 cards
    r = run_cli(capsys, "simulate", "-b", "flightllm-u280", "-m", MODEL, "--context", "64",
                "--cards", "6", "--parallel", "tp-pp", "--tp-cards", "3")
    assert r.code == 2 and "heads = 32" in r.err and len(r.err.strip().splitlines()) == 1


def test_the_schedule_leaves_the_gpipe_bubble() -> None:
    # equal stages, free hops: the bubble is (p-1)/(m+p-1), the pass (m+p-1) stage times
    for p, m in ((2, 1), (4, 1), (4, 4), (4, 8), (8, 3)):
        zeros = [[0.0] * p] * m
        sched = schedule([[0] * p] * m, [[10] * p] * m, zeros, zeros)
        assert sched.makespan_ticks == (m + p - 1) * 10
        assert sched.bubble_share == pytest.approx((p - 1) / (m + p - 1), abs=1e-15)
        assert sched.busy_ticks == (m * 10,) * p


def test_a_hop_holds_both_cards() -> None:
    # 2 stages, 2 micro-batches, stage times 10, hops 3, one second of sync per hop slot:
    # mb0: card0 0-10, hop 10-13, card1 13-23; mb1: card0 13-23 (busy sending until 13),
    # hop 23-26, card1 26-36
    sched = schedule([[0, 3], [0, 3]], [[10, 10], [10, 10]], [[0.0, 1.0], [0.0, 1.0]],
                     [[0.0, 0.0], [0.0, 0.0]])
    assert sched.makespan_ticks == 36
    assert sched.busy_ticks == (26, 26)
    assert sched.sync_s == 2.0  # both hops lie on the critical path


def test_micro_batches_cut_the_batch_evenly() -> None:
    assert micro_batch_sizes(5, 2) == (3, 2)
    assert micro_batch_sizes(8, 4) == (2, 2, 2, 2)
    assert Cluster(cards=4, parallel="pp").micro_batches_of(8) == 4
    assert Cluster(cards=4, parallel="pp").micro_batches_of(2) == 2
    assert Cluster(cards=4, parallel="tp").micro_batches_of(8) == 1
    assert Cluster(cards=8, parallel="tp-pp", tp=4).micro_batches_of(8) == 2
    # at most one a request: a batch-1 pass of a run at --micro-batches 8 is one micro-batch
    assert Cluster(cards=4, parallel="pp", micro_batches=8).micro_batches_of(1) == 1


def test_a_pipeline_of_one_micro_batch_is_the_serial_sum() -> None:
    m = load_model(MODEL)
    fast = get_engine("fast")
    pp = _board(1).with_cluster(Cluster(cards=4, parallel="pp"))
    prog = lower(PassSpec("target", 4, 256), pp, m)
    assert isinstance(prog, Pipelined) and prog.micro_batches == 1
    # the schedule of one micro-batch is every part in order, as before micro-batches
    assert fast.executable_ticks(prog) == fast._parts_ticks(prog)
    # and today's number (before micro-batches were lowered, commit de1d122)
    assert verify_timing(fast, pp, m, 4, 256).cycles == 33289704.00754881


@pytest.mark.slow
def test_micro_batches_overlap_the_stages_on_both_engines() -> None:
    m = load_model(MODEL)
    fast, event = get_engine("fast"), get_engine("event")
    one = _board(1).with_cluster(Cluster(cards=4, parallel="pp", micro_batches=1))
    four = _board(1).with_cluster(Cluster(cards=4, parallel="pp"))  # m = min(4, 4)
    spec = verify_spec(2, 128, batch=4)
    serial = fast.run_pass(spec, one, m)
    piped = fast.run_pass(spec, four, m)
    assert piped.cycles == event.run_pass(spec, four, m).cycles
    assert piped.cycles < serial.cycles / 1.5
    # every micro-batch streams its stage's weights: the work is the serial pass's or more
    assert piped.weight_bytes >= serial.weight_bytes
    sched = pass_schedule(spec, four, m, fast)
    assert 0 < sched.bubble_share < pass_schedule(spec, one, m, fast).bubble_share
    # a unit's busy time is summed over the 4 stage cards, its utilisation over theirs
    units = {r["resource"]: r for r in fast.run_pass_detail(spec, four, m)[1]}
    assert units["LD"]["utilisation"] == pytest.approx(
        units["LD"]["busy_cycles"] / (4 * piped.cycles))
    assert all(0 <= r["utilisation"] <= 1 for r in units.values())
    # no sum of parts bounds overlapping stages: no bound is given
    assert lower_fixed(spec, four, m) is None
    assert fast.lower_bound_s(spec, four, m) == 0.0


def test_tp_pp_at_its_ends_is_tp_or_pp() -> None:
    m = load_model(MODEL)
    fast = get_engine("fast")
    spec = PassSpec("target", 2, 128)

    def cycles(**kw) -> float:
        return fast.run_pass(spec, _board(1).with_cluster(Cluster(cards=4, **kw)), m).cycles

    assert cycles(parallel="tp-pp", tp=4) == cycles(parallel="tp")
    assert cycles(parallel="tp-pp", tp=1) == cycles(parallel="pp")
    mid = Cluster(cards=4, parallel="tp-pp", tp=2)
    assert (mid.tp_cards, mid.pp_stages) == (2, 2)
    hw = _layers(spec, _board(1).with_cluster(mid), m)[0]
    assert sum(1 for L in hw if L.kind == COLLECTIVE and L.form == "p2p") == 1
    assert cycles(parallel="tp") < cycles(parallel="tp-pp", tp=2) < cycles(parallel="pp")


def test_a_cluster_pass_is_not_bounded_by_one_cards_parts() -> None:
    # one card's fixed parts were kept under the part's rates alone, so a cluster's pass
    # asked after them was "bounded" by the whole card's time (3.5x its own)
    m = load_model(MODEL)
    fast = get_engine("fast")
    spec = verify_spec(8, 1024)
    fast.lower_bound_s(spec, _board(), m)
    assert fast.lower_bound_s(spec, _board(4), m) <= fast.run_pass(spec, _board(4), m).seconds
