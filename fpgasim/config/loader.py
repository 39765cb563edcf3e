"""Find and read YAML files (boards, FPGAs, designs, models, algorithms); every failure
becomes one ConfigError line. Boards, FPGAs and designs are loaded by config/board_loader.py."""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from fpgasim.config.board import BoardFile
from fpgasim.config.design import Design
from fpgasim.config.fpga import Fpga
from fpgasim.config.hf import is_hf_config, model_from_hf
from fpgasim.config.schema import Algorithm, TargetModel
from fpgasim.errors import ConfigError, printable

T = TypeVar("T", bound=BaseModel)

#: Maximum size of a config file we are willing to parse (bytes).
MAX_FILE_BYTES = 1 << 20
#: Longest file name (bytes) and path (characters) a name or path argument may have (Linux).
MAX_NAME_BYTES = 255
MAX_PATH_CHARS = 4096
#: Maximum number of values in a parsed file, counting every use of a YAML alias (alias bombs).
MAX_VALUES = 100_000


#: Where an installed wheel keeps the shipped boards/, workloads/ and platforms/ (pyproject.toml
#: maps the checkout's top-level folders there as package data).
PACKAGED_DATA = Path(__file__).resolve().parents[1] / "_data"
#: The checkout's root, which holds those folders in a clone and in an editable install.
CHECKOUT_ROOT = Path(__file__).resolve().parents[2]


def data_root() -> Path:
    """Folder holding `boards/`, `workloads/` and `platforms/`.

    `FPGASIM_HOME` overrides; else the wheel's package data when installed, else the checkout.
    """
    env = os.environ.get("FPGASIM_HOME")
    if env:
        return Path(env)
    return PACKAGED_DATA if PACKAGED_DATA.is_dir() else CHECKOUT_ROOT


def source_shown(source: str) -> str:
    """A file as outputs name it: a shipped file relative to `data_root()`
    (`boards/u280.yaml`, the same on every machine), any other as it was given, its
    control characters and non-UTF-8 bytes escaped (a path is data in a CSV cell too)."""
    try:
        return Path(source).resolve().relative_to(data_root().resolve()).as_posix()
    except (ValueError, OSError):
        return printable(source)


KIND_DIRS: dict[str, str] = {
    "board": "boards",
    "fpga": "fpgas",
    "design": "designs",
    "model": "workloads/models",
    "algorithm": "workloads/algorithms",
    "experiment": "workloads/experiments",
    "platform": "platforms",
}


#: Shipped Hugging Face configs (`config.json` files) a model name may also name, by file stem.
HF_MODEL_DIR = "workloads/models/hf"


def shipped_files(kind: str) -> dict[str, Path]:
    """The shipped files of one kind a name may name, by name (the file's stem): the YAML
    files of its folder and, for models, the Hugging Face configs shipped beside them
    (`hf_models`)."""
    files = {p.stem: p for p in sorted((data_root() / KIND_DIRS[kind]).glob("*.yaml"))}
    if kind == "model":
        for name, p in hf_models().items():
            files.setdefault(name, p)
    return files


def hf_models() -> dict[str, Path]:
    """The shipped Hugging Face configs (`HF_MODEL_DIR`) by name, as `fpgasim models`
    lists them and `--model` takes them (e.g. `Qwen2-7B-Instruct`)."""
    return {p.stem: p for p in sorted((data_root() / HF_MODEL_DIR).glob("*.json"))}


def available(kind: str) -> list[str]:
    """Names of the shipped YAML files of one kind (board, model, algorithm, experiment);
    the shipped Hugging Face configs a model name may also name are `hf_models`."""
    return sorted(p.stem for p in (data_root() / KIND_DIRS[kind]).glob("*.yaml"))


