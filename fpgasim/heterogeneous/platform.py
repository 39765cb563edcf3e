"""Heterogeneous host files (`platforms/*.yaml`): CPU, GPU, the PCIe link between them, precisions.

A Dovetail-style host runs the target model on the CPU (or, for a GPU-only reference host,
on the GPU) and the draft model on the GPU; only tokens and hidden states cross PCIe.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from fpgasim.config.loader import load_file, register_file_kind, resolve
from fpgasim.config.schema import Efficiency, PosFloat, PosInt, Source, Strict

Precision = Literal["fp32", "bf16", "fp16", "int8", "int4"]

#: Bytes per element of each precision.
BYTES_PER_ELEMENT: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "int8": 1.0,
    "int4": 0.5,
}

#: PCIe generation -> (GT/s per lane, payload bits per transferred bit after line encoding).
PCIE_GENERATIONS: dict[int, tuple[float, float]] = {
    3: (8.0, 128 / 130),
    4: (16.0, 128 / 130),
    5: (32.0, 128 / 130),
}

#: Sanity bound on a CPU's peak: FLOP per cycle per core (AMX int8 reaches 2048).
MAX_FLOP_PER_CYCLE_PER_CORE = 2048


class CpuSpec(Strict):
    """The host CPU(s): peak at the target precision, DRAM bandwidth, efficiencies, overlap."""

    name: str = Field(min_length=1, max_length=100, description="product name")
    sockets: PosInt = Field(le=8, description="CPU sockets the target runs on")
    cores_per_socket: PosInt = Field(le=512, description="physical cores per socket")
    base_clock_ghz: PosFloat = Field(le=10, description="base clock, GHz")
    peak_gflop_s: PosFloat = Field(
        le=1e6, description="peak GFLOP/s (GOP/s for int) of all sockets at precision.target"
    )
    memory_bandwidth_gb_s: PosFloat = Field(
        le=1e5, description="peak DRAM bandwidth of all sockets, GB/s (1e9 B/s)"
    )
    compute_efficiency: Efficiency = Field(description="E_c: achieved fraction of peak_gflop_s")
    memory_efficiency: Efficiency = Field(
        description="E_m: achieved fraction of memory_bandwidth_gb_s"
    )
    overlap_beta: float = Field(
        ge=0,
        le=1,
        allow_inf_nan=False,
        description="beta: 0 = compute and memory overlap fully, 1 = none",
    )

    @property
    def cores(self) -> int:
        """sockets x cores_per_socket: the cores the peak FLOP rate is spread over."""
        return self.sockets * self.cores_per_socket

    @model_validator(mode="after")
    def _peak_is_physical(self) -> CpuSpec:
        per_cycle = self.peak_gflop_s / (self.cores * self.base_clock_ghz)
        if per_cycle > MAX_FLOP_PER_CYCLE_PER_CORE:
            raise ValueError(
                f"peak_gflop_s = {self.peak_gflop_s} means {per_cycle:.0f} FLOP/cycle/core with "
                f"{self.cores} cores at {self.base_clock_ghz} GHz (at most "
                f"{MAX_FLOP_PER_CYCLE_PER_CORE}); check sockets, cores_per_socket and the clock"
            )
        return self


class GpuSpec(Strict):
    """The GPU that runs the drafter (and, on a GPU-only host, the target)."""

    name: str = Field(min_length=1, max_length=100, description="product name")
    peak_tflop_s: PosFloat = Field(
        le=1e4, description="peak dense TFLOP/s at precision.draft (GEMM path PyTorch uses)"
    )
    memory_bandwidth_gb_s: PosFloat = Field(
        le=1e5, description="peak device-memory bandwidth, GB/s"
    )
    memory_gib: PosFloat = Field(le=4096, description="device memory, GiB")
    reserved_gib: float = Field(
        0.5,
        ge=0,
        le=64,
        allow_inf_nan=False,
        description="memory not available to weights/KV (CUDA context, workspace), GiB",
    )
    compute_efficiency: Efficiency = Field(description="achieved fraction of peak_tflop_s")
    memory_efficiency: Efficiency = Field(description="achieved fraction of memory_bandwidth_gb_s")
    overlap_beta: float = Field(
        0.0, ge=0, le=1, allow_inf_nan=False, description="beta on the GPU (0 = full overlap)"
    )

    @model_validator(mode="after")
    def _reserve_fits(self) -> GpuSpec:
        if self.reserved_gib >= self.memory_gib:
            raise ValueError(
                f"reserved_gib = {self.reserved_gib} leaves nothing of memory_gib = "
                f"{self.memory_gib}; use a reserve below the device memory"
            )
        return self


class PcieLink(Strict):
    """The CPU-GPU link: per-direction bandwidth after line encoding, efficiency, latency."""

    generation: Literal[3, 4, 5] = Field(description="PCIe generation")
    lanes: Literal[1, 2, 4, 8, 16] = Field(description="link width")
    bandwidth_gb_s: PosFloat = Field(le=1000, description="B_p: peak per-direction GB/s")
    efficiency: Efficiency = Field(description="E_p: achieved fraction of bandwidth_gb_s")
    latency_us: float = Field(
        10.0,
        ge=0,
        le=1e4,
        allow_inf_nan=False,
        description="fixed cost of one transfer, microseconds",
    )

    @property
    def max_gb_s(self) -> float:
        """Per-direction payload GB/s of the generation and width: GT/s x lanes x encoding / 8."""
        gts, encoding = PCIE_GENERATIONS[self.generation]
        return gts * self.lanes * encoding / 8

    @model_validator(mode="after")
    def _within_link(self) -> PcieLink:
        if self.bandwidth_gb_s > self.max_gb_s * 1.001:
            raise ValueError(
                f"bandwidth_gb_s = {self.bandwidth_gb_s} exceeds PCIe {self.generation}.0 "
                f"x{self.lanes} ({self.max_gb_s:.2f} GB/s per direction); use at most that"
            )
        return self


class PlatformPrecision(Strict):
    """Element formats: the target (weights and arithmetic), its KV cache, the drafter."""

    target: Precision = Field(description="target weights and GEMM arithmetic on its device")
    target_kv: Precision = Field(description="target KV cache and attention activations")
    draft: Precision = Field("fp16", description="drafter weights, activations and KV on the GPU")
    offload: Precision = Field(
        "fp16", description="target weights streamed to the GPU in the offloading baseline"
    )


class HeterogeneousPlatform(Strict):
    """A host for Dovetail-style SD: target on `target_device`, drafter on the GPU."""

    name: str = Field(min_length=1, max_length=64, description="short id, e.g. xeon4214r-rtx2080s")
    description: str = Field("", max_length=500, description="human-readable summary")
    target_device: Literal["cpu", "gpu"] = Field(
        "cpu", description="where the target runs: cpu (Dovetail) or gpu (GPU-only reference)"
    )
    cpu: CpuSpec | None = Field(description="the CPU(s); null only on a GPU-only host")
    gpu: GpuSpec
    pcie: PcieLink
    precision: PlatformPrecision
    sources: list[Source] = Field(default_factory=list, description="where the figures come from")

    @model_validator(mode="after")
    def _cpu_present(self) -> HeterogeneousPlatform:
        if self.target_device == "cpu" and self.cpu is None:
            raise ValueError(
                "target_device = 'cpu' needs a cpu section; add one or set target_device: gpu"
            )
        return self


register_file_kind("platform", HeterogeneousPlatform)


def load_platform(name_or_path: str) -> HeterogeneousPlatform:
    """Load a heterogeneous host by shipped name (`platforms/NAME.yaml`) or YAML path."""
    return load_file(HeterogeneousPlatform, resolve("platform", name_or_path))
