"""FlightLLM's lowering against the rules of docs/flightllm-model.md (§2-5, §4.9), per layer.

Counts and byte sizes are checked against numbers the digest states or that follow from its
rules by hand; durations against section 2.3's formulas computed here independently.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fpgasim.config import load_board, load_model
from fpgasim.dataflow.instructions import (
    TRAFFIC_KV,
    TRAFFIC_NONE,
    TRAFFIC_WEIGHT,
    Executable,
    full,
)
from fpgasim.dataflow.lowerings.flightllm import TICKS_PER_CYCLE
from fpgasim.dataflow.lowerings.flightllm.compiler import LD, MISC, MM, MV, ST, SYS, resolve
from fpgasim.dataflow.lowerings.flightllm.masks import load as load_masks
from fpgasim.dataflow.lowerings.registry import lower
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.analytic import AnalyticEngine
from fpgasim.engine.event import EventEngine
from fpgasim.engine.fast import FastEngine
from fpgasim.errors import ConfigError, InputError
from fpgasim.simulate import check_window

BOARD = load_board("flightllm-vhk158")
MODEL = load_model("llama2-7b-flightllm")
F_HZ = 225e6
BW_CH = 819.2 * 2**30 / 32  # B/s per HBM channel (section 1)


def decode(T: int, board=BOARD, model=MODEL) -> Executable:
    return lower(PassSpec("target", 1, T - 1), board, model)


def prefill(L: int, board=BOARD, model=MODEL) -> Executable:
    return lower(PassSpec("target", L, 0, phase="prefill"), board, model)


def layer_rows(seg: Executable, name: str) -> np.ndarray:
    """Rows of the hardware layer whose (unprefixed) op name is `name` (first occurrence),
    its repeated blocks (heads, row groups) expanded."""
    for part in seg.parts:
        if name in part.op_names:
            ins = full(part).instrs
            return ins[(ins["op"] == part.op_names.index(name)) & (ins["unit"] != SYS)]
    raise KeyError(name)


def count(rows: np.ndarray, unit: int) -> int:
    return int((rows["unit"] == unit).sum())


def mv_k(rows: np.ndarray) -> list[int]:
    """K (in 16-blocks) of each MV, from its charged MACs (16 K x 512)."""
    return (rows["work"][rows["unit"] == MV] // (16 * 512)).tolist()


def cycles(x: float) -> int:
    return int(np.rint(x * TICKS_PER_CYCLE))


# --------------------------------------------------------------------------- layer counts


def test_decode_has_13_hardware_layers_per_decoder_layer() -> None:
    seg = decode(144)
    sys_rows = sum(count(seg.parts[k].instrs, SYS) for k in seg.order)
    assert sys_rows == 32 * 13 + 2 == 418
    assert seg.rows > 90_000  # "about 100k instructions"


def test_prefill_has_11_hardware_layers_per_decoder_layer() -> None:
    seg = prefill(128)
    assert sum(count(seg.parts[k].instrs, SYS) for k in seg.order) == 32 * 11 + 2 == 354


def test_q_proj_with_rope() -> None:
    rows = layer_rows(decode(144), "q_proj")
    ld = rows[rows["unit"] == LD]
    weights = ld[ld["traffic"] == TRAFFIC_WEIGHT]
    assert mv_k(rows) == [128] * 16  # 8 groups x 2 K chunks
    # the instructions carry 131,072 int8 operand bytes (§4.2); the loads move them as int4
    # at the sparse ratio 0.7 (docs/hardware.md, "One weight size"), to the whole byte
    assert (weights["nbytes"] == round(131072 * 0.7 / 2)).sum() == 128
    assert (weights["nbytes"] == 4 * 4096).sum() == 1  # int32 bias, same channel
    assert (ld["nbytes"] == 512).sum() == 8 * 16  # 16 eltwise LDs of 512 B per group
    assert ld["nbytes"][0] == 4096  # the input vector
    misc = rows[rows["unit"] == MISC]
    assert len(misc) == 8 * 3 and (misc["work"] == 16 * 32).all()  # 3 MISC, K = 32
    assert rows[rows["unit"] == ST]["nbytes"].tolist() == [4096]


def test_v_gate_up_down_lm_head() -> None:
    seg = decode(144)
    v = layer_rows(seg, "v_proj")
    assert mv_k(v) == [128] * 16 and count(v, MISC) == 0 and count(v, LD) == 1 + 1 + 128
    gate = layer_rows(seg, "gate_proj")
    assert mv_k(gate) == [128] * 44  # N padded to 11264: 22 groups
    assert count(gate, MISC) == 22 and gate[gate["unit"] == ST]["nbytes"].tolist() == [11008]
    up = layer_rows(seg, "up_proj")
    assert mv_k(up) == [128] * 44 and count(up, MISC) == 22
    assert (up["nbytes"][up["unit"] == LD] == 512).sum() == 22 * 8
    down = layer_rows(seg, "down_proj")
    assert mv_k(down) == ([114] * 6 + [4]) * 8  # 8 groups x 7 chunks
    ld = down[down["unit"] == LD]
    assert ld["nbytes"][0] == 11008
    assert (ld["nbytes"] == 116736 // 2).sum() == 8 * 6 * 8  # int8 operand bytes moved as int4
    assert (ld["nbytes"] == 4096 // 2).sum() == 8 * 8
    head = layer_rows(seg, "lm_head")
    assert mv_k(head) == [128] * 126  # 63 groups (N padded to 32256) x 2
    assert head[head["unit"] == ST]["nbytes"].tolist() == [32000]
    assert count(head, LD) == 1 + 126 * 8  # no bias


def test_norm_and_concat() -> None:
    seg = decode(144)
    norm = layer_rows(seg, "input_norm")
    assert norm["unit"].tolist() == [LD, MISC, ST]
    assert norm["nbytes"].tolist() == [4096, 0, 4096]
    cat = layer_rows(seg, "concat_k")
    assert cat["unit"].tolist() == [LD] * 8 + [ST]
    assert cat["nbytes"].tolist() == [512 * 143] * 8 + [0]
    assert (cat["wait"][-1] < 0).all()  # the 0-byte store waits on nothing


@pytest.mark.parametrize("T", [144, 528, 1024, 2048])
def test_decode_attention(T: int) -> None:
    seg = decode(T)
    qk = layer_rows(seg, "qk")
    nb = T // 16
    n_mv = math.ceil(nb / 32)
    assert count(qk, MV) == 32 * n_mv
    assert (qk["work"][qk["unit"] == MV] == 16 * 8 * 512).all()  # K = 8 (head dim 128)
    kv = qk[(qk["unit"] == LD)][1:]
    keys_read = int(kv["nbytes"].sum()) // (32 * 128)
    padded = T if T < 512 else n_mv * 512  # the K-cache read is padded to 512 from T = 512
    assert keys_read == padded
    misc = qk[qk["unit"] == MISC]
    assert len(misc) == 32 and (misc["work"] == 16 * (T // 16) * 2).all()  # softmax, 2 passes
    assert qk[qk["unit"] == ST]["nbytes"].tolist() == [32 * T]
    pv = layer_rows(seg, "pv")
    assert mv_k(pv) == [T // 16] * 32
    ld = pv[pv["unit"] == LD]
    assert ld["nbytes"][0] == 32 * T and (ld["nbytes"][1:] == 16 * T).all()
    assert len(ld) == 1 + 32 * 8
    assert pv[pv["unit"] == ST]["nbytes"].tolist() == [4096]


# --------------------------------------------------------------------------- prefill


@pytest.mark.slow
@pytest.mark.parametrize("L", [128, 512])
def test_prefill_attention_counts_follow_the_mask_sums(L: int) -> None:
    seg = prefill(L)
    masks = load_masks("flightllm-llama2-7b")
    n, nt = L // 64, L // 128
    for layer in (0, 31):
        m = masks.layers[layer]
        sum_s = sum(m.S[:n])
        sum_v = sum(m.V[:nt])
        part = seg.parts[seg.order[11 * layer + 4]]  # norm, q, k, v, qk, pv, ...
        qk = part.instrs[part.instrs["op"] == part.op_names.index("qk")]
        ld = qk[qk["unit"] == LD]
        assert (ld["nbytes"] == 2048).sum() == 256 * nt + 4 * sum_v  # Q and K-block loads
        assert count(qk, MM) == 4 * sum_v
        misc = qk[qk["unit"] == MISC]
        assert len(misc) == 4096 * nt
        assert int(misc["work"].sum()) == 2 * 16 * 256 * sum_s  # K sums to 256 S, 2 passes
        st = qk[qk["unit"] == ST]
        assert len(st) == 256 * nt and int(st["nbytes"].sum()) == 4096 * sum_s
        pv = seg.parts[seg.order[11 * layer + 5]]
        pv = pv.instrs[pv.instrs["op"] == pv.op_names.index("pv")]
        ld = pv[pv["unit"] == LD]
        v_loads = ld[ld["traffic"] == TRAFFIC_KV]
        assert len(v_loads) == 256 * nt and (v_loads["nbytes"] == 256 * L // 16).all()
        assert len(ld) == 4 * m.c_of(n) + 256 * nt
        zero = ld[ld["traffic"] == TRAFFIC_NONE]
        active = int(ld["nbytes"].sum()) - int(zero["nbytes"].sum()) - 256 * nt * 256 * L // 16
        assert active == 4096 * sum_s
        assert int(zero["nbytes"].sum()) == 4096 * (32 * n * n - sum_s)
        assert count(pv, MM) == 256 * nt
        assert (pv["work"][pv["unit"] == MM] == 128 * 16 * (L // 16) * 16).all()
        assert (pv[pv["unit"] == ST]["nbytes"] == 2048).sum() == 256 * nt


def test_prefill_linear_mm() -> None:
    seg = prefill(256)
    q = layer_rows(seg, "q_proj")
    nb, tiles = 256, 2
    assert count(q, MM) == tiles * nb  # Kb = 256: one K piece
    w = q[(q["unit"] == LD) & (q["traffic"] == TRAFFIC_WEIGHT)]
    # re-streamed per 128-row tile: 256 x 256 int8 operand bytes, moved as int4 at 0.7
    assert (w["nbytes"] == round(256 * 256 * 0.7 / 2)).sum() == tiles * nb
    assert w["nbytes"][0] == 4 * 4096  # the bias LD is the first instruction
    misc = q[q["unit"] == MISC]
    assert len(misc) == tiles * nb * 3 and (misc["work"] == 16 * 8).all()  # K = m = 8
    st = q[q["unit"] == ST]
    assert len(st) == tiles * nb * 8
    assert (st["nbytes"] == 16).sum() == nb  # the last M block's store moves 16 B (7.9)
    down = layer_rows(seg, "down_proj")
    ks = (down["work"][down["unit"] == MM] // (128 * 16 * 16)).tolist()
    assert ks == [229, 229, 229, 1] * (256 * tiles)
    norm = layer_rows(seg, "input_norm")
    assert norm["unit"].tolist() == [LD, MISC, ST] * 256


# --------------------------------------------------------------------------- durations


def test_durations_follow_section_2_3() -> None:
    q = layer_rows(decode(144), "q_proj")
    ld = q[q["unit"] == LD]
    # input vector: 4096 B cross-channel at 0.35, parallel 1, ratio 1
    assert ld["cycles"][0] == cycles(4096 * F_HZ / (BW_CH * 0.35))
    # weights: 131072 B, 8 channels at 0.7, bandwidth_ratio 2 / 0.7 (int4-timed, sparse 0.7)
    w = ld[ld["nbytes"] == round(131072 * 0.7 / 2)][0]  # moving 131072 operand bytes
    assert w["cycles"] == cycles(131072 * F_HZ / (BW_CH * 0.7 * (2 / 0.7) * 8))
    mv = q[q["unit"] == MV][0]
    assert mv["cycles"] == cycles(8 * 128 * 0.7)  # 8 K cycles x sparse ratio
    assert (q[q["unit"] == MISC]["cycles"] == cycles(32)).all()  # K = 32 at 16/cycle
    assert q[q["unit"] == ST]["cycles"][0] == cycles(4096 * F_HZ / (BW_CH * 0.7))
    norm = layer_rows(decode(144), "input_norm")
    assert norm["cycles"][1] == cycles(2 * 256)  # RMSnorm: 2 K
    v = layer_rows(decode(144), "v_proj")
    assert v[v["unit"] == MV]["cycles"][0] == cycles(8 * 128)  # dense
    pv = layer_rows(prefill(256), "pv")
    zero = pv[(pv["unit"] == LD) & (pv["traffic"] == TRAFFIC_NONE)][0]
    assert zero["cycles"] == cycles(zero["nbytes"] / 2048)  # 256 B/cycle x 8 channels
    part = next(p for p in decode(144).parts if "input_norm" in p.op_names)
    assert part.instrs["cycles"][-1] == cycles(1)  # SYS


def test_pass_time_is_the_critical_path_in_seconds() -> None:
    """Hand check of a norm layer: LD -> MISC -> ST -> SYS, then / 3.2."""
    seg = decode(144)
    part = next(p for p in seg.parts if p.op_names == ("input_norm",))
    t = FastEngine().part_ticks(part)
    expect = 4096 * F_HZ / (BW_CH * 0.7) * 2 + 512 + 1
    assert t == sum(cycles(x) for x in (4096 * F_HZ / (BW_CH * 0.7), 512,
                                        4096 * F_HZ / (BW_CH * 0.7), 1))
    assert abs(t / TICKS_PER_CYCLE - expect) < 1e-6


# --------------------------------------------------------------------------- scheduling


def test_tokens_pair_first_in_first_out() -> None:
    unit = np.array([LD, LD, MV, MV, LD])
    wait = np.array([0, 0, 1 << LD, 1 << LD, 1 << MV])
    rel = np.array([1 << MV, 1 << MV, 1 << LD, 0, 0])
    deps = resolve(unit, wait, rel)
    assert deps[2, 0] == 0 and deps[3, 0] == 1 and deps[4, 0] == 2
    with pytest.raises(AssertionError, match="unbalanced"):
        resolve(unit, wait, np.array([1 << MV, 0, 1 << LD, 0, 0]))


def test_parts_chain_through_sys_barriers() -> None:
    seg = decode(144)
    whole = seg.concatenate()
    ins = whole.instrs
    sys_rows = np.flatnonzero(ins["unit"] == SYS)
    starts = [0] + list(np.cumsum([len(seg.parts[k].instrs) for k in seg.order])[:-1])
    for s in starts[1:5]:
        assert s - 1 in sys_rows and s - 1 in ins["wait"][s]


@pytest.mark.parametrize("T", [16, 144])
def test_event_equals_fast_and_parts_equal_the_whole(T: int) -> None:
    spec = PassSpec("target", 1, T - 1)
    event = EventEngine().run_pass(spec, BOARD, MODEL)
    full = FastEngine(window=False).run_pass(spec, BOARD, MODEL)
    parts = FastEngine(window=True).run_pass(spec, BOARD, MODEL)
    assert event.cycles == full.cycles == parts.cycles
    assert event.unit_busy_cycles == full.unit_busy_cycles
    whole = FastEngine().simulate(decode(T).concatenate())
    assert whole.makespan / TICKS_PER_CYCLE == full.cycles


def test_prefill_event_equals_fast_on_one_layer_type() -> None:
    seg = prefill(128)
    part = next(p for p in seg.parts if "qk" in p.op_names)
    assert EventEngine().part_ticks(part) == FastEngine().part_ticks(part)


# --------------------------------------------------------------------------- board fields


def _busy(board, T: int = 144, phase: str = "decode") -> dict:
    spec = PassSpec("target", 1, T - 1) if phase == "decode" else PassSpec(
        "target", T, 0, phase="prefill")
    t = FastEngine(window=True).run_pass(spec, board, MODEL)
    secs = {k: v / (t.clock_hz * t.duration_divisor) for k, v in t.unit_busy_cycles.items()}
    return {"total": t.seconds, **secs}


def _with(*changes: tuple[str, object]):
    """FlightLLM's VHK158 board with data-sheet or design fields changed (re-fitted)."""
    return load_board("flightllm-vhk158", list(changes))


