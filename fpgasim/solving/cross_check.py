"""The study's accounting against the simulator: why a step differs, and the one line where
they decide SD-or-AD differently. `solve`, `reproduce` and `explore` all take their
cross-checks and disagreement lines from here.

`point_reason` explains a point in one line (`reason_line`), computed from the simulator's
own per-unit accounting of the passes at the accounting's chosen point (T_v(x), the draft
passes and the AD pass T_v(1)): the extra cycles of each pass over the accounting's
max(load, store, compute) are attributed to

- MV rate:   MPE cycles in MV mode beyond the array rate (few tokens run as MV passes),
- padding:   MM-mode MPE cycles beyond the array rate (tokens padded, dims rounded),
- weight re-reads: LD cycles of weight bytes beyond the accounting's one stream per 128
  tokens: each MV row group (as many tokens as the design has MV lanes) streams every
  weight again, so a 1-lane design reads the weights x times for x tokens,
- SFU:       softmax/norm cycles on the SFU (the accounting does not charge it),
- loads / stores: LD or ST busy cycles beyond the accounting's,
- stalls:    pass cycles minus the busiest unit's busy cycles, i.e. time that unit waits:
  dependencies between ops (e.g. the MPE waiting for the SFU's softmax), pipeline fill
  and drain, bounded buffers (not separated further),

each counted only on the unit that sets the pass time (its busy cycles above the
accounting's pass time), plus the stalls.

`disagreement_line` is the one wording of a disagreement; `solve_checked` and
`solve_batches_checked` solve a workload with an engine and, for a simulator, with the
accounting beside it, and return the lines where they decide otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, DrafterSchema, TargetModel
from fpgasim.config.workload import Workload
from fpgasim.dataflow.draft_passes import accepted_from_aat
from fpgasim.dataflow.passes import PassSpec
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.engine import Engine, Timing, get_engine
from fpgasim.errors import InputError
from fpgasim.solving.solver import (
    DEFAULT_OPTIONS,
    BatchSolution,
    Solution,
    SolveOptions,
    solve,
    solve_batches,
)
from fpgasim.solving.tree_design import COSTED_TREE_METHODS
from fpgasim.step import Simulator, simulator_of, step_passes, verify_spec

#: Mechanisms named in reasons, in tie-break order.
MECHANISMS = ("MV rate", "padding", "weight re-reads", "SFU", "loads", "stores", "stalls")
#: The engine of the study's accounting, the side every simulator is checked against.
ACCOUNTING = "analytic"


def point_reason(
    account: Engine,
    sim: Engine,
    inputs: tuple[Board, TargetModel, Algorithm],
    *,
    x: int,
    tree_text: str,
    aat: float,
    context: int,
    x_sim: int | None,
    batch: int = 1,
) -> str:
    """`reason_line` of the accounting's point (x, tree, AAT) at one context: the step
    T_v(x) + T_d and the AD pass T_v(1) costed by both engines, the extra cycles attributed
    (for a batch of `batch` requests)."""
    board, model, algorithm = inputs
    tree = parse_tree(tree_text)
    accepted = accepted_from_aat(aat)
    step_a, step_s, by_mech = step_accounting(
        account, sim, board, model, algorithm, x, tree, accepted, context, batch
    )
    ad_a, ad_s, _ = pass_excess(account, sim, verify_spec(1, context, batch=batch), board,
                                model)
    return reason_line(
        x=x,
        x_sim=x_sim,
        step_ratio=step_s / step_a,
        ad_ratio=ad_s / ad_a,
        by_mech=by_mech,
        clock_hz=board.clock_hz,
    )


def disagreement_line(
    *,
    decision: str,
    speedup: float,
    x: int | None,
    decision_sim: str,
    speedup_sim: float,
    x_sim: int | None,
    sim_name: str,
    reason: str,
) -> str:
    """One line where the accounting and the simulator decide SD-or-AD differently, e.g.
    'the accounting says use SD (x=4, 2.07x), the simulator (event) use AD (x=2, 0.878x):
    x=4 step 3.59x: MV rate +138 ms; AD 1.07x; sim x=2'."""

    def side(d: str, sp: float, xx: int | None) -> str:
        """One side's verdict, e.g. 'use SD (x=4, 2.07x)'."""
        at = f"x={xx}, " if xx is not None else ""
        return f"{d} ({at}{sp:.3g}x)"

    line = (
        f"the accounting says {side(decision, speedup, x)}, the simulator ({sim_name}) "
        f"{side(decision_sim, speedup_sim, x_sim)}"
    )
    return f"{line}: {reason}" if reason else line


