"""Pydantic schemas of board, target-model and algorithm files (frozen, extra fields forbidden)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

#: Positive quantities; every field adds its own physically meaningful bounds (Field(ge/le)).
PosInt = Annotated[int, Field(gt=0)]
PosFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
#: A fraction of a link's peak: below 1 % no design streams data (FlightLLM: 0.35 to 0.7).
Efficiency = Annotated[float, Field(ge=0.01, le=1, allow_inf_nan=False)]

#: Accelerator clock range, MHz: FPGA fabrics close timing between tens of MHz and about
#: 1 GHz (Versal DSP58 engines ~1 GHz); 1 MHz to 5 GHz leaves room for hypothetical boards
#: and refuses values (e.g. 5e-324) whose cycle counts overflow to inf.
CLOCK_MHZ = (1.0, 5000.0)
#: Off-chip bandwidth range, GB/s: one DDR4 channel is ~19 GB/s, an HBM3e stack ~1.2 TB/s;
#: 1 GB/s to 100 TB/s covers every board and the explore grids (77 to 1638 GB/s).
BANDWIDTH_GB_S = (1.0, 100_000.0)
#: Off-chip capacity range, GiB: 64 MiB (the smallest DDR part) to 4 TiB.
CAPACITY_GIB = (0.0625, 4096.0)


class Strict(BaseModel):
    """Base: immutable, unknown fields are errors, no NaN/inf, no type coercion.

    `strict` refuses booleans (and strings) for numeric fields, so `clock_mhz: true` is an
    error instead of 1 MHz; whole numbers stay valid for float fields.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    #: The file the object was loaded from ('' when built in code); errors name it.
    _source: str = PrivateAttr("")


def config_source(obj: BaseModel) -> str:
    """How errors name a config object: its file when loaded from one, else `KIND NAME`."""
    source = getattr(obj, "_source", "")
    if source:
        return source
    name = getattr(obj, "name", None) or getattr(obj, "id", "")
    return f"{type(obj).__name__.lower()} {name}".strip()


# --------------------------------------------------------------------------- boards


class PeArray(Strict):
    rows: PosInt = Field(le=4096, description="PE rows of the MPE; rows*cols fp16 MACs per cycle")
    cols: PosInt = Field(le=4096, description="PE columns of the MPE")

    @property
    def macs_per_cycle(self) -> int:
        """rows x cols: the MPE's fp16 MACs per cycle, its peak compute rate."""
        return self.rows * self.cols


class ChannelGroup(Strict):
    channels: PosInt = Field(le=1024, description="off-chip channels this group streams over")
    load_efficiency: Efficiency = Field(description="fraction of the channels' peak on loads")
    store_efficiency: Efficiency = Field(description="fraction of the channels' peak on stores")


class Memory(Strict):
    kind: str = Field(min_length=1, max_length=64, description="technology, e.g. HBM2")
    capacity_gib: float = Field(
        allow_inf_nan=False,
        ge=CAPACITY_GIB[0],
        le=CAPACITY_GIB[1],
        description="off-chip capacity used for weights+KV, GiB",
    )
    bandwidth_gb_s: float = Field(
        allow_inf_nan=False,
        ge=BANDWIDTH_GB_S[0],
        le=BANDWIDTH_GB_S[1],
        description="published peak bandwidth, GB/s",
    )
    bandwidth_is_gib: bool = Field(
        True, description="treat the published figure as GiB/s (the study's convention)"
    )
    channels: PosInt = Field(le=1024, description="channels (pseudo-channels) of the memory")
    weight_group: ChannelGroup = Field(description="channels used to stream weights ('wide')")
    activation_group: ChannelGroup = Field(
        description="channels used for activations and the KV cache ('narrow')"
    )

    @property
    def bytes_per_s(self) -> float:
        """Peak off-chip bytes/s; a GiB/s reading scales the figure by 1.024³
        (docs/accounting.md, Bandwidth)."""
        scale = 1.024**3 if self.bandwidth_is_gib else 1.0
        return self.bandwidth_gb_s * scale * 1e9

    @model_validator(mode="after")
    def _groups_fit(self) -> Memory:
        for name in ("weight_group", "activation_group"):
            group = getattr(self, name)
            if group.channels > self.channels:
                raise ValueError(
                    f"{name}.channels = {group.channels} exceeds memory.channels = "
                    f"{self.channels}; use at most {self.channels}"
                )
        return self