def test_board_fields_change_results_as_the_formulas_say() -> None:
    base = _busy(BOARD)
    mv2 = _busy(_with(("design.mv_macs_per_lane", 2048)))
    assert mv2["MV"] == pytest.approx(base["MV"] / 2, rel=1e-9)
    assert mv2["LD"] == base["LD"]
    sfu = _busy(_with(("design.sfu.elements_per_cycle", 32)))
    assert sfu["MISC"] == pytest.approx(base["MISC"] / 2, rel=1e-9)
    bw = _busy(_with(("fpga.memory.bandwidth_gb_s", 2 * 819.2)))
    assert bw["LD"] == pytest.approx(base["LD"] / 2, rel=1e-9)
    assert bw["ST"] == pytest.approx(base["ST"] / 2, rel=1e-9)
    assert bw["MV"] == base["MV"]
    clk = _busy(_with(("design.clock_mhz", 450)))  # compute, MISC, SYS halve; LD/ST do not
    for unit in ("MV", "MISC", "SYS"):
        assert clk[unit] == pytest.approx(base[unit] / 2, rel=1e-9)
    for unit in ("LD", "ST"):
        assert clk[unit] == pytest.approx(base[unit], rel=1e-9)
    # half the channels at half the bandwidth: every channel's rate is the same, but they
    # feed 16 / 10 = 1.6 pipelines instead of 3.2, so every duration is divided by half as
    # much (the fitted divisor, docs/hardware.md)
    half = _with(("fpga.memory.channels", 16), ("fpga.memory.bandwidth_gb_s", 409.6))
    assert (half.duration_divisor, BOARD.duration_divisor) == (1.6, 3.2)
    div = _busy(half)
    assert div["total"] == pytest.approx(2 * base["total"], rel=1e-12)


