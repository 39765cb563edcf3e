"""A board: an FPGA part plus an accelerator design, fitted (what every engine runs on).

`boards/*.yaml` names pairs (`u280` = the study's arrays on the U280, `flightllm-vhk158` =
FlightLLM's design on the VHK158), optionally with `overrides` of single fields, argued in the
file; `--fpga F --design D` builds any pair. Either way the design is fitted to the part
(config/fit.py) and the result is one frozen `Board`: the two files as loaded, and the fit.
"""

from __future__ import annotations

from pydantic import Field, PrivateAttr

from fpgasim.config.cluster import Cluster
from fpgasim.config.design import Compiler, Design, Padding, Recipe, Sfu
from fpgasim.config.fit import Fit
from fpgasim.config.fpga import Fpga, FpgaMemory
from fpgasim.config.schema import Strict

#: scalar values an override may set
Scalar = float | int | str | bool | None


class BoardFile(Strict):
    """A named (FPGA, design) pair: `boards/NAME.yaml`."""

    name: str = Field(min_length=1, max_length=64, description="short id, e.g. u280")
    description: str = Field("", max_length=500, description="human-readable name")
    fpga: str = Field(min_length=1, max_length=200, description="an fpgas/ name or a path")
    design: str = Field(min_length=1, max_length=200, description="a designs/ name or a path")
    overrides: dict[str, Scalar] = Field(
        default_factory=dict, max_length=32, strict=False,
        description="single fields changed for this pair: 'design.x.y' or 'fpga.x' -> value",
    )


