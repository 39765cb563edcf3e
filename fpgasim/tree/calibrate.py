"""Calibration of the embedded acceptance models, and their distance to measured AAT tables.

Model family (one free number per algorithm, alpha = top-1 acceptance at depth 1):
p(d, 0) = alpha * g(d) and p(d, r) = (1 - p(d, 0)) * rho * q_r for r = 1..9, where
rho (share of top-1 misses that ranks 1..9 still catch) and q (their split) come from
Sequoia's published Llama3-70B/8B vector, and g is a per-depth profile. alpha is solved
so that the default tree's expected AAT equals the published tau at `context_ref`; the
context decay is fitted to the study's measured tables at contexts >= context_ref.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import brentq, minimize_scalar

from fpgasim.config.schema import Algorithm, PositionalAcceptance
from fpgasim.datafiles import read_table
from fpgasim.errors import ConfigError
from fpgasim.tree.embedded import default_token_tree, default_tree_aat, embedded_curve
from fpgasim.tree.positional import PositionalModel

#: Sequoia, Llama3-70B target / Llama3-8B draft, CNN: P(rank r is accepted) (docs/models.md).
SEQUOIA_LLAMA3 = (0.7732, 0.1039, 0.0402, 0.0206, 0.0128, 0.0081, 0.0064, 0.0043, 0.0035, 0.0026)
#: EAGLE chain per-position acceptance 0-a..4-a, MT-Bench, T=0 (docs/models.md).
EAGLE_CHAIN = {
    "vicuna-7b": (0.79, 0.74, 0.72, 0.73, 0.67),
    "vicuna-13b": (0.79, 0.74, 0.72, 0.74, 0.70),
    "llama2-chat-7b": (0.76, 0.69, 0.67, 0.68, 0.68),
    "llama2-chat-13b": (0.77, 0.69, 0.69, 0.70, 0.71),
}
DECIMALS = 4


def miss_coverage() -> float:
    """rho: share of top-1 misses that ranks 1..9 catch in Sequoia's vector."""
    v = np.asarray(SEQUOIA_LLAMA3)
    return float(v[1:].sum() / (1 - v[0]))


def miss_split() -> np.ndarray:
    """q_1..q_9: how ranks 1..9 share the caught misses (sums to 1)."""
    v = np.asarray(SEQUOIA_LLAMA3[1:])
    return v / v.sum()


def eagle1_depth_profile() -> tuple[float, ...]:
    """Mean EAGLE chain acceptance per position, relative to position 0."""
    mean = np.mean(np.asarray(list(EAGLE_CHAIN.values())), axis=0)
    return tuple(float(round(x, DECIMALS)) for x in mean / mean[0])


@dataclass(frozen=True)
class CalibrationSpec:
    """What one algorithm's embedded model is pinned to (its file's `acceptance` block)."""

    tau: float  # published tau at the default tree
    context_ref: int  # context the published tau is taken to hold at
    depth_profile: tuple[float, ...]  # g(d), last value reused deeper
    measured_table: str  # reference table (workloads/aat) for the context fit
    measured_method: str  # its rows used
    other_tables: tuple[str, ...] = ()  # further tables the curve is compared with


#: g(d) of each `acceptance.calibrated_to.depth_profile` name
DEPTH_PROFILES = {"eagle1_chain": eagle1_depth_profile, "flat": lambda: (1.0,)}


def spec_of(algorithm: Algorithm) -> CalibrationSpec | None:
    """The calibration targets the algorithm file states (None: it states none)."""
    acc = algorithm.acceptance
    if acc is None or acc.calibrated_to is None or acc.tau_target is None:
        return None
    to = acc.calibrated_to
    return CalibrationSpec(
        acc.tau_target,
        acc.context_ref,
        DEPTH_PROFILES[to.depth_profile](),
        to.measured_table,
        to.measured_method,
        tuple(to.other_tables),
    )


def _required_spec(algorithm: Algorithm) -> CalibrationSpec:
    spec = spec_of(algorithm)
    if spec is None:
        raise ConfigError(
            algorithm.id,
            "acceptance.calibrated_to",
            None,
            "the targets to calibrate to: acceptance.tau_target and acceptance.calibrated_to "
            "(docs/trees.md)",
        )
    return spec