def reason_line(
    *,
    x: int,
    x_sim: int | None,
    step_ratio: float,
    ad_ratio: float,
    by_mech: dict[str, float],
    clock_hz: float,
) -> str:
    """'x=4 step 3.59x: MV rate +138 ms, stalls +4.6 ms; AD 1.07x; sim x=2'.

    The step (T_v(x) + T_d) and AD (T_v(1)) time ratios simulator / accounting at the
    accounting's x, the two largest mechanisms (extra ms per step), the simulator's own x.
    """
    ranked = sorted(
        ((c, m) for m, c in by_mech.items() if c > 0),
        key=lambda cm: (-cm[0], MECHANISMS.index(cm[1])),
    )
    parts = ", ".join(f"{m} +{_ms(c / clock_hz * 1e3)} ms" for c, m in ranked[:2])
    line = f"x={x} step {step_ratio:.2f}x" + (f": {parts}" if parts else "")
    line += f"; AD {ad_ratio:.2f}x"
    if x_sim is not None and x_sim != x:
        line += f"; sim x={x_sim}"
    return line


def _ms(value: float) -> str:
    """Milliseconds: whole above 10, one decimal below ('138', '4.6')."""
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"


def step_accounting(
    account: Engine,
    sim: Engine,
    board: Board,
    model: TargetModel,
    algorithm: Algorithm,
    x: int,
    tree: TokenTree | None,
    accepted: int,
    context: int,
    batch: int = 1,
) -> tuple[int, int, dict[str, float]]:
    """(accounting cycles, simulator cycles, extra cycles per mechanism) of T_v(x) + T_d."""
    step = step_passes(x, context, algorithm, tree, accepted, batch)
    specs = [(step.verify, None)] + [(p, algorithm.drafter) for p in step.drafts]
    total_a = total_s = 0
    by_mech = dict.fromkeys(MECHANISMS, 0.0)
    for p, drafter in specs:
        a, s, mech = pass_excess(account, sim, p, board, model, drafter)
        total_a += a
        total_s += s
        for k, v in mech.items():
            by_mech[k] += v
    return total_a, total_s, by_mech


def pass_excess(
    account: Engine,
    sim: Engine,
    spec: PassSpec,
    board: Board,
    model: TargetModel,
    drafter: DrafterSchema | None = None,
) -> tuple[int, int, dict[str, float]]:
    """(accounting cycles, simulator cycles, extra cycles per mechanism) of one pass."""
    a = simulator_of(account).run_pass(spec, board, model, drafter)
    s = simulator_of(sim).run_pass(spec, board, model, drafter)
    return a.cycles, s.cycles / s.duration_divisor, attribute(a, s, board.mm_macs_per_cycle)


