"""Plan a run's simulator passes up front so they can be computed once, on every core.

Every timed experiment asks the pass service for forward passes (T_v at each x, the draft
passes, T_v(1)); experiments share many of them (table1, table4, fig1 and fig2 all solve
the V80 GovReport curve). Which passes an experiment needs is decided by the solver and the
renderers themselves (the x of each AAT curve, the tree and floor(AAT) at each x, the
tree-design searches), so the plan is their own run: `simulator_passes` renders the
simulator's side of every experiment on a `Planner` (a pass service answering with the
accounting and recording each distinct pass asked). The simulator's service then computes
that list once, on a process pool (`PassService.prefetch`), and the real run finds every
pass remembered.
"""

from __future__ import annotations

from collections.abc import Sequence

from fpgasim.engine import get_engine
from fpgasim.reproduce.experiment_loader import AnyExperiment
from fpgasim.reproduce.experiment_schema import Experiment
from fpgasim.reproduce.kind import experiment_kind
from fpgasim.reproduce.workloads import RunContext
from fpgasim.step import PassKey, Planner


def simulator_passes(experiments: Sequence[AnyExperiment], ctx: RunContext) -> list[PassKey]:
    """The distinct passes the simulator's side of these experiments will ask for."""
    planner = Planner(get_engine("analytic"), plan_for=ctx.sim)
    dry = ctx.sharing(planner)
    for exp in experiments:
        if not isinstance(exp, Experiment):
            continue
        kind = experiment_kind(exp.kind)
        if kind.render is not None and kind.timed and kind.beside is not None:
            kind.render(exp, dry)
    return planner.plan
