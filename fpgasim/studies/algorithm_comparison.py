"""Several SD algorithms on one (board, target model, contexts): who wins where, and why.

Each algorithm is solved with the same engine instance (target passes are costed once) and
the acceptance the rule of `analysis.acceptance` picks for it (the measured tables where
they hold the algorithm and model, one task: the one measured at the most contexts; else
the embedded model), which each row names (`aat_basis`, `aat_note`). Per context the
winner is the algorithm with the highest best-x effective performance
P_eff = AAT / (T_v + T_d); its lead over the runner-up splits
exactly into an acceptance factor and a step-cost factor:

    P_eff(W) / P_eff(R) = [AAT(W) / AAT(R)] * [(T_v + T_d)(R) / (T_v + T_d)(W)]

so the reason says which of the two carries the win (draft cost versus acceptance).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from fpgasim.acceptance.measured import AatTables
from fpgasim.acceptance.rule import main_task, tables_for
from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, TargetModel
from fpgasim.engine import Engine, get_engine
from fpgasim.errors import InputError
from fpgasim.solving.solver import Solution, SolveOptions, solve
from fpgasim.step import simulator_of

#: One row per (context, algorithm); parameter columns first.
COMPARE_COLUMNS = [
    "board",
    "model",
    "engine",
    "context",
    "algorithm",
    "tokens_per_pass",
    "ad_tokens_per_s",
    "decision",
    "best_verify_len",
    "best_tree",
    "tree_levels",
    "draft_passes",
    "best_aat",
    "verify_ms",
    "draft_ms",
    "alpha",
    "best_tokens_per_s",
    "best_speedup",
    "ori_verify_len",
    "ori_aat",
    "ori_speedup",
    "fits_memory",
    "fits_dsps",
    "aat_basis",
    "aat_file",
    "aat_note",
    "rank",
]

#: One row per context.
WINNER_COLUMNS = [
    "context",
    "winner",
    "winner_speedup",
    "runner_up",
    "runner_up_speedup",
    "lead",
    "aat_factor",
    "step_factor",
    "driver",
    "reason",
]

MAX_ALGORITHMS = 8


@dataclass(frozen=True)
class Comparison:
    """table: COMPARE_COLUMNS, one row per (context, algorithm) at its best x.
    winners: WINNER_COLUMNS, one row per context. curves: the solvers' per-x curves
    (CURVE_COLUMNS of fpgasim.solving.solver), all algorithms stacked."""

    table: pd.DataFrame
    winners: pd.DataFrame
    curves: pd.DataFrame


def drafted_levels(tree: str) -> int:
    """Levels below the root a curve's tree drafts ('4 16 16': 3, '1 0': 2; EAGLE-3's
    'depth=6 top_k=10': 7, its first pass and `depth` expansions). One word per count:
    outputs call this `levels`; `depth` is only EAGLE-3's own parameter (docs/formats.md,
    "Tree notation")."""
    text = str(tree).strip()
    if text.startswith("depth="):
        return int(text.split()[0].split("=", 1)[1]) + 1  # EAGLE-3: depth passes after the first
    return len(text.split())


def _rows(solution: Solution, algorithm: Algorithm) -> list[dict]:
    curves = solution.curves
    k = algorithm.drafter.levels_per_pass
    out = []
    for s in solution.summary.to_dict("records"):
        hit = curves[
            (curves["context"] == s["context"]) & (curves["verify_len"] == s["best_verify_len"])
        ].iloc[0]
        out.append(
            {
                "board": s["board"],
                "model": s["model"],
                "engine": s["engine"],
                "context": int(s["context"]),
                "algorithm": algorithm.id,
                "tokens_per_pass": k,
                "ad_tokens_per_s": s["ad_tokens_per_s"],
                "decision": s["decision"],
                "best_verify_len": int(s["best_verify_len"]),
                "best_tree": s["best_tree"],
                "tree_levels": drafted_levels(s["best_tree"]),
                "draft_passes": int(hit["draft_passes"]),
                "best_aat": s["best_aat"],
                "verify_ms": float(hit["verify_s"]) * 1e3,
                "draft_ms": float(hit["draft_s"]) * 1e3,
                "alpha": float(hit["alpha"]),
                "best_tokens_per_s": s["best_tokens_per_s"],
                "best_speedup": s["best_speedup"],
                "ori_verify_len": s["ori_verify_len"],
                "ori_aat": s["ori_aat"],
                "ori_speedup": s["ori_speedup"],
                "fits_memory": bool(s["fits_memory"]),
                "fits_dsps": s["fits_dsps"],
                "aat_basis": s["aat_basis"],
                "aat_file": s["aat_file"],
                "aat_note": s["aat_note"],
            }
        )
    return out


def _factors(w: pd.Series, r: pd.Series) -> tuple[float, float, str]:
    """(AAT factor, step factor, driver) of w's P_eff lead over r."""
    aat = float(w["best_aat"] / r["best_aat"])
    step = float((r["verify_ms"] + r["draft_ms"]) / (w["verify_ms"] + w["draft_ms"]))
    if aat >= 1 and step >= 1:
        return aat, step, "both"
    return aat, step, "acceptance" if aat >= 1 else "step cost"