def test_clock_moves_zero_fill_but_not_prefill_loads() -> None:
    base = _busy(BOARD, 128, "prefill")
    clk = _busy(_with(("design.clock_mhz", 450)), 128, "prefill")
    assert clk["MM"] == pytest.approx(base["MM"] / 2, rel=1e-9)
    assert base["LD"] / 2 < clk["LD"] < base["LD"]  # only the zero-fill part halves


@pytest.mark.parametrize("name", ["vhk158", "flightllm-vhk158"])
def test_seconds_are_cycles_over_clock_times_the_fitted_divisor(name: str) -> None:
    """The study's one-pipeline design divides by 1, FlightLLM's per-SLR one by 3.2."""
    board = load_board(name)
    t = FastEngine().run_pass(PassSpec("target", 1, 1024), board, MODEL)
    assert t.duration_divisor == board.fit.pipelines == {"vhk158": 1.0}.get(name, 3.2)
    assert t.seconds == pytest.approx(t.cycles / (225e6 * t.duration_divisor), rel=1e-12)


# --------------------------------------------------------------------------- bad input


def test_bad_inputs_name_the_field() -> None:
    with pytest.raises(ConfigError, match="buffers.meta = 8: at least 16"):
        decode(144, board=_with(("design.buffers.meta", 8)))
    with pytest.raises(ConfigError, match="buffers.a = 64: too small for one K=128 tile"):
        decode(144, board=_with(("design.buffers.a", 64)))  # QK^T's K = 128 tile
    odd = MODEL.model_copy(update={"intermediate": 11000})
    with pytest.raises(ConfigError, match="intermediate = 11000: a multiple of 16"):
        decode(144, model=odd)
    # a context past the model's window is refused before lowering (every command checks)
    with pytest.raises(InputError, match="at most 4095: llama2-7b-flightllm's window"):
        check_window(MODEL, 4096, 1)
    check_window(MODEL, 4095, 1)
    # the study's accounting runs on FlightLLM's board too (the analytic engine: any board)
    assert AnalyticEngine().run_pass(PassSpec("target", 1, 143), BOARD, MODEL).cycles > 0


