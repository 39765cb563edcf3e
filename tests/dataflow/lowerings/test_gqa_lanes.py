"""Grouped-query attention on MV lanes (docs/flightllm-sd.md, "GQA on MV lanes").

A KV head's g query heads read the same K and V, so on a design with L MV token lanes one
K/V chunk feeds ceil(t x g / L) MVs for the t tokens of a row group, each MV's lanes taking
any of the t x g query rows. Before, each query head took its own MV whatever the lanes,
so a 4-lane design decoded one token of Llama-3.1-8B (g = 4) with the 1-lane attention
slope. The MV counts here are counted from the emitted rows and compared with that closed
form; one lane and models without GQA keep their rows
(tests/dataflow/lowerings/test_one_compiler.py holds
the rows of a model without GQA to the cycle).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest

from fpgasim.config import load_model
from fpgasim.config.board_loader import board_of
from fpgasim.dataflow.lowerings.flightllm.attention import attention_mv
from fpgasim.dataflow.lowerings.flightllm.flightllm_emitter import MV, FlightLLMEmitter, Rates
from fpgasim.dataflow.lowerings.flightllm.layers import HwLayer
from fpgasim.engine.fast import FastEngine
from fpgasim.simulate import verify_timing


@cache
def engine() -> FastEngine:
    return FastEngine()


def mv_rows(lanes: int, tokens: int, group: int, keys: int, kv_heads: int = 8) -> int:
    """MV rows the compiler emits for one decode QK^T layer (head dim 128)."""
    board = board_of("vhk158", "flightllm", [("design.mv_lanes", lanes),
                                            ("design.mv_macs_per_lane", 1024)])
    e = FlightLLMEmitter(Rates.of(board).link_free)
    layer = HwLayer("attention_qk", "qk", tokens * group, 128, keys, misc=("softmax",),
                    heads=kv_heads, group=group)
    attention_mv(e, layer)
    return int(np.count_nonzero(e.rows()["unit"] == MV))


@pytest.mark.parametrize("lanes", [1, 2, 4])
@pytest.mark.parametrize("group", [1, 2, 4, 8])
@pytest.mark.parametrize("tokens", [1, 2, 3, 4, 5, 9])
def test_query_rows_share_the_lanes(lanes: int, group: int, tokens: int) -> None:
    """Per KV head and 512-key chunk, ceil(t x g / L) MVs for each row group of t tokens."""
    keys = 1024
    chunks = math.ceil(keys / 512)
    groups = [lanes] * (tokens // lanes) + ([tokens % lanes] if tokens % lanes else [])
    expect = 8 * chunks * sum(math.ceil(t * group / lanes) for t in groups)
    assert mv_rows(lanes, tokens, group, keys) == expect


def slope_us(fpga: str, design: str, model: str, x: int = 1) -> float:
    """T_v's growth per context token (microseconds), between contexts 1023 and 2047."""
    b, m = board_of(fpga, design), load_model(model)
    t = [verify_timing(engine(), b, m, x, context).seconds for context in (1023, 2047)]
    return (t[1] - t[0]) / 1024 * 1e6


@pytest.mark.parametrize("fpga", ["vhk158", "u280"])
def test_four_lanes_halve_the_gqa_attention_slope(fpga: str) -> None:
    """Llama-3.1-8B (g = 4) on 4 lanes: one MV per K/V chunk instead of four, so decode
    attention turns from MV-bound to load-bound (VHK158 1.10 -> 0.56 us per context token);
    before, the 4-lane slope equalled the 1-lane one."""
    one, four = (slope_us(fpga, d, "llama-3.1-8b") for d in ("flightllm", "flightllm-mv4"))
    assert four < 0.6 * one
    # LLaMA2-7B has no GQA: one query row per KV head, the same rows on any lanes
    assert (slope_us(fpga, "flightllm", "llama2-7b-flightllm")
            == slope_us(fpga, "flightllm-mv4", "llama2-7b-flightllm"))
