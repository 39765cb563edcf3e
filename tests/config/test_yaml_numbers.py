"""Numbers in YAML files are read as written: the loader resolves scalars by YAML 1.2's core
schema, not YAML 1.1's (octal `0225` = 149, base-60 `2:25` = 145, `yes` = true)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fpgasim.config import load_design
from fpgasim.config.loader import load_yaml_text
from fpgasim.errors import ConfigError
from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
STUDY = (REPO / "designs/study.yaml").read_text()


def design_with(tmp_path: Path, line: str) -> Path:
    """designs/study.yaml with its clock line replaced by `line`."""
    text = STUDY.replace("clock_mhz: 225 ", f"{line} ", 1)
    assert text != STUDY
    path = tmp_path / "b.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "value"), [
    ("0225", 225), ("+0225", 225), ("-017", -17), ("0o17", 15), ("0x1F", 31), ("1e3", 1000.0),
    ("1.5", 1.5), (".5", 0.5), ("-.inf", float("-inf")), ("true", True), ("FALSE", False),
    ("null", None), ("~", None),
])
def test_scalars_follow_the_yaml_1_2_core_schema(text: str, value: object) -> None:
    assert load_yaml_text(f"a: {text}") == {"a": value}


@pytest.mark.parametrize("text", ["2:25", "1_000", "yes", "off", "2024-01-01", "0b101"])
def test_yaml_1_1_readings_stay_text(text: str) -> None:
    """Base 60, digit separators, yes/no/on/off, dates and binary are YAML 1.1 only."""
    assert load_yaml_text(f"a: {text}") == {"a": text}


def test_a_leading_zero_clock_is_the_number_written(tmp_path: Path) -> None:
    """`clock_mhz: 0225` was simulated at 149 MHz (YAML 1.1 octal)."""
    assert load_design(str(design_with(tmp_path, "clock_mhz: 0225"))).clock_mhz == 225


def test_a_base_60_clock_is_refused_naming_the_field(tmp_path: Path, capsys) -> None:
    """`clock_mhz: 2:25` was simulated at 145 MHz (YAML 1.1 base 60)."""
    path = design_with(tmp_path, "clock_mhz: 2:25")
    with pytest.raises(ConfigError, match=r"b\.yaml: clock_mhz = '2:25'"):
        load_design(str(path))
    for args in (["validate", str(path)],
                 ["simulate", "--fpga", "u280", "--design", str(path), "-m", "llama-3.1-8b",
                  "-L", "128", "-e", "analytic"]):
        res = run_cli(capsys, *args)
        assert res.code == 2 and res.out == ""
        assert f"{path}: clock_mhz = '2:25'" in res.err.splitlines()[0], res.err


def test_every_shipped_yaml_reads_the_same_under_both_schemas() -> None:
    """The shipped files use no YAML 1.1-only scalar: switching schemas changed none."""
    files = [p for folder in ("boards", "fpgas", "designs", "workloads",
                                                 "platforms")
             for p in sorted((REPO / folder).rglob("*.yaml"))]
    assert len(files) > 40
    for path in files:
        text = path.read_text()
        assert load_yaml_text(text) == yaml.safe_load(text), path