def test_one_layer_graph_matches_the_full_graph() -> None:
    from dataclasses import replace

    from fpgasim.dataflow.lowerings.flightllm import hardware_layers_of
    from fpgasim.dataflow.lowerings.flightllm.flightllm_graph import GraphParams, build_graph
    from fpgasim.dataflow.lowerings.flightllm.layers import hardware_layers

    params = GraphParams.of(BOARD)
    for phase, rows, ctx in (("decode", 1, 144), ("prefill", 256, 256)):
        graph = build_graph(MODEL, params, rows, ctx, phase)
        every = hardware_layers(graph, prefill=phase == "prefill")
        assert [x.key() for x in hardware_layers_of(MODEL, params, phase, rows, ctx)] == [
            x.key() for x in every]
        per = 13 if phase == "decode" else 11
        assert len(every) == per * 32 + 2
        assert every[1] == replace(every[per + 1], name=every[1].name)


@pytest.mark.slow
def test_mask_tables_are_validated_and_causal_is_the_default() -> None:
    from fpgasim.config.loader import validate_mapping
    from fpgasim.config.schema import MaskTable
    from fpgasim.dataflow.lowerings.flightllm.masks import causal

    with pytest.raises(ConfigError, match="S has 4 rows"):
        validate_mapping(MaskTable, {"mask_block": 64, "heads": 2,
                                     "layers": [{"S": [2, 4, 6, 8], "V": [4], "C": [6, 14]}]},
                         "t.yaml")
    m = causal(32, 4, 64).layers[0]
    assert m.S == (32, 64, 96, 128) and m.V == (64, 128) and m.C == (96, 224)
    plain = load_model("llama2-chat-7b")  # no flightllm block: int8, dense, causal masks
    seg = prefill(128, model=plain)
    qk = layer_rows(seg, "qk")
    assert count(qk, MM) == 4 * 64  # causal: 2 rows x 32 heads active blocks in tile 0