def family_rows(alpha: float, depth_profile: tuple[float, ...]) -> list[list[float]]:
    """The probability matrix of the family for top-1 acceptance `alpha`."""
    rho, q = miss_coverage(), miss_split()
    rows = []
    for g in depth_profile:
        p0 = alpha * g
        rows.append([p0, *((1 - p0) * rho * q)])
    return rows


def rounded_model(rows: list[list[float]]) -> PositionalModel:
    """The model as stored in YAML (DECIMALS decimals)."""
    return PositionalModel.from_rows([[round(v, DECIMALS) for v in row] for row in rows])


def calibrate_alpha(algorithm: Algorithm, spec: CalibrationSpec) -> float:
    """alpha whose default-tree expected AAT equals the published tau."""

    def gap(alpha: float) -> float:
        """Default-tree AAT at `alpha` minus tau: the root brentq finds."""
        model = PositionalModel.from_rows(family_rows(alpha, spec.depth_profile))
        return model.expected_aat(default_token_tree(algorithm, model)) - spec.tau

    return float(brentq(gap, 0.05, 0.999, xtol=1e-7))


def with_acceptance(algorithm: Algorithm, acceptance: PositionalAcceptance) -> Algorithm:
    """A copy of the algorithm carrying another acceptance block."""
    return algorithm.model_copy(update={"acceptance": acceptance})


def read_measured(path: Path, method: str | None = None) -> pd.DataFrame:
    """A measured AAT table (workloads/aat layout), optionally one method's rows."""
    frame = read_table(Path(path), "AAT table")
    need = {"model", "context", "verify_len", "aat"}
    if not need <= set(frame.columns):
        raise ConfigError(str(path), "columns", list(frame.columns), f"at least {sorted(need)}")
    if method is not None and "method" in frame.columns:
        frame = frame[frame["method"] == method]
    return frame[frame["verify_len"] >= 2].reset_index(drop=True)


def _curve(algorithm: Algorithm, context: int, xs: list[int]) -> np.ndarray:
    return embedded_curve(algorithm, context, xs)["aat"].to_numpy()


def fit_context_decay(algorithm: Algorithm, measured: pd.DataFrame) -> float:
    """Decay per doubling whose AAT log-ratios to context_ref best match the measured ones."""
    acc = algorithm.acceptance
    assert acc is not None
    ref = acc.context_ref
    rows = measured[measured["context"] >= ref]
    ref_rows = rows[rows["context"] == ref].set_index("verify_len")["aat"]
    if ref_rows.empty or rows["context"].nunique() < 2:
        raise ConfigError("measured table", "context", ref, "rows at context_ref and above")
    xs = sorted(set(ref_rows.index))
    target = {
        ctx: np.log(
            g.set_index("verify_len")["aat"].reindex(xs).to_numpy() / ref_rows[xs].to_numpy()
        )
        for ctx, g in rows.groupby("context")
        if ctx != ref
    }
    base = np.log(_curve(algorithm, ref, xs))

    def loss(decay: float) -> float:
        """Summed squared error of the modelled log AAT ratios to context_ref under `decay`
        against the measured ones."""
        trial = with_acceptance(algorithm, acc.model_copy(update={"context_decay": decay}))
        err = 0.0
        for ctx, meas in target.items():
            diff = np.log(_curve(trial, int(ctx), xs)) - base - meas
            err += float(np.nansum(diff**2))
        return err

    return float(minimize_scalar(loss, bounds=(0.0, 0.5), method="bounded").x)


def r2(model: np.ndarray, measured: np.ndarray) -> float:
    """Coefficient of determination of `model` as a predictor of `measured`."""
    ss_tot = float(((measured - measured.mean()) ** 2).sum())
    return 1.0 - float(((measured - model) ** 2).sum()) / ss_tot if ss_tot > 0 else float("nan")


