"""Instruction lowering: conservation of the accounting, structure, modes, tiling, tree masks."""

from __future__ import annotations

import numpy as np
import pytest
from fpgasim.dataflow.lowerings.study import Machine, lower

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.drafters import lower_pass
from fpgasim.dataflow.instructions import (
    BUF_ACT,
    BUF_WEIGHT,
    INSTR_DTYPE,
    LD,
    MAX_WAIT,
    MISC,
    MM,
    MV,
    ST,
    TRAFFIC_STORE,
    TRAFFIC_WEIGHT,
    UNIT_MPE,
    UNIT_SFU,
    full,
    totals,
    window,
)
from fpgasim.dataflow.passes import PassSpec
from fpgasim.dataflow.treemask import tile_visibility, visibility, visible_tile_elements

LLAMA = load_model("llama-3.1-8b")
BOARDS = {name: load_board(name) for name in ("u280", "vhk158", "v80", "u250")}
DRAFTERS = {name: load_algorithm(name).drafter for name in ("longspec", "eagle3", "falcon")}
SMALL = TargetModel(
    id="small", hidden=256, intermediate=512, layers=5, heads=4, kv_heads=2, head_dim=64,
    vocab=1000, params_b=0.01,
)  # fmt: skip


def mode(board: str, overlap: str):
    return BOARDS[board].model_copy(update={"overlap": overlap})


CASES = [
    ("target", None, False),
    ("longspec", "longspec", False),
    ("eagle3", "eagle3", True),
    ("eagle3", "eagle3", False),
    ("falcon", "falcon", False),
]


@pytest.mark.parametrize("overlap", ["ideal", "realistic"])
@pytest.mark.parametrize(("kind", "drafter", "first"), CASES)
@pytest.mark.parametrize(("n", "context"), [(1, 128), (16, 1024), (85, 16384), (300, 700)])
def test_bytes_and_macs_equal_the_op_totals(kind, drafter, first, n, context, overlap) -> None:
    board = mode("v80", overlap)
    d = DRAFTERS.get(drafter)
    spec = PassSpec(kind, n, context, first=first)
    ops = lower_pass(spec, board, LLAMA, d).totals()
    template = lower(spec, board, LLAMA, d)
    prog = full(template)
    ins = prog.instrs
    for tot in (totals(template), _array_totals(ins)):
        assert tot["weight_bytes"] == ops["weight_elems"] * 2
        assert tot["act_load_bytes"] == (ops["act_elems"] + ops["kv_elems"]) * 2
        assert tot["act_store_bytes"] == ops["store_elems"] * 2
        assert tot["macs"] == ops["macs"]
    sfu = int(ins["work"][ins["unit"] == UNIT_SFU].sum())
    assert sfu == (0 if overlap == "ideal" else ops["sfu_elems"])


def _array_totals(ins: np.ndarray) -> dict[str, int]:
    loads = ins["opcode"] == LD
    weight = ins["traffic"] == TRAFFIC_WEIGHT
    return {
        "weight_bytes": int(ins["nbytes"][loads & weight].sum()),
        "act_load_bytes": int(ins["nbytes"][loads & ~weight].sum()),
        "act_store_bytes": int(ins["nbytes"][(ins["opcode"] == ST)].sum()),
        "macs": int(ins["work"][ins["unit"] == UNIT_MPE].sum()),
    }


@pytest.mark.parametrize("overlap", ["ideal", "realistic"])
def test_rows_are_well_formed(overlap: str) -> None:
    prog = full(lower(PassSpec("target", 16, 4096), mode("u280", overlap), LLAMA))
    ins = prog.instrs
    assert ins.dtype == INSTR_DTYPE
    assert not ins.flags.writeable
    assert (ins["cycles"] >= 1).all()
    idx = np.arange(len(ins))[:, None]
    wait = ins["wait"]
    assert wait.shape[1] == MAX_WAIT
    assert ((wait == -1) | ((wait >= 0) & (wait < idx))).all()  # waits point backwards
    assert (ins["traffic"][ins["opcode"] == ST] == TRAFFIC_STORE).all()
    if overlap == "ideal":
        assert (wait == -1).all()
        assert (ins["acq_buf"] == -1).all() and (ins["rel_buf"] == -1).all()
        assert not (ins["opcode"] == MISC).any()
        assert prog.buffer_bytes == (-1, -1)
    else:
        assert (wait >= 0).any() and (ins["opcode"] == MISC).any()


