"""The glossary defines every symbol the outputs use, and every results command's --help
points to it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: Symbols printed by simulate, solve, explore, generate and reproduce (headers, columns).
SYMBOLS = [
    "AD", "SD", "AAT", "AR", "A, B, C", "T_v", "T_d", "P(x)", "P_disc", "P_eff", "P_max",
    "alpha", "speedup", "decision", "x_R", "x_ridge", "ridge_tokens", "compute_to_bandwidth",
    "regime", "bound", "Best", "Ori", "Naive", "unified x", "engine", "lowering",
    "aat_source", "sim_reason", "sd_speedup", "fits_memory", "verify_len", "context",
]  # fmt: skip
COMMANDS = ["simulate", "generate", "sweep", "explore", "boards", "solve", "reproduce",
            "compare-algorithms"]  # fmt: skip


def defined() -> set[str]:
    """Every name in the first cell of a glossary table row (split on ', ' and '/')."""
    names = set()
    for line in (DOCS / "glossary.md").read_text().splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            cell = line.split("|")[1].strip()
            names.add(cell.replace("`", ""))
            for part in re.split(r",\s*|\s*/\s*", cell):
                name = part.replace("`", "").strip()
                names |= {name, name.removesuffix("(x)")}
    return names


@pytest.mark.parametrize("symbol", SYMBOLS)
def test_symbol_is_defined(symbol: str) -> None:
    assert symbol in defined(), symbol


@pytest.mark.parametrize("command", COMMANDS)
def test_help_links_the_glossary(capsys, command: str) -> None:
    res = run_cli(capsys, command, "--help")
    assert res.code == 0
    assert "docs/glossary.md" in " ".join(res.out.split())


def test_which_answer_to_trust_is_written_down() -> None:
    text = (DOCS / "analysis.md").read_text()
    section = text.split("## Which answer to trust", 1)[1].split("\n## ", 1)[0]
    assert "To decide" in section and "To reproduce the paper" in section
    assert "sim_reason" in section
