"""What FlightLLM's compiler reuses across passes and boards gives what compiling from scratch
gives, bit for bit: rows priced for another link rate, blocks shared across layers of one
shape, form choices made from summaries, totals derived from the link-free rows, and the
explore sweep's run order."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fpgasim.bounded import clear_caches
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.dataflow.instructions import _totals, part_key_prefix
from fpgasim.dataflow.lowerings import flightllm
from fpgasim.dataflow.lowerings.flightllm import compiler, flightllm_emitter, part_plan
from fpgasim.dataflow.lowerings.flightllm.compiler import (
    MM_FORM,
    MV_FORM,
    choose_forms,
    compile_part,
    has_choice,
)
from fpgasim.dataflow.lowerings.flightllm.flightllm_emitter import UNIT_ROLES, Rates
from fpgasim.dataflow.lowerings.flightllm.flightllm_graph import GraphParams
from fpgasim.dataflow.passes import PassSpec

BOARD = load_board("flightllm-vhk158")
MODEL = load_model("llama2-7b-flightllm")


def _other_link(board):
    """The board at another clock and bandwidth (the same instructions, other durations)."""
    other = load_board(board.name, [("design.clock_mhz", 300.0),
                                    ("fpga.memory.bandwidth_gb_s", 1638.4)])
    assert (other.clock_mhz, other.fpga.memory.bandwidth_gb_s) == (300.0, 1638.4)
    return other


def _groups(spec: PassSpec, board=BOARD):
    hw = flightllm.hardware_layers_of(MODEL, GraphParams.of(board),
                                      *flightllm.pass_shape(spec, board))
    return part_plan.plan(hw)[0]


def _fresh(layers, rates, masks=None):
    """The part compiled with nothing shared: no cache, no block shared across layers."""
    flightllm_emitter._SHARED_BLOCKS.cache_clear()
    compiler._STRUCTURES.cache_clear()
    return compile_part(list(layers), rates, masks, [x.name for x in layers])


def _key_from_scratch(part) -> bytes:
    """`part_key` computed here: units and waits, durations, and a template's copy count."""
    h = part_key_prefix(part.instrs, part.unit_names, part.ticks_per_cycle)
    h.update(np.ascontiguousarray(part.instrs["cycles"]).tobytes())
    if part.total_layers > part.layers:  # a template of a run of identical blocks
        h.update(b"copies %d" % part.total_layers)
    return h.digest()


SPECS = [PassSpec("target", 1, 1023), PassSpec("target", 3, 500), PassSpec("target", 24, 900),
         PassSpec("target", 128, 0, phase="prefill")]


@pytest.mark.slow
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s.phase}-{s.tokens}")
def test_cached_and_repriced_parts_equal_fresh_compilations(spec: PassSpec) -> None:
    """Every part of a pass, compiled once for one link rate and priced again for another,
    has the rows, durations and totals of a compilation from scratch at that rate."""
    clear_caches("flightllm.")
    for board in (BOARD, _other_link(BOARD)):
        prog = flightllm.lower(spec, board, MODEL)
        rates = Rates.of(board)
        masks = None
        if spec.phase == "prefill":
            _, _, tokens = flightllm.pass_shape(spec, board)
            masks = flightllm.prefill_masks(board, MODEL, tokens)
            assert flightllm.prefill_mask_used(board, MODEL, tokens) == "flightllm-llama2-7b"
        for group, part in zip(_groups(spec, board), prog.parts, strict=True):
            fresh = _fresh(group.layers, rates, masks)
            assert np.array_equal(part.instrs, fresh.instrs), part.label
            assert flightllm.compiler.TICKS_PER_CYCLE == part.ticks_per_cycle
            assert part.facts.unit_roles == prog.unit_roles
            assert dict(part.facts.totals) == _totals(fresh, prog.unit_roles)
            assert part.facts.part_key == _key_from_scratch(fresh)
            assert part.facts.uses_ports == bool((fresh.instrs["chan"] >= 0).any())
    clear_caches("flightllm.")


def test_link_rate_changes_durations_only() -> None:
    """The two link rates give the same instructions with different durations."""
    clear_caches("flightllm.")
    a = flightllm.lower(PassSpec("target", 5, 700), BOARD, MODEL)
    b = flightllm.lower(PassSpec("target", 5, 700), _other_link(BOARD), MODEL)
    for pa, pb in zip(a.parts, b.parts, strict=True):
        cols = [c for c in pa.instrs.dtype.names if c != "cycles"]
        assert np.array_equal(pa.instrs[cols], pb.instrs[cols])
        assert not np.array_equal(pa.instrs["cycles"], pb.instrs["cycles"])
    clear_caches("flightllm.")


