"""The shortcuts of lowering and engines give what the plain algorithm gives, bit for bit.

FlightLLM's compiler keeps a run of identical blocks (heads, MV row groups, MM tiles) as a
two-block template that `window` copies and the fast engine expands in compiled code; the
dataflow graphs share their dependencies by structure; `totals` sums by classes. Each is
checked here against a plain reimplementation written in this file. (The study lowering's
cached fragments were retired with it; the compiler's caches are checked against fresh
compilations in tests/dataflow/lowerings/test_flightllm_reuse.py.)
"""

from __future__ import annotations

import numpy as np
import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.drafters import lower_pass
from fpgasim.dataflow.instructions import (
    MV,
    ROLE_COMPUTE,
    ROLE_SFU,
    TRAFFIC_ACT,
    TRAFFIC_KV,
    TRAFFIC_NONE,
    TRAFFIC_STORE,
    TRAFFIC_WEIGHT,
    full,
    totals,
    window,
)
from fpgasim.dataflow.lowerings.registry import lower
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.fast import full_makespan, run_loop
from fpgasim.step import step_passes
from fpgasim.tree.draft_trees import tree_for_verify_len

#: (algorithm, verify length, context) of the passes checked
POINTS = (("longspec", 9, 700), ("eagle3", 17, 0), ("falcon", 33, 3000))


def passes():
    """Target, draft and verify passes on a study board (GQA model) and FlightLLM's."""
    out = []
    for board, model in ((load_board("u280"), load_model("llama-3.1-8b")),
                         (load_board("flightllm-vhk158"), load_model("llama2-7b-flightllm"))):
        for alg_name, x, context in POINTS:
            alg = load_algorithm(alg_name)
            step = step_passes(x, context, alg, tree_for_verify_len(alg, x), accepted=2)
            for spec in (step.verify, *step.drafts[:2]):
                drafter = None if spec.kind == "target" else alg.drafter
                out.append((spec, board, model, drafter))
    return out


PASSES = passes()


def templates():
    """Every distinct part of the passes above that is a template of identical blocks."""
    seen, out = set(), []
    for spec, board, model, drafter in PASSES:
        for part in lower(spec, board, model, drafter).parts:
            if part.layers == 2 and part.label not in seen:
                seen.add(part.label)
                out.append(part)
    return out


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


@pytest.mark.slow
def test_window_and_the_fast_expansion_equal_the_naive_copies() -> None:
    checked = 0
    for template in templates():
        assert full_makespan(template) == run_loop(full(template)).makespan
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
    prog = lower(spec, board, model, drafter)
    template = next(p for p in prog.parts if p.layers == 2)
    names, roles = template.unit_names, prog.unit_roles
    want = {f"{k}_{name}": 0 for name in names for k in ("busy", "bytes", "work")}
    for r in full(template).instrs:
        u, traffic = int(r["unit"]), int(r["traffic"])
        unit, compute, sfu = names[u], roles[u] == ROLE_COMPUTE, roles[u] == ROLE_SFU
        cycles, nbytes, work = int(r["cycles"]), int(r["nbytes"]), int(r["work"])
        mv = compute and r["opcode"] == MV
        for key, value in (
            (f"busy_{unit}", cycles),
            (f"bytes_{unit}", nbytes if traffic != TRAFFIC_NONE else 0),
            (f"work_{unit}", work),
            ("weight_bytes", nbytes if traffic == TRAFFIC_WEIGHT else 0),
            ("act_load_bytes", nbytes if traffic in (TRAFFIC_ACT, TRAFFIC_KV) else 0),
            ("act_store_bytes", nbytes if traffic == TRAFFIC_STORE else 0),
            ("kv_bytes", nbytes if traffic == TRAFFIC_KV else 0),
            ("weight_load_cycles", cycles if traffic == TRAFFIC_WEIGHT else 0),
            ("act_load_cycles", cycles if traffic in (TRAFFIC_ACT, TRAFFIC_KV) else 0),
            ("macs", work if compute else 0),
            ("sfu_elements", work if sfu else 0),
            ("mv_cycles", cycles if mv else 0),
            ("mv_macs", work if mv else 0),
        ):
            want[key] = want.get(key, 0) + value
    got = totals(template, roles)
    assert got == want