@pytest.mark.slow
def test_trace_of_a_flightllm_pass_is_in_microseconds() -> None:
    engine = FastEngine()
    trace = engine.trace_events(PassSpec("target", 1, 143), BOARD, MODEL)
    spans = [e["ts"] + e["dur"] for e in trace["traceEvents"] if e.get("ph") == "X"]
    seconds = engine.run_pass(PassSpec("target", 1, 143), BOARD, MODEL).seconds
    assert max(spans) == pytest.approx(seconds * 1e6, rel=1e-9)


def _profiler(unit, cyc, wait, rel, divisor: float) -> float:
    """docs/flightllm-model.md §3, literally: FIFOs of release times per (producer, consumer);
    run the ready head with the earliest start (ties: unit order); total = last end."""
    queues = [list(np.flatnonzero(unit == u)) for u in range(6)]
    pos = [0] * 6
    free = [0.0] * 6
    fifo = {(p, c): [] for p in range(6) for c in range(6)}
    taken = dict.fromkeys(fifo, 0)
    end_max = 0.0
    while True:
        best = None
        for u in range(6):
            if pos[u] == len(queues[u]):
                continue
            i = queues[u][pos[u]]
            waits = [p for p in range(6) if wait[i] >> p & 1]
            if any(taken[(p, u)] >= len(fifo[(p, u)]) for p in waits):
                continue
            start = max([free[u]] + [fifo[(p, u)][taken[(p, u)]] for p in waits])
            if best is None or start < best[0]:
                best = (start, u, i, waits)
        if best is None:
            break
        start, u, i, waits = best
        for p in waits:
            taken[(p, u)] += 1
        end = start + cyc[i] / divisor
        free[u] = end
        end_max = max(end_max, end)
        pos[u] += 1
        for c in range(6):
            if rel[i] >> c & 1:
                fifo[(u, c)].append(end)
    assert all(pos[u] == len(queues[u]) for u in range(6)), "profiler stalled"
    assert all(taken[k] == len(v) for k, v in fifo.items()), "tokens left over"
    return end_max


