"""Energy of a pass on a board: the card's static power over the pass's time plus the dynamic
energy of the activity the engines count (docs/energy.md has the formula and every source).

    E = P_static x t + (E_mem + E_mac + E_sram + E_sfu + E_clock) / eta

    E_mem   = 8 x (weight bytes as stored and moved + activation/KV loads + stores) x pJ/bit
              of the memory kind
    E_mac   = MACs x pJ per MAC (DSP kind and the recipe's MAC precision)
    E_sram  = 2 x the same off-chip bytes x 8 x pJ/bit of a BRAM/URAM (each byte written into
              a buffer once and read once by its consumer) + SFU element passes x 2 x the
              activation width (read and written back)
    E_sfu   = SFU element passes (busy cycles x elements per cycle) x pJ per element pass
    E_clock = DSPs used x clock cycles of the pass x pJ per DSP per cycle
    eta     = the on-card regulators' efficiency (dynamic energy is drawn at the card's input)

P_static is the card's draw configured and idle (the part's leakage, the memory's background,
the card's own parts): `fpga.power.static_w` where the sources give it, else the assumption
`STATIC_W_PER_SLR` x SLRs. Every other constant is `fpga.power.*` / `fpga.memory.pj_per_bit`
when the part's file states it, else this module's tables, each entry a `Constant` saying
whether it is cited or an assumption and where it comes from. Invalid constants (negative,
not finite, a static power above `power.max_w`) are refused by the data sheet's schema
(config/fpga.py), one line naming the field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from fpgasim.config.board import Board
from fpgasim.config.fit import precision_of
from fpgasim.engine.timing import Timing

#: Constant-field scaling of switching energy from the 45 nm, 0.9 V of Horowitz's table to a
#: node and core voltage: (node / 45 nm) x (V / 0.9 V)^2 (C ~ feature size, E = C V^2). An
#: assumption (docs/energy.md, "Scaling to the part's node").
HOROWITZ_NODE_NM, HOROWITZ_V = 45.0, 0.9
#: node (nm) and nominal core voltage (V) per family: UltraScale+ 16 nm FinFET, VCCINT 0.85 V
#: (the U280's readout, AMD XD027); Versal 7 nm, VCCINT 0.80 V (assumption: the nominal
#: Versal core rail; not read in DS957/DS960)
FAMILY_NODE = {"UltraScale+": (16.0, 0.85), "Versal": (7.0, 0.80)}
#: energy of a hard block's operation on an FPGA over the same operation in an ASIC cell
#: (operands over programmable routing). Assumption: 4, between 1 (the hard multiplier is an
#: ASIC block) and Kuon & Rose's 12-14x for soft logic (IEEE TCAD 26(2), 2007), which they
#: report shrinks with hard blocks; sensitivity 1-14 in docs/energy.md
HARD_BLOCK_FACTOR = 4.0
#: soft logic over ASIC, dynamic energy: Kuon & Rose 2007 (14x journal, 12x conference; 90 nm)
SOFT_LOGIC_FACTOR = 12.0

#: Horowitz, "Computing's energy problem", ISSCC 2014, Fig. 1.1.9 (45 nm, 0.9 V), pJ, as
#: replicated in public sources (docs/energy.md, "Sources")
H_INT8_MULT, H_INT32_MULT, H_INT32_ADD = 0.2, 3.1, 0.1
H_FP16_MULT, H_FP16_ADD, H_FP32_MULT, H_FP32_ADD = 1.1, 0.4, 3.7, 0.9
H_SRAM_8KB_64BIT_READ = 10.0


def node_scale(family: str) -> float:
    """Switching energy of the family's node relative to Horowitz's 45 nm, 0.9 V."""
    node, volts = FAMILY_NODE[family]
    return (node / HOROWITZ_NODE_NM) * (volts / HOROWITZ_V) ** 2


@dataclass(frozen=True)
class Constant:
    """One energy constant, where it comes from, and whether it is an assumption."""

    value: float
    unit: str
    source: str
    assumption: bool = True


def _mac_table() -> dict[tuple[str, str], Constant]:
    """pJ per MAC by (DSP kind, precision): the DSP's arithmetic at 45 nm (Horowitz) scaled to
    the node and by the hard-block factor, per MAC of the packing rule (config/fit.py)."""
    us, ve = node_scale("UltraScale+"), node_scale("Versal")
    # DSP48E2: one 27x18 multiply (a 32-bit multiply scaled by the bit product) and a 48-bit
    # accumulate per slice and cycle; int8 packs two MACs per slice (AMD WP486)
    dsp48 = H_INT32_MULT * (27 * 18) / (32 * 32) + H_INT32_ADD * 48 / 32
    # DSP58 int8: three 9x8 products summed into a 58-bit accumulator (AMD AM004)
    dsp58_int8 = 3 * H_INT8_MULT * (9 * 8) / (8 * 8) + H_INT32_ADD * 58 / 32
    return {
        ("DSP48E2", "int8"): Constant(
            dsp48 / 2 * us * HARD_BLOCK_FACTOR, "pJ/MAC",
            "assumption: Horowitz 27x18 multiply + 48-bit add per DSP48E2 cycle, 2 MACs per "
            "slice (WP486), x node scale 16 nm x hard-block factor"),
        ("DSP48E2", "fp16"): Constant(
            (dsp48 * HARD_BLOCK_FACTOR + H_FP16_ADD * SOFT_LOGIC_FACTOR) * us, "pJ/MAC",
            "assumption: the mantissa product in one DSP48E2 (as the fit's fp16 rule), the fp16 "
            "add in soft logic (Kuon & Rose factor), 16 nm"),
        ("DSP58", "int8"): Constant(
            dsp58_int8 / 3 * ve * HARD_BLOCK_FACTOR, "pJ/MAC",
            "assumption: Horowitz three 9x8 multiplies + 58-bit add per DSP58 cycle, 3 MACs "
            "per slice (AM004), x node scale 7 nm x hard-block factor"),
        ("DSP58", "fp16"): Constant(
            (H_FP16_MULT + H_FP32_ADD) * ve * HARD_BLOCK_FACTOR, "pJ/MAC",
            "assumption: Horowitz fp16 multiply + fp32 add (DSPFP32 mode, AM004) x node scale "
            "7 nm x hard-block factor"),
    }


MAC_PJ: dict[tuple[str, str], Constant] = _mac_table()

#: on-chip RAM per bit read or written: Horowitz's 8 KB SRAM (a BRAM36 holds 4.5 KB) 64-bit
#: read, 10 pJ, per bit, scaled to the node and by the hard-block factor
SRAM_PJ_PER_BIT: dict[str, Constant] = {
    family: Constant(
        H_SRAM_8KB_64BIT_READ / 64 * node_scale(family) * HARD_BLOCK_FACTOR, "pJ/bit",
        f"assumption: Horowitz 8 KB SRAM 64-bit read / 64 x node scale ({family}) x hard-block "
        "factor; no BRAM/URAM per-access energy is published")
    for family in FAMILY_NODE
}

#: one SFU element pass (exp, scale, normalise) in soft logic: an fp32 multiply and add
#: (Horowitz) x the soft-logic factor, scaled to the node
SFU_PJ: dict[str, Constant] = {
    family: Constant(
        (H_FP32_MULT + H_FP32_ADD) * SOFT_LOGIC_FACTOR * node_scale(family), "pJ/element",
        f"assumption: Horowitz fp32 multiply + add x Kuon & Rose soft-logic factor x node "
        f"scale ({family})")
    for family in FAMILY_NODE
}

#: clock tree, pipeline registers and control per used DSP slice per cycle (UltraScale+);
#: assumption: ~290 registers of a DSP48E2 plus as many in the logic around it at ~3.2 fJ
#: per register-cycle (1 fF x (0.9 V)^2, doubled for the clock wire, at 45 nm, x node scale x
#: hard-block factor): about 1.9 pJ, taken as 1 pJ for the DSP's own registers with the logic
#: around it left to the sensitivity (0-4 pJ, docs/energy.md). Versal: scaled by the node.
CLOCK_PJ_PER_DSP_CYCLE: dict[str, Constant] = {
    "UltraScale+": Constant(1.0, "pJ/DSP/cycle", "assumption: registers and clock of one used "
                            "DSP48E2 per cycle (docs/energy.md)"),
    "Versal": Constant(1.0 * node_scale("Versal") / node_scale("UltraScale+"), "pJ/DSP/cycle",
                       "assumption: the UltraScale+ figure x the node scale 7 nm / 16 nm"),
}

#: off-chip memory energy per bit moved, by `fpga.memory.kind`
MEMORY_PJ_PER_BIT: dict[str, Constant] = {
    "HBM2": Constant(7.0, "pJ/bit", "cited: AMD (Xilinx) blog 'HBM2: Data Fuel for the Alveo "
                     "Engine' (2019), ~7 pJ/bit on Alveo; the device alone ~3.97 (O'Connor et "
                     "al., MICRO 2017) is the low end of the sensitivity", assumption=False),
    "HBM2e": Constant(6.0, "pJ/bit", "cited: Micron HBM2E, 6.0 pJ/bit average device power "
                      "(product page; scope not stated)", assumption=False),
    "DDR4": Constant(28.0, "pJ/bit", "cited: AMD blog above, HBM2 at 0.25x DDR4 DIMMs: 7 / 0.25 "
                     "(Larimi et al., DATE 2021: 25 pJ/bit)", assumption=False),
}

#: the card's idle draw per SLR (die) when its file gives no `power.static_w`: the U280's
#: readout (AMD XD027 example, 12 V PEX 19.15 W + 12 V AUX 18.89 W = 38.04 W, workload not
#: stated, read as idle) over its 3 SLRs. Assumption: leakage, memory background and card
#: overheads scale with the dies; the family's node and memory kind are not corrected for
U280_READOUT_W = 12.136 * 1.578 + 12.111 * 1.560
STATIC_W_PER_SLR = Constant(U280_READOUT_W / 3, "W/SLR",
                            "assumption: the U280's XD027 readout (38.0 W, idle assumed) / 3 "
                            "SLRs, times the part's SLRs")

#: on-card regulators: share of the input power delivered to the rails. Assumption: 0.88, a
#: multiphase buck converter at moderate load (no Alveo figure found); sensitivity 0.8-0.95
REGULATOR_EFFICIENCY = Constant(0.88, "", "assumption: on-card regulator efficiency")


@dataclass(frozen=True)
class EnergyConstants:
    """The constants one board's energy uses, each with its provenance."""

    static_w: Constant
    memory_pj_per_bit: Constant
    mac_pj: Constant
    sram_pj_per_bit: Constant
    sfu_pj: Constant
    clock_pj_per_dsp_cycle: Constant
    regulator_efficiency: Constant

    def table(self) -> list[dict]:
        """One row per constant: name, value, unit, cited or assumed, source."""
        return [{"constant": name, "value": c.value, "unit": c.unit,
                 "basis": "assumption" if c.assumption else "cited", "source": c.source}
                for name, c in self.__dict__.items()]


