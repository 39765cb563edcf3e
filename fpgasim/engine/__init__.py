"""Engines: turn a forward pass into a `Timing`. Registry of the available engines."""

from __future__ import annotations

from typing import Protocol

from fpgasim.config.board import Board
from fpgasim.config.schema import DrafterSchema, TargetModel
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine.analytic import AnalyticEngine
from fpgasim.engine.event import EventEngine
from fpgasim.engine.fast import FastEngine
from fpgasim.engine.timing import Timing, combine
from fpgasim.errors import InputError


class Engine(Protocol):
    """What every engine provides: the timing of one forward pass."""

    name: str
    version: str

    def run_pass(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: DrafterSchema | None = None
    ) -> Timing:
        """Timing of the pass `spec` on `board` (`drafter`: its schema, for a draft pass)."""
        ...


ENGINES: dict[str, type] = {"analytic": AnalyticEngine, "event": EventEngine, "fast": FastEngine}
DEFAULT_ENGINE = "event"
#: The default of commands that time thousands of passes (`generate`, `reproduce`'s simulator
#: columns): `fast` gives `event`'s cycles bit for bit, about 4x cheaper per pass once
#: numba's kernel is compiled (docs/engines.md, "Which engine").
BULK_ENGINE = "fast"


def register_engine(name: str, cls: type) -> None:
    """Add an engine class to the registry (duplicates are an error)."""
    if name in ENGINES:
        raise ValueError(f"engine {name!r} is already registered")
    ENGINES[name] = cls


def get_engine(name: str, **options: object) -> Engine:
    """An engine instance by name; unknown names list the choices."""
    if name not in ENGINES:
        raise InputError("engine", name, f"one of {', '.join(sorted(ENGINES))}")
    return ENGINES[name](**options)


__all__ = [
    "ENGINES",
    "DEFAULT_ENGINE",
    "BULK_ENGINE",
    "Engine",
    "Timing",
    "combine",
    "get_engine",
    "register_engine",
]
