"""The study's accounting and the simulator side by side in one table, with the reason.

`beside(kind, accounting, simulated, ...)` merges the two renderings of one experiment on
the kind's key columns: every column the engine changes gets a `NAME_sim` twin, every
speedup a `NAME_ratio` (simulator / accounting), plus `sim_engine` and `sim_reason`.
Where the main speedup differs by more than `REASON_THRESHOLD`, `sim_reason` says why in
one line, computed from the simulator's own per-unit accounting of the passes at the
accounting's chosen point (T_v(x), the draft passes and the AD pass T_v(1)): the extra
cycles of each pass over the accounting's max(load, store, compute) are attributed to

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
"""

from __future__ import annotations

import math

import pandas as pd

from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, DrafterSchema, TargetModel
from fpgasim.dataflow.draft_passes import accepted_from_aat
from fpgasim.dataflow.passes import PassSpec
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.engine import Engine, Timing
from fpgasim.reproduce.kind import BesideSpec, experiment_kind
from fpgasim.reproduce.workloads import load_inputs
from fpgasim.step import service_for, step_passes, verify_spec

#: A speedup ratio further than this from 1 gets a reason.
REASON_THRESHOLD = 0.10
#: Mechanisms named in reasons, in tie-break order.
MECHANISMS = ("MV rate", "padding", "weight re-reads", "SFU", "loads", "stores", "stalls")
ROW_KEYS = ("board", "model", "algorithm", "task", "context")


def beside_columns(kind: str) -> list[str]:
    """The columns `beside` adds for a kind, in order (none for untimed kinds)."""
    spec = experiment_kind(kind).beside
    if spec is None:
        return []
    ratios = [f"{v}_ratio" for v in spec.values if v.endswith("speedup")]
    return [*(f"{v}_sim" for v in spec.values), *ratios, "sim_engine", "sim_reason"]


def beside(
    kind: str, accounting: pd.DataFrame, simulated: pd.DataFrame, account: Engine, sim: Engine
) -> pd.DataFrame:
    """`accounting` with the simulator's twin columns, ratios and reasons appended."""
    spec = experiment_kind(kind).beside
    assert spec is not None, f"kind {kind} is not put side by side"
    keys = [k for k in (*ROW_KEYS, *spec.keys) if k in accounting.columns]
    right = simulated[keys + list(spec.values)].rename(columns={v: f"{v}_sim" for v in spec.values})
    out = accounting.merge(right, how="left", on=keys, validate="1:1")
    if len(out) != len(accounting):  # pragma: no cover - validate="1:1" guards it
        raise RuntimeError(f"side by side: {len(out)} rows from {len(accounting)} ({keys})")
    for v in spec.values:
        if v.endswith("speedup"):
            out[f"{v}_ratio"] = out[f"{v}_sim"].astype(float) / out[v].astype(float)
    out["sim_engine"] = sim.name
    out["sim_reason"] = [reason_of(row, spec, account, sim) for row in out.to_dict("records")]
    return out


def disagreements(kind: str, table: pd.DataFrame, sim_name: str) -> list[str]:
    """One line per row where the accounting and the simulator decide SD-or-AD differently
    (`disagreement_line`, naming the row and reusing its `sim_reason`)."""
    spec = experiment_kind(kind).beside
    if spec is None or "decision_sim" not in table.columns:
        return []
    x_col = spec.point[0]
    lines = []
    for row in table.to_dict("records"):
        if not isinstance(row.get("decision_sim"), str) or row["decision"] == row["decision_sim"]:
            continue
        where = [f"{row[k]}" for k in ("board", "task") if k in row] + [f"L={row['context']}"]
        where += [f"{row[k]}" for k in spec.keys]
        line = disagreement_line(
            decision=row["decision"],
            speedup=float(row[spec.speedup]),
            x=_int(row.get(x_col)),
            decision_sim=row["decision_sim"],
            speedup_sim=float(row[f"{spec.speedup}_sim"]),
            x_sim=_int(row.get(f"{x_col}_sim")),
            sim_name=sim_name,
            reason=str(row.get("sim_reason") or ""),
        )
        lines.append(f"SD-or-AD differs at {' '.join(where)}: {line}")
    return lines


# --------------------------------------------------------------------------- reasons


def reason_of(row: dict, spec: BesideSpec, account: Engine, sim: Engine) -> str:
    """One line: why the simulator's speedup differs from the accounting's (or '')."""
    ratio = _float(row.get(f"{spec.speedup}_ratio"))
    flipped = "decision" in row and row.get("decision") != row.get("decision_sim")
    if ratio is None or (abs(ratio - 1.0) <= REASON_THRESHOLD and not flipped):
        return ""
    x_col, tree_col, aat_col = spec.point
    x = _int(row.get(x_col))
    if x is None or x < 2:
        return ""
    board, model, algorithm = load_inputs(row["board"], row["model"], row["algorithm"])
    return point_reason(
        account,
        sim,
        (board, model, algorithm),
        x=x,
        tree_text=str(row.get(tree_col) or ""),
        aat=float(row[aat_col]),
        context=int(row["context"]),
        x_sim=_int(row.get(f"{x_col}_sim")),
    )


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
    a = service_for(account).run_pass(spec, board, model, drafter)
    s = service_for(sim).run_pass(spec, board, model, drafter)
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


def _float(v: object) -> float | None:
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _int(v: object) -> int | None:
    f = _float(v)
    return None if f is None else int(f)


__all__ = [
    "REASON_THRESHOLD",
    "beside",
    "beside_columns",
    "disagreement_line",
    "disagreements",
    "point_reason",
    "reason_of",
]
