"""Experiment files: every shipped one loads, the column contract (docs/reproduction.md),
bad files."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fpgasim.cli.validate_files import check_file, experiment_schemas
from fpgasim.errors import ConfigError
from fpgasim.reproduce import (
    Experiment,
    ExternalExperiment,
    experiment_names,
    load_experiment,
)
from fpgasim.reproduce.kind import kind_names

REPO = Path(__file__).resolve().parents[2]

#: The CSV contract of docs/reproduction.md, column for column.
CONTRACT = {
    "table1": ["context", "method", "verify_len", "tokens_per_s", "speedup"],
    "table2": [
        "task",
        "best_verify_len",
        "best_speedup",
        "unified_verify_len",
        "unified_speedup",
    ],
    "table3": ["method", "verify_len", "tokens_per_s", "speedup"],
    "table4": [
        "board",
        "context",
        "ar_tokens_per_s",
        "best_verify_len",
        "best_tokens_per_s",
        "speedup",
    ],
    "fig4": [
        "algorithm",
        "model",
        "context",
        "ar_tokens_per_s",
        "best_verify_len",
        "best_tokens_per_s",
        "speedup",
    ],
    "fig1": ["context", "verify_len", "aat", "speedup"],
    "fig2": ["context", "verify_len", "p", "p_disc", "aat", "ar", "p_eff"],
    "fig5": ["context", "A", "B", "C", "r2", "n_fit_points"],
    "fig6": ["method", "verify_len", "aat"],
}


def test_every_study_experiment_is_shipped_with_the_contract_columns() -> None:
    names = experiment_names()
    assert names[:9] == [
        "table1",
        "table2",
        "table3",
        "table4",
        "fig1",
        "fig2",
        "fig4",
        "fig5",
        "fig6",
    ]
    for name, columns in CONTRACT.items():
        exp = load_experiment(name)
        assert isinstance(exp, Experiment) and exp.name == name
        assert exp.columns == columns, name
        assert exp.figure == name.startswith("fig"), name


def test_external_kinds_are_routed() -> None:
    exp = load_experiment("dovetail1")
    assert isinstance(exp, ExternalExperiment) and exp.kind == "dovetail1"


def test_registry_matches_schema_and_validate() -> None:
    for kind in kind_names(external=False):  # `fpgasim validate` checks every kind's files
        assert experiment_schemas()[kind] is Experiment
    for name in CONTRACT:
        report = check_file(REPO / "workloads" / "experiments" / f"{name}.yaml")
        assert report.ok and report.kind.startswith("experiment"), report.lines()


def _write(tmp_path: Path, **changes) -> Path:
    data = yaml.safe_load((REPO / "workloads/experiments/table4.yaml").read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"colour": "red"}, "colour", "unknown field"),
        ({"kind": "pie_chart"}, "kind", "context_sets"),
        ({"columns": ["board", "speed"]}, "(top level)", "unknown column(s) speed"),
        ({"columns": ["board", "board"]}, "(top level)", "listed twice"),
        ({"figure": True}, "(top level)", "figure: true but kind context_sets"),
        ({"verify_lens": {"min": 9, "max": 3}}, "verify_lens", "min = 9 > max = 3"),
        ({"aat": {"files": ["../x.csv"]}}, "aat", "plain file names"),
        ({"aat": {"files": ["a.csv"], "embedded": False}}, "aat", "embedded_reason"),
        ({"workloads": [{"boards": ["v80"], "models": ["m"], "algorithm": "a"}]}, "contexts", ""),
    ],
)
def test_bad_experiment_files_name_the_field(tmp_path, changes, field, words) -> None:
    if changes.get("figure"):
        changes["kind"] = "context_sets"
        changes["columns"] = ["context"]
        changes["extra_columns"] = []
    path = _write(tmp_path, **changes)
    with pytest.raises(ConfigError) as err:
        load_experiment(str(path))
    assert str(path) in str(err.value)
    assert field in err.value.field
    assert words in str(err.value)


def test_unknown_name_lists_the_shipped_ones() -> None:
    with pytest.raises(ConfigError, match="table4"):
        load_experiment("table9")
