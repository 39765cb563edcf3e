"""Where the compiler gives MV row groups up for MM tiles: docs/batching.md ("Where MV gives
way to MM") states it per board, derived by hand; this holds the statement to the
compiler's choice (`compiler.choose_forms`, each projection of a verify pass alone) and to
the hand formula R* = mm_rows x (a row group's rate: the MV array's MACs per cycle or its
weight loads' weight elements per cycle, whichever is slower) / mm_macs. The doc said
"about 64 rows" before; the compiler switched at 32-33.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from fpgasim.config import load_board, load_model
from fpgasim.dataflow.lowerings.flightllm import Rates, hardware_layers_of, pass_shape
from fpgasim.dataflow.lowerings.flightllm.compiler import MM_FORM, choose_forms, has_choice
from fpgasim.dataflow.lowerings.flightllm.flightllm_graph import GraphParams
from fpgasim.step import verify_spec

DOC = (Path(__file__).resolve().parents[3] / "docs" / "batching.md").read_text()
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj",
               "lm_head")


@cache
def first_mm_rows(board_name: str, context: int = 1023) -> dict[str, int]:
    """Per projection of LLaMA2-7B, the fewest verify rows the compiler runs in MM tiles
    (checked: every larger row count up to 64 too)."""
    board, model = load_board(board_name), load_model("llama2-7b-flightllm")
    rates, params = Rates.of(board), GraphParams.of(board)
    forms: dict[str, list[bool]] = {}
    for rows in range(2, 65):
        phase, r, ctx = pass_shape(verify_spec(rows, context), board)
        for layer in hardware_layers_of(model, params, phase, r, ctx):
            name = layer.name.removeprefix("l0.")
            if has_choice(layer) and name in PROJECTIONS and (layer.name == name or
                                                               layer.name.startswith("l0.")):
                if len(forms.get(name, [])) < rows - 1:
                    chosen, _ = choose_forms([layer], rates, None)
                    forms.setdefault(name, []).append(chosen[0] == MM_FORM)
    first = {}
    for name, mm in forms.items():
        k = mm.index(True)
        assert all(mm[k:]), f"{name} returns to MV after {k + 2} rows"
        first[name] = k + 2
    return first


def stated_range(board_name: str) -> tuple[int, int]:
    """The range of rows docs/batching.md states for the board's linear layers."""
    text = " ".join(DOC[DOC.index("## Where MV gives way to MM"):].split())
    found = re.search(
        rf"`{board_name}`: .*?switches the linear layers at \*\*(\d+)(?:-(\d+))? rows", text)
    assert found, f"docs/batching.md states no switch for {board_name}"
    return int(found.group(1)), int(found.group(2) or found.group(1))


def hand_rows(board_name: str) -> float:
    """R* = mm_rows x (a one-lane row group's weights per cycle) / mm_macs."""
    b = load_board(board_name)
    r = b.recipe
    loads = (b.channel_bytes_per_s * b.fit.channels_a * b.fit.same_channel_efficiency
             * r.operand_ratio / b.clock_hz) / (r.operand_bits / 8)  # weights per cycle
    per_row_group = min(b.fit.mv_macs_per_cycle, loads)
    return b.fit.mm_rows * per_row_group / b.fit.mm_macs_per_cycle


@pytest.mark.parametrize("board_name", ["flightllm-vhk158", "flightllm-u280"])
def test_the_doc_states_where_the_compiler_switches(board_name: str) -> None:
    first = first_mm_rows(board_name)
    assert set(first) == set(PROJECTIONS)
    assert (min(first.values()), max(first.values())) == stated_range(board_name)
    hand = hand_rows(board_name)
    # R* counts a row group's weights only; on a load-bound row group the LD unit also loads
    # its input vector, biases and padded columns (1-4 %), so the compiler may switch just
    # below R* (flightllm-u280: R* = 29.1, every linear layer at 29)
    assert min(first.values()) - 1 <= hand <= max(first.values()) + 1, (hand, first)
