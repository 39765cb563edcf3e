"""Hostile battery, round 4: names from the file system and from files are data (issue 43,
Deliver 4, and the third battery's leftovers).

A name that came from a path or a file (a model id from a folder's name, a board's `name:`,
a task in an AAT table, a file in an AAT folder) reaches the terminal, a table, a CSV file
and a figure title as visible text: no escape sequence, no rich markup, no mathtext, no
internal error. A field naming a file cannot leave its folder.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from tests.cli_helpers import run_cli, run_subprocess

REPO = Path(__file__).resolve().parents[2]
HF = REPO / "workloads" / "models" / "hf"
#: what a hostile name carries: an escape sequence, a bell, a bidi override, rich markup
#: (an unmatched closing tag raised MarkupError) and an emoji code
HOSTILE = "evil\x1b[31mRED\x07\u202e[bold]x[/]:fire:"
TERMINAL_ACTIVE = ("\x1b", "\x07", "\u202e")


def clean(text: str) -> None:
    """No character a terminal acts on."""
    assert not any(c in text for c in TERMINAL_ACTIVE), repr(text)


def hf_in_folder(tmp_path: Path, folder: str) -> Path:
    """A Llama-2 config.json in a folder named `folder` (the model's id)."""
    where = tmp_path / folder
    where.mkdir()
    shutil.copy(HF / "Llama-2-7b-hf.json", where / "config.json")
    return where / "config.json"


# file names cannot hold '/' (so no closing tag): markup for file names is "[bold]"
FOLDER = "evil\x1b[31mRED\x07\u202e[bold]x:fire:"


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_a_model_id_from_a_folder_name_is_escaped(tmp_path: Path, capsys, fmt: str) -> None:
    config = hf_in_folder(tmp_path, FOLDER)
    for args in (["models", str(config)],
                 ["simulate", "-b", "u280", "-m", str(config), "-L", "256", "-e", "analytic"]):
        res = run_cli(capsys, *args, *(["--format", "json"] if args[0] == "simulate"
                                      and fmt == "json" else []))
        assert res.code == 0, res.err
        clean(res.out)
        clean(res.err)  # the memory warning names the model
        shown = json.loads(res.out)["model"] if fmt == "json" and args[0] == "simulate" \
            else res.out
        assert "evil\\x1b[31mRED\\x07\\u202e[bold]x:fire:" in shown


@pytest.mark.slow
def test_a_model_id_reaches_csv_files_and_figures_as_text(tmp_path: Path, capsys) -> None:
    config = hf_in_folder(tmp_path, FOLDER)
    out = tmp_path / "s.csv"
    res = run_cli(capsys, "sweep", "-b", "u280", "-m", str(config), "--contexts", "128",
                  "--verify-lens", "1", "-e", "analytic", "--no-cache", "--out", str(out))
    assert res.code == 0, res.err
    clean(out.read_text())
    assert "evil\\x1b[31m" in out.read_text()
    png = tmp_path / "p.png"
    res = run_cli(capsys, "solve", "-b", "u280", "-m", str(config), "-a", "longspec",
                  "--contexts", "1024", "-e", "analytic", "--plot", str(png))
    assert res.code == 0, res.err
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("field", ["name", "description"])
def test_a_board_name_with_markup_and_escapes(tmp_path: Path, capsys, field: str) -> None:
    """`name: "u[/]x"` raised MarkupError (exit 1); `\\e[31m` reached the terminal."""
    data = yaml.safe_load((REPO / "boards/u280.yaml").read_text())
    data[field] = HOSTILE
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump(data))
    for args in (["simulate", "-b", str(path), "-m", "llama-3.1-8b", "-L", "256", "-e",
                  "analytic"],
                 ["boards", str(path)],
                 ["sweep", "-b", str(path), "-m", "llama-3.1-8b", "--contexts", "128",
                  "--verify-lens", "1", "-e", "analytic", "--no-cache",
                  "--out", str(tmp_path / "s.csv")]):
        res = run_cli(capsys, *args)
        assert res.code == 0, res.err
        clean(res.out)
        clean(res.err)
    if field == "name":
        assert "[/]" in res.err or "[/]" in (tmp_path / "s.csv").read_text()
        clean((tmp_path / "s.csv").read_text())


