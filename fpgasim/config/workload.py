"""The workload a study runs, as one typed request: boards, a target model, algorithms,
contexts and batches (the CLI builds it once from its flags and passes it down)."""

from __future__ import annotations

from dataclasses import dataclass

from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, TargetModel
from fpgasim.errors import InputError


@dataclass(frozen=True)
class Workload:
    """Boards x one target model x algorithms (empty: plain decoding) at each context and
    batch. Sequences become tuples; contexts and batches sorted and unique."""

    boards: tuple[Board, ...]
    model: TargetModel
    algorithms: tuple[Algorithm, ...] = ()
    contexts: tuple[int, ...] = ()
    batches: tuple[int, ...] = (1,)

    def __post_init__(self) -> None:
        """Refuse an empty board list, a context below 1 or no batch, in one line each."""
        object.__setattr__(self, "boards", tuple(self.boards))
        object.__setattr__(self, "algorithms", tuple(self.algorithms))
        contexts = tuple(sorted({int(c) for c in self.contexts}))
        if not contexts or contexts[0] < 1:
            raise InputError("contexts", list(contexts), "one or more context lengths >= 1")
        batches = tuple(sorted({int(b) for b in self.batches}))
        if not batches or batches[0] < 1:
            raise InputError("batch", list(batches), "one or more batch sizes >= 1")
        if not self.boards:
            raise InputError("board", "", "one or more boards")
        object.__setattr__(self, "contexts", contexts)
        object.__setattr__(self, "batches", batches)

    @property
    def board(self) -> Board:
        """The one board of a single-board workload."""
        if len(self.boards) != 1:
            raise InputError("board", len(self.boards), "one board here")
        return self.boards[0]

    @property
    def algorithm(self) -> Algorithm:
        """The one algorithm of a single-algorithm workload."""
        if len(self.algorithms) != 1:
            raise InputError("algorithm", len(self.algorithms), "one algorithm here")
        return self.algorithms[0]


__all__ = ["Workload"]
