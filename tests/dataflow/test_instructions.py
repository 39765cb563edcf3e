"""The instruction format every lowering returns: rows well formed, templates of identical
blocks that expand to shifted copies, totals that are the sums over the full rows, tree masks
(count-level on FlightLLM's compiler), and the one emitter. (The study lowering's tiling,
buffers and overlap modes were retired with it; FlightLLM's layer rules are
tests/dataflow/lowerings/test_flightllm.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.instructions import (
    INSTR_DTYPE,
    LD,
    MAX_WAIT,
    MV,
    ROLE_COMPUTE,
    ROLE_SFU,
    ST,
    SYS,
    TRAFFIC_ACT,
    TRAFFIC_KV,
    TRAFFIC_NONE,
    TRAFFIC_STORE,
    TRAFFIC_WEIGHT,
    Program,
    full,
    totals,
    window,
)
from fpgasim.dataflow.lowerings.registry import lower
from fpgasim.dataflow.passes import PassSpec
from fpgasim.dataflow.treemask import tile_visibility, visibility, visible_tile_elements
from fpgasim.engine.cycle import executable_totals

BOARD = load_board("flightllm-vhk158")
MODEL = load_model("llama2-7b-flightllm")
DRAFTERS = {name: load_algorithm(name).drafter for name in ("longspec", "eagle3", "falcon")}

CASES = [
    (PassSpec("target", 1, 143), None),
    (PassSpec("target", 5, 500), None),
    (PassSpec("target", 40, 1023), None),
    (PassSpec("target", 128, 0, phase="prefill"), None),
    (PassSpec("longspec", 4, 1023), "longspec"),
    (PassSpec("eagle3", 3, 700, first=True), "eagle3"),
    (PassSpec("falcon", 2, 300), "falcon"),
]
IDS = ["decode", "verify5", "verify40", "prefill", "longspec", "eagle3-first", "falcon"]


def _sums(ins: np.ndarray, unit_names, unit_roles) -> dict[str, int]:
    """`totals` computed here from the rows of a whole pass, one row at a time."""
    out: dict[str, int] = {}
    unit = ins["unit"]
    for u, name in enumerate(unit_names):
        mine = unit == u
        out[f"busy_{name}"] = int(ins["cycles"][mine].sum())
        out[f"bytes_{name}"] = int(ins["nbytes"][mine & (ins["traffic"] != TRAFFIC_NONE)].sum())
        out[f"work_{name}"] = int(ins["work"][mine].sum())
    traffic = ins["traffic"]
    out["weight_bytes"] = int(ins["nbytes"][traffic == TRAFFIC_WEIGHT].sum())
    loads = (traffic == TRAFFIC_ACT) | (traffic == TRAFFIC_KV)
    out["act_load_bytes"] = int(ins["nbytes"][loads].sum())
    out["act_store_bytes"] = int(ins["nbytes"][traffic == TRAFFIC_STORE].sum())
    out["kv_bytes"] = int(ins["nbytes"][traffic == TRAFFIC_KV].sum())
    out["weight_load_cycles"] = int(ins["cycles"][traffic == TRAFFIC_WEIGHT].sum())
    out["act_load_cycles"] = int(ins["cycles"][loads].sum())
    compute = np.isin(unit, [u for u, r in enumerate(unit_roles) if r == ROLE_COMPUTE])
    sfu = np.isin(unit, [u for u, r in enumerate(unit_roles) if r == ROLE_SFU])
    mv = compute & (ins["opcode"] == MV)
    out["macs"] = int(ins["work"][compute].sum())
    out["sfu_elements"] = int(ins["work"][sfu].sum())
    out["mv_cycles"] = int(ins["cycles"][mv].sum())
    out["mv_macs"] = int(ins["work"][mv].sum())
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("spec", "drafter"), CASES, ids=IDS)
def test_totals_are_the_sums_over_the_full_rows(spec: PassSpec, drafter: str | None) -> None:
    """Each part's `totals` (from its template rows, block 1 weighted by its copies, or
    seeded from the compiler's link-free rows) and the pass's are the sums over the rows of
    the whole pass."""
    prog = lower(spec, BOARD, MODEL, DRAFTERS.get(drafter))
    for part in prog.parts:
        assert totals(part, prog.unit_roles) == _sums(full(part).instrs, part.unit_names,
                                                      prog.unit_roles), part.label
    whole = prog.concatenate()
    assert executable_totals(prog) == _sums(whole.instrs, whole.unit_names, prog.unit_roles)
    assert executable_totals(prog)["macs"] > 0


def test_rows_are_well_formed() -> None:
    prog = lower(PassSpec("target", 5, 500), BOARD, MODEL)
    whole = prog.concatenate()
    ins = whole.instrs
    assert ins.dtype == INSTR_DTYPE
    assert not ins.flags.writeable
    # every row takes time but the 0-byte stores of the concat layers (FlightLLM's concat
    # stores nothing: docs/flightllm-model.md §4.7)
    zero = ins["cycles"] == 0
    assert (ins["cycles"] >= 0).all() and zero.sum() == 2 * MODEL.layers
    assert (ins["opcode"][zero] == ST).all() and (ins["nbytes"][zero] == 0).all()
    idx = np.arange(len(ins))[:, None]
    wait = ins["wait"]
    assert wait.shape[1] == MAX_WAIT
    assert ((wait == -1) | ((wait >= 0) & (wait < idx))).all()  # waits point backwards
    assert (wait >= 0).any()
    # FlightLLM's programs: no buffer space to wait for, no arbitrated ports, a barrier
    # (SYS) at the end of every part
    assert (ins["acq_buf"] == -1).all() and (ins["rel_buf"] == -1).all()
    assert whole.buffer_bytes == (-1, -1)
    assert ins["opcode"][-1] == SYS
    for part in prog.parts:
        assert part.instrs["opcode"][-1] == SYS and part.instrs["opcode"][0] == LD
    assert len(ins) == prog.rows == sum(len(full(prog.parts[k]).instrs) for k in prog.order)


def _template(prog) -> Program:
    """The part of a pass that is a template of the most identical blocks."""
    part = max(prog.parts, key=lambda p: p.total_layers if p.layers == 2 else 0)
    assert part.layers == 2 and part.total_layers >= 4
    return part


def test_window_blocks_are_shifted_copies() -> None:
    """A compiled part holding a run of identical blocks (heads, MV row groups) as a
    two-block template expands to block 1 repeated, each copy's waits moved on."""
    template = _template(lower(PassSpec("target", 24, 1023), BOARD, MODEL))
    n = template.total_layers
    prog = full(template)
    h, lam = prog.head_len, prog.layer_len
    assert len(prog.instrs) == len(template.instrs) + (n - 2) * lam
    ins = prog.instrs
    one = ins[h + lam : h + 2 * lam]
    for k in (2, n // 2, n - 1):
        block = ins[h + k * lam : h + (k + 1) * lam]
        assert (block["cycles"] == one["cycles"]).all()
        assert (block["unit"] == one["unit"]).all()
        assert (block["layer"] == k).all()
        moved = np.where(one["wait"] >= h, one["wait"] + (k - 1) * lam, one["wait"])
        assert (block["wait"] == moved).all()
        live = block["wait"][block["wait"] >= 0]
        assert (live >= h + (k - 1) * lam).all()  # only the previous block and its own
    assert (ins["layer"][prog.tail_start :] == n).all()
    assert window(template, 3).layers == 3
    with pytest.raises(ValueError):
        window(template, n + 1)


@pytest.mark.slow
def test_trees_of_one_size_lower_alike() -> None:
    """FlightLLM's compiler costs a tree's attention count-level: a star, a chain and the
    dense block of the same x lower to the same instructions (docs/validation.md)."""
    n = 16
    dense = PassSpec("target", n, 128)
    star = PassSpec("target", n, 128, tree_parents=(-1,) + (0,) * (n - 1))
    chain = PassSpec("target", n, 128, tree_parents=tuple(range(-1, n - 1)))
    rows = [lower(spec, BOARD, MODEL).concatenate().instrs.tobytes()
            for spec in (dense, star, chain)]
    assert rows[0] == rows[1] == rows[2]


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


def test_emitter_runs_of_blocks_equal_the_rows_one_by_one() -> None:
    """The one emitter: rows appended as tuples, finished arrays appended and repeated, and
    runs of the same array all read back in order; `rows` hands out an array no one else
    holds."""
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
    alone = Pairs()  # one block appended once: its rows are someone else's, so copied
    alone.extend(done)
    alone.rows()["a"] = -1
    again = block.rows()  # `done` was handed out: a second call copies
    again["a"] = -1
    assert done["a"].tolist() == [1, 2] and block.rows()["a"].tolist() == [1, 2]