class Board(Strict):
    """An FPGA and a design fitted to it: the machine a pass is compiled for and timed on."""

    #: the pair's name and, after it, each changed field (`--vary`): no length limit, as
    #: the changes a command takes are unbounded (the files' own names are bounded)
    name: str = Field(min_length=1)
    description: str = Field("", max_length=1000)
    fpga: Fpga
    design: Design
    fit: Fit
    #: the cards the model runs on and how it is split (one card unless --cards says more)
    cluster: Cluster = Cluster()
    _hash: int | None = PrivateAttr(None)

    def _fields(self) -> tuple:
        """What a board is: equality and the hash read these alone (not the cached hash
        or where the board was read from, private attributes pydantic would compare)."""
        return (self.name, self.description, self.fpga, self.design, self.fit, self.cluster)

    def __hash__(self) -> int:
        """The fields' hash, computed once: boards key every pass the engines remember."""
        if self._hash is None:
            self._hash = hash(self._fields())
        return self._hash

    def __eq__(self, other: object) -> bool:
        """Equal fields (a board hashed already equals a fresh copy of it)."""
        if not isinstance(other, Board):
            return NotImplemented
        return self is other or self._fields() == other._fields()

    def with_cluster(self, cluster: Cluster) -> Board:
        """This board on `cluster` (a fresh identity: the remembered hash is not copied)."""
        board = self.model_copy(update={"cluster": cluster})
        board._hash = None
        return board

    @property
    def lowering(self) -> str:
        """The compiler that lowers passes for this board: its design's `lowering` (FlightLLM's,
        generalised, unless the design names another)."""
        return self.design.lowering

    @property
    def clock_mhz(self) -> float:
        """The design's clock, MHz."""
        return self.design.clock_mhz

    @property
    def clock_hz(self) -> float:
        """Cycles per second, before the duration divisor."""
        return self.design.clock_mhz * 1e6

    @property
    def duration_divisor(self) -> float:
        """Effective pipelines: seconds = cycles / (clock_hz x this) (config/fit.py)."""
        return self.fit.pipelines

    @property
    def channel_bytes_per_s(self) -> float:
        """Peak bytes per second of one logical memory channel, as the design reads the part."""
        return self.fit.port_bytes_per_s

    @property
    def memory(self) -> FpgaMemory:
        """The part's off-chip memory (capacity, bandwidth as published, channels)."""
        return self.fpga.memory

    @property
    def bandwidth_bytes_per_s(self) -> float:
        """The whole memory's peak as the design reads it: ports x the per-port rate."""
        return self.fit.port_bytes_per_s * self.fit.ports

    @property
    def recipe(self) -> Recipe:
        """Precision and compression the design runs models at."""
        return self.design.recipe

    @property
    def padding(self) -> Padding:
        """Token alignments."""
        return self.design.padding

    @property
    def sfu(self) -> Sfu:
        """The special-function unit of one pipeline."""
        return self.design.sfu

    @property
    def compiler(self) -> Compiler:
        """FlightLLM's compiler parameters."""
        return self.design.compiler

    @property
    def mm_macs_per_cycle(self) -> int:
        """One pipeline's MM array, MACs per cycle."""
        return self.fit.mm_macs_per_cycle

    @property
    def mv_macs_per_cycle(self) -> int:
        """One pipeline's MV array (all lanes), MACs per cycle."""
        return self.fit.mv_macs_per_cycle

    @property
    def peak_macs_per_cycle(self) -> float:
        """The MM arrays of the effective pipelines: the board's peak compute rate."""
        return self.fit.mm_macs_per_cycle * self.fit.pipelines

    def columns(self) -> dict:
        """What a result row says about its board: the part and the design, the fitted
        pipelines and DSPs, and whether they fit (None: a count the check needs is unknown)."""
        f = self.fit
        return {
            "fpga": self.fpga.name,
            "design": self.design.name,
            "pipelines": f.pipelines,
            "dsps_used": f.dsps_used,
            "dsps_available": f.dsps_available,
            "fits_dsps": f.fits_dsps,
        }

    def fit_report(self) -> dict:
        """The fitted design and the resources it uses (`fpgasim design fit`): pipelines and
        channels, how it reads the part's bandwidth and what its transfers run at, arrays,
        DSPs and on-chip RAM against the part's, what binds, whether it fits (None where a
        count the check needs is unknown)."""
        f = self.fit
        return {
            "board": self.name,
            "fpga": self.fpga.name,
            "design": self.design.name,
            "recipe": self.recipe.name,
            "pipelines": f.pipelines,
            "pipelines_built": f.pipelines_built,
            "binding_resource": f.binding_resource,
            "channels_per_pipeline": f.ports_per_pipeline,
            "channels_a": f.channels_a,
            "memory_channels": f.ports,
            "channel_gb_s": f.port_bytes_per_s / 1e9,
            "bandwidth_gb_s": self.bandwidth_bytes_per_s / 1e9,
            "bandwidth_reading": f.bandwidth_reading,
            "same_channel_efficiency": f.same_channel_efficiency,
            "cross_channel_efficiency": f.cross_channel_efficiency,
            "transfer_basis": f.transfer_basis,
            "mm_array": f"{f.mm_rows}x{f.mm_cols}",
            "mm_macs_per_cycle": f.mm_macs_per_cycle,
            "mm_source": f.mm_source,
            "mv_lanes": f.mv_lanes,
            "mv_macs_per_cycle": f.mv_macs_per_cycle,
            "peak_tmac_s": self.peak_macs_per_cycle * self.clock_hz / 1e12,
            "dsp_kind": self.fpga.dsp_kind,
            "dsp_rule": f.dsp_rule,
            "dsp_rule_assumed": f.dsp_rule_assumed,
            "mm_dsps": f.mm_dsps,
            "mv_dsps": f.mv_dsps,
            "dsps_used": f.dsps_used,
            "dsps_available": f.dsps_available,
            "platform_dsps": f.platform_dsps,
            "slr_dsps": f.slr_dsps,
            "fits_dsps": f.fits_dsps,
            "buffer_mb": f.buffer_mb,
            "onchip_mb_used": f.onchip_mb_used,
            "onchip_mb_available": f.onchip_mb_available,
            "fits_onchip": f.fits_onchip,
            "fits": f.fits,
        }
