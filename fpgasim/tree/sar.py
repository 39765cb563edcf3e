"""Falcon's semi-autoregressive (SAR) acceptance family and its calibration (docs/falcon.md).

A SAR drafter emits a k-block of tokens per pass: the first token of a block is predicted
from everything before it, the token at block position j (0-based) without its j
predecessors inside the block. The family (one row per depth d = 1..max_depth):

    p(d, r) = beta_k ** j(d) * p1(r),   j(d) = (d - 1) mod k
    p1(0) = alpha,   p1(r) = (1 - alpha) * rho * q_r  for r = 1..9

so a block's first token is accepted like an autoregressive drafter's (p1), and every rank
of the token j places into a block is scaled by beta_k ** j (rows stay non-increasing in
rank, so greedy trees stay optimal). rho and q_r are Sequoia's split of top-1 misses over
ranks 1..9 (as for LongSpec and EAGLE-3, fpgasim.tree.calibrate). alpha is fixed at
FALCON_ALPHA, the middle of Falcon's published acceptance rate 0.74-0.80; beta_k is
solved per k so that the default tree's expected AAT equals Falcon's published tau for
that k (Vicuna-7B, MT-Bench): one free number per k, no measured AAT table involved.
"""

from __future__ import annotations

from scipy.optimize import brentq

from fpgasim.config.schema import Algorithm, PositionalAcceptance
from fpgasim.errors import ConfigError
from fpgasim.tree.calibrate import DECIMALS, miss_coverage, miss_split
from fpgasim.tree.embedded import default_token_tree, default_tree_aat
from fpgasim.tree.positional import PositionalModel

#: Top-1 acceptance of a block's first token: the middle of the published 0.74-0.80.
FALCON_ALPHA = 0.77
#: Published tau, Vicuna-7B MT-Bench, T = 0, by tokens per pass k (docs/models.md).
FALCON_TAU = {2: 3.34, 3: 2.52, 4: 2.35}
#: Published acceptance-rate range (docs/models.md), which FALCON_ALPHA must fall in.
FALCON_ACCEPTANCE_RANGE = (0.74, 0.80)


def block_position(depth: int, k: int) -> int:
    """0-based position of tree depth `depth` (>= 1) inside its k-block."""
    return (depth - 1) % k


def sar_rows(alpha: float, beta: float, k: int, max_depth: int) -> list[list[float]]:
    """The family's probability matrix (rows = depth 1..max_depth, columns = rank 0..9)."""
    rho, q = miss_coverage(), miss_split()
    first = [alpha, *((1 - alpha) * rho * q)]
    return [[beta ** block_position(d, k) * p for p in first] for d in range(1, max_depth + 1)]


def _rounded(rows: list[list[float]]) -> list[list[float]]:
    return [[round(v, DECIMALS) for v in row] for row in rows]


def _depth(algorithm: Algorithm) -> int:
    shape = algorithm.default_tree.shape
    if not shape:
        raise ConfigError(algorithm.id, "default_tree.shape", None, "Falcon's level widths")
    return len(shape)


def default_tree_tau(algorithm: Algorithm, rows: list[list[float]]) -> float:
    """Expected AAT of the algorithm's default tree (realised round robin) under `rows`."""
    model = PositionalModel.from_rows(rows)
    return model.expected_aat(default_token_tree(algorithm, model))


def calibrate_beta(algorithm: Algorithm, tau: float, alpha: float = FALCON_ALPHA) -> float:
    """beta_k whose (rounded) rows give the default tree an expected AAT of `tau`."""
    k = algorithm.drafter.levels_per_pass
    depth = _depth(algorithm)

    def gap(beta: float) -> float:
        """Default-tree AAT at `beta` minus tau: the root brentq finds."""
        return default_tree_tau(algorithm, sar_rows(alpha, beta, k, depth)) - tau

    lo, hi = gap(1e-3), gap(1.0)
    if lo > 0 or hi < 0:
        raise ConfigError(
            algorithm.id,
            "acceptance.tau_target",
            tau,
            f"a tau between {lo + tau:.3f} and {hi + tau:.3f} for alpha = {alpha} on the "
            f"default tree",
        )
    return float(brentq(gap, 1e-3, 1.0, xtol=1e-7))


def calibrate_falcon(algorithm: Algorithm, tau: float | None = None) -> PositionalAcceptance:
    """The acceptance block of a Falcon (semi-autoregressive) algorithm file, k = its
    drafter's levels per pass.

    tau defaults to the published figure for its k; context_ref, context_decay, max_depth
    and the calibration text are kept from the file's current block when it has one.
    """
    k = algorithm.drafter.levels_per_pass
    if k < 2:
        raise ConfigError(algorithm.id, "drafter.kind", algorithm.kind,
                          "a semi-autoregressive drafter (more than one tree level per pass)")
    if tau is None and k not in FALCON_TAU:
        raise ConfigError(algorithm.id, "acceptance.tau_target", None,
                          f"a tau to calibrate to (published only for k = {sorted(FALCON_TAU)})")
    target = FALCON_TAU[k] if tau is None else tau
    beta = calibrate_beta(algorithm, target)
    old = algorithm.acceptance
    return PositionalAcceptance(
        probabilities=_rounded(sar_rows(FALCON_ALPHA, beta, k, _depth(algorithm))),
        context_ref=old.context_ref if old else 512,
        context_decay=old.context_decay if old else 0.0,
        tau_target=target,
        max_depth=old.max_depth if old else _depth(algorithm),
        calibration=old.calibration if old else "",
    )


def falcon_calibration_rows(algorithms: list[Algorithm]) -> list[dict]:
    """Per semi-autoregressive (Falcon) file: k, alpha, beta_k, p(d, 0) by block position,
    tau published vs model."""
    out = []
    for algo in algorithms:
        acc = algo.acceptance
        k = algo.drafter.levels_per_pass
        if k < 2 or acc is None:
            continue
        p0 = [row[0] for row in acc.probabilities[:k]]
        out.append(
            {
                "algorithm": algo.id,
                "k": k,
                "alpha": p0[0],
                "beta": p0[1] / p0[0] if p0[0] else float("nan"),
                "p0_by_block_position": " ".join(f"{p:.4f}" for p in p0),
                "tau_published": FALCON_TAU.get(k),
                "tau_model": default_tree_tau(algo, acc.probabilities),
            }
        )
    return out


def falcon_calibration_markdown(algorithms: list[Algorithm]) -> str:
    """falcon_calibration_rows as Markdown (the block docs/falcon.md carries)."""
    lines = [
        "| algorithm | k | alpha | beta_k | p(d, 0) by block position | tau published "
        "| tau of the shipped model | AAT of the default tree at 16384 |",
        "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    by_id = {a.id: a for a in algorithms}
    for r in falcon_calibration_rows(algorithms):
        far = default_tree_aat(by_id[r["algorithm"]], 16384)
        lines.append(
            f"| {r['algorithm']} | {r['k']} | {r['alpha']:.4f} | {r['beta']:.4f} "
            f"| {r['p0_by_block_position']} | {r['tau_published']} | {r['tau_model']:.4f} "
            f"| {far:.4f} |"
        )
    return "\n".join(lines)
