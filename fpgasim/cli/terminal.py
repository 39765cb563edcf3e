"""Output that never crashes: on the terminal's encoding (an ASCII locale such as LC_ALL=C),
or on a stdout that is closed, full or a pipe whose reader left (`guarded_stdout`).

The CLI's texts use a few non-ASCII symbols (`·`, `²`, `µ`, `×`, `≤`, dashes). Where
stdout or stderr cannot encode them, `safe_streams` re-opens both streams with an error
handler that writes an ASCII spelling of those symbols and `?` for anything else, so every
command, its help and its errors print in any locale. Files are unaffected (they are
written as UTF-8 explicitly).
"""

from __future__ import annotations

import codecs
import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: ASCII spellings of the symbols fpgasim prints; anything else becomes "?".
ASCII_SPELLINGS = {
    "·": ".", "²": "^2", "³": "^3", "µ": "u", "×": "x", "≤": "<=", "≥": ">=", "≈": "~",
    "–": "-", "—": "-", "−": "-", "→": "->", "←": "<-", "…": "...", "±": "+/-", "°": "deg",
    "‘": "'", "’": "'", "“": '"', "”": '"', "•": "*", "✓": "ok", "✗": "x", "─": "-",
    "│": "|", "━": "-", "┃": "|", "╭": "+", "╮": "+", "╰": "+", "╯": "+",
}
ERROR_HANDLER = "fpgasim-ascii"


def _ascii_spelling(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: the ASCII spelling of the characters that cannot be encoded."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    return "".join(ASCII_SPELLINGS.get(ch, "?") for ch in text), error.end


codecs.register_error(ERROR_HANDLER, _ascii_spelling)


def _lossless(encoding: str | None) -> bool:
    """Whether an encoding can write every character (a UTF codec)."""
    if not encoding:
        return False
    return codecs.lookup(encoding).name.startswith("utf")


def safe_streams() -> None:
    """Make sys.stdout and sys.stderr spell unencodable characters in ASCII (see module)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and not _lossless(getattr(stream, "encoding", None)):
            reconfigure(errors=ERROR_HANDLER)


# --------------------------------------------------------------------------- stdout


class OutputFailed(Exception):
    """Writing the command's output to stdout failed (`errno`: EPIPE when the reader closed
    the pipe, ENOSPC for a full disk, EBADF for a closed descriptor).

    Not an OSError: click turns an OSError with EPIPE into its own exit status 1 and other
    code may catch OSErrors about files; the CLI's entry point handles this one alone.
    """

    def __init__(self, error_number: int, reason: str) -> None:
        super().__init__(reason)
        self.errno = error_number
        self.reason = reason


class GuardedStdout:
    """sys.stdout whose failed writes and flushes raise `OutputFailed` (everything else is
    the stream's own); `None` stands for a descriptor 1 that was closed at start-up, where
    every write fails with EBADF instead of vanishing."""

    def __init__(self, stream: object | None) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        """Write to the stream; its failure as `OutputFailed`."""
        if self._stream is None:
            raise OutputFailed(errno.EBADF, os.strerror(errno.EBADF))
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise OutputFailed(exc.errno or errno.EIO, exc.strerror or str(exc)) from None

    def flush(self) -> None:
        """Flush the stream; its failure as `OutputFailed`."""
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except OSError as exc:
            raise OutputFailed(exc.errno or errno.EIO, exc.strerror or str(exc)) from None

    def isatty(self) -> bool:
        """Whether the stream is a terminal (a closed one is not)."""
        return self._stream is not None and self._stream.isatty()

    def __getattr__(self, name: str) -> object:
        if self._stream is None:
            raise AttributeError(name)
        return getattr(self._stream, name)


@contextmanager
def guarded_stdout() -> Iterator[None]:
    """sys.stdout as a `GuardedStdout` for the block (a closed descriptor 1 is first taken
    by /dev/null, so no file the command opens can become its stdout)."""
    previous = sys.stdout
    if isinstance(previous, GuardedStdout):
        yield
        return
    if previous is None:
        _devnull_on_stdout()
    sys.stdout = GuardedStdout(previous)
    try:
        yield
    finally:
        sys.stdout = previous


def silence_stdout() -> None:
    """After stdout failed: send descriptor 1 to /dev/null, so the interpreter's last
    flush of what is still buffered does not fail again ("Exception ignored ...")."""
    stream = sys.__stdout__
    try:
        if stream is not None:
            os.dup2(_devnull(), stream.fileno())
    except (OSError, ValueError):
        pass


def _devnull_on_stdout() -> None:
    """Put /dev/null on a closed descriptor 1 (the lowest free descriptor is taken)."""
    fd = _devnull()
    if fd != 1:
        os.dup2(fd, 1)
        os.close(fd)


def _devnull() -> int:
    return os.open(os.devnull, os.O_WRONLY)


# --------------------------------------------------------------------------- stderr notes

#: Lines for stderr held until the command's output is complete (`after_output`).
_AFTER_OUTPUT: list[str] = []


def after_output(line: str) -> None:
    """Print `line` (a warning, a summary) on stderr once the command has succeeded: its
    files committed and its standard output flushed. A command refused later (a bad input
    found after the line was made, a full disk, a full or closed stdout) prints only its
    one error line, never a warning before it."""
    _AFTER_OUTPUT.append(line)


def take_after_output() -> list[str]:
    """The lines held by `after_output`, in order, and none held any more."""
    lines = list(_AFTER_OUTPUT)
    _AFTER_OUTPUT.clear()
    return lines


def warn_after_output(lines: list[str]) -> None:
    """Each line (e.g. of `simulate.fit_warnings`) as `fpgasim: warning: ...` on stderr,
    once the command has succeeded (`after_output`): never before a refusal."""
    for line in lines:
        after_output(f"fpgasim: warning: {line}")
