"""Measured AAT tables: load CSV/Parquet files of the reference layout, validate, select curves.

Two layouts are recognised by their header:
- AAT rows (`AAT_COLUMNS`, optional `draft_depth`, `draft_top_k`): one measured AAT per
  (algorithm, model, task, context, structure, method, verify_len);
- the per-x draft-configuration table (`tree_table_columns()`): the tree used to cost the
  draft at x when the AAT at x comes from a fitted curve (docs/accounting.md).
Rows with `method: original` are the algorithm's default tree (the Ori set), never part of
a searched curve.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fpgasim.bounded import bounded_cache, memoised
from fpgasim.config.loader import data_root
from fpgasim.config.schema import Algorithm, DrafterSchema
from fpgasim.datafiles import folder_entries, read_table
from fpgasim.dataflow.drafters import DRAFTERS
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import ConfigError, InputError, printable
from fpgasim.tree.shapes import parse_shape

AAT_COLUMNS = (
    "algorithm",
    "model",
    "task",
    "context",
    "structure",
    "method",
    "verify_len",
    "tree_shape",
    "aat",
)
OPTIONAL_COLUMNS = ("draft_depth", "draft_top_k")


def tree_table_columns() -> tuple[str, ...]:
    """The columns of a per-x tree table: verify_len, then the `tree_table_columns` of every
    registered drafter (in registration order, each once): the shipped drafters give
    verify_len, longspec_tree_shape, eagle3_depth, eagle3_top_k."""
    columns = ["verify_len"]
    for plugin in DRAFTERS.values():
        columns += [c for c in plugin.schema.tree_table_columns if c not in columns]
    return tuple(columns)


def _tree_column_families() -> list[tuple[tuple[str, ...], str]]:
    """(columns, tree family) of each registered drafter's tree-table columns, each once."""
    seen: set[tuple[str, ...]] = set()
    out = []
    for plugin in DRAFTERS.values():
        columns = plugin.schema.tree_table_columns
        if columns not in seen:
            seen.add(columns)
            out.append((columns, plugin.schema.tree_family))
    return out

STRUCTURES = ("tree", "chain")
METHODS = ("prior_score", "width", "depth", "original", "chain", "eagle3_dynamic")
ORIGINAL = "original"
#: Searched-curve methods tried in this order when none is asked for.
CURVE_METHOD_ORDER = ("prior_score", "eagle3_dynamic", "width", "depth", "chain")
KEY_COLUMNS = ("algorithm", "model", "task", "context", "structure", "method", "verify_len")
SUFFIXES = (".csv", ".parquet", ".pq")
MAX_VERIFY_LEN = 4096
#: The name of the measured AAT tables shipped with fpgasim (workloads/aat/README.md), usable
#: wherever a folder of AAT tables is asked for (`--aat-dir builtin`), from any install.
BUILTIN_AAT = "builtin"


@dataclass(frozen=True)
class AatTables:
    """Everything read from an AAT folder.

    rows: one row per measured point, the AAT_COLUMNS + draft_depth, draft_top_k (nullable
    ints) + `file` (the file name it came from) and `line` (its row label in that file).
    tree_table: the per-x draft configuration (`tree_table_columns()`), or None.
    """

    rows: pd.DataFrame
    tree_table: pd.DataFrame | None
    files: tuple[str, ...]
    #: `rows` by algorithm and by (algorithm, model), each group's rows as `rows` holds
    #: them (same order and labels; read, never changed): a lookup is a dict access, not
    #: pandas filters over every row (1.2 ms each, 97 of them for a `generate`)
    by_algorithm: dict[str, pd.DataFrame] = field(init=False, repr=False, compare=False)
    by_pair: dict[tuple[str, str], pd.DataFrame] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        rows = self.rows
        by_algorithm = dict(iter(rows.groupby("algorithm", sort=False))) if len(rows) else {}
        by_pair = dict(iter(rows.groupby(["algorithm", "model"], sort=False))) if len(rows) else {}
        object.__setattr__(self, "by_algorithm", by_algorithm)
        object.__setattr__(self, "by_pair", by_pair)


# --------------------------------------------------------------------------- reading


def builtin_aat_dir() -> Path:
    """workloads/aat: the study's measured AAT tables, shipped in the checkout and the wheel."""
    return data_root() / "workloads" / "aat"


