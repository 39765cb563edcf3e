"""The registry of lowerings: `board.lowering` -> how a pass becomes an `Executable`.

Two lowerings are peers here: the study's tiling (`lowerings.study`) and FlightLLM's
compiler (`lowerings.flightllm`). Both return an `Executable` whose units
carry roles, so the engines, the solver and `simulate` ask this registry what a lowering
is and does instead of testing its name. A lowering's buffer that cannot hold its smallest
tile (`BufferTooSmall`) becomes one `ConfigError` here, naming the file and field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from fpgasim.config.schema import Algorithm, Board, DrafterSchema, TargetModel
from fpgasim.dataflow.buffers import BufferTooSmall
from fpgasim.dataflow.instructions import Executable
from fpgasim.dataflow.lowerings import flightllm, study
from fpgasim.dataflow.passes import PassSpec
from fpgasim.errors import ConfigError, InputError

__all__ = [
    "LOWERINGS", "Lowering", "check_drafter", "lower", "lower_bound", "lowering_of",
    "register_lowering",
]


@dataclass(frozen=True)
class Lowering:
    """One lowering style and what the rest of fpgasim may rely on about it.

    build              (spec, board, model, drafter) -> Executable
    study_accounting   True if the study's closed-form accounting (the analytic engine, the
                       solver's alpha bytes) describes the passes this lowering builds
    causal_prefill     True if a prefill pass carries its causal mask as the spec's
                       `tree_parents` (else the lowering applies its own prefill masks)
    reads_tree_mask    True if a pass's cost depends on the spec's `tree_parents` (else
                       passes that differ only in their tree cost the same)
    drafters           () -> the registered drafter kinds it can lower (None: every drafter)
    model_precision    True if weights and KV cache sit off chip at the model's stored
                       precision (its `flightllm:` block) instead of the board's, so that
                       tokens/s rows carry the memory they need (memory_bytes, fits_memory)
    build_bound        (spec, board, model, drafter) -> Executable or None: some of the
                       barrier parts of `build`'s executable (each at most as often), built
                       for a fraction of its cost; the pass takes at least their time
                       (docs/engines.md, "Lower bounds"). None: no bound (0 s)
    """

    name: str
    build: Callable[[PassSpec, Board, TargetModel, object], Executable]
    study_accounting: bool
    causal_prefill: bool
    reads_tree_mask: bool = True
    drafters: Callable[[], tuple[str, ...]] | None = None
    model_precision: bool = False
    build_bound: Callable[[PassSpec, Board, TargetModel, object], Executable | None] | None = None


LOWERINGS: dict[str, Lowering] = {}


def register_lowering(entry: Lowering) -> None:
    """Make a lowering available to boards whose `lowering` field names it."""
    LOWERINGS[entry.name] = entry


def lowering_of(board: Board) -> Lowering:
    """The lowering the board names (the schema admits only registered names)."""
    entry = LOWERINGS.get(board.lowering)
    if entry is None:
        raise ConfigError(f"board {board.name}", "lowering", board.lowering,
                          f"one of {', '.join(sorted(LOWERINGS))}")
    return entry


def check_drafter(board: Board, algorithm: Algorithm | None) -> None:
    """Refuse, before any work, an algorithm whose drafter the board's lowering cannot lower.

    Commands call it right after loading their inputs, so an unsupported pair fails in
    milliseconds instead of at the first draft pass, after every other point was timed.
    """
    listed = lowering_of(board).drafters
    kinds = None if listed is None else listed()
    if algorithm is None or kinds is None or algorithm.kind in kinds:
        return
    raise InputError(
        "algorithm",
        algorithm.kind,
        f"{' or '.join(kinds)} on {board.name} (the drafters its {board.lowering} "
        "lowering models)",
    )


def lower(
    spec: PassSpec, board: Board, model: TargetModel, drafter: DrafterSchema | None = None
) -> Executable:
    """The executable form of one pass on the board's lowering."""
    with _named_fields(board, model):
        return lowering_of(board).build(spec, board, model, drafter)


def lower_bound(
    spec: PassSpec, board: Board, model: TargetModel, drafter: DrafterSchema | None = None
) -> Executable | None:
    """Some barrier parts of `lower(...)`'s executable, whose time the pass takes at least
    (None when the board's lowering has no such bound)."""
    build = lowering_of(board).build_bound
    if build is None:
        return None
    with _named_fields(board, model):
        return build(spec, board, model, drafter)


@contextmanager
def _named_fields(board: Board, model: TargetModel) -> Iterator[None]:
    """A buffer too small for a lowering's smallest tile becomes a `ConfigError` naming the
    board's or the model's field."""
    try:
        yield
    except BufferTooSmall as exc:
        source = f"model {model.id}" if exc.field.startswith("model.") else f"board {board.name}"
        raise ConfigError(source, exc.field.removeprefix("model."), exc.value,
                          exc.allowed) from None


def _study(spec: PassSpec, board: Board, model: TargetModel, drafter=None) -> Executable:
    return Executable.of_program(study.lower(spec, board, model, drafter))


register_lowering(Lowering("study", _study, study_accounting=True, causal_prefill=True))
register_lowering(
    Lowering("flightllm", flightllm.lower, study_accounting=False, causal_prefill=False,
             reads_tree_mask=False, drafters=flightllm.drafter_kinds, model_precision=True,
             build_bound=flightllm.lower_fixed)
)
