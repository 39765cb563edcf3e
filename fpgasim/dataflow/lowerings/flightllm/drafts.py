"""How a drafter plug-in describes one draft pass to FlightLLM's compiler.

FlightLLM's model has no drafter (docs/flightllm-model.md): each drafter plug-in that runs on
this lowering builds its pass in FlightLLM's layer types (`graph.Layers`) and says for which
padded dimensions (`DraftGraph`). The lowering compiles any such pass the same way, so the
compiler holds no drafter names; a plug-in without `flightllm_graph` is refused up front.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from fpgasim.config.board import Board
from fpgasim.dataflow.graph import Graph


@dataclass(frozen=True)
class DraftGraph:
    """One draft pass as FlightLLM's compiler sees it.

    build   (model, params, *dims) -> the pass's graph in FlightLLM's layer types (params:
            graph.GraphParams, the recipe, key tile and KV append); a
            module-level function, so equal (build, dims) share their hardware layers
    dims    the padded dimensions (and flags) the graph is built for, hashable
    label   the pass's name in traces, e.g. "eagle3 rows=4 keys=1040 first"
    """

    build: Callable[..., Graph]
    dims: tuple[int | bool, ...]
    label: str


def decode_keys(tokens: int, context: int, board: Board) -> int:
    """Keys of a decode-style pass of `tokens` new tokens over `context` cached ones: their
    sum padded to padding.decode_multiple (the model's window is checked where the pass is
    asked for: simulate.Point.check)."""
    mult = board.padding.decode_multiple
    return math.ceil((context + tokens) / mult) * mult