def shipped_name(kind: str, text: str) -> Path | None:
    """The shipped file a name names: exactly, else case-insensitively (`U55C` is `u55c`)
    when one name matches; None when none does."""
    files = shipped_files(kind)
    if text in files:
        return files[text]
    folded = [p for name, p in files.items() if name.casefold() == text.casefold()]
    return folded[0] if len(folded) == 1 else None


def did_you_mean(text: str, names: Sequence[str], n: int = 3) -> list[str]:
    """The names closest to `text`, case ignored: those it begins or that begin with it
    first (`Qwen2-7B` -> `Qwen2-7B-Instruct`), then difflib's close matches."""
    low = text.casefold()
    by_low = {name.casefold(): name for name in names}
    prefixed = [by_low[k] for k in by_low if low and (k.startswith(low) or low.startswith(k))]
    close = [by_low[k] for k in difflib.get_close_matches(low, list(by_low), n=n, cutoff=0.6)]
    return list(dict.fromkeys(prefixed + close))[:n]


#: Other kinds a name given as one kind may be (a part's name given as a board).
_OTHER_KINDS = {"board": ("fpga", "design"), "fpga": ("board", "design"),
                "design": ("board", "fpga"), "model": (), "algorithm": ()}


def _unknown_name(kind: str, text: str) -> ConfigError:
    """The one-line error of a name no shipped file of `kind` has: what it is instead (an
    FPGA given as a board answers with the `fpga`/`design` form), or the names it may
    mean, then every name."""
    names = list(shipped_files(kind))
    listed = ", ".join(available(kind)) or f"none in {data_root() / KIND_DIRS[kind]}"
    if kind == "model":
        listed += f"; Hugging Face configs: {', '.join(hf_models())}"
    for other in _OTHER_KINDS.get(kind, ()):
        hit = shipped_name(other, text)
        if hit is None:
            continue
        if kind == "board" and other == "fpga":
            designs = ", ".join(available("design"))
            return ConfigError("", "name", text, (
                f"{hit.stem} is an FPGA data sheet, not a named board: give it as `fpga` "
                f"{hit.stem} `design` D, a design fitted to it (D one of {designs}); named "
                f"boards: {listed}"), kind)
        if kind == "board" and other == "design":
            fpgas = ", ".join(available("fpga"))
            return ConfigError("", "name", text, (
                f"{hit.stem} is an accelerator design, not a named board: give it as "
                f"`design` {hit.stem} `fpga` F (F one of {fpgas}); named boards: {listed}"),
                kind)
        return ConfigError("", "name", text, (
            f"{hit.stem} is {_an(other)} name, not {_an(kind)} name; {kind}s: {listed}"), kind)
    meant = did_you_mean(text, names)
    hint = ""
    if meant:
        files = shipped_files(kind)
        shown = [f"{m} ({source_shown(str(files[m]))})" if files[m].suffix == ".json" else m
                 for m in meant]
        hint = f"did you mean {' or '.join(shown)}? "
    return ConfigError("", "name", text, f"unknown {kind}; {hint}choose one of: {listed}", kind)


def resolve(kind: str, name_or_path: str) -> Path:
    """A shipped name (`u280`, any case; for models also a shipped Hugging Face config's
    name, `Qwen2-7B-Instruct`) or a path to a YAML (or config.json) file -> the file's
    path. An unknown name says what it may have meant (`_unknown_name`)."""
    text = str(name_or_path).strip()
    if len(text) > MAX_PATH_CHARS or any(
        len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for part in Path(text).parts
    ):
        raise ConfigError(
            "",
            "name",
            text,
            f"a {kind} name or YAML path (names of at most {MAX_NAME_BYTES} bytes, "
            f"paths of at most {MAX_PATH_CHARS} characters)",
            argument=kind,
        )
    if "\0" in text:
        raise ConfigError("", "name", text, f"a {kind} name or YAML path (no NUL)", kind)
    candidate = Path(text)
    try:
        if text and (candidate.suffix in {".yaml", ".yml", ".json"} or os.sep in text):
            if candidate.is_file():
                return candidate
            if candidate.is_dir():
                return _in_folder(kind, candidate, text)
            raise ConfigError(text, kind, text, "file not found")
        shipped = shipped_name(kind, text) if text else None
        if shipped is not None:
            return shipped
    except OSError as exc:
        raise ConfigError(text, kind, text, f"a readable file ({exc.strerror})") from None
    raise _unknown_name(kind, text)