def _emit_part(layers: list, rates, masks) -> tuple[np.ndarray, ...]:
    """Columns (unit, cycles, bytes, work, traffic, wait set, release set) of one part,
    with FlightLLM's flags (before `resolve`), every copy of a run of identical blocks
    written out (the emitter keeps two: its second block repeats, `instructions.full`):
    the rows the literal profiler reads."""
    from fpgasim.dataflow.lowerings.flightllm.compiler import choose_forms, emit_rows
    from fpgasim.dataflow.lowerings.flightllm.flightllm_emitter import cycles_at

    forms, _ = choose_forms(layers, rates, masks)
    unit, num, nbytes, work, traffic, wait, rel, link, den, _, run = emit_rows(
        layers, rates, masks, forms)
    cols = (unit, cycles_at(num, link, den, rates), nbytes, work, traffic, wait, rel)
    if run is None:
        return cols
    first, lam, copies = run
    rows = np.concatenate([np.arange(first + lam), np.tile(np.arange(first + lam,
                                                                     first + 2 * lam),
                                                           copies - 1),
                           np.arange(first + 2 * lam, len(unit))])
    return tuple(np.asarray(c)[rows] for c in cols)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["q_proj", "qk", "pv", "down_proj", "prefill qk", "verify"])
def test_engines_match_a_literal_profiler(case: str) -> None:
    from fpgasim.dataflow.lowerings.flightllm import Rates, hardware_layers_of
    from fpgasim.dataflow.lowerings.flightllm.flightllm_graph import GraphParams
    from fpgasim.dataflow.lowerings.flightllm.masks import mask_set

    rates, params = Rates.of(BOARD), GraphParams.of(BOARD)
    if case == "prefill qk":
        hw = hardware_layers_of(MODEL, params, "prefill", 256, 256)
        group = [x for x in hw if x.kind == "attention_qk"][3:4]  # layer 3's mask
        masks = mask_set("flightllm-llama2-7b", 32, 4, 64, 2)
    elif case == "verify":
        hw = hardware_layers_of(MODEL, params, "decode", 5, 160)
        group = [x for x in hw if x.kind == "attention_pv"][:1]
        masks = None
    else:
        hw = hardware_layers_of(MODEL, params, "decode", 1, 1040)
        names = {"q_proj": ("q_proj",), "qk": ("concat_k", "concat_v", "qk"),
                 "pv": ("pv",), "down_proj": ("down_proj",)}[case]
        group = [x for x in hw[:13] if x.name.split(".", 1)[1] in names]
        masks = None
    unit, cyc, _, _, _, wait, rel = _emit_part(group, rates, masks)
    expect_s = _profiler(unit, cyc, wait, rel, 3.2) / F_HZ
    from fpgasim.dataflow.lowerings.flightllm.compiler import compile_part

    part = compile_part(group, rates, masks, [x.name for x in group])
    for engine in (EventEngine(), FastEngine()):
        got_s = engine.part_ticks(part) / TICKS_PER_CYCLE / (F_HZ * 3.2)
        assert got_s == pytest.approx(expect_s, rel=1e-9)


