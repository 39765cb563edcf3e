"""An experiment kind is one record (`fpgasim.reproduce.kind.ExperimentKind`), registered
in one place: every shipped kind has every field, everything else is derived from the
records, and a kind defined in tests/ (tests/experiment_kind_best_x.py) runs through the
same machinery as the shipped ones (load, validate, side by side, plan, files, engine
comparison)."""

from __future__ import annotations

import dataclasses
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

import fpgasim.reproduce.kinds as kinds_package
from fpgasim.cli.validate_files import check_file, experiment_schemas
from fpgasim.config.loader import resolve
from fpgasim.engine import get_engine
from fpgasim.errors import ConfigError
from fpgasim.reproduce import Experiment, RunContext, load_experiment, run_experiment
from fpgasim.reproduce.beside import beside_columns
from fpgasim.reproduce.engine_comparison import side_by_side
from fpgasim.reproduce.experiment_runner import output_columns
from fpgasim.reproduce.kind import (
    BesideSpec,
    Decision,
    EngineComparison,
    ExperimentKind,
    External,
    experiment_kind,
    experiment_kinds,
)
from fpgasim.reproduce.output import write_outputs
from fpgasim.reproduce.prefetch import simulator_passes
from tests import experiment_kind_best_x as demo

PACKAGE = Path(__file__).resolve().parents[2] / "fpgasim"
SHIPPED = sorted(m.name for m in pkgutil.iter_modules(kinds_package.__path__))


def test_every_kind_module_registers_one_record_named_after_it() -> None:
    kinds = experiment_kinds()
    assert set(SHIPPED) <= set(kinds) and len(SHIPPED) >= 10
    for name in SHIPPED:
        module = __import__(f"fpgasim.reproduce.kinds.{name}", fromlist=["KIND"])
        assert module.KIND is kinds[name] and module.KIND.name == name


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_kind_has_every_field(name: str) -> None:
    kind = experiment_kind(name)
    types = {
        "name": str, "doc": str, "columns": tuple, "decision": Decision | None,
        "beside": BesideSpec | None, "compare": EngineComparison | None,
        "external": External | None,
    }  # fmt: skip
    assert {f.name for f in dataclasses.fields(ExperimentKind)} == {*types, "render", "plot"}
    for field, want in types.items():
        assert isinstance(getattr(kind, field), want), (name, field)
    assert kind.doc and kind.columns and len(set(kind.columns)) == len(kind.columns)
    if kind.external is not None:  # computed by one function: nothing of reproduce's own
        assert kind.render is kind.plot is kind.decision is kind.beside is kind.compare is None
        if not kind.external.slow:  # the slow doc tables: tests/reproduce/test_doc_tables.py
            table = kind.external.table(resolve("experiment", name))
            assert list(table.columns) == list(kind.columns)
        return
    assert callable(kind.render)
    assert kind.plot is None or callable(kind.plot)
    # a timed kind is put beside the simulator and compared across engines; a decision is
    # a column of its own
    assert (kind.beside is not None) == kind.timed == (kind.compare is not None), name
    assert (kind.decision is not None) == ("decision" in kind.columns), name


def test_derived_facts_follow_the_records() -> None:
    kinds = experiment_kinds()
    schemas = experiment_schemas()
    assert set(schemas) == set(kinds)
    for kind in kinds.values():
        want = Experiment if kind.external is None else kind.external.schema
        assert schemas[kind.name] is want
        assert bool(beside_columns(kind.name)) == (kind.beside is not None)


def test_no_other_module_names_a_kind() -> None:
    """Only a kind's own module spells its name (external kinds are named by their own
    package; a kind name that is also an experiment field, tree_methods, is skipped)."""
    names = [n for n in SHIPPED
             if experiment_kind(n).external is None and n not in Experiment.model_fields]
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        for name in names:
            if path == PACKAGE / "reproduce" / "kinds" / f"{name}.py":
                continue
            assert not re.search(rf"[\"']{name}[\"']", text), (name, path)


def test_a_record_refuses_what_its_kind_cannot_write() -> None:
    kind = experiment_kind("boards_grid")
    with pytest.raises(ValueError, match="not among its columns"):
        dataclasses.replace(kind, decision=Decision("speedup", "verify_len"))
    with pytest.raises(ValueError, match="exactly one of render and external"):
        dataclasses.replace(kind, render=None)


@pytest.fixture
def demo_kind() -> Iterator[None]:
    demo.register()
    yield
    demo.unregister()


def _demo_file(tmp_path: Path, **changes: object) -> Path:
    data = {
        "name": "demo", "title": "A test-only kind", "kind": demo.NAME,
        "workloads": [{"boards": ["u280"], "models": ["llama-3.1-8b"],
                       "algorithm": "longspec", "tasks": ["gov_report"],
                       "contexts": [1024, 4096]}],
        "aat": {"source": "measured", "files": ["longspec_llama31_tree.csv"]},
        "columns": ["board", "context", "best_verify_len", "speedup"],
        "extra_columns": ["best_tree"], "figure": True, **changes,
    }  # fmt: skip
    path = tmp_path / "demo.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.slow
def test_a_kind_from_tests_runs_like_a_shipped_one(demo_kind, tmp_path: Path,
                                                   aat_dir: Path) -> None:
    path = _demo_file(tmp_path)
    exp = load_experiment(path)
    assert isinstance(exp, Experiment) and exp.kind == demo.NAME
    report = check_file(path)  # `fpgasim validate` knows it
    assert report.ok and report.kind == f"experiment {demo.NAME}", report.lines()
    # its columns are checked against its record
    with pytest.raises(ConfigError, match="unknown column"):
        load_experiment(_demo_file(tmp_path, extra_columns=["regime"]))
    # the simulator: `fast` (the same cycles as `event`, tests/engine/test_fast.py)
    ctx = RunContext(get_engine("analytic"), aat_dir, get_engine("fast"))
    assert simulator_passes([exp], ctx)  # its passes are planned like a shipped kind's
    result = run_experiment(exp, ctx=ctx)
    table = result.table
    # the decision rule places `decision` before the x; the simulator's twins follow
    assert list(table.columns) == output_columns(exp, sim=True)
    assert list(table.columns[:5]) == ["board", "context", "decision", "best_verify_len",
                                       "speedup"]
    assert {"speedup_sim", "speedup_ratio", "sim_reason"} <= set(table.columns)
    assert len(table) == 2 and set(table["sim_engine"]) == {"fast"}
    written = write_outputs(result, tmp_path / "out")
    assert sorted(p.name for p in written) == ["demo.csv", "demo.md", "demo.png"]
    alone = run_experiment(exp, ctx=RunContext(get_engine("fast"), aat_dir))
    compared = side_by_side(run_experiment(exp, ctx=RunContext(get_engine("analytic"),
                                                               aat_dir)), alone)
    assert len(compared) == 2 and "speedup ratio" in compared


def test_an_unknown_kind_is_refused_with_the_registered_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_experiment(_demo_file(tmp_path))
    assert info.value.field == "kind" and "boards_grid" in str(info.value.allowed)