def attribute(a: Timing, s: Timing, macs_per_cycle: int) -> dict[str, float]:
    """Extra cycles of the simulator's pass `s` over the accounting's `a`, per mechanism.

    The accounting's cycles are the whole board's (every pipeline's arrays and channels);
    the simulator's are one pipeline's, each duration then divided by the board's
    `duration_divisor`, so they are compared after that division. `macs_per_cycle` is one
    pipeline's MM array: what MV-mode or padded MM work would take at the array's rate."""
    d = s.duration_divisor
    busy = {
        "MPE": s.compute_cycles / d,
        "SFU": s.sfu_cycles / d,
        "LD": s.ld_cycles / d,
        "ST": s.st_cycles / d,
    }
    crit = max(busy, key=busy.get)
    out = dict.fromkeys(MECHANISMS, 0.0)
    out["stalls"] = float(max(0, s.cycles / d - busy[crit]))
    over = float(busy[crit] - a.cycles)  # the critical unit's time above the accounting's
    if over <= 0:
        return out
    if crit == "MPE":
        mv_extra = max(0.0, s.mv_cycles - s.mv_macs / macs_per_cycle) / d
        mm_extra = max(
            0.0, (s.compute_cycles - s.mv_cycles) - (s.macs - s.mv_macs) / macs_per_cycle
        ) / d
        extra = mv_extra + mm_extra
        if extra > 0:
            share = min(1.0, over / extra)
            out["MV rate"] = mv_extra * share
            out["padding"] = mm_extra * share
    elif crit == "LD":
        # LD time splits by bytes: the weight bytes the accounting does not read (streams
        # repeated per MV row group) against everything else loaded
        loaded = s.weight_bytes + s.act_load_bytes
        reread = max(0, s.weight_bytes - a.weight_bytes) / loaded if loaded else 0.0
        out["weight re-reads"] = min(over, busy["LD"] * reread)
        out["loads"] = over - out["weight re-reads"]
    else:
        out[{"SFU": "SFU", "ST": "stores"}[crit]] = over
    return out


def parse_tree(text: str) -> TokenTree | None:
    """`TokenTree.describe()` back to a TokenTree ('' -> None)."""
    text = text.strip()
    if not text:
        return None
    if text.startswith("depth="):
        fields = dict(part.split("=") for part in text.split())
        return TokenTree.dynamic(int(fields["depth"]), int(fields["top_k"]))
    return TokenTree.from_shape(tuple(int(w) for w in text.split()))


@dataclass(frozen=True)
class CheckedSolution:
    """A solved workload and, under a simulator, one line per (task, context, batch) where
    the study's accounting decides SD-or-AD otherwise (empty under the accounting)."""

    solution: Solution
    disagreements: list[str]
    #: what was solved
    workload: Workload


@dataclass(frozen=True)
class CheckedBatches:
    """`solve_batches` under an engine; under a simulator its summary also carries the
    accounting's `decision_accounting` and `speedup_accounting` per row, and the lines where
    the two decide SD-or-AD otherwise."""

    result: BatchSolution
    summary: pd.DataFrame
    disagreements: list[str]
    #: what was solved
    workload: Workload


def solve_checked(
    workload: Workload,
    options: SolveOptions = DEFAULT_OPTIONS,
    *,
    engine: str,
) -> CheckedSolution:
    """`solver.solve` of a one-board, one-algorithm, one-batch workload under `engine` and,
    for a simulator, the accounting's cross-check (`solution_disagreements`). One engine
    instance serves the solve and the reasons, so no pass is timed twice."""
    board, model, algorithm = workload.board, workload.model, workload.algorithm
    if len(workload.batches) != 1:
        raise InputError("batch", len(workload.batches), "one batch (solve_batches_checked: "
                         "several)")
    batch, contexts = workload.batches[0], workload.contexts
    sim = Simulator(get_engine(engine))
    solution = solve(board, model, algorithm, contexts, options, engine=sim, batch=batch)
    lines = solution_disagreements(solution, (board, model, algorithm), contexts, sim, options,
                                   batch=batch)
    return CheckedSolution(solution, lines, workload)