WHY = {
    "both": "more accepted tokens and a cheaper step",
    "acceptance": "higher AAT outweighs a dearer step",
    "step cost": "cheaper step outweighs a lower AAT",
}


def versus(w: pd.Series, r: pd.Series) -> str:
    """One clause: why w beats r (the lead = AAT factor x step factor, with the numbers)."""
    aat, step, driver = _factors(w, r)
    return (
        f"vs {r['algorithm']} x{aat * step:.2f} = AAT x{aat:.2f} ({w['best_aat']:.2f} vs "
        f"{r['best_aat']:.2f}) * step x{step:.2f} (T_v+T_d {w['verify_ms'] + w['draft_ms']:.1f} "
        f"vs {r['verify_ms'] + r['draft_ms']:.1f} ms; T_d {w['draft_ms']:.1f} ms in "
        f"{int(w['draft_passes'])} passes vs {r['draft_ms']:.1f} ms in {int(r['draft_passes'])}): "
        f"{WHY[driver]}"
    )


def caveat(row: pd.Series) -> str:
    """A clause when the winner's AAT is extrapolated beyond what was measured or fitted
    (the rule's `extrapolated` basis, or the embedded model past its fit); else empty."""
    basis = str(row.get("aat_basis", ""))
    if basis != "extrapolated" and "extrapolated" not in str(row.get("aat_note", "")):
        return ""
    return f" ({row['algorithm']}'s AAT here is extrapolated, not measured: see its AAT line)"


def winner_row(group: pd.DataFrame) -> dict:
    """The winner of one context's rows and why (acceptance factor x step-cost factor)."""
    ranked = group.sort_values(["best_tokens_per_s", "algorithm"], ascending=[False, True])
    w = ranked.iloc[0]
    row = {
        "context": int(w["context"]),
        "winner": w["algorithm"],
        "winner_speedup": float(w["best_speedup"]),
        "runner_up": "",
        "runner_up_speedup": float("nan"),
        "lead": float("nan"),
        "aat_factor": float("nan"),
        "step_factor": float("nan"),
        "driver": "",
        "reason": "",
    }
    ad = "; no algorithm beats AD here: use AD" if w["best_speedup"] <= 1 else ""
    ad += caveat(w)
    head = f"{w['algorithm']} wins (speedup {w['best_speedup']:.2f} at x = {w['best_verify_len']})"
    if len(ranked) < 2:
        row["reason"] = head + ad
        return row
    r = ranked.iloc[1]
    aat, step, driver = _factors(w, r)
    clauses = "; ".join(versus(w, other) for _, other in ranked.iloc[1:].iterrows())
    row.update(
        runner_up=r["algorithm"],
        runner_up_speedup=float(r["best_speedup"]),
        lead=aat * step,
        aat_factor=aat,
        step_factor=step,
        driver=driver,
        reason=f"{head}: {clauses}{ad}",
    )
    return row