class Sfu(Strict):
    elements_per_cycle: PosInt = Field(le=65536, description="SFU throughput, elements/cycle")
    softmax_passes: PosInt = Field(le=16, description="passes over the data for softmax")
    norm_passes: PosInt = Field(le=16, description="passes over the data for RMSNorm")


class Buffers(Strict):
    # at most 1 GiB each: the largest FPGAs hold about 64 MiB of on-chip RAM
    weight_kib: PosInt = Field(le=1 << 20, description="on-chip weight buffer, KiB")
    activation_kib: PosInt = Field(le=1 << 20, description="on-chip activation/KV buffer, KiB")
    prefetch_depth: PosInt = Field(
        le=64, description="weight tiles that may be loaded ahead of the MPE (2 = double buffer)"
    )


class Precision(Strict):
    weight_bits: Literal[4, 8, 16, 32] = Field(16, description="weight element width")
    activation_bits: Literal[8, 16, 32] = Field(16, description="activation element width")
    kv_bits: Literal[4, 8, 16, 32] = Field(16, description="KV-cache element width")


class Padding(Strict):
    """Three different roundings, one field each (docs/flightllm-model.md §4.8, 2.3)."""

    mm_token_multiple: PosInt = Field(
        le=4096, description="MM-mode token rows are padded to this (the study lowering's MM tile)"
    )
    decode_multiple: PosInt = Field(
        le=4096, description="decode context alignment: a step attends ceil_m(P + i + 1) tokens"
    )
    prefill_multiple: PosInt = Field(le=65536, description="prefill length is padded to this")


# --------------------------------------------------------------------------- FlightLLM-style


class FlightBuffer(Strict):
    """One on-chip buffer of FlightLLM's compiler: depth in rows (addresses)."""

    depth: PosInt = Field(le=1 << 20, description="rows (addresses) of the buffer")


class FlightBuffers(Strict):
    """Buffer depths the compiler sizes K chunks and credits from (docs/flightllm-model.md §1)."""

    a: FlightBuffer = Field(description="A buffer: weights in MV mode, activations in MM mode")
    b: FlightBuffer = Field(description="B buffer: the vector in MV mode, weights in MM mode")
    global_: FlightBuffer = Field(
        alias="global", description="global buffer: outputs, MISC operands"
    )
    meta: FlightBuffer = Field(description="sparse-index buffer (sets credits even when unused)")
    fsb: FlightBuffer = Field(description="per-block N:16 code buffer")

    model_config = ConfigDict(
        extra="forbid", frozen=True, allow_inf_nan=False, populate_by_name=True
    )


class MiscRates(Strict):
    """MISC throughput per op kind, elements/cycle; null = sfu.elements_per_cycle."""

    eltwise: PosInt | None = Field(None, le=65536, description="add and mul")
    silu: PosInt | None = Field(None, le=65536, description="SiLU")
    softmax: PosInt | None = Field(None, le=65536, description="softmax (times sfu.softmax_passes)")
    norm: PosInt | None = Field(None, le=65536, description="RMSnorm (times sfu.norm_passes)")