def solution_disagreements(
    solution: Solution,
    workload: tuple[Board, TargetModel, Algorithm],
    contexts: Sequence[int],
    engine: str | Engine,
    options: SolveOptions = DEFAULT_OPTIONS,
    *,
    batch: int = 1,
) -> list[str]:
    """With a simulator engine: solve the same inputs with the study's accounting and return
    one line per (task, context) where the two decide SD-or-AD differently, with the
    simulator's reason at the accounting's point (`point_reason`, on `engine` itself when
    it is an instance, whose remembered passes it reuses)."""
    board, model, algorithm = workload
    sim = simulator_of(get_engine(engine) if isinstance(engine, str) else engine)
    if sim.name == ACCOUNTING or model.moe is not None or not board.cluster.is_single:
        # the accounting has no MoE and models one card
        return []
    accounting = Simulator(get_engine(ACCOUNTING))
    # the same curves, unless their trees were designed on the simulator's costs
    same = None if options.curve_method in COSTED_TREE_METHODS else list(solution.aat_curves)
    account = solve(board, model, algorithm, contexts, options, engine=accounting, batch=batch,
                    curves=same)
    ours = solution.summary.set_index(["task", "context", "batch"])
    multi = solution.summary["task"].nunique() > 1
    batched = solution.summary["batch"].nunique() > 1
    lines = []
    for r in account.summary.to_dict("records"):
        s = ours.loc[(r["task"], r["context"], r["batch"])]
        if s["decision"] == r["decision"]:
            continue
        reason = point_reason(
            accounting,
            sim,
            workload,
            x=int(r["best_verify_len"]),
            tree_text=str(r["best_tree"] or ""),
            aat=float(r["best_aat"]),
            context=int(r["context"]),
            x_sim=int(s["best_verify_len"]),
            batch=int(r["batch"]),
        )
        line = disagreement_line(
            decision=r["decision"],
            speedup=float(r["best_speedup"]),
            x=int(r["best_verify_len"]),
            decision_sim=s["decision"],
            speedup_sim=float(s["best_speedup"]),
            x_sim=int(s["best_verify_len"]),
            sim_name=sim.name,
            reason=reason,
        )
        label = f"{r['task']}, L={r['context']}" if multi else f"L={r['context']}"
        if batched:
            label += f", B={r['batch']}"
        lines.append(f"  {label}: SD-or-AD differs: {line}")
    return lines


def solve_batches_checked(
    workload: Workload,
    options: SolveOptions = DEFAULT_OPTIONS,
    *,
    engine: str,
) -> CheckedBatches:
    """`solver.solve_batches` under `engine` and, for a simulator, under the accounting
    beside it: its decision and speedup per row, and the rows where the two differ."""
    board, model, algorithm = workload.board, workload.model, workload.algorithm
    contexts, batches = workload.contexts, workload.batches
    result = solve_batches(board, model, algorithm, contexts, batches, options, engine=engine)
    summary = result.summary.copy()
    if engine == ACCOUNTING or not board.cluster.is_single:  # the accounting: one card
        return CheckedBatches(result, summary, [], workload)
    account = solve_batches(board, model, algorithm, contexts, batches, options,
                            engine=ACCOUNTING)
    acc = account.summary.set_index(["task", "context", "batch"])
    keys = list(zip(summary["task"], summary["context"], summary["batch"], strict=True))
    summary["decision_accounting"] = [acc.loc[k, "decision"] for k in keys]
    summary["speedup_accounting"] = [float(acc.loc[k, "best_speedup"]) for k in keys]
    return CheckedBatches(result, summary, batch_disagreements(summary), workload)


def batch_disagreements(summary: pd.DataFrame) -> list[str]:
    """One line per (task, context, batch) of a checked batch summary where the accounting
    and the simulator decide SD-or-AD differently (`disagreement_line`, no reason)."""
    lines = []
    multi = summary["task"].nunique() > 1
    for s in summary.to_dict("records"):
        if s["decision"] == s["decision_accounting"]:
            continue
        label = f"{s['task']}, L={s['context']}" if multi else f"L={s['context']}"
        line = disagreement_line(
            decision=s["decision_accounting"],
            speedup=float(s["speedup_accounting"]),
            x=None,
            decision_sim=s["decision"],
            speedup_sim=float(s["best_speedup"]),
            x_sim=None,
            sim_name=s["engine"],
            reason="",
        )
        lines.append(f"  {label}, B={s['batch']}: SD-or-AD differs: {line}")
    return lines


__all__ = [
    "ACCOUNTING",
    "MECHANISMS",
    "CheckedBatches",
    "CheckedSolution",
    "attribute",
    "batch_disagreements",
    "disagreement_line",
    "parse_tree",
    "point_reason",
    "reason_line",
    "solution_disagreements",
    "solve_batches_checked",
    "solve_checked",
]
