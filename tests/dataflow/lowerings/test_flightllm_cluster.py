"""FlightLLM's lowering over a cluster of cards (docs/multi-fpga.md): Megatron tensor
parallelism, its all-reduces and the refusals of what does not split."""

from __future__ import annotations

import pytest

from fpgasim.config.board_loader import BoardBase
from fpgasim.config.cluster import Cluster
from fpgasim.config.loader import load_model
from fpgasim.dataflow.lowerings.flightllm import _layers
from fpgasim.dataflow.lowerings.flightllm.flightllm_cluster import (
    COLLECTIVE,
    all_reduce,
    check_split,
    collective_totals,
)
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine import get_engine
from fpgasim.errors import InputError
from fpgasim.simulate import verify_timing
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


def test_cli_refuses_tp_pp_without_cards_per_stage(capsys) -> None:
    r = run_cli(capsys, "simulate", "-b", "flightllm-u280", "-m", MODEL, "--context", "64",
                "--cards", "4", "--parallel", "tp-pp")
    assert r.code == 2 and "--parallel" in r.err
