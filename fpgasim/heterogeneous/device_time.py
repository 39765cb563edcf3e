"""Dovetail's performance model: seconds of verification, drafting, PCIe, offloading; T_SD.

- T_V(gamma) = max(T_c, T_p) + beta·min(T_c, T_p), T_c = F/(P_c·E_c), T_p = bytes/(B_m·E_m),
  for the gamma+1 tokens a verification feeds the target (gamma candidates + the root).
- The drafter on the GPU uses the same form with the GPU's figures (beta_gpu = 0 by default).
- Offloading baseline: AD with every target weight streamed over PCIe each step,
  P/(B_p·E_p) per token; heterogeneous SD beats it when T_V(gamma) < Omega·P/(B_p·E_p).
- Per-token latency (MagicDec form, the draft charged per draft level):
  T_SD = (levels·T_D + T_V(gamma) + T_pcie) / Omega.
"""

from __future__ import annotations

from dataclasses import dataclass

from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.drafters.network import DraftNetwork
from fpgasim.heterogeneous.costs import (
    Work,
    draft_pass_work,
    drafter_resident_bytes,
    target_pass_work,
    target_streamed_params,
    target_total_params,
)
from fpgasim.heterogeneous.platform import (
    BYTES_PER_ELEMENT,
    CpuSpec,
    GpuSpec,
    HeterogeneousPlatform,
)

GIB = float(1 << 30)
#: Bytes of one token id crossing PCIe (int64, as PyTorch keeps them).
TOKEN_ID_BYTES = 8


@dataclass(frozen=True)
class DeviceTime:
    """Compute time, memory time and their overlap-combined total (seconds)."""

    compute_s: float
    memory_s: float
    total_s: float

    @property
    def bound(self) -> str:
        """'compute' when compute time is at least memory time, else 'memory' (ties: compute)."""
        return "compute" if self.compute_s >= self.memory_s else "memory"


def overlap_time_s(compute_s: float, memory_s: float, beta: float) -> float:
    """max(T_c, T_p) + beta·min(T_c, T_p): beta = 0 full overlap, beta = 1 none (the sum)."""
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta = {beta} is outside [0, 1]")
    return max(compute_s, memory_s) + beta * min(compute_s, memory_s)


def roofline_time(
    work: Work,
    peak_flop_s: float,
    compute_efficiency: float,
    bandwidth_bytes_s: float,
    memory_efficiency: float,
    beta: float,
) -> DeviceTime:
    """T_c = F/(P·E_c), T_p = bytes/(B·E_m), combined with the overlap coefficient beta."""
    compute_s = work.flops / (peak_flop_s * compute_efficiency)
    memory_s = work.bytes / (bandwidth_bytes_s * memory_efficiency)
    return DeviceTime(compute_s, memory_s, overlap_time_s(compute_s, memory_s, beta))


def cpu_time(c: CpuSpec, work: Work) -> DeviceTime:
    """`work` on the CPU: its peak GFLOP/s and memory bandwidth at their efficiencies."""
    return roofline_time(
        work,
        c.peak_gflop_s * 1e9,
        c.compute_efficiency,
        c.memory_bandwidth_gb_s * 1e9,
        c.memory_efficiency,
        c.overlap_beta,
    )


def gpu_time(g: GpuSpec, work: Work) -> DeviceTime:
    """`work` on the GPU: its peak TFLOP/s and memory bandwidth at their efficiencies."""
    return roofline_time(
        work,
        g.peak_tflop_s * 1e12,
        g.compute_efficiency,
        g.memory_bandwidth_gb_s * 1e9,
        g.memory_efficiency,
        g.overlap_beta,
    )


def target_pass_time(
    p: HeterogeneousPlatform, m: TargetModel, tokens: int, context: int
) -> DeviceTime:
    """One target pass over `tokens` tokens on the platform's target device (CPU or GPU)."""
    work = target_pass_work(
        m,
        tokens,
        context,
        BYTES_PER_ELEMENT[p.precision.target],
        BYTES_PER_ELEMENT[p.precision.target_kv],
    )
    if p.target_device == "cpu":
        assert p.cpu is not None  # guaranteed by the schema
        return cpu_time(p.cpu, work)
    return gpu_time(p.gpu, work)