def test_names_in_files_are_escaped_when_validated() -> None:
    from fpgasim.config import load_board

    board = load_board("u280", [("design.name", HOSTILE), ("fpga.description", "a\x1bb\nc")])
    assert board.design.name == "evil\\x1b[31mRED\\x07\\u202e[bold]x[/]:fire:"
    assert board.fpga.description == "a\\x1bb\nc"  # line breaks stay


@pytest.mark.slow
def test_a_model_id_with_mathtext_draws(tmp_path: Path, capsys) -> None:
    """A model `a$\\frac$b` in a figure title: matplotlib parsed it as mathtext and failed
    (ValueError, exit 1)."""
    data = yaml.safe_load((REPO / "workloads/models/llama-3.1-8b.yaml").read_text())
    data["id"] = "a$\\frac$b"
    model = tmp_path / "m.yaml"
    model.write_text(yaml.safe_dump(data))
    png = tmp_path / "p.png"
    res = run_cli(capsys, "solve", "-b", "u280", "-m", str(model), "-a", "longspec",
                  "--contexts", "1024", "-e", "analytic", "--plot", str(png))
    assert res.code == 0, res.err
    assert png.read_bytes()[:4] == b"\x89PNG"


# --------------------------------------------------------------------------- AAT folders

HEADER = "algorithm,model,task,context,structure,method,verify_len,tree_shape,aat\n"
ROW = "longspec,llama-3.1-8b,gov_report,1024,tree,prior_score,3,2,2.1\n"


def aat_folder(tmp_path: Path, name: str | bytes, data: bytes) -> Path:
    """The shipped LongSpec tree table and one more file `name` holding `data`."""
    folder = tmp_path / "aat"
    folder.mkdir(exist_ok=True)
    shutil.copy(REPO / "workloads/aat/longspec_llama31_tree.csv", folder)
    target = os.path.join(os.fsencode(folder), os.fsencode(name))
    with open(target, "wb") as handle:
        handle.write(data)
    return folder


SOLVE = ["solve", "-b", "u280", "-m", "llama-3.1-8b", "-a", "longspec", "--contexts", "1024",
         "-e", "analytic"]


@pytest.mark.parametrize(("name", "data"), [
    ("cr.csv", (HEADER + ROW).replace("\n", "\r").encode()),  # csv.Error: exit 1
    ("nul.csv", HEADER.encode() + b"longspec,llama\x00,x\r\n\r"),
    ("noise.csv", bytes(range(256)) * 40),
    ("fake.parquet", b"PAR1garbagePAR1"),
], ids=["lone-cr", "nul", "noise", "fake-parquet"])
def test_a_garbage_csv_in_an_aat_folder_is_one_line(tmp_path: Path, capsys, name: str,
                                                    data: bytes) -> None:
    folder = aat_folder(tmp_path, name, data)
    for args in ([*SOLVE, "--aat-dir", str(folder)], ["validate", str(folder)]):
        res = run_cli(capsys, *args)
        assert res.code in (0, 2), res.err
        assert "internal error" not in res.err and "Traceback" not in res.err
        if res.code == 2 and args[0] == "solve":
            assert len(res.err.strip().splitlines()) == 1, res.err


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_a_task_name_with_escapes_is_text(tmp_path: Path, capsys, fmt: str) -> None:
    """A task named with an escape sequence in a measured table (the only table given)."""
    folder = tmp_path / "aat"
    folder.mkdir()
    table = (REPO / "workloads/aat/longspec_llama31_tree.csv").read_text()
    (folder / "t.csv").write_text(table.replace("gov_report", "gov\x1b[31m\u202e"))
    res = run_cli(capsys, *SOLVE, "--aat-dir", str(folder), "--format", fmt)
    assert res.code == 0, res.err
    clean(res.out + res.err)
    assert "gov\\x1b[31m" in res.out.replace("\\\\", "\\")