def test_cli_bad_flightllm_inputs_exit_2(capsys, tmp_path, repo) -> None:
    import yaml

    from tests.cli_helpers import run_cli

    design = tmp_path / "small.yaml"
    design.write_text("extends: flightllm\nname: small\nbuffers: {meta: 8}\n")
    model = yaml.safe_load((repo / "workloads" / "models" / "llama2-7b-flightllm.yaml")
                           .read_text())
    model.update(id="odd", intermediate=11000)
    odd = tmp_path / "odd.yaml"
    odd.write_text(yaml.safe_dump(model))
    base = ("simulate", "--verify-len", "1", "--context", "143")
    cases = [
        ((*base, "--fpga", "vhk158", "--design", str(design), "--model",
          "llama2-7b-flightllm"), "buffers.meta = 8"),
        ((*base[:3], "--context", "4096", "--board", "flightllm-vhk158", "--model",
          "llama2-7b-flightllm"), "window"),
        ((*base, "--board", "flightllm-vhk158", "--model", str(odd)), "intermediate = 11000"),
    ]
    for args, field in cases:
        res = run_cli(capsys, *args)
        assert res.code == 2 and field in res.err and len(res.err.strip().splitlines()) == 1


def test_the_mm_tile_and_the_mask_block() -> None:
    """MM_PARALLEL_M (the MM array's rows, the compiler's M tile) changes the stream; a mask
    block the recipe's mask table was not made for falls back to the causal mask."""
    from fpgasim.dataflow.lowerings.flightllm import prefill_mask_used

    base = prefill(128)
    tiled = prefill(128, board=_with(("design.mm_rows", 64)))
    assert tiled.rows != base.rows  # weights re-streamed per 64-row tile
    assert prefill_mask_used(BOARD, MODEL, 128) == "flightllm-llama2-7b"
    small = _with(("design.compiler.mask_block", 32))
    assert prefill_mask_used(small, MODEL, 128) == "causal"


