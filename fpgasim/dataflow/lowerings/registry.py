"""The registry of lowerings: `board.lowering` -> how a pass becomes an `Executable`.

Two lowerings are registered: FlightLLM's compiler, generalised (`lowerings.flightllm`; the
study's tiling was retired, docs/flightllm-sd.md "One compiler"), and DFX's core and ring
(`lowerings.dfx`, docs/dfx.md). It returns an
`Executable` whose units carry roles, so the engines, the solver and `simulate` ask this
registry what a lowering is and does instead of testing its name. A lowering's buffer that
cannot hold its smallest tile (`BufferTooSmall`) becomes one `ConfigError` here, naming the
file and field.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from fpgasim.config.board import Board
from fpgasim.config.cluster import Cluster
from fpgasim.config.schema import Algorithm, DrafterSchema, TargetModel, model_source
from fpgasim.dataflow.buffers import BufferTooSmall
from fpgasim.dataflow.drafters import first_network
from fpgasim.dataflow.drafters.network import missing_blocks
from fpgasim.dataflow.instructions import Executable
from fpgasim.dataflow.lowerings import dfx, flightllm
from fpgasim.dataflow.lowerings.flightllm.flightllm_cluster import check_split
from fpgasim.dataflow.lowerings.flightllm.flightllm_cluster import (
    link_seconds as flightllm_link_seconds,
)
from fpgasim.dataflow.passes import PassSpec
from fpgasim.errors import ConfigError, InputError

__all__ = [
    "LOWERINGS", "Lowering", "check_cluster", "check_drafter", "link_seconds", "lower",
    "lower_bound", "lowering_of", "register_lowering",
]


@dataclass(frozen=True)
class Lowering:
    """One lowering style and what the rest of fpgasim may rely on about it.

    build              (spec, board, model, drafter) -> Executable
    reads_tree_mask    True if a pass's cost depends on the spec's `tree_parents` (else
                       passes that differ only in their tree cost the same)
    block_kinds        the kinds of drafter network blocks it lowers: the methods of its
                       block reader (`drafters.network.block_kinds`; None: every kind), so a
                       drafter is refused by what its network uses, not its kind
    build_bound        (spec, board, model, drafter) -> Executable or None: some of the
                       barrier parts of `build`'s executable (each at most as often), built
                       for a fraction of its cost; the pass takes at least their time
                       (docs/engines.md, "Lower bounds"). None: no bound (0 s)
    bound_shape        spec -> what `build_bound`'s parts depend on: passes of one shape
                       share their bound (None: the whole spec)
    floor_cycles       (spec, board, model) -> cycles or None: a cheaper, looser lower bound
                       of the same parts, from sizes alone (for the same passes as
                       build_bound; same shape, same floor)
    parallel           the `Cluster.parallel` kinds it splits a model over several cards by
    check_split        (cluster, model) -> None: refuses, naming --cards, a model it cannot
                       split over the cluster (None: no rule beyond `parallel`)
    link_seconds       (spec, board, model, engine) -> (seconds the pass waits on its
                       collectives, seconds one port is busy sending) on the board's cluster
                       (`engine` times a pipelined pass's schedule; None where none is)
    """

    name: str
    build: Callable[[PassSpec, Board, TargetModel, object], Executable]
    reads_tree_mask: bool = True
    block_kinds: frozenset[str] | None = None
    build_bound: Callable[[PassSpec, Board, TargetModel, object], Executable | None] | None = None
    bound_shape: Callable[[PassSpec], Hashable] | None = None
    floor_cycles: Callable[[PassSpec, Board, TargetModel], float | None] | None = None
    parallel: tuple[str, ...] = ("tp",)
    check_split: Callable[[Cluster, TargetModel], None] | None = None
    link_seconds: Callable[[PassSpec, Board, TargetModel, object],
                           tuple[float, float]] | None = None


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
    kinds = lowering_of(board).block_kinds
    if algorithm is None or kinds is None:
        return
    network = first_network(algorithm.drafter)
    missing = missing_blocks(kinds, (*network.blocks(), network.lm_head))
    if missing:
        raise InputError(
            "algorithm",
            algorithm.kind,
            f"a drafter without {', '.join(missing)} blocks on {board.name} (its "
            f"{board.lowering} lowering has no layers for them)",
        )


def check_cluster(board: Board, model: TargetModel) -> None:
    """Refuse, before any work, a cluster the board's lowering cannot split the model over:
    a --parallel kind it has no form for, or cards the model does not divide into (its own
    rule: FlightLLM's Megatron split, DFX's head-wise ring split). One card passes."""
    cluster = board.cluster
    if cluster.is_single:
        return
    entry = lowering_of(board)
    if cluster.parallel not in entry.parallel:
        raise InputError("parallel", cluster.parallel,
                         f"{' or '.join(entry.parallel)} on {board.name} (its {entry.name} "
                         "lowering splits a model no other way)")
    if entry.check_split is not None:
        entry.check_split(cluster, model)


def link_seconds(spec: PassSpec, board: Board, model: TargetModel,
                 engine: object = None) -> tuple[float, float]:
    """(seconds a pass waits on its collectives, seconds one port is busy sending) on the
    board's cluster, by its lowering's own collectives; (0, 0) on one card. `engine` times
    a pipelined pass's schedule where the lowering has one (FlightLLM's micro-batches)."""
    entry = lowering_of(board)
    if board.cluster.is_single or entry.link_seconds is None:
        return 0.0, 0.0
    with _named_fields(board, model):
        return entry.link_seconds(spec, board, model, engine)


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


def lower_floor_cycles(spec: PassSpec, board: Board, model: TargetModel) -> float | None:
    """A lower bound in cycles of `lower_bound`'s parts from sizes alone (None: none)."""
    floor = lowering_of(board).floor_cycles
    if floor is None:
        return None
    with _named_fields(board, model):
        return floor(spec, board, model)


@contextmanager
def _named_fields(board: Board, model: TargetModel) -> Iterator[None]:
    """A buffer too small for a lowering's smallest tile becomes a `ConfigError` naming the
    board's or the model's field."""
    try:
        yield
    except BufferTooSmall as exc:
        if exc.field.startswith("model."):  # the model's file, and the key it writes
            source, field = model_source(model), model.key_of(exc.field.removeprefix("model."))
        else:
            source, field = f"board {board.name}", exc.field
        raise ConfigError(source, field, exc.value, exc.allowed) from None


register_lowering(
    Lowering("flightllm", flightllm.lower, reads_tree_mask=False, block_kinds=flightllm.BLOCKS,
             build_bound=flightllm.lower_fixed, bound_shape=flightllm.fixed_shape,
             floor_cycles=flightllm.fixed_floor_cycles, parallel=("tp", "pp", "tp-pp"),
             check_split=check_split, link_seconds=flightllm_link_seconds)
)
register_lowering(Lowering("dfx", dfx.lower, reads_tree_mask=False, block_kinds=dfx.BLOCKS,
                           parallel=dfx.PARALLEL, check_split=dfx.check_split,
                           link_seconds=dfx.link_seconds))
