"""Design spaces: boards varied over any field of their FPGA or design file, solved per drafter
and context, with what each design costs and delivers.

`explore(base, variation, model, algorithms, contexts, ...)` fits the base pair again at every
combination of the variation (sweep/space.py) and costs every board with the simulator at AD
(x = 1) and at every x of each drafter's AAT curve, through the sweep runner (executors,
result cache, resume, progress); the best x maximises P_eff = AAT / (T_v + T_d) as `solve`
does. Per (board, drafter, context) the summary says what the board delivers: the faster of
SD at its best x and AD (`tokens_per_s`), with the decision, the DSPs and whether the board
fits its part; the Pareto front of delivered tokens/s against DSPs; and beside it the study's
accounting's decision where the two part (`disagreements`). docs/cli.md, "explore".
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from fpgasim.acceptance.curves import AatCurve, acceptance_curves, max_verify_len
from fpgasim.acceptance.measured import pair_rows
from fpgasim.acceptance.rule import tables_for
from fpgasim.config.board import Board
from fpgasim.config.board_loader import BoardBase
from fpgasim.config.schema import Algorithm, TargetModel
from fpgasim.dataflow.draft_passes import accepted_from_aat
from fpgasim.dataflow.lowerings.registry import check_cluster
from fpgasim.errors import InputError
from fpgasim.simulate import Point
from fpgasim.solving.cross_check import disagreement_line
from fpgasim.solving.decision import USE_SD, decision_of, rests_on
from fpgasim.solving.solver import energy_verdict
from fpgasim.sweep.cache import SweepCache
from fpgasim.sweep.executors import Executor
from fpgasim.sweep.grid import check_points
from fpgasim.sweep.runner import SweepProgress, SweepStats, run_points
from fpgasim.sweep.space import Variation, build_variant
from fpgasim.validation import validation_of

#: fields whose growth adds compute (the other side of "one step up the diagonal")
COMPUTE_FIELDS = ("fpga.dsps", "design.mm_cols", "design.mm_rows", "design.mv_lanes",
                  "design.mv_macs_per_lane", "design.clock_mhz")
BANDWIDTH_FIELD = "fpga.memory.bandwidth_gb_s"
#: varied cluster fields whose values are names, not sizes (no step up between them)
NAMED_CLUSTER_FIELDS = ("cluster.parallel", "cluster.topology", "cluster.link_layer")

#: Columns of the per-(board, drafter, batch, context) summary, inputs first (the varied fields
#: follow `design`, one column each, named by their path).
RESULT_COLUMNS = [
    "changes",
    "pipelines",
    "mm_macs_per_cycle",
    "mv_macs_per_cycle",
    "dsps_used",
    "dsps_available",
    "fits_dsps",
    "model",
    "algorithm",
    "batch",
    "context",
    "engine",
    "aat_basis",
    "ad_tokens_per_s",
    "decision",
    "best_verify_len",
    "best_tree",
    "best_aat",
    "best_sd_tokens_per_s",
    "speedup",
    "tokens_per_s",
    "batch_tokens_per_s",
    "fits_memory",
    "fits",
    "decision_accounting",
    "speedup_accounting",
    "pareto",
    "ad_tokens_per_j",
    "best_sd_tokens_per_j",
    "tokens_per_j",
    "energy_best_verify_len",
    "energy_best_tokens_per_j",
    "energy_decision",
    "pareto_energy",
    "validation",
]


@dataclass(frozen=True)
class ExploreResult:
    """summary: one row per (board, drafter, context); points: one row per simulated point."""

    summary: pd.DataFrame
    points: pd.DataFrame
    stats: SweepStats
    axes: tuple[str, ...]


def explore_curves(
    algorithm: Algorithm,
    model: TargetModel,
    contexts: Sequence[int],
    aat_dir: str | None = None,
    task: str | None = None,
) -> list[AatCurve]:
    """The AAT curve (x -> AAT, tree) per context by the acceptance rule (measured tables,
    the shipped ones unless `aat_dir`, where they hold; else the embedded model)."""
    return acceptance_curves(algorithm, model.id, contexts, aat_dir=aat_dir,
                             tasks=[task] if task else None)


#: what one decision of the space is about: a board, a drafter, a batch size and a context
POINT_GROUP = ["board", "algorithm", "batch", "context"]
#: the same without the board: the groups the space's boards are compared in
SPACE_GROUP = ["algorithm", "batch", "context"]


def explore_points(
    boards: Sequence[Board], model: TargetModel, algorithm: Algorithm,
    curves: Sequence[AatCurve], batches: Sequence[int] = (1,),
) -> list[Point]:
    """For every board, batch and curve: the AD point (x = 1) then one SD point per x of the
    curve."""
    points = []
    for board in boards:
        for batch in batches:
            for curve in curves:
                points.append(Point(board, model, curve.context, 1, batch=batch))
                for x, aat, tree in curve.points[["verify_len", "aat", "tree"]].itertuples(
                        index=False):
                    points.append(
                        Point(board, model, curve.context, int(x), algorithm, tree,
                              accepted_from_aat(float(aat)), batch)
                    )
    return points


def thin_curve(curve: AatCurve, verify_lens: Sequence[int] | None) -> AatCurve:
    """`curve` with only the x in `verify_lens` (all of them when None)."""
    if verify_lens is None:
        return curve
    keep = curve.points[curve.points["verify_len"].isin(list(verify_lens))]
    if keep.empty:
        raise InputError(
            "verify_lens",
            ",".join(map(str, verify_lens)),
            f"at least one x of the AAT curve at context {curve.context} "
            f"({int(curve.points['verify_len'].min())}..{int(curve.points['verify_len'].max())})",
        )
    return replace(curve, points=keep.reset_index(drop=True))


def check_explore_points(boards: int, model: TargetModel, algorithms: Sequence[Algorithm],
                         contexts: Sequence[int], verify_lens: Sequence[int] | None,
                         aat_dir: str | None, batches: int = 1) -> None:
    """Refuse, from the counts alone (before any board is built or curve computed), more
    than `MAX_POINTS` points: per board, batch, context and drafter, the AD point and at
    most the drafter's largest x (embedded or measured), or the x asked for."""
    per = 0
    for a in algorithms:
        x = max_verify_len(a)
        measured = pair_rows(tables_for(aat_dir), a, model.id)
        if len(measured):
            x = max(x, int(measured["verify_len"].max()))
        per += 1 + (x if verify_lens is None else min(x, len(verify_lens)))
    check_points(boards * batches * len(contexts) * per, "contexts/algorithms/batch",
                 f"{len(contexts)} contexts",
                 f"{boards} board(s) x {batches} batches x {len(contexts)} contexts x up to "
                 f"{per} points" if batches > 1 else
                 f"{boards} board(s) x {len(contexts)} contexts x up to {per} points")


