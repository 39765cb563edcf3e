"""What a user reads: cycles and seconds that add up, help without placeholders, one tree
notation, no machine paths in written tables (issue 21, the smaller items)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fpgasim.config import available, load_algorithm
from fpgasim.dataflow.drafters import draft_passes
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.tree.embedded import embedded_curve
from fpgasim.tree.shapes import depth_based, width_based
from tests.cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
FLIGHTLLM = ["-b", "flightllm-vhk158", "-m", "llama2-7b-flightllm", "-e", "fast"]


def test_flightllm_seconds_follow_from_cycles_clock_and_divisor(capsys) -> None:
    res = run_cli(capsys, "simulate", *FLIGHTLLM, "-L", "1023", "-x", "1", "--format", "json")
    row = json.loads(res.out)
    assert row["duration_divisor"] == 3.2 and row["clock_mhz"] == 225
    assert row["verify_s"] == pytest.approx(
        row["verify_cycles"] / (row["clock_mhz"] * 1e6 * row["duration_divisor"]), rel=1e-12
    )
    table = run_cli(capsys, "simulate", *FLIGHTLLM, "-L", "1023", "-x", "1")
    cycle_lines = [line for line in table.out.splitlines() if "_cycles " in line]
    assert cycle_lines and not any("e+" in line for line in cycle_lines), cycle_lines
    assert re.search(r"duration_divisor +│ 3\.2 ", table.out)
    shown = f"{row['verify_cycles']:.2f}"
    assert f"verify_cycles / (clock_mhz x 1e6 x duration_divisor) = {shown} / (225 x 1e6 x 3.2)" \
        in table.out


def test_flightllm_prefill_shows_its_divisor(capsys) -> None:
    res = run_cli(capsys, "simulate", *FLIGHTLLM, "--phase", "prefill", "--prompt-len", "128")
    assert res.code == 0, res.err
    assert "prefill_s = prefill_cycles / (clock_mhz x 1e6 x duration_divisor)" in res.out
    assert "e+" not in "".join(line for line in res.out.splitlines() if "_cycles" in line)


def test_flightllm_per_unit_table_has_bytes_and_work(capsys) -> None:
    res = run_cli(capsys, "simulate", *FLIGHTLLM, "-L", "1023", "-x", "1")
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in res.out.split("per-unit utilisation")[1].splitlines()
            if line.startswith("│")}
    assert int(rows["LD"][2]) > 0 and int(rows["ST"][2]) > 0  # bytes
    assert int(rows["MV"][3]) > 0 and int(rows["MISC"][3]) > 0  # work


def test_a_study_board_shows_whole_cycles_and_divisor_1(capsys) -> None:
    res = run_cli(capsys, "simulate", "-b", "u280", "-m", "llama-3.1-8b", "-L", "256", "-x", "4",
                  "-e", "analytic")
    assert re.search(r"duration_divisor +│ 1 ", res.out)
    assert re.search(r"verify_cycles +│ \d+ ", res.out)
    assert "verify_s = verify_cycles / (clock_mhz x 1e6) = " in res.out


@pytest.mark.parametrize("args", [[], ["simulate"], ["reproduce"], ["cache", "info"]])
def test_help_shows_no_bool_placeholder(capsys, args: list[str]) -> None:
    res = run_cli(capsys, *args, "--help")
    assert res.code == 0 and "--help" in res.out and "<bool>" not in res.out


def test_simulate_help_names_every_shipped_algorithm(capsys) -> None:
    text = " ".join(run_cli(capsys, "simulate", "--help").out.split())
    for name in available("algorithm"):
        assert name in text, name


@pytest.mark.slow
def test_written_tables_name_no_absolute_path(capsys, tmp_path: Path) -> None:
    res = run_cli(capsys, "reproduce", "table1", "--engine", "analytic", "--out", str(tmp_path))
    assert res.code == 0, res.err
    text = (tmp_path / "table1.md").read_text()
    assert "workloads/aat, shipped with fpgasim" in text
    assert str(REPO) not in text and str(Path.home()) not in text


def test_bound_values_are_all_documented() -> None:
    """Every `bound` an engine reports is listed in docs/formats.md's column table."""
    row = next(line for line in (REPO / "docs" / "formats.md").read_text().splitlines()
               if line.startswith("| `bound` |"))
    for value in ("load", "store", "compute", "sfu"):
        assert f"`{value}`" in row, value


def test_one_tree_notation_and_what_a_trailing_zero_costs() -> None:
    """Trees fpgasim builds never end in an empty level; a trailing 0 (the measured tables'
    `1 0`) is a drafted level and costs one more draft pass (docs/formats.md)."""
    longspec = load_algorithm("longspec")
    shapes = embedded_curve(longspec, 1024, range(2, 86))["tree_shape"].tolist()
    maximal = tuple(longspec.max_tree)
    shapes += [" ".join(map(str, f(n, maximal))) for f in (width_based, depth_based)
               for n in range(1, 85)]
    assert not [s for s in shapes if s.split()[-1] == "0"]
    passes = {s: len(draft_passes(longspec, TokenTree.from_shape(s), 1, 1024))
              for s in [(1,), (1, 0)]}
    assert passes == {(1,): 1, (1, 0): 2}


def test_readme_explains_every_shipped_board() -> None:
    """README's "Which board" section names every board file, FPGA and design, and how to
    pair any FPGA with any design."""
    text = (REPO / "README.md").read_text().split("## Which board")[1].split("\n## ")[0]
    for kind in ("board", "fpga", "design"):
        for name in available(kind):
            assert f"`{name}`" in text, (kind, name)
    assert "--fpga F" in text and "--design D" in text