def aat_path(path: Path | str) -> Path:
    """A folder or file of AAT tables: BUILTIN_AAT names the shipped folder (a folder that
    happens to be called `builtin` is `./builtin`), anything else is that path."""
    return builtin_aat_dir() if str(path) == BUILTIN_AAT else Path(path)


def aat_files(path: Path) -> list[Path]:
    """The table files of a folder (sorted; .csv/.parquet/.pq, hidden files skipped) or [file]."""
    path = aat_path(path)
    if path.is_file():
        if path.suffix.lower() not in SUFFIXES:
            raise ConfigError(str(path), "file", path.name, "a .csv or .parquet AAT table")
        return [path]
    if not path.is_dir():
        raise ConfigError(
            str(path),
            "path",
            str(path),
            f"a folder (or file) of AAT tables, or '{BUILTIN_AAT}' for the shipped ones",
            argument="aat_dir",
        )
    found = [
        p
        for p in folder_entries(path, "aat_dir")
        if p.is_file() and p.suffix.lower() in SUFFIXES and not p.name.startswith(".")
    ]
    if not found:
        raise ConfigError(
            str(path), "files", "none", "at least one .csv or .parquet AAT table in the folder"
        )
    return found


def read_raw(path: Path) -> pd.DataFrame:
    """A table file as a DataFrame of raw cells (CSV: strings; Parquet: stored types), its
    size checked before reading (`datafiles.read_table`)."""
    frame = read_table(path, "AAT table", dtype=str, keep_default_na=False,
                       skipinitialspace=True)
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _label(path: Path, index: int) -> str:
    """Where a row sits: 'line N' of a CSV (header = line 1), 'row N' of a Parquet file."""
    return f"line {index + 2}" if path.suffix.lower() == ".csv" else f"row {index + 1}"


