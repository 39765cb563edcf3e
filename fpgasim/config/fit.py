"""A design fitted to an FPGA: its arrays, pipelines and memory channels, by a documented rule.

docs/hardware.md, "Fitting a design to a part", states the rule and its sources. In short:

- **DSPs per MAC** follow the recipe's precision and the part's DSP kind (`dsp_rule`): int8
  on DSP48E2 packs two MACs that share a weight (AMD WP486), on DSP58 three terms of one dot
  product (AMD AM004); fp16 takes one DSP58 in its floating-point mode (AM004, UG907) and,
  an assumption, one DSP48E2 (the 11-bit mantissa product in its 27x18 multiplier, the add in
  logic; sensitivity: 2 per MAC). An MM and an MV array of one pipeline are one configurable
  DSP chain (FlightLLM's MPE), so a pipeline needs the larger of the two.
- **Arrays.** A design may fix its MM array (`mm_cols`), fix it per named part
  (`mm_by_fpga`, the study's table), or leave it to the fit: `per_slr` designs take the
  largest N x 16 MACs per row whose chain fits one SLR's share of the DSPs; `one`-pipeline
  designs scale the array of the listed part of the same DSP kind closest in DSP count by
  the ratio of DSP counts. The MV array is `mv_lanes` x `mv_macs_per_lane` (null: a quarter
  of the MM array, FlightLLM's 1024 of 4096).
- **Pipelines.** `per_slr`: one pipeline per SLR, fewer if the on-chip RAM cannot hold their
  buffers or the memory channels cannot feed them (ceil(ports / ports per pipeline): a
  pipeline no channel feeds is not built); they run side by side, each on its share of
  every layer, so every duration is divided by the pipelines the memory channels can feed:
  min(built, ports / ports per pipeline) (docs/validation.md, "FlightLLM on U280",
  hypothesis H1: 3.2 on VHK158, 3 on U280). A part with fewer channels than one pipeline's
  ports shares them: one pipeline, each port at bandwidth / ports per pipeline. `one`: a
  single pipeline over every port.
- **The platform's share.** A card's platform (its static region, the shell) keeps some DSP
  slices; a design is fitted to what it leaves (`Fpga.platform_dsps`, per SLR), and its
  pipelines go to the SLRs with the most (the array fits the smallest of those).

A design that cannot place one pipeline (too few DSPs for the smallest fitted array, too
little on-chip RAM) raises `DesignDoesNotFit`, naming the resource, the need and the part's
amount. A design whose fixed arrays exceed the part's DSPs is fitted and marked
(`Fit.fits_dsps` False): results flag it, they are not refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import Field

from fpgasim.config.design import Design, Recipe
from fpgasim.config.fpga import Fpga
from fpgasim.config.memory_access import TransferEfficiency, transfer_efficiencies
from fpgasim.config.schema import Strict
from fpgasim.errors import ConfigError

#: bytes of one row of each FlightLLM buffer (docs/flightllm-model.md §1): A and global hold
#: 16 banks of 16 B per A channel; B 32 B (MM mode), meta 16 B, FSB 1 B, bias 64 B
A_ROW_BYTES_PER_CHANNEL = 16 * 16
GLOBAL_ROW_BYTES_PER_CHANNEL = 16 * 16
B_ROW_BYTES = 32
META_ROW_BYTES = 16
FSB_ROW_BYTES = 1
BIAS_ROW_BYTES = 64
#: the largest array column count the fit tries (N blocks of 16 per row)
MAX_N_BLOCKS = 4096


class DesignDoesNotFit(ConfigError):
    """The part lacks a resource the design needs for even one pipeline."""


@dataclass(frozen=True)
class DspRule:
    """DSP slices per MAC for a precision on a DSP kind, and along which axis MACs pack."""

    kind: str
    precision: str
    macs_per_slice: int
    packs_along: str  # "tokens": MACs that share a weight; "k": terms of one dot product
    source: str
    assumption: bool = False

    def slices(self, tokens: int, outputs: int, k: int) -> int:
        """Slices of an array of tokens x outputs x k MACs per cycle under this rule."""
        if self.packs_along == "tokens":
            return math.ceil(tokens / self.macs_per_slice) * outputs * k
        if self.packs_along == "k":
            return tokens * outputs * math.ceil(k / self.macs_per_slice)
        return tokens * outputs * k


_RULES = {
    ("DSP48E2", "int8"): DspRule(
        "DSP48E2", "int8", 2, "tokens",
        "AMD WP486: two int8 MACs that share one weight per DSP48E2 (27x18 multiplier)"),
    ("DSP58", "int8"): DspRule(
        "DSP58", "int8", 3, "k",
        "AMD AM004: DSP58 int8 vector dot-product mode, three 9x8 products summed"),
    ("DSP58", "fp16"): DspRule(
        "DSP58", "fp16", 1, "none",
        "AMD AM004 / UG907: DSPFP32 mode, one floating-point multiply-add per DSP58 (fp16 "
        "inputs, fp32 accumulation)"),
    ("DSP48E2", "fp16"): DspRule(
        "DSP48E2", "fp16", 1, "none",
        "assumption: the 11-bit fp16 mantissa product in one 27x18 multiplier, the add in "
        "logic (sensitivity: 2 slices per MAC, docs/hardware.md)", assumption=True),
}


def precision_of(recipe: Recipe) -> str:
    """The MAC precision of a recipe: fp16 if weights or activations are 16-bit, else int8
    (int4 weights are multiplied as int8: no AMD packing rule for int4 is published)."""
    return "fp16" if max(recipe.weight_bits, recipe.activation_bits) > 8 else "int8"


def dsp_rule(kind: str, recipe: Recipe) -> DspRule:
    """The packing rule of a DSP kind at the recipe's MAC precision."""
    return _RULES[kind, precision_of(recipe)]