def cost_boards(
    boards: Sequence[Board],
    model: TargetModel,
    algorithms: Sequence[Algorithm],
    contexts: Sequence[int],
    *,
    engine: str,
    executor: str | Executor,
    workers: int | None = None,
    scheduler: str | None = None,
    cache: SweepCache | None = None,
    progress: SweepProgress | None = None,
    verify_lens: Sequence[int] | None = None,
    aat_dir: str | None = None,
    task: str | None = None,
    instruction_groups: Sequence[Hashable] | None = None,
    batches: Sequence[int] = (1,),
) -> tuple[pd.DataFrame, SweepStats, dict[str, str]]:
    """Every point (AD, and each x of each drafter's curve) of every board and context,
    with its algorithm, AAT and P_eff; the sweep statistics; the AAT source per drafter.

    `instruction_groups` (one per board) marks boards whose instruction streams are the
    same but for their durations (designs differing only in clock or bandwidth): the points
    run group by group, so each stream is compiled once and priced per board."""
    check_explore_points(len(boards), model, algorithms, contexts, verify_lens, aat_dir,
                         len(batches))
    curves = {
        a.id: [thin_curve(c, verify_lens) for c in explore_curves(a, model, contexts, aat_dir,
                                                                     task)]
        for a in algorithms
    }
    count = len(boards) * len(batches) * sum(1 + len(c.points) for cs in curves.values()
                                             for c in cs)
    check_points(count, "contexts/algorithms/batch", f"{len(contexts)} contexts",
                 f"{len(boards)} board(s) x {len(batches)} batches x their curves' points")
    points, algorithm_ids = [], []
    for a in algorithms:
        mine = explore_points(boards, model, a, curves[a.id], batches)
        points += mine
        algorithm_ids += [a.id] * len(mine)  # AD rows (x = 1) carry no algorithm of their own
    # run group by group, then by x and context, each board's point for every drafter in a
    # row: the drafters share the verify pass, and the boards of a group share its compiled
    # instructions while they are cached (the rows come back in the points' order)
    groups = list(instruction_groups) if instruction_groups is not None else list(
        range(len(boards)))
    group_rank = {g: n for n, g in enumerate(dict.fromkeys(groups))}
    rank = {id(b): (group_rank[g], n) for n, (b, g) in enumerate(zip(boards, groups, strict=True))}
    order = sorted(range(len(points)), key=lambda i: (
        rank[id(points[i].board)][0], points[i].batch, points[i].verify_len, points[i].context,
        rank[id(points[i].board)][1]))
    done, stats = run_points(
        [points[i] for i in order], engine, executor, workers=workers, scheduler=scheduler,
        cache=cache, progress=progress,
    )
    rows: list[dict] = [{}] * len(points)
    for i, row in zip(order, done, strict=True):
        rows[i] = row
    frame = pd.DataFrame(rows)
    frame["algorithm"] = algorithm_ids
    aat_of = {
        (a, c.context, int(x)): float(aat)
        for a, cs in curves.items()
        for c in cs
        for x, aat in c.points[["verify_len", "aat"]].itertuples(index=False)
    }
    frame["aat"] = [
        1.0 if x == 1 else aat_of[(a, c, x)]
        for a, c, x in zip(frame["algorithm"], frame["context"], frame["verify_len"], strict=True)
    ]
    draft_s = frame["draft_s"].fillna(0.0) if "draft_s" in frame else 0.0
    frame["p_eff_tokens_per_s"] = frame["aat"] / (frame["verify_s"] + draft_s)
    # tokens/J of the step: AAT(x) over the step's joules (verify and draft passes, the
    # simulated row's energy_j; docs/energy.md)
    frame["tokens_per_j"] = frame["batch"] * frame["aat"] / frame["energy_j"]
    sources = {(a, c.context): c.basis for a, cs in curves.items() for c in cs}
    return frame, stats, sources


