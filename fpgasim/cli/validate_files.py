"""Check input files without running anything: every problem of every file, one line each.

The kind of a file is told by its folder (`boards/`, `fpgas/`, `designs/`, `models/`,
`algorithms/`, `experiments/`), else by its fields (YAML) or columns (CSV/Parquet tables):
board, FPGA data sheet, design, model, algorithm, experiment, AAT table, per-x tree table, or
trace table. It knows every stage's
file formats, so it sits at the top with the CLI (config stays the bottom layer).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from fpgasim.acceptance import measured as aat
from fpgasim.config import schema as schemas
from fpgasim.config.board import BoardFile
from fpgasim.config.board_loader import design_mapping, load_board
from fpgasim.config.design import Design
from fpgasim.config.fpga import Fpga
from fpgasim.config.hf import is_hf_config
from fpgasim.config.loader import describe_error, load_model, read_yaml_mapping
from fpgasim.datafiles import folder_entries
from fpgasim.errors import ConfigError, FpgasimError, printable
from fpgasim.heterogeneous.platform import HeterogeneousPlatform
from fpgasim.reproduce.experiment_schema import Experiment
from fpgasim.reproduce.kind import experiment_kinds
from fpgasim.tree.traces import load_traces

#: At most this many problems are listed per file (a count of the rest follows).
MAX_PROBLEMS = 100
TABLE_SUFFIXES = (".csv", ".parquet", ".pq")
YAML_SUFFIXES = (".yaml", ".yml")
#: Folder name -> kind, for files inside the shipped layout (or a copy of it).
FOLDER_KINDS = {
    "boards": "board",
    "fpgas": "fpga",
    "designs": "design",
    "models": "model",
    "algorithms": "algorithm",
    "experiments": "experiment",
    "platforms": "platform",
    "masks": "masks",
}


def experiment_schemas() -> dict[str, type[BaseModel]]:
    """Experiment `kind` -> its file schema: `Experiment`, or an external kind's own."""
    return {
        k.name: (Experiment if k.external is None else k.external.schema)
        for k in experiment_kinds().values()
    }


class ValidationFailed(FpgasimError):
    """Some checked files have problems (they were listed one per line)."""


