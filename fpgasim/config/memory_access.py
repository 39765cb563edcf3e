"""How a part's off-chip memory serves an access pattern, and the transfer efficiencies a
design's instructions run at on it.

The sustained bandwidth of one master's stream of transactions follows from the size of
each transaction, whether their addresses run in order, how many pseudo-channels they span,
whether the master serves those channels at once (independent AXI IDs, AMD's RAMA IP) or in
order (each change of channel waits for the previous channel's data), how many masters
share a channel, and whether the stream crosses the HBM switch laterally. The constants are
facts of the part's memory subsystem (`fpgas/*.yaml`, `memory.access`); the model and its
sources are in docs/hardware.md ("Memory access model") and its check against every
published measurement used in docs/validation.md ("HBM bandwidth by access pattern",
docs/hbm_patterns.csv).

`transfer_efficiencies` is what a design's compiler prices its transfers with: a design's
same-channel loads are sequential streams, one master per pseudo-channel; its cross-channel
loads read another channel's data through the switch (docs/hardware.md). A design whose
configuration fixes its own constants (`memory.transfer_model: design_constants`, FlightLLM's
VHK158 model), or a part with no measured access model, runs at the design's constants;
`TransferEfficiency.basis` says which.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from fpgasim.config.schema import Strict

#: bytes of one AXI3 transaction at the HBM switch's master ports: 16 beats of 256 bits (AXI3
#: bursts are at most 16 beats; PG276's ports are 256-bit AXI3), the unit a long sequential
#: stream is cut into
AXI3_BURST_BYTES = 16 * 32

#: what a transfer efficiency rests on (`TransferEfficiency.basis`)
Basis = Literal["access model", "design constants", "assumed"]


class AccessModel(Strict):
    """Measured behaviour of a part's memory subsystem under access patterns (HBM2 with the
    AXI switch of UltraScale+ parts; docs/hardware.md, "Memory access model")."""

    sequential_efficiency: float = Field(
        gt=0, le=1, allow_inf_nan=False,
        description="one pseudo-channel read sequentially, share of its peak (refresh, row "
        "changes)",
    )
    random_transaction_ns: float = Field(
        gt=0, le=10_000, allow_inf_nan=False,
        description="a transaction to a random address holds its pseudo-channel at least this "
        "long (a row opened for it), ns",
    )
    reorder_drain_ns: float = Field(
        ge=0, le=100_000, allow_inf_nan=False,
        description="an in-order master changing pseudo-channel waits this long for the data "
        "outstanding on the previous one, ns",
    )
    lateral_share: float = Field(
        gt=0, le=1, allow_inf_nan=False,
        description="throughput of a stream crossing the switch laterally, share of a port's",
    )
    port_gb_s: float = Field(
        gt=0, le=100_000, allow_inf_nan=False,
        description="peak of one master port of the switch, decimal GB/s",
    )


@dataclass(frozen=True)
class Pattern:
    """One master's stream of read transactions (docs/hardware.md, "Memory access model")."""

    transaction_bytes: int
    sequential: bool = True  # addresses run in order (else each transaction opens a row)
    channels: int = 1  # pseudo-channels the addresses span
    reorders: bool = False  # the master serves its channels at once (else in order)
    masters_per_channel: int = 1  # masters streaming from each of those channels
    lateral: bool = False  # the stream crosses the switch laterally
    issue_ns: float = 0.0  # the master's own time to issue one transaction (0: not binding)

    def __post_init__(self) -> None:
        """Refuse a pattern no master issues."""
        if self.transaction_bytes < 1 or self.channels < 1 or self.masters_per_channel < 1:
            raise ValueError(f"a pattern needs at least one byte, channel and master: {self}")
        if not (self.issue_ns >= 0 and math.isfinite(self.issue_ns)):
            raise ValueError(f"issue_ns = {self.issue_ns}: a finite time of at least 0")


def transaction_ns(channel_gb_s: float, model: AccessModel, p: Pattern) -> float:
    """Mean time between one master's transactions of pattern `p`, ns.

    A transaction holds its pseudo-channel for its bytes at the sequential rate, and at least
    `random_transaction_ns` when its address is random; a reordering master keeps all its
    channels busy at once, so a channel's time is shared by them; the port and the master's
    own issue rate bound it from below; an in-order master pays `reorder_drain_ns` at every
    change of channel, (channels - 1) / channels of its random transactions."""
    size = p.transaction_bytes
    held = size / (channel_gb_s * model.sequential_efficiency)
    if not p.sequential:
        held = max(held, model.random_transaction_ns)
    if p.reorders:
        held /= p.channels
    port = size / model.port_gb_s
    t = max(held, port, p.issue_ns)
    if not p.sequential and not p.reorders:
        t += (p.channels - 1) / p.channels * model.reorder_drain_ns
    return t


def pattern_gb_s(channel_gb_s: float, model: AccessModel, p: Pattern) -> float:
    """Sustained read bandwidth of one master under pattern `p`, decimal GB/s: its
    transactions' bytes over their spacing (`transaction_ns`), at most its share of the
    channels it streams from, and `lateral_share` of it when the stream crosses the switch
    laterally (AMD PG276: two lateral paths per group of four masters)."""
    rate = p.transaction_bytes / transaction_ns(channel_gb_s, model, p)
    share = channel_gb_s * model.sequential_efficiency * p.channels / p.masters_per_channel
    rate = min(rate, share)
    return rate * model.lateral_share if p.lateral else rate


@dataclass(frozen=True)
class TransferEfficiency:
    """The shares of a channel's peak a design's same- and cross-channel transfers run at."""

    same: float
    cross: float
    basis: Basis
    note: str

    @property
    def measured(self) -> bool:
        """Whether the efficiencies come from the part's measured access model."""
        return self.basis == "access model"


#: what a design's same-channel transfer is: a sequential stream from one pseudo-channel,
#: one master per channel (FlightLLM's A/global buffers: one port per channel)
SAME_CHANNEL = Pattern(AXI3_BURST_BYTES)
#: what a cross-channel transfer is: the same stream read by a master of another group of the
#: switch (FlightLLM's B/meta/FSB/bias port reading the A/global channels' data)
CROSS_CHANNEL = Pattern(AXI3_BURST_BYTES, lateral=True)


def transfer_efficiencies(channel_gb_s: float, access: AccessModel | None, transfer_model: str,
                          same_constant: float, cross_constant: float) -> TransferEfficiency:
    """The efficiencies a design's transfers run at on a part: from the part's access model
    (`SAME_CHANNEL`, `CROSS_CHANNEL` over the channel's peak `channel_gb_s`), or the design's
    constants when its configuration fixes them or the part has no measured access model."""
    if transfer_model == "design_constants":
        return TransferEfficiency(same_constant, cross_constant, "design constants",
                                  "the design's configuration fixes its transfer efficiencies")
    if access is None:
        return TransferEfficiency(
            same_constant, cross_constant, "assumed",
            "no measured access model of this part's memory: the design's constants, an "
            "assumption")
    same = pattern_gb_s(channel_gb_s, access, SAME_CHANNEL) / channel_gb_s
    cross = pattern_gb_s(channel_gb_s, access, CROSS_CHANNEL) / channel_gb_s
    return TransferEfficiency(min(same, 1.0), min(cross, 1.0), "access model",
                              "the part's measured access model (docs/validation.md)")
