"""Print the 55 tokens/s comparison tables of docs/validation.md ("FlightLLM on U280: the
measured speed").

FlightLLM's U280 decode (LLaMA2-7B, batch 1) was predicted at 70.8 tokens/s (T = 128) and
66.4 (T = 512); its test-demo README states 55. For each candidate mechanism this script
finds the parameter that gives 55 tokens/s at T = 128 and at T = 512, what the candidate
then predicts for t(512) - t(128) (where a fixed per-pass cost cancels) and for tokens/J,
and the SD-or-AD verdicts of docs/flightllm-sd.md (LongSpec, EAGLE-3, Falcon at L = 256 and
1024, MV lanes 1, 2 and 4) under it. `fast` engine, embedded AAT curves. Markdown on
stdout, a few minutes.

The tables are round 1's, a record: the board as derived then, with FlightLLM's constant
transfer efficiencies (`ROUND1`).

Usage: python benchmarks/flightllm_u280_candidates.py
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fpgasim.acceptance.curves import embedded_curves
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.board import Board
from fpgasim.engine import get_engine
from fpgasim.engine.energy import pass_energy
from fpgasim.simulate import verify_timing
from fpgasim.solving.decision import decision_of
from fpgasim.solving.solver import solve_curves

BOARD, MODEL = "flightllm-u280", "llama2-7b-flightllm"
#: the board as round 1 derived it: FlightLLM's constant efficiencies (0.7 / 0.35)
ROUND1 = [("design.memory.transfer_model", "design_constants")]
MEASURED = 55.0
DRAFTERS = ("longspec", "eagle3", "falcon")
CONTEXTS = (256, 1024)
LANES = (1, 2, 4)
#: one 512-bit kernel port per pseudo-channel: bytes per kernel cycle
PORT_BYTES = 64
ENGINE = get_engine("fast")


def with_divisor(board: Board, divisor: float) -> Board:
    """The board with its duration divisor (effective pipelines) replaced: a new Board, so
    the pass service does not serve the original's passes."""
    fit = board.fit.model_copy(update={"pipelines": divisor})
    return Board(name=f"{board.name} divisor={divisor:g}", description=board.description,
                 fpga=board.fpga, design=board.design, fit=fit)


@dataclass(frozen=True)
class Candidate:
    """A mechanism: a board for a parameter value, and a fixed cost per pass (s)."""

    name: str
    unit: str
    board: Callable[[float, int], Board]
    fixed_s: Callable[[float], float]
    derived: float
    low: float
    high: float


def _board(changes: list[tuple[str, float]], lanes: int) -> Board:
    lanes_changed = [("design.mv_lanes", lanes)] if lanes != 1 else []
    return load_board(BOARD, [*ROUND1, *changes, *lanes_changed])


CANDIDATES = (
    Candidate("duration divisor", "", lambda d, n: with_divisor(_board([], n), d),
              lambda d: 0.0, 3.0, 1.5, 3.0),
    Candidate("same-channel HBM efficiency (cross = half)", "",
              lambda e, n: _board([("design.memory.same_channel_efficiency", e),
                                   ("design.memory.cross_channel_efficiency", e / 2)], n),
              lambda e: 0.0, 0.7, 0.3, 0.7),
    Candidate("kernel clock, ports at 64 B per cycle", "MHz",
              lambda f, n: _board([("design.clock_mhz", f),
                                   ("fpga.memory.bandwidth_gb_s", 32 * PORT_BYTES * f / 1e3)], n),
              lambda f: 0.0, 224.6, 120.0, 224.6),
    Candidate("fixed cost per pass", "ms", lambda c, n: _board([], n), lambda c: c / 1e3,
              0.0, 0.0, 10.0),
)


def decode_s(candidate: Candidate, value: float, context: int) -> float:
    """One decode pass at `context` under the candidate's value."""
    board = candidate.board(value, 1)
    return (verify_timing(ENGINE, board, load_model(MODEL), 1, context).seconds
            + candidate.fixed_s(value))


