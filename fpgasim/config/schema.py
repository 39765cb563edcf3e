"""Pydantic schemas of board, target-model and algorithm files (frozen, extra fields forbidden)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

from fpgasim.errors import ConfigError, printable

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

    @field_validator("*")
    @classmethod
    def _text_is_data(cls, value: object) -> object:
        """Text read from a file is data: every control character but line breaks and tabs
        is escaped (`errors.printable`), so a name (`name: "u280\\e[31m"`) reaches
        terminals, tables, CSV files and figure titles as visible text."""
        return printable(value, keep_lines=True) if isinstance(value, str) else value


def plain_file_name(name: str) -> str:
    """A file name inside the folder its field reads from: no folder part and not `.` or
    `..`, so a file-name field cannot leave its folder."""
    if "/" in name or "\\" in name or name in (".", ".."):
        raise ValueError(f"a plain file name inside its folder, not {name!r} (no '/', '\\', "
                         "'.' or '..')")
    return name


#: A file named by a field, read from the folder the field says (`aat_dir`, workloads/masks)
FileName = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(plain_file_name)]


def config_source(obj: BaseModel) -> str:
    """How errors name a config object: its file when loaded from one, else `KIND NAME`."""
    source = getattr(obj, "_source", "")
    if source:
        return source
    name = getattr(obj, "name", None) or getattr(obj, "id", "")
    return f"{type(obj).__name__.lower()} {name}".strip()


def refuse_architecture(model: BaseModel, where: str, allowed: tuple[str, ...]) -> None:
    """Refuse, in one line naming the model and `where` (a lowering or the accounting), a
    target model of an architecture `where` does not describe (docs/models.md, "GPT-2")."""
    arch = getattr(model, "architecture", "llama")
    if arch not in allowed:
        raise ConfigError(model_source(model), "architecture", arch,
                          f"{' or '.join(allowed)}: {where} does not model {arch} (model "
                          f"{getattr(model, 'id', '')}; GPT-2 runs on the dfx design)")


def model_source(model: BaseModel) -> str:
    """How an error names a target model: its file when read from one, else `model ID`."""
    return getattr(model, "_source", "") or f"model {getattr(model, 'id', '')}"


# --------------------------------------------------------------------------- masks


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


class MoeBlock(Strict):
    """A mixture-of-experts feed-forward block (docs/moe-sd.md, "Reading an MoE config"):
    E routed SwiGLU experts of which each token uses k, an optional shared expert, and
    which layers are sparse; plus how tokens route (docs/moe-sd.md, "How many experts a
    verify pass touches": uniform by default)."""

    experts: PosInt = Field(le=4096, description="routed experts per layer E")
    experts_per_token: PosInt = Field(le=4096, description="experts each token uses k")
    expert_intermediate: PosInt = Field(le=1 << 19, description="one expert's width I_e")
    shared_intermediate: int = Field(
        0, ge=0, le=1 << 19, description="shared expert's width I_s (0: none)")
    shared_gate: bool = Field(False, description="the shared expert has a [1, h] sigmoid gate")
    norm_topk_prob: bool = Field(False, description="top-k weights renormalised")
    dense_layers: tuple[Annotated[int, Field(ge=0, le=1023)], ...] = Field(
        (), strict=False, max_length=1024,
        description="layers whose MLP is dense (intermediate wide)")
    routing_skew: float = Field(
        0.0, ge=0, le=4, description="capped-Zipf exponent s of expert popularity (0: uniform)")
    sibling_correlation: float = Field(
        0.0, ge=0, lt=1, description="rho: a tree token copies its parent's experts")
    expert_counts: tuple[tuple[Annotated[int, Field(ge=0)], ...], ...] = Field(
        (), strict=False, max_length=1024,
        description="a routing trace's expert counts: one row for every layer or one per "
        "layer, E counts each (empty: routing_skew's law)")

    @model_validator(mode="after")
    def _k_within_e(self) -> MoeBlock:
        if self.experts_per_token > self.experts:
            raise ValueError(f"experts_per_token = {self.experts_per_token} exceeds experts = "
                             f"{self.experts}; give 1 <= k <= E")
        for i, row in enumerate(self.expert_counts):
            tokens = sum(row) / self.experts_per_token
            if len(row) != self.experts or tokens <= 0 or max(row) > tokens:
                raise ValueError(f"expert_counts[{i}]: {len(row)} counts summing to {sum(row)}; "
                                 f"give E = {self.experts} counts, sum > 0, each at most "
                                 "sum / k")
        return self


class TargetModel(Strict):
    """A decoder-only target model, architecture only (as its Hugging Face config states
    it): Llama family (RMSNorm, SwiGLU, RoPE) or GPT-2 (`architecture: gpt2`: LayerNorm with
    bias, GELU MLP with biases, learned positions, biased projections, tied LM head;
    docs/models.md, "GPT-2"). Precision and compression are the design's recipe
    (config/design.py), not the model's."""

    id: str = Field(min_length=1, max_length=64)
    architecture: Literal["llama", "gpt2"] = Field(
        "llama", description="llama (RMSNorm, SwiGLU, RoPE) or gpt2 (LayerNorm, GELU MLP, "
        "learned positions, every projection biased, tied LM head)"
    )
    hf_name: str = Field("", max_length=200, description="Hugging Face repository")
    hidden: PosInt = Field(le=1 << 17, description="hidden size h (hidden_size)")
    intermediate: PosInt = Field(le=1 << 19, description="MLP intermediate size i")
    layers: PosInt = Field(le=1024, description="decoder layers N (num_hidden_layers)")
    heads: PosInt = Field(le=1024, description="attention heads H (num_attention_heads)")
    kv_heads: PosInt = Field(le=1024, description="key/value heads (num_key_value_heads)")
    head_dim: PosInt = Field(le=4096, description="dimension of one head")
    vocab: PosInt = Field(le=1 << 22, description="vocabulary V (vocab_size)")
    window_tokens: PosInt = Field(
        le=1 << 24, description="context window: the longest sequence the model attends "
        "(max_position_embeddings)"
    )
    tied_embeddings: bool = Field(
        False, description="the LM head shares the embedding table (tie_word_embeddings)"
    )
    attention_bias: bool = Field(
        False, description="q, k and v projections have biases (Qwen2; attention_bias)"
    )
    dtype: str = Field("", max_length=32, description="stored dtype of the released weights")
    params_b: float | None = Field(
        None, allow_inf_nan=False, ge=0.001, le=1e5,
        description="published parameter count, billions (null: not published)",
    )
    source: str = Field("", max_length=500, description="where the facts were read")
    moe: MoeBlock | None = Field(None, description="mixture-of-experts MLP (null: dense)")
    #: the key the model's file writes for a field, where it differs (a Hugging Face
    #: config's `hidden_size` for `hidden`): errors name what the user wrote
    _keys: dict[str, str] = PrivateAttr(default_factory=dict)

    def key_of(self, field: str) -> str:
        """The key the model's file writes for `field` (its own name in a YAML model)."""
        return self._keys.get(field, field)

    @property
    def kv_ratio(self) -> float:
        """s = kv_heads / heads."""
        return self.kv_heads / self.heads

    @property
    def q_width(self) -> int:
        """Width of the q projection and attention output, heads x head_dim (hidden in
        every dense model shipped; Qwen3-MoE's is twice its hidden)."""
        return self.heads * self.head_dim

    @property
    def group(self) -> int:
        """Query heads per KV head (grouped-query attention; 1 without it)."""
        return self.heads // self.kv_heads

    @model_validator(mode="after")
    def _shapes(self) -> TargetModel:
        if self.heads * self.head_dim != self.hidden and self.moe is None:
            raise ValueError(
                f"heads*head_dim = {self.heads}*{self.head_dim} != hidden = {self.hidden}"
            )
        if self.moe is not None and len(self.moe.expert_counts) not in (0, 1, self.layers):
            raise ValueError(f"moe.expert_counts has {len(self.moe.expert_counts)} rows; give "
                             f"1 (every layer) or {self.layers}")
        if self.moe is not None and any(i >= self.layers for i in self.moe.dense_layers):
            raise ValueError(f"moe.dense_layers {list(self.moe.dense_layers)}: each in "
                             f"[0, {self.layers})")
        if self.heads % self.kv_heads:
            raise ValueError(
                f"heads = {self.heads} is not a multiple of kv_heads = {self.kv_heads}"
            )
        if self.architecture == "gpt2" and (self.kv_heads != self.heads
                                            or not self.tied_embeddings):
            raise ValueError("a gpt2 model has kv_heads = heads and tied_embeddings: true "
                             f"(kv_heads = {self.kv_heads}, tied_embeddings = "
                             f"{str(self.tied_embeddings).lower()})")
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
    measured_table: FileName = Field(description="AAT table (in `aat_dir`) of the decay fit")
    measured_method: str = Field(
        min_length=1, max_length=64, description="its rows used (the table's `method`)"
    )
    other_tables: list[FileName] = Field(
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
    #: any kind of DRAFTER_SCHEMAS, the one list of drafter schemas: the union is built
    #: from it here and rebuilt by register_drafter_schema (dataflow's register_drafter)
    drafter: Union[tuple(DRAFTER_SCHEMAS.values())] = Field(discriminator="kind")  # noqa: UP007
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