def agreement(algorithm: Algorithm, measured: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, context) of a measured table: R², RMSE and mean bias of the curve."""
    rows = []
    for (model, ctx), g in measured.groupby(["model", "context"], sort=True):
        xs = g["verify_len"].astype(int).tolist()
        ours = _curve(algorithm, int(ctx), xs)
        meas = g["aat"].to_numpy(dtype=float)
        rows.append(
            {
                "model": model,
                "context": int(ctx),
                "points": len(xs),
                "r2": r2(ours, meas),
                "rmse": float(np.sqrt(np.mean((ours - meas) ** 2))),
                "bias": float(np.mean(ours - meas)),
                "r2_refit": _refit_r2(algorithm, xs, meas),
            }
        )
    return pd.DataFrame(rows)


def _refit_r2(algorithm: Algorithm, xs: list[int], measured: np.ndarray) -> float:
    """R² when alpha alone is refitted to this curve (how well the family's shape fits)."""
    spec = spec_of(algorithm)
    acc = algorithm.acceptance
    if spec is None or acc is None:
        return float("nan")

    def curve(alpha: float) -> np.ndarray:
        """The family's AAT at xs and context_ref with `alpha` and no context decay."""
        trial = acc.model_copy(
            update={"probabilities": family_rows(alpha, spec.depth_profile), "context_decay": 0.0}
        )
        return _curve(with_acceptance(algorithm, trial), acc.context_ref, xs)

    best = minimize_scalar(
        lambda a: float(((curve(a) - measured) ** 2).sum()),
        bounds=(0.05, 0.999),
        method="bounded",
        options={"xatol": 1e-4},
    )
    return r2(curve(best.x), measured)


def calibrate(algorithm: Algorithm, aat_dir: Path | None = None) -> PositionalAcceptance:
    """Recompute the acceptance block of an algorithm file from the targets it states (the
    context decay needs the measured tables)."""
    spec = _required_spec(algorithm)
    alpha = calibrate_alpha(algorithm, spec)
    rows = [[round(v, DECIMALS) for v in row] for row in family_rows(alpha, spec.depth_profile)]
    old = algorithm.acceptance
    acc = PositionalAcceptance(
        probabilities=rows,
        context_ref=spec.context_ref,
        context_decay=old.context_decay if old else 0.0,
        tau_target=spec.tau,
        max_depth=old.max_depth if old else None,
        calibration=old.calibration if old else "",
        calibrated_to=old.calibrated_to if old else None,
    )
    if aat_dir is not None:
        measured = read_measured(Path(aat_dir) / spec.measured_table, spec.measured_method)
        decay = fit_context_decay(with_acceptance(algorithm, acc), measured)
        acc = acc.model_copy(update={"context_decay": round(decay, DECIMALS)})
    return acc


def agreement_tables(algorithm: Algorithm, aat_dir: Path) -> pd.DataFrame:
    """`agreement` of the algorithm's shipped model against each of its measured tables."""
    spec = _required_spec(algorithm)
    frames = []
    for name in (spec.measured_table, *spec.other_tables):
        measured = read_measured(Path(aat_dir) / name, spec.measured_method)
        frames.append(agreement(algorithm, measured).assign(table=name))
    frame = pd.concat(frames, ignore_index=True)
    return frame[["table", *[c for c in frame.columns if c != "table"]]]


def agreement_markdown(algorithm: Algorithm, aat_dir: Path) -> str:
    """The agreement table as Markdown (the block docs/trees.md carries)."""
    frame = agreement_tables(algorithm, aat_dir)
    lines = [
        "| table | model | context | points | R² | RMSE | bias | R² (alpha refitted) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in frame.itertuples(index=False):
        lines.append(
            f"| {r.table} | {r.model} | {r.context} | {r.points} | {r.r2:.3f} | {r.rmse:.3f} "
            f"| {r.bias:+.3f} | {r.r2_refit:.3f} |"
        )
    return "\n".join(lines)


def calibration_markdown(algorithms: list[Algorithm]) -> str:
    """The shipped models' key numbers as Markdown (the block docs/trees.md carries)."""

    lines = [
        "| algorithm | alpha = p(1, 0) | context_ref | context_decay | tau published "
        "| tau of the shipped model | AAT of the default tree at 16384 |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for algo in algorithms:
        acc = algo.acceptance
        if acc is None:
            continue
        lines.append(
            f"| {algo.id} | {acc.probabilities[0][0]:.4f} | {acc.context_ref} "
            f"| {acc.context_decay:.4f} | {acc.tau_target} | {default_tree_aat(algo):.4f} "
            f"| {default_tree_aat(algo, 16384):.4f} |"
        )
    return "\n".join(lines)