class FlightLLMBoard(Strict):
    """What FlightLLM's compiler and profiler need beyond the plain board fields (section 8)."""

    block: Literal[16] = Field(16, description="FSB block (16x16); dims must be multiples of it")
    mask_block: PosInt = Field(le=1024, description="attention-mask block, tokens (64)")
    channels_a: PosInt = Field(
        le=64, description="HBM channels of the A and global buffers (parallel factor of their LDs)"
    )
    same_channel_efficiency: Efficiency = Field(description="LD/ST within a buffer's channels")
    cross_channel_efficiency: Efficiency = Field(description="LD into B/meta: crosses channels")
    zero_fill_bytes_per_cycle: PosInt = Field(
        le=1 << 20, description="zero-fill write rate per channel, bytes/cycle (256)"
    )
    mv_group_outputs: PosInt = Field(le=1 << 16, description="outputs of one MV (512)")
    mm_tile_rows: PosInt = Field(
        le=1 << 12, description="rows the compiler tiles M by: MM_PARALLEL_M (128)"
    )
    mm_start_rows: PosInt = Field(
        le=1 << 12, description="rows one MM is charged for: MM_START_M_NUM (128)"
    )
    mm_tile_cols: PosInt = Field(
        le=1 << 12, description="output columns one MM is charged for: MM_START_N_NUM (16)"
    )
    mv_start_rows: PosInt = Field(
        1, le=1 << 12, description="rows one MV instruction carries and is charged for: "
        "MV_START_M_NUM (1)"
    )
    mv_parallel_m: PosInt = Field(
        1, le=1 << 12, description="token lanes of the MV array: MV_PARALLEL_M (1); "
        "mv_macs_per_cycle is the whole array, lanes x MV_PARALLEL_N x MV_PARALLEL_K"
    )
    mv_k_chunk_blocks: PosInt = Field(
        le=1 << 14, description="first-guess K chunk of linear_mv, 16-blocks (128)"
    )
    mm_k_chunk_blocks: PosInt = Field(
        le=1 << 14, description="first-guess K chunk of linear_mm, 16-blocks (256)"
    )
    buffers: FlightBuffers
    misc: MiscRates = MiscRates()

    @field_validator("mv_parallel_m")
    @classmethod
    def _whole_lanes(cls, lanes: int, info: ValidationInfo) -> int:
        rows = info.data.get("mv_start_rows")
        if rows is not None and rows % lanes:
            raise ValueError(
                f"a divisor of mv_start_rows = {rows} (an MV instruction fills whole token lanes)"
            )
        return lanes

    @model_validator(mode="after")
    def _tiles(self) -> FlightLLMBoard:
        for name in ("mask_block", "mv_group_outputs", "mm_tile_rows", "mm_tile_cols"):
            value = getattr(self, name)
            if value % self.block:
                raise ValueError(f"{name} = {value} is not a multiple of block = {self.block}")
        if (self.mv_group_outputs // self.block) % self.channels_a:
            raise ValueError(
                f"mv_group_outputs / block = {self.mv_group_outputs // self.block} is not a "
                f"multiple of channels_a = {self.channels_a}"
            )
        return self


class Board(Strict):
    """A FlightLLM-style accelerator on one FPGA board."""

    name: str = Field(min_length=1, max_length=64, description="short id, e.g. u280")
    description: str = Field("", max_length=500, description="human-readable name")
    clock_mhz: float = Field(
        allow_inf_nan=False, ge=CLOCK_MHZ[0], le=CLOCK_MHZ[1], description="accelerator clock, MHz"
    )
    pe_array: PeArray
    mv_macs_per_cycle: PosInt = Field(
        le=10**7, description="MPE throughput in matrix-vector (one token) mode, MAC/cycle"
    )
    slrs: PosInt = Field(le=16, description="super logic regions (dies)")
    dsps: int | None = Field(None, ge=0, le=10**6, description="DSP slices (null: unpublished)")
    dsp_kind: str | None = Field(None, max_length=32, description="DSP primitive")
    luts_k: PosInt | None = Field(None, le=10**6, description="LUTs, thousands")
    bram36: int | None = Field(None, ge=0, le=10**6, description="36 Kb block RAMs")
    uram: int | None = Field(None, ge=0, le=10**6, description="288 Kb UltraRAMs")
    onchip_mb: PosFloat | None = Field(None, le=1e5, description="total on-chip RAM, Mb")
    memory: Memory
    sfu: Sfu
    buffers: Buffers
    precision: Precision = Precision()
    padding: Padding
    weight_reuse_tokens: PosInt = Field(
        128, le=65536, description="tokens served per weight read; weights reread per block"
    )
    overlap: Literal["realistic", "ideal"] = Field(
        "realistic", description="event engine mode: realistic, or ideal (analytic assumptions)"
    )
    lowering: Literal["study", "flightllm"] = Field(
        "study", description="instruction stream: the study's tiling, or FlightLLM's compiler"
    )
    duration_divisor: float = Field(
        1.0,
        ge=1,
        le=100,
        allow_inf_nan=False,
        description="every duration is divided by this (FlightLLM's profiler: 3.2)",
    )
    max_context_tokens: int | None = Field(
        None, ge=1, le=10**7, description="longest sequence (tokens attended) the board runs"
    )
    flightllm: FlightLLMBoard | None = Field(
        None, description="FlightLLM compiler parameters (required when lowering is flightllm)"
    )

    @property
    def macs_per_cycle(self) -> int:
        """The PE array's MACs per cycle (rows x cols), the board's peak compute rate."""
        return self.pe_array.macs_per_cycle

    @property
    def bytes_per_cycle(self) -> float:
        """Peak off-chip bytes per clock cycle."""
        return self.memory.bytes_per_s / (self.clock_mhz * 1e6)

    @property
    def clock_hz(self) -> float:
        """clock_mhz in Hz: cycles per second, before any duration_divisor."""
        return self.clock_mhz * 1e6

    @property
    def channel_bytes_per_s(self) -> float:
        """Peak bytes per second of one memory channel (the peak over memory.channels), the
        per-channel side of `group_bytes_per_cycle`: FlightLLM's compiler times each
        transfer per channel from it (the board defines every channel rate)."""
        return self.memory.bytes_per_s / self.memory.channels

    def group_bytes_per_cycle(
        self, group: Literal["weight", "activation"], direction: Literal["load", "store"]
    ) -> float:
        """Sustained bytes per cycle of a channel group in one direction: the group's share
        of the peak (channels / memory.channels) times its load or store efficiency.

        The one definition of a channel rate (docs/accounting.md, Bandwidth): the analytic
        engine, the lowering and `fpgasim boards` all use it.
        """
        mem = self.memory
        g = mem.weight_group if group == "weight" else mem.activation_group
        eff = g.load_efficiency if direction == "load" else g.store_efficiency
        return self.bytes_per_cycle * g.channels / mem.channels * eff

    @model_validator(mode="after")
    def _flightllm_fields(self) -> Board:
        if self.lowering == "flightllm" and self.flightllm is None:
            raise ValueError(
                "lowering = flightllm needs the flightllm: section (docs/flightllm-model.md §8)"
            )
        fl = self.flightllm
        if fl is not None and self.mv_macs_per_cycle % (fl.mv_parallel_m * fl.block):
            raise ValueError(
                f"mv_macs_per_cycle = {self.mv_macs_per_cycle} is not a multiple of "
                f"flightllm.mv_parallel_m x flightllm.block = {fl.mv_parallel_m * fl.block} "
                f"(the MV array is lanes x MV_PARALLEL_N x MV_PARALLEL_K, K = one block)"
            )
        return self

    @model_validator(mode="after")
    def _mv_not_above_mm(self) -> Board:
        # The study's MV mode is a share of the one array; FlightLLM's MV is its own unit
        # (its own queue and array, docs/flightllm-model.md §1-2), so it may be the larger one.
        if self.lowering == "study" and self.mv_macs_per_cycle > self.pe_array.macs_per_cycle:
            raise ValueError(
                f"mv_macs_per_cycle = {self.mv_macs_per_cycle} exceeds the PE array "
                f"({self.pe_array.macs_per_cycle} MAC/cycle); MV mode uses part of the array"
            )
        return self


# --------------------------------------------------------------------------- models


class FlightLinear(Strict):
    """One linear layer as FlightLLM's model has it: sparsity ratio and bias."""

    sparse_ratio: float = Field(
        1.0, gt=0, le=1, allow_inf_nan=False, description="structured-sparse ratio (1 = dense)"
    )
    bias: bool = Field(False, description="an int32 bias is loaded")


class FlightLLMModel(Strict):
    """Per-tensor precision, sparsity and biases of a model on a FlightLLM board (section 8)."""

    activation_bits: Literal[8, 16] = Field(8, description="activations, KV cache, probabilities")
    weight_bits: Literal[4, 8, 16] = Field(8, description="weight bits as stored (byte counts)")
    weight_timed_bits: Literal[4, 8, 16] = Field(
        8, description="weight bits the load time is charged for (bandwidth_ratio = bits/timed)"
    )
    bias_bits: Literal[16, 32] = Field(32, description="bias element width")
    q: FlightLinear = FlightLinear()
    k: FlightLinear = FlightLinear()
    v: FlightLinear = FlightLinear()
    o: FlightLinear = FlightLinear()
    gate: FlightLinear = FlightLinear()
    up: FlightLinear = FlightLinear()
    down: FlightLinear = FlightLinear()
    lm_head: FlightLinear = FlightLinear()
    prefill_mask: str = Field(
        "causal",
        min_length=1,
        max_length=200,
        description="block-sparse prefill masks: 'causal' (dense causal) or a masks/ table name",
    )


class MaskLayerSums(Strict):
    """One layer's block-mask sums over heads (docs/flightllm-model.md §4.9; workloads/masks/)."""

    S: list[Annotated[int, Field(ge=0, le=1 << 20)]] = Field(
        min_length=2, max_length=4096, description="active blocks per mask row, over heads"
    )
    V: list[Annotated[int, Field(ge=0, le=1 << 20)]] = Field(
        min_length=1, max_length=2048, description="blocks active in rows 2t or 2t+1"
    )
    C: list[Annotated[int, Field(ge=0, le=1 << 24)]] = Field(
        min_length=1, max_length=2048, description="C(n) for n = 2, 4, ...: runs + partial rows"
    )

    @model_validator(mode="after")
    def _lengths(self) -> MaskLayerSums:
        if len(self.S) % 2 or len(self.V) != len(self.S) // 2 or len(self.C) != len(self.S) // 2:
            raise ValueError(
                f"S has {len(self.S)} rows, V {len(self.V)}, C {len(self.C)}; give an even "
                f"number of S rows and half as many V and C entries"
            )
        return self


class MaskTable(Strict):
    """Per-layer sums of a model's prefill attention masks (workloads/masks/*.yaml)."""

    mask_block: PosInt = Field(le=1024, description="tokens per mask block")
    heads: PosInt = Field(le=1024, description="heads the sums run over")
    layers: list[MaskLayerSums] = Field(min_length=1, max_length=1024)

    @model_validator(mode="after")
    def _ranges(self) -> MaskTable:
        for k, layer in enumerate(self.layers):
            rows = len(layer.S)
            bad = [s for s in layer.S if not self.heads <= s <= self.heads * rows]
            if bad:
                raise ValueError(
                    f"layers[{k}].S has {bad[0]}; each row sum is in {self.heads}.."
                    f"{self.heads * rows} (no empty rows)"
                )
        return self


class TargetModel(Strict):
    """A Llama-family decoder-only target model (RMSNorm, SwiGLU, RoPE, no biases)."""

    id: str = Field(min_length=1, max_length=64)
    hf_name: str = Field("", max_length=200, description="Hugging Face repository")
    hidden: PosInt = Field(le=1 << 17, description="hidden size h")
    intermediate: PosInt = Field(le=1 << 19, description="MLP intermediate size i")
    layers: PosInt = Field(le=1024, description="decoder layers N")
    heads: PosInt = Field(le=1024, description="attention heads H")
    kv_heads: PosInt = Field(le=1024, description="key/value heads (GQA)")
    head_dim: PosInt = Field(le=4096, description="dimension of one head")
    vocab: PosInt = Field(le=1 << 22, description="vocabulary V")
    params_b: float = Field(
        allow_inf_nan=False,
        ge=0.001,
        le=1e5,
        description="published parameter count, billions (1 M to 100 T)",
    )
    flightllm: FlightLLMModel | None = Field(
        None, description="precision, sparsity and biases on a FlightLLM board (null: plain int8)"
    )

    @property
    def kv_ratio(self) -> float:
        """s = kv_heads / heads."""
        return self.kv_heads / self.heads

    @model_validator(mode="after")
    def _shapes(self) -> TargetModel:
        if self.heads * self.head_dim != self.hidden:
            raise ValueError(
                f"heads*head_dim = {self.heads}*{self.head_dim} != hidden = {self.hidden}"
            )
        if self.heads % self.kv_heads:
            raise ValueError(
                f"heads = {self.heads} is not a multiple of kv_heads = {self.kv_heads}"
            )
        return self


# --------------------------------------------------------------------------- algorithms


class Source(Strict):
    what: str = Field(max_length=300)
    where: str = Field(max_length=300)


class CalibrationTarget(Strict):
    """What `fpgasim tree calibrate` pins an embedded acceptance model to, besides the
    published `tau_target` at `context_ref` (docs/trees.md, "Calibration")."""

    depth_profile: Literal["eagle1_chain", "flat"] = Field(
        description="g(d): EAGLE-1's mean chain acceptance per position relative to position 0 "
        "(eagle1_chain), or the same at every depth (flat)"
    )
    measured_table: str = Field(
        min_length=1, max_length=200, description="AAT table (in `aat_dir`) of the decay fit"
    )
    measured_method: str = Field(
        min_length=1, max_length=64, description="its rows used (the table's `method`)"
    )
    other_tables: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        default_factory=list, max_length=16, description="further tables the curve is compared with"
    )


