"""The result cache: one row per simulated point, keyed by a hash of all of the point's inputs.

Layout: `<cache dir>/v2/points.sqlite`, one table
`points(key, engine, row, checksum, bytes, created, used)`. The key is the SHA-256 of a
canonical JSON document holding the content hashes of the board, model and algorithm
(their full validated contents, not their names), the context, x, the draft tree, the
accepted-token count, the engine's name and version, fpgasim's version and a fingerprint of
its source code (see `point_key`). The row is the JSON of `simulate_point`'s result.

Guarantees (docs/scaling.md, "The result cache"):

- **Honest.** Every row stores the SHA-256 of its key, engine and row text (`row_checksum`).
  A row that fails it (altered or torn on disk) or is not a JSON object is refused: it
  counts as missing, is deleted, recomputed and stored again, and the sweep's summary line
  on stderr says how many rows were refused.
- **Consistent.** SQLite makes every `put_many` one atomic transaction (write-ahead log): a
  process killed at any instant leaves the rows of every committed chunk and nothing torn.
  The sweeping process (not the workers) writes the cache, so workers on other machines
  need no shared disk.
- **Shared.** Any number of processes may use one cache at once: readers never block
  (write-ahead log), each write is one short `BEGIN IMMEDIATE` transaction, and a lock held
  by another process is waited for and retried (`_run`), never reported as an error unless
  it outlasts `RETRY_DEADLINE_S`. `clear` empties the database in a transaction instead of
  deleting files under other processes. A cache whose file or folder is read-only is read
  (every cached point is served) and stores nothing.
- **Bounded.** The rows' bytes (key + row + checksum text) stay under a size limit
  (`DEFAULT_LIMIT_MB`, else `$FPGASIM_CACHE_LIMIT_MB`, else `--cache-limit-mb`): after each
  `put_many` the least recently used rows (by `used`, the last time a row was stored or
  served) are evicted and their pages returned to the file system (incremental vacuum).
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import json
import math
import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

import fpgasim
from fpgasim.bounded import memoised
from fpgasim.errors import FpgasimError
from fpgasim.fileio import NAME_MAX, PATH_MAX, json_text

#: Bump when the key document or the stored row format changes; old caches are then ignored.
CACHE_FORMAT = "v2"
CACHE_ENV = "FPGASIM_CACHE_DIR"
#: Environment variable and default of the cache's size limit, MiB of stored rows (about
#: 1.7 million sweep rows of ~600 bytes each).
LIMIT_ENV = "FPGASIM_CACHE_LIMIT_MB"
DEFAULT_LIMIT_MB = 1024
MAX_LIMIT_MB = 1 << 24
#: What `cache info` reports as the eviction policy.
POLICY = "LRU (least recently stored or served rows are evicted first)"
DB_NAME = "points.sqlite"
_BATCH = 500  # keys per SELECT (SQLite's host-parameter limit is at least 999)
#: Seconds SQLite itself waits for another connection's lock within one attempt.
BUSY_TIMEOUT_S = 30.0
#: Seconds one cache operation keeps retrying a lock held by other processes.
RETRY_DEADLINE_S = 600.0
#: Seconds between re-reads of the stored bytes (other processes add rows too).
TOTAL_REFRESH_S = 5.0
# SQLite primary result codes (sqlite3.h)
_SQLITE_PERM, _SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY, _SQLITE_CANTOPEN = 3, 5, 6, 8, 14
_SQLITE_IOERR = 10
T = TypeVar("T")


class CacheError(FpgasimError):
    """The cache directory cannot be created, read or written."""


def default_cache_dir() -> Path:
    """`$FPGASIM_CACHE_DIR`, else `$XDG_CACHE_HOME/fpgasim`, else `~/.cache/fpgasim`."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "fpgasim"


# --------------------------------------------------------------------------- keys


@memoised("sweep.code_fingerprint", owner="fpgasim.sweep.cache", keys="nothing (one value)",
          budget=1, why="part of every point's key: fpgasim's sources are hashed once per "
          "process")