def best_of(group: pd.DataFrame) -> dict:
    """AD, the best x (argmax P_eff, the smaller x on ties) and what the board delivers (the
    faster of the two) for one group of points sharing board, drafter and context."""
    ad = group.loc[group["verify_len"] == 1].iloc[0]
    sd = group.loc[group["verify_len"] >= 2].sort_values("verify_len")
    best = sd.loc[sd["p_eff_tokens_per_s"].idxmax()]
    p1 = float(ad["p_eff_tokens_per_s"])
    sd_rate = float(best["p_eff_tokens_per_s"])
    speedup = sd_rate / p1
    decision = decision_of(speedup)
    thrifty = sd.loc[sd["tokens_per_j"].idxmax()]
    ad_tpj, sd_tpj = float(ad["tokens_per_j"]), float(best["tokens_per_j"])
    return {
        "model": ad["model"],
        "ad_tokens_per_s": p1,
        "decision": decision,
        "best_verify_len": int(best["verify_len"]),
        "best_tree": best["tree"],
        "best_aat": float(best["aat"]),
        "best_sd_tokens_per_s": sd_rate,
        "speedup": speedup,
        "tokens_per_s": sd_rate if decision == USE_SD else p1,
        "batch_tokens_per_s": int(ad["batch"]) * (sd_rate if decision == USE_SD else p1),
        "fits_memory": bool(best["fits_memory"] if decision == USE_SD else ad["fits_memory"]),
        "ad_tokens_per_j": ad_tpj,
        "best_sd_tokens_per_j": sd_tpj,
        "tokens_per_j": sd_tpj if decision == USE_SD else ad_tpj,
        "energy_best_verify_len": int(thrifty["verify_len"]),
        "energy_best_tokens_per_j": float(thrifty["tokens_per_j"]),
        # the energy-optimal SD against AD
        "energy_decision": energy_verdict(float(thrifty["tokens_per_j"]), ad_tpj),
    }