class Fit(Strict):
    """What fitting a design to a part decided, and the resources it uses."""

    pipelines: float = Field(description="effective pipelines: every duration is divided by it")
    pipelines_built: int = Field(description="pipelines built (their DSPs and buffers count)")
    binding_resource: str = Field(description="what limits the pipelines")
    ports: int = Field(description="logical memory channels")
    ports_per_pipeline: int
    channels_a: int = Field(description="A/global channels of one pipeline")
    port_bytes_per_s: float = Field(description="peak bytes/s of one logical channel")
    bandwidth_reading: str = Field(description="how the design reads the part's GB/s")
    same_channel_efficiency: float = Field(description="same-channel transfers, share of peak")
    cross_channel_efficiency: float = Field(description="cross-channel transfers, share of peak")
    transfer_basis: str = Field(description="what the efficiencies rest on "
                                "(memory_access.TransferEfficiency.basis)")
    transfer_note: str = Field(description="the efficiencies' basis in words")
    mm_rows: int
    mm_cols: int
    mm_source: str = Field(description="where the MM array comes from")
    mv_lanes: int
    mv_macs_per_lane: int
    dsp_rule: str
    dsp_rule_assumed: bool
    mm_dsps: int = Field(description="DSPs of one pipeline's MM array")
    mv_dsps: int = Field(description="DSPs of one pipeline's MV array")
    dsps_used: int
    dsps_available: int | None = Field(description="DSPs a design may use: the part's, less "
                                       "its platform's share where the sources give it")
    slr_dsps: int | None = Field(None, description="DSPs each per-SLR pipeline may use (the "
                                 "smallest share of the SLRs it is built in; None: one "
                                 "pipeline over the part, or unknown)")
    platform_dsps: int | None = Field(None, description="DSPs the card's platform keeps "
                                      "(None: not in the sources)")
    buffer_mb: float = Field(description="on-chip buffers of one pipeline, Mb")
    onchip_mb_used: float
    onchip_mb_available: float | None

    @property
    def mm_macs_per_cycle(self) -> int:
        """One pipeline's MM array, MACs per cycle."""
        return self.mm_rows * self.mm_cols

    @property
    def mv_macs_per_cycle(self) -> int:
        """One pipeline's MV array (all lanes), MACs per cycle."""
        return self.mv_lanes * self.mv_macs_per_lane

    @property
    def fits_dsps(self) -> bool | None:
        """Whether the built pipelines' DSPs fit what the part leaves a design, each per-SLR
        pipeline within its SLR's share (None: a count is unknown)."""
        if self.dsps_available is None:
            return None
        chain = max(self.mm_dsps, self.mv_dsps)
        return self.dsps_used <= self.dsps_available and (
            self.slr_dsps is None or chain <= self.slr_dsps)

    @property
    def fits_onchip(self) -> bool | None:
        """Whether the built pipelines' buffers fit the part's on-chip RAM (None: unknown)."""
        if self.onchip_mb_available is None:
            return None
        return self.onchip_mb_used <= self.onchip_mb_available

    @property
    def fits(self) -> bool | None:
        """Every known resource fits (None when a count the check needs is unknown)."""
        checks = [self.fits_dsps, self.fits_onchip]
        if any(c is False for c in checks):
            return False
        return None if any(c is None for c in checks) else True