class PositionalAcceptance(Strict):
    """P(rank-r child of an accepted node is the accepted token); rows = depth 1, 2, ...

    Depths below the last row reuse it; ranks past a row have probability 0. At context L
    every probability is scaled by (1 - context_decay) ** log2(L / context_ref), capped so
    that no row sums past 1. See docs/trees.md.
    """

    probabilities: list[list[Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]]] = Field(
        min_length=1,
        max_length=64,
        description=(
            "rows = depth 1, 2, ... (last row reused deeper); columns = sibling rank 0, 1, ..."
        ),
    )
    context_decay: float = Field(
        0.0, ge=0, lt=1, description="relative acceptance loss per doubling of context"
    )
    context_ref: PosInt = Field(
        1024, le=10**7, description="context length at which `probabilities` apply"
    )
    tau_target: float | None = Field(
        None,
        ge=1,
        le=256,
        description="published tau at the default tree that the probabilities were scaled to",
    )
    max_depth: int | None = Field(
        None, ge=1, le=64, description="deepest level (below the root) of embedded optimal trees"
    )
    calibration: str = Field("", max_length=4000, description="how the numbers were obtained")
    calibrated_to: CalibrationTarget | None = Field(
        None, description="what `fpgasim tree calibrate` recomputes the model from"
    )

    @model_validator(mode="after")
    def _rows(self) -> PositionalAcceptance:
        for d, row in enumerate(self.probabilities):
            if not row or len(row) > 4096:
                raise ValueError(f"probabilities[{d}] has {len(row)} ranks; give 1 to 4096")
            if sum(row) > 1 + 1e-9:
                raise ValueError(
                    f"probabilities[{d}] sums to {sum(row):.4f} > 1; siblings are exclusive, "
                    f"scale the row down"
                )
        return self


