"""Print the round-2 prediction tables of docs/validation.md ("FlightLLM on U280, round 2").

LLaMA2-7B (`llama2-7b-flightllm`), batch 1, on boards/flightllm-u280.yaml with the U280's
measured HBM access model (`fast` engine): decode at T = 128 and 512 (`--context 127` and
`511`, one token), prefill of 128 tokens, `generate` P = 128, D = 512; board power and
tokens/J (docs/energy.md) with their components; beside round 1's board (FlightLLM's
constant efficiencies); what the data sheet's reading changes on the VHK158; and the size
of the mechanisms the model leaves out, each as a range from its evidence. No measured
speed or power enters this script. Markdown on stdout, about a minute.

Usage: python benchmarks/flightllm_u280_round2.py
"""

from __future__ import annotations

from fpgasim.config import load_board, load_model
from fpgasim.config.board import Board
from fpgasim.config.board_loader import board_of
from fpgasim.dataflow.instructions import full
from fpgasim.dataflow.lowerings.registry import lower
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine import get_engine
from fpgasim.engine.energy import Energy, pass_energy
from fpgasim.simulate import prefill_timing, verify_timing
from fpgasim.studies.generation import generate

BOARD, MODEL = "flightllm-u280", "llama2-7b-flightllm"
#: the board as round 1 derived it: FlightLLM's constant efficiencies (0.7 / 0.35)
ROUND1 = [("design.memory.transfer_model", "design_constants")]
#: bytes of each instruction in the U280 artefact's encoding (docs/validation.md, "The
#: artefact, read"): LD 5 words, ST 4, MM 5, MV 3, SYS 1; MISC does not occur in the shipped
#: stream and is taken at VHK158's 3 words (an assumption)
U280_INSTRUCTION_BYTES = {"LD": 20, "ST": 16, "MM": 20, "MV": 12, "MISC": 12, "SYS": 4}
#: one DDR4-2400 channel of the U280 (the instruction buffers' bank), decimal GB/s: 2400 MT/s
#: x 8 bytes (UG1120's DDR4 banks)
DDR4_CHANNEL_GB_S = 19.2
#: the switch drain of an in-order HBM master, ns (fpgas/u280.yaml, memory.access)
DRAIN_NS = 141.3


def energy_at(board: Board, context: int) -> tuple[float, Energy]:
    """(seconds, energy) of one decode pass at `context` on `board`."""
    timing = verify_timing(get_engine("fast"), board, load_model(MODEL), 1, context)
    return timing.seconds, pass_energy(timing, board, "fast")


def prediction_row(board: Board) -> dict:
    """ms, tokens/s, W and tokens/J at T = 128 and 512, prefill 128 ms, generate 128 + 512."""
    out = {}
    for t in (128, 512):
        s, e = energy_at(board, t - 1)
        out[f"T={t} ms"] = 1e3 * s
        out[f"T={t} tok/s"] = 1 / s
        out[f"T={t} W"] = e.power_w
        out[f"T={t} tok/J"] = 1 / e.energy_j
    engine, model = get_engine("fast"), load_model(MODEL)
    out["prefill 128 ms"] = 1e3 * prefill_timing(engine, board, model, 128).seconds
    gen = generate(engine, board, model, 128, 512).summary
    out["generate s"] = gen["total_s"]
    out["generate decode tok/s"] = gen["decode_tokens_per_s"]
    return out


def table(rows: list[tuple[str, dict]], fmt: str = "{:.2f}") -> str:
    """Markdown: one row per variant, one column per quantity."""
    keys = list(rows[0][1])
    lines = ["| variant | " + " | ".join(keys) + " |", "|---|" + "---:|" * len(keys)]
    for name, r in rows:
        lines.append(f"| {name} | " + " | ".join(fmt.format(r[k]) for k in keys) + " |")
    return "\n".join(lines)