def solve_boards(
    boards: Sequence[Board],
    model: TargetModel,
    algorithms: Sequence[Algorithm],
    contexts: Sequence[int],
    *,
    engine: str,
    executor: str | Executor,
    cache: SweepCache | None = None,
    verify_lens: Sequence[int] | None = None,
) -> pd.DataFrame:
    """Best SD per (board, drafter, context) of any boards, with each board's columns."""
    frame, _, _ = cost_boards(
        boards, model, algorithms, contexts, engine=engine, executor=executor, cache=cache,
        verify_lens=verify_lens,
    )
    by_name = {b.name: b for b in boards}
    out = []
    for (name, algorithm, batch, context), group in frame.groupby(POINT_GROUP, sort=False):
        out.append({"board": name, "algorithm": algorithm, "batch": int(batch),
                    "context": int(context),
                    "engine": engine, **best_of(group), **by_name[name].columns()})
    return pd.DataFrame(out)


def explore(
    base: BoardBase,
    variation: Variation,
    model: TargetModel,
    algorithms: Sequence[Algorithm],
    contexts: Sequence[int],
    *,
    engine: str,
    executor: str | Executor,
    workers: int | None = None,
    scheduler: str | None = None,
    cache: SweepCache | None = None,
    progress: SweepProgress | None = None,
    verify_lens: Sequence[int] | None = None,
    aat_dir: str | None = None,
    task: str | None = None,
    accounting: bool = True,
    batches: Sequence[int] = (1,),
) -> ExploreResult:
    """Cost every board of the variation with every drafter at every context (module doc).

    `accounting`: also solve each board with the study's accounting (the analytic engine,
    cheap) and carry its decision and speedup beside the simulator's."""
    combos = variation.combinations()
    check_explore_points(len(combos), model, algorithms, contexts, verify_lens, aat_dir,
                         len(batches))
    boards = [build_variant(base, changes) for changes in combos]
    for board in boards:  # a cluster the board's lowering cannot split the model over
        check_cluster(board, model)
    names = [b.name for b in boards]
    if len(set(names)) != len(names):  # two combinations that fit to the same name
        boards = [b.model_copy(update={"name": f"{b.name} #{k}"}) for k, b in enumerate(boards)]
    link = {"design.clock_mhz", BANDWIDTH_FIELD}
    groups = [tuple((p, v) for p, v in changes if p not in link) for changes in combos]
    frame, stats, sources = cost_boards(
        boards, model, algorithms, contexts, engine=engine, executor=executor, workers=workers,
        scheduler=scheduler, cache=cache, progress=progress, verify_lens=verify_lens,
        aat_dir=aat_dir, task=task, instruction_groups=groups, batches=batches,
    )
    accounting_frame = None
    # the study's accounting prices one card: no accounting column for a cluster's rows
    if accounting and engine != "analytic" and all(b.cluster.is_single for b in boards):
        accounting_frame, _, _ = cost_boards(
            boards, model, algorithms, contexts, engine="analytic", executor="inprocess",
            cache=cache, verify_lens=verify_lens, aat_dir=aat_dir, task=task, batches=batches,
        )
    axes = tuple(path for path, _ in variation.axes)
    base_board = base.build()
    base_values = {path: field_value(base_board, path) for path in axes}
    summary = summarise(frame, boards, combos, axes, engine, sources, accounting_frame,
                        base_values)
    return ExploreResult(summary, frame, stats, axes)


