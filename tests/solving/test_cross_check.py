"""Cross-checks come from the library (`fpgasim.solving.cross_check`): one wording of an
SD-or-AD disagreement for solve, solve --batch, explore and reproduce, and solve's check
against the accounting."""

from __future__ import annotations

import pandas as pd
import pytest

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.workload import Workload
from fpgasim.solving.cross_check import (
    batch_disagreements,
    disagreement_line,
    solve_checked,
)


def test_one_wording_with_and_without_x_and_reason() -> None:
    line = disagreement_line(decision="use SD", speedup=2.071, x=4, decision_sim="use AD",
                             speedup_sim=0.8781, x_sim=2, sim_name="event",
                             reason="x=4 step 3.59x")
    assert line == ("the accounting says use SD (x=4, 2.07x), the simulator (event) use AD "
                    "(x=2, 0.878x): x=4 step 3.59x")
    bare = disagreement_line(decision="use SD", speedup=2.05, x=None, decision_sim="use AD",
                             speedup_sim=0.824, x_sim=None, sim_name="fast", reason="")
    assert bare == "the accounting says use SD (2.05x), the simulator (fast) use AD (0.824x)"


def test_batch_lines_name_only_the_rows_that_differ() -> None:
    summary = pd.DataFrame({
        "task": ["t", "t"], "context": [1024, 1024], "batch": [1, 4],
        "decision": ["use AD", "use AD"], "best_speedup": [0.824, 0.822],
        "decision_accounting": ["use SD", "use AD"], "speedup_accounting": [2.05, 0.9],
        "engine": ["event", "event"],
    })  # fmt: skip
    assert batch_disagreements(summary) == [
        "  L=1024, B=1: SD-or-AD differs: the accounting says use SD (2.05x), the simulator "
        "(event) use AD (0.824x)"
    ]


@pytest.mark.slow
def test_solve_checked_explains_where_the_simulator_decides_otherwise() -> None:
    board, model = load_board("flightllm-vhk158"), load_model("llama2-7b-flightllm")
    algorithm = load_algorithm("longspec")
    # on `fast`: the cycles of `event` (tests/engine/test_fast.py), sooner
    checked = solve_checked(Workload((board,), model, (algorithm,), (512,)), engine="fast")
    assert checked.solution.summary["decision"].tolist() == ["use AD"]
    (line,) = checked.disagreements
    assert line.startswith("  L=512: SD-or-AD differs: the accounting says use SD (x=4, ")
    assert "the simulator (fast) use AD (x=2, " in line and "MV rate" in line
    account = solve_checked(Workload((board,), model, (algorithm,), (512,)), engine="analytic")
    assert account.disagreements == []