def test_buffer_takes_fit_their_slots_and_balance() -> None:
    board = BOARDS["u280"]
    m = Machine.of(board)
    ins = full(lower(PassSpec("target", 85, 16384), board, LLAMA)).instrs
    for buf, size in ((BUF_WEIGHT, m.weight_buffer_bytes), (BUF_ACT, m.act_buffer_bytes)):
        took = ins["acq_bytes"][ins["acq_buf"] == buf]
        assert len(took) and took.max() <= size // m.depth
        assert took.sum() == ins["rel_bytes"][ins["rel_buf"] == buf].sum()


def test_window_blocks_are_shifted_copies() -> None:
    template = lower(PassSpec("target", 8, 300), BOARDS["v80"], SMALL)
    assert template.layers == 2 and template.total_layers == 5
    prog = full(template)
    h, lam = prog.head_len, prog.layer_len
    assert len(prog.instrs) == len(template.instrs) + 3 * lam
    ins = prog.instrs
    one = ins[h + lam : h + 2 * lam]
    for k in range(2, 5):
        block = ins[h + k * lam : h + (k + 1) * lam]
        assert (block["cycles"] == one["cycles"]).all()
        assert (block["layer"] == k).all()
        moved = np.where(one["wait"] >= 0, one["wait"] + (k - 1) * lam, -1)
        assert (block["wait"] == moved).all()
        live = block["wait"][block["wait"] >= 0]
        assert (live >= h + (k - 1) * lam).all()  # only the previous block and its own
    assert (ins["layer"][prog.tail_start :] == 5).all()
    assert window(template, 3).layers == 3
    with pytest.raises(ValueError):
        window(template, 6)


def test_mv_for_one_token_mm_with_padding_for_more() -> None:
    board = BOARDS["v80"]
    one = full(lower(PassSpec("target", 1, 512), board, LLAMA)).instrs
    mpe = one["unit"] == UNIT_MPE
    assert (one["opcode"][mpe] == MV).all()
    two = lower(PassSpec("target", 2, 512), board, LLAMA).instrs
    five = lower(PassSpec("target", 5, 512), board, LLAMA).instrs
    sixteen = lower(PassSpec("target", 16, 512), board, LLAMA).instrs
    proj = [1, 2, 3]
    # V80: MV is a quarter of the array, so 2 tokens run as two MV passes (cheaper than one
    # MM tile padded to 16 tokens) while 5 tokens run as one padded MM tile
    two_mpe = (two["unit"] == UNIT_MPE) & np.isin(two["op"], proj)
    assert (two["opcode"][two_mpe] == MV).all()
    five_mpe = (five["unit"] == UNIT_MPE) & np.isin(five["op"], proj)
    assert (five["opcode"][five_mpe] == MM).all()
    w2 = two["cycles"][two_mpe]
    w5 = five["cycles"][five_mpe]
    w16 = sixteen["cycles"][(sixteen["unit"] == UNIT_MPE) & np.isin(sixteen["op"], proj)]
    assert (w2 * 2 == w16).all()
    # weight tiles of 5 tokens cost as much as 16 (padding to mm_token_multiple = 16)
    assert (w5 == w16).all()
    # ideal mode: no padding, full array rate
    ideal = lower(PassSpec("target", 2, 512), mode("v80", "ideal"), LLAMA).instrs
    wi = ideal["cycles"][(ideal["unit"] == UNIT_MPE) & np.isin(ideal["op"], [1, 2, 3])]
    assert wi.sum() * 4 == w2.sum()  # MV mode runs at a quarter of the array's MAC rate