def summarise(
    frame: pd.DataFrame,
    boards: Sequence[Board],
    combos: Sequence[tuple[tuple[str, object], ...]],
    axes: Sequence[str],
    engine: str,
    aat_basis: dict[tuple[str, int], str],
    accounting: pd.DataFrame | None = None,
    base_values: dict[str, object] | None = None,
) -> pd.DataFrame:
    """Best x and delivered rate per (board, drafter, context), the board's resources, the
    accounting's decision beside it, and the Pareto flag. `changes` lists the fields whose
    value differs from the base board's (`base_values`), so a variant at the base's value
    of a field does not count it as a change ("fewest changes", `cheapest_paying`)."""
    of = {b.name: (b, dict(c)) for b, c in zip(boards, combos, strict=True)}
    account = {}
    if accounting is not None:
        for key, group in accounting.groupby(POINT_GROUP, sort=False):
            account[key] = best_of(group)
    out = []
    for (name, algorithm, batch, context), group in frame.groupby(POINT_GROUP, sort=False):
        board, changes = of[name]
        f = board.fit
        acc = account.get((name, algorithm, batch, context))
        out.append(
            {
                "board": name,
                "fpga": board.fpga.name,
                "design": board.design.name,
                **{path: changes.get(path) for path in axes},
                "changes": changes_text(changes, base_values or {}),
                "pipelines": f.pipelines,
                "mm_macs_per_cycle": f.mm_macs_per_cycle,
                "mv_macs_per_cycle": f.mv_macs_per_cycle,
                "dsps_used": f.dsps_used,
                "dsps_available": f.dsps_available,
                "fits_dsps": f.fits_dsps,
                "algorithm": algorithm,
                "batch": int(batch),
                "context": int(context),
                "engine": engine,
                "aat_basis": aat_basis.get((algorithm, int(context)), ""),
                **best_of(group),
                "decision_accounting": acc["decision"] if acc else None,
                "speedup_accounting": acc["speedup"] if acc else None,
                "validation": validation_of(board, engine).text,
            }
        )
    summary = pd.DataFrame(out)
    summary["fits"] = [bool(m) and d is not False for m, d in zip(summary["fits_memory"],
                                                                  summary["fits_dsps"],
                                                                  strict=True)]
    summary["pareto"] = pareto_flags(summary)
    summary["pareto_energy"] = pareto_energy_flags(summary)
    head = ["board", "fpga", "design", *axes]
    summary = summary[head + [c for c in RESULT_COLUMNS if c not in head]]
    if any(path.startswith("cluster.") for path in axes):
        summary = with_cluster_columns(summary, {b.name: b.cluster.cards for b in boards})
    return summary


#: the columns an explore over clusters (`--vary cluster.*`) adds to its summary
CLUSTER_COLUMNS = ["cards", "cluster_dsps", "cluster_w", "pareto_cards", "pareto_watts"]


def with_cluster_columns(summary: pd.DataFrame, cards: dict[str, int]) -> pd.DataFrame:
    """The summary with each variant's cards, the cluster's DSPs (cards x one card's), the
    cluster's watts at the delivered rate (batch tokens/s over tokens/J: energy is the whole
    cluster's, docs/energy.md) and the fronts of delivered tokens/s against cards and
    against those watts (docs/multi-fpga.md, "Exploring cluster sizes")."""
    out = summary.copy()
    out["cards"] = out["board"].map(cards).astype(int)
    out["cluster_dsps"] = out["cards"] * out["dsps_used"]
    out["cluster_w"] = out["batch_tokens_per_s"] / out["tokens_per_j"]
    out["pareto_cards"] = front_flags(out, "cards")
    out["pareto_watts"] = front_flags(out, "cluster_w")
    return out


