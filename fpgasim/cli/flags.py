"""Field names of the library's errors -> the flags of the command line.

Errors below the CLI name fields (`verify_len`); the flag a user types for a field is the
field with dashes (`--verify-len`). The table is read from the commands themselves, so a
field maps to a flag only if some command has that flag.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import typer

from fpgasim.bounded import memoised


def _commands(command: Any) -> list[Any]:
    """The (click) command and every command below it (typer may vendor click: duck typed)."""
    out = [command]
    for sub in getattr(command, "commands", {}).values():
        out += _commands(sub)
    return out


def command_flags(commands: Iterable[Any]) -> dict[str, str]:
    """{field: flag} of every long option of these (click) commands and those below them."""
    flags: dict[str, str] = {}
    for top in commands:
        for command in _commands(top):
            for param in command.params:
                for opt in (*param.opts, *param.secondary_opts):
                    if opt.startswith("--") and len(opt) > 2:
                        flags[opt[2:].replace("-", "_")] = opt
    return flags


@memoised("cli.field_flags", owner="fpgasim.cli.flags", keys="the typer app", budget=4,
          why="the field -> flag table is read from every command's options once, when an "
          "error is shown")
def _table(app: typer.Typer) -> dict[str, str]:
    """The field -> flag table of every command of `app`."""
    return command_flags([typer.main.get_command(app)])


def field_flags(app: typer.Typer) -> dict[str, str]:
    """{field: flag} of every long option of the app's commands."""
    return dict(_table(app))