def _in_folder(kind: str, folder: Path, text: str) -> Path:
    """A folder given where a file is expected: a model folder holding `config.json` is
    read as `transformers`' `from_pretrained` reads it; anything else is refused as a
    folder (not as a missing file)."""
    if kind == "model":
        config = folder / "config.json"
        if config.is_file():
            return config
        raise ConfigError(text, kind, text, "a model file, or a folder holding a Hugging Face "
                          "config.json (this folder holds none)")
    raise ConfigError(text, kind, text, f"a {kind} file, not a folder")


def check_file_size(path: Path, limit: int) -> None:
    """Fail with a ConfigError when `path` cannot be stat'ed or holds more than `limit` bytes."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ConfigError(str(path), "file", str(path), f"a readable file ({exc.strerror})") \
            from None
    if size > limit:
        raise ConfigError(str(path), "file", f"{size} bytes", f"at most {limit} bytes")


class DuplicateKey(yaml.YAMLError):
    """A mapping of a YAML document holds the same key twice (the loader refuses it)."""

    def __init__(self, key: object, line: int) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key = key
        self.line = line


class CoreSchemaResolver(yaml.resolver.BaseResolver):
    """Plain scalars typed by YAML 1.2's core schema, so numbers read as written.

    PyYAML implements YAML 1.1, which reads `clock_mhz: 0225` as octal (149), `2:25` as
    base 60 (145), `1_000` as 1000 and `yes`/`off` as booleans. Here `0225` is 225, `0o17`
    octal and `0x1F` hexadecimal, `1e3` a float, only true/false (any case) booleans, and
    everything else (`2:25`, `1_000`, `yes`, dates) a string, which a number field then
    refuses with its name.
    """


for _tag, _pattern, _first in (
    ("bool", r"(?:true|True|TRUE|false|False|FALSE)", "tTfF"),
    ("int", r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", "-+0123456789"),
    ("float", r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
              r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)", "-+.0123456789"),
    ("null", r"~|null|Null|NULL|", "~nN"),
    ("merge", r"<<", "<"),
):
    CoreSchemaResolver.add_implicit_resolver(
        f"tag:yaml.org,2002:{_tag}", re.compile(f"^(?:{_pattern})$"), list(_first) or None
    )
CoreSchemaResolver.add_implicit_resolver("tag:yaml.org,2002:null", re.compile("^$"), [""])


class UniqueKeyLoader(
    yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer,
    yaml.constructor.SafeConstructor, CoreSchemaResolver,
):
    """PyYAML's safe loader with YAML 1.2's core schema (`CoreSchemaResolver`), except that
    a key repeated in one mapping is an error.

    Plain `safe_load` keeps the last value silently (`clock_mhz` twice: the second wins).
    """

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        CoreSchemaResolver.__init__(self)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        """A core-schema integer: decimal (leading zeros allowed), 0o octal, 0x hex."""
        text = str(self.construct_scalar(node))
        if text.startswith("0o"):
            return int(text[2:], 8)
        if text.startswith("0x"):
            return int(text[2:], 16)
        return int(text, 10)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        """PyYAML's mapping, after raising DuplicateKey at a repeated key (merge keys skipped)."""
        seen: set = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: the base class reports it
                continue
            if duplicate:
                raise DuplicateKey(key, key_node.start_mark.line + 1)
        return super().construct_mapping(node, deep=deep)


UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", UniqueKeyLoader.construct_yaml_int)


