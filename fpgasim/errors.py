"""User-facing errors: each bad file or argument becomes one; the CLI prints it as one line."""

from __future__ import annotations


class FpgasimError(Exception):
    """Base class of errors the CLI reports as one line with exit status 2."""


def shown_value(value: object) -> str:
    """The offending value as the error line shows it: its repr, cut to 80 characters."""
    shown = repr(value)
    return shown[:77] + "..." if len(shown) > 80 else shown


class ConfigError(FpgasimError):
    """A board, workload, experiment or data file is missing, malformed or out of range."""

    def __init__(self, source: str, field: str, value: object, allowed: str) -> None:
        self.source = source
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{source}: {field} = {shown_value(value)}: {allowed}")


class InputError(FpgasimError):
    """A command-line argument is out of range or malformed."""

    def __init__(self, argument: str, value: object, allowed: str) -> None:
        self.argument = argument
        self.value = value
        self.allowed = allowed
        super().__init__(f"argument {argument} = {shown_value(value)}: {allowed}")
