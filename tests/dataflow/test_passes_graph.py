"""Passes as graphs: dependencies read from tensors, tensors that match the accounting."""

from __future__ import annotations

import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.drafters import lower_pass
from fpgasim.dataflow.graph import GraphError
from fpgasim.dataflow.passes import WEIGHT_REUSE_TOKENS, Net, PassSpec
from fpgasim.dataflow.study_counts import target_pass
from tests.cli_helpers import run_cli

LLAMA = load_model("llama-3.1-8b")
VICUNA = load_model("vicuna-7b-v1.5")
V80 = load_board("v80")


def _deps(ops) -> dict[str, list[str]]:
    """Op name -> names of the ops it waits for (the graph's direct producers)."""
    g = ops.graph
    return {n.name: [g.nodes[p].name for p in g.direct_producers(i)] for i, n in enumerate(g.nodes)}


# Written out from the Llama data flow (attention then SwiGLU MLP, residuals around both):
# the schedule the study charges, independent of how the graph builder is written.
LAYER = {
    "attn_norm": ["<in>"],
    "q": ["attn_norm"],
    "k": ["attn_norm"],
    "v": ["attn_norm"],
    "attn.qk": ["q", "k"],
    "attn.softmax": ["attn.qk"],
    "attn.pv": ["v", "attn.softmax"],
    "o": ["attn.pv"],
    "mlp.post_norm": ["o"],
    "mlp.gate": ["mlp.post_norm"],
    "mlp.up": ["mlp.post_norm"],
    "mlp.down": ["mlp.gate", "mlp.up"],
}


def _expected_layer(block: str, into: list[str]) -> dict[str, list[str]]:
    out = {}
    for name, deps in LAYER.items():
        got = []
        for d in deps:
            got += into if d == "<in>" else [f"{block}.{d}"]
        out[f"{block}.{name}"] = got
    return out


def test_target_dependencies_follow_the_data() -> None:
    ops = target_pass(LLAMA, 16, 1024, V80)
    expected = _expected_layer("L0", []) | _expected_layer("L1", ["L0.mlp.down"])
    expected |= {"final_norm": ["L1.mlp.down"], "lm_head": ["final_norm"]}
    assert _deps(ops) == expected
    # the residual is read (o and down load it) but implied by the attention path
    g = ops.graph
    o = g.nodes.index(g.node("L1.o"))
    assert g.node("L0.mlp.down").outputs[0] in g.node("L1.o").inputs
    assert [g.nodes[p].name for p in g.producers(o)] == ["L0.mlp.down", "L1.attn.pv"]


def test_drafters_read_their_inputs_and_caches() -> None:
    longspec = load_algorithm("longspec").drafter
    ls = _deps(lower_pass(PassSpec("longspec", 4, 1024), V80, LLAMA, longspec))
    assert ls["L0.cross.qk"] == ["L0.cross.q"]  # keys: the target's KV cache (a graph input)
    assert ls["L0.cross.pv"] == ["L0.cross.softmax"]
    assert ls["L0.cross.norm"] == ["L0.self.o"] and ls["lm_head"] == ["L0.mlp.down"]
    e3 = load_algorithm("eagle3").drafter
    first = _deps(lower_pass(PassSpec("eagle3", 3, 1024, first=True), V80, LLAMA, e3))
    assert first["fc"] == [] and first["L0.norm"] == ["fc"]
    assert _deps(lower_pass(PassSpec("eagle3", 8, 1024), V80, LLAMA, e3))["L0.norm"] == []
    falcon = load_algorithm("falcon").drafter
    fa = _deps(lower_pass(PassSpec("falcon", 4, 512), V80, VICUNA, falcon))
    assert fa["L0.lstm1"] == ["L0.lstm0"] and fa["L0.norm"] == ["L0.lstm1"]
    cross = lower_pass(PassSpec("longspec", 4, 1024), V80, LLAMA, longspec).graph
    assert cross.tensors["target.k_cache"].location == "kv_cache"
    assert "target.k_cache" in cross.inputs


@pytest.mark.parametrize("n, context", [(1, 128), (16, 4096), (300, 1024)])
def test_tensors_hold_the_accounted_weights_and_cache(n: int, context: int) -> None:
    # weights and KV elements summed from the graph's tensors equal the op accounting
    ops = target_pass(LLAMA, n, context, V80)
    g = ops.graph
    reads = -(-n // WEIGHT_REUSE_TOKENS)  # the accounting's 128 tokens per weight read
    assert WEIGHT_REUSE_TOKENS == 128

    def elems(prefix: str, location: str) -> int:
        return sum(
            t.elements
            for name, t in g.tensors.items()
            if t.location == location and name.startswith(prefix)
        )

    per_layer = elems("L0.", "weights")
    tail = elems("lm_head", "weights")
    totals = ops.totals()
    assert totals["weight_elems"] == (LLAMA.layers * per_layer + tail) * reads
    assert totals["kv_elems"] == LLAMA.layers * elems("L0.", "kv_cache")
    assert g.tensors["L0.attn.scores"].shape == (LLAMA.heads, n, n + context)


def test_every_spec_builds_a_checked_graph() -> None:
    algos = {a: load_algorithm(a).drafter for a in ("longspec", "eagle3", "falcon")}
    for spec, model, drafter in (
        (PassSpec("target", 5, 100), LLAMA, None),
        (PassSpec("longspec", 5, 100), LLAMA, algos["longspec"]),
        (PassSpec("eagle3", 5, 100, first=True), LLAMA, algos["eagle3"]),
        (PassSpec("falcon", 5, 100), VICUNA, algos["falcon"]),
    ):
        ops = lower_pass(spec, V80, model, drafter)
        assert len(ops.graph.nodes) == len(ops.template_ops())
        assert [n.kind for n in ops.graph.nodes] == [op.kind for op in ops.template_ops()]


def test_an_op_reading_an_unproduced_tensor_names_both() -> None:
    net = Net("broken", LLAMA, 2, V80)
    ghost = net.act("ghost", 2, LLAMA.hidden)  # defined, never written
    net.norm("norm", ghost, LLAMA.hidden)
    with pytest.raises(GraphError, match="op 'norm', tensor 'ghost'"):
        net.g.build()


def test_dump_graph_cli(capsys) -> None:
    res = run_cli(
        capsys,
        "simulate",
        "--board",
        "v80",
        "--model",
        "llama-3.1-8b",
        "--context",
        "1024",
        "--verify-len",
        "16",
        "--dump-graph",
    )
    assert res.code == 0
    assert "graph target n=16 L=1024: 26 ops" in res.out
    assert "L1.attn.k_cache[1024x1024 fp16 @kv_cache]" in res.out
    res = run_cli(
        capsys,
        "simulate",
        "-b",
        "v80",
        "-m",
        "llama-3.1-8b",
        "-L",
        "1024",
        "-x",
        "21",
        "--algorithm",
        "longspec",
        "--tree",
        "4 8 8",
        "--dump-graph",
    )
    assert res.code == 0
    headers = [line for line in res.out.splitlines() if line.startswith("# ")]
    assert len(headers) == 1 + 3  # verify pass, then one draft pass per level
    assert headers[1].startswith("# longspec pass 1: 1 tokens")
