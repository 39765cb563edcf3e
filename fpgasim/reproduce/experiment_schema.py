"""The experiment-file schema (`workloads/experiments/*.yaml`): what one table or figure runs.

An experiment names a `kind` (a record of `fpgasim.reproduce.kind`'s registry),
the workloads it solves (boards x models x algorithm x contexts [x tasks]), where its AAT
comes from with `--aat-dir` (which measured files, measured points or the fitted curve,
fit points) and whether it can run on the embedded acceptance model, the x range, the tree
methods, the CSV columns (the contract of docs/reproduction.md, then extras) and whether it draws a
figure. Adding an experiment is writing such a file.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from fpgasim.errors import printable
from fpgasim.reproduce.kind import experiment_kinds, kind_names

#: a name that is also a file name in `out` (NAME.csv): letters, digits, '_', '.', '-'
NAME_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,64}")
Name = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")]
Context = Annotated[int, Field(ge=1, le=10_000_000)]
VerifyLen = Annotated[int, Field(ge=1, le=4096)]
TreeMethod = Literal[
    "prior_score", "width", "depth", "eagle3_dynamic", "chain", "optimal", "throughput"
]


class Strict(BaseModel):
    """Base: immutable, unknown fields are errors, no NaN/inf; text is data (control
    characters escaped, as `config.schema.Strict` does)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)

    @field_validator("*")
    @classmethod
    def _text_is_data(cls, value: object) -> object:
        """A title or note from a file reaches a figure, a table and the terminal as text."""
        return printable(value, keep_lines=True) if isinstance(value, str) else value


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
    kind: Name = Field(description="its kind, a record of fpgasim.reproduce.kind's registry")
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

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        rendered = kind_names(external=False)
        if kind not in rendered:
            raise ValueError(f"unknown kind {kind}; one of {', '.join(rendered)}")
        return kind

    @model_validator(mode="after")
    def _columns(self) -> Experiment:
        both = self.columns + self.extra_columns
        twice = sorted({c for c in both if both.count(c) > 1})
        if twice:
            raise ValueError(f"column(s) {', '.join(twice)} listed twice in columns/extra_columns")
        kind = experiment_kinds()[self.kind]
        known = kind.columns
        unknown = [c for c in both if c not in known]
        if unknown:
            raise ValueError(
                f"unknown column(s) {', '.join(unknown)} for kind {self.kind}; "
                f"choose from: {', '.join(known)}"
            )
        if self.figure and not kind.figure:
            with_one = sorted(k.name for k in experiment_kinds().values() if k.figure)
            raise ValueError(
                f"figure: true but kind {self.kind} draws no figure; kinds with one: "
                f"{', '.join(with_one)}"
            )
        return self


class DocTableFile(Strict):
    """The file of a doc table (docs/reproduction.md, "Doc tables"): its name and kind; the
    kind's module holds what it computes and the doc whose table it gives."""

    id: Name = Field(description="the experiment's name (NAME.csv, NAME.md)")
    kind: Name = Field(description="a doc-table kind, e.g. batch_crossover")
