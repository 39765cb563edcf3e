"""Token trees: shapes, builders and acceptance models (docs/trees.md).

The tree type itself, `TokenTree` (structure, masks and what a drafter drafts), is
`fpgasim.dataflow.token_tree`: the draft schedule below this layer reads it too.
Modules: `shapes` (level widths, width/depth baselines),
`acceptance` (positional model, expected AAT, trace generation), `traces` (trace file
format), `optimal` (greedy and Sequoia's DP), `prior_score` (tree search from traces),
`builders` (baseline trees, EAGLE's dynamic tree), `embedded` (the shipped algorithms'
acceptance: `embedded_curve`), `calibrate` (how those were calibrated), `compare`.
"""

from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.tree.optimal import greedy_tree, optimal_tree, sequoia_tree
from fpgasim.tree.positional import PositionalModel, expected_aat, generate_traces
from fpgasim.tree.prior_score import prior_score_search
from fpgasim.tree.traces import Traces, load_traces

#: The trace-file loader under the name `fpgasim validate` looks for.
load_trace = load_traces

__all__ = [
    "PositionalModel",
    "TokenTree",
    "Traces",
    "expected_aat",
    "generate_traces",
    "greedy_tree",
    "load_trace",
    "load_traces",
    "optimal_tree",
    "prior_score_search",
    "sequoia_tree",
]