def test_longspec_draft_pass_in_flightllm_layers() -> None:
    """An extension: LongSpec's block on FlightLLM's layer types (MV path for one token)."""
    from fpgasim.config.loader import load_algorithm

    drafter = load_algorithm("longspec").drafter
    seg = lower(PassSpec("longspec", 1, 1023), BOARD, MODEL, drafter)
    # self: norm, q, k, v, 2 concats, QK, PV, o; cross: norm, q, QK, PV, o; MLP: 4; lm_head
    assert sum(count(seg.parts[k].instrs, SYS) for k in seg.order) == 9 + 5 + 4 + 1
    cat = layer_rows(seg, "self.concat_k")
    assert cat["nbytes"].tolist() == [512 * 511] * 8 + [0]  # window 512 - 1 cached positions
    cross = layer_rows(seg, "cross.qk")
    assert count(cross, MV) == 32 * 2  # 1024 target keys: two 512-key MVs per head
    assert mv_k(layer_rows(seg, "lm_head")) == [128] * 126
    assert "cross.concat_k" not in {n for p in seg.parts for n in p.op_names}
    spec = PassSpec("longspec", 4, 1023)
    fast = FastEngine().run_pass(spec, BOARD, MODEL, drafter)
    assert EventEngine().run_pass(spec, BOARD, MODEL, drafter).cycles == fast.cycles
    with pytest.raises(InputError, match="a drafter of the pass's kind"):
        lower(PassSpec("eagle3", 1, 1023), BOARD, MODEL, drafter)


def test_live_prefill_output_credit_never_moves_qk() -> None:
    """docs/flightllm-model.md §7.10: QK^T's output credit is live for L > 1024, moves no time."""
    from fpgasim.dataflow.lowerings.flightllm import Rates, hardware_layers_of
    from fpgasim.dataflow.lowerings.flightllm.compiler import compile_part
    from fpgasim.dataflow.lowerings.flightllm.flightllm_graph import GraphParams
    from fpgasim.dataflow.lowerings.flightllm.masks import mask_set

    masks = mask_set("flightllm-llama2-7b", 32, 32, 64, 2)
    qk = [x for x in hardware_layers_of(MODEL, GraphParams.of(BOARD), "prefill", 2048, 2048)
          if x.kind == "attention_qk"][0]
    ticks = []
    for depth in (512, 8192):  # credit 4 tiles (live) vs 64 (never reached)
        board = _with(("design.buffers.global", depth))
        part = compile_part([qk], Rates.of(board), masks, ["qk"])
        ticks.append(FastEngine().part_ticks(part))
    assert ticks[0] == ticks[1]


@pytest.mark.slow
def test_whole_decode_pass_equals_the_literal_profiler() -> None:
    """The full stream (every part, SYS tokens across parts) in section 3's float profiler."""
    from fpgasim.dataflow.lowerings.flightllm import Rates, hardware_layers_of
    from fpgasim.dataflow.lowerings.flightllm.flightllm_graph import GraphParams

    hw = hardware_layers_of(MODEL, GraphParams.of(BOARD), "decode", 1, 144)
    rates = Rates.of(BOARD)
    groups, cur = [], []
    for x in hw:
        cur.append(x)
        if x.kind != "concat":
            groups.append(cur)
            cur = []
    cols = [[], [], [], []]
    for g, group in enumerate(groups):
        unit, cyc, _, _, _, wait, rel = _emit_part(group, rates, None)
        wait, rel = wait.copy(), rel.copy()
        if g > 0:
            wait[0] |= 1 << SYS
        if g < len(groups) - 1:
            rel[-1] |= 1 << LD
        for col, a in zip(cols, (unit, cyc, wait, rel), strict=True):
            col.append(a)
    unit, cyc, wait, rel = (np.concatenate(c) for c in cols)
    expect_s = _profiler(unit, cyc, wait, rel, 3.2) / F_HZ
    got_s = FastEngine().run_pass(PassSpec("target", 1, 143), BOARD, MODEL).seconds
    assert got_s == pytest.approx(expect_s, rel=1e-10)
