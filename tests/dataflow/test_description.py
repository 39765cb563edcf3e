"""The one model description of a target's pass and its readers: every shipped model is
described by a registered family; the study's element-count reader is the oracle of the
analytic engine's closed form; conventions are options that change what they name; a
reader refuses a kind it has no method for; a new family is one registration."""

from __future__ import annotations

from pathlib import Path

import pytest

from fpgasim.config import load_board, load_model
from fpgasim.dataflow.description import (
    FAMILIES,
    ModelFamily,
    describe_target,
    family_of,
    register_family,
)
from fpgasim.dataflow.description.families.llama_family import describe as describe_llama
from fpgasim.dataflow.description.parameters import ParameterReader, target_arithmetic
from fpgasim.dataflow.description.reader import NODE_KINDS, Reader
from fpgasim.dataflow.study_counts import STUDY, StudyConventions, StudyReader, target_pass
from fpgasim.engine.analytic import target_counts
from fpgasim.errors import ConfigError

MODELS = Path(__file__).resolve().parents[2] / "workloads" / "models"
FILES = sorted(MODELS.glob("*.yaml")) + sorted((MODELS / "hf").glob("*.json"))
V80 = load_board("v80")
LLAMA = load_model("llama-3.1-8b")
KEYS = {"weight": "weight_elems", "act": "act_elems", "kv": "kv_elems",
        "store": "store_elems", "macs": "macs"}


def test_every_shipped_model_has_one_family_and_every_kind_a_parameter_rule() -> None:
    families = set()
    for path in FILES:
        m = load_model(str(path))
        matching = [f.name for f in FAMILIES.values() if f.matches(m)]
        assert len(matching) == 1, (path.name, matching)
        graph = describe_target(m)
        assert graph.family == matching[0] == family_of(m).name
        assert graph.kinds() <= ParameterReader.kinds()
        families.add(graph.family)
    assert families == {"llama", "moe", "gpt2"}
    assert ParameterReader.kinds() == set(NODE_KINDS)


def test_the_description_is_built_once_per_model() -> None:
    assert describe_target(LLAMA) is describe_target(LLAMA)


@pytest.mark.parametrize("path", [p for p in FILES if load_model(str(p)).architecture == "llama"
                                  and load_model(str(p)).moe is None], ids=lambda p: p.name)
