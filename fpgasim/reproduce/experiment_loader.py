"""Find and load experiment files; route kinds owned by other packages (e.g. dovetail1).

`workloads/experiments/NAME.yaml` files whose `kind` has a renderer are validated against
`schema.Experiment`; a file whose kind is `External` (`fpgasim.reproduce.kind`) belongs to
another package, which validates and runs it (`ExternalExperiment` only carries its name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fpgasim.config.loader import available, read_yaml_mapping, resolve, validate_mapping
from fpgasim.errors import ConfigError, printable
from fpgasim.reproduce.experiment_schema import NAME_PATTERN, Experiment
from fpgasim.reproduce.kind import External, experiment_kind, experiment_kinds


@dataclass(frozen=True)
class ExternalExperiment:
    """An experiment file of an external kind: its name, kind and path."""

    name: str
    kind: str
    path: Path

    @property
    def external(self) -> External:
        """Its kind's `External` part: who computes it and what the listings show."""
        external = experiment_kind(self.kind).external
        assert external is not None  # load_experiment builds one only for external kinds
        return external

    @property
    def title(self) -> str:
        """Its kind's title, read like `Experiment.title` by the listings."""
        return self.external.title

    @property
    def description(self) -> str:
        """Its kind's one-line description (which package runs it, what it shows)."""
        return self.external.description

    figure = False


AnyExperiment = Experiment | ExternalExperiment


def _order(name: str) -> tuple[int, int, str]:
    """table1..N, then fig1..N, then the rest alphabetically."""
    match = re.fullmatch(r"(table|fig)(\d+)", name)
    if match:
        return (0 if match.group(1) == "table" else 1, int(match.group(2)), name)
    return (2, 0, name)


#: The study's own tables and figures (docs/reproduction.md): what `reproduce all` runs.
#: The other shipped experiments (dovetail1, tree_design) are fpgasim's
#: extensions; `reproduce everything` adds them.
STUDY_EXPERIMENTS: tuple[str, ...] = (
    "table1", "table2", "table3", "table4", "fig1", "fig2", "fig4", "fig5", "fig6",
)  # fmt: skip


def experiment_names() -> list[str]:
    """Names of the shipped experiments, tables first, then figures, then others."""
    return sorted(available("experiment"), key=_order)


def study_experiment_names() -> list[str]:
    """The study's experiments among the shipped ones, in `experiment_names` order."""
    return [name for name in experiment_names() if name in STUDY_EXPERIMENTS]


def doc_experiment_names(*, slow: bool | None = None) -> list[str]:
    """The shipped doc tables (experiments whose kind gives a doc's Markdown block,
    docs/reproduction.md "Doc tables"): all (None), only the fast (False) or only the slow
    (True) ones, in `experiment_names` order."""
    out = []
    for name in experiment_names():
        exp = load_experiment(name)
        if isinstance(exp, ExternalExperiment) and exp.external.doc:
            if slow is None or exp.external.slow == slow:
                out.append(name)
    return out


def all_experiment_names() -> list[str]:
    """What `reproduce all` runs: the study's nine, then the doc tables that take seconds
    (the slow ones are `reproduce docs`)."""
    return [*study_experiment_names(), *doc_experiment_names(slow=False)]


def load_experiment(name_or_path: str | Path) -> AnyExperiment:
    """An experiment by shipped name (`table4`) or YAML path; errors name the file and field."""
    path = resolve("experiment", str(name_or_path))
    data = read_yaml_mapping(path)
    kind = data.get("kind")
    kinds = experiment_kinds()
    if not isinstance(kind, str) or kind not in kinds:
        raise ConfigError(str(path), "kind", kind, f"one of {', '.join(kinds)}")
    if kinds[kind].external is not None:
        key = "name" if data.get("name") else "id" if data.get("id") else None
        if key is None:  # the file's own name: a plain name already
            return ExternalExperiment(printable(path.stem), kind, path)
        # the outputs are NAME.csv/.md in `out`: a name, never a path out of it
        name = data[key]
        if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
            raise ConfigError(str(path), key, name, "a name of letters, digits, '_', '.' and "
                              "'-' (the outputs are NAME.csv and NAME.md in `out`)")
        return ExternalExperiment(name, kind, path)
    return validate_mapping(Experiment, data, str(path))