def value_for(candidate: Candidate, context: int, target: float = MEASURED) -> float:
    """The candidate's value that gives `target` tokens/s at `context` (bisection)."""
    lo, hi = candidate.low, candidate.high
    rising = 1 / decode_s(candidate, hi, context) > 1 / decode_s(candidate, lo, context)
    for _ in range(40):
        mid = (lo + hi) / 2
        fast = 1 / decode_s(candidate, mid, context) > target
        if fast == rising:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def tokens_per_j(candidate: Candidate, value: float, context: int) -> float:
    """AD tokens/J at `context`: the static draw over the fixed cost too."""
    board = candidate.board(value, 1)
    timing = verify_timing(ENGINE, board, load_model(MODEL), 1, context)
    e = pass_energy(timing, board, ENGINE.name)
    extra = candidate.fixed_s(value)
    clock_w = e.clock_j / e.regulator_efficiency / e.seconds
    return 1 / (e.energy_j + extra * (e.static_w + clock_w))


def verdicts(candidate: Candidate, value: float) -> dict[tuple[str, int, int], tuple[str, float]]:
    """(decision, best speedup) per (drafter, L, MV lanes) under the candidate's value."""
    model = load_model(MODEL)
    out = {}
    for lanes in LANES:
        board = candidate.board(value, lanes)
        fixed = candidate.fixed_s(value)
        for name in DRAFTERS:
            algo = load_algorithm(name)
            curves = embedded_curves(algo, list(CONTEXTS), model_id=model.id, why="asked for")
            sol = solve_curves(ENGINE, board, model, algo, curves, roofline=False)
            for context in CONTEXTS:
                c = sol.curves[sol.curves["context"] == context]
                p = c["aat"] / (c["verify_s"] + c["draft_s"] + fixed * (1 + c["draft_passes"]))
                p1 = 1 / (verify_timing(ENGINE, board, model, 1, context).seconds + fixed)
                speedup = float(p.max()) / p1
                out[name, context, lanes] = (decision_of(speedup), speedup)
    return out


def main() -> None:
    """The fits table, then the verdicts under each candidate."""
    print("| candidate | as derived | value for 55 tok/s at T=128 | at T=512 | t(512)-t(128) "
          "ms at the T=512 value | AD tok/J at T=512 (that value) |")
    print("|---|---:|---:|---:|---:|---:|")
    chosen = {}
    base_delta = (decode_s(CANDIDATES[0], 3.0, 511) - decode_s(CANDIDATES[0], 3.0, 127)) * 1e3
    for cand in CANDIDATES:
        v128, v512 = value_for(cand, 127), value_for(cand, 511)
        chosen[cand.name] = v512
        delta = (decode_s(cand, v512, 511) - decode_s(cand, v512, 127)) * 1e3
        print(f"| {cand.name} | {cand.derived:g} {cand.unit} | {v128:.3g} | {v512:.3g} | "
              f"{delta:.3f} | {tokens_per_j(cand, v512, 511):.3f} |")
    print(f"\nas derived: t(512) - t(128) = {base_delta:.3f} ms\n")
    slr = ("divisor SLRs x 0.8 = 2.4", CANDIDATES[0], 2.4)
    rows = [("as derived", CANDIDATES[0], 3.0), slr,
            *((f"{c.name} = {chosen[c.name]:.3g} {c.unit}", c, chosen[c.name])
              for c in CANDIDATES)]
    print("| drafter | L | MV lanes | " + " | ".join(r[0] for r in rows) + " |")
    print("|---|---:|---:|" + "---|" * len(rows))
    results = [verdicts(c, v) for _, c, v in rows]
    for name in DRAFTERS:
        for context in CONTEXTS:
            for lanes in LANES:
                cells = [f"{r[name, context, lanes][0][4:]} {r[name, context, lanes][1]:.2f}x"
                         for r in results]
                print(f"| {name} | {context} | {lanes} | " + " | ".join(cells) + " |")
    for label, cand, value in rows[:2]:
        print(f"{label}: T=128 {1 / decode_s(cand, value, 127):.1f} tok/s, "
              f"T=512 {1 / decode_s(cand, value, 511):.1f} tok/s")


if __name__ == "__main__":
    main()
