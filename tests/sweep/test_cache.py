"""The result cache: keys cover every input, reruns reuse rows, damage is contained."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest

import fpgasim
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.simulate import Point
from fpgasim.sweep import CacheError, Grid, SweepCache, default_cache_dir, point_key, run_sweep
from tests.cli_helpers import run_cli


@pytest.fixture(scope="module")
def grid() -> Grid:
    return Grid(
        boards=[load_board("u280"), load_board("vhk158")],
        model=load_model("llama-3.1-8b"),
        contexts=[256, 2048],
        verify_lens=list(range(1, 12)),
        algorithm=load_algorithm("eagle3"),
    )


def key(point: Point, engine: str = "analytic", version: str = "1") -> str:
    return point_key(point, engine, version)


def test_key_covers_every_input() -> None:
    board, model = load_board("u280"), load_model("llama-3.1-8b")
    algo = load_algorithm("longspec")
    base = Point(board, model, 256, 5, algo, TokenTree.from_shape((2, 2)), 1)
    same = Point(
        load_board("u280"),
        load_model("llama-3.1-8b"),
        256,
        5,
        load_algorithm("longspec"),
        TokenTree.from_shape((2, 2)),
        1,
    )
    assert key(base) == key(same)  # equal contents, different objects
    renamed = board.model_copy(update={"name": "u280b"})
    # one field of the design, one of the data sheet (re-fitted, named as the base)
    faster = load_board("u280", [("design.clock_mhz", 300)]).model_copy(update={"name": "u280"})
    wider = load_board("u280", [("fpga.memory.bandwidth_gb_s", 920)]).model_copy(
        update={"name": "u280"})
    variants = [
        Point(renamed, model, 256, 5, algo, TokenTree.from_shape((2, 2)), 1),
        Point(faster, model, 256, 5, algo, TokenTree.from_shape((2, 2)), 1),
        Point(wider, model, 256, 5, algo, TokenTree.from_shape((2, 2)), 1),
        Point(board, load_model("vicuna-7b-v1.5"), 256, 5, algo, TokenTree.from_shape((2, 2)), 1),
        Point(board, model, 512, 5, algo, TokenTree.from_shape((2, 2)), 1),
        Point(board, model, 256, 4, algo, TokenTree.from_shape((2, 2)), 1),
        Point(board, model, 256, 5, algo, TokenTree.from_shape((4,)), 1),
        Point(board, model, 256, 5, algo, TokenTree.from_shape((2, 2)), 2),
        Point(
            board,
            model,
            256,
            5,
            algo.model_copy(update={"ori_verify_len": 3}),
            TokenTree.from_shape((2, 2)),
            1,
        ),
        Point(board, model, 256, 5),
    ]
    keys = {key(p) for p in variants} | {key(base, "event"), key(base, version="2")}
    assert len(keys) == len(variants) + 2 and key(base) not in keys


def test_fpgasim_version_is_in_the_key(monkeypatch) -> None:
    point = Point(load_board("u280"), load_model("llama-3.1-8b"), 256, 1)
    before = key(point)
    monkeypatch.setattr(fpgasim, "__version__", "999.0")
    assert key(point) != before


def test_rerun_reuses_every_point(grid: Grid, tmp_path: Path) -> None:
    fresh = run_sweep(grid, "analytic", "inprocess").frame
    with SweepCache(tmp_path) as cache:
        first = run_sweep(grid, "analytic", "inprocess", cache=cache, chunk_size=5)
        assert (first.stats.computed, first.stats.cached) == (len(fresh), 0)
        assert len(cache) == len(fresh)
        second = run_sweep(grid, "analytic", "process", cache=cache, workers=2)
        assert (second.stats.computed, second.stats.cached) == (0, len(fresh))
        # a bigger grid computes only its new points
        bigger = Grid(**{**grid.__dict__, "contexts": [256, 2048, 4096]})
        third = run_sweep(bigger, "analytic", "inprocess", cache=cache)
        assert (third.stats.computed, third.stats.cached) == (len(fresh) // 2, len(fresh))
    for result in (first, second):
        pd.testing.assert_frame_equal(result.frame, fresh, check_exact=True)
        assert result.frame.to_csv(index=False) == fresh.to_csv(index=False)


def test_unreadable_rows_are_recomputed(grid: Grid, tmp_path: Path) -> None:
    with SweepCache(tmp_path) as cache:
        fresh = run_sweep(grid, "analytic", "inprocess", cache=cache).frame
    with sqlite3.connect(tmp_path / "v2" / "points.sqlite") as db:
        db.execute("UPDATE points SET row = 'not json' WHERE rowid % 3 = 0")
        db.execute("UPDATE points SET row = '[1, 2]' WHERE rowid % 3 = 1")
    with SweepCache(tmp_path) as cache:
        again = run_sweep(grid, "analytic", "inprocess", cache=cache)
    assert 0 < again.stats.computed < len(fresh)
    pd.testing.assert_frame_equal(again.frame, fresh, check_exact=True)


def test_corrupt_database_is_one_clear_error(tmp_path: Path, capsys) -> None:
    db = tmp_path / "v2" / "points.sqlite"
    db.parent.mkdir(parents=True)
    db.write_bytes(b"\x00junk" * 1000)
    with pytest.raises(CacheError, match="cache clear"):
        SweepCache(tmp_path).get_many(["x"])
    res = run_cli(
        capsys,
        "sweep",
        "-b",
        "u280",
        "-m",
        "llama-3.1-8b",
        "--contexts",
        "128",
        "--verify-lens",
        "1-3",
        "-e",
        "analytic",
        "--cache-dir",
        str(tmp_path),
        "--out",
        str(tmp_path / "o.csv"),
    )
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1
    assert "--no-cache" in res.err and not (tmp_path / "o.csv").exists()
    res = run_cli(capsys, "cache", "clear", "--cache-dir", str(tmp_path))
    assert res.code == 0 and not db.exists()


def test_unwritable_cache_dir_is_one_clear_error(tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    res = run_cli(
        capsys,
        "sweep",
        "-b",
        "u280",
        "-m",
        "llama-3.1-8b",
        "--contexts",
        "128",
        "--verify-lens",
        "1-3",
        "-e",
        "analytic",
        "--cache-dir",
        str(blocker),
        "--out",
        str(tmp_path / "o.csv"),
    )
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1, res.err
    assert not (tmp_path / "o.csv").exists()


def test_default_dir_and_env(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("FPGASIM_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert default_cache_dir() == Path.home() / ".cache" / "fpgasim"
    monkeypatch.setenv("FPGASIM_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    assert SweepCache().path == tmp_path / "c" / "v2" / "points.sqlite"


@pytest.mark.slow
def test_cli_cache_flags_info_and_clear(monkeypatch, tmp_path: Path, capsys) -> None:
    monkeypatch.setenv("FPGASIM_CACHE_DIR", str(tmp_path / "env"))
    args = [
        "sweep",
        "-b",
        "u280",
        "-m",
        "llama-3.1-8b",
        "--contexts",
        "128,256",
        "--verify-lens",
        "1-4",
        "-e",
        "analytic",
        "--out",
        str(tmp_path / "o.csv"),
    ]
    res = run_cli(capsys, *args, "--no-cache")
    assert res.code == 0 and "8 computed, 0 from the cache" in res.err
    assert not (tmp_path / "env").exists()  # --no-cache touches nothing
    assert run_cli(capsys, *args).code == 0
    res = run_cli(capsys, *args)
    assert "0 computed, 8 from the cache" in res.err
    res = run_cli(capsys, *args, "--cache-dir", str(tmp_path / "other"))
    assert "8 computed" in res.err
    res = run_cli(capsys, "cache", "info", "--json")
    assert res.code == 0 and '"points": 8' in res.out and '"analytic": 8' in res.out
    res = run_cli(capsys, "cache", "info")
    assert res.code == 0 and "points: 8 (analytic: 8)" in res.out
    res = run_cli(capsys, "cache", "clear")
    assert res.code == 0 and "removed 8 points" in res.out
    res = run_cli(capsys, "cache", "info", "--json")
    assert '"points": 0' in res.out
    assert "8 computed" in run_cli(capsys, *args).err


def test_code_fingerprint_is_in_the_key(monkeypatch) -> None:
    from fpgasim.sweep import cache as cache_module

    point = Point(load_board("u280"), load_model("llama-3.1-8b"), 256, 1)
    before = key(point)
    monkeypatch.setattr(cache_module, "code_fingerprint", lambda: "edited")
    assert key(point) != before


def test_worker_with_other_code_is_refused(grid: Grid) -> None:
    from dataclasses import replace

    from fpgasim.sweep import runner

    class Stale:
        name, workers = "stale", 1

        def map_unordered(self, fn, items):
            for i, item in enumerate(items):
                yield i, replace(fn(item), code="0" * 64)

    with pytest.raises(RuntimeError, match="install the same fpgasim on every worker"):
        runner.run_sweep(grid, "analytic", Stale())
