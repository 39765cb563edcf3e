"""The experiment-file schema (`workloads/experiments/*.yaml`): what one table or figure runs.

An experiment names a `kind` (a renderer of `fpgasim.reproduce.kinds.EXPERIMENT_KINDS`),
the workloads it solves (boards x models x algorithm x contexts [x tasks]), where its AAT
comes from with `--aat-dir` (which measured files, measured points or the fitted curve,
fit points) and whether it can run on the embedded acceptance model, the x range, the tree
methods, the CSV columns (the contract of docs/reproduction.md, then extras) and whether it draws a
figure. Adding an experiment is writing such a file.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Name = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")]
Context = Annotated[int, Field(ge=1, le=10_000_000)]
VerifyLen = Annotated[int, Field(ge=1, le=4096)]
TreeMethod = Literal[
    "prior_score", "width", "depth", "eagle3_dynamic", "chain", "optimal", "throughput"
]

_SOURCE = ("aat_source", "aat_file")
_TIMED = ("aat_source", "aat_file", "engine", "lowering")
#: Every column each kind of experiment can write (`columns` + `extra_columns` pick from it).
KIND_COLUMNS: dict[str, tuple[str, ...]] = {
    "context_sets": (
        *("context", "method", "verify_len", "tokens_per_s", "speedup"),
        *("board", "model", "algorithm", "task", "aat", "tree", "decision", *_TIMED),
    ),
    "tasks_unified": (
        *("task", "best_verify_len", "best_speedup", "unified_verify_len", "unified_speedup"),
        *("context", "board", "model", "algorithm", "mean", "unified_vs_best", "best_tree"),
        *("best_aat", "decision", *_TIMED),
    ),
    "tree_methods": (
        *("method", "verify_len", "tokens_per_s", "speedup"),
        *("context", "board", "model", "algorithm", "task", "aat", "tree", "decision"),
        *_TIMED,
    ),
    "boards_grid": (
        *("board", "context", "ar_tokens_per_s", "best_verify_len", "best_tokens_per_s"),
        *("speedup", "model", "algorithm", "task", "best_tree", "best_aat", "ori_verify_len"),
        *("ori_speedup", "naive_verify_len", "naive_speedup", "regime", "x_ridge"),
        *("macs_per_cycle", "bytes_per_cycle", "compute_to_bandwidth", "ridge_tokens"),
        *("decision", *_TIMED),
    ),
    "sparse_fit_models": (
        *("algorithm", "model", "context", "ar_tokens_per_s", "best_verify_len"),
        *("best_tokens_per_s", "speedup", "ori_verify_len", "ori_tokens_per_s", "ori_speedup"),
        *("naive_verify_len", "naive_tokens_per_s", "naive_speedup", "board", "task"),
        *("best_tree", "best_aat", "aat_a", "aat_b", "aat_c", "aat_r2_fit", "aat_n_fit_points"),
        *("decision", *_TIMED),
    ),
    "speedup_curve": (
        *("context", "verify_len", "aat", "speedup", "board", "model", "algorithm", "task"),
        *("tree", "tokens_per_s", "ar_tokens_per_s", *_TIMED),
    ),
    "rooflines": (
        *("context", "verify_len", "p", "p_disc", "aat", "ar", "p_eff", "board", "model"),
        *("algorithm", "task", "tree", "verify_s", "draft_s", "speedup", *_TIMED),
    ),
    "fit_table": (
        *("context", "A", "B", "C", "r2", "n_fit_points", "r2_fit", "fit_points", "n_points"),
        *("algorithm", "model", "task", *_SOURCE),
    ),
    "aat_curves": (
        *("method", "verify_len", "aat", "context", "algorithm", "model", "task", "tree"),
        *_SOURCE,
    ),
}
#: Kinds that report a best x (or one x per set): kind -> (the speedup over AD whose
#: decision is shown, the x column the `decision` column is written before).
DECISION_OF: dict[str, tuple[str, str]] = {
    "context_sets": ("speedup", "verify_len"),
    "tree_methods": ("speedup", "verify_len"),
    "tasks_unified": ("best_speedup", "best_verify_len"),
    "boards_grid": ("speedup", "best_verify_len"),
    "sparse_fit_models": ("speedup", "best_verify_len"),
}
#: Kinds whose numbers come from an engine (they get an `engine` column).
TIMED_KINDS = frozenset(k for k, cols in KIND_COLUMNS.items() if "engine" in cols)
#: Kinds that can draw a figure.
FIGURE_KINDS = frozenset(
    {"speedup_curve", "rooflines", "fit_table", "aat_curves", "sparse_fit_models", "boards_grid"}
)
Kind = Literal[
    "context_sets",
    "tasks_unified",
    "tree_methods",
    "boards_grid",
    "sparse_fit_models",
    "speedup_curve",
    "rooflines",
    "fit_table",
    "aat_curves",
]


class Strict(BaseModel):
    """Base: immutable, unknown fields are errors, no NaN/inf."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)


