"""What every renderer shares: the run context (engine, AAT folder), curves and solutions.

`RunContext` holds the engine, the simulator shown beside it (if any) and the AAT folder of
one `fpgasim reproduce` run, and caches the measured tables and curves. `curves` builds the
AAT curves of a workload from the experiment's measured files (measured points or the
fitted model) or, on the embedded source, from the embedded acceptance model; `solve` runs
the analysis solver on them. The measured tables ship in `workloads/aat/` (`shipped_aat_dir()`):
`--aat measured` (the default) reads them, `--aat-dir DIR` another folder. The curves come
from `analysis.acceptance_curves`, the acceptance rule every command shares.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fpgasim.acceptance import AatCurve, AatTables, acceptance_curves, fit_curve, load_aat_tables
from fpgasim.acceptance.measured import aat_path, builtin_aat_dir
from fpgasim.bounded import memoised
from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.board import Board
from fpgasim.config.schema import Algorithm, TargetModel
from fpgasim.engine import Engine
from fpgasim.errors import ConfigError, InputError
from fpgasim.reproduce.experiment_schema import Experiment
from fpgasim.solving import Solution, solve_best_curves, solve_curves
from fpgasim.step import Simulator, simulator_of

EMBEDDED_LABEL = "embedded acceptance model (fpgasim.tree.embedded; task-agnostic)"
#: `--aat` choices: the shipped measured tables, or the embedded acceptance model.
AAT_CHOICES = ("measured", "embedded")


def shipped_aat_dir() -> Path:
    """workloads/aat: the study's measured AAT tables, shipped with fpgasim (its README)."""
    return builtin_aat_dir()


def aat_folder(aat: str = "measured", aat_dir: Path | str | None = None) -> Path | None:
    """The AAT folder of `--aat` / `--aat-dir`: a folder (measured) or None (embedded).

    `--aat-dir DIR` reads DIR (measured tables of the same layout); `--aat measured` the
    shipped copy; `--aat embedded` the embedded model (with `--aat-dir` an error).
    """
    if aat not in AAT_CHOICES:
        raise InputError("aat", aat, f"one of {', '.join(AAT_CHOICES)}")
    if aat_dir is not None:
        if aat == "embedded":
            raise InputError(
                "aat_dir", str(aat_dir), "no folder with `aat` embedded (drop one of the two)"
            )
        return check_aat_dir(aat_dir)
    return check_aat_dir(shipped_aat_dir()) if aat == "measured" else None


