"""The family registry: a model family is one file of this package that describes a
target's pass from its `TargetModel` and registers itself (docs/architecture.md, "One
model description and its readers"). The architecture facts stay data in the model's
config; a family turns them into nodes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fpgasim.config.schema import TargetModel
from fpgasim.dataflow.description.model_graph import ModelGraph


@dataclass(frozen=True)
class ModelFamily:
    """A family: its name, which target models it describes and how."""

    name: str
    matches: Callable[[TargetModel], bool]
    describe: Callable[[TargetModel], ModelGraph]


#: registered families, asked in registration order (the first that matches describes)
FAMILIES: dict[str, ModelFamily] = {}


def register_family(family: ModelFamily) -> ModelFamily:
    """Add `family` to the registry (its module calls this at import)."""
    FAMILIES[family.name] = family
    return family


def family_of(model: TargetModel) -> ModelFamily:
    """The registered family that describes `model`."""
    for family in FAMILIES.values():
        if family.matches(model):
            return family
    raise ValueError(f"no model family describes {model.id!r} "
                     f"(families: {', '.join(FAMILIES)})")