def test_summaries_choose_as_the_exact_sums_do() -> None:
    """Over x = 2..40 at two link rates, the form chosen from summaries is the one the exact
    row-order sums choose (forced: every summary too close to call)."""
    clear_caches("flightllm.")
    never = lambda *args: None  # noqa: E731 - every comparison falls back to exact sums
    for board in (BOARD, _other_link(BOARD)):
        rates = Rates.of(board)
        for x in (2, 3, 9, 17, 40):
            for group in _groups(PassSpec("target", x, 1500), board):
                layers = list(group.layers)
                if not any(has_choice(L) for L in layers):
                    continue
                forms, _ = choose_forms(layers, rates, None)
                with pytest.MonkeyPatch.context() as mp:
                    mp.setattr(compiler, "_less", never)
                    exact, _ = choose_forms(layers, rates, None)
                assert forms == exact, (x, group.names)
                assert set(forms) <= {MV_FORM, MM_FORM}


def test_close_calls_fall_back_to_exact_sums() -> None:
    """Values within each other's rounding bound are not decided from the summaries."""
    assert compiler._less(1.0, 0.0, 2.0, 1e-9) is True
    assert compiler._less(2.0, 0.0, 1.0, 1e-9) is False
    assert compiler._less(1.0, 1e-9, 1.0 + 1e-10, 1e-9) is None
    assert compiler._less(1.0, 0.0, 1.0, 0.0) is False  # ties keep MV


def test_shared_blocks_equal_blocks_built_per_layer() -> None:
    """MV row groups shared across x (and MM tiles across row counts) emit what each layer
    would build on its own."""
    rates = Rates.of(BOARD)
    flightllm_emitter._SHARED_BLOCKS.cache_clear()
    warm = {}
    for x in (2, 3, 4, 33, 40):
        for group in _groups(PassSpec("target", x, 1023)):
            warm[(x, group.names)] = compile_part(list(group.layers), rates, None,
                                                  list(group.names)).instrs
    assert flightllm_emitter._SHARED_BLOCKS.held > 0
    for (x, names), rows in warm.items():
        group = next(g for g in _groups(PassSpec("target", x, 1023)) if g.names == names)
        assert np.array_equal(rows, _fresh(group.layers, rates).instrs), (x, names)


def test_parts_of_one_structure_share_their_waits() -> None:
    """Attention parts of several contexts and verify lengths that share a structure (units,
    traffic classes, wait and release sets) take its explicit waits and duration-total rows
    from the first one compiled, and equal their fresh compilations."""
    rates = Rates.of(BOARD)
    compiler._STRUCTURES.cache_clear()
    calls = []
    warm = {}
    with pytest.MonkeyPatch.context() as mp:
        resolve = compiler.resolve
        mp.setattr(compiler, "resolve", lambda *a: calls.append(1) or resolve(*a))
        for x, context in ((1, 640), (1, 656), (1, 1024), (5, 640), (5, 656)):
            for group in _groups(PassSpec("target", x, context)):
                if group.per_pass:
                    warm[(x, context, group.names)] = (group, compile_part(
                        list(group.layers), rates, None, list(group.names)))
    assert 0 < len(calls) < len(warm)  # some parts met a structure compiled before
    for group, part in warm.values():
        fresh = _fresh(group.layers, rates)
        assert np.array_equal(part.instrs, fresh.instrs), group.names
        assert dict(part.facts.totals) == dict(fresh.facts.totals) == _totals(fresh, UNIT_ROLES)


@pytest.mark.parametrize("x,context", [(5, 656), (40, 1023), (200, 700)])
def test_heads_repeated_equal_heads_emitted_one_by_one(x: int, context: int) -> None:
    """Verify-pass attention in MM tiles (every head alike) appends one head's blocks again
    per head: the rows and the form summary of emitting every head through `block`."""
    rates = Rates.of(BOARD)

    def one_by_one(self, heads, build):
        for _ in range(heads):
            build(self)

    for group in _groups(PassSpec("target", x, context)):
        for L in group.layers:
            if L.kind not in ("attention_qk", "attention_pv"):
                continue
            fast = flightllm_emitter.FlightLLMEmitter(rates)
            compiler.emit_layer(fast, L, None, MM_FORM)
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(flightllm_emitter.FlightLLMEmitter, "per_head", one_by_one)
                slow = flightllm_emitter.FlightLLMEmitter(rates)
                compiler.emit_layer(slow, L, None, MM_FORM)
            assert np.array_equal(fast.link_sums()[0], slow.link_sums()[0]), L.name
            assert fast.rows().tobytes() == slow.rows().tobytes(), L.name


def test_explore_rows_keep_their_order() -> None:
    """The sweep runs boards that share instructions together; its rows come back in the
    points' order, equal to a run without that reordering."""
    from fpgasim.studies import explore

    boards = [_other_link(BOARD), BOARD]
    algorithms = [load_algorithm("longspec")]
    args = (boards, MODEL, algorithms, [256])
    grouped, _, _ = explore.cost_boards(
        *args, engine="fast", executor="inprocess", verify_lens=(2, 5),
        instruction_groups=["same", "same"])
    alone, _, _ = explore.cost_boards(
        *args, engine="fast", executor="inprocess", verify_lens=(2, 5))
    assert grouped.equals(alone)
    assert list(grouped["board"]) == [boards[0].name] * 3 + [boards[1].name] * 3


