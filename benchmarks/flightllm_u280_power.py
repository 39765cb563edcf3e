"""Print the blind power prediction of docs/validation.md ("FlightLLM on U280: power").

LLaMA2-7B (`llama2-7b-flightllm`), batch 1, decode at T = 128 and 512 (`--context 127` and
`511`, one token) on boards/flightllm-u280.yaml, `fast` engine, with the energy model of
fpgasim/engine/energy.py (docs/energy.md): board power (W) and tokens/J, first as derived,
then with each energy constant moved across its plausible range, and at the measured speed
of 55 tokens/s (the same energy per token of the dynamic terms, the static power over the
longer time). Markdown on stdout, a few seconds.

The tables are round 1's blind power prediction, a record: the board as derived then, with
FlightLLM's constant transfer efficiencies (`ROUND1`).

Usage: python benchmarks/flightllm_u280_power.py
"""

from __future__ import annotations

from fpgasim.config import load_board, load_model
from fpgasim.engine import get_engine
from fpgasim.engine.energy import (
    CLOCK_PJ_PER_DSP_CYCLE,
    HARD_BLOCK_FACTOR,
    MAC_PJ,
    SRAM_PJ_PER_BIT,
    Energy,
    pass_energy,
)
from fpgasim.simulate import verify_timing

BOARD = "flightllm-u280"
#: the board as round 1 derived it: FlightLLM's constant efficiencies (0.7 / 0.35)
ROUND1 = [("design.memory.transfer_model", "design_constants")]
MODEL = "llama2-7b-flightllm"
#: FlightLLM's U280 decode speed as its test-demo README states it (issue 31)
MEASURED_TOKENS_PER_S = 55.0
_MAC = MAC_PJ["DSP48E2", "int8"].value
_SRAM = SRAM_PJ_PER_BIT["UltraScale+"].value

#: (what is varied, --vary-style changes): each constant across its plausible range
SENSITIVITY: tuple[tuple[str, list[tuple[str, float]]], ...] = (
    ("as derived", []),
    ("static 19.0 W (half the readout: the readout was under load)",
     [("fpga.power.static_w", 19.02)]),
    ("static 57.1 W (1.5 x the readout: a hotter die, leakage up)",
     [("fpga.power.static_w", 57.06)]),
    ("HBM 3.97 pJ/bit (the DRAM device alone, O'Connor 2017)",
     [("fpga.memory.pj_per_bit", 3.97)]),
    ("HBM 10 pJ/bit (7 + a further 3 for the FPGA-side PHY)",
     [("fpga.memory.pj_per_bit", 10.0)]),
    ("hard-block factor 1 (MAC, BRAM as ASIC cells)",
     [("fpga.power.mac_pj", _MAC / HARD_BLOCK_FACTOR),
      ("fpga.power.sram_pj_per_bit", _SRAM / HARD_BLOCK_FACTOR)]),
    ("hard-block factor 14 (as soft logic, Kuon & Rose)",
     [("fpga.power.mac_pj", _MAC * 14 / HARD_BLOCK_FACTOR),
      ("fpga.power.sram_pj_per_bit", _SRAM * 14 / HARD_BLOCK_FACTOR)]),
    ("clock 0 pJ per DSP-cycle", [("fpga.power.clock_pj_per_dsp_cycle", 0.0)]),
    ("clock 4 pJ per DSP-cycle (the logic around each DSP too)",
     [("fpga.power.clock_pj_per_dsp_cycle", 4.0 * CLOCK_PJ_PER_DSP_CYCLE["UltraScale+"].value)]),
    ("regulators 0.80", [("fpga.power.regulator_efficiency", 0.80)]),
    ("regulators 0.95", [("fpga.power.regulator_efficiency", 0.95)]),
    ("all low (static 19.0, HBM 3.97, factor 1, clock 0, regulators 0.95)",
     [("fpga.power.static_w", 19.02), ("fpga.memory.pj_per_bit", 3.97),
      ("fpga.power.mac_pj", _MAC / HARD_BLOCK_FACTOR),
      ("fpga.power.sram_pj_per_bit", _SRAM / HARD_BLOCK_FACTOR),
      ("fpga.power.clock_pj_per_dsp_cycle", 0.0), ("fpga.power.regulator_efficiency", 0.95)]),
    ("all high (static 57.1, HBM 10, factor 14, clock 4, regulators 0.80)",
     [("fpga.power.static_w", 57.06), ("fpga.memory.pj_per_bit", 10.0),
      ("fpga.power.mac_pj", _MAC * 14 / HARD_BLOCK_FACTOR),
      ("fpga.power.sram_pj_per_bit", _SRAM * 14 / HARD_BLOCK_FACTOR),
      ("fpga.power.clock_pj_per_dsp_cycle", 4.0), ("fpga.power.regulator_efficiency", 0.80)]),
)


def decode_energy(changes: list[tuple[str, float]], context: int) -> Energy:
    """Energy of one decode pass at `context` on the board with `changes`."""
    board = load_board(BOARD, [*ROUND1, *changes])
    timing = verify_timing(get_engine("fast"), board, load_model(MODEL), 1, context)
    return pass_energy(timing, board, "fast")


def at_speed(energy: Energy, tokens_per_s: float) -> tuple[float, float]:
    """(W, tokens/J) at another speed: the same per-token energy of the work (memory, MACs,
    buffers, SFU), the static and clock power over the longer time."""
    clock_w = energy.clock_j / energy.regulator_efficiency / energy.seconds
    work_j = energy.dynamic_j - clock_w * energy.seconds
    joules = (energy.static_w + clock_w) / tokens_per_s + work_j
    return joules * tokens_per_s, 1.0 / joules


def breakdown() -> str:
    """The components of one token's energy at T = 128 and 512, as derived."""
    lines = ["| component | T=128 mJ | T=128 W | T=512 mJ | T=512 W |", "|---|---:|---:|---:|---:|"]
    cols = {t: decode_energy([], t - 1) for t in (128, 512)}
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


def main() -> None:
    """Print the breakdown and the sensitivity table."""
    print(f"{BOARD}, {MODEL}, batch 1, fast engine; dynamic terms at the card input "
          "(over the regulators)\n")
    print(breakdown())
    print()
    print("| case | T=128 tok/s | T=128 W | T=128 tok/J | T=512 tok/s | T=512 W | T=512 tok/J "
          f"| at {MEASURED_TOKENS_PER_S:g} tok/s (T=512 energy): W | tok/J |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, changes in SENSITIVITY:
        e128, e512 = decode_energy(changes, 127), decode_energy(changes, 511)
        w55, j55 = at_speed(e512, MEASURED_TOKENS_PER_S)
        print(f"| {name} | {1 / e128.seconds:.1f} | {e128.power_w:.1f} | "
              f"{1 / e128.energy_j:.3f} | {1 / e512.seconds:.1f} | {e512.power_w:.1f} | "
              f"{1 / e512.energy_j:.3f} | {w55:.1f} | {j55:.3f} |")


if __name__ == "__main__":
    main()
