"""The one executor protocol: where batches of work run (this process, a process pool, a
Dask cluster).

An executor is a context manager whose `map_unordered(fn, items)` yields `(index, fn(item))`
as results complete, in any order; callers put results back in their own order, so the
output is identical whatever the executor. `fn` must be a picklable module-level function.
The pass service batches missing passes on one (`PassService.prefetch`), the sweep its
chunks of points; the implementations live in `fpgasim.sweep.executors`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from types import TracebackType
from typing import Any, ClassVar, Protocol, Self


class Executor(Protocol):
    """What every executor provides (see the module docstring)."""

    name: ClassVar[str]
    workers: int  # how many tasks run at once (sizes the automatic chunks)

    def __enter__(self) -> Self:
        """Start the workers (a pool, a cluster connection); errors are `InputError`s."""
        ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    def map_unordered(
        self, fn: Callable[[Any], Any], items: Sequence[Any]
    ) -> Iterator[tuple[int, Any]]:
        """Yield `(index, fn(items[index]))` as tasks finish; closing it cancels the rest."""
        ...


class Submits(Protocol):
    """An executor that also starts one task at once (the local ones: `submit`)."""

    def submit(self, fn: Callable[[Any], Any], item: Any) -> Future:
        """Start `fn(item)` on a worker and return at once."""
        ...
