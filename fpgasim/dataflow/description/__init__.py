"""One model description of a target's pass, and the family registry that builds it
(docs/architecture.md, "One model description and its readers").

`describe_target(model)` is the one place a target's pass is described: frozen nodes
(nodes.py) in a `ModelGraph` (model_graph.py), built by the model's family (one file of
families/: llama, moe, gpt2). Readers are visitors over it (reader.py): the parameters
(parameters.py), the study's element counts (dataflow/study_counts.py).
"""

from __future__ import annotations

from fpgasim.bounded import memoised
from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.description.families import (
    FAMILIES,
    ModelFamily,
    family_of,
    register_family,
)
from fpgasim.dataflow.description.families import gpt2_family as _gpt2  # noqa: F401 (registers)
from fpgasim.dataflow.description.families import llama_family as _llama  # noqa: F401 (registers)
from fpgasim.dataflow.description.families import moe_family as _moe  # noqa: F401 (registers)
from fpgasim.dataflow.description.model_graph import ModelGraph
from fpgasim.dataflow.description.reader import NODE_KINDS, Reader


@memoised("description.targets", owner="fpgasim.dataflow.description",
          keys="target model", budget=64,
          why="built once per model (59 us for Llama-3.1-8B's) and read by the parameter "
          "reader and by every study op graph (the dumped graphs); a hit costs 1.9 us")
def describe_target(model: TargetModel) -> ModelGraph:
    """The description of `model`'s pass, by its registered family."""
    return family_of(model).describe(model)


__all__ = [
    "FAMILIES",
    "NODE_KINDS",
    "ModelFamily",
    "ModelGraph",
    "Reader",
    "describe_target",
    "family_of",
    "register_family",
]