def code_fingerprint() -> str:
    """SHA-256 of fpgasim's own Python sources (computed once per process).

    Part of every key, so editing a checkout (an engine change without a version bump)
    never serves rows computed by other code; installed releases keep their cache.
    """
    root = Path(fpgasim.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def content_hash(model: BaseModel) -> str:
    """SHA-256 of a validated config object's class and full field contents."""
    text = type(model).__name__ + ":" + model.model_dump_json()
    return hashlib.sha256(text.encode()).hexdigest()


def _canonical(value: Any, memo: dict[int, str]) -> Any:
    """A JSON-able, order-stable image of a key input (config objects by content hash)."""
    if isinstance(value, BaseModel):
        if id(value) not in memo:
            memo[id(value)] = content_hash(value)
        return {"sha256": memo[id(value)]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _canonical(getattr(value, f.name), memo) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_canonical(v, memo) for v in value]
    if isinstance(value, dict):
        return {str(k): _canonical(v, memo) for k, v in sorted(value.items())}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if hasattr(value, "item"):  # numpy scalar
        return value.item()
    raise TypeError(f"cannot build a cache key from {type(value).__name__}")


def point_key(
    point: Any, engine: str, engine_version: str, memo: dict[int, str] | None = None
) -> str:
    """The cache key of one point: every field of the `Point`, the engine, fpgasim's code.

    `memo` (id -> hash) lets a sweep hash each shared board/model object once; it must not
    outlive the objects it refers to.
    """
    document = {
        "format": CACHE_FORMAT,
        "fpgasim": fpgasim.__version__,
        "code": code_fingerprint(),
        "engine": engine,
        "engine_version": str(engine_version),
        "point": _canonical(point, {} if memo is None else memo),
    }
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


# --------------------------------------------------------------------------- store


def row_checksum(key: str, engine: str, row_text: str) -> str:
    """SHA-256 over a row's key, engine and stored JSON text (what a stored row must match)."""
    return hashlib.sha256(f"{key}\n{engine}\n{row_text}".encode()).hexdigest()


def limit_bytes(limit_mb: float | None = None) -> int:
    """The size limit in bytes: `limit_mb`, else `$FPGASIM_CACHE_LIMIT_MB`, else the default."""
    source, value = "`cache_limit_mb`", limit_mb  # a field: the CLI shows its flag
    if value is None:
        text = os.environ.get(LIMIT_ENV)
        if not text:
            return DEFAULT_LIMIT_MB << 20
        source = LIMIT_ENV
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not 1 <= value <= MAX_LIMIT_MB:  # refuses nan; shows the text as given
            raise CacheError(f"{source} = {text!r}: a size in MiB between 1 and {MAX_LIMIT_MB}")
    if not (isinstance(value, int | float) and 1 <= value <= MAX_LIMIT_MB):  # refuses nan
        raise CacheError(f"{source} = {value!r}: a size in MiB between 1 and {MAX_LIMIT_MB}")
    return int(value * (1 << 20))


@dataclass(frozen=True)
class CacheInfo:
    """What `fpgasim cache info` shows."""

    path: Path
    points: int
    size_bytes: int
    by_engine: dict[str, int]
    row_bytes: int = 0
    limit_bytes: int = DEFAULT_LIMIT_MB << 20
    policy: str = POLICY


class SweepCache:
    """Rows of simulated points in `<directory>/v2/points.sqlite` (see the module docstring).

    `refused` counts the rows that failed their checksum, `evicted` the rows dropped by the
    size limit and `unstored` the rows a read-only cache could not keep, since the cache was
    opened. `read_only` says whether the database could only be opened for reading.
    """

    def __init__(self, directory: Path | str | None = None, limit_mb: float | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.path = self.directory / CACHE_FORMAT / DB_NAME
        self.limit_bytes = limit_bytes(limit_mb)
        self.refused = 0
        self.evicted = 0
        self.unstored = 0
        self.read_only = False
        self._db: sqlite3.Connection | None = None
        self._total: int | None = None
        self._total_read_at = 0.0

    def __enter__(self) -> SweepCache:
        self._run(lambda db: None)
        if not self.read_only and _no_space(self.path.parent):
            # every store (and every row served: its use is recorded) would fail: say so
            # before any point is computed, not after the first chunk
            self.close()
            raise CacheError(f"cache {self.path}: database or disk is full (no space left "
                             "on the cache's file system); choose another `cache_dir`, run "
                             "`fpgasim cache clear`, or pass `no_cache`")
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()

    def close(self) -> None:
        """Close the database connection (the cache stays on disk)."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def check_layout(self) -> None:
        """Refuse a cache folder (or its format folder or database) that is the wrong kind."""
        text = str(self.path)
        if len(text) > PATH_MAX or any(len(os.fsencode(p)) > NAME_MAX for p in self.path.parts):
            raise CacheError(f"cache {self.directory}: path too long; choose another `cache_dir`")
        if self.path.exists():
            if not self.path.is_file():
                raise CacheError(
                    f"cache {self.path}: not a file; remove it or choose another `cache_dir`"
                )
            return
        folder = self.path.parent  # the nearest existing folder on the way must be one
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if not folder.is_dir():
            raise CacheError(
                f"cache {self.directory}: {folder} is a file, not a folder; choose another "
                "`cache_dir` or remove the file"
            )

    def _connect(self) -> sqlite3.Connection:
        """The open connection: read-write, else read-only when the location refuses writes.

        Autocommit mode (`isolation_level=None`): every write is an explicit short
        `BEGIN IMMEDIATE` transaction (`_write`), so no connection ever holds a read snapshot
        that it later tries to upgrade (SQLite's immediate SQLITE_BUSY_SNAPSHOT).
        """
        if self._db is not None:
            return self._db
        self.check_layout()
        db = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            db.execute("PRAGMA auto_vacuum=INCREMENTAL")  # only takes effect on a new file
            db.execute("PRAGMA journal_mode=WAL")  # persistent: a no-op on an existing cache
            db.execute("PRAGMA synchronous=NORMAL")
            query = "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('points', 'points_used')"
            if db.execute(query).fetchone()[0] < 2:  # a new file: only then take the lock
                self._write(db, _create_schema)
        except (OSError, sqlite3.Error) as exc:
            if db is not None:
                db.close()
            if not (_write_denied(exc) and self.path.is_file()):
                raise
            db = self._connect_read_only()
        self._db = db
        return db

    def _connect_read_only(self) -> sqlite3.Connection:
        """Open an existing cache whose file or folder refuses writes, for reading only.

        `mode=ro` reads a write-ahead log beside it when SQLite can map its index; where it
        cannot even create that (a read-only folder without `-shm`), `immutable=1` reads the
        main file as it is (rows still in an orphaned log are then missing, not wrong).
        """
        uri = self.path.resolve().as_uri()
        for flags in ("mode=ro", "mode=ro&immutable=1"):
            db = sqlite3.connect(
                f"{uri}?{flags}", uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None
            )
            try:
                db.execute("SELECT COUNT(*) FROM points").fetchall()
            except sqlite3.Error as exc:
                db.close()
                if flags.endswith("immutable=1") or not _write_denied(exc):
                    raise
                continue
            self.read_only = True
            return db
        raise AssertionError("unreachable")

    def _run(self, action: Callable[[sqlite3.Connection], T]) -> T:
        """`action(connection)`, retried while another process holds the database locked.

        SQLite's busy timeout already waits `BUSY_TIMEOUT_S` inside each attempt; a lock
        still held after that (a long checkpoint, a writer on a slow disk) is retried with
        jittered exponential back-off until `RETRY_DEADLINE_S`, then reported as one line.
        """
        deadline = time.monotonic() + RETRY_DEADLINE_S
        delay_s = 0.01
        while True:
            try:
                return action(self._connect())
            except (OSError, sqlite3.Error) as exc:
                if not _busy(exc) or time.monotonic() >= deadline:
                    raise self._error(exc) from None
            time.sleep(delay_s * (1.0 + random.random()))
            delay_s = min(2.0 * delay_s, 1.0)

    @staticmethod
    def _write(db: sqlite3.Connection, statements: Callable[[sqlite3.Connection], T]) -> T:
        """`statements(db)` as one `BEGIN IMMEDIATE` transaction (write lock taken first)."""
        db.execute("BEGIN IMMEDIATE")
        try:
            result = statements(db)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return result

    def _error(self, exc: BaseException) -> CacheError:
        reason = getattr(exc, "strerror", None) or str(exc)
        if _sqlite_code(exc) == _SQLITE_IOERR and _no_space(self.path.parent):
            # SQLite reports a write to its shared-memory index on a full file system as
            # a generic I/O error: the cause is the disk
            reason = "database or disk is full (no space left on the cache's file system)"
        if _write_denied(exc):
            return CacheError(
                f"cache {self.path}: read-only ({reason}); make it writable, choose another "
                "`cache_dir`, or pass `no_cache`"
            )
        return CacheError(
            f"cache {self.path}: {reason}; choose another `cache_dir`, run "
            f"`fpgasim cache clear`, or pass `no_cache`"
        )

    def get_many(self, keys: Sequence[str]) -> dict[str, dict]:
        """The cached rows of those keys that are present and pass their checksum.

        Rows that fail it (or are not JSON objects) are deleted and counted in `refused`,
        so the caller recomputes them; the rows served are marked as used now (LRU).
        A read-only cache is only read.
        """
        unique = list(dict.fromkeys(keys))

        def read(db: sqlite3.Connection) -> list[tuple]:
            stored: list[tuple] = []
            for start in range(0, len(unique), _BATCH):
                batch = unique[start : start + _BATCH]
                marks = ",".join("?" * len(batch))
                # as bytes: SQLite hands TEXT to Python as UTF-8, and one undecodable byte
                # would fail the whole batch instead of refusing its row (`_valid_row`)
                query = ("SELECT key, CAST(engine AS BLOB), CAST(row AS BLOB), "
                         f"CAST(checksum AS BLOB) FROM points WHERE key IN ({marks})")
                stored += db.execute(query, batch).fetchall()
            return stored

        found: dict[str, dict] = {}
        refused: list[str] = []
        for key, engine, text, checksum in self._run(read):
            row = _valid_row(key, engine, text, checksum)
            if row is None:
                refused.append(key)
            else:
                found[key] = row
        self.refused += len(refused)
        if self.read_only or not (found or refused):
            return found
        served, now = list(found), time.time()

        def mark(db: sqlite3.Connection) -> None:
            for start in range(0, len(served), _BATCH):
                batch = served[start : start + _BATCH]
                marks = ",".join("?" * len(batch))
                db.execute(f"UPDATE points SET used = ? WHERE key IN ({marks})", [now, *batch])
            db.executemany("DELETE FROM points WHERE key = ?", [(k,) for k in refused])

        self._run(lambda db: self._write(db, mark))
        if refused:
            self._total = None
        return found

    def put_many(self, items: Iterable[tuple[str, str, dict]]) -> None:
        """Store (key, engine, row) triples in one atomic transaction, then keep the limit.

        Rows are serialised and checksummed before the write lock is taken, so the
        transaction is only the inserts (and an eviction when over the limit). A read-only
        cache stores nothing and counts the rows in `unstored`.
        """
        now = time.time()
        records = []
        for key, engine, row in items:
            text = json_text(row, compact=True)
            checksum = row_checksum(key, engine, text)
            size = len(key) + len(text) + len(checksum)
            records.append((key, engine, text, checksum, size, now, now))
        if not records:
            return
        self._run(lambda db: None)
        if self.read_only:
            self.unstored += len(records)
            return
        evicted_before = self.evicted

        def store(db: sqlite3.Connection) -> int:
            db.executemany("INSERT OR REPLACE INTO points VALUES (?, ?, ?, ?, ?, ?, ?)", records)
            # other processes write too: the running total is re-read every TOTAL_REFRESH_S
            # and before any eviction, so it never lags far behind the file
            stale = time.monotonic() - self._total_read_at > TOTAL_REFRESH_S
            if self._total is None or stale:
                total = self._stored_bytes(db)
                self._total_read_at = time.monotonic()
            else:
                total = self._total + sum(r[4] for r in records)
            if total > self.limit_bytes:
                total = self._evict(db, self._stored_bytes(db))
            return total

        self._total = self._run(lambda db: self._write(db, store))
        if self.evicted > evicted_before:  # give the freed pages back to the disk
            self._run(lambda db: db.execute("PRAGMA incremental_vacuum").fetchall())
            self._run(lambda db: db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())

    @staticmethod
    def _stored_bytes(db: sqlite3.Connection) -> int:
        return int(db.execute("SELECT COALESCE(SUM(bytes), 0) FROM points").fetchone()[0])

    def _evict(self, db: sqlite3.Connection, total: int) -> int:
        """Delete least recently used rows until the stored bytes fit the limit; the total."""
        excess = total - self.limit_bytes
        if excess <= 0:
            return total
        victims, freed = [], 0
        cursor = db.execute("SELECT key, bytes FROM points ORDER BY used, key")
        try:
            for key, size in cursor:
                victims.append((key,))
                freed += size
                if freed >= excess:
                    break
        finally:
            cursor.close()  # a statement left open would pin this connection's snapshot
        db.executemany("DELETE FROM points WHERE key = ?", victims)
        self.evicted += len(victims)
        return total - freed

    def __len__(self) -> int:
        return self._run(lambda db: db.execute("SELECT COUNT(*) FROM points").fetchone()[0])

    def info(self) -> CacheInfo:
        """Rows (per engine), bytes on disk and of rows, the limit and policy (creates nothing)."""
        self.check_layout()
        if not self.path.exists():
            return CacheInfo(self.path, 0, 0, {}, 0, self.limit_bytes)

        def count(db: sqlite3.Connection) -> tuple[dict[str, int], int]:
            query = "SELECT engine, COUNT(*) FROM points GROUP BY engine ORDER BY engine"
            return dict(db.execute(query).fetchall()), self._stored_bytes(db)

        by_engine, row_bytes = self._run(count)
        size = sum(p.stat().st_size for p in self.path.parent.glob(DB_NAME + "*") if p.is_file())
        return CacheInfo(
            self.path, sum(by_engine.values()), size, by_engine, row_bytes, self.limit_bytes
        )

    def clear(self) -> int:
        """Delete every cached point (and files of older cache formats); return how many.

        The current database is emptied by one `DELETE` transaction, never unlinked, so a
        sweep writing to it at the same time keeps a valid file (its later rows stay); only
        a database SQLite cannot read at all is deleted as files.
        """
        self.close()
        self.check_layout()
        count = 0
        if self.path.exists():
            try:
                count = self._run(lambda db: self._write(db, _delete_all))
                if self.read_only:
                    raise CacheError(
                        f"cache {self.path}: read-only; nothing was removed (make it "
                        "writable or choose another `cache_dir`)"
                    )
                self._run(lambda db: db.execute("PRAGMA incremental_vacuum").fetchall())
                self._run(lambda db: db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall())
            except CacheError:
                if self.read_only or not _unreadable(self.path):
                    raise
                self._unlink(self.path.parent)  # not a database at all: delete the files
            finally:
                self.close()
        self._total = None
        if not self.directory.is_dir():
            return count
        for fmt_dir in self.directory.iterdir():
            if fmt_dir.is_dir() and fmt_dir.name.startswith("v") and fmt_dir.name != CACHE_FORMAT:
                self._unlink(fmt_dir)
        return count

    def _unlink(self, fmt_dir: Path) -> None:
        """Delete the database files of one format folder (and the folder once empty)."""
        try:
            for f in fmt_dir.glob(DB_NAME + "*"):
                f.unlink()
            if not any(fmt_dir.iterdir()):
                fmt_dir.rmdir()
        except OSError as exc:
            raise self._error(exc) from None


def _create_schema(db: sqlite3.Connection) -> None:
    """The table of points and its LRU index (when missing)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS points ("
        " key TEXT PRIMARY KEY, engine TEXT NOT NULL, row TEXT NOT NULL,"
        " checksum TEXT NOT NULL, bytes INTEGER NOT NULL,"
        " created REAL NOT NULL, used REAL NOT NULL)"
    )
    db.execute("CREATE INDEX IF NOT EXISTS points_used ON points(used)")


def _delete_all(db: sqlite3.Connection) -> int:
    """Delete every row; how many there were."""
    count = int(db.execute("SELECT COUNT(*) FROM points").fetchone()[0])
    db.execute("DELETE FROM points")
    return count


def _sqlite_code(exc: BaseException) -> int | None:
    """SQLite's primary result code of an error (None when it carries none)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def _busy(exc: BaseException) -> bool:
    """Another connection holds the lock (SQLITE_BUSY, SQLITE_LOCKED): worth retrying."""
    code = _sqlite_code(exc)
    if code is not None:
        return code in (_SQLITE_BUSY, _SQLITE_LOCKED)
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


def _write_denied(exc: BaseException) -> bool:
    """The file system or permissions refuse a write (read-only mount, folder or file)."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
    return _sqlite_code(exc) in (_SQLITE_READONLY, _SQLITE_CANTOPEN, _SQLITE_PERM)


def _no_space(folder: Path) -> bool:
    """Whether the file system holding `folder` (or its nearest existing parent) has no
    free block left for this user."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        return os.statvfs(folder).f_bavail == 0
    except OSError:
        return False


def _unreadable(path: Path) -> bool:
    """The file is not an SQLite database (the header SQLite writes is missing)."""
    try:
        with path.open("rb") as handle:
            return handle.read(16) != b"SQLite format 3\x00"
    except OSError:
        return True


def _valid_row(key: str, engine: object, text: object, checksum: object) -> dict | None:
    """The stored row as a dict when its engine, row and checksum are UTF-8 text (stored
    bytes, as `get_many` reads them), it passes its checksum and is a JSON object, else
    None."""
    try:
        engine, text, checksum = (
            v.decode("utf-8") if isinstance(v, bytes) else v for v in (engine, text, checksum)
        )
    except UnicodeDecodeError:
        return None
    if not isinstance(text, str) or not isinstance(engine, str):
        return None
    if checksum != row_checksum(key, engine, text):
        return None
    try:
        row = json.loads(text)
    except ValueError:
        return None
    return row if isinstance(row, dict) else None
