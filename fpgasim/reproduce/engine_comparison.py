"""Engines side by side: every timed experiment under two engines, flagged differences, and
the T_v / T_d breakdown behind them (the generated part of docs/reproduction.md, written
by `python -m fpgasim.cli.compare_engines`).

A row is flagged when its best x differs by more than 1 or its speedup by more than 3%.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from fpgasim.config import load_board, load_model
from fpgasim.dataflow.draft_passes import accepted_from_aat
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.engine import get_engine
from fpgasim.reproduce.experiment_loader import load_experiment
from fpgasim.reproduce.experiment_runner import ExperimentResult, run_experiment
from fpgasim.reproduce.experiment_schema import Experiment
from fpgasim.reproduce.kind import EngineComparison, experiment_kind
from fpgasim.reproduce.output import markdown_table
from fpgasim.reproduce.workloads import RunContext, check_aat_dir, folder_label, load_inputs
from fpgasim.simulate import draft_timing, verify_timing
from fpgasim.solving.cross_check import parse_tree
from fpgasim.step import Simulator

MAX_DX = 1
MAX_REL = 0.03


def _compare(kind: str) -> EngineComparison:
    """How engines are compared on a kind (its record's `compare`)."""
    compare = experiment_kind(kind).compare
    if compare is None:
        raise ValueError(f"kind {kind} is not compared across engines")
    return compare


def best_per_context(result: ExperimentResult) -> pd.DataFrame:
    """A per-x curve reduced to its best x and speedup per (board, context)."""
    full = result.full
    idx = full.groupby(["board", "context"])["speedup"].idxmax()
    best = full.loc[idx, ["board", "context", "verify_len", "speedup"]]
    return best.rename(columns={"verify_len": "best_verify_len", "speedup": "best_speedup"})


def comparable(result: ExperimentResult) -> pd.DataFrame:
    """The frame compared across engines (curves reduced to their best points)."""
    if _compare(result.kind).best_of_curve:
        return best_per_context(result)
    return result.full


def side_by_side(a: ExperimentResult, b: ExperimentResult) -> pd.DataFrame:
    """Keys, then per (x, speedup) pair: both engines' values, Δx, speedup ratio, flag."""
    spec = _compare(a.kind)
    fa, fb = comparable(a), comparable(b)
    keys = [k for k in spec.keys if k in fa]
    out = fa[keys].copy().reset_index(drop=True)
    merged = fa.merge(fb, on=keys, suffixes=("_a", "_b")).reset_index(drop=True)
    flags = np.zeros(len(merged), bool)
    for x, s in spec.pairs:
        xa, xb = merged[f"{x}_a"].astype(float), merged[f"{x}_b"].astype(float)
        sa, sb = merged[f"{s}_a"].astype(float), merged[f"{s}_b"].astype(float)
        out[f"{x} {a.engine}"] = merged[f"{x}_a"]
        out[f"{x} {b.engine}"] = merged[f"{x}_b"]
        out[f"{s} {a.engine}"] = sa
        out[f"{s} {b.engine}"] = sb
        out[f"{s} ratio"] = sb / sa
        dx = (xb - xa).abs().fillna(0)
        flags |= (dx > MAX_DX).to_numpy() | ((sb / sa - 1).abs() > MAX_REL).to_numpy()
    out["flag"] = np.where(flags, "yes", "")
    return out


def breakdown(result: ExperimentResult, engines: Sequence[str]) -> pd.DataFrame:
    """Per (board, context) of a boards grid: T_v(1), T_v and T_d at each engine's best x.

    T_v/T_d in ms under every engine (T_v of that tree, as the solver costs it), with the
    event engine's busiest unit (LD, MPE, SFU).
    """

    engs = {name: Simulator(get_engine(name)) for name in engines}
    rows = []
    full = result.full
    for r in full.to_dict("records"):
        board, model, algorithm = load_inputs(r["board"], r["model"], r["algorithm"])
        row: dict = {"board": r["board"], "context": r["context"], "x": int(r["best_verify_len"])}
        tree = parse_tree(str(r["best_tree"])) or TokenTree.from_shape(())  # static or dynamic
        accepted = accepted_from_aat(float(r["best_aat"]))
        for name, eng in engs.items():
            tv1 = verify_timing(eng, board, model, 1, r["context"])
            tv = verify_timing(eng, board, model, row["x"], r["context"], tree)
            td = draft_timing(eng, board, model, algorithm, tree, accepted, r["context"])
            row[f"T_v(1) ms {name}"] = tv1.seconds * 1e3
            row[f"T_v(x) ms {name}"] = tv.seconds * 1e3
            row[f"T_d(x) ms {name}"] = td.seconds * 1e3
            if tv.unit_busy_cycles:
                busy = tv.unit_busy_cycles
                unit = max(busy, key=busy.get)
                row[f"T_v(x) busiest unit {name}"] = f"{unit} {busy[unit] / tv.cycles:.0%}"
        rows.append(row)
    return pd.DataFrame(rows)


SWEEP_BOARDS = ("u280", "v80", "u250")
SWEEP_CONTEXTS = (256, 16384)
SWEEP_XS = (1, 2, 4, 9, 16, 17, 32, 69)


def verify_sweep(engines: Sequence[str], model: str = "llama-3.1-8b") -> pd.DataFrame:
    """T_v(x) in ms under both engines on three boards at a short and a long context.

    With the second engine's busy cycles per unit as a share of its pass time.
    """

    first, second = (Simulator(get_engine(e)) for e in engines)
    target = load_model(model)
    rows = []
    for name in SWEEP_BOARDS:
        board = load_board(name)
        for context in SWEEP_CONTEXTS:
            for x in SWEEP_XS:
                ta = verify_timing(first, board, target, x, context)
                tb = verify_timing(second, board, target, x, context)
                row = {
                    "board": name,
                    "context": context,
                    "x": x,
                    f"T_v ms {first.name}": ta.seconds * 1e3,
                    f"T_v ms {second.name}": tb.seconds * 1e3,
                    "ratio": tb.seconds / ta.seconds,
                    f"{first.name} bound": ta.bound,
                }
                for unit in ("LD", "MPE", "SFU"):
                    busy = tb.unit_busy_cycles.get(unit)
                    if busy is not None:
                        row[f"{second.name} {unit} busy"] = f"{busy / tb.cycles:.0%}"
                rows.append(row)
    return pd.DataFrame(rows)


def compare_all(
    names: Sequence[str], engines: Sequence[str], aat_dir: Path | None
) -> tuple[str, dict[str, pd.DataFrame]]:
    """Markdown of every timed experiment side by side, and the frames by name."""
    first, second = engines
    folder = check_aat_dir(aat_dir)  # `builtin` names the shipped tables
    ctx = {e: RunContext(get_engine(e), folder) for e in engines}
    parts, frames = [], {}
    for name in names:
        exp = load_experiment(name)
        if not isinstance(exp, Experiment) or experiment_kind(exp.kind).compare is None:
            continue
        a = run_experiment(exp, ctx=ctx[first])
        b = run_experiment(exp, ctx=ctx[second])
        if not a.available:
            parts.append(f"### {name}\n\nnot available with this AAT source.\n")
            continue
        frame = side_by_side(a, b)
        frames[name] = frame
        n_flag = int((frame["flag"] == "yes").sum())
        parts.append(
            f"### {name}: {exp.title}\n\n{n_flag} of {len(frame)} rows flagged "
            f"(best x differs by more than {MAX_DX}, or speedup by more than "
            f"{MAX_REL:.0%}).\n\n{markdown_table(frame)}"
        )
        if _compare(exp.kind).breakdown:
            bd = breakdown(b, engines)
            parts.append(
                f"#### {name}: T_v and T_d behind the {second} engine's best x\n\n"
                f"{markdown_table(bd)}"
            )
    sweep = verify_sweep(engines)
    parts.append(
        f"### T_v(x): one Llama-3.1-8B verification pass under both engines\n\n"
        f"Busy shares are the {second} engine's unit busy cycles over its pass time.\n\n"
        f"{markdown_table(sweep)}"
    )
    versions = ", ".join(f"{e} v{get_engine(e).version}" for e in engines)
    source = f"measured AAT from `{folder_label(folder)}`" if folder else "embedded AAT"
    head = f"Engines `{first}` vs `{second}` ({versions}), {source}.\n"
    return head + "\n" + "\n".join(parts), frames
