"""Dovetail-style heterogeneous speculative decoding: target on the CPU, drafter on a GPU.

Modules: `platform` (host files), `costs` (FLOPs/bytes), `timing` (T_V, T_D, PCIe,
offloading, T_SD), `acceptance` (Omega(gamma)), `inputs` (published Dovetail figures),
`calibration`, `solve` (best gamma and M), `dovetail1` (the reproduced table).
"""

from fpgasim.heterogeneous.calibration import calibrations
from fpgasim.heterogeneous.costs import EAGLE2, dovetail_drafter, dovetail_network
from fpgasim.heterogeneous.device_time import (
    beats_offloading,
    draft_pass_time,
    offload_token_time_s,
    overlap_time_s,
    pcie_transfer_s,
    sd_token_latency_s,
    verify_time,
)
from fpgasim.heterogeneous.dovetail_table import (
    TABLE_COLUMNS,
    dovetail1_detail,
    dovetail1_table,
    measured_speedup,
)
from fpgasim.heterogeneous.inputs import (
    Dovetail1Inputs,
    FittedAcceptance,
    fit_acceptance,
    load_dovetail1_inputs,
)
from fpgasim.heterogeneous.platform import HeterogeneousPlatform, load_platform
from fpgasim.heterogeneous.solve import best_config, best_gamma_per_blocks, solve_grid
from fpgasim.heterogeneous.tree_acceptance import BlockGain, TreeAcceptance, fit_top1

__all__ = [
    "EAGLE2",
    "TABLE_COLUMNS",
    "BlockGain",
    "Dovetail1Inputs",
    "FittedAcceptance",
    "HeterogeneousPlatform",
    "TreeAcceptance",
    "beats_offloading",
    "best_config",
    "best_gamma_per_blocks",
    "calibrations",
    "dovetail1_detail",
    "dovetail1_table",
    "dovetail_drafter",
    "dovetail_network",
    "draft_pass_time",
    "fit_acceptance",
    "fit_top1",
    "load_dovetail1_inputs",
    "load_platform",
    "measured_speedup",
    "offload_token_time_s",
    "overlap_time_s",
    "pcie_transfer_s",
    "sd_token_latency_s",
    "solve_grid",
    "verify_time",
]
