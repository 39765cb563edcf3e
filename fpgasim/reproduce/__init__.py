"""Reproduction of the study's tables and figures from experiment files (docs/reproduction.md).

`workloads/experiments/NAME.yaml` (schema `Experiment`) names a kind of
`EXPERIMENT_KINDS`; `run_experiment(NAME, engine=..., aat_dir=...)` renders it as an
`ExperimentResult` (a tidy table, the AAT source and engine it used, notes), and
`write_outputs` writes NAME.csv, NAME.md and, for figures, NAME.png.
"""

from fpgasim.reproduce.kinds import EXPERIMENT_KINDS, ExperimentKind
from fpgasim.reproduce.loader import (
    EXTERNAL_KINDS,
    ExternalExperiment,
    experiment_names,
    load_experiment,
    study_experiment_names,
)
from fpgasim.reproduce.output import csv_text, markdown, write_outputs
from fpgasim.reproduce.runner import ExperimentResult, output_columns, run_experiment
from fpgasim.reproduce.schema import KIND_COLUMNS, Experiment
from fpgasim.reproduce.workloads import RunContext, check_aat_dir

__all__ = [
    "EXPERIMENT_KINDS",
    "EXTERNAL_KINDS",
    "Experiment",
    "ExperimentKind",
    "ExperimentResult",
    "ExternalExperiment",
    "KIND_COLUMNS",
    "RunContext",
    "check_aat_dir",
    "csv_text",
    "experiment_names",
    "load_experiment",
    "markdown",
    "output_columns",
    "run_experiment",
    "study_experiment_names",
    "write_outputs",
]