@dataclass(frozen=True)
class Report:
    """The outcome of checking one file: its kind and its problems."""

    path: str
    kind: str
    problems: list[ConfigError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the file has no problems."""
        return not self.problems

    def lines(self) -> list[str]:
        """What `fpgasim validate` prints for this file (each problem on one line)."""
        if self.ok:
            lines = [f"{self.path}: ok ({self.kind})"]
        else:
            lines = [str(p) for p in self.problems]
        return [printable(" ".join(line.split())) for line in lines]


# --------------------------------------------------------------------------- YAML files


def _schema_for(kind: str) -> type[BaseModel]:
    return {
        "board": BoardFile,
        "fpga": Fpga,
        "design": Design,
        "model": schemas.TargetModel,
        "algorithm": schemas.Algorithm,
        "masks": schemas.MaskTable,
        "platform": HeterogeneousPlatform,
    }[kind]


def experiment_schema(kind: object) -> type[BaseModel] | str:
    """The schema of an experiment file's `kind`, or the allowed kinds (a message)."""
    known = experiment_schemas()
    schema = known.get(kind) if isinstance(kind, str) else None
    return f"one of {', '.join(known)}" if schema is None else schema


def yaml_kind(path: Path, data: dict) -> str | None:
    """board/model/algorithm/experiment from the folder, else from the fields."""
    by_folder = FOLDER_KINDS.get(path.parent.name)
    if by_folder:
        return by_folder
    if isinstance(data.get("kind"), str) and data["kind"] in experiment_schemas():
        return "experiment"
    keys = set(map(str, data))
    if {"fpga", "design"} <= keys:  # as config.describe.kind_of tells them
        return "board"
    if keys & {"part", "dsp_kind"}:
        return "fpga"
    if keys & {"recipe", "mm_rows", "extends"}:
        return "design"
    best, best_hits = None, 0
    for kind in ("board", "model", "algorithm", "platform"):
        hits = len(keys & set(_schema_for(kind).model_fields))
        if hits > best_hits:
            best, best_hits = kind, hits
    return best


def schema_problems(model: type[BaseModel], data: Any, source: str) -> list[ConfigError]:
    """Every validation error of `data` against a schema, as ConfigErrors (empty: valid)."""
    try:
        model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        return [describe_error(err, source, errors) for err in errors]
    except RecursionError:
        return [ConfigError(source, "(top level)", "deep nesting", "a shallow mapping")]
    return []


def check_yaml(path: Path) -> Report:
    """Parse a YAML file, tell its kind and validate it against that kind's schema."""
    source = str(path)
    try:
        data = read_yaml_mapping(path)
    except ConfigError as exc:
        return Report(source, "yaml", [exc])
    kind = yaml_kind(path, data)
    if kind is None:
        fields = ", ".join(sorted(map(str, data))[:6]) or "none"
        return Report(
            source,
            "yaml",
            [
                ConfigError(
                    source,
                    "(kind)",
                    fields,
                    "the fields of a board (fpga, design), FPGA (part, dsp_kind), design "
                    "(recipe, mm_rows), model (hidden, layers, ...) or algorithm (drafter, "
                    "...), or a file in boards/, fpgas/, designs/, models/, algorithms/ or "
                    "experiments/",
                )
            ],
        )
    if kind == "design":  # a design may extend another: check the merged mapping
        try:
            data = design_mapping(path)
        except ConfigError as exc:
            return Report(source, kind, [exc])
    if kind == "board":  # the pair's files, its overrides and the fit, once its fields pass
        problems = schema_problems(BoardFile, data, source)
        if not problems:
            try:
                load_board(source)
            except ConfigError as exc:
                problems = [exc]
        return Report(source, kind, problems)
    if kind != "experiment":
        return Report(source, kind, schema_problems(_schema_for(kind), data, source))
    model = experiment_schema(data.get("kind"))
    if isinstance(model, str):
        return Report(source, kind, [ConfigError(source, "kind", data.get("kind"), model)])
    return Report(f"{source}", f"experiment {data['kind']}", schema_problems(model, data, source))


def check_hf_config(path: Path) -> Report:
    """A Hugging Face config.json, read as JSON as any `model` option reads it."""
    try:
        load_model(str(path))
    except ConfigError as exc:
        return Report(str(path), "model", [exc])
    return Report(str(path), "model", [])


# --------------------------------------------------------------------------- tables


def _row_label(path: Path, index: int) -> str:
    """How the AAT loader names row `index` (CSV: 'line N' counting the header)."""
    return f"line {index + 2}" if path.suffix.lower() == ".csv" else f"row {index + 1}"


def _rowwise(
    path: Path, frame: Any, validate: Callable[[Path, Any], Any], limit: int
) -> list[ConfigError]:
    """Every bad row of a table with its own label (blocks that pass are not re-checked)."""
    first = _row_label(path, 0)
    problems: list[ConfigError] = []
    block = 256
    for start in range(0, len(frame), block):
        try:
            validate(path, frame.iloc[start : start + block].reset_index(drop=True))
            continue
        except ConfigError:
            pass
        for i in range(start, min(start + block, len(frame))):
            try:
                validate(path, frame.iloc[[i]].reset_index(drop=True))
            except ConfigError as exc:
                where = exc.field.replace(first, _row_label(path, i), 1)
                problems.append(ConfigError(exc.source, where, exc.value, exc.allowed))
                if len(problems) >= limit:
                    return problems
    return problems


def _column_problems(source: str, columns: list[str], kind: str) -> list[ConfigError]:
    """One problem per missing or unknown column of an AAT or per-x tree table."""
    if kind == "tree table":
        required = allowed = aat.tree_table_columns()
    else:
        required, allowed = aat.AAT_COLUMNS, aat.AAT_COLUMNS + aat.OPTIONAL_COLUMNS
    problems = [
        ConfigError(source, f"column {c}", None, f"required column of an {kind} is missing")
        for c in required
        if c not in columns
    ]
    problems += [
        ConfigError(source, f"column {c}", c, f"unknown column; an {kind} has {', '.join(allowed)}")
        for c in columns
        if c not in allowed
    ]
    return problems


def check_table(path: Path) -> Report:
    """An AAT or per-x tree table (fpgasim.acceptance.measured), or a trace table (fpgasim.tree)."""
    source = str(path)
    try:
        frame = aat.read_raw(path)
    except ConfigError as exc:
        return Report(source, "table", [exc])
    columns = list(frame.columns)
    if set(columns) & set(aat.tree_table_columns()[1:]):
        kind, validate = "tree table", aat.validate_tree_table
    elif "aat" in columns or len(set(columns) & set(aat.AAT_COLUMNS)) * 2 >= len(aat.AAT_COLUMNS):
        kind, validate = "AAT table", aat.validate_aat_frame
    else:
        return check_trace(path)
    missing = _column_problems(source, columns, kind)
    if missing:
        return Report(source, kind, missing)
    try:
        validate(path, frame)
    except ConfigError as exc:
        if exc.field in ("columns", "rows", "file"):
            return Report(source, kind, [exc])
        problems = _rowwise(path, frame, validate, MAX_PROBLEMS)
        if len(problems) >= MAX_PROBLEMS:
            problems.append(ConfigError(source, "(more)", "...", "checking stopped here"))
        if str(exc) not in {str(p) for p in problems}:
            problems.insert(0, exc)  # a whole-table rule, e.g. a duplicated row key
        return Report(source, kind, problems)
    return Report(source, kind)


def check_trace(path: Path) -> Report:
    """A trace table, checked by fpgasim.tree.traces.load_traces (docs/trees.md)."""
    try:
        load_traces(path)
    except ConfigError as exc:
        return Report(str(path), "trace table", [exc])
    except FpgasimError as exc:
        return Report(str(path), "trace table", [ConfigError(str(path), "file", "", str(exc))])
    return Report(str(path), "trace table")


# --------------------------------------------------------------------------- entry points


def check_file(path: Path | str) -> Report:
    """Check one file: YAML configs by schema, CSV/Parquet tables by layout."""
    path = Path(path)
    if not path.exists():
        return Report(str(path), "file", [ConfigError(str(path), "file", str(path), "not found")])
    if not path.is_file():
        return Report(str(path), "file", [ConfigError(str(path), "file", str(path), "a file")])
    if path.suffix.lower() in TABLE_SUFFIXES:
        report = check_table(path)
    elif is_hf_config(path):  # a Hugging Face config.json, read as `--model` reads it
        report = check_hf_config(path)
    else:
        report = check_yaml(path)
    if len(report.problems) > MAX_PROBLEMS:
        extra = len(report.problems) - MAX_PROBLEMS
        report = Report(
            report.path,
            report.kind,
            report.problems[:MAX_PROBLEMS]
            + [ConfigError(report.path, "(more)", extra, "further problems not listed")],
        )
    return report


def expand(paths: Iterable[Path | str]) -> list[Path | Report]:
    """Files as given; folders replaced by their YAML and table files (recursive, sorted,
    hidden ones skipped); a folder the OS will not list is a Report naming it with the
    OS's reason, in its place (`rglob` would skip it silently)."""
    out: list[Path | Report] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(_walk(p))
        else:
            out.append(p)
    return out


def _walk(folder: Path) -> list[Path | Report]:
    """The YAML, table and Hugging Face config files under `folder` (sorted, depth first),
    and a Report for
    each folder below it that cannot be listed."""
    try:
        entries = folder_entries(folder)
    except ConfigError as exc:
        return [Report(str(folder), "folder", [exc])]
    out: list[Path | Report] = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_dir() and not entry.is_symlink():  # as rglob: no link loops
            out.extend(_walk(entry))
        elif entry.is_file() and (entry.suffix.lower() in YAML_SUFFIXES + TABLE_SUFFIXES
                                  or _hf_config_in_layout(entry)):
            out.append(entry)
    return out


def _hf_config_in_layout(path: Path) -> bool:
    """A Hugging Face config a folder walk checks: a `config.json` (a snapshot's), or a
    .json under a `models/` folder (`workloads/models/hf/`); other JSON files (traces,
    outputs) are not configs."""
    return is_hf_config(path) and (path.name == "config.json"
                                   or "models" in path.parent.parts)


def validate_files(paths: Sequence[Path | str]) -> list[Report]:
    """Check every file (folders expanded); one Report per file, in order."""
    return [p if isinstance(p, Report) else check_file(p) for p in expand(paths)]