def breakdown(board: Board) -> str:
    """The components of one token's energy at T = 128 and 512."""
    lines = ["| component | T=128 mJ | T=128 W | T=512 mJ | T=512 W |", "|---|---:|---:|---:|---:|"]
    cols = {t: energy_at(board, t - 1)[1] for t in (128, 512)}
    eta = cols[128].regulator_efficiency
    names = (("static (card idle)", lambda e: e.static_j),
             ("HBM", lambda e: e.memory_j / eta), ("MACs", lambda e: e.mac_j / eta),
             ("on-chip buffers", lambda e: e.sram_j / eta), ("SFU", lambda e: e.sfu_j / eta),
             ("clock", lambda e: e.clock_j / eta), ("total", lambda e: e.energy_j))
    for name, get in names:
        cells = []
        for t in (128, 512):
            e = cols[t]
            cells += [f"{get(e) * 1e3:.2f}", f"{get(e) / e.seconds:.2f}"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def instruction_counts(board: Board, context: int) -> dict[str, int]:
    """Instructions per unit of one decode pass as the compiler emits it (one pipeline's
    program, every part and template expanded)."""
    ex = lower(PassSpec("target", tokens=1, context=context), board, load_model(MODEL))
    counts = dict.fromkeys(ex.unit_names, 0)
    for j in ex.order:
        units = full(ex.parts[j]).instrs["unit"]
        for u, name in enumerate(ex.unit_names):
            counts[name] += int((units == u).sum())
    return counts


def unmodelled(board: Board) -> str:
    """The size of each mechanism the model leaves out, from its evidence, at T = 512."""
    s512, _ = energy_at(board, 511)
    counts = instruction_counts(board, 511)
    loads, divisor = counts["LD"], board.duration_divisor
    stream = sum(counts[u] * U280_INSTRUCTION_BYTES[u] for u in counts)
    lines = ["| mechanism (left out) | evidence of its size | added ms at T=512 | tok/s |",
             "|---|---|---:|---:|"]
    cases = [
        ("none (the prediction)", "", 0.0),
        ("each load waits for the previous one's data: one HBM drain per load",
         f"{loads:,} loads per pass / {divisor:g} pipelines x {DRAIN_NS} ns",
         loads * DRAIN_NS * 1e-9 / divisor),
        ("the same, half the loads overlapping", "half of the above",
         loads * DRAIN_NS * 1e-9 / divisor / 2),
        ("instruction fetch from DDR4 not overlapped",
         f"{stream / 1e6:.2f} MB of U280-encoded instructions at {DDR4_CHANNEL_GB_S:g} GB/s x "
         f"0.9115, per pipeline", stream / (DDR4_CHANNEL_GB_S * 1e9 * 0.9115)),
    ]
    for name, why, extra in cases:
        t = s512 + extra
        lines.append(f"| {name} | {why} | {extra * 1e3:.2f} | {1 / t:.1f} |")
    lines.append("")
    lines.append(f"decode pass at T=512: {sum(counts.values()):,} instructions per pipeline "
                 f"program ({', '.join(f'{k} {v:,}' for k, v in counts.items())}); "
                 f"{stream / 1e6:.2f} MB in the U280's encoding")
    return "\n".join(lines)


def vhk158_rows() -> str:
    """Decode on the VHK158: FlightLLM's own configuration against the data sheet's reading."""
    rows = []
    for name, board in (
            ("flightllm-vhk158: FlightLLM's configuration (GiB/s, 0.7 / 0.35)",
             load_board("flightllm-vhk158")),
            ("flightllm on vhk158: decimal GB/s, 0.7 / 0.35 assumed (no measured access model)",
             board_of("vhk158", "flightllm"))):
        r = {}
        for t in (128, 512, 1024):
            r[f"T={t} ms"] = 1e3 * energy_at(board, t - 1)[0]
        rows.append((name, r))
    return table(rows, "{:.4f}")


def main() -> None:
    """Print every round-2 table."""
    board = load_board(BOARD)
    f = board.fit
    print(f"{BOARD}: transfers {f.transfer_basis} (same-channel {f.same_channel_efficiency:.4f}, "
          f"cross-channel {f.cross_channel_efficiency:.4f}), bandwidth {f.bandwidth_reading}, "
          f"divisor {board.duration_divisor:g}\n")
    print(table([("round 2: the U280's access model", prediction_row(board)),
                 ("round 1: FlightLLM's constants", prediction_row(load_board(BOARD, ROUND1)))]))
    print()
    print(breakdown(board))
    print()
    print(vhk158_rows())
    print()
    print(unmodelled(board))


if __name__ == "__main__":
    main()
