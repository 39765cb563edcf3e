"""The tree of highest tokens/s on a board at one context, on the acceptance `solve` uses,
compared with AD: what `fpgasim tree optimal --objective throughput` answers.

One acceptance for trees and curves (docs/trees.md, "Throughput-optimal trees on a
board"): the rule of `analysis.acceptance` decides, as it does for `solve`.

- Where measured tables hold the (algorithm, model) pair (measured, interpolated or
  extrapolated at the context), the candidate trees are the rule's curve: one measured tree
  per x, with its measured AAT; the best of them is `solver.best_set`'s, so `solve` and
  `tree optimal` give the same tree, AAT and tokens/s.
- Elsewhere (or with `aat_source` embedded) the embedded positional model, under which
  every tree the drafter can build is searched (`tree_design.design_tree`).
- An acceptance given outright (a vector, a rate, a scaled model) is searched the same way
  and said to be given.

Either way the best tree is compared with AD (1 / T_v(1)), and the decision says when no
tree beats it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from fpgasim.acceptance.curves import AatCurve, acceptance_curves
from fpgasim.acceptance.measured import pair_rows
from fpgasim.acceptance.rule import embedded_source, tables_for
from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, TargetModel
from fpgasim.dataflow.draft_passes import accepted_from_aat
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.engine import Engine
from fpgasim.errors import InputError
from fpgasim.solving.decision import decision_of
from fpgasim.solving.solver import Timer, best_set
from fpgasim.solving.tree_design import EngineTreeCosts, check_size, design_tree
from fpgasim.step import simulator_of
from fpgasim.tree.embedded import embedded_model
from fpgasim.tree.positional import PositionalModel

#: Where the candidate trees come from, by acceptance basis.
MEASURED_BASES = ("measured", "interpolated", "extrapolated")


@dataclass(frozen=True)
class TreeSet:
    """One tree on the board: its x, the tree as drafted (`TokenTree.describe`: level
    widths, or EAGLE-3's depth/top-k), the tree itself where it is known node by node
    (None for a measured dynamic tree), expected AAT, floor(AAT), T_v, T_d, tokens/s."""

    verify_len: int
    drafted: str
    tree: TokenTree | None
    aat: float
    accepted: int
    verify_s: float
    draft_s: float
    tokens_per_s: float


@dataclass(frozen=True)
class BoardTree:
    """`board_tree`'s answer: the best tree and AD beside it, on which acceptance.

    best: the tree of highest tokens/s; aat_optimal: the tree of highest AAT of the same x
    (under a measured curve, its one tree at that x: the same tree); ad_tokens_per_s: AD's
    1 / T_v(1); speedup = best / AD; decision: use SD when a tree beats AD, else use AD.
    aat_basis / aat_note: the acceptance (measured, interpolated, extrapolated, embedded or
    given) and the line saying which; trees_from: the candidate trees; task: the measured
    task ('' for a model). search_states / search_trees: the branch-and-bound's counts (0
    over a measured curve); engine_passes: distinct passes costed; seconds: wall time."""

    best: TreeSet
    aat_optimal: TreeSet
    ad_tokens_per_s: float
    speedup: float
    decision: str
    aat_basis: str
    aat_note: str
    trees_from: str
    task: str
    search_states: int
    search_trees: int
    engine_passes: int
    seconds: float


def board_tree(
    engine: Engine,
    board: Board,
    model: TargetModel,
    algorithm: Algorithm,
    context: int,
    *,
    max_verify_len: int | None = None,
    given: PositionalModel | None = None,
    given_note: str = "",
    aat_dir: Path | str | None = None,
    aat_source: str | None = None,
    task: str | None = None,
) -> BoardTree:
    """The tree of highest tokens/s over every x <= max_verify_len (module docstring), AD
    beside it. `given`: an acceptance given outright (`given_note` says what it is);
    otherwise the acceptance rule with `aat_dir` (None: the shipped tables), `aat_source`
    (None: the rule; embedded: the model even where tables measure the pair; measured or
    fitted: the tables) and `task` (default: the rule's)."""
    engine = simulator_of(engine)  # one memo for every consumer below
    if context < 1:
        raise InputError("context", context, "a context length >= 1")
    if given is not None and (aat_source is not None or task is not None or aat_dir is not None):
        raise InputError("aat_source/task/aat_dir", aat_source or task or aat_dir,
                         "no table option with an acceptance given outright")
    check_size(algorithm, max_verify_len)
    t0 = time.perf_counter()
    timer = Timer(engine, board, model, algorithm)
    ad = 1.0 / timer.verify_s(1, context)
    if given is None and aat_source != "embedded":
        tables = tables_for(aat_dir)
        if not pair_rows(tables, algorithm, model.id).empty:
            return _over_curve(timer, ad, context, max_verify_len, aat_dir, aat_source, task,
                               t0)
        if aat_source is not None or task is not None:  # measured asked for: what tables hold
            acceptance_curves(algorithm, model.id, [context], aat_dir=aat_dir,
                              aat_source=aat_source, tasks=[task] if task else None)
    if given is not None:
        acceptance, basis, note = given, "given", given_note or "the acceptance given"
        trees_from = "every tree the drafter can build, searched under the acceptance given"
    else:
        acceptance = embedded_model(algorithm, context)
        why = "asked for" if aat_source == "embedded" else ""
        source = embedded_source(algorithm, model.id, context,
                                 None if aat_source == "embedded" else tables_for(aat_dir),
                                 why=why)
        basis, note = "embedded", source.note
        trees_from = "every tree the drafter can build, searched under the embedded model"
    costs = EngineTreeCosts(engine, board, model, algorithm, context)
    found = design_tree(acceptance, costs, max_verify_len)
    clock = costs.clock_hz()
    sets = []
    for design, tree in ((found.best, found.best_tree), (found.aat_optimal,
                                                          found.aat_optimal_tree)):
        drafted = (TokenTree.dynamic(design.draft_depth, design.draft_top_k)
                   if design.draft_depth is not None else tree)
        sets.append(TreeSet(design.verify_len, drafted.describe(), tree, design.aat,
                            design.accepted, design.verify_cycles / clock,
                            design.draft_cycles / clock, design.tokens_per_s))
    best = sets[0]
    return BoardTree(best, sets[1], ad, best.tokens_per_s / ad,
                     decision_of(best.tokens_per_s / ad), basis, note, trees_from, "",
                     found.search.states, found.search.leaves, found.engine_calls,
                     time.perf_counter() - t0)


def _over_curve(timer: Timer, ad: float, context: int, max_verify_len: int | None,
                aat_dir: Path | str | None, aat_source: str | None, task: str | None,
                t0: float) -> BoardTree:
    """The best tree of the acceptance rule's measured curve (one tree per x), by
    `best_set`: `solve`'s best set of that curve. Without `task`, the tasks `solve` solves
    by default are read as `solve` reads them (the file holding most of them preferred)
    and the first one's curve is taken: `solve`'s row of that task."""
    algorithm, model = timer.algorithm, timer.model
    tasks = [task] if task is not None else None
    curves = acceptance_curves(algorithm, model.id, [context], aat_dir=aat_dir,
                               aat_source=aat_source, tasks=tasks)
    curve = min(curves, key=lambda c: c.task)
    task = curve.task
    curve = _up_to(curve, max_verify_len)
    found = best_set(timer, curve)
    points = curve.points.set_index("verify_len")
    tree = points.loc[found.verify_len, "tree"]
    best = TreeSet(found.verify_len, found.tree, None if tree.is_dynamic else tree, found.aat,
                   accepted_from_aat(found.aat), found.verify_s, found.draft_s,
                   found.p_eff_tokens_per_s)
    method = curve.points["tree_source"].iloc[0]
    trees_from = (f"the acceptance rule's curve: one tree per x, {curve.basis} "
                  f"({task}; trees: {method})")
    return BoardTree(best, best, ad, found.speedup, found.decision, curve.basis, curve.note,
                     trees_from, task, 0, len(curve.points), _passes(timer),
                     time.perf_counter() - t0)


def _up_to(curve: AatCurve, max_verify_len: int | None) -> AatCurve:
    """The curve's points with x <= max_verify_len (refused when none is left)."""
    if max_verify_len is None:
        return curve
    kept = curve.points[curve.points["verify_len"] <= max_verify_len]
    if kept.empty:
        smallest = int(curve.points["verify_len"].min())
        raise InputError("size", max_verify_len,
                         f"at least {smallest}: the smallest x of the {curve.basis} curve")
    return replace(curve, points=kept.reset_index(drop=True))


def _passes(timer: Timer) -> int:
    """Distinct passes the engine's service holds (what this answer costed)."""
    return timer.engine.remembered
