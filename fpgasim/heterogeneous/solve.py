"""Best candidate-token count gamma and drafter depth M per host, against AD and offloading.

`solve_grid` costs every (M, gamma) with the Dovetail drafter; `best_config` picks the fastest
configuration whose drafter fits the GPU and names the winner among heterogeneous SD,
target-only AD and the offloading baseline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from fpgasim.config.schema import TargetModel, config_source
from fpgasim.errors import ConfigError, InputError
from fpgasim.heterogeneous.costs import dovetail_drafter
from fpgasim.heterogeneous.device_time import (
    beats_offloading,
    draft_pass_time,
    drafter_fits_gpu,
    offload_token_time_s,
    pcie_transfer_s,
    sd_token_latency_s,
    target_fits_gpu,
    target_pass_time,
    verify_time,
)
from fpgasim.heterogeneous.inputs import FittedAcceptance
from fpgasim.heterogeneous.platform import HeterogeneousPlatform

#: Column order of `solve_grid` (inputs first).
GRID_COLUMNS = [
    "platform",
    "model",
    "context",
    "depth",
    "width",
    "blocks",
    "gamma",
    "top1",
    "omega",
    "draft_passes",
    "t_draft_pass_s",
    "t_verify_s",
    "verify_bound",
    "t_pcie_s",
    "t_sd_s",
    "tokens_per_s",
    "t_ad_s",
    "t_offload_s",
    "speedup_vs_ad",
    "speedup_vs_offload",
    "beats_offloading",
    "drafter_fits_gpu",
    "target_fits_gpu",
]


def solve_grid(
    p: HeterogeneousPlatform,
    m: TargetModel,
    fitted: FittedAcceptance,
    gammas: Sequence[int],
    blocks: Sequence[int],
    context: int,
    depth: int = 7,
    width: int = 10,
) -> pd.DataFrame:
    """One row per (M, gamma): Dovetail's drafter with M blocks verifying gamma candidates.

    The tree is the optimal gamma-node tree of at most depth+1 levels; draft passes = its
    levels. t_sd_s is the MagicDec per-token latency with PCIe; t_ad_s is the target-only AD
    step on the target's device; t_offload_s the offloading baseline (NaN on a GPU-only host).
    """
    if not gammas or not blocks:
        raise InputError("gammas/blocks", "", "at least one value each")
    t_ad = target_pass_time(p, m, 1, context).total_s
    t_off = offload_token_time_s(p, m) if p.target_device == "cpu" else math.nan
    verify = {g: verify_time(p, m, g, context) for g in gammas}
    rows = []
    for mb in blocks:
        d = dovetail_drafter(mb, width)
        acc = fitted.tree("Dovetail", mb, depth + 1)
        omegas, levels = acc.curve(max(gammas))
        t_d = draft_pass_time(p, m, d, context).total_s
        fits = drafter_fits_gpu(p, m, d, context)
        fits_target = target_fits_gpu(p, m, d, context)
        for g in gammas:
            omega, passes, tv = float(omegas[g]), int(levels[g]), verify[g]
            t_pcie = pcie_transfer_s(p, m, g, omega)
            t_sd = sd_token_latency_s(passes, t_d, tv.total_s, omega, t_pcie)
            rows.append(
                {
                    "platform": p.name,
                    "model": m.id,
                    "context": context,
                    "depth": depth,
                    "width": width,
                    "blocks": mb,
                    "gamma": g,
                    "top1": acc.top1,
                    "omega": omega,
                    "draft_passes": passes,
                    "t_draft_pass_s": t_d,
                    "t_verify_s": tv.total_s,
                    "verify_bound": tv.bound,
                    "t_pcie_s": t_pcie,
                    "t_sd_s": t_sd,
                    "tokens_per_s": 1.0 / t_sd,
                    "t_ad_s": t_ad,
                    "t_offload_s": t_off,
                    "speedup_vs_ad": t_ad / t_sd,
                    "speedup_vs_offload": t_off / t_sd,
                    "beats_offloading": (
                        beats_offloading(tv.total_s, omega, t_off) if t_off == t_off else None
                    ),
                    "drafter_fits_gpu": fits,
                    "target_fits_gpu": fits_target,
                }
            )
    grid = pd.DataFrame(rows, columns=GRID_COLUMNS)
    check_finite_grid(grid, p)
    return grid


def check_finite_grid(grid: pd.DataFrame, p: HeterogeneousPlatform) -> None:
    """No inf leaves the model (NaN is a documented blank: no offloading baseline on a
    GPU-only host): an overflow is an error naming the platform's file."""
    numbers = grid.select_dtypes("number")
    infinite = numbers.columns[np.isinf(numbers.to_numpy(dtype=float)).any(axis=0)]
    if len(infinite):
        column = str(infinite[0])
        row = grid[np.isinf(grid[column].to_numpy(dtype=float))].iloc[0]
        raise ConfigError(
            config_source(p), column, float(row[column]),
            f"a finite result; the platform's rates are too small to compute with "
            f"(gamma = {row['gamma']}, M = {row['blocks']}); raise the tiny rates",
        )


def best_config(grid: pd.DataFrame) -> dict:
    """The fastest row whose drafter fits the GPU, plus `winner`: sd, ad or offload.

    Raises InputError when no drafter fits (too many blocks for the GPU's memory).
    """
    ok = grid[grid["drafter_fits_gpu"]]
    if ok.empty:
        raise InputError(
            "blocks",
            ",".join(map(str, sorted(set(grid["blocks"])))),
            "no drafter of these sizes fits the GPU's memory; try fewer blocks",
        )
    best = ok.loc[ok["t_sd_s"].idxmin()].to_dict()
    options = {"sd": best["t_sd_s"], "ad": best["t_ad_s"]}
    if best["t_offload_s"] == best["t_offload_s"]:
        options["offload"] = best["t_offload_s"]
    best["winner"] = min(options, key=options.get)
    best["max_blocks_fitting"] = int(ok["blocks"].max())
    return best


def best_gamma_per_blocks(grid: pd.DataFrame) -> pd.DataFrame:
    """For each M: the best gamma, its tokens/s and speedups (rows whose drafter fits)."""
    ok = grid[grid["drafter_fits_gpu"]]
    idx = ok.groupby("blocks")["t_sd_s"].idxmin()
    cols = [
        "blocks",
        "gamma",
        "omega",
        "t_sd_s",
        "tokens_per_s",
        "speedup_vs_ad",
        "speedup_vs_offload",
    ]
    return ok.loc[idx, cols].reset_index(drop=True)