class TreeDefault(Strict):
    shape: list[Annotated[int, Field(ge=0, le=4096)]] | None = Field(
        None, description="level widths below the root"
    )
    depth: PosInt | None = Field(None, le=64, description="draft depth (dynamic trees)")
    top_k: PosInt | None = Field(None, le=1024, description="nodes expanded per level")
    total_tokens: PosInt | None = Field(None, le=4096, description="tokens kept after rerank")


class DrafterSchema(Strict):
    """Base of every drafter's schema: its `kind` tag and its tree family.

    `tree_family`: "static" drafters build a tree of given level widths (`default_tree.shape`);
    "dynamic" ones grow it from a depth and a top-k (`default_tree.depth`, `.top_k`).
    `tree_table_columns`: the columns of a per-x tree table (workloads/aat) that state this
    drafter's tree: one column of level widths (static), or depth and top-k (dynamic).
    """

    kind: str
    tree_family: ClassVar[Literal["static", "dynamic"]] = "static"
    tree_table_columns: ClassVar[tuple[str, ...]] = ("longspec_tree_shape",)

    @property
    def levels_per_pass(self) -> int:
        """Tree levels one draft pass proposes (1 for autoregressive drafters)."""
        return 1


class LongSpecDrafter(DrafterSchema):
    kind: Literal["longspec"]
    window_tokens: PosInt = Field(512, le=1 << 20, description="sliding-window size W")
    reads_target_kv: bool = Field(True, description="cross-attention over the target's KV")


