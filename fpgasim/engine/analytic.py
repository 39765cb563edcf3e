"""The `analytic` engine: the study's reference accounting in closed form (docs/accounting.md).

Each pass takes max(weight load + activation load, store, compute) cycles; the SFU is not
charged. The target's element counts are a closed form (numpy arrays for n and L, so sweeps
are vectorised); a draft pass's are the sums over its plug-in's ops, which equal the study's
closed forms (tests/engine/test_analytic.py). It is the study's roofline, not a simulator: on any
board it charges the board's whole bandwidth (as its design reads the part) and the MM
arrays of all its pipelines, at the recipe's widths, with the study's channel shares below.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np

from fpgasim.config.board import Board
from fpgasim.config.schema import (
    DrafterSchema,
    TargetModel,
    model_source,
    refuse_architecture,
)
from fpgasim.dataflow.description.parameters import target_arithmetic
from fpgasim.dataflow.drafters import Counts, lower_pass, ops_counts
from fpgasim.dataflow.passes import WEIGHT_REUSE_TOKENS, PassSpec, weight_reads
from fpgasim.engine.timing import Timing, bound_of, whole_count
from fpgasim.errors import ConfigError, InputError

#: the study reads every bandwidth figure as GiB/s (docs/accounting.md, "Bandwidth units")
STUDY_GIB_PER_GB = 1.024**3
#: the study's channel shares and efficiencies (docs/accounting.md, Bandwidth): weights over
#: all channels at 0.7; activations and KV over 4 of 32 at 0.35; stores over 4 of 32 at 0.7
WEIGHT_SHARE, WEIGHT_EFFICIENCY = 1.0, 0.7
ACT_SHARE, ACT_LOAD_EFFICIENCY, STORE_EFFICIENCY = 4 / 32, 0.35, 0.7


def weight_reads_array(n: np.ndarray) -> np.ndarray:
    """Weight streams of passes over n tokens: ceil(n / WEIGHT_REUSE_TOKENS), >= 1."""
    return np.maximum(1, np.ceil(n / WEIGHT_REUSE_TOKENS))


def target_counts(
    m: TargetModel, n: int | np.ndarray, context: int | np.ndarray, board: Board,
    batch: int = 1,
) -> Counts:
    """Element counts of a target pass over n tokens at context L: exact Python ints for
    one pass (whole n and L), float arrays for many (vectorised). `sh` = s*h, the KV width
    kv_heads*head_dim (a whole number, where s = kv_heads/heads may not be).

    A batch of B requests (docs/batching.md) is the study's accounting with B x n rows
    through the weights (streamed once per 128 of them) and B attentions, each over its own
    cache: every term but the weights' B times the one request's (B = 1: the study's)."""
    if np.ndim(n) == 0 and np.ndim(context) == 0:
        n, L = int(n), int(context)
        reads = max(1, -(-(n * batch) // WEIGHT_REUSE_TOKENS))
        sh = m.kv_heads * m.head_dim
    else:
        n = np.asarray(n, dtype=np.float64)
        L = np.asarray(context, dtype=np.float64)
        reads = weight_reads_array(n * batch)
        sh = m.kv_ratio * m.hidden
    h, i, H, V, N, B = m.hidden, m.intermediate, m.heads, m.vocab, m.layers, batch
    nk = n + L
    weights = N * (2 * h * h + 2 * sh * h + 3 * h * i) + h * V
    return {
        "weight": weights * reads,
        "act": B * (N * (n * (11 * h + 2 * sh) + 2 * n * i + nk * n * H) + 2 * n * h),
        "kv": B * (N * (2 * sh * L)),
        "store": B * (N * (n * (6 * h + 2 * sh) + 2 * n * i + n * nk * H) + n * h + n * V),
        "macs": B * (N * (2 * n * h * h + 2 * n * sh * h + 2 * n * nk * h + 3 * n * h * i)
                     + n * h * V),
    }


def unit_cycles(counts: Counts, board: Board, sparse_share: float = 1.0
                ) -> dict[str, np.ndarray]:
    """Fractional LD/ST/compute cycles from element counts (docs/accounting.md, Bandwidth).

    Weights at the recipe's one weight size (docs/hardware.md, "One weight size"):
    weight_bits each, times `sparse_share`, the streamed weights' bytes under the recipe's
    sparse ratios over their dense bytes (1 for a dense recipe and for a drafter's)."""
    recipe = board.recipe
    per_cycle = study_bandwidth_bytes_per_s(board) / board.clock_hz
    w_rate = per_cycle * WEIGHT_SHARE * WEIGHT_EFFICIENCY
    a_rate = per_cycle * ACT_SHARE * ACT_LOAD_EFFICIENCY
    s_rate = per_cycle * ACT_SHARE * STORE_EFFICIENCY
    weight_bytes = element_bytes(counts["weight"], recipe.weight_bits)
    if sparse_share != 1.0:
        weight_bytes = weight_bytes * (sparse_share if isinstance(weight_bytes, np.ndarray)
                                       else Fraction(sparse_share))
    kv_bytes = element_bytes(counts["kv"], recipe.kv_bits)
    act_bytes = element_bytes(counts["act"], recipe.activation_bits) + kv_bytes
    store_bytes = element_bytes(counts["store"], recipe.activation_bits)
    return {
        "weight_bytes": weight_bytes,
        "act_load_bytes": act_bytes,
        "kv_bytes": kv_bytes,
        "act_store_bytes": store_bytes,
        "ld": weight_bytes / w_rate + act_bytes / a_rate,
        "st": store_bytes / s_rate,
        "compute": counts["macs"] / board.peak_macs_per_cycle,
    }


def study_bandwidth_bytes_per_s(board: Board) -> float:
    """The part's whole bandwidth as the study's accounting reads it: its data sheet's GB/s
    taken as GiB/s (the study's convention, whatever the design's own reading)."""
    return board.fpga.memory.bandwidth_gb_s * STUDY_GIB_PER_GB * 1e9


def element_bytes(count: int | np.ndarray, bits: int) -> Fraction | np.ndarray:
    """Bytes of `count` elements of `bits` bits: exact (a Fraction: 4-bit elements come in
    halves) for a whole count, floats for an array of counts."""
    if isinstance(count, int):
        return Fraction(count * bits, 8)
    return count * (bits / 8)


def pass_cycles(counts: Counts, board: Board) -> np.ndarray:
    """Integer cycles of a pass: ceil(max(LD, ST, COMP)) (vectorised)."""
    u = unit_cycles(counts, board)
    return np.ceil(np.maximum(np.maximum(u["ld"], u["st"]), u["compute"])).astype(np.int64)


def sparse_share(spec: PassSpec, board: Board, model: TargetModel) -> float:
    """`unit_cycles`' sparse share of a pass: the target's streamed weights under the
    recipe's sparse ratios (`TargetArithmetic.sparse_share`); a drafter's are dense."""
    if spec.kind != "target":
        return 1.0
    return target_arithmetic(model).sparse_share(board.recipe)


def counts_for(
    spec: PassSpec, board: Board, model: TargetModel, drafter: DrafterSchema | None
) -> Counts:
    """Element counts of one PassSpec: the target's closed form, or the sums over the ops of
    the drafter plug-in's pass (tests/engine/test_analytic.py checks both against docs/accounting.md
    transcribed independently)."""
    if spec.kind == "target" and model.moe is not None:  # its closed form streams every
        raise ConfigError(model_source(model), "engine", "analytic",  # expert: refused
                          "event or fast for a mixture-of-experts target (the study's "
                          "accounting has no routed experts: docs/moe-sd.md)")
    if spec.kind == "target":
        return target_counts(model, spec.tokens, spec.context, board, spec.batch)
    counts = ops_counts(lower_pass(replace(spec, batch=1), board, model, drafter))
    if spec.batch == 1:
        return counts
    # a batch of draft passes: the drafter's weights streamed once per 128 rows of the
    # whole batch, everything else once per request (as the target's, docs/batching.md)
    one, many = weight_reads(spec.tokens), weight_reads(spec.tokens * spec.batch)
    out = {k: v * spec.batch for k, v in counts.items()}
    out["weight"] = counts["weight"] // one * many
    return out


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
        if not board.cluster.is_single:  # the study's accounting knows one card only
            raise InputError("engine", self.name, "event or fast on a cluster of several "
                             "cards (the analytic accounting models one card)")
        return self._timing(spec, board, model, drafter)

    def _timing(self, spec: PassSpec, board: Board, model: TargetModel, drafter) -> Timing:
        refuse_architecture(model, "the study's accounting (engine analytic)", ("llama",))
        u = unit_cycles(counts_for(spec, board, model, drafter), board,
                        sparse_share(spec, board, model))
        ld, st, comp = (float(u[k]) for k in ("ld", "st", "compute"))
        return Timing(
            cycles=whole_count("cycles", max(ld, st, comp)),
            clock_hz=board.clock_hz,
            ld_cycles=whole_count("ld_cycles", ld),
            st_cycles=whole_count("st_cycles", st),
            compute_cycles=whole_count("compute_cycles", comp),
            weight_bytes=_whole_bytes(u["weight_bytes"]),
            act_load_bytes=_whole_bytes(u["act_load_bytes"]),
            kv_bytes=_whole_bytes(u["kv_bytes"]),
            act_store_bytes=_whole_bytes(u["act_store_bytes"]),
            bound=bound_of(ld, st, comp),
            duration_divisor=1.0,
        )


def _whole_bytes(value: Fraction | np.ndarray) -> int:
    """A byte count as a whole number (half bytes of 4-bit elements rounded to even)."""
    return round(value) if isinstance(value, Fraction) else int(round(float(value)))
