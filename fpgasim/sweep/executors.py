"""Executors: where batches of work run (this process, a process pool, a Dask cluster).

Each implements the one executor protocol, `fpgasim.step.executor.Executor` (a context
manager whose `map_unordered(fn, items)` yields `(index, fn(item))` as results complete):
the sweep runs its chunks of points on one, the pass service (`PassService.prefetch`) its
chunks of passes. The sweep puts rows back in grid order, so the output is identical
whatever the executor.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import (
    FIRST_COMPLETED,
    Future,
    InvalidStateError,
    ProcessPoolExecutor,
    wait,
)
from typing import Any, ClassVar, Self

from fpgasim.errors import InputError
from fpgasim.interrupts import interrupts_deferred
from fpgasim.step.executor import Executor

DEFAULT_EXECUTOR = "process"


def default_workers() -> int:
    """Cores this process may use (the affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class InProcessExecutor:
    """Run every item in this process, one after the other (no pickling)."""

    name: ClassVar[str] = "inprocess"

    def __init__(self, workers: int | None = None, scheduler: str | None = None) -> None:
        _no_scheduler(self.name, scheduler)
        self.workers = 1

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        return None

    def map_unordered(
        self, fn: Callable[[Any], Any], items: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        """(index, fn(item)) for every item, in the order they finish."""
        for index, item in enumerate(items):
            yield index, fn(item)

    def submit(self, fn: Callable[[Any], Any], item: Any) -> Future:
        """Run `fn(item)` now; a finished future (the same interface as the process pool)."""
        future: Future = Future()
        try:
            future.set_result(fn(item))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller via result()
            future.set_exception(exc)
        return future


def _worker_init() -> None:
    """Pool workers leave Ctrl-C to the parent and die with it (Linux: PR_SET_PDEATHSIG)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - exotic libc
            pass


def _noop() -> None:
    return None


def _quiet_cancelled_futures(previous: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A threading.excepthook that drops InvalidStateError (a future already cancelled)."""

    def hook(args: Any) -> None:
        if args.exc_type is not None and issubclass(args.exc_type, InvalidStateError):
            return
        previous(args)

    return hook


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """Kill a pool's workers and let its manager thread see them gone.

    A worker killed while it writes a large result leaves the manager thread reading the
    rest of that message, and the parent holds the result pipe's write end itself, so the
    read never ends and `shutdown(wait=True)` (and the interpreter's exit) would wait
    forever. Once the workers are dead, closing the parent's write end ends that read
    (end of file): the pool is then broken, and shuts down at once.
    """
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        process.kill()
    for process in processes:
        process.join()
    queue = getattr(pool, "_result_queue", None)
    writer = getattr(queue, "_writer", None)
    if writer is not None:
        writer.close()
    # The call queue's feeder thread may be inside a write of a chunk larger than the
    # pipe holds, for workers that are gone: the parent's read end is then the pipe's
    # only reader and the write never returns, so the interpreter's exit (which joins
    # that thread) hung for good after the error was shown. Closing that end fails the
    # write (EPIPE) and the thread ends.
    calls = getattr(pool, "_call_queue", None)
    reader = getattr(calls, "_reader", None)
    if reader is not None:
        reader.close()


class ProcessExecutor:
    """A local pool of worker processes (default: one per core).

    On Linux the workers are forked, so they inherit the parent's imports (and any JIT-compiled
    engine code); all of them are started in `__enter__`, before the caller starts threads
    such as a progress bar. Elsewhere they are spawned.
    """

    name: ClassVar[str] = "process"

    def __init__(self, workers: int | None = None, scheduler: str | None = None) -> None:
        _no_scheduler(self.name, scheduler)
        self.workers = workers or default_workers()
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> Self:
        import multiprocessing

        method = "fork" if sys.platform.startswith("linux") else "spawn"
        self._pool = ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context(method),
            initializer=_worker_init,
        )
        try:
            # every worker is forked now; a Ctrl-C meanwhile is raised once they run
            # (`interrupts_deferred`: in the fork's hooks it was printed and dropped)
            with interrupts_deferred():
                started = self._pool.submit(_noop)
            started.result()
        except BaseException:
            self.__exit__(*sys.exc_info())  # the workers already forked are stopped
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._pool is not None:
            if exc_type is None:
                self._pool.shutdown(wait=True, cancel_futures=True)
            else:
                # Ctrl-C or a failed point: the chunks in flight are not wanted, so stop their
                # workers now instead of waiting for them (the parent stores nothing of them).
                # CPython 3.11's pool then marks every pending future broken, including the
                # ones already cancelled, and its manager thread prints the resulting
                # InvalidStateError (fixed upstream in 3.12): that one is not shown.
                previous = threading.excepthook
                threading.excepthook = _quiet_cancelled_futures(previous)
                try:
                    _kill_workers(self._pool)
                    self._pool.shutdown(wait=True, cancel_futures=True)
                finally:
                    threading.excepthook = previous
            self._pool = None

    def submit(self, fn: Callable[[Any], Any], item: Any) -> Future:
        """Start `fn(item)` on a worker and return at once (a concurrent.futures Future)."""
        if self._pool is None:
            raise RuntimeError("use the executor in a `with` block")
        return self._pool.submit(fn, item)

    def map_unordered(
        self, fn: Callable[[Any], Any], items: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        """(index, fn(item)) for every item, in the order they finish."""
        if self._pool is None:
            raise RuntimeError("use the executor in a `with` block")
        pending = {self._pool.submit(fn, item): i for i, item in enumerate(items)}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=pending.__getitem__):
                    index = pending.pop(future)
                    yield index, future.result()
        finally:
            for future in pending:
                future.cancel()


class DaskExecutor:
    """A Dask cluster: `scheduler` (tcp://HOST:PORT), else a LocalCluster of `workers` processes."""

    name: ClassVar[str] = "dask"

    def __init__(
        self,
        workers: int | None = None,
        scheduler: str | None = None,
        processes: bool = True,
        connect_timeout_s: float = 10.0,
    ) -> None:
        self.scheduler = scheduler
        self.workers = workers or default_workers()
        self.processes = processes
        self.connect_timeout_s = connect_timeout_s
        self._cluster: Any = None
        self._client: Any = None

    def __enter__(self) -> Self:
        try:
            import logging

            import dask
            from distributed import Client, LocalCluster
        except ImportError:
            raise InputError(
                "executor", "dask", "needs Dask: pip install 'fpgasim[dask]'"
            ) from None
        try:
            if self.scheduler:
                self._client = Client(self.scheduler, timeout=self.connect_timeout_s)
                found = self._client.scheduler_info().get("workers", {}).values()
                self.workers = max(1, sum(w.get("nthreads", 1) for w in found))
            else:
                # the workers' 10 ms stack sampler costs the engines ~10-30% (GIL), so off
                with dask.config.set({"distributed.worker.profile.enabled": False}):
                    self._cluster = LocalCluster(
                        n_workers=self.workers,
                        threads_per_worker=1,
                        processes=self.processes,
                        # the scheduler's HTTP server (needed) on a free port, no dashboard
                        dashboard_address=":0",
                        scheduler_kwargs={"dashboard": False},
                        silence_logs=logging.CRITICAL,  # errors reach the user as one line
                    )
                self._client = Client(self._cluster)
        except (OSError, TimeoutError, ValueError) as exc:  # unreachable or malformed address
            self.__exit__(None, None, None)
            raise InputError(
                "scheduler", self.scheduler, f"a reachable Dask scheduler ({exc})"
            ) from None
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def map_unordered(
        self, fn: Callable[[Any], Any], items: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        """(index, fn(item)) for every item, in the order they finish."""
        if self._client is None:
            raise RuntimeError("use the executor in a `with` block")
        from distributed import as_completed

        futures = self._client.map(fn, list(items), pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for future, result in as_completed(futures, with_results=True):
                yield index[future.key], result
        finally:
            self._client.cancel(futures)


#: The executor registry; the CLI's --executor choices are its keys.
EXECUTORS: dict[str, type] = {
    "inprocess": InProcessExecutor,
    "process": ProcessExecutor,
    "dask": DaskExecutor,
}


def register_executor(name: str, cls: type) -> None:
    """Add an executor class to the registry (duplicates are an error)."""
    if name in EXECUTORS:
        raise ValueError(f"executor {name!r} is already registered")
    EXECUTORS[name] = cls


def make_executor(name: str, workers: int | None = None, scheduler: str | None = None) -> Executor:
    """An executor by name (not yet entered); unknown names list the choices."""
    if name not in EXECUTORS:
        raise InputError("executor", name, f"one of {', '.join(EXECUTORS)}")
    if workers is not None and workers < 1:
        raise InputError("workers", workers, "at least 1")
    return EXECUTORS[name](workers=workers, scheduler=scheduler)


def _no_scheduler(name: str, scheduler: str | None) -> None:
    if scheduler:
        raise InputError("scheduler", scheduler, f"only with `executor` dask (not {name})")
