"""Load FPGA data sheets, designs and boards (named pairs), and fit them.

- `load_fpga(name_or_path)`: `fpgas/*.yaml`.
- `load_design(name_or_path)`: `designs/*.yaml`; a design may `extends:` another one and
  change only what differs (its mapping is merged over the base's, key by key).
- `load_board(name_or_path)`: a `boards/*.yaml` pair, its overrides applied, fitted.
- `board_of(fpga, design, changes)`: any pair (`--fpga F --design D`), with `changes`
  (`--vary`-style 'design.x=v' / 'fpga.y=v' values) applied before fitting.

A file of another kind (a design given as an FPGA, a model as a board) is refused with a line
saying which kind it is (`loader.validate_kind`); retired board names say what replaced them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from fpgasim.bounded import memoised
from fpgasim.config.board import Board, BoardFile, Scalar
from fpgasim.config.design import Design
from fpgasim.config.fit import fit
from fpgasim.config.fpga import Fpga
from fpgasim.config.loader import MASK_DIR, data_root, read_yaml_mapping, resolve, validate_kind
from fpgasim.errors import ConfigError, InputError

#: board names of earlier releases and what replaced each (docs/hardware.md, "Boards")
RETIRED_BOARDS: dict[str, str] = {
    **{f"{b}-flightllm": f"the study lowering calibrated to FlightLLM was retired with the "
       f"study lowering; use {b} (the study's arrays on FlightLLM's compiler) or "
       f"`fpga` {b} `design` flightllm" for b in ("u280", "vhk158", "v80", "u250")},
    **{f"{b}-flc": f"now {b}: the study's boards run on FlightLLM's compiler"
       for b in ("u280", "vhk158", "v80", "u250")},
}
@dataclass(frozen=True)
class BoardBase:
    """The pair a variation starts from: a named board, or an FPGA and a design."""

    board: str | None = None
    fpga: str | None = None
    design: str | None = None

    def __post_init__(self) -> None:
        if self.board is not None and (self.fpga is not None or self.design is not None):
            raise InputError("board", self.board, "either `board` or `fpga` with `design`")
        if self.board is None and (self.fpga is None or self.design is None):
            missing = "design" if self.fpga is not None else "fpga"
            if self.fpga is None and self.design is None:
                raise InputError("board", None, "a board: `board` NAME, or `fpga` F `design` D")
            raise InputError(missing, None, f"`{missing}` too (`fpga` and `design` go together)")

    def build(self, changes: Sequence[tuple[str, Scalar]] = ()) -> Board:
        """The base board with `changes` applied and re-fitted."""
        if self.board is not None:
            return load_board(self.board, changes)
        return board_of(self.fpga, self.design, changes)


#: the longest `extends:` chain a design may have
MAX_EXTENDS = 8


def load_fpga(name_or_path: str) -> Fpga:
    """An FPGA data sheet by shipped name or path."""
    path = resolve("fpga", name_or_path)
    return _validated(Fpga, _fpga_mapping(path), str(path))


def load_design(name_or_path: str) -> Design:
    """An accelerator design by shipped name or path (`extends:` resolved)."""
    path = resolve("design", name_or_path)
    return _validated(Design, _design_mapping(path), str(path))


def load_board(name_or_path: str, changes: Iterable[tuple[str, Scalar]] = ()) -> Board:
    """A named (FPGA, design) pair by shipped name or path, its overrides and `changes`
    applied, fitted to the part."""
    text = str(name_or_path).strip()
    if text in RETIRED_BOARDS:
        raise ConfigError("", "name", text, f"board {text} was retired: {RETIRED_BOARDS[text]}",
                          "board")
    path = resolve("board", text)
    data = read_yaml_mapping(path)
    pair = validate_kind(BoardFile, data, str(path))
    changes = list(changes)
    board = _fitted(pair.name, pair.description, _named_in(path, "fpga", pair.fpga),
                    _named_in(path, "design", pair.design), [*pair.overrides.items(), *changes],
                    str(path), shown=changes)
    board._source = str(path)
    return board


def _named_in(board_path: Path, kind: str, name_or_path: str) -> Path:
    """The file a board file's `fpga:` or `design:` names; a name or path that does not
    resolve is refused naming the board file and its key (not `--fpga`, which the user did
    not give). A relative path is read from the current folder, as on the command line."""
    try:
        return resolve(kind, name_or_path)
    except ConfigError as exc:
        allowed = exc.allowed
        if allowed == "file not found" and not Path(name_or_path).is_absolute():
            allowed += " (a relative path is read from the current folder, not the board's)"
        raise ConfigError(str(board_path), kind, name_or_path, allowed) from None


def board_of(fpga: str, design: str, changes: Iterable[tuple[str, Scalar]] = ()) -> Board:
    """Any (FPGA, design) pair, named `design@fpga`, with `changes` applied, fitted."""
    fpga_path, design_path = resolve("fpga", fpga), resolve("design", design)
    f_name = str(read_yaml_mapping(fpga_path).get("name", fpga_path.stem))
    d_name = str(_design_mapping(design_path).get("name", design_path.stem))
    name = f"{d_name}@{f_name}"
    changes = list(changes)
    return _fitted(name, f"design {d_name} fitted to {f_name}", fpga_path, design_path,
                   changes, name, shown=changes)


def _fitted(name: str, description: str, fpga_path: Path, design_path: Path,
            changes: list[tuple[str, Scalar]], source: str,
            shown: Sequence[tuple[str, Scalar]] = ()) -> Board:
    """Validate both files with `changes` applied, fit, and name the `shown` changes."""
    fpga_data, design_data = _fpga_mapping(fpga_path), _design_mapping(design_path)
    if any(path in ("design.mm_rows", "design.mm_cols") for path, _ in changes):
        _untable_array(design_data, fpga_data.get("name"))
    first_shown = len(changes) - len(shown)  # a board file's overrides come first
    for n, (path, value) in enumerate(changes):
        kind, _, field = path.partition(".")
        # a change given on the command line is --vary's; a board file's override its file's
        label = "vary" if n >= first_shown else ""
        if kind == "fpga":
            _set(fpga_data, Fpga, field, value, source, path, label)
        elif kind == "design":
            _set(design_data, Design, field, value, source, path, label)
        else:
            raise ConfigError(source, path, value,
                              "a field path starting with 'fpga.' or 'design.'", label)
    try:
        fpga = _validated(Fpga, fpga_data, str(fpga_path) if not changes else source)
    except ConfigError as exc:
        raise _blamed(exc, "fpga", changes, first_shown, name, source) from None
    try:
        design = _validated(Design, design_data, str(design_path) if not changes else source)
    except ConfigError as exc:
        raise _blamed(exc, "design", changes, first_shown, name, source) from None
    _check_mask_table(design, str(design_path) if not changes else source)
    fitted = fit(fpga, design, _named_fpga)
    name += "".join(f" {p.split('.')[-1]}={v}" for p, v in shown)
    return Board(name=name, description=description, fpga=fpga, design=design, fit=fitted)


def _blamed(exc: ConfigError, kind: str, changes: Sequence[tuple[str, Scalar]],
            first_shown: int, name: str, source: str) -> ConfigError:
    """A validation error of a changed field of the `kind` file (fpga, design), told as the
    change the user wrote: a `--vary` value named by the argument and its path
    (`fpga.dsps`), not by the shipped file it was applied to; a board file's override by
    that file and the path as its `overrides` writes it (as an unknown path is named)."""
    for n, (path, _) in enumerate(changes):
        if exc.field == path.partition(".")[2] and path.startswith(f"{kind}.") \
                and exc.source == source:
            if n >= first_shown:
                return ConfigError(name, path, exc.value, exc.allowed, "vary")
            return ConfigError(source, path, exc.value, exc.allowed)
    return exc


def _untable_array(design_data: dict, fpga_name: object) -> None:
    """A change to the MM array's shape starts from the array the design's table lists for
    this part (its rows kept unless changed too), not from the design's generic rows."""
    table = design_data.get("mm_by_fpga")
    if not isinstance(table, list):
        return
    for entry in table:
        if isinstance(entry, Mapping) and entry.get("fpga") == fpga_name:
            design_data["mm_rows"], design_data["mm_cols"] = entry.get("rows"), entry.get("cols")
            design_data["mm_by_fpga"] = [e for e in table if e is not entry]
            return