def compare_algorithms(
    board: Board,
    model: TargetModel,
    algorithms: Sequence[Algorithm],
    contexts: Sequence[int],
    *,
    engine: Engine | str = "analytic",
    aat_dir: AatTables | Path | str | None = None,
    aat_source: str | None = None,
) -> Comparison:
    """Solve every algorithm with the acceptance the rule picks for it (`aat_dir`: the
    measured tables, None: the shipped ones); rank them per context."""
    if not algorithms:
        raise InputError("algorithms", "", "one or more algorithms, e.g. falcon,eagle3")
    if len(algorithms) > MAX_ALGORITHMS:
        raise InputError("algorithms", len(algorithms), f"at most {MAX_ALGORITHMS}")
    ids = [a.id for a in algorithms]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise InputError("algorithms", ",".join(dup), "each algorithm once")
    eng = simulator_of(get_engine(engine) if isinstance(engine, str) else engine)
    rows: list[dict] = []
    curves = []
    tables = tables_for(aat_dir) if aat_source != "embedded" else None
    for algo in algorithms:
        task = main_task(algo, model.id, tables)
        options = SolveOptions(aat_dir=tables, aat_source=aat_source,
                               tasks=(task,) if task else None)
        solution = solve(board, model, algo, contexts, options, engine=eng)
        rows.extend(_rows(solution, algo))
        curves.append(solution.curves)
    table = pd.DataFrame(rows)
    table["rank"] = (
        table.groupby("context")["best_tokens_per_s"].rank(ascending=False, method="first")
    ).astype(int)
    table = table.sort_values(["context", "rank"], ignore_index=True)[COMPARE_COLUMNS]
    winners = pd.DataFrame(
        [winner_row(g) for _, g in table.groupby("context", sort=True)], columns=WINNER_COLUMNS
    )
    return Comparison(table, winners, pd.concat(curves, ignore_index=True))


def acceptance_label(table: pd.DataFrame) -> str:
    """Each algorithm's AAT bases over the contexts, e.g. 'eagle3 measured/extrapolated,
    falcon embedded' (the figure's title and the table's caption)."""
    parts = []
    for algorithm, g in table.groupby("algorithm", sort=True):
        bases = "/".join(dict.fromkeys(str(b) for b in g.sort_values("context")["aat_basis"]))
        parts.append(f"{algorithm} {bases}")
    return ", ".join(parts)


def comparison_markdown(comparison: Comparison) -> str:
    """The ranking table and the per-context reasons as Markdown (docs/falcon.md's blocks)."""
    lines = [
        "| L | rank | algorithm | k | decision | speedup | best x | tree | levels / passes | AAT "
        "| T_v ms | T_d ms | alpha | Ori speedup |",
        "| ---: | ---: | --- | ---: | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: "
        "| ---: |",
    ]
    for r in comparison.table.to_dict("records"):
        lines.append(
            f"| {r['context']} | {r['rank']} | {r['algorithm']} | {r['tokens_per_pass']} "
            f"| {r['decision']} | {r['best_speedup']:.2f} "
            f"| {r['best_verify_len']} | {r['best_tree']} | {r['tree_levels']} / "
            f"{r['draft_passes']} | {r['best_aat']:.2f} | {r['verify_ms']:.1f} "
            f"| {r['draft_ms']:.1f} | {r['alpha']:.3f} | {r['ori_speedup']:.2f} |"
        )
    lines.append("")
    lines += [
        f"- L = {w['context']}: {w['reason']}." for w in comparison.winners.to_dict("records")
    ]
    return "\n".join(lines)
