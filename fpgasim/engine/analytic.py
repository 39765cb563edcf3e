"""The `analytic` engine: the study's reference accounting in closed form (docs/accounting.md).

Each pass takes max(weight load + activation load, store, compute) cycles; the SFU is not
charged. The target's element counts are a closed form (numpy arrays for n and L, so sweeps
are vectorised); a draft pass's are the sums over its plug-in's ops, which equal the study's
closed forms (tests/test_analytic.py). It is the study's roofline, not a simulator: on any
board it charges the board's whole bandwidth (as its design reads the part) and the MM
arrays of all its pipelines, at the recipe's widths, with the study's channel shares below.
"""

from __future__ import annotations

import numpy as np

from fpgasim.config.board import Board
from fpgasim.config.schema import DrafterSchema, TargetModel
from fpgasim.dataflow.drafters import Counts, lower_pass, ops_counts
from fpgasim.dataflow.passes import WEIGHT_REUSE_TOKENS, PassSpec
from fpgasim.engine.timing import Timing, bound_of

#: the study's channel shares and efficiencies (docs/accounting.md, Bandwidth): weights over
#: all channels at 0.7; activations and KV over 4 of 32 at 0.35; stores over 4 of 32 at 0.7
WEIGHT_SHARE, WEIGHT_EFFICIENCY = 1.0, 0.7
ACT_SHARE, ACT_LOAD_EFFICIENCY, STORE_EFFICIENCY = 4 / 32, 0.35, 0.7


def weight_reads_array(n: np.ndarray) -> np.ndarray:
    """Weight streams of passes over n tokens: ceil(n / WEIGHT_REUSE_TOKENS), >= 1."""
    return np.maximum(1, np.ceil(n / WEIGHT_REUSE_TOKENS))


def target_counts(
    m: TargetModel, n: int | np.ndarray, context: int | np.ndarray, board: Board
) -> Counts:
    """Element counts of a target pass over n tokens at context L (vectorised)."""
    n = np.asarray(n, dtype=np.float64)
    L = np.asarray(context, dtype=np.float64)
    h, i, H, s, V, N = m.hidden, m.intermediate, m.heads, m.kv_ratio, m.vocab, m.layers
    nk = n + L
    weights = N * (2 * h * h + 2 * s * h * h + 3 * h * i) + h * V
    return {
        "weight": weights * weight_reads_array(n),
        "act": N * (n * h * (11 + 2 * s) + 2 * n * i + nk * n * H) + 2 * n * h,
        "kv": N * (2 * s * h * L),
        "store": N * (n * h * (6 + 2 * s) + 2 * n * i + n * nk * H) + n * h + n * V,
        "macs": N * (2 * n * h * h + 2 * s * n * h * h + 2 * n * nk * h + 3 * n * h * i)
        + n * h * V,
    }


def unit_cycles(counts: Counts, board: Board) -> dict[str, np.ndarray]:
    """Fractional LD/ST/compute cycles from element counts (docs/accounting.md, Bandwidth)."""
    recipe = board.recipe
    wbytes = recipe.weight_timed_bits / 8
    abytes = recipe.activation_bits / 8
    kvbytes = recipe.kv_bits / 8
    per_cycle = board.bandwidth_bytes_per_s / board.clock_hz
    w_rate = per_cycle * WEIGHT_SHARE * WEIGHT_EFFICIENCY
    a_rate = per_cycle * ACT_SHARE * ACT_LOAD_EFFICIENCY
    s_rate = per_cycle * ACT_SHARE * STORE_EFFICIENCY
    weight_bytes = counts["weight"] * wbytes
    act_bytes = counts["act"] * abytes + counts["kv"] * kvbytes
    store_bytes = counts["store"] * abytes
    return {
        "weight_bytes": weight_bytes,
        "act_load_bytes": act_bytes,
        "kv_bytes": counts["kv"] * kvbytes,
        "act_store_bytes": store_bytes,
        "ld": weight_bytes / w_rate + act_bytes / a_rate,
        "st": store_bytes / s_rate,
        "compute": counts["macs"] / board.peak_macs_per_cycle,
    }


def pass_cycles(counts: Counts, board: Board) -> np.ndarray:
    """Integer cycles of a pass: ceil(max(LD, ST, COMP)) (vectorised)."""
    u = unit_cycles(counts, board)
    return np.ceil(np.maximum(np.maximum(u["ld"], u["st"]), u["compute"])).astype(np.int64)


def counts_for(
    spec: PassSpec, board: Board, model: TargetModel, drafter: DrafterSchema | None
) -> Counts:
    """Element counts of one PassSpec: the target's closed form, or the sums over the ops of
    the drafter plug-in's pass (tests/test_analytic.py checks both against docs/accounting.md
    transcribed independently)."""
    if spec.kind == "target":
        return target_counts(model, spec.tokens, spec.context, board)
    return ops_counts(lower_pass(spec, board, model, drafter))


class AnalyticEngine:
    """Closed-form roofline per pass, exactly the study's accounting."""

    name = "analytic"
    version = "1"

    def run_pass(
        self,
        spec: PassSpec,
        board: Board,
        model: TargetModel,
        drafter: DrafterSchema | None = None,
    ) -> Timing:
        """Timing of one pass (the tree mask is ignored, as the study)."""
        return self._timing(spec, board, model, drafter)

    def _timing(self, spec: PassSpec, board: Board, model: TargetModel, drafter) -> Timing:
        u = unit_cycles(counts_for(spec, board, model, drafter), board)
        ld, st, comp = (float(u[k]) for k in ("ld", "st", "compute"))
        return Timing(
            cycles=int(np.ceil(max(ld, st, comp))),
            clock_hz=board.clock_hz,
            ld_cycles=int(np.ceil(ld)),
            st_cycles=int(np.ceil(st)),
            compute_cycles=int(np.ceil(comp)),
            weight_bytes=int(round(float(u["weight_bytes"]))),
            act_load_bytes=int(round(float(u["act_load_bytes"]))),
            kv_bytes=int(round(float(u["kv_bytes"]))),
            act_store_bytes=int(round(float(u["act_store_bytes"]))),
            bound=bound_of(ld, st, comp),
            duration_divisor=1.0,
        )