class Eagle3Drafter(DrafterSchema):
    kind: Literal["eagle3"]
    tree_family: ClassVar[Literal["static", "dynamic"]] = "dynamic"
    tree_table_columns: ClassVar[tuple[str, ...]] = ("eagle3_depth", "eagle3_top_k")
    fused_layers: PosInt = Field(3, le=16, description="target hidden states fused by fc")
    input_multiple: PosInt = Field(2, le=8, description="q/k/v input width / hidden")
    draft_vocab: PosInt | None = Field(
        None, le=1 << 22, description="draft LM-head vocabulary (null: the target's)"
    )
    q_charged_twice: bool = Field(True, description="the study charges q's MACs twice")


class FalconDrafter(DrafterSchema):
    kind: Literal["falcon"]
    tokens_per_pass: Literal[2, 3, 4] = Field(2, description="k, tokens emitted per pass")
    lstm_layers: PosInt = Field(2, le=8, description="LSTM layers over embedding+feature")
    passes: PosInt = Field(4, le=64, description="m, forward passes of the default tree")

    @property
    def levels_per_pass(self) -> int:
        """k: a semi-autoregressive pass proposes k levels."""
        return self.tokens_per_pass


#: Drafter schemas by kind, in registration order (the `drafter` field accepts any of them).
DRAFTER_SCHEMAS: dict[str, type[DrafterSchema]] = {
    "longspec": LongSpecDrafter,
    "eagle3": Eagle3Drafter,
    "falcon": FalconDrafter,
}


