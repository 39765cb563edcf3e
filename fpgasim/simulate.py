"""One simulated point: the target's verify pass and, with an algorithm, its draft phase;
or the prefill of a prompt."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from fpgasim.config.board import Board
from fpgasim.config.schema import (
    Algorithm,
    DrafterSchema,
    TargetModel,
    config_source,
)
from fpgasim.dataflow.description.parameters import target_arithmetic
from fpgasim.dataflow.drafters import drafter_kv_tokens, drafter_weight_count, lower_pass
from fpgasim.dataflow.graph import Graph
from fpgasim.dataflow.lowerings.flightllm import prefill_chunk_tokens, prefill_mask_used
from fpgasim.dataflow.lowerings.flightllm.flightllm_cluster import (
    cluster_columns,
    per_card_share,
    pipeline_columns,
)
from fpgasim.dataflow.lowerings.registry import link_seconds
from fpgasim.dataflow.passes import PassSpec
from fpgasim.dataflow.routing import routing_label, touched_per_layer
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.engine import Engine
from fpgasim.engine.energy import cluster_energy, energy_columns, pass_energy
from fpgasim.engine.timing import MAX_COUNT, MAX_COUNT_SHOWN, Timing, combine, count_shown
from fpgasim.errors import ConfigError, InputError
from fpgasim.step import (
    pass_keys,
    run_passes,
    simulator_of,
    step_passes,
    target_spec,
    verify_spec,
)
from fpgasim.step.service import Timed
from fpgasim.validation import validation_of


@dataclass(frozen=True)
class Point:
    """The inputs of one simulated point."""

    board: Board
    model: TargetModel
    context: int
    verify_len: int
    algorithm: Algorithm | None = None
    tree: TokenTree | None = None
    accepted: int = 1
    batch: int = 1

    def check(self) -> None:
        """InputError unless context, x and accepted are >= 1, accepted <= x for SD and
        context + x fits the model's window. A point whose weights and KV caches outgrow the
        board's memory is timed and marked (`fits_memory`, `fit_warnings`), at any batch."""
        check_batch(self.batch)
        if self.context < 1:
            raise InputError("context", self.context, "at least 1 token")
        if self.verify_len < 1:
            raise InputError("verify_len", self.verify_len, "at least 1 (1 = plain decoding)")
        if self.accepted < 1:
            raise InputError("accepted", self.accepted, "at least 1")
        if self.algorithm is not None and self.accepted > self.verify_len:
            raise InputError(
                "accepted",
                self.accepted,
                f"at most the verification length x = {self.verify_len} (an iteration "
                "accepts at most the x tokens it verifies)",
            )
        check_window(self.model, self.context, self.verify_len)


#: the largest batch a command takes (docs/batching.md): far past any batch whose KV caches
#: fit a shipped board, small enough that a batch's rows stay far inside int64 counts
MAX_BATCH = 4096


def check_batch(batch: int, argument: str = "batch") -> None:
    """A batch is 1..MAX_BATCH requests."""
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= MAX_BATCH:
        raise InputError(argument, batch, f"a whole number of requests from 1 to {MAX_BATCH}")