def _check_mask_table(design: Design, source: str) -> None:
    """The recipe's prefill mask table must exist (checked on every load, not only when a
    prefill first needs it: a typo would otherwise pass every decode run)."""
    name = design.recipe.prefill_mask
    if name != "causal" and not (data_root() / MASK_DIR / f"{name}.yaml").is_file():
        names = sorted(p.stem for p in (data_root() / MASK_DIR).glob("*.yaml"))
        raise ConfigError(source, "recipe.prefill_mask", name,
                          f"'causal' or one of {names} ({MASK_DIR}/)")


def _named_fpga(name: str) -> Fpga:
    """A shipped FPGA by name, for the fit's reference parts."""
    return _cached_fpga(name)


@memoised("config.fpgas", owner="fpgasim.config.board_loader", keys="shipped FPGA name",
          budget=64, why="the fit reads the reference parts of every board it builds; each "
          "file is read and validated once")
def _cached_fpga(name: str) -> Fpga:
    """A shipped FPGA by name, read once."""
    return load_fpga(name)


def design_mapping(path: Path) -> dict:
    """A design file's raw mapping with its `extends` chain merged (what `validate` checks)."""
    return _design_mapping(path)


def _fpga_mapping(path: Path) -> dict:
    return read_yaml_mapping(path)