def _given(value: float | None, unit: str, field: str, fallback: Constant) -> Constant:
    """A value the part's file states (its source is the file's comment), else the table's."""
    if value is None:
        return fallback
    return Constant(float(value), unit, f"the part's data sheet file, {field}", assumption=False)


def energy_constants(board: Board) -> EnergyConstants:
    """The energy constants of a board: its part's file where it states them, else the
    tables above (docs/energy.md)."""
    fpga, power = board.fpga, board.fpga.power
    family = fpga.family
    precision = precision_of(board.recipe)
    mem_kind = fpga.memory.kind
    mem_default = MEMORY_PJ_PER_BIT.get(mem_kind) or Constant(
        MEMORY_PJ_PER_BIT["DDR4"].value, "pJ/bit",
        f"assumption: memory kind {mem_kind} has no entry; DDR4's figure")
    slrs = fpga.slrs or 1
    static_default = Constant(STATIC_W_PER_SLR.value * slrs, "W",
                              f"{STATIC_W_PER_SLR.source} ({slrs})")
    return EnergyConstants(
        static_w=_given(power.static_w, "W", "power.static_w", static_default),
        memory_pj_per_bit=_given(fpga.memory.pj_per_bit, "pJ/bit", "memory.pj_per_bit",
                                 mem_default),
        mac_pj=_given(power.mac_pj, "pJ/MAC", "power.mac_pj", MAC_PJ[fpga.dsp_kind, precision]),
        sram_pj_per_bit=_given(power.sram_pj_per_bit, "pJ/bit", "power.sram_pj_per_bit",
                               SRAM_PJ_PER_BIT[family]),
        sfu_pj=_given(power.sfu_pj, "pJ/element", "power.sfu_pj", SFU_PJ[family]),
        clock_pj_per_dsp_cycle=_given(power.clock_pj_per_dsp_cycle, "pJ/DSP/cycle",
                                      "power.clock_pj_per_dsp_cycle",
                                      CLOCK_PJ_PER_DSP_CYCLE[family]),
        regulator_efficiency=_given(power.regulator_efficiency, "", "power.regulator_efficiency",
                                    REGULATOR_EFFICIENCY),
    )


