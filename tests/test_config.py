"""Schema validation of shipped and bad board/model/algorithm files."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fpgasim.config import available, load_algorithm, load_board, load_model
from fpgasim.errors import ConfigError


@pytest.mark.parametrize("name", ["u280", "vhk158", "v80", "u250"])
def test_shipped_boards_load(name: str) -> None:
    board = load_board(name)
    assert board.name == name
    assert board.clock_mhz == 225
    assert board.memory.weight_group.channels == 32


def test_every_shipped_file_validates() -> None:
    assert len(available("board")) >= 4
    assert len(available("model")) >= 8
    for name in available("board"):
        load_board(name)
    for name in available("model"):
        load_model(name)
    for name in available("algorithm"):
        load_algorithm(name)


def test_board_facts() -> None:
    assert load_board("u280").macs_per_cycle == 3072
    assert load_board("vhk158").macs_per_cycle == 8192
    assert load_board("v80").macs_per_cycle == 16384
    assert load_board("u250").memory.bandwidth_gb_s == 77


def _board_dict(repo: Path) -> dict:
    return yaml.safe_load((repo / "boards" / "u280.yaml").read_text())


def _write(tmp_path: Path, data) -> Path:
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d["memory"].update(bandwidth_gb_s=-5), "memory.bandwidth_gb_s"),
        (lambda d: d["pe_array"].update(rows=0), "pe_array.rows"),
        (lambda d: d["pe_array"].update(rows=10000), "pe_array.rows"),
        (lambda d: d.pop("clock_mhz"), "clock_mhz"),
        (lambda d: d.update(clock_ghz=1), "clock_ghz"),
        (lambda d: d["memory"]["weight_group"].update(load_efficiency=1.5),
         "memory.weight_group.load_efficiency"),
        (lambda d: d["memory"].update(bandwidth_gb_s=float("nan")), "memory.bandwidth_gb_s"),
        (lambda d: d.update(clock_mhz="fast"), "clock_mhz"),
    ],
)
def test_bad_board_names_field(tmp_path: Path, repo: Path, mutate, field: str) -> None:
    data = _board_dict(repo)
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(ConfigError) as info:
        load_board(str(path))
    assert info.value.field == field
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_cross_field_rule_mentions_values(tmp_path: Path, repo: Path) -> None:
    data = _board_dict(repo)
    data["mv_macs_per_cycle"] = 10**6
    with pytest.raises(ConfigError, match="exceeds the PE array"):
        load_board(str(_write(tmp_path, data)))


@pytest.mark.parametrize("text", ["", "- 1\n- 2\n", "a: [1, 2\n", "\x00\x01\xff\xfe"])
def test_malformed_files(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(ConfigError):
        load_board(str(path))


def test_unknown_name_lists_choices() -> None:
    with pytest.raises(ConfigError, match="u280"):
        load_board("no-such-board")


def test_model_shape_rule(tmp_path: Path, repo: Path) -> None:
    data = yaml.safe_load((repo / "workloads/models/llama-3.1-8b.yaml").read_text())
    data["kv_heads"] = 7
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="kv_heads"):
        load_model(str(path))


def _field_paths(model, prefix: str = "") -> list[str]:
    import typing

    from pydantic import BaseModel

    out = []
    for name, info in model.model_fields.items():
        subs = [c for c in [info.annotation, *typing.get_args(info.annotation)]
                if isinstance(c, type) and issubclass(c, BaseModel)]
        out += _field_paths(subs[0], f"{prefix}{name}.") if subs else [f"{prefix}{name}"]
    return out


def test_docs_describe_every_board_and_model_field(repo: Path) -> None:
    from fpgasim.config.board import Board
from fpgasim.config.schema import TargetModel

    text = (repo / "docs" / "formats.md").read_text()
    missing = [p for m in (Board, TargetModel) for p in _field_paths(m) if f"`{p}`" not in text]
    assert not missing, f"docs/formats.md does not describe {missing}"
