"""Efficiencies calibrated from published Dovetail timings, in the open.

The platform files carry the numbers this module computes (rounded to 3 decimals);
tests/heterogeneous/test_dovetail_table.py checks that they agree. What calibrates what:

- Xeon 4214R E_m, E_c: T_T = 0.45 s (AD step) and T_V(60) = 1.34 s (EAGLE-2), at beta = 1.
- GPU E_m (RTX 2080 SUPER, reused for the RTX 3090 and 4090): Dovetail's T_D = 0.0072 s.
- i5-9300H E_m: the laptop's 0.57 s verify phase (gamma = 7), with E_c taken from the 4214R.
- GTX 1050 Mobile E_m: the laptop's 0.31 s draft phase (depth 4: 5 passes of M = 4).
- Hosts without published timings borrow calibrated values (`BORROWED`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from fpgasim.config import load_model
from fpgasim.config.schema import TargetModel
from fpgasim.heterogeneous.costs import dovetail_drafter, draft_pass_work, target_pass_work
from fpgasim.heterogeneous.inputs import Dovetail1Inputs, load_dovetail1_inputs
from fpgasim.heterogeneous.platform import BYTES_PER_ELEMENT, HeterogeneousPlatform, load_platform

#: Efficiencies of hosts without published timings, borrowed from a calibrated host:
#: (platform, field, (source platform, source field)).
BORROWED: list[tuple[str, str, tuple[str, str]]] = [
    (
        "xeon4310-rtx3090",
        "cpu.compute_efficiency",
        ("xeon4214r-rtx2080s", "cpu.compute_efficiency"),
    ),
    ("xeon4310-rtx3090", "cpu.memory_efficiency", ("i5-9300h-gtx1050m", "cpu.memory_efficiency")),
    ("xeon4310-rtx3090", "gpu.memory_efficiency", ("xeon4214r-rtx2080s", "gpu.memory_efficiency")),
    ("rtx4090", "gpu.memory_efficiency", ("xeon4214r-rtx2080s", "gpu.memory_efficiency")),
]


def calibrate_cpu_two_point(
    p: HeterogeneousPlatform,
    m: TargetModel,
    context: int,
    t_ad_s: float,
    gamma: int,
    t_verify_s: float,
) -> tuple[float, float]:
    """(E_m, E_c) at which T_V(0) = t_ad_s and T_V(gamma) = t_verify_s, at the CPU's beta.

    Assumes the AD step is memory-bound and the gamma-verification compute-bound (checked):
    then both equations are linear in 1/E_m and 1/E_c.
    """
    cpu = p.cpu
    if cpu is None:
        raise ValueError(f"{p.name} has no CPU to calibrate")
    wb, kvb = BYTES_PER_ELEMENT[p.precision.target], BYTES_PER_ELEMENT[p.precision.target_kv]
    bw, peak, beta = cpu.memory_bandwidth_gb_s * 1e9, cpu.peak_gflop_s * 1e9, cpu.overlap_beta
    w1 = target_pass_work(m, 1, context, wb, kvb)
    wg = target_pass_work(m, gamma + 1, context, wb, kvb)
    a1, c1, ag, cg = w1.bytes / bw, w1.flops / peak, wg.bytes / bw, wg.flops / peak
    inv_em, inv_ec = np.linalg.solve(
        np.array([[a1, beta * c1], [beta * ag, cg]]), np.array([t_ad_s, t_verify_s])
    )
    if inv_em <= 0 or inv_ec <= 0 or a1 * inv_em < c1 * inv_ec or cg * inv_ec < ag * inv_em:
        raise ValueError(
            f"no E_m, E_c with a memory-bound AD step ({t_ad_s} s) and a compute-bound "
            f"gamma = {gamma} verification ({t_verify_s} s) at beta = {beta}"
        )
    return float(1 / inv_em), float(1 / inv_ec)


def memory_efficiency_for(
    t_s: float, memory_s_at_peak: float, compute_s: float, beta: float
) -> float:
    """E_m such that max(T_p, T_c) + beta·min(T_p, T_c) = t_s with T_p = memory_s_at_peak/E_m."""
    t_memory = t_s - beta * compute_s  # memory-bound case: T_p + beta·T_c = t
    if t_memory < compute_s:  # compute-bound case: T_c + beta·T_p = t
        if beta == 0:
            raise ValueError(f"{t_s} s is compute-bound ({compute_s:.4g} s) at beta = 0")
        t_memory = (t_s - compute_s) / beta
    if t_memory <= 0:
        raise ValueError(f"{t_s} s is below the compute time alone ({compute_s:.4g} s)")
    return memory_s_at_peak / t_memory


def _cpu_verify_split(
    p: HeterogeneousPlatform, m: TargetModel, gamma: int, context: int, e_c: float
) -> tuple[float, float]:
    """(memory seconds at E_m = 1, compute seconds at E_c = e_c) of T_V(gamma) on the CPU."""
    assert p.cpu is not None
    wb, kvb = BYTES_PER_ELEMENT[p.precision.target], BYTES_PER_ELEMENT[p.precision.target_kv]
    w = target_pass_work(m, gamma + 1, context, wb, kvb)
    return w.bytes / (p.cpu.memory_bandwidth_gb_s * 1e9), w.flops / (p.cpu.peak_gflop_s * 1e9 * e_c)


def _gpu_draft_efficiency(
    p: HeterogeneousPlatform, m: TargetModel, blocks: int, width: int, context: int, t_s: float
) -> float:
    w = draft_pass_work(
        m, dovetail_drafter(blocks, width), width, context, BYTES_PER_ELEMENT[p.precision.draft]
    )
    g = p.gpu
    compute_s = w.flops / (g.peak_tflop_s * 1e12 * g.compute_efficiency)
    return memory_efficiency_for(
        t_s, w.bytes / (g.memory_bandwidth_gb_s * 1e9), compute_s, g.overlap_beta
    )


def calibrations(inputs: Dovetail1Inputs | None = None) -> pd.DataFrame:
    """Every calibrated efficiency: platform, field, calibrated value, the file's value, source.

    One row per calibrated field; `in_file` is what platforms/*.yaml carries.
    """
    inputs = inputs or load_dovetail1_inputs()
    m = load_model(inputs.model)
    rows = []

    cpu_row = inputs.row("cpu")
    server = load_platform(cpu_row.platform)
    e_m, e_c = calibrate_cpu_two_point(
        server, m, inputs.context, cpu_row.t_target_s, cpu_row.gamma, cpu_row.t_verify_s
    )
    what = f"T_T = {cpu_row.t_target_s} s and T_V({cpu_row.gamma}) = {cpu_row.t_verify_s} s"
    assert server.cpu is not None
    rows.append((server.name, "cpu.memory_efficiency", e_m, server.cpu.memory_efficiency, what))
    rows.append((server.name, "cpu.compute_efficiency", e_c, server.cpu.compute_efficiency, what))

    gpu_row = inputs.row("gpu")
    gpu_host = load_platform(gpu_row.platform)
    e_gpu = _gpu_draft_efficiency(
        gpu_host, m, gpu_row.blocks, inputs.width, inputs.context, gpu_row.t_draft_s
    )
    what = f"{gpu_row.method} T_D = {gpu_row.t_draft_s} s (M = {gpu_row.blocks})"
    rows.append(
        (gpu_host.name, "gpu.memory_efficiency", e_gpu, gpu_host.gpu.memory_efficiency, what)
    )

    lap = inputs.laptop
    laptop = load_platform(lap.platform)
    assert laptop.cpu is not None
    memory_s, compute_s = _cpu_verify_split(laptop, m, lap.gamma, inputs.context, e_c)
    e_m_lap = memory_efficiency_for(
        lap.verify_phase_s, memory_s, compute_s, laptop.cpu.overlap_beta
    )
    what = f"verify phase {lap.verify_phase_s} s at gamma = {lap.gamma}, E_c from {server.name}"
    rows.append((laptop.name, "cpu.compute_efficiency", e_c, laptop.cpu.compute_efficiency, what))
    rows.append((laptop.name, "cpu.memory_efficiency", e_m_lap, laptop.cpu.memory_efficiency, what))
    per_pass_s = lap.draft_phase_s / (lap.depth + 1)
    e_gpu_lap = _gpu_draft_efficiency(
        laptop, m, lap.blocks, inputs.width, inputs.context, per_pass_s
    )
    what = f"draft phase {lap.draft_phase_s} s = {lap.depth + 1} passes of M = {lap.blocks}"
    rows.append(
        (laptop.name, "gpu.memory_efficiency", e_gpu_lap, laptop.gpu.memory_efficiency, what)
    )

    calibrated = {(r[0], r[1]): r[2] for r in rows}
    for name, field, (src_name, src_field) in BORROWED:
        host = load_platform(name)
        section = host.cpu if field.startswith("cpu.") else host.gpu
        in_file = getattr(section, field.split(".", 1)[1])
        what = f"assumed: {src_name} {src_field}"
        rows.append((name, field, calibrated[(src_name, src_field)], in_file, what))
    return pd.DataFrame(rows, columns=["platform", "field", "calibrated", "in_file", "measurement"])
