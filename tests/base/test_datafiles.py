"""Data files are bounded and named: table sizes are checked from metadata before reading,
unreadable folders and files are named with the OS's reason, and file names are printed
with control characters escaped."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fpgasim import datafiles
from fpgasim.errors import ConfigError, printable
from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
GIB = 1 << 30


def four_gib() -> None:
    """`preexec_fn`: at most 4 GiB of address space (what the issue's files exceeded)."""
    resource.setrlimit(resource.RLIMIT_AS, (4 * GIB, 4 * GIB))


def run_limited(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fpgasim", *args], capture_output=True,
                          text=True, timeout=300, preexec_fn=four_gib, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.fixture(scope="module")
def null_parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small Parquet file of 200 million nulls (row groups of 2 million: RLE-encoded)."""
    path = tmp_path_factory.mktemp("nulls") / "nulls.parquet"
    column = pa.nulls(2_000_000, pa.int64())
    batch = pa.table({"ranks": column, "aat": column})
    with pq.ParquetWriter(path, batch.schema) as writer:
        for _ in range(100):
            writer.write_table(batch)
    assert path.stat().st_size < 8 << 20
    return path


@pytest.mark.slow
@pytest.mark.parametrize("command", ["validate", "solve", "tree search"])
def test_a_parquet_of_200_million_nulls_is_refused_from_its_metadata(
    null_parquet: Path, tmp_path: Path, command: str
) -> None:
    """Each command read the whole table first (4-6 GiB; under a 4 GiB address space:
    `internal error: MemoryError`)."""
    folder = tmp_path / "aat"
    folder.mkdir()
    shutil.copy(null_parquet, folder / "nulls.parquet")
    target = folder / "nulls.parquet"
    args = {
        "validate": ["validate", str(target)],
        "solve": ["solve", "-b", "u280", "-m", "llama-3.1-8b", "-a", "longspec", "--contexts",
                  "1024", "-e", "analytic", "--aat-dir", str(folder), "--task", "gov_report"],
        "tree search": ["tree", "search", "--traces", str(target), "--out",
                        str(tmp_path / "t.csv")],
    }[command]
    proc = run_limited(*args)
    assert proc.returncode == 2, proc.stderr[-500:]
    line = proc.stderr.strip().splitlines()[0]
    assert str(target) in line and "200000000" in line and "rows" in line, line
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr


def test_csv_cells_are_counted_before_reading(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a,b,c\n" + "1,2,3\n" * 40)
    assert len(datafiles.read_table(path, "AAT table")) == 40
    monkeypatch.setattr(datafiles, "MAX_CELLS", 100)
    with pytest.raises(ConfigError, match=r"t\.csv: cells = 120: at most 100 cells \(40 rows x 3"):
        datafiles.read_table(path, "AAT table")
    monkeypatch.setattr(datafiles, "MAX_ROWS", 10)
    with pytest.raises(ConfigError, match=r"t\.csv: rows = 40: at most 10 rows"):
        datafiles.read_table(path, "AAT table")


# --------------------------------------------------------------------------- unreadable


def unprivileged() -> list[str]:
    """A command prefix under which file permissions apply (root keeps them otherwise)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root without setpriv: permissions cannot be made to apply")
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]


def run_unprivileged(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*unprivileged(), sys.executable, "-m", "fpgasim", *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.mark.slow
def test_an_unreadable_folder_is_named_with_the_os_reason(tmp_path: Path) -> None:
    """`validate FOLDER` said "no YAML, CSV or Parquet files found in the given folders"."""
    folder = tmp_path / "locked"
    folder.mkdir()
    shutil.copy(REPO / "boards/u280.yaml", folder / "u280.yaml")
    readable = tmp_path / "ok"
    readable.mkdir()
    shutil.copy(REPO / "boards/v80.yaml", readable / "v80.yaml")
    folder.chmod(0)
    try:
        proc = run_unprivileged("validate", str(folder), str(readable))
        solve = run_unprivileged("solve", "-b", "u280", "-m", "llama-3.1-8b", "-a", "longspec",
                                 "--contexts", "1024", "-e", "analytic", "--aat-dir",
                                 str(folder), "--task", "gov_report")
    finally:
        folder.chmod(0o755)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert f"{folder}: folder = {str(folder)!r}: a readable folder (Permission denied)" in (
        lines[0]), lines
    assert f"{readable / 'v80.yaml'}: ok (board)" in lines  # the others are still checked
    assert solve.returncode == 2 and str(folder) in solve.stderr.splitlines()[0], solve.stderr
    assert "Permission denied" in solve.stderr or "not readable" in solve.stderr


@pytest.mark.slow
def test_an_unreadable_file_is_one_problem_among_the_others(tmp_path: Path) -> None:
    locked = tmp_path / "locked.yaml"
    shutil.copy(REPO / "boards/u280.yaml", locked)
    table = tmp_path / "locked.csv"
    shutil.copy(REPO / "workloads/aat/longspec_llama31_chain.csv", table)
    good = tmp_path / "v80.yaml"
    shutil.copy(REPO / "boards/v80.yaml", good)
    locked.chmod(0)
    table.chmod(0)
    try:
        proc = run_unprivileged("validate", str(locked), str(table), str(good))
    finally:
        locked.chmod(0o644)
        table.chmod(0o644)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines[0].startswith(f"{locked}: file = ") and "(Permission denied)" in lines[0], lines
    assert lines[1].startswith(f"{table}: file = ") and "(Permission denied)" in lines[1], lines
    assert lines[2] == f"{good}: ok (board)"


# --------------------------------------------------------------------------- names


def test_printable_escapes_control_characters_and_undecodable_bytes() -> None:
    assert printable("a\x1b[31mb\x07\x7f\x9b\u202ec") == "a\\x1b[31mb\\x07\\x7f\\x9b\\u202ec"
    assert printable(os.fsdecode(b"x\xffy.csv")) == "x\\xffy.csv"
    assert printable("plain é name.yaml") == "plain é name.yaml"


def test_file_names_are_printed_with_control_characters_escaped(tmp_path: Path,
                                                                capsys) -> None:
    """Escape bytes in file names reached the terminal raw (they could recolour it, move
    the cursor or retitle the window)."""
    bad = tmp_path / "bad\x1b[2J.yaml"
    bad.write_text("name: [unclosed\n")
    ok = tmp_path / "ok\x1b]0;owned\x07.yaml"
    shutil.copy(REPO / "boards/v80.yaml", ok)
    res = run_cli(capsys, "validate", str(ok))
    assert res.code == 0 and "\x1b" not in res.out and "\x07" not in res.out, repr(res.out)
    assert "ok\\x1b]0;owned\\x07.yaml: ok (board)" in res.out
    res = run_cli(capsys, "validate", str(bad), str(ok))
    assert res.code == 2 and "\x1b" not in res.err, repr(res.err)
    assert "bad\\x1b[2J.yaml: line 2 = " in res.err
    res = run_cli(capsys, "simulate", "-b", str(bad), "-m", "llama-3.1-8b", "-L", "128")
    assert res.code == 2 and "\x1b" not in res.err and "bad\\x1b[2J.yaml" in res.err
    out = tmp_path / "s\x1b[1m[/x].csv"
    res = run_cli(capsys, "sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128",
                  "--verify-lens", "1", "--no-cache", "-e", "analytic", "--out", str(out))
    assert res.code == 0 and out.is_file(), res.err
    assert "\x1b" not in res.out + res.err and "s\\x1b[1m[/x].csv" in res.out, repr(res.out)
