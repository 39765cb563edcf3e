"""Comma-separated lists of argument values: the one splitter every list option uses.

`split_items('u280, v80', 'board')` -> ['u280', 'v80']. An empty list, an empty item
(`1,,2`, `128,`, `,v80`) or more than `MAX_ITEMS` items is an InputError naming the
argument, so no list option silently drops or invents a value. Parsers of typed lists
(whole numbers with ranges, numbers, names, ROWSxCOLS) build on it: see
`fpgasim.cli.options`.
"""

from __future__ import annotations

from fpgasim.errors import InputError

#: Most items one list argument may hold (ranges such as 1-85 count as one item).
MAX_ITEMS = 10_000


def split_items(text: object, argument: str, example: str = "a,b") -> list[str]:
    """The items of a comma-separated argument, stripped; empty items are errors."""
    raw = str(text)
    if not raw.strip():
        raise InputError(argument, raw, f"at least one item, e.g. {example}")
    items = [part.strip() for part in raw.split(",")]
    if len(items) > MAX_ITEMS:
        raise InputError(argument, raw, f"at most {MAX_ITEMS} comma-separated items")
    for position, item in enumerate(items, start=1):
        if not item:
            raise InputError(
                argument, raw, f"no empty items (item {position} is empty), e.g. {example}"
            )
    return items
