"""Executors: every executor gives the same rows, bit for bit, in grid order."""

from __future__ import annotations

from concurrent.futures import InvalidStateError
from types import SimpleNamespace

import pandas as pd
import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.engine import get_engine
from fpgasim.errors import InputError
from fpgasim.sweep import EXECUTORS, Grid, make_executor, run_grid, run_sweep
from fpgasim.sweep.executors import DaskExecutor, _quiet_cancelled_futures, register_executor
from fpgasim.sweep.runner import auto_chunk_size


@pytest.fixture(scope="module")
def grid() -> Grid:
    return Grid(
        boards=[load_board("u280"), load_board("v80")],
        model=load_model("llama-3.1-8b"),
        contexts=[128, 1024, 4096],
        verify_lens=list(range(1, 30)),
        algorithm=load_algorithm("longspec"),
    )


@pytest.fixture(scope="module")
def reference(grid: Grid) -> pd.DataFrame:
    return run_grid(get_engine("analytic"), grid)


def assert_identical(frame: pd.DataFrame, reference: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(frame, reference, check_exact=True)
    assert frame.to_csv(index=False) == reference.to_csv(index=False)


@pytest.mark.parametrize("executor", ["inprocess", "process"])
@pytest.mark.parametrize("chunk_size", [None, 1, 7, 10_000])
def test_local_executors_match_run_grid(grid, reference, executor, chunk_size) -> None:
    result = run_sweep(grid, "analytic", executor, workers=2, chunk_size=chunk_size)
    assert_identical(result.frame, reference)
    assert result.stats.computed == len(reference) and result.stats.cached == 0


def test_dask_local_cluster_matches(grid, reference) -> None:
    pytest.importorskip("distributed")
    with DaskExecutor(workers=2, processes=False) as ex:
        assert ex.workers == 2
        first = run_sweep(grid, "analytic", ex, chunk_size=16)
        # the same open cluster serves a second sweep
        second = run_sweep(grid, "analytic", ex, chunk_size=50)
    assert_identical(first.frame, reference)
    assert_identical(second.frame, reference)
    assert first.stats.executor == "dask" and first.stats.chunks > 2


def test_registry_and_errors() -> None:
    assert list(EXECUTORS) == ["inprocess", "process", "dask"]
    with pytest.raises(InputError, match="one of inprocess, process, dask"):
        make_executor("cluster")
    with pytest.raises(InputError, match="scheduler"):
        make_executor("process", scheduler="tcp://localhost:8786")
    with pytest.raises(InputError, match="workers"):
        make_executor("process", workers=0)
    with pytest.raises(ValueError, match="already registered"):
        register_executor("process", object)


def test_auto_chunk_size() -> None:
    assert auto_chunk_size(8160, 2) == 256
    assert auto_chunk_size(100, 2) == 13
    assert auto_chunk_size(1, 64) == 1
    assert auto_chunk_size(0, 2) == 1


def test_worker_errors_surface(grid) -> None:
    bad = Grid(boards=grid.boards, model=grid.model, contexts=[0], verify_lens=[1])
    with pytest.raises(InputError, match="context"):
        run_sweep(bad, "analytic", "inprocess")


@pytest.mark.slow
def test_unreachable_scheduler_is_one_line_error() -> None:
    pytest.importorskip("distributed")
    ex = DaskExecutor(scheduler="tcp://127.0.0.1:9", connect_timeout_s=1.0)
    with pytest.raises(InputError, match="reachable Dask scheduler"):
        ex.__enter__()


def test_dask_missing_is_one_line_error(monkeypatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "distributed", None)
    with pytest.raises(InputError, match=r"fpgasim\[dask\]"):
        DaskExecutor(workers=1).__enter__()


@pytest.mark.slow
def test_cli_dask_local_cluster_equals_process_pool(tmp_path) -> None:
    """The real CLI on a 2-process LocalCluster writes the same bytes as the process pool."""
    pytest.importorskip("distributed")
    from tests.cli_helpers import run_subprocess

    args = [
        "sweep",
        "-b",
        "u280,v80",
        "-m",
        "llama-3.1-8b",
        "-a",
        "eagle3",
        "--contexts",
        "128,2048",
        "--verify-lens",
        "1-20",
        "-e",
        "analytic",
        "--no-cache",
    ]
    pool = run_subprocess(*args, "--out", str(tmp_path / "p.csv"))
    dask = run_subprocess(
        *args, "--out", str(tmp_path / "d.csv"), "--executor", "dask", "--workers", "2"
    )
    assert pool.code == 0 and dask.code == 0, pool.err + dask.err
    assert "on dask x2" in dask.err
    assert (tmp_path / "p.csv").read_bytes() == (tmp_path / "d.csv").read_bytes()


@pytest.mark.slow
def test_cli_with_scheduler_address(tmp_path) -> None:
    """`--scheduler tcp://...` connects to a running scheduler (here one in this process)."""
    distributed = pytest.importorskip("distributed")
    from tests.cli_helpers import run_subprocess

    args = [
        "sweep",
        "-b",
        "u280",
        "-m",
        "llama-3.1-8b",
        "-a",
        "longspec",
        "--contexts",
        "128,512",
        "--verify-lens",
        "1-12",
        "-e",
        "analytic",
        "--no-cache",
    ]
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        protocol="tcp://",
        dashboard_address=None,
    ) as cluster:
        remote = run_subprocess(
            *args,
            "--out",
            str(tmp_path / "r.csv"),
            "--executor",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
            "--chunk-size",
            "4",
        )
    local = run_subprocess(*args, "--out", str(tmp_path / "l.csv"), "--executor", "inprocess")
    assert remote.code == 0 and local.code == 0, remote.err + local.err
    assert "on dask x2" in remote.err
    assert (tmp_path / "r.csv").read_bytes() == (tmp_path / "l.csv").read_bytes()


def test_teardown_hook_drops_only_cancelled_future_errors() -> None:
    """CPython 3.11's pool reports futures we cancelled as InvalidStateError on teardown."""
    seen: list[type] = []
    hook = _quiet_cancelled_futures(lambda args: seen.append(args.exc_type))
    hook(SimpleNamespace(exc_type=InvalidStateError))
    hook(SimpleNamespace(exc_type=RuntimeError))
    assert seen == [RuntimeError]
