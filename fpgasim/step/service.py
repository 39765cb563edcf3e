"""The pass service: every pass a consumer costs is timed here, once per engine.

Engines turn one pass into a `Timing`. `PassService` wraps an engine and owns what sits
around it: the in-memory memo of passes (keyed by `pass_key`'s content: the spec, the
board, the model's architecture and the drafter) and batching (`prefetch`: the missing
passes of a plan computed on an executor's workers and stored here). A `Simulator`
(simulator.py) owns one engine and its service; every consumer holding that simulator
(simulate, the solver, tree design, the side-by-side tables, generate, `--trace`) shares one
memo: nothing is timed twice.

A service satisfies the `Engine` protocol itself (`name`, `version`, `run_pass`), so it can
be handed wherever an engine is expected.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from fpgasim.bounded import BoundedCache, bounded_cache, declare_cache, memoised
from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, TargetModel
from fpgasim.dataflow.lowerings.registry import lower_floor_cycles, lowering_of
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine import Engine, EngineSpec
from fpgasim.engine.timing import Timing, combine, seconds_of
from fpgasim.errors import InputError, PassOutOfRange
from fpgasim.step.executor import Executor, Submits

#: A pass to time: (spec, board, model, drafter or None).
PassKey = tuple[PassSpec, Board, TargetModel, Any]
#: A timed pass: its Timing and the engine's per-unit rows ([] on engines without them).
Timed = tuple[Timing, list[dict]]

#: passes a service remembers (least recently used out past it): far more than a run asks
#: (`reproduce all` asks 3,425 distinct passes, a FlightLLM `generate` a few thousand)
PASS_BUDGET = 250_000
#: lower bounds (and floors) a service remembers
BOUND_BUDGET = 1_000_000
PASSES = declare_cache(
    "step.passes", owner="fpgasim.step.service", lifetime="one simulator's service",
    keys="the spec as costed (`step.costed_spec`: without the tree mask on a lowering that "
    "costs every tree of x tokens alike), board, architecture, drafter (interned as small "
    "ints by identity)", budget=PASS_BUDGET,
    why="a hit costs about 1.2 µs (`run_pass` under `timeit` on the busy 2-core machine, 0.3 "
    "µs of it keeping the least recently used order; hashing a pydantic board each time "
    "cost 2.1-2.2 µs more) against 18-21 µs for an analytic pass, 2.8-4.0 ms for a "
    "windowed `fast` pass and 6-14 ms for a windowed `event` pass (`python "
    "benchmarks/run.py step`); the simulator's side of `reproduce all` asks 40,446 times "
    "for 3,425 distinct passes")
BOUNDS = declare_cache(
    "step.bounds", owner="fpgasim.step.service", lifetime="one simulator's service",
    keys="as `step.passes`, or the pass's shape (`Lowering.bound_shape`)", budget=BOUND_BUDGET,
    why="the solver's best-set search reads a bound per x and context and times only the x "
    "that can be best (docs/method.md, \"Finding the best x by bounds\"): 2,688 bounds and "
    "32 timed verify passes instead of 2,688 timed, for LongSpec's `generate` on "
    "`flightllm-vhk158`")
FLOORS = declare_cache(
    "step.floors", owner="fpgasim.step.service", lifetime="one simulator's service",
    keys="a target pass's shape, board, architecture", budget=BOUND_BUDGET,
    why="the cheaper, looser bound from sizes alone, once per shape")


#: a model's fields no pass's timing reads: its labels (id, hf_name, the file it came from,
#: the published parameter count) and its window (checked before any pass is timed)
_NOT_TIMED = {"id": "", "hf_name": "", "source": "", "params_b": None, "window_tokens": 0}


@memoised("step.architectures", owner="fpgasim.step.service", keys="target model",
          budget=256, why="a pass's key holds the model's architecture, asked once per "
          "model object a service meets")
def architecture(model: TargetModel) -> TargetModel:
    """The model without the fields no pass's timing reads (`_NOT_TIMED`): what a pass's
    timing depends on (e.g. Vicuna-13B v1.3/v1.5 and LongChat-13B, one architecture with
    windows of 2K, 4K and 16K tokens, share their passes). Cached: it is asked once per pass
    looked up."""
    return type(model).model_construct(**(dict(model) | _NOT_TIMED))


def pass_key(spec: PassSpec, board: Board, model: TargetModel, drafter: Any = None) -> tuple:
    """What a timed pass is remembered under."""
    return (costed_spec(spec, board), board, architecture(model), drafter)


def costed_spec(spec: PassSpec, board: Board) -> PassSpec:
    """The spec as the board's lowering costs it: without the tree mask on a lowering that
    costs every tree of x tokens alike (FlightLLM's, docs/validation.md), so the passes of
    two trees of one x are one pass, timed once."""
    if spec.tree_parents is None or lowering_of(board).reads_tree_mask:
        return spec
    return replace(spec, tree_parents=None)


class PassService:
    """The passes of one engine instance, each timed once (see the module docstring)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._memo: BoundedCache[Timed] = PASSES.new()
        #: lower bounds of passes in seconds (`bound_s`), keyed like `_memo` (or by shape)
        self._bounds: BoundedCache[float] = BOUNDS.new()
        self._floors: BoundedCache[float] = FLOORS.new()
        #: a small int per distinct board, architecture or drafter (by value), and the
        #: token of each object seen (by identity, the object held so its id stays its own)
        self._tokens: dict[Any, int] = {}
        self._seen: dict[int, tuple[Any, int]] = {}

    def _key(self, spec: PassSpec, board: Board, model: TargetModel, drafter: Any) -> tuple:
        """What the memo is keyed by: `pass_key`'s content, with the board, the
        architecture and the drafter as tokens. Hashing a pydantic board compares and
        hashes every nested field (several µs, tens of thousands of times per run); the
        token of an object already seen is found by its id."""
        return (
            costed_spec(spec, board),
            self._token(board),
            self._token(model, architecture),
            self._token(drafter),
        )

    def _token(self, obj: Any, value: Callable[[Any], Any] | None = None) -> int:
        """The small int of `obj` (by `value(obj)`, default the object itself), looked up by
        identity: `_seen` holds every object it has seen, so no other object takes its id."""
        hit = self._seen.get(id(obj))
        if hit is None:
            token = self._tokens.setdefault(obj if value is None else value(obj), len(self._tokens))
            hit = self._seen[id(obj)] = (obj, token)
        return hit[1]

    @property
    def name(self) -> str:
        """The engine's name (a service stands in for its engine)."""
        return self.engine.name

    @property
    def version(self) -> str:
        """The engine's version (a service stands in for its engine)."""
        return self.engine.version

    @property
    def remembered(self) -> int:
        """How many distinct passes are remembered (not `__len__`: an empty service is no
        less an engine, and callers test `engine or default`)."""
        return len(self._memo)

    def __contains__(self, key: PassKey) -> bool:
        return self._key(*key) in self._memo

    def timed(self, spec: PassSpec, board: Board, model: TargetModel, drafter: Any = None) -> Timed:
        """Timing and per-unit rows of one pass, timed on the first ask only."""
        key = self._key(spec, board, model, drafter)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo.put(key, time_pass(self.engine, key[0], board, model, drafter))
        return hit

    def has_bounds(self, board: Board) -> bool:
        """True if this engine bounds some of the board's passes from below (FlightLLM's
        decode and verify passes: `bound_s` > 0 for them, 0.0 for the others)."""
        return hasattr(self.engine, "lower_bound_s") and lowering_of(board).build_bound is not None

    def bound_s(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: Any = None
    ) -> float:
        """Seconds the pass takes at least, at a fraction of its cost (0.0 where the engine
        or the board's lowering gives no bound; the pass's own time once it is remembered),
        each computed once (docs/engines.md, "Lower bounds")."""
        key = self._key(spec, board, model, drafter)
        hit = self._memo.get(key)
        if hit is not None:
            return hit[0].seconds
        bound = self._bounds.get(key)
        if bound is None:
            shape = lowering_of(board).bound_shape
            by_shape = None if shape is None else (shape(key[0]), *key[1:])
            bound = self._bounds.get(by_shape) if by_shape is not None else None
            if bound is None:
                bound = _bound(self.engine, key[0], board, model, drafter)
                if by_shape is not None:
                    self._bounds.put(by_shape, bound)
            self._bounds.put(key, bound)
        return bound

    def floor_s(self, spec: PassSpec, board: Board, model: TargetModel) -> float:
        """A cheaper, looser lower bound than `bound_s` of a target pass, from sizes alone
        (0.0 where none), computed once per shape (`Lowering.bound_shape`)."""
        if not self.has_bounds(board):
            return 0.0
        key = self._key(spec, board, model, None)
        shape = lowering_of(board).bound_shape
        by_shape = ("floor", shape(key[0]) if shape else key[0], *key[1:])
        hit = self._floors.get(by_shape)
        if hit is None:
            cycles = lower_floor_cycles(key[0], board, model)
            hit = self._floors.put(by_shape, 0.0 if cycles is None else seconds_of(
                cycles, board.clock_hz, board.duration_divisor))
        return hit

    def run_pass(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: Any = None
    ) -> Timing:
        """Timing of one pass (the `Engine` protocol, remembered)."""
        return self.timed(spec, board, model, drafter)[0]

    def run_passes(
        self,
        specs: Iterable[PassSpec],
        board: Board,
        model: TargetModel,
        algorithm: Algorithm | None = None,
    ) -> Timing:
        """The passes in sequence (draft passes run with the algorithm's drafter)."""
        return combine([self.run_pass(*key) for key in pass_keys(specs, board, model, algorithm)])

    def prefetch(
        self,
        keys: Iterable[PassKey],
        executor: Executor,
        chunks_per_worker: int = 8,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Time the passes `keys` not yet remembered on the executor's workers and remember
        them here; how many were timed.

        The results are those `run_pass` gives in this process (same engine class, same
        options). `progress(done, total)` is called after each chunk.
        """
        tasks = self._missing(keys)
        if not tasks:
            return 0
        n_chunks = max(1, min(len(tasks), executor.workers * chunks_per_worker))
        chunks = _chunks(tasks, math.ceil(len(tasks) / n_chunks))
        options = self._options()
        done = 0
        for index, results in executor.map_unordered(_time_chunk, [(options, c) for c in chunks]):
            for key, result in zip(chunks[index], results, strict=True):
                self._memo.put(self._key(*key), result)
            done += len(results)
            if progress is not None:
                progress(done, len(tasks))
        return len(tasks)

    def start(self, keys: Iterable[PassKey], executor: Submits) -> Callable[[], int]:
        """Start timing the passes `keys` not yet remembered on one worker of `executor` and
        return at once: the function returned waits for them and remembers their results
        (how many). A caller times passes it knows early (e.g. `generate`'s prefill) while
        it plans the rest."""
        missing = self._missing(keys)
        if not missing:
            return lambda: 0
        future = executor.submit(_time_chunk, (self._options(), missing))

        def finish() -> int:
            for key, result in zip(missing, future.result(), strict=True):
                self._memo.put(self._key(*key), result)
            return len(missing)

        return finish

    def _missing(self, keys: Iterable[PassKey]) -> list[PassKey]:
        """The distinct passes of `keys` not remembered, each with its spec as costed."""
        wanted = {}
        for k in keys:
            pk = self._key(*k)
            wanted[pk] = (pk[0], *k[1:])  # the spec as costed
        return [k for pk, k in wanted.items() if pk not in self._memo]

    def _options(self) -> EngineSpec:
        """What rebuilds this service's engine on a worker (`_time_chunk`)."""
        return EngineSpec.of(self.engine)


def _chunks(tasks: list[PassKey], size: int) -> list[list[PassKey]]:
    """The passes in chunks of about `size`, taken by the workers as they finish. The passes
    of one token count are side by side, by kind and context, and never split between
    chunks: they share compiled parts (a verify length's projections at every context on
    every board and model of the same shapes, a long context's key tiles) that a worker then
    compiles once: `reproduce all`'s two workers compiled 9,313 parts with chunks cut
    anywhere, 8,648 (as many as one process) with chunks cut between token counts. Larger
    token counts first."""
    tasks = sorted(tasks, key=lambda k: (-k[0].tokens, k[0].kind, k[0].phase, k[0].context))
    chunks: list[list[PassKey]] = []
    for k in tasks:
        if not chunks or (len(chunks[-1]) >= size and chunks[-1][-1][0].tokens != k[0].tokens):
            chunks.append([])
        chunks[-1].append(k)
    return chunks


def pass_keys(
    specs: Iterable[PassSpec], board: Board, model: TargetModel, algorithm: Algorithm | None = None
) -> list[PassKey]:
    """The passes as a service is asked them: target passes without a drafter, draft passes
    with the algorithm's."""
    drafter = algorithm.drafter if algorithm is not None else None
    return [(s, board, model, None if s.kind == "target" else drafter) for s in specs]


def time_pass(
    engine: Engine, spec: PassSpec, board: Board, model: TargetModel, drafter: Any = None
) -> Timed:
    """One pass on the engine, with its per-unit rows when the engine gives them; a count
    past the simulator's range is an error naming the input that drove it there."""
    detail = getattr(engine, "run_pass_detail", None)
    try:
        if detail is not None:
            return detail(spec, board, model, drafter)
        return engine.run_pass(spec, board, model, drafter), []
    except PassOutOfRange as exc:
        field, value = pass_input(spec)
        raise InputError(
            field,
            value,
            f"a pass within the simulator's limits ({exc.limit}): {describe_pass(spec)} on "
            f"board {board.name} needs {exc.needs}; a shorter context, a faster board or a "
            "smaller model",
        ) from None


def pass_input(spec: PassSpec) -> tuple[str, int]:
    """The input field (and its value) that sizes a pass: the prompt of a prefill (its
    aligned length), else the context."""
    if spec.phase == "prefill":
        return "prompt_len", spec.tokens
    return "context", spec.context


def describe_pass(spec: PassSpec) -> str:
    """'this verify pass of 8 tokens at context 1024', as an error names a pass."""
    what = {"prefill": "prefill"}.get(spec.phase, "verify" if spec.kind == "target" else
                                       f"{spec.kind} draft")
    tokens = f"{spec.tokens} token{'s' * (spec.tokens != 1)}"
    return f"this {what} pass of {tokens} at context {spec.context}"


def _bound(
    engine: Engine, spec: PassSpec, board: Board, model: TargetModel, drafter: Any = None
) -> float:
    """The engine's lower bound of a pass in seconds (0.0 when it gives none)."""
    bound = getattr(engine, "lower_bound_s", None)
    return 0.0 if bound is None else bound(spec, board, model, drafter)


#: Worker side of `prefetch`: one engine per (class, options) per process, reused across
#: chunks (a cycle engine keeps its per-part memo of FlightLLM programs).
_WORKER_ENGINES: BoundedCache[Engine] = bounded_cache(
    "step.worker_engines", owner="fpgasim.step.service", lifetime="one pool worker",
    keys="engine class and options", budget=16,
    why="a pool worker reuses one engine across its chunks, so a cycle engine's part "
    "makespans serve every chunk")


def _time_chunk(task: tuple[EngineSpec, list[PassKey]]) -> list[Timed]:
    """Pool worker: a chunk of passes timed on this process's engine for the options."""
    spec, keys = task
    engine = _WORKER_ENGINES(spec, spec.build)
    return [time_pass(engine, *key) for key in keys]


class Planner(PassService):
    """A pass service that plans: it records every distinct pass asked (`plan`, in the order
    first asked) and answers with another, cheaper engine (the accounting), so a consumer
    run on it lists the passes it needs without timing them on the real engine."""

    def __init__(self, answer: Engine, plan_for: Any = None) -> None:
        super().__init__(answer)
        self._plan: dict[tuple, PassKey] = {}
        #: what the plan is for (a `Simulator`, a service, or a bare engine, given a service
        #: of its own here): a search bounded on it is bounded here too
        self._plan_for = plan_for if plan_for is None or hasattr(plan_for, "has_bounds") else (
            PassService(plan_for))

    @property
    def name(self) -> str:
        """Not the answering engine's name: consumers must not take it for the accounting."""
        return "planner"

    def timed(self, spec: PassSpec, board: Board, model: TargetModel, drafter: Any = None) -> Timed:
        """Record the pass in `plan` (first ask only), then time it on the answering engine."""
        self._plan.setdefault(self._key(spec, board, model, drafter), (spec, board, model, drafter))
        return super().timed(spec, board, model, drafter)

    def has_bounds(self, board: Board) -> bool:
        """Whether the engine the plan is for bounds the board's passes: a search bounded
        there (`solver.best_set`) asks the planner the same floors (from sizes alone)."""
        return self._plan_for is not None and self._plan_for.has_bounds(board)

    def bound_s(
        self, spec: PassSpec, board: Board, model: TargetModel, drafter: Any = None
    ) -> float:
        """No finite bound: a bounded search then times, and the plan lists, only the passes
        it times on any engine (T_v(1), the first x it visits, the sets it reports). Which
        other x it times depends on the times it finds, so the run times those itself
        (docs/method.md, "Finding the best x by bounds")."""
        return math.inf

    @property
    def plan(self) -> list[PassKey]:
        """The distinct passes asked so far."""
        return list(self._plan.values())
