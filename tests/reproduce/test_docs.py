"""docs/reproduction.md: its example experiment runs, and it documents every schema field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from fpgasim.reproduce import Experiment, load_experiment, run_experiment
from fpgasim.reproduce.experiment_schema import AatSpec, VerifyRange, Workload

DOC = Path(__file__).resolve().parents[2] / "docs" / "reproduction.md"


def example(tmp_path: Path) -> Path:
    (block,) = re.findall(r"```yaml\n(.*?)```", DOC.read_text(), flags=re.S)
    path = tmp_path / "eagle3_boards.yaml"
    path.write_text(block)
    return path


@pytest.mark.slow
def test_example_runs_on_both_sources(tmp_path: Path, aat_dir: Path) -> None:
    exp = load_experiment(str(example(tmp_path)))
    assert isinstance(exp, Experiment) and exp.name == "eagle3_boards"
    measured = run_experiment(exp, engine="analytic", aat_dir=aat_dir)
    assert len(measured.table) == 12 and measured.table["speedup"].gt(1).all()
    embedded = run_experiment(exp, engine="analytic")
    assert set(embedded.table["aat_source"]) == {"embedded"}


def test_every_field_is_documented() -> None:
    text = DOC.read_text()
    for schema in (Experiment, Workload, VerifyRange, AatSpec):
        for field in schema.model_fields:
            assert f"`{field}`" in text, (schema.__name__, field)


def test_shipped_files_parse_as_yaml_mappings() -> None:
    for path in sorted(DOC.parents[1].glob("workloads/experiments/*.yaml")):
        assert isinstance(yaml.safe_load(path.read_text()), dict), path
