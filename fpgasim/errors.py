"""User-facing errors: each bad file or argument becomes one; the CLI prints it as one line."""

from __future__ import annotations


def _rebuild(cls: type, args: tuple, state: dict) -> FpgasimError:
    """Unpickle an FpgasimError without calling its `__init__` (see `__reduce__`)."""
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class FpgasimError(Exception):
    """Base class of errors the CLI reports as one line with exit status 2.

    Instances pickle by their message and attributes, not by re-calling `__init__` (whose
    signature differs per subclass), so they cross process boundaries intact: a sweep
    point failing in a pool worker reaches the parent as the same one-line error.
    """

    def __reduce__(self) -> tuple:
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


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