def front_flags(summary: pd.DataFrame, cost: str) -> list[bool]:
    """Per (algorithm, batch, context): True for fitting rows on the front of delivered
    (batch) tokens/s against `cost`: no other fitting row costs <= and delivers more (ties
    in both keep the first in grid order)."""
    flags = [False] * len(summary)
    for _, group in summary[summary["fits"]].groupby(SPACE_GROUP, sort=False):
        order = group.sort_values([cost, "batch_tokens_per_s"], ascending=[True, False],
                                  kind="stable")
        best = -np.inf
        for idx, rate in order["batch_tokens_per_s"].items():
            if rate > best:
                flags[summary.index.get_loc(idx)] = True
                best = rate
    return flags


def cheapest_meeting(summary: pd.DataFrame, target_tokens_per_s: float) -> pd.DataFrame:
    """Per (algorithm, batch, context): the fitting variant with the fewest cards, then the
    fewest DSPs over its cards, that delivers at least the target (batch) tokens/s; ties go
    to the higher rate. No row where none does."""
    frame = summary if "cards" in summary else summary.assign(
        cards=1, cluster_dsps=summary["dsps_used"])
    meeting = frame[frame["fits"] & (frame["batch_tokens_per_s"] >= target_tokens_per_s)]
    ordered = meeting.sort_values([*SPACE_GROUP, "cards", "cluster_dsps", "batch_tokens_per_s"],
                                  ascending=[True, True, True, True, True, False],
                                  kind="stable")
    return ordered.groupby(SPACE_GROUP, sort=False).head(1).reset_index(drop=True)


def target_lines(summary: pd.DataFrame, target_tokens_per_s: float) -> list[str]:
    """Per (drafter, batch, context): the cheapest variant meeting the target
    (`cheapest_meeting`), or a line naming the fastest fitting one when none does."""
    found = {(r["algorithm"], r["batch"], r["context"]): r
             for r in cheapest_meeting(summary, target_tokens_per_s).to_dict("records")}
    lines = []
    for key, group in summary.groupby(SPACE_GROUP, sort=False):
        head = f"{key[0]} L={key[2]}" + (f" B={key[1]}" if key[1] > 1 else "")
        row = found.get(key)
        if row is None:
            fitting = group[group["fits"]]
            best = "no variant fits"
            if len(fitting):
                top = fitting.loc[fitting["batch_tokens_per_s"].idxmax()]
                best = (f"the fastest fitting: {top['changes']} at "
                        f"{top['batch_tokens_per_s']:.4g} tok/s")
            lines.append(f"{head}: no fitting variant reaches {target_tokens_per_s:g} tok/s "
                         f"({best})")
            continue
        cards = int(row.get("cards", 1))
        watts = f", {row['cluster_w']:.4g} W" if "cluster_w" in row else ""
        lines.append(f"{head}: cheapest meeting {target_tokens_per_s:g} tok/s: {row['changes']}"
                     f" ({cards} card{'s' if cards > 1 else ''}, "
                     f"{int(row.get('cluster_dsps', row['dsps_used'])):,} DSPs, "
                     f"{row['batch_tokens_per_s']:.4g} tok/s{watts}, {row['decision']})")
    return lines


def field_value(board: Board, path: str) -> object:
    """The value a board's files hold at a `--vary` path ('design.mv_lanes',
    'fpga.memory.bandwidth_gb_s'; field names or their aliases, as the path is written); a
    design field left to the fit (null, e.g. the study's `mm_cols`, listed per part) reads
    as the fitted value of that name."""
    head, *rest = path.split(".")
    if head == "cluster":
        return getattr(board.cluster, rest[0], None)
    node: object = board.fpga if head == "fpga" else board.design
    for part in rest:
        fields = type(node).model_fields
        name = next((n for n, f in fields.items() if part in (n, f.alias)), part)
        node = getattr(node, name, None)
        if node is None:
            break
    if node is None and head == "design" and len(rest) == 1:
        return getattr(board.fit, rest[0], None)
    return node


def changes_text(changes: dict[str, object], base_values: dict[str, object]) -> str:
    """'design.mv_lanes=4; fpga.memory.bandwidth_gb_s=460': the varied fields whose value is
    not the base board's, in the order varied; 'none (the base)' when every one is."""
    changed = [f"{p}={v}" for p, v in changes.items()
               if p not in base_values or not _same(v, base_values[p])]
    return "; ".join(changed) or "none (the base)"