class Workload(Strict):
    """One group of solved workloads: every board x model at every context."""

    boards: list[Name] = Field(
        min_length=1, max_length=16, description="board names (boards/*.yaml), e.g. [v80]"
    )
    models: list[Name] = Field(
        min_length=1, max_length=16, description="target model names (workloads/models)"
    )
    algorithm: Name = Field(description="SD algorithm (workloads/algorithms), e.g. longspec")
    tasks: list[Name] | None = Field(
        None,
        min_length=1,
        max_length=16,
        description="measured tasks (AAT tables); null: every task measured at all contexts. "
        "The embedded model is task-agnostic and ignores this field",
    )
    contexts: list[Context] = Field(
        min_length=1, max_length=64, description="context lengths L, tokens (each solved alone)"
    )
    beyond_window: str | None = Field(
        None, min_length=1, max_length=500,
        description="why contexts past a model's window (max_position_embeddings) are run: "
        "the study measured them; null: every context must fit the window",
    )

    @model_validator(mode="after")
    def _unique(self) -> Workload:
        for field in ("boards", "models", "contexts", "tasks"):
            values = getattr(self, field) or []
            if len(set(values)) != len(values):
                raise ValueError(f"{field} lists a value twice: {values}; list each once")
        return self


class VerifyRange(Strict):
    """The verification lengths x searched (measured curves keep their measured x inside)."""

    min: VerifyLen = Field(2, description="smallest x searched (x = 1 is AD, always the baseline)")
    max: VerifyLen | None = Field(
        None, description="largest x searched; null: the curve's largest (85 for LongSpec)"
    )

    @model_validator(mode="after")
    def _order(self) -> VerifyRange:
        if self.max is not None and self.max < self.min:
            raise ValueError(f"min = {self.min} > max = {self.max}; give min <= max")
        return self


class AatSpec(Strict):
    """Where the AAT comes from: measured tables (with --aat-dir) or the embedded model."""

    source: Literal["measured", "fitted"] = Field(
        "measured",
        description="with `aat_dir`: measured (the measured x only) or fitted "
        "(A + B·ln(x − C) fitted on the points, evaluated at every x of the per-x tree table)",
    )
    files: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        min_length=1,
        max_length=16,
        description="file names read from `aat_dir`: AAT tables and, for `fitted`, the per-x "
        "draft-configuration table tree_shapes_by_verify_len.csv",
    )
    fit_points: list[VerifyLen] | None = Field(
        None,
        min_length=3,
        max_length=256,
        description="x values the AAT model is fitted on (>= 3); null: every point of the curve",
    )
    embedded: bool = Field(
        True, description="whether the experiment runs on the embedded model without `aat_dir`"
    )
    embedded_reason: str = Field(
        "",
        max_length=500,
        description="why it cannot (printed in its output when embedded is false)",
    )

    @model_validator(mode="after")
    def _files(self) -> AatSpec:
        for name in self.files:
            if "/" in name or "\\" in name or name.startswith("."):
                raise ValueError(
                    f"files: {name!r} is a path; give plain file names inside `aat_dir`"
                )
        if len(set(self.files)) != len(self.files):
            raise ValueError(f"files lists a file twice: {self.files}")
        if not self.embedded and not self.embedded_reason.strip():
            raise ValueError("embedded is false: say why in embedded_reason (printed to the user)")
        return self


class Experiment(Strict):
    """One reproduced table or figure (`fpgasim reproduce NAME`)."""

    name: Name = Field(description="the experiment's name: output files are NAME.csv/.md/.png")
    title: str = Field(min_length=1, max_length=200, description="table/figure title")
    description: str = Field("", max_length=2000, description="what it shows, for the .md")
    kind: Kind = Field(description="renderer, a key of fpgasim.reproduce.EXPERIMENT_KINDS")
    workloads: list[Workload] = Field(
        min_length=1, max_length=16, description="what is solved (groups of workloads)"
    )
    verify_lens: VerifyRange = Field(default_factory=VerifyRange, description="x range searched")
    tree_methods: list[TreeMethod] | None = Field(
        None,
        min_length=1,
        max_length=7,
        description="tree-construction methods of the measured curves (table3/fig6 compare "
        "several); null: the table's searched curve (prior_score, else eagle3_dynamic)",
    )
    aat: AatSpec = Field(description="AAT source and measured files")
    naive_threshold: float = Field(
        0.02, gt=0, le=1, description="Naive-set slope rule, tokens of AAT per extra token"
    )
    mean: Literal["geometric", "arithmetic"] = Field(
        "geometric", description="across tasks: mean of the tasks' AAT curves (unified x)"
    )
    seed: int = Field(
        0, ge=0, le=2**32 - 1, description="seed of the embedded prior-score trace generator"
    )
    columns: list[Name] = Field(
        min_length=1,
        max_length=64,
        description="CSV columns, in order (docs/reproduction.md's contract)",
    )
    extra_columns: list[Name] = Field(
        default_factory=list,
        max_length=64,
        description="optional columns after the contract (aat_source and, where timed, "
        "engine are always appended)",
    )
    figure: bool = Field(False, description="also draw NAME.png")

    @model_validator(mode="after")
    def _columns(self) -> Experiment:
        both = self.columns + self.extra_columns
        twice = sorted({c for c in both if both.count(c) > 1})
        if twice:
            raise ValueError(f"column(s) {', '.join(twice)} listed twice in columns/extra_columns")
        known = KIND_COLUMNS[self.kind]
        unknown = [c for c in both if c not in known]
        if unknown:
            raise ValueError(
                f"unknown column(s) {', '.join(unknown)} for kind {self.kind}; "
                f"choose from: {', '.join(known)}"
            )
        if self.figure and self.kind not in FIGURE_KINDS:
            raise ValueError(
                f"figure: true but kind {self.kind} draws no figure; kinds with one: "
                f"{', '.join(sorted(FIGURE_KINDS))}"
            )
        return self
