"""Ctrl-C held over code that must not be interrupted half-way, then raised.

Python runs a signal's handler at the next bytecode of the main thread. Where that bytecode
belongs to code that swallows exceptions, a KeyboardInterrupt raised there is printed
("Exception ignored ...") and dropped, and the run went on to exit 0 with its outputs
written. Two such places are known (tests/base/test_interrupts.py, docs/scaling.md,
"Interrupting and resuming"):

- LLVM's callbacks into Python while numba compiles (ctypes callbacks);
- the at-fork hooks Python runs in the parent once `os.fork` returns (logging's
  `_releaseLock`): a Ctrl-C arriving while a pool forks its workers (a fork of a large
  process takes milliseconds) is handled inside them.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Ctrl-C only recorded inside the block, then raised as KeyboardInterrupt once it
    ends. In the main thread with Python's own handler only (a pool worker ignores Ctrl-C;
    other threads cannot take signals). A process forked inside the block inherits the
    recording handler until it sets its own (pool workers ignore Ctrl-C)."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    caught: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if caught:
        raise KeyboardInterrupt
