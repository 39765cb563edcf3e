"""The study's measured AAT tables ship in workloads/aat: complete, documented, the default."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fpgasim.acceptance import load_aat_tables
from fpgasim.reproduce import Experiment, experiment_names, load_experiment
from fpgasim.reproduce.workloads import aat_folder, shipped_aat_dir

REPO = Path(__file__).resolve().parents[2]


def test_every_experiment_file_ships_and_the_readme_documents_each() -> None:
    folder = shipped_aat_dir()
    assert folder == REPO / "workloads" / "aat"
    shipped = {p.name for p in folder.glob("*.csv")}
    readme = (folder / "README.md").read_text()
    for name in experiment_names():
        exp = load_experiment(name)
        if isinstance(exp, Experiment):
            assert set(exp.aat.files) <= shipped, (name, set(exp.aat.files) - shipped)
            for f in exp.aat.files:
                row = next(line for line in readme.splitlines() if line.startswith(f"| {f} "))
                assert name in row, (f, name)  # the README says which experiment reads it
    for f in shipped:
        assert f"| {f} |" in readme, f
    assert "Source:" in readme and "public data" in readme


def test_shipped_tables_load_and_hold_the_studys_curves() -> None:
    tables = load_aat_tables(shipped_aat_dir())
    tree = pd.read_csv(shipped_aat_dir() / "longspec_llama31_tree.csv")
    assert sorted(tree["context"].unique()) == [128, 256, 512, 1024, 2048, 4096, 8192, 16384]
    searched = tree[tree["method"] == "prior_score"]
    assert searched.groupby("context")["verify_len"].nunique().eq(43).all()
    assert (tree.loc[tree["method"] == "original", "verify_len"] == 69).all()
    assert tables is not None


def test_aat_choice() -> None:
    assert aat_folder() == shipped_aat_dir()
    assert aat_folder("embedded") is None
    assert aat_folder("measured", REPO / "workloads" / "aat") == REPO / "workloads" / "aat"
