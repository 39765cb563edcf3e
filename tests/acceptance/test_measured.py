"""AAT table loader: the reference layout, the per-x tree table, and one-line errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fpgasim.acceptance.measured import (
    AAT_COLUMNS,
    load_aat_tables,
    ori_row,
    pick_file,
    select_curve,
    table_tree,
    tree_of_row,
    workload_rows,
)
from fpgasim.config import load_algorithm
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import ConfigError, InputError

LONGSPEC = load_algorithm("longspec").drafter
EAGLE3 = load_algorithm("eagle3").drafter
HEADER = ",".join(AAT_COLUMNS)
GOOD_ROWS = [
    "longspec,llama-3.1-8b,gov_report,128,tree,prior_score,2,1 0,1.8",
    "longspec,llama-3.1-8b,gov_report,128,tree,prior_score,5,2 2,2.6",
    "longspec,llama-3.1-8b,gov_report,128,tree,prior_score,13,4 4 3 1,3.6",
    "longspec,llama-3.1-8b,gov_report,128,tree,prior_score,33,4 11 10 6 1,4.3",
    "longspec,llama-3.1-8b,gov_report,128,tree,original,69,4 16 16 16 16,4.7",
]


def write(tmp_path: Path, name: str, lines: list[str], header: str = HEADER) -> Path:
    path = tmp_path / name
    path.write_text("\n".join([header, *lines]) + "\n")
    return path


def test_reference_folder_loads(aat_dir: Path) -> None:
    tables = load_aat_tables(aat_dir)
    assert tables.tree_table is not None
    assert "tree_shapes_by_verify_len.csv" in tables.files
    assert tables.tree_table["verify_len"].tolist() == list(range(2, 86))
    rows = tables.rows
    assert set(rows["algorithm"]) == {"longspec", "eagle3"}
    assert (rows["method"] == "original").sum() == 8
    assert rows["draft_depth"].notna().any()
    # the Ori rows are not part of the searched curve
    ls = workload_rows(tables, "longspec", "longspec", "llama-3.1-8b")
    curve = select_curve(ls, "gov_report", 128, "prior_score")
    assert 69 not in set(curve["verify_len"])
    assert curve["file"].nunique() == 1 and curve["verify_len"].is_monotonic_increasing
    ori = ori_row(ls, "gov_report", 128, curve["file"].iloc[0])
    assert ori is not None and ori["verify_len"] == 69
    assert tree_of_row(ori, LONGSPEC) == TokenTree.from_shape((4, 16, 16, 16, 16))
    assert table_tree(tables.tree_table, EAGLE3, 61) is not None
    wide = TokenTree.from_shape((4, 16, 16, 16, 16, 16))
    assert table_tree(tables.tree_table, LONGSPEC, 85) == wide


def test_task_file_is_preferred_for_a_task_set(aat_dir: Path) -> None:
    tables = load_aat_tables(aat_dir)
    ls = workload_rows(tables, "longspec", "longspec", "llama-3.1-8b")
    alone = select_curve(ls, "gov_report", 1024, "prior_score")
    assert alone["file"].iloc[0] == "longspec_llama31_tree.csv"  # most points
    tasks = ["gov_report", "qmsum", "lcc"]
    together = select_curve(ls, "gov_report", 1024, "prior_score", tasks)
    assert together["file"].iloc[0] == "longspec_llama31_tasks_ctx1024.csv"


def test_small_file_and_parquet_round_trip(tmp_path: Path) -> None:
    csv = write(tmp_path, "a.csv", GOOD_ROWS)
    tables = load_aat_tables(csv)
    assert len(tables.rows) == 5 and tables.tree_table is None
    assert tables.rows.loc[0, "tree_shape"] == "1 0"
    frame = pd.read_csv(csv, dtype={"tree_shape": str}, keep_default_na=False)
    pq_dir = tmp_path / "pq"
    pq_dir.mkdir()
    frame.to_parquet(pq_dir / "a.parquet", index=False)
    (pq_dir / "README.md").write_text("ignored")
    again = load_aat_tables(pq_dir)
    cols = ["context", "verify_len", "tree_shape", "aat"]
    pd.testing.assert_frame_equal(again.rows[cols], tables.rows[cols])


@pytest.mark.parametrize(
    ("line", "field", "allowed"),
    [
        (
            "longspec,llama-3.1-8b,gov_report,abc,tree,prior_score,3,1 1,2.0",
            "column context",
            "whole",
        ),
        (
            "longspec,llama-3.1-8b,gov_report,128,bush,prior_score,3,1 1,2.0",
            "column structure",
            "tree",
        ),
        (
            "longspec,llama-3.1-8b,gov_report,128,tree,magic,3,1 1,2.0",
            "column method",
            "prior_score",
        ),
        ("longspec,llama-3.1-8b,gov_report,128,tree,prior_score,3,1 1,7.0", "column aat", "(0,"),
        ("longspec,llama-3.1-8b,gov_report,128,tree,prior_score,3,1 1,nan", "column aat", "(0,"),
        (
            "longspec,llama-3.1-8b,gov_report,128,tree,prior_score,3,0 1,2.0",
            "column tree_shape",
            "first",
        ),
        ("longspec,llama-3.1-8b,,128,tree,prior_score,3,1 1,2.0", "column task", "non-empty"),
        ("longspec,llama-3.1-8b,gov_report,128,tree,prior_score,2,1 0,1.9", "line 7", "same key"),
    ],
)
def test_bad_cells_name_file_line_column(tmp_path: Path, line: str, field: str, allowed: str):
    path = write(tmp_path, "bad.csv", [*GOOD_ROWS, line])
    with pytest.raises(ConfigError) as info:
        load_aat_tables(path)
    message = str(info.value)
    assert str(path) in message and "line 7" in message
    assert field in message and allowed in message


def test_bad_headers_and_folders(tmp_path: Path) -> None:
    missing = write(tmp_path, "m.csv", ["x"], header="algorithm,model")
    with pytest.raises(ConfigError, match="missing task"):
        load_aat_tables(missing)
    (tmp_path / "e").mkdir()
    extra = write(tmp_path / "e", "e.csv", [r + ",1" for r in GOOD_ROWS], HEADER + ",colour")
    with pytest.raises(ConfigError, match="unknown colour"):
        load_aat_tables(extra)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError, match="at least one .csv"):
        load_aat_tables(empty)
    with pytest.raises(ConfigError, match="folder"):
        load_aat_tables(tmp_path / "nope")
    blank = tmp_path / "blank.csv"
    blank.write_text("")
    with pytest.raises(ConfigError, match="empty file"):
        load_aat_tables(blank)
    only_tree = tmp_path / "t"
    only_tree.mkdir()
    write(
        only_tree,
        "shapes.csv",
        ["2,1 1,3,3"],
        "verify_len,longspec_tree_shape,eagle3_depth,eagle3_top_k",
    )
    with pytest.raises(ConfigError, match="no AAT rows"):
        load_aat_tables(only_tree)


def test_tree_table_validation(tmp_path: Path) -> None:
    header = "verify_len,longspec_tree_shape,eagle3_depth,eagle3_top_k"
    write(tmp_path, "a.csv", GOOD_ROWS)
    write(tmp_path, "t.csv", ["2,1 1,3,3", "2,1 1,3,3"], header)
    with pytest.raises(ConfigError, match="each x once"):
        load_aat_tables(tmp_path)
    write(tmp_path, "t.csv", ["1,1,3,3"], header)
    with pytest.raises(ConfigError, match="verify_len"):
        load_aat_tables(tmp_path)


def test_selection_errors(tmp_path: Path) -> None:
    tables = load_aat_tables(write(tmp_path, "a.csv", GOOD_ROWS))
    with pytest.raises(InputError, match="the AAT tables for longspec hold: llama-3.1-8b"):
        workload_rows(tables, "longspec", "longspec", "vicuna-7b-v1.5")
    with pytest.raises(InputError, match="hold: longspec"):
        workload_rows(tables, "eagle3", "eagle3", "llama-3.1-8b")
    rows = workload_rows(tables, "longspec", "longspec", "llama-3.1-8b")
    with pytest.raises(InputError, match="measured contexts for task gov_report: 128"):
        select_curve(rows, "gov_report", 256, "prior_score")


def test_eagle3_trees_from_rows() -> None:
    row = {"tree_shape": "", "draft_depth": 5, "draft_top_k": 4}
    assert tree_of_row(row, EAGLE3) == TokenTree.dynamic(5, 4)
    chain = {"tree_shape": "1 1 1", "draft_depth": None, "draft_top_k": None}
    assert tree_of_row(chain, EAGLE3) == TokenTree.dynamic(3, 1)
    assert tree_of_row({"tree_shape": ""}, LONGSPEC) is None


def test_pick_file_prefers_requested_tasks_then_rows_then_name() -> None:
    """A curve's file: the one holding most of the requested tasks, then the most rows,
    then the first name."""
    rows = pd.DataFrame({
        "file": ["b.csv", "b.csv", "b.csv", "a.csv", "a.csv", "c.csv", "c.csv", "c.csv"],
        "task": ["t1", "t1", "t9", "t1", "t2", "t1", "t2", "t9"],
        "aat": [2.0] * 8,
    })  # fmt: skip
    assert pick_file(rows, ["t1", "t2"]) == "c.csv"  # both tasks: c (3 rows) over a (2)
    assert pick_file(rows, ["t1"]) == "b.csv"  # one task each: b and c have 3 rows, b first
    assert pick_file(rows, ["t7"]) == "b.csv"  # no task anywhere: rows, then name
    assert pick_file(rows[rows["file"] == "a.csv"], ["t9"]) == "a.csv"
