"""Design spaces: boards varied over any numeric (or named) field of their FPGA or design file.

`--vary design.mv_lanes=1,2,4 --vary fpga.memory.bandwidth_gb_s=460,920` is a `Variation`:
its product of values, each applied to the base pair's files before the design is fitted to
the part again (config/fit.py), so "double the DSPs" (`fpga.dsps`) re-fits the arrays instead
of guessing one. The boards it returns are ordinary fitted `Board`s, so they go through the
sweep's grid, executors and cache like shipped ones (the cache keys them by content).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import yaml
from pydantic import ValidationError

from fpgasim.config.board import Board, Scalar
from fpgasim.config.board_loader import BoardBase
from fpgasim.config.cluster import Cluster
from fpgasim.config.loader import load_yaml_text
from fpgasim.dataflow.lowerings.flightllm.flightllm_cluster import check_ports
from fpgasim.errors import InputError
from fpgasim.lists import split_items

#: the cluster fields --vary may set (`config.cluster.Cluster`)
CLUSTER_FIELDS = ("cards", "parallel", "tp", "micro_batches", "hop_latency_s", "topology",
                  "link_layer")
#: the most boards one variation may ask for (each is costed at every point of a sweep)
MAX_VARIATION_BOARDS = 4096


@dataclass(frozen=True)
class Variation:
    """Fields to vary ('design.x' / 'fpga.y.z') and their values, in the order given."""

    axes: tuple[tuple[str, tuple[Scalar, ...]], ...] = ()

    def combinations(self) -> list[tuple[tuple[str, Scalar], ...]]:
        """Every combination of the axes' values, the first axis slowest."""
        paths = [path for path, _ in self.axes]
        return [tuple(zip(paths, combo, strict=True))
                for combo in itertools.product(*(values for _, values in self.axes))]

    def boards(self, base: BoardBase) -> list[Board]:
        """The base re-fitted at every combination (just the base without axes)."""
        return [build_variant(base, changes) for changes in self.combinations()]


def build_variant(base: BoardBase, changes: Sequence[tuple[str, Scalar]]) -> Board:
    """The base with one combination applied: `fpga.`/`design.` fields re-fitted, `cluster.`
    fields (`CLUSTER_FIELDS`: cards, parallel, tp, micro_batches, ...) set on the board's cluster
    (docs/multi-fpga.md, "Exploring cluster sizes"), each named after the board's name."""
    files = [(p, v) for p, v in changes if not p.startswith("cluster.")]
    fields = {p.removeprefix("cluster."): v for p, v in changes if p.startswith("cluster.")}
    board = base.build(files)
    if not fields:
        return board
    shown = " ".join(f"{k}={v}" for k, v in fields.items())
    try:
        cluster = Cluster.model_validate(fields)  # a record of its fields, validated
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(x) for x in error["loc"]) or "cluster"
        raise InputError("vary", f"cluster.{field}={fields.get(field, shown)}",
                         error["msg"]) from None
    check_ports(board.fpga, cluster)
    return board.with_cluster(cluster).model_copy(update={"name": f"{board.name} {shown}"})


def parse_vary(items: Sequence[str]) -> Variation:
    """['design.mv_lanes=1,2,4', 'fpga.memory.bandwidth_gb_s=460,920'] -> a Variation.

    Each value is read as a YAML 1.2 file reads a scalar (numbers, true/false, names); a path may
    appear once. The product may hold at most MAX_VARIATION_BOARDS boards."""
    axes: list[tuple[str, tuple[Scalar, ...]]] = []
    total = 1
    for item in items:
        path, sep, values = item.partition("=")
        path = path.strip()
        if not sep or not path.startswith(("design.", "fpga.", "cluster.")) or not values.strip():
            raise InputError("vary", item, "PATH=V1,V2,... with PATH starting 'design.', "
                             "'fpga.' or 'cluster.', e.g. design.mv_lanes=1,2,4 or "
                             "cluster.cards=1,2,4")
        if path.startswith("cluster.") and path.removeprefix("cluster.") not in CLUSTER_FIELDS:
            raise InputError("vary", item, f"a cluster field: {', '.join(CLUSTER_FIELDS)}")
        if path in dict(axes):
            raise InputError("vary", item, f"each field once ({path} is given twice)")
        # distinct by type too: 1, 1.0 and true are three values (a dict would merge them)
        parsed = tuple({(type(v), v): v for v in (_scalar(s, item) for s in
                                                   split_items(values, "vary", "1,2,4"))
                        }.values())
        axes.append((path, parsed))
        total *= len(parsed)
        if total > MAX_VARIATION_BOARDS:
            raise InputError("vary", item, f"at most {MAX_VARIATION_BOARDS} boards in all "
                             f"(the product of the `vary` values reaches {total})")
    return Variation(tuple(axes))


def _scalar(text: str, item: str) -> Scalar:
    """One value as a YAML 1.2 file reads a plain scalar (`config.loader.load_yaml_text`,
    the core schema every input file is read with): `1e3` a number, `0225` 225, `0x10`
    16, only true/false booleans, `yes`, `2:25` and `1_000` text, which the field's
    validation then names."""
    text = text.strip()
    try:
        value = load_yaml_text(text)
    except (yaml.YAMLError, ValueError, RecursionError):
        value = text
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    raise InputError("vary", item, f"scalar values (numbers, true/false, names), not {text!r}")