@pytest.mark.slow
def test_a_file_name_that_is_not_utf8(tmp_path: Path, capsys) -> None:
    """`\\xff\\xfe.csv` in an AAT folder: UnicodeEncodeError (exit 1) in solve, validate."""
    folder = aat_folder(tmp_path, b"\xff\xfe.csv",
                        (REPO / "workloads/aat/longspec_llama31_tree.csv").read_bytes())
    for args in ([*SOLVE, "--aat-dir", str(folder)], ["validate", str(folder)],
                 [*SOLVE, "--aat-dir", str(folder), "--format", "json"]):
        res = run_cli(capsys, *args)
        assert res.code == 0, res.err
    cache = os.path.join(os.fsencode(tmp_path), b"c\xff")
    res = run_subprocess("sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128",
                         "--verify-lens", "1", "-e", "analytic", "--cache-dir",
                         os.fsdecode(cache), "--out", str(tmp_path / "s.csv"))
    assert res.code == 0, res.err


def test_a_missing_file_with_a_non_utf8_name_is_shown_as_bytes(tmp_path: Path, capsys) -> None:
    missing = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"t\xff.csv"))
    res = run_cli(capsys, "tree", "search", "-t", missing, "--out", str(tmp_path / "s.csv"))
    assert res.code == 2
    assert "t\\xff.csv" in res.err and "udcff" not in res.err, res.err


# --------------------------------------------------------------------------- file names


def test_an_external_experiment_id_cannot_leave_out(tmp_path: Path, capsys) -> None:
    """dovetail1's `id: ../../escaped` wrote out/../../escaped.csv and .md."""
    data = yaml.safe_load((REPO / "workloads/experiments/dovetail1.yaml").read_text())
    for bad in ("../../escaped", "a/b", ["x"]):
        data["id"] = bad
        path = tmp_path / "x.yaml"
        path.write_text(yaml.safe_dump(data))
        out = tmp_path / "a" / "b" / "out"
        out.mkdir(parents=True, exist_ok=True)
        res = run_cli(capsys, "reproduce", str(path), "--out", str(out))
        assert res.code == 2 and f"{path}: id = " in res.err, res.err
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["x.yaml"]


@pytest.mark.parametrize("value", ["../../boards/u280", "..", "a/b", "a\\b"])
def test_a_prefill_mask_cannot_leave_workloads_masks(tmp_path: Path, capsys,
                                                     value: str) -> None:
    """`../../boards/u280` read boards/u280.yaml as a mask table."""
    design = yaml.safe_load((REPO / "designs/flightllm.yaml").read_text())
    design["recipe"]["prefill_mask"] = value
    path = tmp_path / "d.yaml"
    path.write_text(yaml.safe_dump(design))
    res = run_cli(capsys, "simulate", "--fpga", "u280", "--design", str(path), "-m",
                  "llama-3.1-8b", "-L", "256", "-e", "analytic")
    assert res.code == 2, res.err
    assert f"{path}: recipe.prefill_mask = " in res.err and "plain file name" in res.err


@pytest.mark.parametrize("key", ["measured_table", "other_tables"])
def test_calibration_tables_cannot_leave_the_aat_folder(tmp_path: Path, capsys,
                                                       key: str) -> None:
    data = yaml.safe_load((REPO / "workloads/algorithms/longspec.yaml").read_text())
    target = data["acceptance"]["calibrated_to"]
    target[key] = ["../aat/x.csv"] if key == "other_tables" else "../aat/x.csv"
    path = tmp_path / "a.yaml"
    path.write_text(yaml.safe_dump(data))
    res = run_cli(capsys, "tree", "calibrate", "-a", str(path), "--aat-dir",
                  str(REPO / "workloads/aat"))
    assert res.code == 2, res.err
    assert key in res.err and "plain file name" in res.err, res.err


def test_a_path_with_escapes_reaches_no_csv_cell_raw(tmp_path: Path, capsys) -> None:
    """The sweep's `board_file` column held the board's path with its escape bytes."""
    folder = tmp_path / FOLDER
    folder.mkdir()
    board = folder / "b.yaml"
    shutil.copy(REPO / "boards/u280.yaml", board)
    out = tmp_path / "s.csv"
    res = run_cli(capsys, "sweep", "-b", str(board), "-m", "llama-3.1-8b", "--contexts", "128",
                  "--verify-lens", "1", "-e", "analytic", "--no-cache", "--out", str(out))
    assert res.code == 0, res.err
    text = out.read_text()
    clean(text + res.out + res.err)
    assert "evil\\x1b[31mRED" in text