def _blank(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return pd.isna(value) if not isinstance(value, str) else value.strip() == ""


def _int_cell(path: Path, i: int, col: str, value: object, lo: int, hi: int) -> int:
    """An integer cell within [lo, hi] (accepts '128', 128, 128.0)."""
    try:
        number = float(str(value).strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number != int(number) or not lo <= number <= hi:
        raise ConfigError(
            str(path), f"{_label(path, i)}, column {col}", value, f"a whole number {lo}..{hi}"
        )
    return int(number)


def _opt_int_cell(path: Path, i: int, col: str, value: object, lo: int, hi: int) -> int | None:
    return None if _blank(value) else _int_cell(path, i, col, value, lo, hi)


def _text_cell(path: Path, i: int, col: str, value: object, allowed: Sequence[str] = ()) -> str:
    """A name cell (algorithm, model, task, ...): text, control characters escaped (a name
    read from a file reaches tables, CSV files and figure titles as visible text)."""
    text = "" if _blank(value) else printable(str(value).strip())
    if allowed and text not in allowed:
        raise ConfigError(
            str(path), f"{_label(path, i)}, column {col}", value, f"one of {', '.join(allowed)}"
        )
    if not text or len(text) > 64:
        raise ConfigError(
            str(path), f"{_label(path, i)}, column {col}", value, "a non-empty name (<= 64 chars)"
        )
    return text


def _shape_cell(path: Path, i: int, col: str, value: object) -> str:
    """'' or a canonical level-width string ('4 16 16'); '1 0' stays valid."""
    if _blank(value):
        return ""
    try:
        shape = parse_shape(str(value), col)
    except InputError as exc:
        raise ConfigError(
            str(path), f"{_label(path, i)}, column {col}", value, exc.allowed
        ) from None
    return " ".join(map(str, shape))


def _check_tree_fits(path: Path, i: int, col: str, shape: str, verify_len: int) -> None:
    """An AAT row's tree (draft nodes + the root) cannot hold more tokens than its x."""
    nodes = sum(int(w) for w in shape.split()) if shape else 0
    if nodes + 1 > verify_len:
        raise ConfigError(
            str(path),
            f"{_label(path, i)}, column {col}",
            shape,
            f"a tree of at most verify_len - 1 = {verify_len - 1} draft nodes "
            f"(this one has {nodes})",
        )


def _check_columns(path: Path, frame: pd.DataFrame) -> str:
    """'aat' or 'tree_table' from the header; anything else is a ConfigError naming both."""
    cols = list(frame.columns)
    if set(cols) == set(tree_table_columns()):
        return "tree_table"
    missing = [c for c in AAT_COLUMNS if c not in cols]
    unknown = [c for c in cols if c not in AAT_COLUMNS + OPTIONAL_COLUMNS]
    if missing or unknown:
        what = f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(unknown)}"
        raise ConfigError(
            str(path),
            "columns",
            what,
            f"an AAT table ({', '.join(AAT_COLUMNS)} [, {', '.join(OPTIONAL_COLUMNS)}]) "
            f"or a per-x tree table ({', '.join(tree_table_columns())})",
        )
    return "aat"


def validate_aat_frame(path: Path, frame: pd.DataFrame) -> pd.DataFrame:
    """Typed, validated AAT rows of one file, with `file` and `line` columns added."""
    if frame.empty:
        raise ConfigError(str(path), "rows", "none", "at least one measured row")
    records = []
    seen: dict[tuple, int] = {}
    for i, raw in enumerate(frame.to_dict("records")):
        verify_len = _int_cell(path, i, "verify_len", raw["verify_len"], 1, MAX_VERIFY_LEN)
        try:
            aat = float(str(raw["aat"]).strip()) if not _blank(raw["aat"]) else math.nan
        except ValueError:
            aat = math.nan
        if not math.isfinite(aat) or not 0 < aat <= verify_len + 1e-9:
            raise ConfigError(
                str(path),
                f"{_label(path, i)}, column aat",
                raw["aat"],
                f"a number in (0, verify_len = {verify_len}] (accepted tokens per iteration)",
            )
        rec = {
            "algorithm": _text_cell(path, i, "algorithm", raw["algorithm"]),
            "model": _text_cell(path, i, "model", raw["model"]),
            "task": _text_cell(path, i, "task", raw["task"]),
            "context": _int_cell(path, i, "context", raw["context"], 1, 10**7),
            "structure": _text_cell(path, i, "structure", raw["structure"], STRUCTURES),
            "method": _text_cell(path, i, "method", raw["method"], METHODS),
            "verify_len": verify_len,
            "tree_shape": _shape_cell(path, i, "tree_shape", raw["tree_shape"]),
            "aat": aat,
            "draft_depth": _opt_int_cell(path, i, "draft_depth", raw.get("draft_depth"), 1, 64),
            "draft_top_k": _opt_int_cell(path, i, "draft_top_k", raw.get("draft_top_k"), 1, 1024),
            "file": printable(path.name),  # a name from the file system is data
            "line": _label(path, i),
        }
        _check_tree_fits(path, i, "tree_shape", rec["tree_shape"], verify_len)
        key = tuple(rec[c] for c in KEY_COLUMNS)
        if key in seen:
            raise ConfigError(
                str(path),
                f"{_label(path, i)}",
                ", ".join(map(str, key)),
                f"one row per {', '.join(KEY_COLUMNS)}; the same key is on "
                f"{_label(path, seen[key])}",
            )
        seen[key] = i
        records.append(rec)
    out = pd.DataFrame.from_records(records)
    for col in ("draft_depth", "draft_top_k"):
        out[col] = out[col].astype("Int64")
    return out


def validate_tree_table(path: Path, frame: pd.DataFrame) -> pd.DataFrame:
    """Typed, validated per-x draft configuration (one row per verify_len >= 2)."""
    if frame.empty:
        raise ConfigError(str(path), "rows", "none", "at least one verify_len row")
    records, seen = [], {}
    families = _tree_column_families()
    for i, raw in enumerate(frame.to_dict("records")):
        x = _int_cell(path, i, "verify_len", raw["verify_len"], 2, MAX_VERIFY_LEN)
        if x in seen:
            raise ConfigError(str(path), f"{_label(path, i)}, column verify_len", x, "each x once")
        seen[x] = i
        # no _check_tree_fits here: the study's published x = 2 row drafts a '1 1' tree
        record: dict[str, object] = {"verify_len": x}
        for columns, family in families:
            if family == "dynamic":  # depth, top-k (the bounds of an algorithm's default tree)
                depth, top_k = columns
                record[depth] = _opt_int_cell(path, i, depth, raw[depth], 1, 64)
                record[top_k] = _opt_int_cell(path, i, top_k, raw[top_k], 1, 1024)
            else:  # one column of level widths
                record[columns[0]] = _shape_cell(path, i, columns[0], raw[columns[0]])
        records.append(record)
    out = pd.DataFrame.from_records(records).sort_values("verify_len", ignore_index=True)
    for columns, family in families:
        if family == "dynamic":
            for col in columns:
                out[col] = out[col].astype("Int64")
    return out


def load_aat_tables(paths: Path | str | Sequence[Path | str]) -> AatTables:
    """Load every AAT table (and at most one per-x tree table) from folders or files."""
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    files = [f for p in items for f in aat_files(aat_path(p))]
    frames, tree_table, tree_file = [], None, None
    for path in files:
        raw = read_raw(path)
        if _check_columns(path, raw) == "tree_table":
            if tree_table is not None:
                raise ConfigError(
                    str(path), "file", path.name, f"one per-x tree table; {tree_file} is another"
                )
            tree_table, tree_file = validate_tree_table(path, raw), path.name
        else:
            frames.append(validate_aat_frame(path, raw))
    if not frames:
        where = ", ".join(str(p) for p in items)
        raise ConfigError(where, "files", "no AAT rows", "at least one AAT table (aat column)")
    rows = pd.concat(frames, ignore_index=True)
    return AatTables(rows=rows, tree_table=tree_table, files=tuple(p.name for p in files))


@memoised("aat.builtin_tables", owner="fpgasim.acceptance.measured", keys="nothing (one value)",
          budget=1, why="the shipped AAT tables, read and checked once per process")
def builtin_tables() -> AatTables:
    """The shipped tables (BUILTIN_AAT), loaded and checked once per process."""
    return load_aat_tables(builtin_aat_dir())


# --------------------------------------------------------------------------- selecting


def _matched_algorithm(tables: AatTables, algorithm_id: str, kind: str) -> str:
    """The algorithm name the tables hold rows of: `algorithm_id`, else the drafter kind."""
    return algorithm_id if algorithm_id in tables.by_algorithm else kind


def pair_rows(tables: AatTables, algorithm: Algorithm, model: str) -> pd.DataFrame:
    """The rows of one (algorithm, target model), possibly none; the algorithm matches by
    id, else by drafter kind (as `workload_rows`, which refuses an absent pair)."""
    name = _matched_algorithm(tables, algorithm.id, algorithm.kind)
    hit = tables.by_pair.get((name, model))
    return hit if hit is not None else tables.rows.iloc[:0]


def workload_rows(tables: AatTables, algorithm_id: str, kind: str, model: str) -> pd.DataFrame:
    """All rows of one (algorithm, model); the algorithm matches by id, else by drafter kind."""
    name = _matched_algorithm(tables, algorithm_id, kind)
    rows = tables.by_algorithm.get(name)  # a group is never empty
    if rows is None:
        have = ", ".join(sorted(tables.rows["algorithm"].unique()))
        raise InputError("algorithm", algorithm_id, f"the AAT tables hold: {have}")
    out = tables.by_pair.get((name, model))
    if out is None:
        have = ", ".join(sorted(rows["model"].unique()))
        raise InputError("model", model, f"the AAT tables for {algorithm_id} hold: {have}")
    return out


def curve_method(rows: pd.DataFrame, method: str | None) -> str:
    """The searched-curve method: the one asked for, else the first of CURVE_METHOD_ORDER."""
    present = set(rows["method"]) - {ORIGINAL}
    if method is not None:
        if method not in present:
            raise InputError("curve_method", method, f"one of {', '.join(sorted(present))}")
        return method
    for m in CURVE_METHOD_ORDER:
        if m in present:
            return m
    raise InputError(
        "aat_dir", "only Ori rows", "a searched curve (a method other than original)"
    )


def pick_file(rows: pd.DataFrame, tasks: Sequence[str]) -> str:
    """The file a curve is read from: most requested tasks, then most points (rows), then
    name. Counted over plain lists: a pandas groupby per curve cost 11 ms, a third of
    reading `reproduce all`'s curves."""
    wanted = set(tasks)
    points: dict[str, int] = {}
    found: dict[str, set[str]] = {}
    for file, task in zip(rows["file"].tolist(), rows["task"].tolist(), strict=True):
        points[file] = points.get(file, 0) + 1
        hits = found.setdefault(file, set())
        if task in wanted:
            hits.add(task)
    return str(min(points, key=lambda f: (-len(found[f]), -points[f], f)))


def select_curve(
    rows: pd.DataFrame, task: str, context: int, method: str, tasks: Sequence[str] = ()
) -> pd.DataFrame:
    """The measured curve of one (task, context): rows of a single file sorted by x."""
    known = sorted(set(rows.loc[rows["method"] == method, "task"]))
    if task not in known:
        raise InputError("task", task, f"tasks with a {method} curve: {', '.join(known)}")
    hit = rows[(rows["context"] == context) & (rows["method"] == method)]
    in_task = hit[hit["task"] == task]
    if in_task.empty:
        have = sorted(set(rows.loc[(rows["task"] == task) & (rows["method"] == method), "context"]))
        raise InputError(
            "contexts",
            context,
            f"measured contexts for task {task}: {','.join(map(str, have))}",
        )
    chosen = pick_file(hit[hit["task"].isin(list(tasks) or [task])], list(tasks) or [task])
    out = in_task[in_task["file"] == chosen]
    if out.empty:  # the task is only in other files than the one chosen for the task set
        out = in_task[in_task["file"] == pick_file(in_task, [task])]
    return out.sort_values("verify_len", ignore_index=True)


def ori_row(rows: pd.DataFrame, task: str, context: int, prefer_file: str) -> pd.Series | None:
    """The measured Ori row (method original) of (task, context), preferring `prefer_file`."""
    hit = rows[(rows["task"] == task) & (rows["context"] == context) & (rows["method"] == ORIGINAL)]
    if hit.empty:
        return None
    same = hit[hit["file"] == prefer_file]
    return (same if not same.empty else hit.sort_values("file")).iloc[0]


def tree_of_row(row: pd.Series | dict, drafter: DrafterSchema) -> TokenTree | None:
    """The draft tree a measured row states for the drafter's tree family: tree_shape
    (static), or draft_depth/draft_top_k (dynamic; a chain or explicit tree in tree_shape
    gives depth = levels, top-k = widest level)."""
    shape = row.get("tree_shape") or ""
    depth, top_k = row.get("draft_depth"), row.get("draft_top_k")
    if drafter.tree_family == "dynamic":
        if not _blank(depth) and not _blank(top_k):
            return TokenTree.dynamic(int(depth), int(top_k))
        if shape:
            widths = [int(w) for w in shape.split() if int(w) > 0]
            return TokenTree.dynamic(len(widths), max(widths))
        return None
    return TokenTree.from_shape(tuple(int(w) for w in shape.split())) if shape else None


def table_tree(
    tree_table: pd.DataFrame | None, drafter: DrafterSchema, verify_len: int
) -> TokenTree | None:
    """The per-x table's draft configuration at x for a drafter, or None."""
    if tree_table is None:
        return None
    return table_trees(tree_table, drafter).get(verify_len)


#: `table_trees`' answers: (the tree table, held so its id is not reused, and its trees)
_TABLE_TREES = bounded_cache(
    "aat.table_trees", owner="fpgasim.acceptance.measured",
    keys="a per-x tree table (by identity) and a drafter's tree family and columns",
    budget=64, why="a run reads the same per-x tree table for every curve: building its "
    "trees took 6 ms a curve (0.19 s of a `generate`'s 32 curves)")


def table_trees(tree_table: pd.DataFrame, drafter: DrafterSchema) -> dict[int, TokenTree | None]:
    """Every x of the per-x table -> its draft configuration for a drafter (first row per
    x), read from the drafter's `tree_table_columns`: one pass over the table instead of a
    row lookup per x, once per table and drafter family (a new dict each call)."""
    key = (id(tree_table), drafter.tree_family, tuple(drafter.tree_table_columns))
    hit = _TABLE_TREES.get(key)
    if hit is None or hit[0] is not tree_table:
        out: dict[int, TokenTree | None] = {}
        for row in tree_table.to_dict("records"):
            x = int(row["verify_len"])
            if x not in out:
                out[x] = _table_row_tree(row, drafter)
        hit = _TABLE_TREES.put(key, (tree_table, out))
    return dict(hit[1])


def _table_row_tree(row: dict, drafter: DrafterSchema) -> TokenTree | None:
    cells = [row[c] for c in drafter.tree_table_columns]
    if any(_blank(c) for c in cells):
        return None
    if drafter.tree_family == "dynamic":
        depth, top_k = cells
        return TokenTree.dynamic(int(depth), int(top_k))
    shape = cells[0]
    return TokenTree.from_shape(tuple(int(w) for w in shape.split())) if shape else None


__all__ = [
    "AAT_COLUMNS",
    "BUILTIN_AAT",
    "AatTables",
    "aat_path",
    "builtin_aat_dir",
    "builtin_tables",
    "pair_rows",
    "tree_table_columns",
    "curve_method",
    "load_aat_tables",
    "ori_row",
    "select_curve",
    "table_tree",
    "table_trees",
    "tree_of_row",
    "workload_rows",
]