def _design_mapping(path: Path, depth: int = 0) -> dict:
    """A design file's mapping, merged over the mapping of the design it `extends`."""
    data = read_yaml_mapping(path)
    base = data.pop("extends", None)
    if base is None:
        return data
    if not isinstance(base, str) or depth >= MAX_EXTENDS:
        raise ConfigError(str(path), "extends", base,
                          f"the name or path of another design (chains of at most {MAX_EXTENDS})")
    return _merge(_design_mapping(resolve("design", base), depth + 1), data)


def _merge(base: dict, over: Mapping) -> dict:
    """`over` merged into a copy of `base`, mapping by mapping."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(dict(out[key]), value)
        else:
            out[key] = value
    return out


def _set(data: dict, schema: type[BaseModel], field: str, value: Scalar, source: str,
         shown: str, label: str = "vary") -> None:
    """Set a dotted `field` of a raw mapping, each step checked against `schema`; errors name
    the argument `label` (empty: a board file's override, named by the file alone)."""
    parts = field.split(".")
    node, model = data, schema
    for depth, part in enumerate(parts):
        fields = {f.alias or n: f for n, f in model.model_fields.items()}
        if part not in fields:
            raise ConfigError(source, shown, value,
                              f"a field of {schema.__name__.lower()}: {', '.join(sorted(fields))}",
                              label)
        if depth == len(parts) - 1:
            node[part] = value
            return
        sub = fields[part].annotation
        sub = next((a for a in getattr(sub, "__args__", (sub,)) if isinstance(a, type)
                    and issubclass(a, BaseModel)), None)
        if sub is None:
            raise ConfigError(source, shown, value, f"{part} has no fields below it", label)
        child = node.get(part)
        node[part] = dict(child) if isinstance(child, Mapping) else {}
        node, model = node[part], sub


def _validated(schema: type, data: dict, source: str):
    """Validate a mapping; the object remembers its source (errors name it)."""
    obj = validate_kind(schema, data, source)
    obj._source = source
    return obj


def fit_matrix(fpgas: Sequence[str], designs: Sequence[str]) -> list[dict]:
    """Every design fitted to every part: one row each with whether it fits and what binds
    (or, where the fit refuses, the reason): the `fpgasim boards` overview."""
    rows = []
    for design in designs:
        for fpga in fpgas:
            try:
                board = board_of(fpga, design)
            except ConfigError as exc:
                rows.append({"design": design, "fpga": fpga, "fits": False, "pipelines": None,
                             "binding_resource": "", "short_of": exc.field,
                             "reason": f"{exc.field}: {exc.allowed}"})
                continue
            f = board.fit
            short = [name for name, ok in (("dsps", f.fits_dsps), ("on-chip RAM", f.fits_onchip))
                     if ok is False]
            unknown = [name for name, ok in (("dsps", f.fits_dsps), ("on-chip RAM",
                                                                     f.fits_onchip))
                       if ok is None]
            rows.append({"design": design, "fpga": fpga, "fits": f.fits,
                         "pipelines": f.pipelines, "binding_resource": f.binding_resource,
                         "short_of": ", ".join(short), "reason": ", ".join(
                             f"{u} unknown" for u in unknown)})
    return rows
