"""The result cache: one row per simulated point, keyed by a hash of all of the point's inputs.

Layout: `<cache dir>/v1/points.sqlite`, one table `points(key, engine, row, created)`. The
key is the SHA-256 of a canonical JSON document holding the content hashes of the board,
model and algorithm (their full validated contents, not their names), the context, x, the
draft tree, the accepted-token count, the engine's name and version, fpgasim's version and
a fingerprint of its source code (see `point_key`). The row is the JSON of
`simulate_point`'s result.

SQLite makes every `put_many` one atomic transaction (write-ahead log): a process killed at
any instant leaves the rows of every committed chunk and nothing torn. The sweeping process
(not the workers) writes the cache, so workers on other machines need no shared disk.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import fpgasim
from fpgasim.errors import FpgasimError

#: Bump when the key document or the stored row format changes; old caches are then ignored.
CACHE_FORMAT = "v1"
CACHE_ENV = "FPGASIM_CACHE_DIR"
DB_NAME = "points.sqlite"
_BATCH = 500  # keys per SELECT (SQLite's host-parameter limit is at least 999)


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


@functools.cache
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


@dataclass(frozen=True)
class CacheInfo:
    """What `fpgasim cache info` shows."""

    path: Path
    points: int
    size_bytes: int
    by_engine: dict[str, int]


class SweepCache:
    """Rows of simulated points in `<directory>/v1/points.sqlite` (see the module docstring)."""

    def __init__(self, directory: Path | str | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.path = self.directory / CACHE_FORMAT / DB_NAME
        self._db: sqlite3.Connection | None = None

    def __enter__(self) -> SweepCache:
        self._connect()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()

    def close(self) -> None:
        """Close the database connection (the cache stays on disk)."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def _connect(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=60.0)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS points ("
                " key TEXT PRIMARY KEY, engine TEXT NOT NULL,"
                " row TEXT NOT NULL, created REAL NOT NULL)"
            )
            db.commit()
        except (OSError, sqlite3.Error) as exc:
            raise self._error(exc) from None
        self._db = db
        return db

    def _error(self, exc: BaseException) -> CacheError:
        reason = getattr(exc, "strerror", None) or str(exc)
        return CacheError(
            f"cache {self.path}: {reason}; choose another --cache-dir, run "
            f"`fpgasim cache clear`, or pass --no-cache"
        )

    def get_many(self, keys: Sequence[str]) -> dict[str, dict]:
        """The cached rows of those keys that are present (unreadable rows count as absent)."""
        db = self._connect()
        found: dict[str, dict] = {}
        unique = list(dict.fromkeys(keys))
        try:
            for start in range(0, len(unique), _BATCH):
                batch = unique[start : start + _BATCH]
                marks = ",".join("?" * len(batch))
                query = f"SELECT key, row FROM points WHERE key IN ({marks})"
                for key, text in db.execute(query, batch):
                    try:
                        row = json.loads(text)
                    except ValueError:
                        continue
                    if isinstance(row, dict):
                        found[key] = row
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        return found

    def put_many(self, items: Iterable[tuple[str, str, dict]]) -> None:
        """Store (key, engine, row) triples in one atomic transaction."""
        db = self._connect()
        now = time.time()
        records = [(k, e, json.dumps(r, separators=(",", ":")), now) for k, e, r in items]
        try:
            with db:
                db.executemany("INSERT OR REPLACE INTO points VALUES (?, ?, ?, ?)", records)
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def __len__(self) -> int:
        try:
            return self._connect().execute("SELECT COUNT(*) FROM points").fetchone()[0]
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def info(self) -> CacheInfo:
        """Number of points, bytes on disk and points per engine (nothing is created)."""
        if not self.path.exists():
            return CacheInfo(self.path, 0, 0, {})
        try:
            by_engine = dict(
                self._connect()
                .execute("SELECT engine, COUNT(*) FROM points GROUP BY engine ORDER BY engine")
                .fetchall()
            )
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        size = sum(p.stat().st_size for p in self.path.parent.glob(DB_NAME + "*") if p.is_file())
        return CacheInfo(self.path, sum(by_engine.values()), size, by_engine)

    def clear(self) -> int:
        """Delete every cached point (and files of older cache formats); return how many."""
        self.close()
        try:
            count = self.info().points if self.path.exists() else 0
        except CacheError:  # unreadable: delete it all the same
            count = 0
        self.close()
        if not self.directory.is_dir():
            return count
        try:
            for fmt_dir in self.directory.iterdir():
                if fmt_dir.is_dir() and fmt_dir.name.startswith("v"):
                    for f in fmt_dir.glob(DB_NAME + "*"):
                        f.unlink()
                    if not any(fmt_dir.iterdir()):
                        fmt_dir.rmdir()
        except OSError as exc:
            raise self._error(exc) from None
        return count
