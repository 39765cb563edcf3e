"""Heterogeneous host files: every shipped platform loads; bad files fail with one clear line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fpgasim.config import available
from fpgasim.errors import ConfigError
from fpgasim.heterogeneous import load_platform

SHIPPED = ["i5-9300h-gtx1050m", "rtx4090", "xeon4214r-rtx2080s", "xeon4310-rtx3090"]


def test_shipped_platforms_listed_and_valid() -> None:
    assert available("platform") == SHIPPED
    for name in SHIPPED:
        p = load_platform(name)
        assert p.name == name
        assert p.sources, f"{name} cites no source"


def test_spec_sheet_arithmetic() -> None:
    """Derived figures equal the arithmetic in the files' comments."""
    xeon = load_platform("xeon4214r-rtx2080s")
    assert xeon.cpu.peak_gflop_s == pytest.approx(2 * 12 * 2.4 * 32)
    assert xeon.cpu.memory_bandwidth_gb_s == pytest.approx(2 * 6 * 2400 * 8 / 1000)
    assert xeon.gpu.peak_tflop_s == pytest.approx(384 * 64 * 2 * 1.815 / 2 / 1000, rel=1e-3)
    assert xeon.pcie.bandwidth_gb_s == pytest.approx(xeon.pcie.max_gb_s, rel=1e-3)
    ice = load_platform("xeon4310-rtx3090")
    assert ice.cpu.peak_gflop_s == pytest.approx(12 * 2.1 * 64)
    assert ice.cpu.memory_bandwidth_gb_s == pytest.approx(8 * 2666 * 8 / 1000, rel=1e-3)
    assert ice.pcie.bandwidth_gb_s == pytest.approx(ice.pcie.max_gb_s, rel=1e-3)
    lap = load_platform("i5-9300h-gtx1050m")
    assert lap.cpu.peak_gflop_s == pytest.approx(4 * 2.4 * 64)
    assert lap.gpu.peak_tflop_s == pytest.approx(640 * 2 * 1.493 / 1000, rel=1e-3)
    assert lap.gpu.memory_bandwidth_gb_s == pytest.approx(7 * 128 / 8)
    assert lap.pcie.bandwidth_gb_s == pytest.approx(lap.pcie.max_gb_s, rel=1e-3)
    assert (lap.precision.target, lap.precision.draft) == ("int8", "fp16")


def _write(tmp_path: Path, data: dict) -> str:
    path = tmp_path / "host.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def _base() -> dict:
    path = Path(__file__).resolve().parents[2] / "platforms" / "xeon4214r-rtx2080s.yaml"
    return yaml.safe_load(path.read_text())


@pytest.mark.parametrize(
    ("edit", "field", "needle"),
    [
        (lambda d: d.update(colour="blue"), "colour", "unknown field"),
        (lambda d: d["cpu"].update(memory_efficiency=1.2), "cpu.memory_efficiency", "less than"),
        (lambda d: d["cpu"].update(overlap_beta=1.5), "cpu.overlap_beta", "less than"),
        (lambda d: d["cpu"].update(overlap_beta=-0.1), "cpu.overlap_beta", "greater than"),
        (lambda d: d["pcie"].update(bandwidth_gb_s=20), "pcie", "exceeds PCIe 3.0 x16"),
        (lambda d: d["pcie"].update(lanes=12), "pcie.lanes", "Input should be"),
        (lambda d: d["cpu"].update(peak_gflop_s=999999), "cpu", "FLOP/cycle/core"),
        (lambda d: d.update(cpu=None), "(top level)", "needs a cpu section"),
        (lambda d: d["gpu"].update(reserved_gib=9), "gpu", "leaves nothing"),
        (lambda d: d["precision"].update(target="fp8"), "precision.target", "Input should be"),
        (lambda d: d["gpu"].pop("memory_gib"), "gpu.memory_gib", "required"),
    ],
)
def test_bad_platform_files(tmp_path, edit, field, needle) -> None:
    data = _base()
    edit(data)
    with pytest.raises(ConfigError) as info:
        load_platform(_write(tmp_path, data))
    assert info.value.field == field
    assert needle in str(info.value)
    assert "\n" not in str(info.value)


def test_unknown_platform_lists_shipped() -> None:
    with pytest.raises(ConfigError, match="xeon4214r-rtx2080s"):
        load_platform("no-such-host")


def test_gpu_only_host_may_omit_cpu() -> None:
    p = load_platform("rtx4090")
    assert p.target_device == "gpu" and p.cpu is None


def test_docs_example_platform_validates(tmp_path) -> None:
    """The YAML example in docs/heterogeneous.md is a valid platform file."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "heterogeneous.md").read_text()
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "my-host.yaml"
    path.write_text(block)
    p = load_platform(str(path))
    assert p.name == "my-host" and p.pcie.max_gb_s == pytest.approx(31.51, rel=1e-3)
