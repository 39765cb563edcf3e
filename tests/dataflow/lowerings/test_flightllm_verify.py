"""Verify passes (x > 1 rows) on FlightLLM's compiler: MV row groups or MM tiles, whichever is
cheaper per layer (an extension, docs/engines.md "FlightLLM verify passes"), checked layer by
layer like the published rules in tests/dataflow/lowerings/test_flightllm.py; and the MV
token-lane fields."""

from __future__ import annotations

import numpy as np
import pytest

from fpgasim.bounded import clear_caches
from fpgasim.config import load_board, load_model
from fpgasim.dataflow.instructions import TRAFFIC_WEIGHT
from fpgasim.dataflow.lowerings import flightllm
from fpgasim.dataflow.lowerings.flightllm import compiler
from fpgasim.dataflow.lowerings.flightllm.compiler import LD, MISC, MM, MV, ST
from fpgasim.dataflow.lowerings.registry import lower
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.event import EventEngine
from fpgasim.engine.fast import FastEngine
from tests.dataflow.lowerings.test_flightllm import count, layer_rows

BOARD = load_board("flightllm-vhk158")
MODEL = load_model("llama2-7b-flightllm")


def lanes(m: int, macs: int):
    """The published board with m MV token lanes (MV_PARALLEL_M = MV_START_M_NUM = m: m rows
    per MV) and `macs` MAC/cycle in all (designs/flightllm-mv4.yaml: 4 lanes of 1024)."""
    return load_board("flightllm-vhk158", [("design.mv_lanes", m),
                                           ("design.mv_macs_per_lane", macs // m)])


def seconds(x: int, context: int = 1023, board=BOARD) -> float:
    return FastEngine().run_pass(PassSpec("target", x, context), board, MODEL).seconds


def test_two_rows_run_as_two_mv_row_groups() -> None:
    """Published board (one row per MV): q_proj at x = 2 is section 4.2's body twice."""
    q = layer_rows(lower(PassSpec("target", 2, 142), BOARD, MODEL), "q_proj")
    assert count(q, MM) == 0 and count(q, MV) == 2 * 16
    ld = q[q["unit"] == LD]
    inputs = ld[ld["nbytes"] == 4096]
    assert len(inputs) == 2  # one input vector per row group
    assert (ld["traffic"] == TRAFFIC_WEIGHT).sum() == 2 * 128 + 1  # weights twice, bias once
    assert q[q["unit"] == ST]["nbytes"].tolist() == [4096, 4096]
    assert count(q, MISC) == 2 * 8 * 3 and (q["work"][q["unit"] == MISC] == 16 * 32).all()
    # the second group's input load waits on the first group's last MV
    seg = lower(PassSpec("target", 2, 142), BOARD, MODEL)
    part = next(p for p in seg.parts if "q_proj" in p.op_names)
    ins = part.instrs
    mine = np.flatnonzero(ins["op"] == part.op_names.index("q_proj"))
    inputs = mine[(ins["unit"][mine] == LD) & (ins["nbytes"][mine] == 4096)]
    mvs = mine[ins["unit"][mine] == MV]
    waits = ins["wait"][inputs[1]]
    assert mvs[15] in waits.tolist() and inputs[1] > mvs[15]


def test_four_lanes_carry_four_rows_in_one_group() -> None:
    """MV_START_M_NUM = 4 on 4 lanes: x <= 4 rows stream the weights once, MVs charged 4 rows."""
    board = lanes(4, 4096)
    seg = lower(PassSpec("target", 3, 140), board, MODEL)
    q = layer_rows(seg, "q_proj")
    assert count(q, MV) == 16 and (q["work"][q["unit"] == MV] == 4 * 16 * 128 * 512).all()
    ld = q[q["unit"] == LD]
    assert ld["nbytes"][0] == 3 * 4096  # the three input rows
    # weights streamed once: 131,072 int8 operand bytes per load, moved as int4 at 0.7
    assert (ld["nbytes"] == round(131072 * 0.7 / 2)).sum() == 128
    assert (ld["nbytes"] == 3 * 512).sum() == 8 * 16  # eltwise operand sets of three rows
    assert (q["work"][q["unit"] == MISC] == 3 * 16 * 32).all()
    assert q[q["unit"] == ST]["nbytes"].tolist() == [3 * 4096]
    qk = layer_rows(seg, "qk")
    assert count(qk, MV) == 32 and count(qk, MISC) == 32  # T = 144: one MV per head
    assert (qk["work"][qk["unit"] == MISC] == 3 * 144 * 2).all()  # softmax of 3 rows, 2 passes
    pv = layer_rows(seg, "pv")
    assert pv[pv["unit"] == ST]["nbytes"].tolist() == [3 * 4096]


def test_mv_time_follows_the_lane_formula() -> None:
    """MV cycles = MV_START_M_NUM 16 K MV_START_N_NUM / (N K M parallelism) (section 2.3)."""
    seg = lower(PassSpec("target", 1, 143), lanes(4, 4096), MODEL)
    mv = layer_rows(seg, "v_proj")
    mv = mv[mv["unit"] == MV]
    expect = 4 * 16 * 128 * 512 / 4096  # = 8 K, as the published 1 x 16 K x 512 / 1024
    assert (mv["cycles"] == round(expect * flightllm.TICKS_PER_CYCLE)).all()


def test_done_when_four_lanes() -> None:
    """Four lanes, four rows per MV (MV array 4 x 64 x 16): T_v(x <= 4) within 15% of T_v(1)
    at L = 1023, and T_v(1) equal to the published board's to the last tick."""
    board = lanes(4, 4096)
    t1 = seconds(1, board=board)
    assert t1 == seconds(1)
    for x in (2, 3, 4):
        assert seconds(x, board=board) <= 1.15 * t1
    # lanes that split the published 1024 MAC/cycle: every MV is charged 4 rows at a quarter
    # of the width, so x = 1 costs about 4 decode steps and x <= 4 about the same
    split = lanes(4, 1024)
    assert seconds(4, board=split) <= 1.15 * seconds(1, board=split)
    assert seconds(1, board=split) > 3 * t1


def _forced(form: str):
    """choose_forms restricted to the MV or the MM form."""
    def pick(layers, rates, masks, rows_of=compiler.part_rows, cost_of=None):
        forms = tuple(form if compiler.has_choice(x) else compiler.MV_FORM for x in layers)
        return forms, rows_of(layers, rates, masks, forms)
    return pick


@pytest.mark.parametrize("x", [2, 24])
def test_verify_costs_the_cheapest_form(monkeypatch, x: int) -> None:
    """Published board: a verify pass costs what its cheapest legal form costs, layer by layer.

    Compiled with every x-row layer forced to MV row groups and forced to MM tiles, each
    hardware layer's span in the chosen pass equals the smaller of the two."""
    spec = PassSpec("target", x, 1023)
    engine = FastEngine()

    def spans() -> dict[str, int]:
        clear_caches("flightllm.")
        seg = lower(spec, BOARD, MODEL)
        return {seg.parts[k].label: engine.part_ticks(seg.parts[k]) for k in set(seg.order)}

    chosen = spans()
    monkeypatch.setattr(compiler, "choose_forms", _forced("mv"))
    mv = spans()
    monkeypatch.setattr(compiler, "choose_forms", _forced("mm"))
    mm = spans()
    monkeypatch.undo()
    clear_caches("flightllm.")
    assert chosen.keys() == mv.keys() == mm.keys()
    for label, ticks in chosen.items():
        assert ticks == min(mv[label], mm[label]), label
    if x == 2:  # MV row groups everywhere: 2 decode-like streams, not 27.7 decode steps
        assert chosen == mv
        assert seconds(2) < 2.1 * seconds(1)


def test_decode_and_prefill_keep_the_published_rules() -> None:
    """x = 1 always MV, prefill always MM, whatever the lanes (held-out references check
    the numbers; here: the choice is never made)."""
    seg = lower(PassSpec("target", 1, 1023), lanes(4, 4096), MODEL)
    assert all(count(p.instrs, MM) == 0 for p in seg.parts)
    pre = lower(PassSpec("target", 128, 0, phase="prefill"), lanes(4, 4096), MODEL)
    assert all(count(p.instrs, MV) == 0 for p in pre.parts)


def test_mm_attention_follows_the_causal_block_mask() -> None:
    """MM-form verify attention: a row block sees the mask blocks up to its last row's."""
    from fpgasim.dataflow.lowerings.flightllm import Rates
    from fpgasim.dataflow.lowerings.flightllm.compiler import FlightLLMEmitter, attention_mm
    from fpgasim.dataflow.lowerings.flightllm.layers import HwLayer

    rates = Rates.of(BOARD)
    # x = 64 tree tokens after L = 1000: T = 1072 (67 key blocks), rows at 1008..1071
    qk = HwLayer("attention_qk", "qk", 64, 128, 1072, misc=("softmax",), heads=32)
    e = FlightLLMEmitter(rates)
    attention_mm(e, qk, None, 0)
    rows = e.rows()
    unit, work = rows["unit"], rows["work"]
    softmax_k = (work[unit == MISC] // (16 * 2)).reshape(32, 4, 16)  # head, row block, row
    assert (softmax_k[:, 0] == 64).all()  # rows 1008..1023 see mask blocks 0..15
    assert (softmax_k[:, 1:] == 67).all()  # the others reach block 16 (keys to 1071)
    assert count(np.rec.fromarrays([unit], names="unit"), MM) == 32 * 67


def test_event_equals_fast_on_row_groups() -> None:
    board = lanes(4, 4096)
    for x in (3, 6):
        spec = PassSpec("target", x, 139)
        assert EventEngine().run_pass(spec, board, MODEL).cycles == FastEngine().run_pass(
            spec, board, MODEL).cycles


def test_lane_fields_are_validated(tmp_path) -> None:
    from fpgasim.config import load_design
    from fpgasim.errors import ConfigError

    path = tmp_path / "d.yaml"
    path.write_text("extends: flightllm-mv4\nname: odd\nmv_macs_per_lane: 1000\n")
    with pytest.raises(ConfigError, match="mv_macs_per_lane = 1000 is not a multiple of block"):
        load_design(str(path))
    path.write_text("extends: flightllm-mv4\nname: none\nmv_lanes: 0\n")
    with pytest.raises(ConfigError, match="mv_lanes = 0: Input should be greater than 0"):
        load_design(str(path))


# --------------------------------------------------------------------------- drafters


def drafter(name: str):
    from fpgasim.config import load_algorithm

    return load_algorithm(name).drafter


def names(seg) -> list[str]:
    return [n for k in seg.order for n in seg.parts[k].op_names]


def test_eagle3_draft_pass_in_flightllm_layers() -> None:
    """fc on the first pass; norm and q/k/v over the 2h-wide input; own cache; LM head."""
    d = drafter("eagle3")
    first = lower(PassSpec("eagle3", 1, 1023, first=True), BOARD, MODEL, d)
    later = lower(PassSpec("eagle3", 1, 1023), BOARD, MODEL, d)
    assert names(first)[0] == "fc" and "fc" not in names(later)
    # norm, q, k, v, 2 concats, QK, PV, o, post norm, gate, up, down, lm_head (+ fc)
    assert len(names(later)) == 14 and len(names(first)) == 15
    fc = layer_rows(first, "fc")
    assert count(fc, MV) == 8 * 6  # 4096 outputs = 8 groups; K = 3 x 4096 = 768 blocks: 6 chunks
    norm = layer_rows(later, "norm")
    assert norm["nbytes"].tolist() == [8192, 0, 8192]  # RMSnorm over embedding + feature
    q = layer_rows(later, "q_proj")
    assert count(q, MV) == 8 * 4  # K = 2h = 512 blocks: 4 chunks of 128
    cat = layer_rows(later, "self.concat_k")
    assert cat["nbytes"].tolist() == [512 * 1023] * 8 + [0]  # T = 1024, own cache of T - 1
    head = layer_rows(later, "lm_head")
    assert count(head, MV) == 63 * 2  # the target's 32000 (draft_vocab null)


def test_falcon_draft_pass_in_flightllm_layers() -> None:
    """LSTM layers (linear + SiLU, 3 cell eltwise layers each), decoder layer, LM head."""
    d = drafter("falcon")
    seg = lower(PassSpec("falcon", 1, 1023), BOARD, MODEL, d)
    ops = names(seg)
    assert ops[:8] == ["lstm0.proj", "lstm0.forget", "lstm0.cell_update", "lstm0.out",
                       "lstm1.proj", "lstm1.forget", "lstm1.cell_update", "lstm1.out"]
    gates = layer_rows(seg, "lstm0.proj")
    assert count(gates, MV) == 32 * 6  # 4h = 16384 outputs: 32 groups; K = 3h: 6 chunks
    assert count(gates, MISC) == 32  # the SiLU stand-in over the 4h gate outputs
    cell = layer_rows(seg, "lstm0.forget")
    assert cell["unit"].tolist() == [LD, LD, MISC, ST]  # a stand-alone eltwise row
    head = layer_rows(seg, "lm_head")
    # max(n, k) = 2 rows (each position predicts one token): two MV row groups here
    assert head[head["unit"] == ST]["nbytes"].tolist() == [32000, 32000]


@pytest.mark.parametrize("algorithm", ["longspec", "eagle3", "falcon"])
def test_draft_passes_event_equals_fast(algorithm: str) -> None:
    d = drafter(algorithm)
    for n in (1, 5):
        spec = PassSpec(algorithm, n, 1023, first=algorithm == "eagle3" and n == 5)
        fast = FastEngine().run_pass(spec, BOARD, MODEL, d)
        assert EventEngine().run_pass(spec, BOARD, MODEL, d).cycles == fast.cycles
        assert fast.seconds > 0


def test_drafter_the_blocks_cannot_tile_names_the_field() -> None:
    from fpgasim.errors import ConfigError

    d = drafter("eagle3").model_copy(update={"draft_vocab": 32001})
    with pytest.raises(ConfigError, match="draft_vocab"):
        lower(PassSpec("eagle3", 1, 1023), BOARD, MODEL, d)


def test_cli_simulates_every_drafter(capsys) -> None:
    from tests.cli_helpers import run_cli

    for algorithm in ("eagle3", "falcon"):
        res = run_cli(capsys, "simulate", "--board", "flightllm-vhk158", "--model",
                      "llama2-7b-flightllm", "--algorithm", algorithm, "--context", "511",
                      "--engine", "fast", "--format", "json")
        assert res.code == 0, res.err
        assert '"draft_s"' in res.out


@pytest.mark.parametrize("x", [2, 40, 130])
def test_mm_form_bound_is_the_mm_units_sum(x: int) -> None:
    """The shortcut that skips compiling the MM form uses its MM unit's exact summed time."""
    from fpgasim.dataflow.lowerings.flightllm import Rates, hardware_layers_of
    from fpgasim.dataflow.lowerings.flightllm.compiler import (
        FlightLLMEmitter,
        attention_mm,
        linear_mm,
        mm_form_compute_cycles,
    )
    from fpgasim.dataflow.lowerings.flightllm.flightllm_graph import GraphParams

    rates = Rates.of(BOARD)
    hw = hardware_layers_of(MODEL, GraphParams.of(BOARD), "decode", x, 1008 + 16 * (x // 16 + 1))
    for layer in hw[:13]:
        if layer.kind not in ("linear", "attention_qk", "attention_pv"):
            continue
        e = FlightLLMEmitter(rates)
        (linear_mm(e, layer) if layer.kind == "linear" else attention_mm(e, layer, None, 0))
        rows = e.rows()
        unit, cyc = rows["unit"], rows["cycles"]
        assert cyc[unit == MM].sum() == pytest.approx(mm_form_compute_cycles(layer, rates),
                                                      rel=1e-12), layer.name
