"""Every figure fpgasim draws fits its canvas: no title, legend, caption or label clipped.

Each figure is rendered on a small configuration (one board, model and context per
workload group of the study's experiments, the fast simulator beside the accounting) and
matplotlib's tight bounding box of all its artists must lie inside the canvas. The
captions must name the AAT source and the engine.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from fpgasim.config import load_algorithm, load_board, load_model
from fpgasim.config.board_loader import BoardBase
from fpgasim.figures.plots import plot_explore, plot_solution
from fpgasim.reproduce import load_experiment, run_experiment
from fpgasim.reproduce.experiment_schema import Experiment
from fpgasim.reproduce.kind import experiment_kind
from fpgasim.solving.solver import solve
from fpgasim.studies.explore import explore
from fpgasim.sweep.space import parse_vary

#: Slack for antialiasing (inches).
TOL_IN = 0.02


def assert_inside(fig, name: str) -> None:
    """The tight bounding box of every artist lies within the figure's canvas."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    box = fig.get_tightbbox(canvas.get_renderer())
    w, h = fig.get_figwidth(), fig.get_figheight()
    assert box.x0 >= -TOL_IN and box.y0 >= -TOL_IN, (name, box, (w, h))
    assert box.x1 <= w + TOL_IN and box.y1 <= h + TOL_IN, (name, box, (w, h))


def small(name: str, **update) -> Experiment:
    """The study's experiment on its first board and model and two contexts per group."""
    exp = load_experiment(name)
    assert isinstance(exp, Experiment)
    groups = [
        w.model_copy(update={"boards": w.boards[:1], "models": w.models[:2],
                             "contexts": w.contexts[:2]})
        for w in exp.workloads
    ]  # fmt: skip
    return exp.model_copy(update={"workloads": groups, **update})


@pytest.mark.slow
@pytest.mark.parametrize("name", ["fig1", "fig2", "fig4", "fig5", "fig6", "table4"])
def test_reproduce_figures_fit_and_say_their_source(name: str, aat_dir: Path) -> None:
    exp = small(name, figure=True)
    result = run_experiment(exp, engine="analytic", aat_dir=aat_dir, sim="fast")
    plot = experiment_kind(exp.kind).plot
    assert plot is not None
    fig = plot(result)
    assert_inside(fig, name)
    title = " ".join(fig.get_suptitle().split())  # the caption is wrapped to the width
    assert "AAT: " in title and "engine:" in title, title
    if result.engine:
        assert "engine: analytic" in title and "beside fast" in title, title


@pytest.mark.slow
def test_solve_plot_fits(tmp_path: Path, monkeypatch) -> None:
    from fpgasim.figures import plots as plot_module

    captured = {}
    monkeypatch.setattr(plot_module, "write_figure", lambda fig, _p: captured.update(fig=fig))
    sol = solve(load_board("v80"), load_model("llama-3.1-8b"), load_algorithm("longspec"),
                [256, 4096], engine="analytic")  # fmt: skip
    plot_solution(sol, tmp_path / "s.png")
    assert_inside(captured["fig"], "solve --plot")
    assert "analytic engine" in captured["fig"].get_suptitle()


@pytest.mark.slow
def test_explore_heat_map_fits(tmp_path: Path, monkeypatch) -> None:
    from fpgasim.figures import plots as plot_module

    variation = parse_vary(["design.mm_cols=48,128", "fpga.memory.bandwidth_gb_s=460,1638"])
    result = explore(BoardBase("v80"), variation, load_model("llama-3.1-8b"),
                     [load_algorithm("longspec"), load_algorithm("eagle3")], [256, 1024],
                     engine="analytic", executor="inprocess")  # fmt: skip
    captured = {}
    monkeypatch.setattr(plot_module, "write_figure", lambda fig, _p: captured.update(fig=fig))
    plot_explore(result, tmp_path / "e.png")
    fig = captured["fig"]
    assert_inside(fig, "explore")
    title = " ".join(fig.get_suptitle().split())
    assert "engine analytic" in title and "AAT " in title, title
