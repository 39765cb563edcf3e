"""What the lowering needs from a board, in bytes and cycles, and the integer helpers."""

from __future__ import annotations

import math
from dataclasses import dataclass

from fpgasim.config.schema import Board


@dataclass(frozen=True)
class Machine:
    """A board as the lowering sees it: channel rates, PE array, SFU, buffers, precisions."""

    ideal: bool
    weight_bytes_per_cycle: float  # weight loads (weight group)
    load_bytes_per_cycle: float  # activation/KV loads (activation group)
    store_bytes_per_cycle: float  # stores (activation group)
    rows: int
    cols: int
    mv_macs_per_cycle: int
    pad: int
    reuse: int
    sfu_elements_per_cycle: int
    depth: int
    weight_bits: int
    act_bits: int
    kv_bits: int
    weight_buffer_bytes: int
    act_buffer_bytes: int

    @classmethod
    def of(cls, board: Board) -> Machine:
        """The board's rates and sizes as the lowering uses them (bytes/cycle, bytes, bits)."""
        return cls(
            ideal=board.overlap == "ideal",
            weight_bytes_per_cycle=board.group_bytes_per_cycle("weight", "load"),
            load_bytes_per_cycle=board.group_bytes_per_cycle("activation", "load"),
            store_bytes_per_cycle=board.group_bytes_per_cycle("activation", "store"),
            rows=board.pe_array.rows,
            cols=board.pe_array.cols,
            mv_macs_per_cycle=board.mv_macs_per_cycle,
            pad=board.padding.mm_token_multiple,
            reuse=board.weight_reuse_tokens,
            sfu_elements_per_cycle=board.sfu.elements_per_cycle,
            depth=board.buffers.prefetch_depth,
            weight_bits=board.precision.weight_bits,
            act_bits=board.precision.activation_bits,
            kv_bits=board.precision.kv_bits,
            weight_buffer_bytes=board.buffers.weight_kib * 1024,
            act_buffer_bytes=board.buffers.activation_kib * 1024,
        )

    @property
    def macs_per_cycle(self) -> int:
        """rows x cols: the PE array's MM-mode rate (ideal mode charges every MAC at it)."""
        return self.rows * self.cols

    def padded(self, n: int) -> int:
        """n tokens rounded up to padding.mm_token_multiple: the rows an MM tile computes."""
        return -(-n // self.pad) * self.pad

    def mpe_cycles(self, n: int, k_dim: int, out_dim: int, heads: int = 1, factor: int = 1) -> int:
        """Cycles of n tokens x (k_dim -> out_dim) per head on the cheaper MPE mode.

        MV mode runs one token at a time at mv_macs_per_cycle (the weight tile stays on chip);
        MM mode pads the tokens to padding.mm_token_multiple and rounds the matrix up to the PE
        array. One token always uses MV (as FlightLLM); a few tokens use n MV passes when that
        beats one padded MM tile, as a compiler for this ISA would schedule them.
        """
        macs = n * k_dim * out_dim * heads * factor
        if self.ideal:
            return ceil_div(macs, self.macs_per_cycle)
        mv_cycles = ceil_div(macs, self.mv_macs_per_cycle)
        if n == 1:
            return mv_cycles
        tiles = ceil_div(k_dim, self.rows) * ceil_div(out_dim, self.cols)
        return min(mv_cycles, self.padded(n) * heads * tiles * factor)

    def is_mv(self, macs: int, cycles: int) -> bool:
        """Whether an MPE tile of `macs` taking `cycles` ran in MV mode (see mpe_cycles)."""
        return not self.ideal and macs > 0 and cycles == ceil_div(macs, self.mv_macs_per_cycle)

    def sfu_cycles(self, elements: int) -> int:
        """Cycles of the SFU over `elements`, at sfu.elements_per_cycle (rounded up)."""
        return ceil_div(elements, self.sfu_elements_per_cycle)


def ceil_div(a: int, b: int) -> int:
    """ceil(a / b) in integers (no float rounding on large counts)."""
    return -(-a // b)


def nbytes_of(elements: int, bits: int) -> int:
    """Bytes of `elements` values of `bits` each, rounded up to whole bytes."""
    return (elements * bits + 7) // 8


def xfer_cycles(nbytes: int, rate: float) -> int:
    """Cycles to move `nbytes` at `rate` bytes/cycle, rounded up; at least 1 (a row's minimum)."""
    return max(1, math.ceil(nbytes / rate))


def split_exact(total: int, weights: list[int]) -> list[int]:
    """Integer parts of `total` proportional to `weights`, summing exactly to `total`."""
    whole = sum(weights)
    out, acc, prev = [], 0, 0
    for w in weights:
        acc += w
        cut = total * acc // whole
        out.append(cut - prev)
        prev = cut
    return out


def token_blocks(n: int, reads: int, reuse: int) -> list[int]:
    """Tokens served by each of the `reads` weight passes: `reuse` each, the rest last."""
    per = max(reuse, -(-n // reads))
    blocks = [min(per, n - b * per) for b in range(reads)]
    if min(blocks) < 1:  # more weight passes than the tokens fill: spread them evenly
        blocks = split_exact(n, [1] * reads)
    return blocks