def load_yaml_text(text: str) -> object:
    """Parse YAML text safely, refusing duplicate keys (`DuplicateKey`).

    YAML 1.2 allows a tab wherever it separates tokens (`a:<TAB>1`, a JSON document
    indented with tabs: JSON is YAML 1.2); PyYAML refuses every tab outside a quoted
    scalar. A text it refuses for a tab is read again with each separating tab written as a
    space (`_separating_tabs_as_spaces`); a tab that indents a block stays an error, as in
    YAML 1.2."""
    try:
        return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.scanner.ScannerError as exc:
        if "'\\t'" not in str(exc.problem or ""):
            raise
        again = _separating_tabs_as_spaces(text)
        if again == text:
            raise
        try:
            return yaml.load(again, Loader=UniqueKeyLoader)  # noqa: S506
        except yaml.YAMLError:
            raise exc from None


#: characters after which a quote opens a quoted scalar (else it is part of a plain one)
_BEFORE_QUOTE = set(":,-[{?")


def _separating_tabs_as_spaces(text: str) -> str:
    """`text` with every tab outside quoted scalars and comments that is not a block's
    indentation (a tab at the start of a line outside any flow collection) written as a
    space: the tabs YAML 1.2 reads as separation. A tab inside a plain scalar becomes a
    space too (PyYAML cannot read it either way)."""
    out: list[str] = []
    quote = ""  # the open quote, if any
    depth = 0  # flow collections open ([ and {)
    line_start, comment, escaped, last = True, False, False, ""
    for char in text:
        if char == "\n":  # a quoted scalar may span lines; a comment ends with its line
            line_start, comment, last = True, False, ""
            out.append(char)
            continue
        if comment:
            out.append(char)
            continue
        if quote:
            if quote == '"' and not escaped and char == "\\":
                escaped = True
            elif quote == char and not escaped:
                quote = ""
            else:
                escaped = False
            out.append(char)
            continue
        if char == "\t":
            out.append("\t" if line_start and depth == 0 else " ")
            continue
        if char == " ":
            out.append(char)
            continue
        if char in "'\"" and (line_start or last in _BEFORE_QUOTE):
            quote = char
        elif char == "#" and (line_start or (out and out[-1] in " \t")):
            comment = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth = max(0, depth - 1)
        line_start, last = False, char
        out.append(char)
    return "".join(out)


