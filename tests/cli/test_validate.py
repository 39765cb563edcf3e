"""`fpgasim validate`: every problem of every file on its own line; exit 2 if any."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from fpgasim.cli.validate_files import check_file, validate_files
from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]


def write_yaml(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data))
    return path


def design_data() -> dict:
    return yaml.safe_load((REPO / "designs" / "study.yaml").read_text())


def test_shipped_files_are_ok(capsys) -> None:
    folders = [str(REPO / f) for f in ("boards", "fpgas", "designs", "workloads")]
    res = run_cli(capsys, "validate", *folders)
    assert res.code == 0, res.out + res.err
    lines = res.out.strip().splitlines()
    expected = [p for f in ("boards", "fpgas", "designs") for p in sorted(REPO.glob(f"{f}/*.yaml"))]
    expected += sorted(REPO.glob("workloads/**/*.yaml"))
    expected += sorted(REPO.glob("workloads/aat/*.csv"))  # the shipped measured AAT tables
    expected += sorted(REPO.glob("workloads/models/hf/*.json"))  # Hugging Face configs
    assert len(lines) == len(expected) and res.err == ""
    assert all(": ok (" in line for line in lines)
    for kind in ("board", "fpga", "design"):
        assert any(line.endswith(f": ok ({kind})") for line in lines), kind


def test_reference_aat_tables_are_ok(aat_dir: Path, capsys) -> None:
    res = run_cli(capsys, "validate", str(aat_dir))
    assert res.code == 0, res.out
    assert "tree_shapes_by_verify_len.csv: ok (tree table)" in res.out
    assert "longspec_llama31_tree.csv: ok (AAT table)" in res.out


def test_every_schema_problem_is_listed(tmp_path: Path, capsys) -> None:
    data = design_data()
    data["clock_mhz"] = -1
    data["mm_rows"] = "many"
    data["colour"] = "red"
    del data["sfu"]
    path = write_yaml(tmp_path / "mine.yaml", data)
    res = run_cli(capsys, "validate", str(path))
    assert res.code == 2 and res.out == ""  # findings of a failing run go to stderr
    *lines, summary = res.err.strip().splitlines()
    assert len(lines) == 4
    fields = {line.split(": ")[1].split(" = ")[0] for line in lines}
    assert fields == {"clock_mhz", "mm_rows", "colour", "sfu"}
    assert all(line.startswith(f"{path}: ") for line in lines)
    assert "clock_mhz = -1: Input should be greater than or equal to 1" in res.err
    assert summary == "fpgasim: error: 4 problems in 1 of 1 file"


def test_kind_by_folder_beats_fields(tmp_path: Path) -> None:
    model = yaml.safe_load((REPO / "workloads/models/llama-3.1-8b.yaml").read_text())
    report = check_file(write_yaml(tmp_path / "boards" / "x.yaml", model))
    assert report.kind == "board" and not report.ok
    assert check_file(write_yaml(tmp_path / "any" / "x.yaml", model)).kind == "model"
    algo = yaml.safe_load((REPO / "workloads/algorithms/eagle3.yaml").read_text())
    assert check_file(write_yaml(tmp_path / "y.yml", algo)).kind == "algorithm"


@pytest.mark.parametrize(
    ("content", "field"),
    [
        (b"", "(top level)"),
        (b"\x00\xff\xfe junk \x89PNG", "file"),
        (b"a: [1, 2\nb: {", "line"),
        (b"- 1\n- 2\n", "(top level)"),
        (b"foo: 1\nbar: 2\n", "(kind)"),
    ],
)
def test_broken_yaml_is_one_problem(tmp_path: Path, content: bytes, field: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_bytes(content)
    report = check_file(path)
    assert len(report.problems) == 1 and report.problems[0].field.startswith(field)


def test_missing_file_and_folder_expansion(tmp_path: Path, capsys) -> None:
    res = run_cli(capsys, "validate", str(tmp_path / "nope.yaml"))
    assert res.code == 2 and "nope.yaml: file = " in res.err and "not found" in res.err
    res = run_cli(capsys, "validate", str(tmp_path))
    assert res.code == 2 and "no YAML, JSON config, CSV or Parquet files" in res.err


AAT_HEADER = "algorithm,model,task,context,structure,method,verify_len,tree_shape,aat\n"
GOOD_ROW = "longspec,llama-3.1-8b,gov_report,128,tree,prior_score,{x},{shape},{aat}\n"


def aat_csv(path: Path, rows: list[str], header: str = AAT_HEADER) -> Path:
    path.write_text(header + "".join(rows))
    return path


def test_aat_table_rows_are_labelled(tmp_path: Path, capsys) -> None:
    rows = [
        GOOD_ROW.format(x=2, shape="1", aat=1.8),
        GOOD_ROW.format(x=3, shape="1 1", aat="nan"),  # line 3
        GOOD_ROW.format(x=4, shape="2 1", aat=2.1),
        GOOD_ROW.format(x=-5, shape="2 2", aat=2.3),  # line 5
        GOOD_ROW.format(x=6, shape="0 3", aat=2.4),  # line 6
    ]
    path = aat_csv(tmp_path / "t.csv", rows)
    res = run_cli(capsys, "validate", str(path))
    assert res.code == 2 and res.out == ""
    *lines, summary = res.err.strip().splitlines()
    assert [line.split(": ")[1].split(",")[0] for line in lines] == ["line 3", "line 5", "line 6"]
    assert "column aat" in lines[0] and "column verify_len" in lines[1]
    assert "column tree_shape" in lines[2]
    assert summary.startswith("fpgasim: error: ")


def test_aat_duplicates_and_columns(tmp_path: Path) -> None:
    dup = aat_csv(tmp_path / "d.csv", [GOOD_ROW.format(x=2, shape="1", aat=1.8)] * 2)
    (problem,) = check_file(dup).problems
    assert problem.field == "line 3" and "same key" in problem.allowed
    cols = aat_csv(
        tmp_path / "c.csv",
        ["longspec,llama-3.1-8b,128,tree,2,1.8,x\n"],
        header="algorithm,model,context,structure,verify_len,aat,colour\n",
    )
    fields = sorted(p.field for p in check_file(cols).problems)
    assert fields == ["column colour", "column method", "column task", "column tree_shape"]


def test_parquet_and_tree_tables(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "algorithm": ["eagle3"],
            "model": ["llama-3.1-8b"],
            "task": ["gov_report"],
            "context": [128],
            "structure": ["tree"],
            "method": ["eagle3_dynamic"],
            "verify_len": [5],
            "tree_shape": [None],
            "aat": [2.5],
            "draft_depth": [3],
            "draft_top_k": [3],
        }
    )
    frame.to_parquet(tmp_path / "a.parquet")
    assert check_file(tmp_path / "a.parquet").ok
    frame.assign(aat=[9.0]).to_parquet(tmp_path / "b.parquet")
    (problem,) = check_file(tmp_path / "b.parquet").problems
    assert problem.field == "row 1, column aat"
    (tmp_path / "s.csv").write_text(
        "verify_len,longspec_tree_shape,eagle3_depth,eagle3_top_k\n2,1,3,3\n1,1,3,3\n"
    )
    (problem,) = check_file(tmp_path / "s.csv").problems
    assert problem.field == "line 3, column verify_len"
    (tmp_path / "junk.parquet").write_bytes(b"PAR1 not really")
    assert check_file(tmp_path / "junk.parquet").problems[0].field == "file"


def test_unrecognised_table(tmp_path: Path, capsys) -> None:
    path = tmp_path / "other.csv"
    path.write_text("a,b\n1,2\n")
    # neither an AAT nor a per-x tree table: checked as a trace table, which needs `ranks`
    report = check_file(path)
    assert report.kind == "trace table"
    (problem,) = report.problems
    assert problem.field == "ranks"
    res = run_cli(capsys, "validate", str(path))
    assert res.code == 2 and "ranks" in res.err + res.out


def test_problems_are_capped(tmp_path: Path) -> None:
    rows = [GOOD_ROW.format(x=k, shape="1", aat=-1) for k in range(2, 400)]
    report = check_file(aat_csv(tmp_path / "many.csv", rows))
    assert len(report.problems) == 101 and report.problems[-1].field == "(more)"


def test_experiment_files(tmp_path: Path) -> None:
    (problem,) = check_file(write_yaml(tmp_path / "experiments" / "e.yaml", {"id": "e"})).problems
    assert problem.field == "kind" and "dovetail1" in problem.allowed
    data = yaml.safe_load((REPO / "workloads/experiments/dovetail1.yaml").read_text())
    data["context"] = 0
    data["rows"][0]["omega"] = "fast"
    report = check_file(write_yaml(tmp_path / "elsewhere.yaml", data))
    assert report.kind == "experiment dovetail1"
    assert sorted(p.field for p in report.problems) == ["context", "rows.0.omega"]


def test_library_keeps_order(tmp_path: Path) -> None:
    shutil.copy(REPO / "boards" / "u280.yaml", tmp_path / "b.yaml")
    reports = validate_files([tmp_path / "b.yaml", tmp_path / "missing.csv"])
    assert [r.ok for r in reports] == [True, False]


def test_shipped_platforms_validate(repo) -> None:
    paths = sorted((repo / "platforms").glob("*.yaml"))
    assert paths
    for path in paths:
        report = check_file(path)
        assert report.ok and report.kind == "platform", report.lines()
