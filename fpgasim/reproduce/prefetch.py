"""Plan a run's simulator passes up front so they can be computed once, on every core.

Every timed experiment asks its engine for forward passes (T_v at each x, the draft passes,
T_v(1)); experiments share many of them (table1, table4, fig1 and fig2 all solve the V80
GovReport curve). `simulator_passes` dry-runs the simulator's side of every experiment
with a `Recorder`, an engine that answers with the accounting (microseconds per pass) and
notes each distinct pass asked; the simulator then computes that list once, on a process
pool (`CycleEngine.prefetch`), and the real run finds every pass in its cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fpgasim.config.schema import Board, TargetModel
from fpgasim.dataflow.passes import PassSpec
from fpgasim.engine import Engine, Timing, get_engine
from fpgasim.reproduce.beside import beside_columns
from fpgasim.reproduce.kinds import EXPERIMENT_KINDS
from fpgasim.reproduce.loader import AnyExperiment
from fpgasim.reproduce.schema import TIMED_KINDS, Experiment
from fpgasim.reproduce.workloads import RunContext


class Recorder:
    """An engine stand-in: the accounting's timing, and a record of every pass asked."""

    name = "recorder"
    version = "0"

    def __init__(self, account: Engine) -> None:
        self.account = account
        self.keys: dict[tuple[PassSpec, Board, TargetModel, Any], None] = {}

    def run_pass(self, spec: PassSpec, board: Board, model: TargetModel, drafter=None) -> Timing:
        self.keys.setdefault((spec, board, model, drafter), None)
        return self.account.run_pass(spec, board, model, drafter)


def simulator_passes(experiments: Sequence[AnyExperiment], ctx: RunContext) -> list[tuple]:
    """The distinct passes the simulator's side of these experiments will ask for."""
    recorder = Recorder(get_engine("analytic"))
    dry = ctx.sharing(recorder)
    for exp in experiments:
        if isinstance(exp, Experiment) and exp.kind in TIMED_KINDS and beside_columns(exp.kind):
            EXPERIMENT_KINDS[exp.kind].render(exp, dry)
    return list(recorder.keys)