def _same(a: object, b: object) -> bool:
    """Whether a varied value is the base's (460 and 460.0 are one number)."""
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b


def pareto_flags(summary: pd.DataFrame) -> list[bool]:
    """Per (algorithm, context): True for fitting boards on the front of delivered tokens/s
    against DSPs used: no other fitting board has <= DSPs and a higher rate (ties in both
    keep the first in grid order)."""
    flags = [False] * len(summary)
    for _, group in summary[summary["fits"]].groupby(SPACE_GROUP, sort=False):
        order = group.sort_values(["dsps_used", "tokens_per_s"], ascending=[True, False],
                                  kind="stable")
        best = -np.inf
        for idx, rate in order["tokens_per_s"].items():
            if rate > best:
                flags[summary.index.get_loc(idx)] = True
                best = rate
    return flags


def pareto_energy_flags(summary: pd.DataFrame) -> list[bool]:
    """Per (algorithm, context): True for fitting boards on the front of delivered tokens/s,
    tokens/J and DSPs used: no other fitting board has <= DSPs, >= tokens/s and >= tokens/J
    with one of them strictly better (exact duplicates keep the first in grid order)."""
    flags = [False] * len(summary)
    for _, group in summary[summary["fits"]].groupby(["algorithm", "context"], sort=False):
        rows = list(group[["dsps_used", "tokens_per_s", "tokens_per_j"]].itertuples())
        for n, (idx, dsps, rate, tpj) in enumerate(rows):
            dominated = any(
                d <= dsps and r >= rate and e >= tpj
                and ((d, r, e) != (dsps, rate, tpj) or m < n)
                for m, (_, d, r, e) in enumerate(rows) if m != n
            )
            flags[summary.index.get_loc(idx)] = not dominated
    return flags


def cheapest_paying(summary: pd.DataFrame) -> pd.DataFrame:
    """Per (algorithm, context): the fitting board with the fewest DSPs where SD pays; ties go
    to the fewest changed fields, then the higher speedup. No row when none pays."""
    paying = summary[(summary["decision"] == USE_SD) & summary["fits"]]
    paying = paying.assign(
        _n_changes=[0 if c.startswith("none") else c.count(";") + 1 for c in paying["changes"]]
    )
    ordered = paying.sort_values(
        [*SPACE_GROUP, "dsps_used", "_n_changes", "speedup"],
        ascending=[True, True, True, True, True, False],
        kind="stable",
    ).drop(columns="_n_changes")
    return ordered.groupby(SPACE_GROUP, sort=False).head(1).reset_index(drop=True)


def cheapest_lines(summary: pd.DataFrame) -> list[str]:
    """Per (drafter, batch, context): the fitting board with the fewest DSPs where SD pays
    (`cheapest_paying`), or a line saying SD pays on none."""
    cheapest = cheapest_paying(summary)
    lines = []
    found = {(r["algorithm"], r["batch"], r["context"]): r for r in cheapest.to_dict("records")}
    for key in dict.fromkeys(zip(summary["algorithm"], summary["batch"], summary["context"],
                                 strict=True)):
        row = found.get(key)
        head = f"{key[0]} L={key[2]}" + (f" B={key[1]}" if key[1] > 1 else "")
        if row is None:
            lines.append(f"{head}: SD pays on no fitting board of the space")
        else:
            lines.append(f"{head}: cheapest fitting board where SD pays: "
                         f"{row['changes']} ({row['dsps_used']:,} DSPs, {row['speedup']:.2f}x "
                         f"at x={row['best_verify_len']}); {rests_on(row)}")
    return lines


