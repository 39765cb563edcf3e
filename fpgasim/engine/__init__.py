"""Engines: turn a forward pass into a `Timing`. Registry of the available engines."""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class EngineSpec:
    """What rebuilds an engine, on a pool worker or anywhere: its class and its options,
    typed, picklable and hashable (no keyword bag). None: the engine's default."""

    cls: type
    #: cycle engines: time a window of layers and extend by the proven steady state
    window: bool | None = None
    #: cycle engines: the layer windows tried
    window_layers: tuple[int, ...] | None = None

    def build(self) -> Engine:
        """A fresh engine of this class with these options."""
        if self.window is None:  # the class's own windowing
            if self.window_layers is None:
                return self.cls()
            return self.cls(window_layers=self.window_layers)
        return self.cls(window=self.window, window_layers=self.window_layers)

    @classmethod
    def of(cls, engine: Engine) -> EngineSpec:
        """The spec that rebuilds `engine` (its class and its `options`, when it has any)."""
        window = getattr(engine, "window", None)
        layers = getattr(engine, "window_layers", None)
        return cls(type(engine), window, None if layers is None else tuple(layers))


def get_engine(name: str, *, window: bool | None = None) -> Engine:
    """An engine instance by name (`window`: a cycle engine's windowing, None its default);
    unknown names list the choices."""
    if name not in ENGINES:
        raise InputError("engine", name, f"one of {', '.join(sorted(ENGINES))}")
    if window is not None and not hasattr(ENGINES[name], "window_layers"):
        raise InputError("engine", name, "a cycle engine (event, fast) for windowing")
    return EngineSpec(ENGINES[name], window=window).build()


__all__ = [
    "ENGINES",
    "DEFAULT_ENGINE",
    "BULK_ENGINE",
    "Engine",
    "EngineSpec",
    "Timing",
    "combine",
    "get_engine",
    "register_engine",
]
