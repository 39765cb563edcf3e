"""The dovetail1 table: Dovetail's measured speedups recomputed, beside the platform model's.

speedup = T_T / T_SD with T_SD = (n·T_D + T_V(gamma)) / Omega (MagicDec form). The draft time
is charged per draft level (n = depth + 1 forward passes), not per candidate token (n = gamma):
a tree drafter runs one batched forward pass per level, and a pass costs reading the drafter's
weights whatever the level's width. The table's own numbers say so: on the RTX 4090, T_D =
0.001 s is one pass of EAGLE-2's 0.74 GB head at about 70% of 1008 GB/s; charging it per
candidate would mean 60 ms of drafting per 25 ms verification. Both charges are in
`dovetail1_detail`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fpgasim.config import load_model
from fpgasim.heterogeneous.device_time import (
    draft_pass_time,
    pcie_transfer_s,
    sd_token_latency_s,
    target_pass_time,
    verify_time,
)
from fpgasim.heterogeneous.inputs import (
    Dovetail1Inputs,
    FittedAcceptance,
    PublishedRow,
    fit_acceptance,
    load_dovetail1_inputs,
)
from fpgasim.heterogeneous.platform import load_platform

#: The CSV contract of `fpgasim reproduce dovetail1`.
TABLE_COLUMNS = ["method", "device", "gamma", "speedup_from_measurements", "speedup_model"]
DIGITS = 3


def measured_speedup(row: PublishedRow, charge: str = "level") -> float:
    """T_T / T_SD from the published inputs; `charge` = 'level' (depth+1 passes) or 'token'."""
    passes = row.draft_passes if charge == "level" else row.gamma
    return row.t_target_s / sd_token_latency_s(passes, row.t_draft_s, row.t_verify_s, row.omega)


def model_row(row: PublishedRow, inputs: Dovetail1Inputs, fitted: FittedAcceptance) -> dict:
    """The model's T_T, T_D, T_V, Omega, PCIe time and speedup for a row's configuration."""
    p = load_platform(row.platform)
    m = load_model(inputs.model)
    ctx = inputs.context
    acc = fitted.tree(row.method, row.blocks, row.levels)
    omega, levels = acc.omega(row.gamma), acc.levels(row.gamma)
    t_ad = target_pass_time(p, m, 1, ctx).total_s
    t_v = verify_time(p, m, row.gamma, ctx).total_s
    t_d = draft_pass_time(p, m, row.drafter(inputs.width), ctx).total_s
    t_pcie = pcie_transfer_s(p, m, row.gamma, omega)
    t_sd = sd_token_latency_s(levels, t_d, t_v, omega, t_pcie)
    return {
        "model_top1": acc.top1,
        "model_t_target_s": t_ad,
        "model_t_draft_s": t_d,
        "model_t_verify_s": t_v,
        "model_omega": omega,
        "model_draft_passes": levels,
        "model_t_pcie_s": t_pcie,
        "speedup_model": t_ad / t_sd,
    }


def dovetail1_detail(inputs: Dovetail1Inputs | None = None) -> pd.DataFrame:
    """One row per published measurement: inputs, both draft charges, the model's predictions.

    Columns: method, device, platform, gamma, depth, blocks, the published t_*_s and omega,
    draft_passes, speedup_from_measurements (per level), speedup_per_token_charging, the
    model_* predictions, speedup_model, and what the row calibrates.
    """
    inputs = inputs or load_dovetail1_inputs()
    fitted = fit_acceptance(inputs)
    rows = []
    for r in inputs.rows:
        rows.append(
            {
                "method": r.method,
                "device": r.device,
                "platform": r.platform,
                "gamma": r.gamma,
                "depth": r.depth,
                "blocks": r.blocks,
                "t_target_s": r.t_target_s,
                "t_draft_s": r.t_draft_s,
                "t_verify_s": r.t_verify_s,
                "omega": r.omega,
                "draft_passes": r.draft_passes,
                "speedup_from_measurements": measured_speedup(r, "level"),
                "speedup_per_token_charging": measured_speedup(r, "token"),
                **model_row(r, inputs, fitted),
                "calibrates": ",".join(r.calibrates),
            }
        )
    return pd.DataFrame(rows)


def dovetail1_table(inputs: Dovetail1Inputs | Path | None = None) -> pd.DataFrame:
    """The dovetail1 CSV: method, device, gamma, speedup_from_measurements, speedup_model.

    One row per published Dovetail measurement; speedups over the same host's target-only AD,
    rounded to 3 decimals. `inputs` may be the experiment file's path (`reproduce` passes it).
    """
    if isinstance(inputs, Path):
        inputs = load_dovetail1_inputs(str(inputs))
    frame = dovetail1_detail(inputs)[TABLE_COLUMNS].copy()
    for col in ("speedup_from_measurements", "speedup_model"):
        frame[col] = frame[col].round(DIGITS)
    return frame.reset_index(drop=True)
