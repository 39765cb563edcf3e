"""An FPGA part's data sheet (`fpgas/*.yaml`): facts only, each with its source.

What an accelerator design is fitted to (docs/hardware.md, "FPGAs and designs"): DSP slices
and their kind, logic and on-chip RAM, super logic regions, the off-chip memory the
accelerator streams from, and the network ports a cluster of cards links through. Nothing
here is a design choice; a field the sources do not give is null, and a fit that needs it
says so.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, ValidationInfo, field_validator

from fpgasim.config.memory_access import AccessModel
from fpgasim.config.schema import BANDWIDTH_GB_S, CAPACITY_GIB, PosInt, Strict

#: DSP primitives whose packing rules fpgasim knows (config/fit.py, `DSP_RULES`)
DspKind = Literal["DSP48E2", "DSP58"]


class FpgaMemory(Strict):
    """The off-chip memory the accelerator streams weights and KV cache from."""

    kind: str = Field(min_length=1, max_length=64, description="technology, e.g. HBM2, DDR4")
    capacity_gib: float = Field(
        allow_inf_nan=False, ge=CAPACITY_GIB[0], le=CAPACITY_GIB[1],
        description="capacity for weights and KV cache, GiB",
    )
    bandwidth_gb_s: float = Field(
        allow_inf_nan=False, ge=BANDWIDTH_GB_S[0], le=BANDWIDTH_GB_S[1],
        description="peak bandwidth as the data sheet states it, decimal GB/s",
    )
    channels: PosInt = Field(
        le=1024, description="independent channels (HBM pseudo-channels, DDR channels)"
    )
    interface_clock_mhz: float | None = Field(
        None, gt=0, le=10_000, allow_inf_nan=False,
        description="clock of the memory's fabric interface (e.g. HBM AXI), MHz",
    )
    pj_per_bit: float | None = Field(
        None, ge=0, le=1000, allow_inf_nan=False,
        description="energy per bit moved, pJ (null: the table of engine/energy.py by `kind`)",
    )
    access: AccessModel | None = Field(
        None, description="measured behaviour under access patterns (null: none measured; "
        "designs then run at their own transfer efficiencies, an assumption)",
    )

    @property
    def bytes_per_s(self) -> float:
        """Peak bytes per second (decimal GB/s, as data sheets give it)."""
        return self.bandwidth_gb_s * 1e9

    @field_validator("pj_per_bit")
    @classmethod
    def _energy_counts(cls, value: float | None) -> float | None:
        return zero_or_physical(value, MIN_PJ, "pJ")


#: the smallest nonzero energy per event (pJ) and idle draw (W) a part's file may state:
#: far below any circuit's (a MAC at 7 nm is about 0.03 pJ, docs/energy.md), and far above
#: the denormal floats whose sums underflow to 0 J, which tokens per joule divides by
MIN_PJ = 1e-6
MIN_STATIC_W = 1e-3
#: the lowest regulator efficiency (docs/energy.md's sensitivity runs 0.80-0.95): dynamic
#: energy is divided by it
MIN_REGULATOR_EFFICIENCY = 0.1


def zero_or_physical(value: float | None, floor: float, unit: str) -> float | None:
    """`value` unless it is above 0 but below `floor` (0 is "not counted", a denormal or
    vanishing value only an underflow)."""
    if value is not None and 0 < value < floor:
        raise ValueError(f"0 (not counted) or at least {floor:g} {unit}")
    return value


class FpgaPower(Strict):
    """What the sources state about the card's power (docs/energy.md). Each energy field
    left null takes the value of engine/energy.py's table for the part's family or DSP kind
    (an assumption there, labelled); a cited figure here replaces it."""

    max_w: float | None = Field(
        None, gt=0, le=10_000, allow_inf_nan=False,
        description="the card's or kit's maximum (rated) power, W",
    )
    static_w: float | None = Field(
        None, ge=0, le=10_000, allow_inf_nan=False,
        description="the card's draw configured and idle (part leakage, memory background, "
        "card), W; at most max_w",
    )
    mac_pj: float | None = Field(
        None, ge=0, le=1000, allow_inf_nan=False,
        description="energy per MAC at the design's precision, operands' routing included, pJ",
    )
    sram_pj_per_bit: float | None = Field(
        None, ge=0, le=1000, allow_inf_nan=False,
        description="on-chip buffer (BRAM/URAM) energy per bit written or read, pJ",
    )
    sfu_pj: float | None = Field(
        None, ge=0, le=10_000, allow_inf_nan=False,
        description="special-function energy per element pass, pJ",
    )
    clock_pj_per_dsp_cycle: float | None = Field(
        None, ge=0, le=1000, allow_inf_nan=False,
        description="clock tree and pipeline registers per used DSP slice per cycle, pJ",
    )
    regulator_efficiency: float | None = Field(
        None, ge=MIN_REGULATOR_EFFICIENCY, le=1, allow_inf_nan=False,
        description="share of the card's input power the on-card regulators deliver, "
        "0.1 to 1",
    )

    @field_validator("mac_pj", "sram_pj_per_bit", "sfu_pj", "clock_pj_per_dsp_cycle")
    @classmethod
    def _energy_counts(cls, value: float | None) -> float | None:
        return zero_or_physical(value, MIN_PJ, "pJ")

    @field_validator("static_w")
    @classmethod
    def _static_within_max(cls, value: float | None, info: ValidationInfo) -> float | None:
        zero_or_physical(value, MIN_STATIC_W, "W")
        top = info.data.get("max_w")
        if value is not None and top is not None and value > top:
            raise ValueError(
                f"above max_w = {top:g} W: a card's idle draw is at most its rated maximum "
                f"(0 to {top:g} W)"
            )
        return value


class FpgaNetwork(Strict):
    """The card's network ports, what links to other cards are built from (docs/hardware.md,
    "Network ports"). Facts of the card; the link layer a cluster runs over them (Aurora,
    Ethernet), its framing and its hop latency are the cluster's (docs/multi-fpga.md, "Links
    and their latency"). A field the sources do not give is null."""

    ports: int | None = Field(
        None, ge=0, le=64,
        description="network ports (cages) on the card, 0: none (null: not in the sources read)",
    )
    connector: str | None = Field(
        None, min_length=1, max_length=32, description="the ports' form factor, e.g. QSFP28",
    )
    lanes_per_port: PosInt | None = Field(
        None, le=16, description="serial transceiver lanes wired to each port",
    )
    lane_gbit_s: float | None = Field(
        None, gt=0, le=1000, allow_inf_nan=False,
        description="line rate of one lane at the port's rated speed, coded bits, Gb/s",
    )
    port_gbit_s: float | None = Field(
        None, gt=0, le=10_000, allow_inf_nan=False,
        description="the port's rated data rate (after line coding and FEC), Gb/s; at most "
        "lanes_per_port x lane_gbit_s",
    )
    coding: str | None = Field(
        None, min_length=1, max_length=64,
        description="line code (and FEC) that turns the lanes' rate into the port's",
    )

    @field_validator("port_gbit_s")
    @classmethod
    def _within_lanes(cls, value: float | None, info: ValidationInfo) -> float | None:
        lanes, lane = info.data.get("lanes_per_port"), info.data.get("lane_gbit_s")
        if value is not None and lanes is not None and lane is not None and value > lanes * lane:
            raise ValueError(
                f"above lanes_per_port x lane_gbit_s = {lanes * lane:g} Gb/s: a port carries at "
                f"most what its lanes signal (0 to {lanes * lane:g} Gb/s)"
            )
        return value

    @property
    def coding_overhead(self) -> float | None:
        """Share of the lanes' line rate the line code and FEC take (64b/66b: 2/66); None when
        a rate is unknown."""
        if self.port_gbit_s is None or self.lanes_per_port is None or self.lane_gbit_s is None:
            return None
        return 1 - self.port_gbit_s / (self.lanes_per_port * self.lane_gbit_s)

    @property
    def port_bytes_per_s(self) -> float | None:
        """One port's rated data rate, bytes per second, one direction (None: unknown)."""
        return None if self.port_gbit_s is None else self.port_gbit_s * 1e9 / 8