def test_machine_cycles_formulas() -> None:
    m = Machine.of(BOARDS["u280"])  # 64 x 48, MV 768, pad 16
    assert m.mpe_cycles(1, 4096, 512) == -(-4096 * 512 // 768)
    assert m.mpe_cycles(5, 4096, 480) == 16 * (4096 // 64) * (480 // 48)
    assert m.mpe_cycles(17, 128, 128, heads=32) == 32 * 32 * 2 * 3  # 17 -> 32 rows, 128/48 -> 3
    assert m.sfu_cycles(33) == 3
    # 2 tokens: two MV passes (2*4096*512/768) beat one MM tile padded to 16 rows
    assert m.mpe_cycles(2, 4096, 512) == -(-2 * 4096 * 512 // 768)
    assert m.mpe_cycles(2, 4096, 512) < 16 * (4096 // 64) * -(-512 // 48)


def test_visibility_and_tiles() -> None:
    parents = (-1, 0, 0, 1, 1, 2)
    vis = visibility(parents)
    assert vis[3].tolist() == [True, True, False, True, False, False]
    assert vis[5].tolist() == [True, False, True, False, False, True]
    assert vis.sum() == 1 + 2 + 2 + 3 + 3 + 3
    tiles = tile_visibility(vis, 2, 2)
    assert tiles.tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    assert visible_tile_elements(vis, 2, 2) == 4 * 6
    with pytest.raises(ValueError):
        visibility((1, 0))  # a cycle
    with pytest.raises(ValueError):
        visibility((-1, 7))


def test_tree_mask_skips_tiles_only_in_realistic_mode() -> None:
    n = 85
    board = BOARDS["u280"]  # 48 key columns: the 85 tree keys span two key blocks
    dense = PassSpec("target", n, 128)
    star = PassSpec("target", n, 128, tree_parents=(-1,) + (0,) * (n - 1))
    chain = PassSpec("target", n, 128, tree_parents=tuple(range(-1, n - 1)))

    def mpe(spec, b=board) -> int:
        ins = lower(spec, b, LLAMA).instrs
        return int(ins["cycles"][ins["unit"] == UNIT_MPE].sum())

    def sfu(spec) -> int:
        ins = lower(spec, board, LLAMA).instrs
        return int(ins["cycles"][ins["unit"] == UNIT_SFU].sum())

    # tiles are 16 queries x 48 (QK) or 64 (PV) keys: a star and a chain hide the same tiles
    assert mpe(star) == mpe(chain) < mpe(dense)
    assert sfu(star) < sfu(dense)
    ideal = mode("u280", "ideal")
    assert mpe(star, ideal) == mpe(dense, ideal)
    # memory traffic stays the accounting's (dense score blocks)
    a, b = lower(star, board, LLAMA).instrs, lower(dense, board, LLAMA).instrs
    assert a["nbytes"].sum() == b["nbytes"].sum()
    with pytest.raises(ValueError):
        lower(PassSpec("target", 4, 128, tree_parents=(-1, 0)), board, LLAMA)


def test_dependencies_follow_the_dataflow() -> None:
    template = lower(PassSpec("target", 16, 1024), BOARDS["v80"], LLAMA)
    ins, names = template.instrs, template.op_names
    h, lam = template.head_len, template.layer_len
    block = range(h + lam, h + 2 * lam)

    def rows(name: str, opcode: int) -> list[int]:
        return [i for i in block if names[ins["op"][i]] == name and ins["opcode"][i] == opcode]

    def waits(i: int) -> set[str]:
        return {names[ins["op"][w]] for w in ins["wait"][i] if w >= 0}

    assert waits(rows("attn.softmax", MISC)[0]) == {"attn.qk"}
    qk_operand = [i for i in rows("attn.qk", LD) if ins["acq_buf"][i] == -1][0]
    assert waits(qk_operand) == {"q", "k"}
    pv_loads = rows("attn.pv", LD)
    assert {"attn.softmax", "v"} <= set().union(*(waits(i) for i in pv_loads))
    down_operand = [i for i in rows("mlp.down", LD) if ins["acq_buf"][i] == -1][0]
    assert waits(down_operand) == {"mlp.gate", "mlp.up"}
    norm = rows("attn_norm", LD)[0]
    assert waits(norm) == {"mlp.down"}  # the next layer waits for the residual
    assert ins["wait"][norm][0] < h + lam  # ... of the previous layer


def test_emitter_runs_of_blocks_equal_the_rows_one_by_one() -> None:
    """The one emitter: rows appended as tuples, finished arrays appended and repeated, and
    runs of the same array all read back in order; `rows` hands out a copy."""
    from fpgasim.dataflow.emitter import Emitter

    class Pairs(Emitter):
        ROW = np.dtype([("a", np.int64), ("b", np.float64)])

    block = Pairs()
    block.row((1, 0.5))
    block.row((2, 1.5))
    done = block.rows()
    e = Pairs()
    assert e.row((0, 0.0)) == 0 and len(e.rows()) == 1
    e.extend(done)
    e.extend(done, times=2)  # the same array again: one run of three
    e.row((3, 2.5))
    e.extend(done)
    assert len(e) == 10 and len(e.chunks) == 4  # (0), run of 3 blocks, (3), block
    rows = e.rows()
    assert rows.dtype == Pairs.ROW
    assert rows["a"].tolist() == [0, 1, 2, 1, 2, 1, 2, 3, 1, 2]
    assert rows["b"].tolist() == [0.0, 0.5, 1.5, 0.5, 1.5, 0.5, 1.5, 2.5, 0.5, 1.5]
    rows["a"] = -1
    assert e.rows()["a"].tolist() == [0, 1, 2, 1, 2, 1, 2, 3, 1, 2]
    assert done["a"].tolist() == [1, 2]
