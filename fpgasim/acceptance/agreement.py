"""The embedded acceptance model against every measured row of the AAT tables.

`embedded_vs_measured` puts each measured row beside the embedded model's AAT for the same
tree at the same context and beside what the acceptance rule (`analysis.acceptance`) uses
by default there; `agreement_markdown` summarises it for docs/trees.md. `fpgasim reproduce
embedded_vs_measured` writes both (docs/embedded_vs_measured.csv), and
`tests/acceptance/test_rule.py` checks them.
"""

from __future__ import annotations

import math

import pandas as pd

from fpgasim.acceptance.curves import acceptance_curves
from fpgasim.acceptance.measured import AatTables, table_trees
from fpgasim.acceptance.rule import acceptance_source, context_range
from fpgasim.config.schema import Algorithm
from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.tree.builders import dynamic_tree
from fpgasim.tree.embedded import embedded_curve, embedded_model

#: Columns of `embedded_vs_measured`: one row per measured row of the tables.
AGREEMENT_COLUMNS = [
    "file",
    "algorithm",
    "model",
    "task",
    "context",
    "method",
    "verify_len",
    "tree",
    "tree_from",
    "measured_aat",
    "embedded_aat",
    "embedded_error",
    "default_basis",
    "default_file",
    "default_method",
    "default_aat",
]


def embedded_vs_measured(tables: AatTables, algorithms: dict[str, Algorithm]) -> pd.DataFrame:
    """Every measured row beside the embedded model's AAT for the same tree at the same
    context, its relative error (embedded / measured - 1), and what the acceptance rule
    uses by default there (`default_basis`, `default_file`, `default_method`, and the AAT of
    the default curve at that x, `default_aat`: the row's own value where it reads the row).

    The tree of a row: its tree_shape (the best tree of those level widths under the
    model, `TokenTree.from_shape`), or its dynamic depth/top-k (`dynamic_tree`), else the
    per-x tree table's configuration, else the model's optimal tree at x (`tree_from`).
    `algorithms` maps each table's algorithm id to its file.
    """
    out = []
    defaults: dict[tuple, pd.Series] = {}
    for row in tables.rows.to_dict("records"):
        algorithm = algorithms[row["algorithm"]]
        x, context = int(row["verify_len"]), int(row["context"])
        model = embedded_model(algorithm, context)
        per_x = (
            table_trees(tables.tree_table, algorithm.drafter)
            if tables.tree_table is not None
            else {}
        )
        depth, top_k = row["draft_depth"], row["draft_top_k"]
        if row["tree_shape"]:
            widths = tuple(int(w) for w in row["tree_shape"].split())
            tree, origin = TokenTree.from_shape(widths, model), "row"
            text = row["tree_shape"]
        elif not pd.isna(depth) and not pd.isna(top_k):
            tree = dynamic_tree(model, x - 1, int(depth), int(top_k))
            origin, text = "row", f"depth={int(depth)} top_k={int(top_k)}"
        elif per_x.get(x) is not None and per_x[x].is_dynamic:
            d, k = per_x[x].draft_depth, per_x[x].top_k
            tree, origin, text = dynamic_tree(model, x - 1, d, k), "table", f"depth={d} top_k={k}"
        elif per_x.get(x) is not None:
            tree = TokenTree.from_shape(per_x[x].static_shape(), model)
            origin, text = "table", per_x[x].describe()
        else:
            frame = embedded_curve(algorithm, context, [x])
            tree = None
            origin, text = "optimal", str(frame["tree_shape"].iloc[0])
        embedded = (
            float(model.expected_aat(tree)) if tree is not None else float(frame["aat"].iloc[0])
        )
        key = (row["algorithm"], row["model"], row["task"], context)
        if key not in defaults:
            source = acceptance_source(algorithm, row["model"], context, tables, task=row["task"])
            curve = acceptance_curves(algorithm, row["model"], [context], aat_dir=tables,
                                      tasks=[row["task"]])[0]
            defaults[key] = pd.Series(
                {"basis": source.basis, "file": source.file, "method": source.method,
                 "aat": curve.points.set_index("verify_len")["aat"]}
            )
        default = defaults[key]
        aats = default["aat"]
        out.append(
            {
                "file": row["file"],
                "algorithm": row["algorithm"],
                "model": row["model"],
                "task": row["task"],
                "context": context,
                "method": row["method"],
                "verify_len": x,
                "tree": text,
                "tree_from": origin,
                "measured_aat": float(row["aat"]),
                "embedded_aat": embedded,
                "embedded_error": embedded / float(row["aat"]) - 1,
                "default_basis": default["basis"],
                "default_file": default["file"],
                "default_method": default["method"],
                "default_aat": float(aats[x]) if x in aats.index else math.nan,
            }
        )
    return pd.DataFrame(out, columns=AGREEMENT_COLUMNS)


def agreement_markdown(frame: pd.DataFrame) -> str:
    """The summary of `embedded_vs_measured` for docs/trees.md: one line per (file, model,
    task, method) with its contexts, rows, rows within 10%, median and largest |error|."""
    lines = [
        "| file | model | method | contexts | rows | within 10% | median \\|error\\| "
        "| largest \\|error\\| (context, x) | mean error | default |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | --- | ---: | --- |",
    ]
    keys = ["file", "model", "task", "method"]
    for (file, model, task, method), g in frame.groupby(keys, sort=True):
        err = g["embedded_error"]
        worst = g.loc[err.abs().idxmax()]
        within = int((err.abs() <= 0.10).sum())
        default = "/".join(sorted(set(g["default_basis"])))
        name = method if task == "gov_report" else f"{method} ({task})"
        lines.append(
            f"| {file} | {model} | {name} | {context_range(g['context'])} | {len(g)} | {within} "
            f"| {err.abs().median():.1%} | {abs(worst['embedded_error']):.1%} "
            f"({int(worst['context'])}, {int(worst['verify_len'])}) | {err.mean():+.1%} "
            f"| {default} |"
        )
    return "\n".join(lines)


__all__ = ["AGREEMENT_COLUMNS", "agreement_markdown", "embedded_vs_measured"]
