"""An experiment kind is one record, `ExperimentKind`, and this is the one registry of them.

A kind says everything the reproduction needs to know about it: the columns it can write,
the decision rule of the kinds that report a best x, what goes beside the accounting when a
simulator runs (`BesideSpec`), how the engines are compared on it, its renderer and its
figure; a kind computed by another package (dovetail1) carries `External` instead of a
renderer. Each shipped kind is one module of `fpgasim.reproduce.kinds` that calls
`register_kind`; every module of that package is imported the first time the registry is
read, so adding a kind is adding one file (a test's kind registers itself the same way).
Everything else (the schema's columns check, the timed and figure kinds, the side-by-side
columns, `fpgasim validate`'s schemas) is derived from the records.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import BaseModel

if TYPE_CHECKING:  # types only: the kinds' modules import these, and this module first
    from fpgasim.figures.style import ExperimentOutput
    from fpgasim.reproduce.experiment_schema import Experiment
    from fpgasim.reproduce.rendered import Rendered
    from fpgasim.reproduce.workloads import RunContext

#: The package whose every module is a kind (imported on the registry's first read).
KINDS_PACKAGE = "fpgasim.reproduce.kinds"
#: Where a row's AAT came from (every kind's rows carry them).
SOURCE_COLUMNS = ("aat_source", "aat_file")
#: What a timed row carries beside its AAT source: the engine and the board's lowering.
TIMED_COLUMNS = (*SOURCE_COLUMNS, "engine", "lowering")


@dataclass(frozen=True)
class Decision:
    """The SD-or-AD decision of a kind that reports a best x (or one x per set).

    speedup: the speedup over AD whose decision the `decision` column shows; x_column: the x
    column that `decision` is written before."""

    speedup: str
    x_column: str


@dataclass(frozen=True)
class BesideSpec:
    """How one kind is put side by side (the study's accounting, then the simulator).

    keys: columns (beside `beside.ROW_KEYS`) that identify a row on both sides; values:
    columns the engine changes (each gets a NAME_sim twin); speedup: the speedup whose ratio
    gets a reason; point: the (x, tree, AAT) columns of the accounting's point the reason
    explains.
    """

    keys: tuple[str, ...]
    values: tuple[str, ...]
    speedup: str
    point: tuple[str, str, str]


@dataclass(frozen=True)
class EngineComparison:
    """How `engine_comparison` compares two engines on a kind.

    keys: the columns that identify a row; pairs: (x, speedup) column pairs compared;
    best_of_curve: the table is a per-x curve, reduced to its best x per (board, context)
    first; breakdown: also list T_v and T_d behind each engine's best x."""

    keys: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    best_of_curve: bool
    breakdown: bool


@dataclass(frozen=True)
class External:
    """A kind computed by one function from its file, not rendered from workloads: another
    package's table (dovetail1) or a published doc table (docs/reproduction.md, "Doc
    tables").

    title, description: what the listings show for its files; schema: its file schema (for
    `fpgasim validate`); table: the function that computes its CSV from the experiment
    file's path; doc: for a doc table, the doc (and section) whose table `markdown` gives,
    '' otherwise; markdown: frame -> the Markdown block the doc holds (None: the generic
    table); float_format: how the CSV prints floats (None: every digit); slow: True when
    it takes minutes, so `reproduce all` leaves it to `reproduce docs`; aat_source: which
    acceptance its numbers rest on, in words (the outputs' source line)."""

    title: str
    description: str
    schema: type[BaseModel]
    table: Callable[[Path], pd.DataFrame]
    doc: str = ""
    markdown: Callable[[pd.DataFrame], str] | None = None
    float_format: str | None = None
    slow: bool = False
    aat_source: str = "none (no acceptance read)"


@dataclass(frozen=True)
class ExperimentKind:
    """One kind of experiment: every fact about it, in one record.

    name: the `kind` of its files; doc: what it shows, in a line; columns: every column it
    can write (`columns` and `extra_columns` of a file pick from them; a timed kind has
    `engine`); decision: its SD-or-AD rule (None: no best x); beside: what goes beside the
    accounting (None: not side by side); compare: how engines are compared (None: not
    compared); render: (experiment, run) -> Rendered (None for an external kind); plot:
    ExperimentResult -> Figure (None: no figure); external: set for a kind another package
    computes (then render, decision, beside, compare and plot are None).
    """

    name: str
    doc: str
    columns: tuple[str, ...]
    decision: Decision | None
    beside: BesideSpec | None
    compare: EngineComparison | None
    render: Callable[[Experiment, RunContext], Rendered] | None
    plot: Callable[[ExperimentOutput], Any] | None  # a matplotlib Figure
    external: External | None

    def __post_init__(self) -> None:
        """Refuse a record whose parts disagree (a column named that the kind cannot write,
        a renderer and an external package both, or neither)."""
        if (self.render is None) == (self.external is None):
            raise ValueError(f"kind {self.name}: give exactly one of render and external")
        named: list[str] = []
        if self.decision is not None:
            named += [self.decision.speedup, self.decision.x_column]
        if self.beside is not None:
            b = self.beside
            named += [*b.keys, *b.values, b.speedup, *b.point]
        if self.compare is not None and not self.compare.best_of_curve:
            named += [*self.compare.keys, *(c for pair in self.compare.pairs for c in pair)]
        unknown = sorted({c for c in named if c not in self.columns})
        if unknown:
            raise ValueError(f"kind {self.name}: {', '.join(unknown)} not among its columns")

    @property
    def timed(self) -> bool:
        """Whether its numbers come from an engine (it has an `engine` column)."""
        return "engine" in self.columns

    @property
    def figure(self) -> bool:
        """Whether it can draw a figure."""
        return self.plot is not None


_KINDS: dict[str, ExperimentKind] = {}
_discovered = False


def register_kind(kind: ExperimentKind) -> ExperimentKind:
    """Add a kind to the registry (a module of `fpgasim.reproduce.kinds`, or a test's);
    a second kind of the same name is an error. Returns the kind."""
    old = _KINDS.get(kind.name)
    if old is not None and old is not kind:
        raise ValueError(f"experiment kind {kind.name} registered twice")
    _KINDS[kind.name] = kind
    return kind


def register_external(name: str, doc: str, columns: tuple[str, ...],
                      external: External) -> ExperimentKind:
    """Register a kind another function computes from its file (`External`: a doc table,
    dovetail1): no renderer, decision, side-by-side, engine comparison or figure."""
    return register_kind(ExperimentKind(name=name, doc=doc, columns=columns, decision=None,
                                        beside=None, compare=None, render=None, plot=None,
                                        external=external))


def unregister_kind(name: str) -> None:
    """Remove a kind (a test's, after the test)."""
    _KINDS.pop(name, None)


def _discover() -> None:
    """Import every module of `KINDS_PACKAGE` once (each registers its kind)."""
    global _discovered
    if _discovered:
        return
    package = importlib.import_module(KINDS_PACKAGE)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        importlib.import_module(f"{KINDS_PACKAGE}.{info.name}")
    _discovered = True  # after every module: a failed import is raised again next time


def experiment_kinds() -> Mapping[str, ExperimentKind]:
    """Every registered kind by name (read-only), the shipped ones discovered first."""
    _discover()
    return MappingProxyType(_KINDS)


def experiment_kind(name: str) -> ExperimentKind:
    """The kind of this name; a KeyError naming the known kinds otherwise."""
    kinds = experiment_kinds()
    if name not in kinds:
        raise KeyError(f"unknown experiment kind {name!r}; known: {', '.join(kinds)}")
    return kinds[name]


def kind_names(*, external: bool | None = None) -> list[str]:
    """The registered kinds' names: all (None), only those with a renderer (False) or only
    those another package computes (True)."""
    return [
        k.name
        for k in experiment_kinds().values()
        if external is None or (k.external is not None) == external
    ]


__all__ = [
    "SOURCE_COLUMNS",
    "TIMED_COLUMNS",
    "BesideSpec",
    "Decision",
    "EngineComparison",
    "ExperimentKind",
    "External",
    "experiment_kind",
    "experiment_kinds",
    "kind_names",
    "register_kind",
    "unregister_kind",
]
