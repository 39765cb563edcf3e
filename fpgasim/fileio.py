"""Output files: checked before any work, written all or nothing, with the user's umask.

Guarantees (docs/formats.md, "Output files"):

- **Checked first.** `check_output_path` refuses, before a command does any work, an output
  path that is too long, is a folder (or, for a folder output, a file), lies under a
  regular file, has a `..` after a folder that does not exist (`../out/../o.csv` without
  `../out`: the OS resolves `..` through existing folders only), or whose nearest existing
  folder cannot be written (a real probe file is created and removed, so read-only mounts
  and permissions are both caught). Missing folders are fine: they are created when the
  files are committed.
- **All or nothing.** Inside an `OutputTransaction` (the CLI opens one around every
  command, see `fpgasim.cli.main`) `atomic_write_bytes`, `write_frame` and `write_figure`
  only stage their bytes. When the command succeeds, `commit` writes every staged file to a
  temporary file beside its destination and, once all of them are written, renames each
  into place; if anything fails, or the command fails or is interrupted, no destination
  file is created or changed. Outside a transaction each file is still written atomically.
  Messages about written files are queued with `after_commit` and shown only after the
  commit succeeded; a failed commit (e.g. a full disk) names the argument that gave the
  failing path (as registered by `check_output_path`).
- **Permissions.** Files get mode 0666 minus the process umask (0644 under umask 022),
  like files written by `open()`, not `tempfile`'s private 0600.
"""

from __future__ import annotations

import io
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fpgasim.errors import FpgasimError, InputError

if TYPE_CHECKING:  # the CLI imports this module at start-up: numpy/pandas only when used
    import pandas as pd

FRAME_SUFFIXES = {".csv", ".parquet", ".pq"}
#: Longest file or folder name (bytes) and whole path (characters) an output may have (Linux).
NAME_MAX = 255
PATH_MAX = 4096

_ACTIVE: list[OutputTransaction] = []


# --------------------------------------------------------------------------- checks


def check_name_lengths(text: str, argument: str) -> None:
    """Refuse a path whose whole or any component is longer than the OS allows."""
    if len(text) > PATH_MAX:
        raise InputError(argument, text, f"a path of at most {PATH_MAX} characters")
    for part in Path(text).parts:
        if len(part.encode("utf-8", "surrogateescape")) > NAME_MAX:
            raise InputError(argument, text, f"file and folder names of at most {NAME_MAX} bytes")


def check_input_path(path: Path | str | None, argument: str) -> None:
    """Refuse, before the file system is touched, an input path the OS cannot even look up."""
    if path is not None:
        check_name_lengths(str(path), argument)