@dataclass(frozen=True)
class Energy:
    """Energy of a pass (or step): static power over its time, dynamic energy by component."""

    seconds: float
    static_w: float
    memory_j: float
    mac_j: float
    sram_j: float
    sfu_j: float
    clock_j: float
    regulator_efficiency: float

    @property
    def dynamic_j(self) -> float:
        """Dynamic energy at the card's input (the rails' energy over the regulators')."""
        rails = self.memory_j + self.mac_j + self.sram_j + self.sfu_j + self.clock_j
        return rails / self.regulator_efficiency

    @property
    def static_j(self) -> float:
        """The card's idle draw over the time."""
        return self.static_w * self.seconds

    @property
    def energy_j(self) -> float:
        """Static plus dynamic energy, J."""
        return self.static_j + self.dynamic_j

    @property
    def dynamic_w(self) -> float:
        """Mean dynamic power over the time, W."""
        return self.dynamic_j / self.seconds if self.seconds > 0 else 0.0

    @property
    def power_w(self) -> float:
        """Mean card power over the time, W."""
        return self.static_w + self.dynamic_w

    def __add__(self, other: Energy) -> Energy:
        """Sequential passes (a step's verify and draft passes) on one board."""
        return Energy(self.seconds + other.seconds, self.static_w,
                      self.memory_j + other.memory_j, self.mac_j + other.mac_j,
                      self.sram_j + other.sram_j, self.sfu_j + other.sfu_j,
                      self.clock_j + other.clock_j, self.regulator_efficiency)


