"""One bad cached row is one recomputed point, and an output path's `..` is resolved before
any work (docs/scaling.md, "Honest: a checksum per row"; docs/formats.md, "Output files")."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from fpgasim.sweep import SweepCache
from tests.cli_helpers import run_cli

SWEEP = ["sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128,256",
         "--verify-lens", "1-4", "--executor", "inprocess", "-e", "analytic"]


def test_an_undecodable_byte_in_one_row_is_one_recomputed_point(tmp_path: Path, capsys) -> None:
    """SQLite hands TEXT columns to Python as UTF-8: one invalid byte in one row made every
    read of the batch fail (every sweep on that cache: exit 2)."""
    out, cache = tmp_path / "a.csv", tmp_path / "cache"
    assert run_cli(capsys, *SWEEP, "--out", str(out), "--cache-dir", str(cache)).code == 0
    reference = out.read_bytes()
    with sqlite3.connect(SweepCache(cache).path) as db:
        (key,) = db.execute("SELECT key FROM points ORDER BY key LIMIT 1").fetchone()
        db.execute("UPDATE points SET row = CAST(CAST(row AS BLOB) || X'FF' AS TEXT) "
                   "WHERE key = ?", (key,))
    for _ in range(2):  # the refused row is stored again, intact
        res = run_cli(capsys, *SWEEP, "--out", str(out), "--cache-dir", str(cache))
        assert res.code == 0, res.err
        assert out.read_bytes() == reference
    assert "1 cached row failed its checksum and was recomputed" in res.err or (
        "8 from the cache" in res.err)
    with SweepCache(cache) as c:
        keys = [k for (k,) in sqlite3.connect(c.path).execute("SELECT key FROM points")]
        assert len(c.get_many(keys)) == len(keys) == 8 and c.refused == 0


def test_the_first_rerun_says_one_row_was_recomputed(tmp_path: Path, capsys) -> None:
    out, cache = tmp_path / "a.csv", tmp_path / "cache"
    assert run_cli(capsys, *SWEEP, "--out", str(out), "--cache-dir", str(cache)).code == 0
    with sqlite3.connect(SweepCache(cache).path) as db:
        db.execute("UPDATE points SET engine = CAST(X'61FE' AS TEXT) WHERE rowid = 2")
    res = run_cli(capsys, *SWEEP, "--out", str(out), "--cache-dir", str(cache))
    assert res.code == 0, res.err
    assert "8 points: 1 computed, 7 from the cache" in res.err
    assert "1 cached row failed its checksum and was recomputed" in res.err


def test_dots_after_a_missing_folder_are_refused_before_the_sweep(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """`--out ../out/../o.csv` with no `../out`: the OS cannot resolve `out/..`, and the
    sweep ran in full before the write failed."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    ran = []
    import fpgasim.cli.sweep_cmd as cmd

    real = cmd.run_sweep
    monkeypatch.setattr(cmd, "run_sweep", lambda *a, **k: ran.append(1) or real(*a, **k))
    res = run_cli(capsys, *SWEEP, "--no-cache", "--out", "../out/../o.csv")
    assert res.code == 2 and ran == [], res.err
    (line,) = res.err.strip().splitlines()
    assert line.startswith("fpgasim: error: argument --out = '../out/../o.csv': "), line
    assert "(../out is not an existing folder)" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]
    # `..` after an existing folder is what the OS resolves: written there
    res = run_cli(capsys, *SWEEP, "--no-cache", "--out", "../work/../o.csv")
    assert res.code == 0 and (tmp_path / "o.csv").is_file(), res.err
