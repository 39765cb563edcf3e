"""How one op becomes instructions: its streamed loads, operand load and compute steps."""

from __future__ import annotations

from dataclasses import dataclass, field

from fpgasim.dataflow.instructions import BUF_WEIGHT, TRAFFIC_WEIGHT
from fpgasim.dataflow.ops import Op


@dataclass
class Step:
    """One compute step of an op: an MPE tile, then SFU work, then a store, in that order."""

    mpe_cycles: int = 0
    macs: int = 0
    streams: tuple[int, ...] = ()  # the op's streamed loads this tile consumes (and frees)
    needs_operand: bool = True
    sfu_elements: int = 0
    store_bytes: int = 0


@dataclass
class Plan:
    """How one op becomes instructions: streamed loads, one operand load, compute steps.

    Streamed loads go through a bounded buffer in `stream_bytes` order; the first
    `prefetch_depth` of them may be issued early (before the operand load and the loads of
    preceding ops that wait for inputs). `stream_waits[k]` marks loads that wait for the
    op's producers (PV's probabilities wait for softmax).
    """

    op: Op
    index: int
    stream_bytes: list[int] = field(default_factory=list)
    stream_waits: list[bool] = field(default_factory=list)
    stream_traffic: int = TRAFFIC_WEIGHT
    stream_buffer: int = BUF_WEIGHT
    operand_bytes: int = 0
    steps: list[Step] = field(default_factory=list)
    tree_visible: int = 0  # attention: computed tree score elements per head (realistic)
    tree_keys: int = 0
    cached_keys: int = 0

    def add_stream(self, nbytes: int, waits: bool = False) -> int:
        """Append a streamed load of `nbytes` (`waits`: it waits for the op's producers);
        returns its index in the stream order."""
        self.stream_bytes.append(nbytes)
        self.stream_waits.append(waits)
        return len(self.stream_bytes) - 1

    @property
    def waits_for_inputs(self) -> bool:
        """Some streamed load waits for a producer: the op's loads cannot be hoisted."""
        return any(self.stream_waits)