def _nblock_key(j: int, nb: int, pieces: int, dep: int, dout: int) -> tuple:
    """linear_mm's block key of N block j (as its `tile` writes it)."""
    total = nb * pieces
    first = (j - 1) * pieces + 1
    return (tuple((i > dep, i + dep <= total, i == total) for i in range(first, first + pieces)),
            j > dout, j + dout <= nb)


@pytest.mark.slow
def test_nblock_runs_share_their_keys() -> None:
    """linear_mm emits runs of N blocks once each: every N block of a run has the run's
    block key (brute force over small layers), and the runs cover j = 1..nb in order."""
    from fpgasim.dataflow.lowerings.flightllm.linear import nblock_runs

    for nb, pieces, dep, dout in itertools.product(range(1, 24), range(1, 5), range(1, 9),
                                                   range(1, 28)):
        runs = nblock_runs(nb, pieces, dep, dout)
        assert [j for j0, n in runs for j in range(j0, j0 + n)] == list(range(1, nb + 1))
        for j0, n in runs:
            first = _nblock_key(j0, nb, pieces, dep, dout)
            assert all(_nblock_key(j, nb, pieces, dep, dout) == first
                       for j in range(j0, j0 + n)), (nb, pieces, dep, dout)


@pytest.mark.parametrize("x,context", [(2, 300), (9, 640), (16, 1023), (40, 900), (85, 128)])
def test_parts_reuse_the_rows_their_summaries_emitted(x: int, context: int) -> None:
    """A part's rows append each layer's rows as its form summary emitted them (no second
    emission): equal to the part emitted from scratch in the chosen forms, at two boards."""
    for board in (BOARD, _other_link(BOARD)):
        rates = Rates.of(board)
        for group in _groups(PassSpec("target", x, context), board):
            layers = list(group.layers)
            flightllm_emitter._SHARED_BLOCKS.cache_clear()
            compiler._STRUCTURES.cache_clear()
            forms, part = choose_forms(layers, rates, None)
            flightllm_emitter._SHARED_BLOCKS.cache_clear()
            compiler._STRUCTURES.cache_clear()
            fresh = compiler.part_rows(layers, rates, None, forms)
            assert part.rows.tobytes() == fresh.rows.tobytes(), (x, context, group.names)
            for col in ("num", "link", "den", "starts"):
                assert np.array_equal(getattr(part, col), getattr(fresh, col)), col
            assert part.other_totals == fresh.other_totals


def test_layers_of_one_emission_key_emit_the_same_rows() -> None:
    """Verify-pass attention in MM tiles is cached by `emission_key`, which leaves out the
    row count: layers of x = 2..90 rows with the same key emit the same rows (and each
    key is met by several x, so the test compares something)."""
    rates = Rates.of(BOARD)
    free = rates.link_free
    seen: dict[tuple, tuple[int, bytes]] = {}
    shared = 0
    for context in (128, 1023):
        for x in range(2, 91):
            for group in _groups(PassSpec("target", x, context)):
                for L in group.layers:
                    if L.kind not in ("attention_qk", "attention_pv") or not has_choice(L):
                        continue
                    e = flightllm_emitter.FlightLLMEmitter(free)
                    compiler.emit_layer(e, L, None, MM_FORM)
                    rows = e.rows().tobytes()
                    key = compiler.emission_key(L, MM_FORM, free)
                    assert key != L.key()
                    if key in seen:
                        shared += 1
                        assert seen[key][1] == rows, (x, seen[key][0], context, L.kind)
                    else:
                        seen[key] = (x, rows)
    assert shared > 50


@pytest.mark.parametrize("x", [3, 17, 85])
def test_runs_of_blocks_equal_blocks_appended_one_by_one(x: int) -> None:
    """A run of alike blocks appended at once (`block(..., times)`: MV row groups, MV
    attention heads, linear_mm's N blocks) gives the rows of appending each block in turn."""
    rates = Rates.of(BOARD)
    block = flightllm_emitter.FlightLLMEmitter.block

    def one_by_one(self, key, build, times=1, templatable=False):
        for _ in range(times):
            block(self, key, build, 1, templatable)

    for group in _groups(PassSpec("target", x, 700)):
        for L in group.layers:
            for form in (MV_FORM, MM_FORM):
                flightllm_emitter._SHARED_BLOCKS.cache_clear()
                runs = flightllm_emitter.FlightLLMEmitter(rates)
                compiler.emit_layer(runs, L, None, form)
                flightllm_emitter._SHARED_BLOCKS.cache_clear()
                with pytest.MonkeyPatch.context() as mp:
                    mp.setattr(flightllm_emitter.FlightLLMEmitter, "block", one_by_one)
                    single = flightllm_emitter.FlightLLMEmitter(rates)
                    compiler.emit_layer(single, L, None, form)
                assert runs.rows().tobytes() == single.rows().tobytes(), (x, L.name, form)