def test_the_closed_form_equals_the_description_reader(path: Path) -> None:
    """engine/analytic.target_counts against the study reader over the description (the
    oracle), for every shipped dense model, AD, a tree, past 128 rows and a batch."""
    m = load_model(str(path))
    for n, context, batch in ((1, 0, 1), (16, 1024, 1), (300, 77, 1), (5, 300, 4)):
        totals = target_pass(m, n, context, V80).totals()
        closed = target_counts(m, n, context, V80, batch)
        many = -(-(n * batch) // 128) // -(-n // 128)  # weight reads of the batch / one's
        for key, op_key in KEYS.items():
            mult = many if key == "weight" else batch
            assert closed[key] == totals[op_key] * mult, (n, context, batch, key)


def test_conventions_change_what_they_name() -> None:
    n, h, i, layers = 16, LLAMA.hidden, LLAMA.intermediate, LLAMA.layers
    base = target_pass(LLAMA, n, 512, None).totals()

    def delta(**change) -> dict[str, int]:
        got = target_pass(LLAMA, n, 512, None, StudyConventions(**change)).totals()
        return {k: got[k] - base[k] for k in base if got[k] != base[k]}

    assert delta(residual_loads=False) == {"act_elems": -2 * layers * n * h}
    assert delta(residual_sfu_passes=0) == {"sfu_elems": -2 * layers * n * h}
    assert delta(glu_gate_loads=False) == {"act_elems": -layers * n * i}
    assert delta(glu_sfu_passes=1) == {"sfu_elems": -layers * n * i}
    assert delta(weight_reuse_tokens=8) == {"weight_elems": base["weight_elems"]}  # 2 reads
    assert STUDY == StudyConventions()


def test_the_study_reader_refuses_gpt2_in_one_line() -> None:
    gpt2 = load_model("gpt2-345m")
    with pytest.raises(ConfigError, match="gpt2.*no rule for positions") as err:
        target_pass(gpt2, 4, 100, V80)
    assert "\n" not in str(err.value)
    assert "positions" not in StudyReader.kinds() and "positions" in ParameterReader.kinds()


def test_a_reader_refuses_a_kind_it_has_no_method_for() -> None:
    class NormsOnly(Reader):
        what = "a norms-only reader"

        def norm(self, node) -> None:
            """Counted."""

    assert NormsOnly.kinds() == {"norm"}
    with pytest.raises(ConfigError, match="attention, linear, lm_head, residual, rope"):
        NormsOnly().check(describe_target(LLAMA), LLAMA)


def test_a_new_family_is_one_registration() -> None:
    """A family registered from outside (here: Llama's nodes without RoPE, for one model id)
    is described, read for parameters and read by the study, with no reader changed."""

    def describe(model):
        graph = describe_llama(model)
        layer = tuple(n for n in graph.layer if n.kind != "rope")
        rewired = []
        for node in layer:
            if node.kind == "attention":
                node = type(node)(**{**node.__dict__, "inputs": ("q.out", "k.out", "v.out")})
            rewired.append(node)
        return type(graph)(**{**graph.__dict__, "family": "norope", "layer": tuple(rewired)})

    toy = LLAMA.model_copy(update={"id": "toy-norope", "layers": 3})
    FAMILIES.pop("llama")  # asked after the new one
    register_family(ModelFamily("norope", lambda m: m.id == "toy-norope", describe))
    register_family(ModelFamily("llama", lambda m: m.architecture == "llama" and m.moe is None,
                                describe_llama))
    try:
        graph = describe_target(toy)
        assert graph.family == "norope" and "rope" not in graph.kinds()
        # 3 of Llama's layers and its two tables (no RoPE parameters to lose)
        assert target_arithmetic(toy).weight_count == (
            3 * target_arithmetic(LLAMA).layer_linear_weights + 2 * LLAMA.vocab * LLAMA.hidden)
        # the study charges no RoPE, so its counts are Llama's
        assert target_pass(toy, 8, 64, V80).totals() == target_pass(
            LLAMA.model_copy(update={"layers": 3}), 8, 64, V80).totals()
    finally:
        FAMILIES.pop("norope")
        describe_target.cache_clear()
        target_arithmetic.cache_clear()


def test_each_lowering_reads_the_kinds_of_its_families_only() -> None:
    from fpgasim.dataflow.lowerings.dfx import DfxReader
    from fpgasim.dataflow.lowerings.flightllm.flightllm_graph import FlightLLMReader

    llama, gpt2 = describe_target(LLAMA).kinds(), describe_target(load_model("gpt2-345m")).kinds()
    moe = describe_target(load_model(str(MODELS / "hf" / "Mixtral-8x7B-v0.1.json"))).kinds()
    assert llama | moe <= FlightLLMReader.kinds() and not gpt2 <= FlightLLMReader.kinds()
    assert gpt2 <= DfxReader.kinds() and not llama <= DfxReader.kinds()
    assert llama | moe <= StudyReader.kinds()


def test_readers_dispatch_on_kind_never_on_class() -> None:
    """No reader of the description tests a node's class (one visitor per reader)."""
    import ast
    import inspect

    from fpgasim.dataflow import study_counts
    from fpgasim.dataflow.description import parameters
    from fpgasim.dataflow.lowerings import dfx
    from fpgasim.dataflow.lowerings.flightllm import flightllm_graph

    readers = 0
    for module in (parameters, study_counts, flightllm_graph, dfx):
        tree = ast.parse(inspect.getsource(module))
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            if not any(getattr(b, "id", "") == "Reader" for b in cls.bases):
                continue
            readers += 1
            calls = [c.func.id for c in ast.walk(cls) if isinstance(c, ast.Call)
                     and isinstance(c.func, ast.Name)]
            assert "isinstance" not in calls and "type" not in calls, (module.__name__, cls.name)
    assert readers == 4