def check_output_path(path: Path | str, argument: str, *, folder: bool = False) -> Path:
    """Fail before any work when `path` cannot receive a file (a folder, with `folder`).

    Missing folders on the way are allowed (they are created at commit); see the module
    docstring for what is refused.
    """
    text = str(path)
    if not text.strip():
        raise InputError(argument, text, "a file path")
    check_name_lengths(text, argument)
    path = Path(text)
    try:
        if path.exists():
            if folder and not path.is_dir():
                raise InputError(argument, text, "a folder (this is a file)")
            if not folder and path.is_dir():
                raise InputError(argument, text, "a file path, not a folder")
            if not folder and not path.is_file():  # a device, socket or fifo: never replaced
                raise InputError(argument, text, "a regular file path (this is a special file)")
        nearest = path if folder and path.is_dir() else path.parent
        while not nearest.exists() and nearest != nearest.parent:
            if nearest.name == "..":  # the commit would create it: the OS cannot
                raise InputError(argument, text, f"a path whose `..` follows an existing "
                                 f"folder ({nearest.parent} is not an existing folder)")
            nearest = nearest.parent
        if not nearest.is_dir():
            raise InputError(argument, text, f"a path under a folder ({nearest} is a file)")
        fd, probe = tempfile.mkstemp(dir=nearest, prefix=".fpgasim-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise InputError(argument, text, f"a writable place ({reason})") from None
    if _ACTIVE:  # a failure to write under this path at commit names this argument
        _ACTIVE[-1].arguments[path] = argument
    return path


def check_out_path(path: Path, argument: str = "out") -> None:
    """Fail early on a table output: .csv or .parquet, and a writable place (above)."""
    if path.suffix.lower() not in FRAME_SUFFIXES:
        raise InputError(argument, str(path), "a file ending in .csv or .parquet")
    check_output_path(path, argument)


# --------------------------------------------------------------------------- transaction


def file_mode() -> int:
    """0666 minus the process umask: the mode `open()` would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


class OutputTransaction:
    """Files staged in memory, written all together by `commit` (see the module docstring)."""

    def __init__(self) -> None:
        self.staged: dict[Path, bytes] = {}
        #: checked output paths (files or folders) -> the argument that named each
        self.arguments: dict[Path, str] = {}
        self.reports: list[Callable[[], None]] = []
        #: the files `commit` wrote (what a later failure of stdout must not deny)
        self.written: list[Path] = []

    def stage(self, path: Path, data: bytes) -> None:
        """Remember `data` for `path` (a later stage of the same path replaces it)."""
        self.staged[Path(path)] = bytes(data)

    def discard(self) -> None:
        """Forget every staged file and report (nothing was written)."""
        self.staged.clear()
        self.reports.clear()

    def argument_for(self, path: Path) -> str:
        """The argument that named `path` or the nearest folder above it ("output" if none)."""
        for place in (path, *path.parents):
            if place in self.arguments:
                return self.arguments[place]
        return "output"

    def commit(self) -> list[Path]:
        """Write every staged file (temporary files first, then renames); the paths."""
        staged, self.staged = self.staged, {}
        if not staged:
            return []
        mode = file_mode()
        created: list[Path] = []
        temps: list[tuple[str, Path]] = []
        current = next(iter(staged))
        try:
            for current, data in staged.items():
                created.extend(_make_folders(current.parent))
                fd, tmp = tempfile.mkstemp(
                    dir=current.parent, prefix=f".{current.name[:64]}.", suffix=".tmp"
                )
                temps.append((tmp, current))
                with os.fdopen(fd, "wb") as handle:
                    os.fchmod(handle.fileno(), mode)
                    handle.write(data)
            for tmp, target in temps:
                os.replace(tmp, target)
        except BaseException as exc:
            for tmp, _ in temps:
                if os.path.exists(tmp):
                    os.unlink(tmp)
            for made in reversed(created):
                try:
                    made.rmdir()
                except OSError:
                    pass
            if isinstance(exc, OSError):
                reason = exc.strerror or type(exc).__name__
                argument = self.argument_for(current)
                raise InputError(argument, str(current), f"a writable path ({reason})") from None
            raise
        self.written = list(staged)
        return list(staged)

    def report(self) -> None:
        """Run the reports queued by `after_commit` (once the files are written)."""
        reports, self.reports = self.reports, []
        for report in reports:
            report()


def _make_folders(folder: Path) -> list[Path]:
    """Create `folder` and its missing parents; the folders created, outermost first."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        made.mkdir()
    return list(reversed(missing))


@contextmanager
def output_transaction() -> Iterator[OutputTransaction]:
    """Stage every file written inside the block; commit on success, discard on any error."""
    tx = OutputTransaction()
    _ACTIVE.append(tx)
    try:
        yield tx
    except BaseException:
        tx.discard()
        raise
    finally:
        _ACTIVE.remove(tx)
    tx.commit()
    tx.report()


def after_commit(report: Callable[[], None]) -> None:
    """Run `report` (e.g. print "wrote ...") only once the files staged so far are written.

    Inside a transaction it is queued and dropped if the command fails, so nothing ever
    reports a file that was not written; outside one it runs now.
    """
    if _ACTIVE:
        _ACTIVE[-1].reports.append(report)
    else:
        report()


# --------------------------------------------------------------------------- writers


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write a file whole: staged in the open transaction, else written and renamed now."""
    if _ACTIVE:
        _ACTIVE[-1].stage(Path(path), data)
        return
    tx = OutputTransaction()
    tx.stage(Path(path), data)
    tx.commit()


def check_finite_frame(frame: pd.DataFrame, what: str) -> None:
    """Refuse a table holding inf (missing values are NaN and written as empty cells)."""
    import numpy as np

    numeric = frame.select_dtypes("number")
    if numeric.empty:
        return
    bad = np.isinf(numeric.to_numpy(dtype="float64", na_value=np.nan)).any(axis=0)
    if bad.any():
        column = numeric.columns[int(np.argmax(bad))]
        raise InputError(what, column, "finite numbers (a result overflowed to inf)")


def write_frame(frame: pd.DataFrame, path: Path, argument: str = "out") -> None:
    """Write a DataFrame as CSV or Parquet, chosen by the extension, atomically."""
    suffix = path.suffix.lower()
    check_finite_frame(frame, argument)
    if suffix == ".csv":
        atomic_write_bytes(path, frame.to_csv(index=False).encode())
    elif suffix in {".parquet", ".pq"}:
        buf = io.BytesIO()
        frame.to_parquet(buf, index=False)
        atomic_write_bytes(path, buf.getvalue())
    else:
        raise InputError(argument, str(path), "a file ending in .csv or .parquet")


def write_figure(fig: Any, path: Path, dpi: int = 110) -> None:
    """Render a matplotlib figure to PNG bytes and write them atomically; close the figure."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi)
    finally:
        plt.close(fig)
    atomic_write_bytes(Path(path), buf.getvalue())


# --------------------------------------------------------------------------- JSON


class NotFinite(FpgasimError):
    """A number bound for a JSON output is inf or NaN, which JSON cannot hold."""


def json_text(obj: object, indent: int | None = 2, compact: bool = False) -> str:
    """The one JSON writer: `obj` as JSON text (numpy scalars and arrays as numbers and
    lists, anything else unknown as its str), refusing inf and NaN with the value's path
    (`NotFinite`) instead of printing `Infinity`, which is not JSON."""
    separators = (",", ":") if compact else None
    return json.dumps(_plain(obj, ""), indent=None if compact else indent,
                      separators=separators, allow_nan=False)


def _plain(obj: object, path: str) -> object:
    """`obj` as plain JSON values; `path` (e.g. `best.t_sd_s`) names it in an error."""
    if isinstance(obj, dict):
        return {str(k): _plain(v, f"{path}.{k}" if path else str(k)) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v, f"{path}[{i}]") for i, v in enumerate(obj)]
    if obj is None or isinstance(obj, bool | int | str):
        return obj
    if isinstance(obj, float):
        if not math.isfinite(obj):
            shown = path or "(top level)"
            raise NotFinite(f"output {shown} = {obj!r}: a finite number (a result "
                            "overflowed: an input is past what the model can compute)")
        return obj
    if hasattr(obj, "tolist"):  # a numpy scalar or array
        return _plain(obj.tolist(), path)
    if hasattr(obj, "item"):
        return _plain(obj.item(), path)
    return str(obj)