def offchip_bytes(timing: Timing) -> float:
    """Bytes the off-chip memory moves in the pass: weight loads (every engine counts them at
    the recipe's one weight size, docs/hardware.md "One weight size": FlightLLM's int4,
    q and k at 0.7 of it), activation and KV loads, stores."""
    return float(timing.weight_bytes) + timing.act_load_bytes + timing.act_store_bytes


def pass_energy(timing: Timing, board: Board, engine_name: str,
                constants: EnergyConstants | None = None) -> Energy:
    """The energy of a timed pass (or passes) on `board` (module docstring's formula).

    MACs: the engine's count (event/fast); the analytic engine, which does not count them,
    gives compute cycles x the board's peak MACs per cycle (its compute time is exactly that
    quotient); `engine_name` says which."""
    c = constants or energy_constants(board)
    analytic = engine_name == "analytic"
    macs = timing.compute_cycles * board.peak_macs_per_cycle if analytic else timing.macs
    offchip = offchip_bytes(timing)
    sfu_elements = timing.sfu_cycles * board.sfu.elements_per_cycle
    sram_bits = 2 * offchip * 8 + sfu_elements * 2 * board.recipe.activation_bits
    seconds = timing.seconds
    clock_cycles = seconds * board.clock_hz
    pj = 1e-12
    return Energy(
        seconds=seconds,
        static_w=c.static_w.value,
        memory_j=offchip * 8 * c.memory_pj_per_bit.value * pj,
        mac_j=macs * c.mac_pj.value * pj,
        sram_j=sram_bits * c.sram_pj_per_bit.value * pj,
        sfu_j=sfu_elements * c.sfu_pj.value * pj,
        clock_j=board.fit.dsps_used * clock_cycles * c.clock_pj_per_dsp_cycle.value * pj,
        regulator_efficiency=c.regulator_efficiency.value,
    )


def energy_columns(energy: Energy, tokens: float) -> dict:
    """The energy columns of a result row: power_w, static_w, dynamic_w, energy_j and
    tokens_per_j (`tokens` the pass or step yields)."""
    e = energy.energy_j
    return {
        "power_w": energy.power_w,
        "static_w": energy.static_w,
        "dynamic_w": energy.dynamic_w,
        "energy_j": e,
        "tokens_per_j": tokens / e if e > 0 else math.inf,
    }


def cluster_energy(energy: Energy, cards: int, working: int) -> Energy:
    """The whole cluster's energy of a pass one card's `energy` describes: `working` cards
    do that work side by side (the tensor-parallel cards; 1 for a drafter on one card),
    and every card draws static and clock power over the pass (a pipeline's waiting
    stages, the cards a drafter leaves idle; docs/multi-fpga.md, "How fpgasim runs a
    cluster")."""
    if cards == 1:
        return energy
    return replace(energy, static_w=energy.static_w * cards,
                   memory_j=energy.memory_j * working, mac_j=energy.mac_j * working,
                   sram_j=energy.sram_j * working, sfu_j=energy.sfu_j * working,
                   clock_j=energy.clock_j * cards)