def verify_time(p: HeterogeneousPlatform, m: TargetModel, gamma: int, context: int) -> DeviceTime:
    """T_V(gamma): the target verifies gamma candidates plus the root (gamma = 0 is an AD step)."""
    return target_pass_time(p, m, gamma + 1, context)


def draft_pass_time(
    p: HeterogeneousPlatform, m: TargetModel, d: DraftNetwork, context: int,
    tokens: int | None = None,
) -> DeviceTime:
    """T_D: one draft forward pass on the GPU over `tokens` tokens (default: the tree width)."""
    work = draft_pass_work(
        m, d, d.rows if tokens is None else tokens, context, BYTES_PER_ELEMENT[p.precision.draft]
    )
    return gpu_time(p.gpu, work)


def pcie_transfer_s(p: HeterogeneousPlatform, m: TargetModel, gamma: int, accepted: float) -> float:
    """Token-level PCIe traffic of one iteration (two transfers, each with the link latency).

    CPU -> GPU: the accepted tokens' ids and hidden states (draft precision) for the drafter.
    GPU -> CPU: gamma candidate ids, their positions and the gamma x gamma tree mask (1 B each).
    Zero when the target runs on the GPU.
    """
    if p.target_device == "gpu":
        return 0.0
    up_bytes = accepted * (TOKEN_ID_BYTES + m.hidden * BYTES_PER_ELEMENT[p.precision.draft])
    down_bytes = gamma * 2 * TOKEN_ID_BYTES + gamma * gamma
    link = p.pcie.bandwidth_gb_s * 1e9 * p.pcie.efficiency
    return (up_bytes + down_bytes) / link + 2 * p.pcie.latency_us * 1e-6


def offload_bytes(p: HeterogeneousPlatform, m: TargetModel) -> float:
    """P: target weights streamed per offloaded step (the embedding stays), at precision.offload."""
    return target_streamed_params(m) * BYTES_PER_ELEMENT[p.precision.offload]


def offload_token_time_s(p: HeterogeneousPlatform, m: TargetModel) -> float:
    """Offloading baseline, seconds per generated token: P/(B_p·E_p) (GPU compute hidden)."""
    return offload_bytes(p, m) / (p.pcie.bandwidth_gb_s * 1e9 * p.pcie.efficiency)


def beats_offloading(t_verify_s: float, omega: float, offload_token_s: float) -> bool:
    """Dovetail's condition: T_V(gamma) < Omega·P/(B_p·E_p)."""
    return t_verify_s < omega * offload_token_s


def sd_token_latency_s(
    draft_levels: int, t_draft_pass_s: float, t_verify_s: float, omega: float, t_pcie_s: float = 0.0
) -> float:
    """T_SD = (levels·T_D + T_V(gamma) + T_pcie) / Omega: seconds per generated token."""
    if omega <= 0:
        raise ValueError(f"omega = {omega} must be positive")
    return (draft_levels * t_draft_pass_s + t_verify_s + t_pcie_s) / omega


def drafter_fits_gpu(
    p: HeterogeneousPlatform, m: TargetModel, d: DraftNetwork, context: int
) -> bool:
    """The drafter's weights, shared embedding/LM head and KV fit the GPU beside the reserve."""
    need = drafter_resident_bytes(m, d, context, BYTES_PER_ELEMENT[p.precision.draft])
    return need <= (p.gpu.memory_gib - p.gpu.reserved_gib) * GIB


def target_fits_gpu(
    p: HeterogeneousPlatform, m: TargetModel, d: DraftNetwork, context: int
) -> bool:
    """All target weights (precision.offload) plus the drafter fit: the GPU alone could serve it."""
    draft = drafter_resident_bytes(m, d, context, BYTES_PER_ELEMENT[p.precision.draft])
    target = target_total_params(m) * BYTES_PER_ELEMENT[p.precision.offload]
    return target + draft <= (p.gpu.memory_gib - p.gpu.reserved_gib) * GIB