class Citation(Strict):
    """One document a data sheet's facts come from."""

    key: str = Field(min_length=1, max_length=16, description="the tag used in comments, e.g. D")
    what: str = Field(min_length=1, max_length=300, description="document ID and title")
    where: str = Field("", max_length=500, description="section, table and address read")


class Fpga(Strict):
    """An FPGA part (or card) as its data sheet describes it."""

    name: str = Field(min_length=1, max_length=64, description="short id, e.g. u280")
    description: str = Field("", max_length=500, description="human-readable name")
    part: str = Field(min_length=1, max_length=64, description="device, e.g. XCU280")
    family: Literal["UltraScale+", "Versal"] = Field(description="AMD device family")
    dsps: PosInt | None = Field(
        None, le=10**6, description="DSP slices (null: not in the sources read)"
    )
    dsp_kind: DspKind = Field(description="DSP primitive: DSP48E2 (UltraScale+), DSP58 (Versal)")
    luts_k: PosInt | None = Field(None, le=10**6, description="LUTs, thousands")
    bram36: int | None = Field(None, ge=0, le=10**6, description="36 Kb block RAMs")
    uram: int | None = Field(None, ge=0, le=10**6, description="288 Kb UltraRAMs")
    slrs: PosInt | None = Field(None, le=16, description="super logic regions (dies)")
    network: FpgaNetwork = FpgaNetwork()
    platform_dsps: tuple[int, ...] | None = Field(
        None, strict=False, min_length=1, max_length=16,
        description="DSP slices per SLR (SLR0 first) the card's platform leaves a design, its "
        "static region (shell) taking the rest (null: not in the sources; the whole part)",
    )
    memory: FpgaMemory
    power: FpgaPower = FpgaPower()
    sources: tuple[Citation, ...] = Field(
        default=(), strict=False, max_length=32, description="documents the facts come from"
    )

    @field_validator("platform_dsps")
    @classmethod
    def _platform_within_part(cls, value: tuple[int, ...] | None,
                              info: ValidationInfo) -> tuple[int, ...] | None:
        if value is None:
            return value
        dsps, slrs = info.data.get("dsps"), info.data.get("slrs")
        if slrs is not None and len(value) != slrs:
            raise ValueError(f"one count per SLR: {len(value)} given, slrs = {slrs}")
        if any(v < 0 for v in value) or (dsps is not None and sum(value) > dsps):
            raise ValueError(f"counts from 0 summing to at most dsps = {dsps}")
        return value

    @property
    def design_dsps(self) -> int | None:
        """DSP slices a design may use: the platform's per-SLR share summed, else the
        part's (None: unknown)."""
        return sum(self.platform_dsps) if self.platform_dsps is not None else self.dsps

    @property
    def slr_dsps(self) -> tuple[int, ...] | None:
        """DSP slices a design may use in each SLR, largest first: the platform's shares,
        else the part's split evenly (None: a count is unknown)."""
        if self.platform_dsps is not None:
            return tuple(sorted(self.platform_dsps, reverse=True))
        if self.dsps is None or self.slrs is None:
            return None
        return (self.dsps // self.slrs,) * self.slrs

    @field_validator("power")
    @classmethod
    def _some_energy(cls, power: FpgaPower, info: ValidationInfo) -> FpgaPower:
        """Not every energy constant 0 (a null one takes docs/energy.md's table, above 0):
        a pass would cost 0 J, and tokens per joule divides by it."""
        memory = info.data.get("memory")
        given = [power.static_w, power.mac_pj, power.sram_pj_per_bit, power.sfu_pj,
                 power.clock_pj_per_dsp_cycle, getattr(memory, "pj_per_bit", None)]
        if all(v == 0 for v in given):
            raise ValueError("static_w, mac_pj, sram_pj_per_bit, sfu_pj, "
                             "clock_pj_per_dsp_cycle and memory.pj_per_bit are all 0: a pass "
                             "would cost 0 J and tokens per joule is undefined; give one "
                             "above 0 (or null: docs/energy.md's table)")
        return power

    @property
    def onchip_mb(self) -> float | None:
        """Block RAM plus UltraRAM, Mb (36 Kb and 288 Kb each); None when either is unknown."""
        if self.bram36 is None or self.uram is None:
            return None
        return (self.bram36 * 36 + self.uram * 288) / 1024