class Algorithm(Strict):
    """A speculative-decoding algorithm: its drafter, default tree and acceptance model."""

    id: str = Field(min_length=1, max_length=64)
    description: str = Field("", max_length=1000)
    #: any kind of DRAFTER_SCHEMAS (register_drafter_schema widens the union)
    drafter: LongSpecDrafter | Eagle3Drafter | FalconDrafter = Field(discriminator="kind")
    draft_schedule: str = Field("", max_length=2000, description="how the tree is drafted")
    default_tree: TreeDefault
    max_tree: list[Annotated[int, Field(ge=1, le=4096)]] | None = Field(
        None, description="level widths of the maximal tree searched by prior-score"
    )
    ori_verify_len: PosInt | None = Field(None, le=4096, description="GPU default x (Ori set)")
    acceptance: PositionalAcceptance | None = None
    sources: list[Source] = Field(default_factory=list)

    @property
    def kind(self) -> str:
        """The drafter's kind (e.g. longspec, eagle3, falcon): the key its plug-in is found by."""
        return self.drafter.kind

    @property
    def dynamic_tree(self) -> bool:
        """Whether the drafter grows its tree from depth and top-k (else: given widths)."""
        return self.drafter.tree_family == "dynamic"

    @model_validator(mode="after")
    def _default_tree_fits_drafter(self) -> Algorithm:
        """The default tree must be draftable, so its errors name this file, not --tree."""
        d = self.default_tree
        if self.dynamic_tree:
            if d.depth is None or d.top_k is None:
                raise ValueError(
                    f"default_tree: {self.kind} drafts a dynamic tree; give depth and top_k "
                    "(and total_tokens, the tokens kept after reranking)"
                )
            return self
        if not d.shape:
            raise ValueError(f"default_tree: {self.kind} drafts a static tree; give its shape")
        shape = d.shape
        if shape[0] < 1:
            raise ValueError(
                f"default_tree.shape = {shape}: level widths with at least 1 node on the first "
                "level, e.g. [4, 16, 16, 16, 16]"
            )
        if 0 in shape and any(shape[shape.index(0) :]):
            raise ValueError(f"default_tree.shape = {shape}: no level after an empty (0) level")
        return self


def register_drafter_schema(schema: type[DrafterSchema]) -> None:
    """Let algorithm files name a new drafter kind: add its schema to the `drafter` union.

    The schema declares `kind: Literal["NAME"]`; a kind already registered is an error.
    """
    kind = schema.model_fields["kind"].annotation.__args__[0]
    if kind in DRAFTER_SCHEMAS:
        raise ValueError(f"drafter kind {kind!r} is already registered")
    DRAFTER_SCHEMAS[kind] = schema
    _rebuild_drafter_union()


def unregister_drafter_schema(kind: str) -> None:
    """Remove a registered drafter kind (tests register theirs for their duration only)."""
    DRAFTER_SCHEMAS.pop(kind)
    _rebuild_drafter_union()


def _rebuild_drafter_union() -> None:
    Algorithm.model_fields["drafter"].annotation = Union[tuple(DRAFTER_SCHEMAS.values())]  # noqa: UP007
    Algorithm.model_rebuild(force=True)
