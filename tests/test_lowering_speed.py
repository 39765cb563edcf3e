"""The lowering's shortcuts give the rows of the plain algorithm, bit for bit.

The study lowering places cached, relocatable fragments instead of emitting every row
(`lowerings/study/fragments.py`), the graph's dependencies are shared by graphs of one structure,
the fast engine expands a template's layers in compiled code and `totals` sums by one-hot
products. Each is checked here against a plain reimplementation written in this file.
"""

from __future__ import annotations

import numpy as np
import pytest
from fpgasim.dataflow.lowerings.study import Machine, _plan, lower
from fpgasim.dataflow.lowerings.study import fragments as frag_module
from fpgasim.dataflow.lowerings.study.attention import TreeMask
from fpgasim.dataflow.lowerings.study.emit import PlanEmitter

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.drafters import lower_pass
from fpgasim.dataflow.instructions import (
    MV,
    TRAFFIC_ACT,
    TRAFFIC_KV,
    TRAFFIC_NONE,
    TRAFFIC_STORE,
    TRAFFIC_WEIGHT,
    UNIT_MPE,
    UNIT_NAMES,
    full,
    totals,
    window,
)
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.fast import full_makespan, run_loop
from fpgasim.step import step_passes
from fpgasim.tree.draft_trees import tree_for_verify_len

SMALL = TargetModel(
    id="small", hidden=256, intermediate=512, layers=5, heads=4, kv_heads=2, head_dim=64,
    vocab=1000, params_b=0.01,
)  # fmt: skip


def reference_rows(spec: PassSpec, board, model, drafter=None) -> np.ndarray:
    """Every row emitted in place by one `PlanEmitter`, op by op (the lowering without caches)."""
    pass_ops = lower_pass(spec, board, model, drafter)
    mach = Machine.of(board)
    graph = pass_ops.graph
    flat = pass_ops.template_ops()
    low = PlanEmitter(mach)
    mask = TreeMask(spec.tree_parents, spec.mask_block, mach.ideal)
    plans = {}

    def inputs(plan) -> tuple[int, ...]:
        if mach.ideal:
            return ()
        producers = graph.direct_producers(plan.index)
        table = low.last_mpe if plan.op.kind == "softmax" else low.done
        return tuple(table[p] for p in producers if table.get(p, -1) >= 0)

    blocks = pass_ops.template_blocks
    regions = [(-1, pass_ops.head), *[(k, pass_ops.layer) for k in range(blocks)]]
    pos = 0
    for layer, ops in [*regions, (blocks, pass_ops.tail)]:
        low.layer = layer
        deferred = []
        for op in ops:
            qk = [plans[p] for p in graph.producers(pos) if flat[p].kind == "attn_qk"]
            scores = qk[0] if qk else None
            plan = plans[pos] = _plan(mach, model, mask, op, pos, scores)
            pos += 1
            if not plan.stream_bytes or plan.waits_for_inputs:
                deferred.append(plan)
                continue
            streams: list[int] = []
            low.emit_loads(plan, (), range(low.prefetch_count(plan)), streams)
            for d in deferred:
                low.emit_body(d, inputs(d), [])
            deferred = []
            low.emit_body(plan, inputs(plan), streams)
        for d in deferred:
            low.emit_body(d, inputs(d), [])
    return low.rows()


#: (algorithm, verify length, context) of the passes checked
POINTS = (("longspec", 9, 700), ("eagle3", 17, 0), ("falcon", 33, 3000))


def passes():
    """Target, draft and tree-masked verify passes on every study board, both overlaps."""
    model = load_model("llama-3.1-8b")
    out = []
    for name in ("u280", "vhk158", "v80", "u250"):
        for overlap in ("realistic", "ideal"):
            board = load_board(name).model_copy(update={"overlap": overlap})
            for alg_name, x, context in POINTS:
                alg = load_algorithm(alg_name)
                step = step_passes(x, context, alg, tree_for_verify_len(alg, x), accepted=2)
                for spec in (step.verify, *step.drafts):
                    drafter = None if spec.kind == "target" else alg.drafter
                    out.append((spec, board, model, drafter))
    out.append((PassSpec("target", 8, 300), load_board("v80"), SMALL, None))
    return out


PASSES = passes()


@pytest.mark.parametrize("cold", [True, False], ids=["cold cache", "warm cache"])
def test_fragments_give_the_rows_of_emitting_in_place(cold: bool) -> None:
    for spec, board, model, drafter in PASSES:
        if cold:
            frag_module._CACHES.clear()
        got = lower(spec, board, model, drafter).instrs
        want = reference_rows(spec, board, model, drafter)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (spec, board.name)


