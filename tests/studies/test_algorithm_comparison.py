"""docs/falcon.md: the generated blocks match the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.studies.algorithm_comparison import compare_algorithms, comparison_markdown
from fpgasim.tree.sar import falcon_calibration_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "falcon.md"
VICUNA = load_model("vicuna-7b-v1.5")
TRIO = ("falcon", "eagle3", "longspec")


def block(name: str) -> str:
    match = re.search(rf"<!-- BEGIN {name} -->\n(.*?)\n<!-- END {name} -->", DOC.read_text(), re.S)
    assert match, f"docs/falcon.md has no block {name}"
    return match.group(1)


def test_calibration_block() -> None:
    algos = [load_algorithm(n) for n in ("falcon", "falcon-k3", "falcon-k4")]
    assert block("calibration") == falcon_calibration_markdown(algos)


@pytest.mark.parametrize(
    ("name", "board", "algorithms", "contexts"),
    [
        # within Vicuna-7B's 4,096-token window (longer contexts are refused)
        ("compare-u280", "u280", TRIO, [512, 2048]),
        ("compare-v80", "v80", TRIO, [512, 2048]),
        ("compare-k-v80", "v80", ("falcon", "falcon-k3", "falcon-k4"), [512, 2048]),
    ],
)
@pytest.mark.slow
def test_comparison_blocks(name, board, algorithms, contexts) -> None:
    algos = [load_algorithm(a) for a in algorithms]
    cmp = compare_algorithms(load_board(board), VICUNA, algos, contexts, engine="analytic")
    assert block(name) == comparison_markdown(cmp)
