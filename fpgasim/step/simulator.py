"""The simulator object: one engine and everything around it, owned in one place.

A `Simulator` holds an engine (which keeps its own caches: a cycle engine's part makespans
and window proofs) and that engine's pass service (`passes`: the memo of timed passes, the
lower bounds and floors, batching on an executor's workers). Every consumer of one run
(simulate, the solver, tree design, the side-by-side tables, generate, `--trace`) is handed
the same `Simulator` and asks it, so nothing is timed twice: sharing is by holding the
object, never by attributes set on an engine or a table of engines by identity.

A `Simulator` stands in for its engine wherever one is expected: it answers the `Engine`
protocol (`name`, `version`, `run_pass`) through its service, and any other attribute of
the engine (`window`, `trace_events`, ...) is the engine's. Library functions that take an
engine accept a bare one too (`simulator_of` wraps it, with a memo of its own for that
call): hand them a `Simulator` to share one memo across calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, TargetModel
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine import Engine, EngineSpec, get_engine
from fpgasim.engine.timing import Timing
from fpgasim.step.executor import Executor, Submits
from fpgasim.step.service import PassKey, PassService, Timed


class Simulator:
    """One engine and its pass service (see the module docstring)."""

    __slots__ = ("engine", "passes")

    def __init__(self, engine: Engine, passes: PassService | None = None) -> None:
        if isinstance(engine, Simulator | PassService):
            raise TypeError("a Simulator wraps a bare engine (use simulator_of)")
        #: the engine (with its own per-instance caches)
        self.engine = engine
        #: the engine's pass service: every pass this simulator times, remembered
        self.passes = passes if passes is not None else PassService(engine)

    @classmethod
    def of(cls, spec: EngineSpec) -> Simulator:
        """A new simulator of the engine `spec` builds."""
        return cls(spec.build())

    @classmethod
    def named(cls, name: str, *, window: bool | None = None) -> Simulator:
        """A new simulator of the engine registered as `name` (`get_engine`)."""
        return cls(get_engine(name, window=window))

    def __getattr__(self, name: str) -> Any:
        """Any other attribute is the engine's (a simulator stands in for its engine)."""
        if name.startswith("__") or name in Simulator.__slots__:
            raise AttributeError(name)
        return getattr(self.engine, name)

    def __repr__(self) -> str:
        return f"Simulator({self.engine!r})"

    @property
    def name(self) -> str:
        """The engine's name (a planning service's own: "planner")."""
        return self.passes.name

    @property
    def version(self) -> str:
        """The engine's version."""
        return self.passes.version

    @property
    def remembered(self) -> int:
        """How many distinct passes the service remembers."""
        return self.passes.remembered

    def __contains__(self, key: PassKey) -> bool:
        return key in self.passes

    def timed(self, spec: PassSpec, board: Board, model: TargetModel, drafter: Any = None) -> Timed:
        """Timing and per-unit rows of one pass (`PassService.timed`)."""
        return self.passes.timed(spec, board, model, drafter)

    def run_pass(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: Any = None
    ) -> Timing:
        """Timing of one pass (the `Engine` protocol, remembered)."""
        return self.passes.timed(spec, board, model, drafter)[0]

    def run_passes(
        self, specs: Iterable[PassSpec], board: Board, model: TargetModel,
        algorithm: Algorithm | None = None,
    ) -> Timing:
        """The passes in sequence (`PassService.run_passes`)."""
        return self.passes.run_passes(specs, board, model, algorithm)

    def has_bounds(self, board: Board) -> bool:
        """Whether the engine bounds some of the board's passes (`PassService.has_bounds`)."""
        return self.passes.has_bounds(board)

    def bound_s(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: Any = None
    ) -> float:
        """A lower bound of a pass in seconds (`PassService.bound_s`)."""
        return self.passes.bound_s(spec, board, model, drafter)

    def floor_s(self, spec: PassSpec, board: Board, model: TargetModel) -> float:
        """A looser lower bound from sizes alone (`PassService.floor_s`)."""
        return self.passes.floor_s(spec, board, model)

    def prefetch(
        self, keys: Iterable[PassKey], executor: Executor, chunks_per_worker: int = 8,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Time the missing passes on the executor's workers (`PassService.prefetch`)."""
        return self.passes.prefetch(keys, executor, chunks_per_worker, progress)

    def start(self, keys: Iterable[PassKey], executor: Submits) -> Callable[[], int]:
        """Start timing the missing passes on a worker (`PassService.start`)."""
        return self.passes.start(keys, executor)


def simulator_of(engine: Engine | Simulator | PassService) -> Simulator:
    """The simulator to ask: a `Simulator` itself; a pass service (a `Planner` included)
    with its own memo; a bare engine in a new simulator, with a new memo."""
    if isinstance(engine, Simulator):
        return engine
    if isinstance(engine, PassService):
        return Simulator(engine.engine, engine)
    return Simulator(engine)


def engine_of(engine: Engine | Simulator | PassService) -> Engine:
    """The bare engine behind a simulator or a pass service (for `isinstance` checks of
    what kind of engine runs)."""
    if isinstance(engine, Simulator | PassService):
        return engine.engine
    return engine