def read_yaml_mapping(path: Path) -> dict:
    """Parse a YAML file whose top level must be a mapping (no key may repeat)."""
    check_file_size(path, MAX_FILE_BYTES)
    try:
        raw = path.read_bytes().decode("utf-8")
        data = load_yaml_text(raw)
    except OSError as exc:  # e.g. no permission to read it
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(str(path), "file", str(path), f"a readable file ({reason})") from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), "file", "binary data", "a UTF-8 YAML text file") from None
    except DuplicateKey as exc:
        raise ConfigError(
            str(path),
            f"{str(exc.key)[:80]} (line {exc.line})",
            "a duplicate key",
            "each key at most once per mapping (else the last value would silently win)",
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "file"
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(str(path), where, problem, "valid YAML") from None
    except RecursionError:
        raise ConfigError(str(path), "file", "deep nesting", "a shallow YAML mapping") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits (int's str limit)
        shown = "an integer with too many digits" if "digits" in str(exc) else str(exc)[:80]
        raise ConfigError(str(path), "file", shown, "valid YAML values") from None
    if not isinstance(data, dict):
        shown = "empty file" if data is None else type(data).__name__
        raise ConfigError(str(path), "(top level)", shown, "a YAML mapping of fields")
    if count_values(data, MAX_VALUES) > MAX_VALUES:
        raise ConfigError(
            str(path),
            "file",
            f"more than {MAX_VALUES} values",
            f"at most {MAX_VALUES} values, counting each use of a YAML alias",
        )
    return data


def read_json_mapping(path: Path) -> dict:
    """Parse a JSON file (a Hugging Face config.json) whose top level must be an object.

    Read as JSON, by Python's `json` as transformers reads it (`PretrainedConfig`'s
    `_dict_from_json_file`): tabs, string escapes and `NaN`/`Infinity` as it accepts them,
    not as YAML. A UTF-8 byte-order mark is skipped (RFC 8259 allows readers to); a name
    repeated in one object is refused, as in YAML files (RFC 8259: such a document's
    meaning is unpredictable; Python would keep the last value silently)."""
    check_file_size(path, MAX_FILE_BYTES)

    def unique(pairs: list[tuple[str, object]]) -> dict:
        out: dict = {}
        for key, value in pairs:
            if key in out:
                raise DuplicateKey(key, 0)
            out[key] = value
        return out

    try:
        raw = path.read_bytes().decode("utf-8-sig")
        data = json.loads(raw, object_pairs_hook=unique)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(str(path), "file", str(path), f"a readable file ({reason})") from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), "file", "binary data", "a UTF-8 JSON text file") from None
    except DuplicateKey as exc:
        raise ConfigError(str(path), str(exc.key)[:80], "a duplicate key",
                          "each key at most once per object") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(str(path), f"line {exc.lineno}, column {exc.colno}", exc.msg,
                          "valid JSON") from None
    except RecursionError:
        raise ConfigError(str(path), "file", "deep nesting", "a shallow JSON object") from None
    except ValueError as exc:  # an integer of more than 4300 digits (int's str limit)
        shown = "an integer with too many digits" if "digits" in str(exc) else str(exc)[:80]
        raise ConfigError(str(path), "file", shown, "valid JSON values") from None
    if not isinstance(data, dict):
        raise ConfigError(str(path), "(top level)", type(data).__name__, "a JSON object")
    if count_values(data, MAX_VALUES) > MAX_VALUES:
        raise ConfigError(str(path), "file", f"more than {MAX_VALUES} values",
                          f"at most {MAX_VALUES} values")
    return data


def count_values(data: object, limit: int) -> int:
    """Values in a parsed document, aliases counted at every use; stops just past `limit`."""
    count, stack = 0, [data]
    while stack and count <= limit:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return count


def _shown(value: object) -> object:
    """A cheap stand-in for a large or nested input value (never walks a container)."""
    if isinstance(value, dict):
        return "{...}"
    if isinstance(value, list | tuple):
        return f"[{len(value)} items]"
    if isinstance(value, str) and len(value) > 200:
        return value[:200]
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"a {value.bit_length()}-bit integer"
    return value


#: the tags pydantic appends to a location for the branch of a union it tried (`Scalar`:
#: float | int | str | bool | None); not keys a file writes, so never shown
_UNION_BRANCHES = frozenset({"float", "int", "str", "bool", "none"})


def _location(err: dict) -> str:
    """The dotted path of the key the file wrote (pydantic's validator and union-branch
    tags dropped)."""
    parts = [str(p) for p in err["loc"] if not str(p).startswith("function-")]
    while len(parts) > 1 and parts[-1] in _UNION_BRANCHES:
        parts.pop()
    return ".".join(parts)


def reported_error(errors: list[dict]) -> dict:
    """The error a one-line report names: an unknown field before any other, since a
    misspelt key also leaves the field it meant missing, and the key typed is the news."""
    return next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])


def _meant(err: dict, errors: Sequence[dict]) -> str:
    """' (did you mean NAME?)' for an unknown key spelt like a missing field beside it."""
    parent, key = tuple(err["loc"][:-1]), str(err["loc"][-1])
    missing = [str(e["loc"][-1]) for e in errors
               if e["type"] == "missing" and tuple(e["loc"][:-1]) == parent]
    close = difflib.get_close_matches(key, missing, n=1, cutoff=0.75)
    return f"; did you mean '{close[0]}' (required, missing)?" if close else ""


