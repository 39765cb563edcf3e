"""The result cache is honest (checksums), bounded (LRU size limit) and refuses bad folders."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pandas as pd
import pytest

from fpgasim.config import load_board, load_model
from fpgasim.sweep import CacheError, Grid, SweepCache, run_sweep
from fpgasim.sweep.cache import DEFAULT_LIMIT_MB, LIMIT_ENV, row_checksum
from tests.cli_helpers import run_cli

SWEEP = ["sweep", "-b", "u280", "-m", "llama-3.1-8b", "--contexts", "128,256",
         "--verify-lens", "1-8", "--executor", "inprocess"]


@pytest.fixture(scope="module")
def grid() -> Grid:
    return Grid(boards=[load_board("u280")], model=load_model("llama-3.1-8b"),
                contexts=[128, 512], verify_lens=list(range(1, 9)))


def test_altered_numbers_are_refused_and_recomputed(grid: Grid, tmp_path: Path) -> None:
    with SweepCache(tmp_path) as cache:
        fresh = run_sweep(grid, "analytic", "inprocess", cache=cache).frame
    with sqlite3.connect(SweepCache(tmp_path).path) as db:
        rows = db.execute("SELECT key, row FROM points WHERE rowid % 2 = 0").fetchall()
        for key, text in rows:  # valid JSON, plausible but wrong numbers
            row = json.loads(text)
            row["verify_cycles"] = row["verify_cycles"] * 2
            db.execute("UPDATE points SET row = ? WHERE key = ?", (json.dumps(row), key))
    with SweepCache(tmp_path) as cache:
        again = run_sweep(grid, "analytic", "inprocess", cache=cache)
        assert cache.refused == len(rows) > 0
    assert again.stats.refused == again.stats.computed == len(rows)
    assert "failed their checksum and were recomputed" in again.stats.summary()
    pd.testing.assert_frame_equal(again.frame, fresh, check_exact=True)
    with SweepCache(tmp_path) as cache:  # the recomputed rows were stored again, intact
        assert run_sweep(grid, "analytic", "inprocess", cache=cache).stats.computed == 0


@pytest.mark.slow
def test_cli_says_so_on_stderr(tmp_path: Path, capsys) -> None:
    out, cache_dir = tmp_path / "a.csv", tmp_path / "cache"
    assert run_cli(capsys, *SWEEP, "--out", str(out), "--cache-dir", str(cache_dir)).code == 0
    reference = out.read_bytes()
    with sqlite3.connect(SweepCache(cache_dir).path) as db:
        db.execute("UPDATE points SET row = replace(row, '\"verify_cycles\":', "
                   "'\"verify_cycles\":1') WHERE rowid = 3")
    res = run_cli(capsys, *SWEEP, "--out", str(out), "--cache-dir", str(cache_dir))
    assert res.code == 0
    assert "1 cached row failed its checksum and was recomputed" in res.err
    assert out.read_bytes() == reference


def test_checksum_covers_key_engine_and_row() -> None:
    base = row_checksum("k", "analytic", '{"a":1}')
    assert base != row_checksum("k2", "analytic", '{"a":1}')
    assert base != row_checksum("k", "event", '{"a":1}')
    assert base != row_checksum("k", "analytic", '{"a":2}')


@pytest.mark.parametrize("command", [["cache", "info"], ["cache", "clear"],
                                     ["cache", "info", "--json"]])
def test_cache_folder_that_is_a_file(tmp_path: Path, capsys, command: list[str]) -> None:
    plain = tmp_path / "plain"
    plain.write_text("not a folder")
    for where in (plain, plain / "sub"):
        res = run_cli(capsys, *command, "--cache-dir", str(where))
        assert res.code == 2, res
        assert len(res.err.splitlines()) == 1 and "Traceback" not in res.err
        assert plain.read_text() == "not a folder"
    fmt = tmp_path / "c" / SweepCache(tmp_path / "c").path.parent.name
    fmt.parent.mkdir()
    fmt.write_text("x")  # the format folder is a file
    res = run_cli(capsys, *command, "--cache-dir", str(tmp_path / "c"))
    assert res.code == 2 and len(res.err.splitlines()) == 1


def test_sweep_with_cache_folder_that_is_a_file(tmp_path: Path, capsys) -> None:
    plain = tmp_path / "plain"
    plain.write_text("x")
    res = run_cli(capsys, *SWEEP, "--out", str(tmp_path / "o.csv"), "--cache-dir", str(plain))
    assert res.code == 2 and len(res.err.splitlines()) == 1
    assert not (tmp_path / "o.csv").exists()


def _rows(n: int, tag: str, size: int = 10_000) -> list[tuple[str, str, dict]]:
    return [(f"{tag}{i:04d}", "analytic", {"pad": "x" * size, "i": i}) for i in range(n)]


def test_size_limit_evicts_least_recently_used(tmp_path: Path) -> None:
    with SweepCache(tmp_path, limit_mb=1) as cache:
        cache.put_many(_rows(60, "a"))  # ~600 kB: under the limit
        time.sleep(0.01)
        kept = [f"a{i:04d}" for i in range(10)]
        assert len(cache.get_many(kept)) == 10  # served now: recently used
        time.sleep(0.01)
        cache.put_many(_rows(60, "b"))  # ~1.2 MB in all: over the 1 MiB limit
        info = cache.info()
        assert cache.evicted > 0
        assert info.row_bytes <= info.limit_bytes == 1 << 20
        assert len(cache.get_many(kept)) == 10  # the recently served rows survived
        assert len(cache.get_many([k for k, _, _ in _rows(60, "b")])) == 60  # newest too
        evicted = [f"a{i:04d}" for i in range(10, 10 + cache.evicted)]
        assert cache.get_many(evicted) == {}  # the least recently used went first


def test_limit_from_env_and_option(tmp_path: Path, capsys, monkeypatch) -> None:
    res = run_cli(capsys, "cache", "info", "--cache-dir", str(tmp_path))
    assert res.code == 0
    assert f"limit: {DEFAULT_LIMIT_MB:g} MiB" in res.out and "policy: LRU" in res.out
    assert "points: 0" in res.out and "size:" in res.out
    monkeypatch.setenv(LIMIT_ENV, "64")
    res = run_cli(capsys, "cache", "info", "--cache-dir", str(tmp_path), "--json")
    facts = json.loads(res.out)
    assert facts["limit_bytes"] == 64 << 20 and facts["policy"].startswith("LRU")
    res = run_cli(capsys, "cache", "info", "--cache-dir", str(tmp_path), "--cache-limit-mb", "8")
    assert "limit: 8 MiB" in res.out
    for bad in ("nan", "0", "-5", "lots", "1e30"):
        monkeypatch.setenv(LIMIT_ENV, bad)
        res = run_cli(capsys, "cache", "info", "--cache-dir", str(tmp_path))
        assert res.code == 2 and len(res.err.splitlines()) == 1, (bad, res)
        with pytest.raises(CacheError):
            SweepCache(tmp_path)


def test_a_limit_from_the_environment_is_shown_as_given(monkeypatch, tmp_path: Path,
                                                        capsys) -> None:
    for text in ("abc", "nan", "0.5e-9"):
        monkeypatch.setenv(LIMIT_ENV, text)
        res = run_cli(capsys, "cache", "info", "--cache-dir", str(tmp_path))
        assert res.code == 2 and f"{LIMIT_ENV} = '{text}'" in res.err, res.err
        assert len(res.err.strip().splitlines()) == 1