def test_a_full_cache_is_emptied_and_the_rows_stay_the_same(monkeypatch) -> None:
    monkeypatch.setattr(frag_module, "MAX_CACHED_ROWS", 50)
    frag_module._CACHES.clear()
    for spec, board, model, drafter in PASSES[:6]:
        got = lower(spec, board, model, drafter).instrs
        assert got.tobytes() == reference_rows(spec, board, model, drafter).tobytes()
    assert frag_module._cached_rows <= 50 or not any(frag_module._CACHES.values())


def naive_window(template, layers: int) -> np.ndarray:
    """Head, block 0, then block 1 copied per layer with its waits past the head shifted."""
    src = template.instrs
    h, lam = template.head_len, template.layer_len
    parts = [src[: h + lam].copy()]
    for k in range(1, layers):
        block = src[h + lam : h + 2 * lam].copy()
        block["wait"] = np.where(block["wait"] >= h, block["wait"] + (k - 1) * lam, block["wait"])
        block["layer"] = k
        parts.append(block)
    tail = src[h + 2 * lam :].copy()
    tail["wait"] = np.where(tail["wait"] >= h, tail["wait"] + (layers - 2) * lam, tail["wait"])
    tail["layer"] = layers
    parts.append(tail)
    return np.concatenate(parts)


def test_window_and_the_fast_expansion_equal_the_naive_copies() -> None:
    checked = 0
    for spec, board, model, drafter in PASSES[::3]:
        template = lower(spec, board, model, drafter)
        assert full_makespan(template) == run_loop(full(template)).makespan
        if template.layers < 2:  # a one-layer pass (a draft) is its own window
            continue
        for layers in sorted({3, 4, template.total_layers}):
            got = window(template, layers).instrs
            assert got.tobytes() == naive_window(template, layers).tobytes()
            checked += 1
    assert checked >= 20


def test_graph_dependencies_are_shared_by_structure_and_right() -> None:
    board, model = load_board("u280"), load_model("llama-3.1-8b")
    a = lower_pass(PassSpec("target", 4, 100), board, model, None).graph
    b = lower_pass(PassSpec("target", 4, 5000), board, model, None).graph
    assert a._dependencies() is b._dependencies()  # same structure, other shapes
    nodes = a.nodes
    producer = {t: i for i, n in enumerate(nodes) for t in n.outputs}
    for i, node in enumerate(nodes):
        direct = sorted({producer[t] for t in node.inputs if t in producer})
        assert a.producers(i) == tuple(direct)
        # ancestors by a walk; direct producers: those no other producer depends on
        def walk(j: int) -> set[int]:
            found = {producer[t] for t in nodes[j].inputs if t in producer}
            return found.union(*(walk(p) for p in found))

        assert a.ancestors(i) == frozenset(walk(i))
        reduced = [p for p in direct if not any(p in walk(q) for q in direct)]
        assert a.direct_producers(i) == tuple(reduced)


def test_totals_equal_a_row_by_row_sum() -> None:
    spec, board, model, drafter = PASSES[0]
    template = lower(spec, board, model, drafter)
    rows = full(template).instrs
    want: dict[str, int] = {}
    for r in rows:
        unit, traffic = UNIT_NAMES[int(r["unit"])], int(r["traffic"])
        cycles, nbytes, work = int(r["cycles"]), int(r["nbytes"]), int(r["work"])
        for key, value in (
            (f"busy_{unit}", cycles),
            (f"bytes_{unit}", nbytes if traffic != TRAFFIC_NONE else 0),
            (f"work_{unit}", work),
            ("weight_bytes", nbytes if traffic == TRAFFIC_WEIGHT else 0),
            ("act_load_bytes", nbytes if traffic in (TRAFFIC_ACT, TRAFFIC_KV) else 0),
            ("act_store_bytes", nbytes if traffic == TRAFFIC_STORE else 0),
            ("weight_load_cycles", cycles if traffic == TRAFFIC_WEIGHT else 0),
            ("act_load_cycles", cycles if traffic in (TRAFFIC_ACT, TRAFFIC_KV) else 0),
            ("macs", work if int(r["unit"]) == UNIT_MPE else 0),
            ("sfu_elements", work if UNIT_NAMES[int(r["unit"])] == "SFU" else 0),
            ("mv_cycles", cycles if int(r["unit"]) == UNIT_MPE and r["opcode"] == MV else 0),
            ("mv_macs", work if int(r["unit"]) == UNIT_MPE and r["opcode"] == MV else 0),
        ):
            want[key] = want.get(key, 0) + value
    assert totals(template) == want
