"""A cluster: N cards of one part, one design, linked over their network ports.

One card (`Cluster()`) is what every command ran before clusters existed, to the last digit.
Several cards split a model by tensor parallelism (`tp`: each layer's heads and FFN columns
over the cards), pipeline parallelism (`pp`: layers per card) or both (`tp-pp`: `tp` cards
per stage, `cards / tp` stages). The links are the part's ports (`Fpga.network`); the link
layer, the topology and the per-hop latency are the cluster's (docs/multi-fpga.md, "Links
and their latency": 0.25 us by default for a ring of direct Aurora cables, argued range
0.15 to 2 us).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from fpgasim.config.schema import Strict

#: how a model is split over the cards (docs/multi-fpga.md, "Collectives")
Parallel = Literal["tp", "pp", "tp-pp"]
#: how the cards are linked: a ring of direct cables (two ports per card), or a switch
Topology = Literal["ring", "switch"]
#: the protocol on the transceivers (docs/multi-fpga.md, "Link layers and their overhead")
LinkLayer = Literal["aurora", "ethernet", "udp"]

#: docs/multi-fpga.md, "One hop's latency": the middle of the direct-Aurora range
DEFAULT_HOP_LATENCY_S = 0.25e-6
#: most micro-batches a pass may be cut into (each at least one request of the batch)
MAX_MICRO_BATCHES = 4096


class Cluster(Strict):
    """How many cards run one model, how it is split over them and how they are linked."""

    cards: int = Field(1, ge=1, le=64, description="cards of one part running one model")
    parallel: Parallel = Field("tp", description="tp, pp or tp-pp (tp cards per stage)")
    tp: int | None = Field(
        None, ge=1, le=64,
        description="cards per pipeline stage with parallel tp-pp (null: all cards for tp, "
        "1 for pp)",
    )
    topology: Topology = Field("ring", description="ring of direct cables, or one switch")
    link_layer: LinkLayer = Field("aurora", description="protocol on the ports")
    hop_latency_s: float = Field(
        DEFAULT_HOP_LATENCY_S, ge=0.0, le=100e-6, allow_inf_nan=False,
        description="one hop's latency, s (docs/multi-fpga.md: 0.15e-6 to 2e-6 argued)",
    )
    micro_batches: int | None = Field(
        None, ge=1, le=MAX_MICRO_BATCHES,
        description="micro-batches a pipeline-parallel pass's batch is cut into, at most one "
        "per request (null: as many as stages); docs/multi-fpga.md, \"Micro-batches\")",
    )

    @model_validator(mode="after")
    def _split(self) -> Cluster:
        if self.tp is not None and self.parallel != "tp-pp":
            raise ValueError(f"tp = {self.tp} is for parallel tp-pp only (parallel is "
                             f"{self.parallel}); leave it null")
        if self.parallel == "tp-pp":
            tp = self.tp or self.cards
            if self.cards % tp:
                raise ValueError(f"tp = {tp} does not divide cards = {self.cards} (a "
                                 f"divisor of {self.cards})")
        if self.micro_batches not in (None, 1) and self.pp_stages == 1:
            raise ValueError(f"micro_batches = {self.micro_batches} is for a pipeline of "
                             "several stages (parallel pp or tp-pp); leave it null")
        return self

    @property
    def tp_cards(self) -> int:
        """Cards one layer is split over."""
        if self.parallel == "tp":
            return self.cards
        if self.parallel == "pp":
            return 1
        return self.tp or self.cards

    @property
    def pp_stages(self) -> int:
        """Pipeline stages (cards / tp_cards)."""
        return self.cards // self.tp_cards

    def micro_batches_of(self, batch: int) -> int:
        """Micro-batches a pass of `batch` requests is cut into: the field (default
        pp_stages, the fewest that fill every stage), at most one per request
        (docs/multi-fpga.md, "Micro-batches"); 1 without a pipeline."""
        if self.pp_stages == 1:
            return 1
        return min(self.micro_batches or self.pp_stages, batch)

    @property
    def is_single(self) -> bool:
        """One card: no links, today's numbers."""
        return self.cards == 1

    def columns(self) -> dict:
        """What a result row says about its cluster."""
        return {"cards": self.cards, "parallel": self.parallel if self.cards > 1 else "none",
                "tp_cards": self.tp_cards, "pp_stages": self.pp_stages,
                "hop_latency_s": self.hop_latency_s}