@dataclass
class RunContext:
    """One reproduction run: the engine (None: untimed kinds only), the AAT folder and the
    simulator shown beside the engine's numbers (None: the engine alone).

    roofline: whether the solver computes the primary roofline (regime, x_ridge); the
    simulator's side run skips it (nothing it shows reads it). The tables and curves
    caches are shared with `beside()`'s context, so both sides read each file once.
    """

    engine: Engine | Simulator | None
    aat_dir: Path | None = None
    sim: Engine | Simulator | None = None
    roofline: bool = True
    _tables: dict[tuple[str, ...], AatTables] = field(default_factory=dict, repr=False)
    _curves: dict[tuple, list[AatCurve]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # each engine in one simulator, so every experiment of the run shares its memo
        if self.engine is not None:
            self.engine = simulator_of(self.engine)
        if self.sim is not None:
            self.sim = simulator_of(self.sim)

    def beside(self) -> RunContext:
        """The context of the simulator's side: its engine, same AAT, shared caches."""
        if self.sim is None:
            raise ValueError("no simulator to run beside the engine")
        return self.sharing(self.sim)

    def sharing(self, engine: Engine) -> RunContext:
        """A context timed by `engine` without the roofline, reading the same AAT through
        this run's caches (the simulator's side, or a dry run planning its passes)."""
        return RunContext(engine, self.aat_dir, None, False, self._tables, self._curves)

    def read_so_far(self) -> tuple[frozenset, frozenset]:
        """The keys of the tables and curves read so far (for `read_since`)."""
        return frozenset(self._tables), frozenset(self._curves)

    def read_since(self, before: tuple[frozenset, frozenset]) -> tuple[dict, dict]:
        """The tables and curves read since `read_so_far()` gave `before`: what a planning
        worker sends back (`adopt`), so the workers forked later do not read them again."""
        return ({k: v for k, v in self._tables.items() if k not in before[0]},
                {k: v for k, v in self._curves.items() if k not in before[1]})

    def adopt(self, read: tuple[dict, dict]) -> None:
        """Tables and curves read in another process of this run (`read_since`), kept as
        if read here (the same files and inputs give the same values)."""
        tables, curves = read
        for k, v in tables.items():
            self._tables.setdefault(k, v)
        for k, v in curves.items():
            self._curves.setdefault(k, v)

    @property
    def measured(self) -> bool:
        """True with --aat-dir (measured tables), False on the embedded model."""
        return self.aat_dir is not None

    def tables(self, files: Sequence[str]) -> AatTables:
        """The experiment's measured files from --aat-dir, loaded once per run."""
        key = tuple(files)
        if key not in self._tables:
            if self.aat_dir is None:
                raise InputError("aat_dir", None, "a folder of measured AAT tables")
            self._tables[key] = load_aat_tables([self.aat_dir / f for f in check_files(self, key)])
        return self._tables[key]


def check_aat_dir(path: Path | str | None) -> Path | None:
    """The `aat_dir` input as a Path to an existing folder (None stays None), else a ConfigError."""
    if path is None:
        return None
    path = aat_path(path)
    if not path.is_dir():
        what = "not a folder" if path.exists() else "no such folder"
        raise ConfigError(
            str(path),
            "folder",
            what,
            "a folder of measured AAT tables (the layout of workloads/aat)",
            argument="aat_dir",
        )
    return path


def check_files(ctx: RunContext, files: Sequence[str]) -> list[str]:
    """The experiment's files, each present in --aat-dir, else a ConfigError listing them."""
    assert ctx.aat_dir is not None
    missing = [f for f in files if not (ctx.aat_dir / f).is_file()]
    if missing:
        have = sorted(p.name for p in ctx.aat_dir.iterdir() if p.suffix in (".csv", ".parquet"))
        raise ConfigError(
            str(ctx.aat_dir),
            "files",
            ", ".join(missing),
            f"missing; the experiment reads them from this folder, which holds: "
            f"{', '.join(have) or 'no tables'}",
            argument="aat_dir",
        )
    return list(files)


def aat_label(exp: Experiment, ctx: RunContext, short: bool = False) -> str:
    """Which AAT the experiment used, for titles and the .md header (short: for figures)."""
    if not ctx.measured:
        return "embedded acceptance model (task-agnostic)" if short else EMBEDDED_LABEL
    files = ", ".join(exp.aat.files)
    where = folder_label(ctx.aat_dir)
    if exp.aat.source == "fitted":
        if short:
            aat_files = [f for f in exp.aat.files if "tree_shapes" not in f]
            return f"A + B·ln(x − C) fitted on the sparse points of {', '.join(aat_files)}"
        return f"fitted A + B·ln(x − C) on the measured points of {files} (from {where})"
    return f"measured ({files})" if short else f"measured ({files} from {where})"


def folder_label(folder: Path) -> str:
    """An AAT folder as outputs name it: the shipped one by its place in fpgasim, another by
    its path relative to the working directory (else its name), never a machine's absolute path.
    """
    path = Path(folder).resolve()
    if path == shipped_aat_dir().resolve():
        return "workloads/aat, shipped with fpgasim"
    try:
        return path.relative_to(Path.cwd().resolve()).as_posix() or "."
    except ValueError:
        return path.name


def source_name(exp: Experiment, ctx: RunContext) -> str:
    """The `aat_source` column: measured, fitted or embedded."""
    return exp.aat.source if ctx.measured else "embedded"


@memoised("reproduce.inputs", owner="fpgasim.reproduce.workloads",
          keys="board, model and algorithm names", budget=256,
          why="experiments share their inputs: each file is read once, and one object per "
          "input keeps the pass service's lookups by identity")
def load_inputs(board: str, model: str, algorithm: str) -> tuple[Board, TargetModel, Algorithm]:
    """Board, target model and algorithm by name (cached: experiments share them)."""
    return load_board(board), load_model(model), load_algorithm(algorithm)


def restrict(curve: AatCurve, exp: Experiment) -> AatCurve:
    """The curve with only the x inside the experiment's verify_lens range."""
    lo, hi = exp.verify_lens.min, exp.verify_lens.max
    x = curve.points["verify_len"]
    keep = (x >= lo) & (x <= hi if hi is not None else True)
    if not keep.any():
        raise ConfigError(
            exp.name,
            "verify_lens",
            f"{lo}..{hi}",
            f"a range holding some x of the curve ({int(x.min())}..{int(x.max())})",
        )
    if keep.all():
        return curve
    return dataclasses.replace(curve, points=curve.points[keep].reset_index(drop=True))


def embedded_fit_points(exp: Experiment, xs: Sequence[int]) -> list[int] | None:
    """The experiment's fit points that the embedded curve has (None if fewer than 3)."""
    if exp.aat.fit_points is None:
        return None
    have = [p for p in exp.aat.fit_points if p in set(xs)]
    return have if len(have) >= 3 else None


def curves(
    exp: Experiment,
    ctx: RunContext,
    algorithm: Algorithm,
    model: TargetModel,
    contexts: Sequence[int],
    tasks: Sequence[str] | None,
    method: str | None = None,
) -> list[AatCurve]:
    """AAT curves per (task, context): measured/fitted from the files, else embedded.

    Cached per run: every experiment and both sides of a run share one copy.
    """
    aat = exp.aat
    key = (
        *(aat.source, tuple(aat.files), tuple(aat.fit_points or ()), exp.verify_lens.min),
        *(exp.verify_lens.max, algorithm.id, model.id, tuple(contexts), tuple(tasks or ())),
        method,
    )
    if key in ctx._curves:
        return ctx._curves[key]
    if ctx.measured:
        out = acceptance_curves(
            algorithm,
            model.id,
            list(contexts),
            aat_dir=ctx.tables(exp.aat.files),
            tasks=list(tasks) if tasks else None,
            aat_source=exp.aat.source,
            method=method,
            fit_points=exp.aat.fit_points,
        )
    else:
        out = acceptance_curves(
            algorithm, model.id, list(contexts), aat_source="embedded",
            x_max=exp.verify_lens.max,
        )
        if exp.aat.fit_points is not None:
            out = [_refit(c, exp) for c in out]
    ctx._curves[key] = [restrict(c, exp) for c in out]
    return ctx._curves[key]


def _refit(curve: AatCurve, exp: Experiment) -> AatCurve:

    xs = [int(x) for x in curve.measured["verify_len"]]
    points = embedded_fit_points(exp, xs)
    if points is None:
        return curve
    fit = fit_curve(curve.measured["verify_len"], curve.measured["aat"], points)
    return dataclasses.replace(curve, fit=fit)


def solve(
    exp: Experiment,
    ctx: RunContext,
    board: Board,
    model: TargetModel,
    algorithm: Algorithm,
    aat_curves: Sequence[AatCurve],
) -> Solution:
    """The analysis solver on the curves with the run's engine."""
    return solve_curves(
        _timed_by(ctx),
        board,
        model,
        algorithm,
        list(aat_curves),
        naive_threshold=exp.naive_threshold,
        mean=exp.mean,
        fit_points=exp.aat.fit_points,
        roofline=ctx.roofline,
    )


def solve_best(
    exp: Experiment,
    ctx: RunContext,
    board: Board,
    model: TargetModel,
    algorithm: Algorithm,
    aat_curves: Sequence[AatCurve],
) -> pd.DataFrame:
    """The best, original and naive sets of each curve with the run's engine (`solve`'s
    summary for those columns, with only the x that can be best timed)."""
    return solve_best_curves(_timed_by(ctx), board, model, algorithm, list(aat_curves),
                             naive_threshold=exp.naive_threshold)


def _timed_by(ctx: RunContext) -> Engine:
    """The run's engine, which a timed experiment needs."""
    if ctx.engine is None:
        raise InputError("engine", None, "an engine (this experiment is timed)")
    return ctx.engine


def with_ad_point(curve: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """The per-x curve (task, context, x, tree, AAT, times, P, P_disc, AR, P_eff, speedup)
    with an x = 1 row per (task, context) first: AD, AAT = 1, no draft."""
    rows = []
    for s in summary.to_dict("records"):
        p1 = float(s["ad_tokens_per_s"])
        rows.append(
            {
                "task": s["task"],
                "context": s["context"],
                "verify_len": 1,
                "tree": "",
                "aat": 1.0,
                "verify_s": 1.0 / p1,
                "draft_s": 0.0,
                "p_tokens_per_s": p1,
                "p_disc_tokens_per_s": p1,
                "ar": 1.0,
                "p_eff_tokens_per_s": p1,
                "speedup": 1.0,
            }
        )
    ad = pd.DataFrame(rows)
    out = pd.concat([ad, curve[list(ad.columns)]], ignore_index=True)
    return out.sort_values(["task", "context", "verify_len"], kind="stable", ignore_index=True)