def largest_batch(board: Board, model: TargetModel, context: int, verify_len: int,
                  drafter: DrafterSchema | None = None) -> int:
    """The most requests whose weights and KV caches fit the board's memory at this point
    (0: not even one)."""
    capacity = capacity_bytes(board)
    one = memory_bytes(board, model, context, verify_len, drafter, 1)
    if one > capacity:
        return 0
    per = memory_bytes(board, model, context, verify_len, drafter, 2) - one
    return MAX_BATCH if per <= 0 else 1 + int((capacity - one) // per)


def target_weight_count(model: TargetModel) -> int:
    """Target parameters as stored (`description.parameters.TargetArithmetic.weight_count`)."""
    return target_arithmetic(model).weight_count


def experts_streamed(model: TargetModel, verify_len: int, batch: int = 1) -> float:
    """Routed experts a verify pass of `verify_len` tokens per request streams, mean per
    MoE layer (`routing.touched_per_layer`: the expectation, whole per layer)."""
    return sum(touched_per_layer(model, verify_len, batch)) / model.layers


def target_active_weight_count(model: TargetModel) -> int:
    """Target parameters one token uses (`TargetArithmetic.active_weight_count`)."""
    return target_arithmetic(model).active_weight_count(model)


def memory_bytes(board: Board, model: TargetModel, context: int, verify_len: int,
                 drafter: DrafterSchema | None = None, batch: int = 1) -> int:
    """Off-chip bytes the point needs (on a cluster: its busiest card's, `per_card_share`):
    target weights + KV cache of context + x tokens, plus
    the drafter's weights and its own KV cache when a drafter is given; a batch holds one
    set of weights and a KV cache (target's and drafter's) per request.

    At the design's recipe: the target's weights as its weight loads move them
    (`TargetArithmetic.stored_bytes`: weight_bits x each projection's sparse ratio, the
    biases at bias_bits; the one weight size), the drafter's dense at weight_bits, the KV
    cache at kv_bits; whole bytes, rounded up.
    """
    recipe = board.recipe
    arithmetic = target_arithmetic(model)
    weights = arithmetic.stored_bytes(recipe)
    kv_elements = arithmetic.kv_elements(context + verify_len)
    if not board.cluster.is_single:  # the busiest card's share; the drafter whole on one card
        share = per_card_share(board.cluster, model.layers)
        weights, kv_elements = weights * share, math.ceil(kv_elements * share)
    if drafter is not None:  # the drafter's one layer of cache, at the target's KV width
        weights += recipe.weight_bytes(drafter_weight_count(model, drafter))
        kv_elements += arithmetic.layer_kv_per_token * drafter_kv_tokens(drafter, context,
                                                                        verify_len)
    return math.ceil(weights) + batch * kv_elements * recipe.kv_bits // 8


def capacity_bytes(board: Board) -> float:
    """The board's off-chip capacity in bytes (`memory.capacity_gib`)."""
    return board.fpga.memory.capacity_gib * 2**30


def fits_memory(board: Board, model: TargetModel, context: int, verify_len: int,
                drafter: DrafterSchema | None = None, batch: int = 1) -> bool:
    """Whether `memory_bytes` fits the board's off-chip capacity (`capacity_bytes`)."""
    return memory_bytes(board, model, context, verify_len, drafter, batch) <= capacity_bytes(board)


def memory_warning(board: Board, model: TargetModel, context: int, verify_len: int,
                   drafter: DrafterSchema | None = None, batch: int = 1) -> str | None:
    """The line every command shows when weights + the batch's KV caches outgrow the board
    (else None): the point is timed as if they fit and marked `fits_memory = False`."""
    need = memory_bytes(board, model, context, verify_len, drafter, batch)
    if need <= capacity_bytes(board):
        return None
    with_drafter = ", drafter included" if drafter is not None else ""
    requests = f" for {batch} requests" if batch > 1 else ""
    largest = largest_batch(board, model, context, verify_len, drafter) if batch > 1 else 0
    hint = f"; at most {largest} requests fit at L={context}" if largest else ""
    cards = board.cluster.cards
    per_card = f" on its busiest card of {cards}" if cards > 1 else ""
    return (
        f"{model.id} needs {need / 2**30:.2f} GiB{requests}{per_card} (weights + KV caches at "
        f"L={context}{with_drafter}) but {board.name} has {board.memory.capacity_gib:g} GiB "
        f"(memory.capacity_gib){hint}; timed as if it fit, marked fits_memory = False"
    )


def dsp_warning(board: Board) -> str | None:
    """The line every command shows when the board's arrays need more DSP slices than the
    part gives a design (else None): timed as if they fit, marked `fits_dsps = False`."""
    f = board.fit
    if f.fits_dsps is not False:
        return None
    return (
        f"{board.name}'s MM/MV arrays need {f.dsps_used:,} {board.fpga.dsp_kind} slices "
        f"({f.pipelines_built} pipeline(s) x max(MM {f.mm_dsps:,}, MV {f.mv_dsps:,})) but "
        f"{board.fpga.name} gives a design {f.dsps_available:,}; beyond the part: timed as "
        "if they fit, marked fits_dsps = False"
    )


#: a point `fit_warnings` checks: (context, verify_len, drafter or None, batch)
FitPoint = tuple[int, int, "DrafterSchema | None", int]


def fit_warnings(board: Board, model: TargetModel, points: Sequence[FitPoint]) -> list[str]:
    """What every command prints (stderr) beside results whose points do not fit: the
    board's arrays beyond the part's DSPs, and the largest of the points whose weights and
    KV caches outgrow its memory, naming the contexts and batches of the others. Capacity
    and DSPs decide the same way everywhere: timed and marked in every row, never refused
    (docs/hardware.md, "What does not fit")."""
    lines = [w for w in (dsp_warning(board),) if w]
    unfit = sorted({p for p in points if not fits_memory(board, model, p[0], p[1], p[2], p[3])},
                   key=lambda p: (p[0], p[3], p[1]))
    if unfit:
        context, verify_len, drafter, batch = unfit[-1]
        line = memory_warning(board, model, context, verify_len, drafter, batch)
        others = sorted({(c, b) for c, _, _, b in unfit[:-1]} - {(context, batch)})
        if others:
            shown = ", ".join(f"L={c}" + (f" batch {b}" if b > 1 else "") for c, b in others)
            line += f" (also at {shown})"
        lines.append(line)
    return lines


def fit_columns(board: Board, model: TargetModel, context: int, verify_len: int,
                drafter: DrafterSchema | None = None, batch: int = 1) -> dict:
    """The marks every row that shows a speed carries: `memory_bytes`, `fits_memory` and
    `fits_dsps` (None: the part's DSP count is unknown)."""
    return {**memory_columns(board, model, context, verify_len, drafter, batch),
            "fits_dsps": board.fit.fits_dsps}


def check_finite_row(row: dict, point: Point) -> None:
    """No NaN, inf or count past the int64 range of a table column (`MAX_COUNT`) leaves a
    simulated point: an overflow is an error naming the inputs."""
    for key, value in row.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(
                config_source(point.board),
                key,
                value,
                f"a finite result; the board's numbers overflow at context {point.context}, "
                f"x = {point.verify_len}",
            )
        if isinstance(value, int) and not 0 <= value <= MAX_COUNT:
            raise InputError(
                "context",
                point.context,
                f"a point whose counts fit the simulator's 64-bit range (at most "
                f"{MAX_COUNT_SHOWN}): {key} = {count_shown(value)} at x = "
                f"{point.verify_len} on board {point.board.name}; a shorter context or a "
                "smaller model",
            )


@contextmanager
def errors_name_the_file(board: Board) -> Iterator[None]:
    """Errors the engines raise about a board (source `board NAME`) name its file instead."""
    try:
        yield
    except ConfigError as exc:
        if exc.source != f"board {board.name}" or not getattr(board, "_source", ""):
            raise
        raise ConfigError(config_source(board), exc.field, exc.value, exc.allowed) from None


def verify_timing(
    engine: Engine,
    board: Board,
    model: TargetModel,
    verify_len: int,
    context: int,
    tree: TokenTree | None = None,
    batch: int = 1,
) -> Timing:
    """T_v: one target pass over `verify_len` tree tokens at `context` (per request of a
    batch of `batch`).

    FlightLLM's compiler costs every tree of `verify_len` tokens alike (its attention is
    dense within its mask blocks, docs/trees.md) and the analytic engine charges the dense
    block as the study does; `tree` names the pass (traces, dumped graphs).
    """
    return verify_timed(engine, board, model, verify_len, context, tree, batch)[0]


def verify_timed(
    engine: Engine,
    board: Board,
    model: TargetModel,
    verify_len: int,
    context: int,
    tree: TokenTree | None = None,
    batch: int = 1,
) -> Timed:
    """T_v (`verify_timing`) with the engine's per-unit rows of the pass ([] on engines
    without them)."""
    spec = verify_spec(verify_len, context, tree, batch)
    with errors_name_the_file(board):
        return simulator_of(engine).timed(spec, board, model)


def draft_timing(
    engine: Engine,
    board: Board,
    model: TargetModel,
    algorithm: Algorithm,
    tree: TokenTree,
    accepted: int,
    context: int,
    batch: int = 1,
) -> Timing:
    """T_d: every draft pass of the algorithm's schedule for `tree`, in sequence (each run
    for a batch of `batch` requests)."""
    passes = step_passes(1, context, algorithm, tree, accepted, batch).drafts
    with errors_name_the_file(board):
        return run_passes(engine, passes, board, model, algorithm)


@dataclass(frozen=True)
class PointResult:
    """What `fpgasim simulate` shows of one point or one prefill, returned whole so that no
    caller asks an engine or a service for "the last pass": the row (`simulate_point`'s or
    `simulate_prefill`'s, with the board's lowering and details), the per-unit rows of its
    target pass (the verify pass, or the prefill's last pass; empty on the analytic
    engine), and the clock and divisor its seconds follow from
    (seconds = cycles / (clock_hz x duration_divisor))."""

    row: dict
    unit_rows: tuple[dict, ...]
    clock_hz: float
    duration_divisor: float


def point_result(engine: Engine, point: Point) -> PointResult:
    """One point simulated, as `fpgasim simulate` shows it (`PointResult`)."""
    row, (tv, units) = _point_row(engine, point)
    return _result(row, point.board, tv, units)


def simulate_point(engine: Engine, point: Point) -> dict:
    """A flat result row: the point's inputs, then verify (and draft) timing."""
    return _point_row(engine, point)[0]


def _point_row(engine: Engine, point: Point) -> tuple[dict, Timed]:
    """`simulate_point`'s row and the verify pass it was timed from."""
    point.check()
    tv, units = verify_timed(
        engine, point.board, point.model, point.verify_len, point.context, point.tree,
        point.batch,
    )
    drafter = point.algorithm.drafter if point.algorithm else None
    row: dict = {
        "board": point.board.name,
        "fpga": point.board.fpga.name,
        "design": point.board.design.name,
        "model": point.model.id,
        "algorithm": point.algorithm.id if point.algorithm else "",
        "context": point.context,
        "verify_len": point.verify_len,
        "batch": point.batch,
        "engine": engine.name,
        "tree": point.tree.describe() if point.tree else "",
        "accepted": point.accepted if point.algorithm else 0,
        "verify_cycles": tv.cycles,
        "verify_s": tv.seconds,
        "verify_tokens_per_s": point.batch * point.verify_len / tv.seconds,
        "ld_cycles": tv.ld_cycles,
        "st_cycles": tv.st_cycles,
        "compute_cycles": tv.compute_cycles,
        "sfu_cycles": tv.sfu_cycles,
        "bound": tv.bound,
        "weight_bytes": tv.weight_bytes,
        "act_load_bytes": tv.act_load_bytes,
        "act_store_bytes": tv.act_store_bytes,
        "kv_bytes": tv.kv_bytes,
        **memory_columns(point.board, point.model, point.context, point.verify_len, drafter,
                         point.batch),
        "dsps_used": point.board.fit.dsps_used,
        "fits_dsps": point.board.fit.fits_dsps,
    }
    if point.model.moe is not None:  # a mixture of experts: what the verify pass streams
        moe = point.model.moe
        row["experts"] = moe.experts
        row["experts_per_token"] = moe.experts_per_token
        row["experts_touched"] = experts_streamed(point.model, point.verify_len, point.batch)
        row["routing"] = routing_label(moe)
    cards = point.board.cluster.cards
    energy = cluster_energy(pass_energy(tv, point.board, engine.name), cards,
                            working=point.board.cluster.tp_cards)
    tokens = point.verify_len
    step_s = tv.seconds
    if point.algorithm is not None and point.tree is not None:
        td = draft_timing(
            engine,
            point.board,
            point.model,
            point.algorithm,
            point.tree,
            point.accepted,
            point.context,
            point.batch,
        )
        row.update(
            draft_cycles=td.cycles,
            draft_s=td.seconds,
            draft_passes=td.passes,
            draft_bound=td.bound,
            step_s=tv.seconds + td.seconds,
        )
        energy = energy + cluster_energy(pass_energy(td, point.board, engine.name), cards,
                                         working=1)
        tokens = point.accepted
        step_s = tv.seconds + td.seconds
    # the pass's (or, with an algorithm, the step's) power and energy (docs/energy.md):
    # tokens_per_j counts the verified tokens, or the step's accepted tokens, of every
    # request of the batch
    row.update(energy_columns(energy, tokens * point.batch))
    spec = verify_spec(point.verify_len, point.context, point.tree, point.batch)
    row.update(cluster_columns(point.board,
                               *link_seconds(spec, point.board, point.model, engine), step_s,
                               pipeline_columns(spec, point.board, point.model, engine)))
    check_finite_row(row, point)
    return row, (tv, units)


def _result(row: dict, board: Board, timing: Timing, units: list[dict]) -> PointResult:
    """The shown result of a row timed by `timing` on `board`, with the validation of its
    absolute figures (fpgasim/validation.py)."""
    shown = with_lowering(row, board.lowering)
    shown["validation"] = validation_of(board, row["engine"]).text
    shown.update(board_details(board))
    return PointResult(shown, tuple(units), timing.clock_hz, timing.duration_divisor)


def with_lowering(row: dict, lowering: str) -> dict:
    """The result row with the board's lowering right after the engine (provenance: which
    engine and which lowering produced the cycles)."""
    out = {}
    for k, v in row.items():
        out[k] = v
        if k == "engine":
            out["lowering"] = lowering
    return out


def board_details(board: Board) -> dict:
    """What a shown row adds about its board: clock and divisor (the seconds rule), how the
    design reads the part's bandwidth and what its transfer efficiencies rest on, the fitted
    arrays and pipelines, and the resources they use."""
    f = board.fit
    return {
        "clock_mhz": board.clock_mhz,
        "duration_divisor": board.duration_divisor,
        "bandwidth_reading": f.bandwidth_reading,
        "transfer_basis": f.transfer_basis,
        "same_channel_efficiency": f.same_channel_efficiency,
        "cross_channel_efficiency": f.cross_channel_efficiency,
        "pipelines_built": f.pipelines_built,
        "binding_resource": f.binding_resource,
        "mm_macs_per_cycle": f.mm_macs_per_cycle,
        "mv_macs_per_cycle": f.mv_macs_per_cycle,
        "mv_lanes": f.mv_lanes,
        "dsp_kind": board.fpga.dsp_kind,
        "mm_dsps": f.mm_dsps,
        "mv_dsps": f.mv_dsps,
        "dsps_available": f.dsps_available,
        "recipe": board.recipe.name,
    }


def align_up(tokens: int, multiple: int) -> int:
    """`tokens` rounded up to a multiple of `multiple` (the board's token alignment)."""
    return math.ceil(tokens / multiple) * multiple


def check_window(model: TargetModel, context: int, new_tokens: int,
                 argument: str = "context") -> None:
    """context + new_tokens must fit the model's window (`window_tokens`: its
    max_position_embeddings, stretched by linear RoPE scaling, narrowed by a sliding window;
    docs/models.md)."""
    if context + new_tokens > model.window_tokens:
        raise InputError(
            argument,
            context,
            f"at most {max(0, model.window_tokens - new_tokens)}: {model.id}'s window is "
            f"{model.window_tokens} tokens (its window_tokens), and {new_tokens} new "
            "token(s) follow the context",
        )


def prefill_specs(board: Board, prompt_len: int) -> list[PassSpec]:
    """The passes of a prefill of `prompt_len` tokens, padded to `padding.prefill_multiple`:
    one pass by FlightLLM's published rules up to `prefill_chunk_tokens`, else chunks of that
    many rows, each a causal pass over the chunk's rows after the chunks before it (their
    keys tiled, docs/flightllm-sd.md, "Long contexts")."""
    if prompt_len < 1:
        raise InputError("prompt_len", prompt_len, "at least 1 token")
    tokens = align_up(prompt_len, board.padding.prefill_multiple)
    chunk = prefill_chunk_tokens(board)
    if tokens <= chunk:
        return [target_spec(tokens, 0, None, prefill=True)]
    return [target_spec(min(chunk, tokens - start), start, None)
            for start in range(0, tokens, chunk)]


def prefill_timing(engine: Engine, board: Board, model: TargetModel, prompt_len: int) -> Timing:
    """The time to first token: the prefill's passes over the aligned prompt."""
    return prefill_timed(engine, board, model, prompt_len)[0]


def prefill_timed(engine: Engine, board: Board, model: TargetModel, prompt_len: int) -> Timed:
    """`prefill_timing` with the per-unit rows of the prefill's last pass."""
    check_window(model, prompt_len, 0, "prompt_len")
    specs = prefill_specs(board, prompt_len)
    service = simulator_of(engine)
    with errors_name_the_file(board):
        if len(specs) == 1:
            return service.timed(specs[0], board, model)
        timed = [service.timed(*key) for key in pass_keys(specs, board, model)]
        return combine([t for t, _ in timed]), timed[-1][1]


def prefill_result(
    engine: Engine, board: Board, model: TargetModel, prompt_len: int
) -> PointResult:
    """One prefill simulated, as `fpgasim simulate --phase prefill` shows it."""
    row, (t, units) = _prefill_row(engine, board, model, prompt_len)
    return _result(row, board, t, units)


def simulate_prefill(engine: Engine, board: Board, model: TargetModel, prompt_len: int) -> dict:
    """A flat result row: the prefill's inputs, cycles, seconds and per-unit work."""
    return _prefill_row(engine, board, model, prompt_len)[0]


def _prefill_row(
    engine: Engine, board: Board, model: TargetModel, prompt_len: int
) -> tuple[dict, Timed]:
    """`simulate_prefill`'s row and the prefill it was timed from."""
    specs = prefill_specs(board, prompt_len)
    aligned = sum(spec.tokens for spec in specs)
    t, units = prefill_timed(engine, board, model, prompt_len)
    row: dict = {
        "board": board.name,
        "fpga": board.fpga.name,
        "design": board.design.name,
        "model": model.id,
        "phase": "prefill",
        "prompt_len": prompt_len,
        "prompt_len_aligned": aligned,
        "prefill_multiple": board.padding.prefill_multiple,
        "prefill_passes": len(specs),
        "prefill_mask": prefill_mask_used(board, model, aligned) if len(specs) == 1 else "causal",
        "engine": engine.name,
        "prefill_cycles": t.cycles,
        "prefill_s": t.seconds,
        "prefill_tokens_per_s": prompt_len / t.seconds,
        "ld_cycles": t.ld_cycles,
        "st_cycles": t.st_cycles,
        "compute_cycles": t.compute_cycles,
        "sfu_cycles": t.sfu_cycles,
        "bound": t.bound,
        "weight_bytes": t.weight_bytes,
        "act_load_bytes": t.act_load_bytes,
        "act_store_bytes": t.act_store_bytes,
        "kv_bytes": t.kv_bytes,
    }
    for unit, cycles in t.unit_busy_cycles.items():
        row[f"busy_{unit.lower()}_cycles"] = cycles
    row.update(fit_columns(board, model, aligned, 0))
    row.update(dsps_used=board.fit.dsps_used)
    row.update(energy_columns(cluster_energy(pass_energy(t, board, engine.name),
                                             board.cluster.cards,
                                             working=board.cluster.tp_cards), prompt_len))
    return row, (t, units)


def memory_columns(board: Board, model: TargetModel, context: int, verify_len: int,
                   drafter: DrafterSchema | None = None, batch: int = 1) -> dict:
    """`memory_bytes` and `fits_memory` of a point (every row that shows tokens/s); on a
    cluster both are per card (the busiest card's bytes against one card's capacity), and
    `card_capacity_bytes` says so in the row (one-card rows stay as they were)."""
    need = memory_bytes(board, model, context, verify_len, drafter, batch)
    out: dict = {"memory_bytes": need, "fits_memory": need <= capacity_bytes(board)}
    if not board.cluster.is_single:
        out["card_capacity_bytes"] = int(capacity_bytes(board))
    return out


def point_graphs(point: Point) -> list[tuple[PassSpec, Graph, int]]:
    """The dataflow graph of every pass of the point: the verify pass, then the draft passes.

    Each entry is (pass, its template graph, the pass's layer count): the graph holds the
    head, the first min(layers, 2) layer blocks and the tail, as the lowering sees it.
    """
    point.check()
    step = step_passes(
        point.verify_len, point.context, point.algorithm, point.tree, point.accepted
    )
    drafter = point.algorithm.drafter if point.algorithm is not None else None
    out = []
    for spec in (step.verify, *step.drafts):
        ops = lower_pass(spec, point.board, point.model, None if spec is step.verify else drafter)
        out.append((spec, ops.graph, ops.layers))
    return out
