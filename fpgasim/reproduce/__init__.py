"""Reproduction of the study's tables and figures from experiment files (docs/reproduction.md).

`workloads/experiments/NAME.yaml` (schema `Experiment`) names a kind, one `ExperimentKind`
record of `fpgasim.reproduce.kinds` (the registry: `experiment_kinds`);
`run_experiment(NAME, engine=..., aat_dir=...)` renders it as an `ExperimentResult` (a tidy
table, the AAT source and engine it used, notes), and `write_outputs` writes NAME.csv,
NAME.md and, for figures, NAME.png.
"""

from fpgasim.reproduce.experiment_loader import (
    ExternalExperiment,
    experiment_names,
    load_experiment,
    study_experiment_names,
)
from fpgasim.reproduce.experiment_runner import ExperimentResult, output_columns, run_experiment
from fpgasim.reproduce.experiment_schema import Experiment
from fpgasim.reproduce.kind import (
    ExperimentKind,
    experiment_kind,
    experiment_kinds,
    register_kind,
)
from fpgasim.reproduce.output import csv_text, markdown, write_outputs
from fpgasim.reproduce.workloads import RunContext, check_aat_dir

__all__ = [
    "Experiment",
    "ExperimentKind",
    "ExperimentResult",
    "ExternalExperiment",
    "RunContext",
    "check_aat_dir",
    "csv_text",
    "experiment_kind",
    "experiment_kinds",
    "experiment_names",
    "load_experiment",
    "markdown",
    "output_columns",
    "register_kind",
    "run_experiment",
    "study_experiment_names",
    "write_outputs",
]
