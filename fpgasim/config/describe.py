"""What `fpgasim boards FILE` shows: any board, FPGA or design file (a name or a path), by kind.

The kind is read from the file's fields (a board pair names an fpga and a design; a data sheet
has a part and a DSP kind; a design a recipe), or, for a shipped name, from the folder it is
in (boards/ first: `u280` is a board and a data sheet). A board is shown with its fit.
"""

from __future__ import annotations

from pathlib import Path

from fpgasim.config.board_loader import load_board, load_design, load_fpga
from fpgasim.config.loader import available, did_you_mean, read_yaml_mapping, resolve, shipped_name
from fpgasim.errors import ConfigError

#: kinds `describe_file` shows, in the order a shipped name is looked up
KINDS = ("board", "fpga", "design")


def kind_of(path: Path) -> str:
    """The kind of a YAML file, from its top-level fields."""
    data = read_yaml_mapping(path)
    if "fpga" in data and "design" in data:
        return "board"
    if "part" in data or "dsp_kind" in data:
        return "fpga"
    if "recipe" in data or "mm_rows" in data or "extends" in data:
        return "design"
    if "hidden" in data or "hidden_size" in data:
        raise ConfigError(str(path), "(top level)", "a model file",
                          "a board, FPGA or design file (`fpgasim models` lists models)")
    raise ConfigError(str(path), "(top level)", ", ".join(sorted(map(str, data))[:6]),
                      "a board (fpga + design), FPGA (part, dsp_kind) or design (recipe) file")


def describe_file(name_or_path: str) -> dict:
    """The fields of one board, FPGA or design file, flattened (a board: with its fit)."""
    text = str(name_or_path).strip()
    path = Path(text)
    if path.suffix in (".yaml", ".yml") or "/" in text:
        kind = kind_of(resolve("board", text))
    else:
        kinds = [k for k in KINDS if shipped_name(k, text) is not None]
        if not kinds:
            names = {k: available(k) for k in KINDS}
            listed = "; ".join(f"{k}s: {', '.join(v)}" for k, v in names.items())
            meant = did_you_mean(text, [n for v in names.values() for n in v])
            hint = f"did you mean {' or '.join(meant)}? " if meant else ""
            raise ConfigError("", "name", text,
                              f"{hint}a board, FPGA or design name ({listed})", "file")
        kind = kinds[0]
    if kind == "board":
        board = load_board(text)
        out = {"kind": "board", "name": board.name, "description": board.description,
               **board.fit_report()}
    else:
        obj = load_fpga(text) if kind == "fpga" else load_design(text)
        out = {"kind": kind, **_flat(obj.model_dump(by_alias=True, exclude={"sources"}))}
        if kind == "fpga":
            out["onchip_mb"] = obj.onchip_mb
    out["file"] = str(resolve(kind, text))
    return out


def _flat(data: dict, prefix: str = "") -> dict:
    """Nested mappings as dotted keys (lists kept as they are)."""
    out = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out |= _flat(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out
