"""Published doc tables come from `reproduce` kinds (issue 44 item 4), not side scripts.

Each doc table is an experiment file of workloads/experiments whose kind (one module of
`fpgasim.reproduce.kinds`) names the doc it feeds: `fpgasim reproduce NAME` writes NAME.csv
(docs/NAME.csv where the doc ships one, byte for byte) and NAME.md (the doc's Markdown
block, verbatim, where the kind gives one). The fast ones run here; the slow ones (minutes
each: `fpgasim reproduce docs`) run with FPGASIM_DOC_TABLES=1. Beside these snapshots, the
independent checks of each table's content live with its subject: the HBM model against
AMD's published measurements (tests/config/test_memory_access.py), the acceptance rule's
reading of every measured row (tests/acceptance/test_rule.py), the study arrays' DSP marks
of the batch crossover (tests/config/test_fit_marks.py).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from fpgasim.reproduce import csv_text, load_experiment, run_experiment
from fpgasim.reproduce.experiment_loader import (
    ExternalExperiment,
    all_experiment_names,
    doc_experiment_names,
    study_experiment_names,
)

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
FAST = doc_experiment_names(slow=False)
SLOW = doc_experiment_names(slow=True)
RUN_SLOW = os.environ.get("FPGASIM_DOC_TABLES") == "1"


def _doc_path(name: str) -> Path:
    """The doc file an experiment's kind feeds (its `doc`: 'docs/x.md (section)')."""
    exp = load_experiment(name)
    assert isinstance(exp, ExternalExperiment)
    return REPO / exp.external.doc.split(" ")[0]


def test_the_doc_tables_are_experiments_naming_their_doc() -> None:
    assert {"hbm_patterns", "embedded_vs_measured"} <= set(FAST)
    assert {"batch_crossover", "moe_crossover", "energy_sd"} <= set(FAST) | set(SLOW)
    for name in FAST + SLOW:
        assert _doc_path(name).is_file(), name
        # the doc says how the table is made: by this experiment, not a script
        assert f"fpgasim reproduce {name}" in " ".join(_doc_path(name).read_text().split()), name


def test_all_runs_the_fast_doc_tables_and_docs_every_one() -> None:
    assert all_experiment_names() == [*study_experiment_names(), *FAST]
    assert not set(SLOW) & set(all_experiment_names())
    assert doc_experiment_names() == sorted(FAST + SLOW, key=doc_experiment_names().index)


def test_no_side_script_writes_a_doc() -> None:
    """No script of benchmarks/ writes a file of docs/ (a doc table is a `reproduce` kind),
    and no converted script is left beside its kind."""
    for path in sorted((REPO / "benchmarks").glob("*.py")):
        assert path.stem not in FAST + SLOW, path.name
        text = path.read_text()
        writes = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Attribute)
                  and n.attr in ("to_csv", "write_text", "write_bytes")]
        assert not (writes and '"docs"' in text), path.name


def _check(name: str) -> None:
    """`reproduce NAME` gives docs/NAME.csv byte for byte and the doc's block verbatim."""
    result = run_experiment(name)
    shipped = DOCS / f"{name}.csv"
    if shipped.exists():
        assert csv_text(result) == shipped.read_text(), name
    if result.doc_block:
        assert result.doc_block in _doc_path(name).read_text(), name


@pytest.mark.slow
@pytest.mark.parametrize("name", FAST)
def test_a_fast_doc_table_reproduces_its_doc(name: str) -> None:
    _check(name)


if RUN_SLOW:  # minutes each (batch_crossover about an hour on 2 busy cores): defined only
    # when FPGASIM_DOC_TABLES=1 asks for them, so the suite neither runs nor skips them

    @pytest.mark.slow
    @pytest.mark.parametrize("name", SLOW)
    def test_a_slow_doc_table_reproduces_its_doc(name: str) -> None:
        _check(name)
