"""One speculative-decoding step, planned and timed in one place: the verify pass (with
the tree's mask) and the draft passes of a point (this module), and the pass service that
times them on an engine, remembers each pass and batches missing ones on an executor
(`service.py`, `executor.py`), both owned by one `Simulator` per run (`simulator.py`).

Every consumer (simulate, the solver, tree design, the side-by-side tables, generate,
`--trace` and `--dump-graph`) asks here for the passes it costs and for their timing, so a
traced or dumped pass is the pass that was timed and no pass is timed twice. `PassSpec`s
of target passes are built only here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, TargetModel
from fpgasim.dataflow.drafters import draft_passes
from fpgasim.dataflow.passes import PassSpec
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.engine import Engine
from fpgasim.engine.timing import Timing
from fpgasim.step.executor import Executor
from fpgasim.step.service import (
    PassKey,
    PassService,
    Planner,
    architecture,
    costed_spec,
    pass_key,
    pass_keys,
)
from fpgasim.step.simulator import Simulator, engine_of, simulator_of


@dataclass(frozen=True)
class StepPasses:
    """The passes of one step: the target's verify pass, then the drafter's passes."""

    verify: PassSpec
    drafts: tuple[PassSpec, ...] = ()


def tree_parents(tree: TokenTree | None, verify_len: int) -> tuple[int, ...] | None:
    """Parent array of the verified tree (root + draft nodes) when it is known before
    drafting (a static tree) and holds exactly verify_len nodes; None (dense attention)
    otherwise: a dynamic drafter's tree is known only after its reranking."""
    if tree is None or tree.is_dynamic or tree.size != verify_len:
        return None
    return tree.parents


def target_spec(
    tokens: int, context: int, parents: tuple[int, ...] | None = None, prefill: bool = False,
    batch: int = 1,
) -> PassSpec:
    """A target pass over `tokens` tokens at `context` with the mask `parents` (None: dense),
    for each of `batch` requests (docs/batching.md)."""
    phase = "prefill" if prefill else "decode"
    return PassSpec("target", tokens, context, tree_parents=parents, phase=phase, batch=batch)


def verify_spec(verify_len: int, context: int, tree: TokenTree | None = None,
                batch: int = 1) -> PassSpec:
    """T_v's pass: the target over `verify_len` tree tokens at `context`, with the tree's
    mask when its shape is known (engines that model it skip masked-out tiles), for each
    of `batch` requests."""
    return target_spec(verify_len, context, tree_parents(tree, verify_len), batch=batch)


def step_passes(
    verify_len: int,
    context: int,
    algorithm: Algorithm | None = None,
    tree: TokenTree | None = None,
    accepted: int = 1,
    batch: int = 1,
) -> StepPasses:
    """The passes of one step: verify pass, and with an algorithm and a tree its draft passes;
    a batch's requests each draft and verify the same tree (docs/batching.md)."""
    drafts: tuple[PassSpec, ...] = ()
    if algorithm is not None and tree is not None:
        drafts = tuple(replace(p, batch=batch) if batch > 1 else p
                       for p in draft_passes(algorithm, tree, accepted, context))
    return StepPasses(verify_spec(verify_len, context, tree, batch), drafts)


def run_passes(
    engine: Engine,
    specs: tuple[PassSpec, ...] | list[PassSpec],
    board: Board,
    model: TargetModel,
    algorithm: Algorithm | None = None,
) -> Timing:
    """The passes in sequence on `engine`'s simulator (draft passes run with the
    algorithm's drafter)."""
    return simulator_of(engine).run_passes(specs, board, model, algorithm)


__all__ = [
    "Executor",
    "PassKey",
    "PassService",
    "Planner",
    "StepPasses",
    "architecture",
    "costed_spec",
    "pass_key",
    "pass_keys",
    "run_passes",
    "Simulator",
    "engine_of",
    "simulator_of",
    "step_passes",
    "target_spec",
    "tree_parents",
    "verify_spec",
]
