"""The one error a lowering raises when an on-chip buffer cannot hold its smallest tile."""

from __future__ import annotations


class BufferTooSmall(Exception):
    """A board (or model, field "model.NAME") buffer cannot hold the smallest tile of some op.

    Lowerings raise it with the offending field; `dataflow.lowerings.registry.lower` turns it into
    the one-line `ConfigError` naming the board or model file.
    """

    def __init__(self, field: str, value: object, allowed: str) -> None:
        super().__init__(f"{field} = {value}: {allowed}")
        self.field, self.value, self.allowed = field, value, allowed
