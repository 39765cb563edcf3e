"""An accelerator design (`designs/*.yaml`) and the recipe it applies to a model.

A design is what a hardware team builds on an FPGA, independent of the part: its clock, the
MM and MV arrays of one pipeline (sizes the fit may derive from the part, config/fit.py),
buffers, memory use, FlightLLM's compiler parameters, how pipelines map onto SLRs and memory
channels, and the recipe: the precision and compression it runs any model at
(docs/hardware.md, "FPGAs and designs"). Every parameter is argued in the shipped files.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from fpgasim.config.schema import CLOCK_MHZ, Efficiency, FileName, PosInt, Strict

#: element widths a design's datapath and a recipe may name
Bits = Literal[4, 8, 16]
#: the linear layers of a Llama-family decoder layer, and the LM head
PROJECTIONS = ("q", "k", "v", "o", "gate", "up", "down", "lm_head")


def load_ratio(operand_ratio: float, sparse_ratio: float) -> float:
    """A weight load's bandwidth ratio: the operand-width bytes its instruction carries over
    the bytes it moves, for weights `operand_ratio` narrower than their operands at a
    structured-sparse ratio (FlightLLM's 2 / sparse_ratio, docs/flightllm-model.md §6)."""
    return operand_ratio / sparse_ratio


class Linear(Strict):
    """How the recipe runs one projection: its structured-sparse ratio and bias."""

    sparse_ratio: float = Field(
        1.0, gt=0, le=1, allow_inf_nan=False,
        description="structured-sparse ratio: the weights' stored bytes, their load time and "
        "compute x ratio (1 = dense)",
    )
    bias: bool = Field(False, description="a bias vector is loaded (bias_bits wide)")


class Recipe(Strict):
    """Precision and compression the design applies to any target model (docs/models.md).

    One weight size per (model, recipe): a projection's weights are stored, moved and
    counted at `weight_bits` x its `sparse_ratio` (`weight_bytes`); the arrays multiply them
    at `operand_bits`, the width the compiler lays its on-chip blocks out in, so a weight
    load's instruction carries operand-width bytes and runs `load_ratio` times faster than
    they would (docs/hardware.md, "One weight size").
    """

    name: str = Field(min_length=1, max_length=64, description="short id, e.g. flightllm, fp16")
    weight_bits: Bits = Field(
        description="weight element width as stored in off-chip memory and moved by every "
        "weight load (FlightLLM: int4); the arrays multiply it at max(8, weight_bits)"
    )
    activation_bits: Literal[8, 16] = Field(description="activations and probabilities")
    kv_bits: Bits = Field(description="KV-cache element width")
    bias_bits: Literal[16, 32] = Field(32, description="bias element width")
    q: Linear = Linear()
    k: Linear = Linear()
    v: Linear = Linear()
    o: Linear = Linear()
    gate: Linear = Linear()
    up: Linear = Linear()
    down: Linear = Linear()
    lm_head: Linear = Linear()
    prefill_mask: FileName = Field(
        "causal", description="block-sparse prefill attention: 'causal' or a workloads/masks "
        "table (its file name without .yaml)",
    )

    @model_validator(mode="before")
    @classmethod
    def _retired_fields(cls, data: object) -> object:
        """A recipe of an earlier release names `weight_timed_bits`: one line saying what
        replaced it (one weight size: `weight_bits` is stored, moved and timed)."""
        if isinstance(data, dict) and "weight_timed_bits" in data:
            raise ValueError(
                "weight_timed_bits was retired: weight_bits is the width weights are stored "
                "and moved at (FlightLLM's recipe: weight_bits: 4), the arrays multiply them "
                "at max(8, weight_bits) (docs/hardware.md, \"One weight size\")"
            )
        return data

    def linear(self, name: str) -> Linear:
        """The recipe for projection `name` (one of PROJECTIONS)."""
        return getattr(self, name)

    @property
    def operand_bits(self) -> int:
        """Width the arrays multiply a weight at and the compiler lays its on-chip blocks
        out in: int4 weights are multiplied as int8 (no AMD packing rule for int4 is
        published, config/fit.py), wider ones as stored."""
        return max(8, self.weight_bits)

    @property
    def operand_ratio(self) -> float:
        """Operand bits over stored bits: how much smaller a dense weight load moves than
        the operand-width bytes its instruction carries (FlightLLM: 8 / 4 = 2)."""
        return self.operand_bits / self.weight_bits

    def load_ratio(self, sparse_ratio: float) -> float:
        """A weight load's bandwidth ratio for a projection of this sparse ratio
        (`load_ratio`)."""
        return load_ratio(self.operand_ratio, sparse_ratio)

    def weight_bytes(self, elements: int, sparse_ratio: float = 1.0) -> float:
        """Bytes `elements` weights of this sparse ratio take in memory, and move when
        loaded: weight_bits / 8 x sparse_ratio each (the one weight size)."""
        return elements * self.weight_bits / 8 * sparse_ratio

class Datapath(Strict):
    """Element widths the design's arrays and buffers have a path for (a recipe must fit)."""

    weight_bits: tuple[Bits, ...] = Field(strict=False, min_length=1, max_length=3)
    activation_bits: tuple[Literal[8, 16], ...] = Field(strict=False, min_length=1, max_length=2)
    kv_bits: tuple[Bits, ...] = Field(strict=False, min_length=1, max_length=3)


class PartArray(Strict):
    """The MM array a design uses on one named part (the study sized its arrays per board)."""

    fpga: str = Field(min_length=1, max_length=64, description="the part's `name`")
    rows: PosInt = Field(le=4096, description="token rows")
    cols: PosInt = Field(le=1 << 16, description="MACs per row (N x K)")


class Sfu(Strict):
    """The special-function (MISC) unit of one pipeline."""

    elements_per_cycle: PosInt = Field(le=65536, description="elements per cycle (16)")
    softmax_passes: PosInt = Field(le=16, description="passes over the data for softmax")
    norm_passes: PosInt = Field(le=16, description="passes over the data for RMSNorm")
    eltwise: PosInt | None = Field(None, le=65536, description="add/mul rate (null: the SFU's)")
    silu: PosInt | None = Field(None, le=65536, description="SiLU rate (null: the SFU's)")
    softmax: PosInt | None = Field(None, le=65536, description="softmax rate (null: the SFU's)")
    norm: PosInt | None = Field(None, le=65536, description="RMSnorm rate (null: the SFU's)")


class MemoryUse(Strict):
    """How one pipeline uses the part's off-chip memory (docs/flightllm-model.md §1, §2.3)."""

    ports: PosInt | None = Field(
        None, le=1024,
        description="logical channels the memory is split into (null: the part's channels)",
    )
    channels_a: PosInt | None = Field(
        None, le=1024,
        description="channels of the A and global buffers per pipeline (null: every port)",
    )
    shared_channels: int = Field(
        1, ge=0, le=16, description="further channels per pipeline: B, meta, FSB and bias"
    )
    instruction_channels: int = Field(1, ge=0, le=16, description="instruction fetch channels")
    same_channel_efficiency: Efficiency = Field(
        description="LD/ST within a buffer's channels, where the design's constants apply "
        "(`transfer_model`)")
    cross_channel_efficiency: Efficiency = Field(
        description="LD into B/meta (crosses channels), where the design's constants apply")
    transfer_model: Literal["access_pattern", "design_constants"] = Field(
        "access_pattern", description="access_pattern: transfers run at what the part's "
        "measured access model gives their pattern (the two constants where the part has "
        "none); design_constants: at the two constants (FlightLLM's VHK158 model)",
    )
    mm_weight_path: Literal["cross", "a_channels"] = Field(
        "cross", description="MM-mode weight loads: over one channel at the cross-channel "
        "efficiency (cross: FlightLLM's compiler, docs/flightllm-model.md §4.3), or over the A "
        "channels at the same-channel efficiency, as MV-mode weights (a_channels)",
    )
    zero_fill_bytes_per_cycle: PosInt = Field(
        le=1 << 20, description="zero-fill write rate per channel, bytes/cycle"
    )
    bandwidth_reading: Literal["decimal", "gib"] = Field(
        "decimal", description="read the part's GB/s as the data sheet states it (decimal), "
        "or as GiB/s (FlightLLM's VHK158 configuration; results then say so)"
    )

    @property
    def ports_per_pipeline(self) -> int | None:
        """Channels one pipeline streams over (None: every port)."""
        if self.channels_a is None:
            return None
        return self.channels_a + self.shared_channels + self.instruction_channels


class Buffers(Strict):
    """Depths (rows) of one pipeline's on-chip buffers (docs/flightllm-model.md §1)."""

    a: PosInt = Field(le=1 << 20, description="A: weights in MV mode, activations in MM mode")
    b: PosInt = Field(le=1 << 20, description="B: the vector in MV mode, weights in MM mode")
    global_: PosInt = Field(alias="global", le=1 << 20, description="global: outputs, MISC")
    meta: PosInt = Field(le=1 << 20, description="sparse indices (sets credits even when unused)")
    fsb: PosInt = Field(le=1 << 20, description="per-block N:16 codes")
    bias: PosInt = Field(4096, le=1 << 20, description="int32 bias rows of 64 B")

    model_config = Strict.model_config | {"populate_by_name": True}


class Compiler(Strict):
    """FlightLLM's compiler parameters (docs/flightllm-model.md §1, §4)."""

    block: Literal[16] = Field(16, description="FSB block (16x16); dims are multiples of it")
    mask_block: PosInt = Field(le=1024, description="attention-mask block, tokens (64)")
    mv_group_outputs: PosInt = Field(le=1 << 16, description="outputs of one MV (512)")
    mm_tile_cols: PosInt = Field(
        le=1 << 12, description="output columns one MM is charged for: MM_START_N_NUM (16)"
    )
    mv_k_chunk_blocks: PosInt = Field(le=1 << 14, description="first-guess K chunk of linear_mv")
    mm_k_chunk_blocks: PosInt = Field(le=1 << 14, description="first-guess K chunk of linear_mm")
    kv_append: Literal["reread", "store"] = Field(
        description="decode KV append: FlightLLM's concat rereads the whole cache and stores "
        "0 bytes (reread), or the new rows' K and V are stored (store)"
    )


class Padding(Strict):
    """Token alignments (docs/flightllm-model.md §4.8)."""

    decode_multiple: PosInt = Field(
        le=4096, description="decode context alignment: a step attends ceil_m(L + x) tokens"
    )
    prefill_multiple: PosInt = Field(le=65536, description="prefill length is padded to this")


class Design(Strict):
    """A FlightLLM-style accelerator, independent of the FPGA it is fitted to."""

    name: str = Field(min_length=1, max_length=64, description="short id, e.g. flightllm")
    description: str = Field("", max_length=500, description="human-readable name")
    lowering: Literal["flightllm", "dfx"] = Field(
        "flightllm", description="the compiler that lowers its passes: flightllm (FlightLLM's, "
        "generalised) or dfx (DFX's core and ring, docs/dfx.md)"
    )
    clock_mhz: float = Field(
        allow_inf_nan=False, ge=CLOCK_MHZ[0], le=CLOCK_MHZ[1], description="clock, MHz"
    )
    pipelines: Literal["per_slr", "one"] = Field(
        description="per_slr: one pipeline per SLR, as many as the memory channels feed; one: "
        "a single array for the whole part"
    )
    mm_rows: PosInt = Field(
        le=4096, description="token rows of the MM array (MM_PARALLEL_M, the compiler's M tile)"
    )
    mm_cols: PosInt | None = Field(
        None, le=1 << 16,
        description="MACs per row of the MM array, N x K (null: fitted to the part's DSPs)",
    )
    mm_by_fpga: tuple[PartArray, ...] = Field(
        default=(), strict=False, max_length=64,
        description="arrays fixed for named parts (the study's table); others are fitted",
    )
    mv_lanes: PosInt = Field(
        le=1 << 12, description="token lanes of the MV array (MV_PARALLEL_M = MV_START_M_NUM)"
    )
    mv_macs_per_lane: PosInt | None = Field(
        None, le=10**7,
        description="MACs per cycle of one MV lane (null: a quarter of the MM array)"
    )
    sfu: Sfu
    memory: MemoryUse
    buffers: Buffers
    compiler: Compiler
    padding: Padding
    datapath: Datapath
    recipe: Recipe

    @model_validator(mode="after")
    def _consistent(self) -> Design:
        c, block = self.compiler, self.compiler.block
        for name in ("mask_block", "mv_group_outputs", "mm_tile_cols"):
            value = getattr(c, name)
            if value % block:
                raise ValueError(f"compiler.{name} = {value} is not a multiple of block = {block}")
        for rows in (self.mm_rows, *(e.rows for e in self.mm_by_fpga)):
            if rows % c.mask_block:
                raise ValueError(f"MM array rows = {rows} are not a multiple of "
                                 f"compiler.mask_block = {c.mask_block} (a prefill tile holds "
                                 "whole mask rows)")
        for name in ("mm_cols", "mv_macs_per_lane"):
            value = getattr(self, name)
            if value is not None and value % block:
                raise ValueError(f"{name} = {value} is not a multiple of block = {block} (the "
                                 "arrays' K is one block)")
        # FlightLLM's compiler tiles whole blocks; DFX's lowering reads exact token counts
        # (docs/dfx.md, "Through the CLI"), so its design pads nothing (multiples of 1)
        if self.lowering == "flightllm" and (self.padding.decode_multiple % block
                                             or self.padding.prefill_multiple % self.mm_rows):
            raise ValueError(
                f"padding: decode_multiple = {self.padding.decode_multiple} must be a multiple "
                f"of block = {block} and prefill_multiple = {self.padding.prefill_multiple} of "
                f"mm_rows = {self.mm_rows}"
            )
        r, d = self.recipe, self.datapath
        for field, allowed in (("weight_bits", d.weight_bits),
                               ("activation_bits", d.activation_bits), ("kv_bits", d.kv_bits)):
            if getattr(r, field) not in allowed:
                raise ValueError(
                    f"recipe.{field} = {getattr(r, field)} has no path in this design; "
                    f"datapath.{field} allows {', '.join(map(str, allowed))}"
                )
        return self