def describe_error(err: dict, source: str, errors: Sequence[dict] = ()) -> ConfigError:
    """One pydantic error (an item of `ValidationError.errors()`, all of them in `errors`
    to suggest the field a misspelt key meant) as a ConfigError."""
    loc = _location(err)
    loc = " ".join(loc.split())[:120] or "(top level)"
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown field (check the spelling; unknown fields are not allowed)"
        msg += _meant(err, errors)
    elif err["type"] == "missing":
        msg = "required field is missing"
    elif msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    value = _shown(err.get("input")) if err["type"] != "missing" else None
    return ConfigError(source, loc, value, " ".join(msg.split())[:300])


def validate_mapping(schema: type[T], data: dict, source: str) -> T:
    """Validate a mapping against a schema, turning the first pydantic error into a ConfigError."""
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        raise describe_error(reported_error(errors), source, errors) from None
    except RecursionError:
        raise ConfigError(source, "(top level)", "deep nesting", "a shallow mapping") from None


#: The kinds of file a command loads by name or path, by schema (`wrong_kind` tells them apart).
KIND_SCHEMAS: dict[str, type[BaseModel]] = {
    "board": BoardFile, "fpga": Fpga, "design": Design, "model": TargetModel,
    "algorithm": Algorithm,
}


def register_file_kind(kind: str, schema: type[BaseModel]) -> None:
    """Name a file kind a higher layer owns (the heterogeneous hosts' `platform`), so that a
    file of another kind given for it, or it given for another, is named by its kind."""
    KIND_SCHEMAS.setdefault(kind, schema)


def wrong_kind(schema: type[BaseModel], data: dict) -> str | None:
    """The other kind of file `data` is, when its keys are more another kind's fields than
    `schema`'s (a model file given as a board); None otherwise."""
    own = next((k for k, s in KIND_SCHEMAS.items() if s is schema), None)
    if own is None:
        return None
    keys = set(map(str, data))
    hits = {k: len(keys & set(s.model_fields)) for k, s in KIND_SCHEMAS.items()}
    best = max(hits, key=lambda k: hits[k])
    return best if best != own and hits[best] > hits[own] else None


def _an(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiouf" else f"a {kind}"


def validate_kind(schema: type[T], data: dict, source: str) -> T:
    """`validate_mapping`, except that a file of another kind (a model given as a board, a
    design given as an FPGA) is named as such instead of by its first unknown field."""
    try:
        return validate_mapping(schema, data, source)
    except ConfigError:
        other = wrong_kind(schema, data)
        if other is None:
            raise
        own = next(k for k, s in KIND_SCHEMAS.items() if s is schema)
        raise ConfigError(
            source,
            "(fields)",
            f"{_an(other)} file",
            f"this is {_an(other)} file, not {_an(own)} file: give it as `{other}`, and "
            f"{_an(own)} (a name or YAML path) as `{own}`",
            argument=own,
        ) from None


def load_file(schema: type[T], path: Path) -> T:
    """Load one YAML file into a schema; the object remembers its file (`config_source`)."""
    obj = validate_kind(schema, read_yaml_mapping(path), str(path))
    obj._source = str(path)
    return obj


#: Folder (under `data_root()`) of the block-sparse prefill mask tables a model may name.
MASK_DIR = "workloads/masks"


def load_model(name_or_path: str) -> TargetModel:
    """Load a target model by shipped name or path (a Hugging Face config.json is read as
    JSON by `config.hf.model_from_hf`)."""
    path = resolve("model", name_or_path)
    if is_hf_config(path):
        model = model_from_hf(read_json_mapping(path), str(path))
        model._source = str(path)
        return model
    return load_file(TargetModel, path)


def load_algorithm(name_or_path: str) -> Algorithm:
    """Load an SD algorithm by shipped name or path."""
    return load_file(Algorithm, resolve("algorithm", name_or_path))
