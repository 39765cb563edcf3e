"""Pydantic schemas of board, target-model and algorithm files (frozen, extra fields forbidden)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: Positive quantities; every field adds its own upper bound (Field(le=...)).
PosInt = Annotated[int, Field(gt=0)]
PosFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Efficiency = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]


class Strict(BaseModel):
    """Base: immutable, unknown fields are errors, no NaN/inf."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


# --------------------------------------------------------------------------- boards


class PeArray(Strict):
    rows: PosInt = Field(le=4096, description="PE rows of the MPE; rows*cols fp16 MACs per cycle")
    cols: PosInt = Field(le=4096, description="PE columns of the MPE")

    @property
    def macs_per_cycle(self) -> int:
        return self.rows * self.cols


class ChannelGroup(Strict):
    channels: PosInt = Field(le=1024, description="off-chip channels this group streams over")
    load_efficiency: Efficiency = Field(description="fraction of the channels' peak on loads")
    store_efficiency: Efficiency = Field(description="fraction of the channels' peak on stores")


class Memory(Strict):
    kind: str = Field(min_length=1, max_length=64, description="technology, e.g. HBM2")
    capacity_gib: PosFloat = Field(le=1e6, description="off-chip capacity used for weights+KV, GiB")
    bandwidth_gb_s: PosFloat = Field(le=1e6, description="published peak bandwidth, GB/s")
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
    weight_kib: PosInt = Field(le=10**7, description="on-chip weight buffer, KiB")
    activation_kib: PosInt = Field(le=10**7, description="on-chip activation/KV buffer, KiB")
    prefetch_depth: PosInt = Field(
        le=64, description="weight tiles that may be loaded ahead of the MPE (2 = double buffer)"
    )


class Precision(Strict):
    weight_bits: Literal[4, 8, 16, 32] = Field(16, description="weight element width")
    activation_bits: Literal[8, 16, 32] = Field(16, description="activation element width")
    kv_bits: Literal[4, 8, 16, 32] = Field(16, description="KV-cache element width")


class Padding(Strict):
    decode_multiple: PosInt = Field(le=4096, description="MM token counts are padded to this")
    prefill_multiple: PosInt = Field(le=65536, description="prefill token padding")


class Board(Strict):
    """A FlightLLM-style accelerator on one FPGA board."""

    name: str = Field(min_length=1, max_length=64, description="short id, e.g. u280")
    description: str = Field("", max_length=500, description="human-readable name")
    clock_mhz: PosFloat = Field(le=5000, description="accelerator clock, MHz")
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
    onchip_mb: PosFloat | None = Field(None, le=1e7, description="total on-chip RAM, Mb")
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
    max_context_tokens: int | None = Field(
        None, ge=1, le=10**7, description="longest sequence (tokens attended) the board runs"
    )
    lowering: Literal["study", "flightllm"] = Field(
        "study", description="instruction-stream style: the study's generic lowering or FlightLLM's"
    )

    @property
    def macs_per_cycle(self) -> int:
        return self.pe_array.macs_per_cycle

    @property
    def bytes_per_cycle(self) -> float:
        """Peak off-chip bytes per clock cycle."""
        return self.memory.bytes_per_s / (self.clock_mhz * 1e6)

    @property
    def clock_hz(self) -> float:
        return self.clock_mhz * 1e6

    def group_bytes_per_cycle(
        self, group: Literal["weight", "activation"], direction: Literal["load", "store"]
    ) -> float:
        """Sustained bytes per cycle of a channel group in one direction: the group's share
        of the peak (channels / memory.channels) times its load or store efficiency.

        The one definition of a channel rate (ACCOUNTING.md, Bandwidth): the analytic
        engine, the lowering and `fpgasim boards` all use it.
        """
        mem = self.memory
        g = mem.weight_group if group == "weight" else mem.activation_group
        eff = g.load_efficiency if direction == "load" else g.store_efficiency
        return self.bytes_per_cycle * g.channels / mem.channels * eff

    @model_validator(mode="after")
    def _mv_not_above_mm(self) -> Board:
        if self.mv_macs_per_cycle > self.pe_array.macs_per_cycle:
            raise ValueError(
                f"mv_macs_per_cycle = {self.mv_macs_per_cycle} exceeds the PE array "
                f"({self.pe_array.macs_per_cycle} MAC/cycle); MV mode uses part of the array"
            )
        return self


# --------------------------------------------------------------------------- models


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
    params_b: PosFloat = Field(le=1e5, description="published parameter count, billions")

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


class LongSpecDrafter(Strict):
    kind: Literal["longspec"]
    window_tokens: PosInt = Field(512, le=1 << 20, description="sliding-window size W")
    reads_target_kv: bool = Field(True, description="cross-attention over the target's KV")


class Eagle3Drafter(Strict):
    kind: Literal["eagle3"]
    fused_layers: PosInt = Field(3, le=16, description="target hidden states fused by fc")
    input_multiple: PosInt = Field(2, le=8, description="q/k/v input width / hidden")
    draft_vocab: PosInt | None = Field(
        None, le=1 << 22, description="draft LM-head vocabulary (null: the target's)"
    )
    q_charged_twice: bool = Field(True, description="the study charges q's MACs twice")


class FalconDrafter(Strict):
    kind: Literal["falcon"]
    tokens_per_pass: Literal[2, 3, 4] = Field(2, description="k, tokens emitted per pass")
    lstm_layers: PosInt = Field(2, le=8, description="LSTM layers over embedding+feature")
    passes: PosInt = Field(4, le=64, description="m, forward passes of the default tree")


class Algorithm(Strict):
    """A speculative-decoding algorithm: its drafter, default tree and acceptance model."""

    id: str = Field(min_length=1, max_length=64)
    description: str = Field("", max_length=1000)
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
        return self.drafter.kind

    @model_validator(mode="after")
    def _default_tree_fits_drafter(self) -> Algorithm:
        d = self.default_tree
        if self.kind == "eagle3" and (d.depth is None or d.top_k is None):
            raise ValueError(
                "default_tree: EAGLE-3 drafts a dynamic tree; give depth and top_k "
                "(and total_tokens, the tokens kept after reranking)"
            )
        if self.kind != "eagle3" and not d.shape:
            raise ValueError(f"default_tree: {self.kind} drafts a static tree; give its shape")
        return self