def step_gains(summary: pd.DataFrame, first: str, second: str) -> tuple[float, float] | None:
    """"One step up the diagonal": from every grid point that has a next value on both axes,
    the delivered tokens/s one step up `first` and one step up `second`, relative to the
    point's; the geometric mean of each ratio over those points (None: no such point)."""
    a_values = sorted(summary[first].dropna().unique())
    b_values = sorted(summary[second].dropna().unique())
    rate = summary.set_index([first, second])["tokens_per_s"]
    gains = []
    for i, a in enumerate(a_values[:-1]):
        for j, b in enumerate(b_values[:-1]):
            here, up_a, up_b = (rate.get(k) for k in ((a, b), (a_values[i + 1], b),
                                                     (a, b_values[j + 1])))
            if here is None or up_a is None or up_b is None:
                continue
            gains.append((float(up_a) / float(here), float(up_b) / float(here)))
    if not gains:
        return None
    return tuple(float(np.exp(np.mean([math.log(g[k]) for g in gains]))) for k in (0, 1))


def verdict(summary: pd.DataFrame, axes: Sequence[str]) -> list[str]:
    """Per (drafter, context): the fastest fitting board by the rate it delivers (and the
    fastest overall, marked, where it does not fit); with a compute and a bandwidth axis (or
    any two axes), which one step up pays more; and where the accounting decides otherwise."""
    lines = []
    pair = _diagonal_axes(axes)
    for (algorithm, batch, context), group in summary.groupby(SPACE_GROUP, sort=False):
        fitting = group[group["fits"]]
        head = f"{algorithm} L={context}" + (f" B={batch}" if batch > 1 else "") + ":"
        if fitting.empty:
            lines.append(f"{head} no board of the space fits (memory or DSPs)")
            continue
        top = fitting.loc[fitting["tokens_per_s"].idxmax()]
        line = f"{head} fastest fitting {_describe(top)}"
        overall = group.loc[group["tokens_per_s"].idxmax()]
        if not overall["fits"]:
            line += f"; faster but not fitting: {_describe(overall)}"
        if pair is not None and group[list(pair)].notna().all().all():
            gains = step_gains(group.assign(tokens_per_s=group["tokens_per_s"]), *pair)
            if gains is not None:
                a, b = (p.split(".")[-1] for p in pair)
                which = a if gains[0] > gains[1] else b
                line += (f"; one step up the diagonal: {a} x{gains[0]:.2f} vs {b} "
                         f"x{gains[1]:.2f} -> more {which}")
        lines.append(f"{line}; {rests_on(dict(top))}")
    for row in summary.to_dict("records"):
        acc = row.get("decision_accounting")
        if acc is not None and acc != row["decision"]:
            line = disagreement_line(
                decision=acc, speedup=float(row["speedup_accounting"]), x=None,
                decision_sim=row["decision"], speedup_sim=float(row["speedup"]), x_sim=None,
                sim_name=row["engine"], reason="",
            )
            batch = f" B={row['batch']}" if row["batch"] > 1 else ""
            lines.append(f"{row['algorithm']} L={row['context']}{batch} on {row['board']}: "
                         f"SD-or-AD differs: {line}")
    return lines


def _diagonal_axes(axes: Sequence[str]) -> tuple[str, str] | None:
    """The two axes "one step up the diagonal" compares: a compute field against the
    bandwidth when both are varied, else the first two axes."""
    compute = [a for a in axes if a in COMPUTE_FIELDS]
    if BANDWIDTH_FIELD in axes and compute:
        return compute[0], BANDWIDTH_FIELD
    # a cluster's named fields (parallel, topology, link layer) have no "one step up"
    ordered = [a for a in axes if a not in NAMED_CLUSTER_FIELDS]
    return (ordered[0], ordered[1]) if len(ordered) >= 2 else None


def _describe(row: pd.Series) -> str:
    """A board's line: its changes, decision and the rate it delivers."""
    if row["decision"] == USE_SD:
        how = f"use SD: {row['speedup']:.2f}x over AD at x={row['best_verify_len']}"
    else:
        how = f"use AD: SD's best {row['speedup']:.2f}x at x={row['best_verify_len']}"
    rate = f"{row['tokens_per_s']:.3g} tok/s"
    if row["batch"] > 1:
        rate = f"{row['batch_tokens_per_s']:.3g} tok/s for the batch, {rate} per request"
    return f"{row['changes']} ({how}, {rate})"
