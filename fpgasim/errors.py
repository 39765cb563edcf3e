"""User-facing errors: each bad file or argument becomes one; the CLI prints it as one line.

Errors below the CLI name the field (`context`, `verify_len`), never a command-line flag;
they keep the fields as attributes and `render(flags)` rewrites them as the flags the user
typed (the CLI passes its field -> flag table). Inside an `allowed` text another field is
written in backticks (`` `aat_dir` ``) so that it is rewritten too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: a field named inside an allowed text: `name` (lower case, digits, underscores)
FIELD_REFERENCE = re.compile(r"`([a-z][a-z0-9_]*)`")


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

    def render(self, flags: Mapping[str, str]) -> str:
        """The message with each field named as `flags` says (the CLI: its flags)."""
        return references_shown(str(self), flags)


def field_shown(field: str, flags: Mapping[str, str]) -> str:
    """A field (or fields joined by '/') as `flags` names it; unknown fields stay as they are."""
    return "/".join(flags.get(part, part) for part in field.split("/"))


def references_shown(text: str, flags: Mapping[str, str]) -> str:
    """`text` with every backticked field that `flags` knows replaced by its flag."""
    return FIELD_REFERENCE.sub(lambda m: flags.get(m.group(1), m.group(0)), text)


#: Characters a terminal acts on instead of showing: C0 and C1 controls, DEL, the line and
#: paragraph separators, bidirectional overrides and isolates; and the lone surrogates by
#: which Python spells a file name's bytes that are not UTF-8.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                          "\udc80-\udcff]")


def printable(text: str, keep_lines: bool = False) -> str:
    """`text` (e.g. a file name) with every control character written as an escape
    (`\\x1b`), so a name cannot drive the terminal it is printed on; a byte that is not
    UTF-8 is shown as `\\xff`. `keep_lines`: line breaks and tabs stay (a description's
    lines), every other control character is escaped."""

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if keep_lines and char in "\n\t":
            return char
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the original byte
            return f"\\x{code - 0xDC00:02x}"
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _UNPRINTABLE.sub(escape, text)


#: how repr writes a surrogate-escaped byte (`\udcff`): the byte is its last two digits
_SURROGATE_REPR = re.compile(r"\\udc([89a-f][0-9a-f])")


def shown_value(value: object) -> str:
    """The offending value as the error line shows it: its repr, cut to 80 characters; a
    file name's byte that is not UTF-8 as `\\xff`, as `printable` shows it (repr would
    write Python's stand-in, `\\udcff`)."""
    shown = _SURROGATE_REPR.sub(r"\\x\1", repr(value))
    return shown[:77] + "..." if len(shown) > 80 else shown


class ConfigError(FpgasimError):
    """A board, workload, experiment or data file is missing, malformed or out of range.

    `source` is the file (or "board NAME", "model NAME"); `argument` the input field that
    named it (e.g. `model` for a model given by name), shown before the source; either may
    be empty.
    """

    def __init__(
        self, source: str, field: str, value: object, allowed: str, argument: str = ""
    ) -> None:
        self.source = source
        self.field = field
        self.value = value
        self.allowed = allowed
        self.argument = argument
        super().__init__(self.render({}))

    def render(self, flags: Mapping[str, str]) -> str:
        """'[argument: ]source: field = value: allowed', the argument and references as flags."""
        where = [field_shown(self.argument, flags)] if self.argument else []
        where += [self.source] if self.source else []
        allowed = references_shown(self.allowed, flags)
        return f"{': '.join(where)}: {self.field} = {shown_value(self.value)}: {allowed}"


class InputError(FpgasimError):
    """An input field (a command-line argument, through the CLI) is out of range or malformed.

    `field` is the field's name (several joined by '/'), not a flag: `render` maps it.
    """

    def __init__(self, field: str, value: object, allowed: str) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(self.render({}))

    def render(self, flags: Mapping[str, str]) -> str:
        """'argument FIELD = value: allowed', the field and references named as `flags` says."""
        allowed = references_shown(self.allowed, flags)
        return f"argument {field_shown(self.field, flags)} = {shown_value(self.value)}: {allowed}"


class PassOutOfRange(FpgasimError):
    """A pass is past one of the simulator's stated limits (a count past int64, more
    instructions than a program may hold): `needs` says what it needs, `limit` the limit.
    The pass service turns it into an InputError naming the input that sized the pass."""

    def __init__(self, needs: str, limit: str) -> None:
        self.needs = needs
        self.limit = limit
        super().__init__(f"a pass needing {needs}: {limit}")
