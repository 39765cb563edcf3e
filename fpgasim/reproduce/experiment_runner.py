"""Run an experiment: load it, render its table with the run's engine and AAT source.

`run_experiment(name_or_experiment, engine=..., aat_dir=..., sim=...) -> ExperimentResult`;
the CLI (`fpgasim reproduce`) and the tests call it, then `output.write_outputs` writes the
files. With a simulator (`sim`, or `ctx.sim`) the timed kinds render twice, under the engine
(the study's accounting) and under the simulator, and `beside` puts both in one table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fpgasim.engine import Engine, get_engine
from fpgasim.reproduce.beside import beside, beside_columns, disagreements
from fpgasim.reproduce.experiment_loader import AnyExperiment, ExternalExperiment, load_experiment
from fpgasim.reproduce.experiment_schema import Experiment
from fpgasim.reproduce.kind import experiment_kind
from fpgasim.reproduce.workloads import RunContext, aat_label, check_aat_dir, check_files
from fpgasim.solving.tree_design import COSTED_TREE_METHODS

ALWAYS = ("aat_source", "engine", "lowering")
#: Columns only timed kinds carry (which engine, and the lowering of the board it ran).
TIMED_ONLY = ("engine", "lowering")


@dataclass(frozen=True)
class ExperimentResult:
    """One reproduced table or figure.

    table: the CSV (contract columns, then extras, then aat_source and, if timed, engine);
    full: every column the kind computes (figures read it); aat_source: which AAT was used,
    in words (aat_short: without the folder, for figures); engine: the engine's name (''
    when nothing is timed); notes: lines printed under the table; available: False when
    the AAT source cannot give this experiment; sim_engine: the simulator whose twin
    columns (NAME_sim, ratios, sim_reason) follow the engine's ('' when none); columns:
    the contract columns (docs/reproduction.md) the table starts with; float_format: how
    the CSV prints floats (None: every digit); doc_block, doc: a doc table's Markdown block
    and the doc that holds it ('' for the others).
    """

    name: str
    title: str
    kind: str
    description: str
    table: pd.DataFrame
    full: pd.DataFrame
    aat_source: str
    engine: str
    notes: tuple[str, ...] = ()
    available: bool = True
    plot_data: dict[str, pd.DataFrame] = field(default_factory=dict)
    figure: bool = False
    aat_short: str = ""
    sim_engine: str = ""
    columns: tuple[str, ...] = ()
    float_format: str | None = None
    doc_block: str = ""
    doc: str = ""


def output_columns(exp: Experiment, sim: bool = False) -> list[str]:
    """CSV columns: the contract, the extras, then aat_source and (timed kinds) engine; with
    a simulator beside, its twin columns, ratios, sim_engine and sim_reason last."""
    cols = with_decision(exp.kind, [*exp.columns, *exp.extra_columns])
    for c in ALWAYS:
        if c not in cols and (c not in TIMED_ONLY or experiment_kind(exp.kind).timed):
            cols.append(c)
    return cols + (beside_columns(exp.kind) if sim else [])


def with_decision(kind: str, columns: list[str]) -> list[str]:
    """The columns with `decision` (SD or AD) just before the kind's x column: every table
    that shows a best x shows the decision first (at the end if the x is not listed)."""
    decision = experiment_kind(kind).decision
    if decision is None or "decision" in columns:
        return columns
    x_col = decision.x_column
    at = columns.index(x_col) if x_col in columns else len(columns)
    return [*columns[:at], "decision", *columns[at:]]


def needs_engine(exp: AnyExperiment) -> bool:
    """Whether the experiment's numbers come from an engine (its kind is timed, or one of
    its tree methods designs trees on the board's costs, e.g. throughput)."""
    if not isinstance(exp, Experiment):
        return False
    costed = any(m in COSTED_TREE_METHODS for m in exp.tree_methods or [])
    return experiment_kind(exp.kind).timed or costed


def check_inputs(exp: AnyExperiment, ctx: RunContext) -> None:
    """Fail before any work: the measured files an experiment reads exist in --aat-dir."""
    if isinstance(exp, Experiment) and ctx.measured:
        check_files(ctx, exp.aat.files)


def run_experiment(
    experiment: str | Path | AnyExperiment,
    *,
    engine: str | Engine | None = "analytic",
    aat_dir: Path | str | None = None,
    ctx: RunContext | None = None,
    sim: str | Engine | None = None,
) -> ExperimentResult:
    """Reproduce one experiment (by name, path or loaded) with an engine and AAT source,
    and with `sim`, that simulator's numbers beside the engine's.

    `ctx` (engine, simulator and AAT folder of a whole run, with its caches) overrides all.
    """
    exp = experiment if isinstance(experiment, Experiment | ExternalExperiment) else None
    exp = exp or load_experiment(experiment)
    if ctx is None:
        eng = get_engine(engine) if isinstance(engine, str) else engine
        side = get_engine(sim) if isinstance(sim, str) else sim
        ctx = RunContext(eng, check_aat_dir(aat_dir), side)
    if isinstance(exp, ExternalExperiment):
        return _run_external(exp)
    check_inputs(exp, ctx)
    kind = experiment_kind(exp.kind)
    assert kind.render is not None  # an Experiment's kind has a renderer (schema.Experiment)
    rendered = kind.render(exp, ctx)
    timed = kind.timed
    full = rendered.table
    notes = rendered.notes
    side_by_side = bool(timed and ctx.sim is not None and beside_columns(exp.kind))
    if side_by_side and rendered.available:
        simulated = kind.render(exp, ctx.beside()).table
        assert ctx.engine is not None and ctx.sim is not None
        full = beside(exp.kind, full, simulated, ctx.engine, ctx.sim)
        notes = (*notes, *disagreements(exp.kind, full, ctx.sim.name))
    elif side_by_side:
        full = full.reindex(columns=[*full.columns, *beside_columns(exp.kind)])
    return ExperimentResult(
        name=exp.name,
        title=exp.title,
        kind=exp.kind,
        description=exp.description,
        table=full[output_columns(exp, side_by_side)].reset_index(drop=True),
        full=full,
        aat_source=aat_label(exp, ctx),
        aat_short=aat_label(exp, ctx, short=True),
        engine=ctx.engine.name if (timed and ctx.engine is not None) else "",
        notes=notes,
        available=rendered.available,
        plot_data=rendered.plot_data,
        figure=exp.figure and rendered.available,
        sim_engine=ctx.sim.name if side_by_side and ctx.sim is not None else "",
        columns=tuple(with_decision(exp.kind, list(exp.columns))),
    )


def _run_external(exp: ExternalExperiment) -> ExperimentResult:
    """An experiment computed by its kind's table function from its file (dovetail1, the
    doc tables): its table as returned, and a doc table's Markdown block."""
    external = exp.external
    compute = external.table
    table = compute(exp.path)
    notes = [f"computed by {compute.__module__}:{compute.__qualname__} from {exp.path.name}"]
    if external.doc:
        notes.append(f"the table of {external.doc}")
    return ExperimentResult(
        name=exp.name,
        title=exp.title,
        kind=exp.kind,
        description=exp.description,
        table=table,
        full=table,
        aat_source=external.aat_source,
        engine="",
        notes=tuple(notes),
        float_format=external.float_format,
        doc_block=external.markdown(table) if external.markdown is not None else "",
        doc=external.doc,
    )
