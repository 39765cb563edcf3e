"""Grids of (board, model, algorithm, context, x) points -> a tidy pandas DataFrame."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, TargetModel, config_source
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.engine import Engine
from fpgasim.errors import InputError
from fpgasim.simulate import Point, simulate_point
from fpgasim.tree.draft_trees import tree_for_verify_len
from fpgasim.tree.optimal import MAX_SIZE

#: Column order of sweep results: inputs first, then verify timing, then draft timing.
SWEEP_COLUMNS = [
    "board",
    "fpga",
    "design",
    "model",
    "algorithm",
    "context",
    "verify_len",
    "batch",
    "engine",
    "tree",
    "accepted",
    "verify_cycles",
    "verify_s",
    "verify_tokens_per_s",
    "ld_cycles",
    "st_cycles",
    "compute_cycles",
    "sfu_cycles",
    "bound",
    "weight_bytes",
    "act_load_bytes",
    "act_store_bytes",
    "kv_bytes",
    "memory_bytes",
    "fits_memory",
    "dsps_used",
    "fits_dsps",
    "draft_cycles",
    "draft_s",
    "draft_passes",
    "draft_bound",
    "step_s",
]


#: The most points one sweep or explore may hold: each point's row (about 2 KB as a dict,
#: then in the DataFrame) stays in memory until the output is written, about 2 GB at most.
MAX_POINTS = 1_000_000


def check_points(count: int, field: str, value: object, shape: str) -> None:
    """Refuse, before any work, a grid of more than `MAX_POINTS` points; `shape` says how
    its count multiplies ("1 board x 100000 contexts x 65536 x")."""
    if count > MAX_POINTS:
        raise InputError(field, value, f"a grid of at most {MAX_POINTS} points; {shape} = "
                         f"{count} points")


def check_grid(boards: int, contexts: int, verify_lens: int, batches: int) -> None:
    """Refuse a sweep's grid past `MAX_POINTS` from its counts alone: callers check it
    before they build the boards (a variation of 4096 boards took a minute to build before
    the grid's refusal)."""
    check_points(boards * contexts * verify_lens * batches, "contexts/verify_lens/batch",
                 f"{contexts} contexts, {verify_lens} x",
                 f"{boards} board(s) x {contexts} contexts x {verify_lens} x"
                 + (f" x {batches} batches" if batches > 1 else ""))


@dataclass(frozen=True)
class Grid:
    """The cross product a sweep covers."""

    boards: Sequence[Board]
    model: TargetModel
    contexts: Sequence[int]
    verify_lens: Sequence[int]
    algorithm: Algorithm | None = None
    tree_method: str = "width"
    accepted: int = 1
    tree_table: dict[int, TokenTree] | None = None
    batches: Sequence[int] = (1,)

    def __post_init__(self) -> None:
        check_distinct_names(self.boards)
        check_grid(len(self.boards), len(self.contexts), len(self.verify_lens),
                   len(self.batches))
        if self.algorithm is not None and self.tree_method == "optimal":
            # optimal trees stop at the embedded model's largest tree: say so before any tree
            # is built (building every smaller one first took minutes)
            over = [v for v in self.verify_lens if v > MAX_SIZE and v not in
                    (self.tree_table or {})]
            if over:
                raise InputError("verify_lens", over[0], f"between 1 and {MAX_SIZE}")

    def largest_tree(self) -> int:
        """Tokens of the largest verify pass under a tree mask (the largest x >= 2 with an
        algorithm; 0 without one)."""
        if self.algorithm is None:
            return 0
        return max((x for x in self.verify_lens if x >= 2), default=0)

    def points(self) -> list[Point]:
        """Every board x context x verify length x batch, boards major; x >= 2 carries its
        tree (the tree table's, else the tree method's)."""
        out = []
        for board in self.boards:
            for context in self.contexts:
                for x in self.verify_lens:
                    tree = None
                    if self.algorithm is not None and x >= 2:
                        try:
                            tree = (self.tree_table or {}).get(x) or tree_for_verify_len(
                                self.algorithm, x, self.tree_method
                            )
                        except InputError as exc:  # a sweep's x are its --verify-lens
                            if exc.field != "verify_len":
                                raise
                            raise InputError("verify_lens", exc.value, exc.allowed) from None
                    out += [Point(board, self.model, context, x,
                                  self.algorithm if tree else None, tree, self.accepted, batch)
                            for batch in self.batches]
        return out


def check_distinct_names(boards: Sequence[Board], field: str = "board") -> None:
    """Refuse two boards of one `name:`: their rows would carry the same label (a sweep's
    output, its summary line and the cache's statistics could not tell them apart)."""
    seen: dict[str, Board] = {}
    for board in boards:
        first = seen.setdefault(board.name, board)
        if first is not board and first != board:
            raise InputError(
                field,
                ",".join(b.name for b in boards),
                f"boards with distinct names: {config_source(first)} and "
                f"{config_source(board)} are both named {board.name!r}; rename one (`name:`)",
            )


def finish_row(row: dict, algorithm: Algorithm | None) -> dict:
    """A copy of a `simulate_point` row labelled with the grid's algorithm (x=1: no draft)."""
    row = dict(row)
    if algorithm is not None:
        row["algorithm"] = algorithm.id
        row.setdefault("draft_cycles", 0)
        row.setdefault("draft_s", 0.0)
        row.setdefault("draft_passes", 0)
        row.setdefault("draft_bound", "")
        row.setdefault("step_s", row["verify_s"])
    return row


def rows_to_frame(rows: Sequence[dict]) -> pd.DataFrame:
    """Sweep rows -> a DataFrame with the columns of `SWEEP_COLUMNS` that are present."""
    frame = pd.DataFrame(list(rows))
    return frame[[c for c in SWEEP_COLUMNS if c in frame.columns]]


def run_grid(
    engine: Engine, grid: Grid, on_point: Callable[[], None] | None = None
) -> pd.DataFrame:
    """Simulate every point of the grid in this process; one row per point (`SWEEP_COLUMNS`).

    `fpgasim.sweep.run_sweep` does the same with an executor and the result cache.
    """
    rows = []
    for point in grid.points():
        rows.append(finish_row(simulate_point(engine, point), grid.algorithm))
        if on_point is not None:
            on_point()
    return rows_to_frame(rows)
