"""The top-level command group: a command's module is imported only when that command runs.

Importing every command module at start-up cost every call about a second (pandas, the
engines, the schemas, matplotlib behind some commands). The group knows its commands by
name from `COMMANDS` and imports one only when it is invoked or its own `--help` is shown;
`fpgasim --help` lists them from the summaries stored here (tests/cli/test_startup.py checks
each summary against the first paragraph of the command's own help).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

#: Under every results command's --help: where the symbols of its output are defined.
GLOSSARY_EPILOG = (
    "Symbols in the output (AAT, AR, P_eff, T_v, T_d, x_R, ridge_tokens, alpha, regime, "
    "Ori/Naive/Best, speedup, decision, engine, lowering): docs/glossary.md. Which answer "
    "to trust: the simulator (default engine) to decide, the study's accounting "
    "(--engine analytic) to reproduce the paper (docs/analysis.md)."
)


@dataclass(frozen=True)
class LazyCommand:
    """Where a command lives and what `fpgasim --help` says about it."""

    module: str  # the fpgasim.cli module defining it
    attribute: str  # a typer command function, or a typer.Typer of subcommands
    summary: str  # the first paragraph of its help
    results: bool = True  # a command printing results: its help links the glossary


COMMANDS: dict[str, LazyCommand] = {
    "simulate": LazyCommand(
        "fpgasim.cli.simulate_cmd",
        "simulate",
        "Time one verification pass (and the draft phase) on a board.",
    ),
    "generate": LazyCommand(
        "fpgasim.cli.generate_cmd",
        "generate_cmd",
        "Time a whole generation: prefill of the prompt (TTFT), then D decode steps.",
    ),
    "sweep": LazyCommand(
        "fpgasim.cli.sweep_cmd",
        "sweep",
        "Simulate every (board, context, x) point and write one row per point.",
    ),
    "explore": LazyCommand(
        "fpgasim.cli.explore_cmd",
        "explore_cmd",
        "Explore a design space: a board varied over any field of its FPGA or design file.",
    ),
    "boards": LazyCommand(
        "fpgasim.cli.boards_cmd",
        "boards",
        "List the shipped FPGAs, designs and named boards, and which design fits which FPGA.",
    ),
    "models": LazyCommand(
        "fpgasim.cli.models_cmd",
        "models",
        "List the shipped target models (workloads/models), or read one model file.",
        results=False,
    ),
    "design": LazyCommand(
        "fpgasim.cli.design_cmd",
        "design_app",  # a group: its subcommands carry their own help
        "Accelerator designs fitted to FPGAs: pipelines, arrays, channels and resources.",
        results=False,
    ),
    "solve": LazyCommand(
        "fpgasim.cli.solve_cmd",
        "solve",
        "Solve when SD beats AD on a board, and at which verification length x.",
    ),
    "validate": LazyCommand(
        "fpgasim.cli.validate_cmd",
        "validate",
        "Check files without running anything: every problem on its own line, then exit 2.",
        results=False,
    ),
    "reproduce": LazyCommand(
        "fpgasim.cli.reproduce_cmd",
        "reproduce",
        "Reproduce the study's tables and figures: print them and write CSV, Markdown and PNG.",
    ),
    "compare-algorithms": LazyCommand(
        "fpgasim.cli.compare_cmd",
        "compare_algorithms",
        "Compare SD algorithms on one board and target model.",
    ),
    "cache": LazyCommand(
        "fpgasim.cli.cache_cmd",
        "cache_app",  # a group: its subcommands carry their own help
        "Inspect or empty the sweep result cache ($FPGASIM_CACHE_DIR, else ~/.cache/fpgasim).",
    ),
    "hetero": LazyCommand(
        "fpgasim.cli.hetero_cmd",
        "hetero_app",  # a group: its subcommands carry their own help
        "Heterogeneous speculative decoding (Dovetail): the target model on the CPU, the "
        "drafter on a small GPU, only tokens and hidden states over PCIe. Hosts are "
        "platforms/*.yaml, given by name or path.",
    ),
    "tree": LazyCommand(
        "fpgasim.cli.tree_cmd",
        "tree_app",  # a group: its subcommands carry their own help
        "Token trees: optimal trees under a positional acceptance model, AAT curves of the "
        "tree-construction methods, prior-score search from acceptance traces, and the "
        "calibration of the embedded acceptance models. See docs/trees.md.",
    ),
}


def load_command(name: str) -> Any:
    """The click command `name` (a command, or a group of subcommands), its module imported."""
    spec = COMMANDS[name]
    target = getattr(importlib.import_module(spec.module), spec.attribute)
    if isinstance(target, typer.Typer):
        command = typer.main.get_command(target)
    else:
        single = typer.Typer(add_completion=False)
        single.command(name=name, epilog=GLOSSARY_EPILOG if spec.results else None)(target)
        command = typer.main.get_command(single)
    command.name = name
    return command


class LazyCommands(Mapping[str, Any]):
    """The group's name -> command mapping; looking a name up imports that command only."""

    def __getitem__(self, name: str) -> Any:
        if name not in COMMANDS:
            raise KeyError(name)
        return load_command(name)

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


class LazyGroup(TyperGroup):
    """typer's group over `LazyCommands`; its help lists the commands by their summaries."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = LazyCommands()  # type: ignore[assignment] - read-only, never added to
        self._listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        """The registry's command names, no command module imported."""
        return list(COMMANDS)  # typer's own reads every value of `commands`: imports them all

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command, imported; while the group help is listed, a stub with its summary."""
        if self._listing and cmd_name in COMMANDS:  # a row of the help: the summary will do
            return TyperCommand(cmd_name, help=COMMANDS[cmd_name].summary)
        return super().get_command(ctx, cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """typer's group help, its command rows from the summaries (no command imported)."""
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False