def buffer_bytes(design: Design, channels_a: int) -> int:
    """Bytes of one pipeline's on-chip buffers: depths x row widths (section 1)."""
    b = design.buffers
    return (b.a * A_ROW_BYTES_PER_CHANNEL * channels_a
            + b.global_ * GLOBAL_ROW_BYTES_PER_CHANNEL * channels_a
            + b.b * B_ROW_BYTES + b.meta * META_ROW_BYTES + b.fsb * FSB_ROW_BYTES
            + b.bias * BIAS_ROW_BYTES)


def _chain_dsps(rule: DspRule, design: Design, rows: int, cols: int) -> tuple[int, int, int]:
    """(MM slices, MV slices, MV MACs per lane) of one pipeline with an MM array rows x cols."""
    k = design.compiler.block
    per_lane = design.mv_macs_per_lane or rows * cols // 4
    mm = rule.slices(rows, cols // k, k)
    mv = rule.slices(design.mv_lanes, max(1, per_lane // k), k)
    return mm, mv, per_lane


def _mm_array(fpga: Fpga, design: Design, rule: DspRule, named: Callable[[str], Fpga],
              built: int) -> tuple[int, int, str]:
    """(rows, cols, where they come from) of the MM array on this part, for `built`
    pipelines (a `per_slr` design fits the smallest share of the SLRs they go to)."""
    for entry in design.mm_by_fpga:
        if entry.fpga == fpga.name:
            return entry.rows, entry.cols, f"design table for {fpga.name}"
    if design.mm_cols is not None:
        return design.mm_rows, design.mm_cols, "design"
    k = design.compiler.block
    if fpga.dsps is None:
        raise ConfigError(f"fpga {fpga.name}", "dsps", None,
                          f"a DSP count: design {design.name} sizes its MM array from the part's "
                          "DSPs (give mm_cols to fix the array instead)")
    if design.pipelines == "per_slr":
        shares = fpga.slr_dsps
        if shares is None:
            raise ConfigError(f"fpga {fpga.name}", "slrs", None,
                              f"an SLR count: design {design.name} builds one pipeline per SLR")
        budget = shares[built - 1]
        best = 0
        for n in range(1, MAX_N_BLOCKS + 1):
            mm, mv, _ = _chain_dsps(rule, design, design.mm_rows, n * k)
            if max(mm, mv) > budget:
                break
            best = n
        if best == 0:
            mm, mv, _ = _chain_dsps(rule, design, design.mm_rows, k)
            raise DesignDoesNotFit(
                f"fpga {fpga.name}", "dsps", fpga.dsps,
                f"at least {max(mm, mv)} per SLR a design may use for the smallest "
                f"{design.mm_rows}x{k} array of design {design.name} ({rule.kind} "
                f"{rule.precision}); {fpga.name} leaves {budget}")
        where = "per SLR" if fpga.platform_dsps is None else "in an SLR the platform leaves"
        return design.mm_rows, best * k, f"fitted: the largest array whose chain fits {budget} " \
            f"{rule.kind} {where}"
    refs = [(named(e.fpga), e) for e in design.mm_by_fpga]
    refs = [(f, e) for f, e in refs if f.dsp_kind == fpga.dsp_kind and f.design_dsps]
    if not refs:
        raise ConfigError(f"design {design.name}", "mm_cols", None,
                          f"an MM array for {fpga.name} ({fpga.dsp_kind}): no listed part of that "
                          "DSP kind to scale from")
    mine = fpga.design_dsps
    ref, entry = min(refs, key=lambda fe: abs(math.log(fe[0].design_dsps / mine)))
    cols = max(k, int(entry.cols * mine / ref.design_dsps) // k * k)
    return entry.rows, cols, f"scaled from {ref.name}'s {entry.rows}x{entry.cols} by DSPs " \
        f"({mine} / {ref.design_dsps})"


def fit(fpga: Fpga, design: Design, named: Callable[[str], Fpga]) -> Fit:
    """Fit `design` to `fpga` (module docstring); `named` loads a shipped part by name."""
    rule = dsp_rule(fpga.dsp_kind, design.recipe)
    mem = design.memory
    ports = mem.ports or fpga.memory.channels
    channels_a = mem.channels_a or ports
    per_pipe = mem.ports_per_pipeline or ports
    buffer_mb = buffer_bytes(design, channels_a) * 8 / 2**20
    onchip = fpga.onchip_mb
    feed = ports / per_pipe
    limits: dict[str, float] = {}
    if design.pipelines == "per_slr":
        if fpga.slrs is None:
            raise ConfigError(f"fpga {fpga.name}", "slrs", None,
                              f"an SLR count: design {design.name} builds one pipeline per SLR")
        limits["SLRs"] = fpga.slrs
        if onchip is not None:
            by_ram = math.floor(onchip / buffer_mb)
            if by_ram < 1:
                raise DesignDoesNotFit(
                    f"fpga {fpga.name}", "bram36/uram", f"{onchip:.1f} Mb",
                    f"at least {buffer_mb:.1f} Mb of on-chip RAM for one pipeline's buffers "
                    f"(design {design.name})")
            limits["on-chip RAM"] = by_ram
        # no more pipelines than the channels feed: a pipeline no channel feeds is not built
        built = int(min(*limits.values(), max(1, math.ceil(feed))))
    else:
        limits["one pipeline (design)"] = 1
        built = 1
    rows, cols, source = _mm_array(fpga, design, rule, named, built)
    mm_dsps, mv_dsps, per_lane = _chain_dsps(rule, design, rows, cols)
    scale = 1.024**3 if mem.bandwidth_reading == "gib" else 1.0
    bandwidth = fpga.memory.bandwidth_gb_s * scale * 1e9  # in this order, as FlightLLM's model
    if feed >= 1:
        limits["memory channels"] = feed
        pipelines = min(built, feed)
        port_rate = bandwidth / ports
    else:  # the pipeline's ports share the part's fewer channels
        limits["memory channels"] = 1.0
        pipelines = 1.0
        port_rate = bandwidth / per_pipe
    binding = min(limits, key=lambda k: (limits[k], k == "memory channels"))
    if feed < 1:
        binding = "memory channels"
    shares = fpga.slr_dsps
    slr_dsps = shares[built - 1] if design.pipelines == "per_slr" and shares else None
    platform = (fpga.dsps - fpga.design_dsps
                if fpga.platform_dsps is not None and fpga.dsps is not None else None)
    transfer = _transfers(fpga, design, port_rate, ports)
    return Fit(
        pipelines=float(pipelines),
        pipelines_built=built,
        binding_resource=binding,
        ports=max(ports, per_pipe) if feed < 1 else ports,
        ports_per_pipeline=per_pipe,
        channels_a=channels_a,
        port_bytes_per_s=port_rate,
        bandwidth_reading=mem.bandwidth_reading,
        same_channel_efficiency=transfer.same,
        cross_channel_efficiency=transfer.cross,
        transfer_basis=transfer.basis,
        transfer_note=transfer.note,
        mm_rows=rows,
        mm_cols=cols,
        mm_source=source,
        mv_lanes=design.mv_lanes,
        mv_macs_per_lane=per_lane,
        dsp_rule=rule.source,
        dsp_rule_assumed=rule.assumption,
        mm_dsps=mm_dsps,
        mv_dsps=mv_dsps,
        dsps_used=built * max(mm_dsps, mv_dsps),
        dsps_available=fpga.design_dsps,
        slr_dsps=slr_dsps,
        platform_dsps=platform,
        buffer_mb=buffer_mb,
        onchip_mb_used=built * buffer_mb,
        onchip_mb_available=onchip,
    )


def _transfers(fpga: Fpga, design: Design, port_rate: float, ports: int) -> TransferEfficiency:
    """The design's transfer efficiencies on this part (memory_access.transfer_efficiencies):
    the part's access model is per pseudo-channel, so it applies where the design's logical
    channels are the part's channels at the data sheet's rate."""
    mem = design.memory
    access = fpga.memory.access
    if mem.transfer_model == "access_pattern" and access is not None and (
            ports != fpga.memory.channels or mem.bandwidth_reading != "decimal"):
        return TransferEfficiency(
            mem.same_channel_efficiency, mem.cross_channel_efficiency, "assumed",
            "the design's logical channels are not the part's pseudo-channels at the data "
            "sheet's rate, which the access model describes: the design's constants, an "
            "assumption")
    return transfer_efficiencies(port_rate / 1e9, access, mem.transfer_model,
                                 mem.same_channel_efficiency, mem.cross_channel_efficiency)
