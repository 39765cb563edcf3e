"""The one emitter of instruction rows, shared by every lowering.

A lowering appends rows as tuples in its row layout `ROW` (a NumPy structured dtype) and
reads them back as one structured array: the study lowering writes `INSTR_DTYPE` rows,
the `Program` format itself (`lowerings/study/emit.py`); FlightLLM's compiler writes rows with
fractional cycles and unit masks that it resolves into `INSTR_DTYPE` per part
(`lowerings/flightllm/emitter.py`). Finished arrays can be appended whole and repeated, which is how
FlightLLM's compiler reuses identical blocks of a layer without emitting them again.
"""

from __future__ import annotations

import numpy as np


class Emitter:
    """The rows of one program (or part) in order, in the layout `ROW` of the subclass.

    Rows arrive one tuple at a time (`row`: a list append, the fast path in Python) or as
    finished arrays repeated `times` over (`extend`); `rows` joins them into one array.
    """

    ROW: np.dtype

    def __init__(self) -> None:
        self.pending: list[tuple] = []  # rows not yet in a chunk
        self.chunks: list[tuple[np.ndarray, int]] = []  # (finished rows, times in a row)
        self.count = 0
        #: ids of finished row arrays whose copies in a row may be kept as a template: each
        #: copy's waits reach back at most into the copy before it (FlightLLM's compiler)
        self.templatable: set[int] = set()

    def __len__(self) -> int:
        return self.count

    def row(self, fields: tuple) -> int:
        """Append one row (a tuple in `ROW`'s field order); returns its index."""
        self.pending.append(fields)
        self.count += 1
        return self.count - 1

    def _flush(self) -> None:
        if self.pending:
            self.chunks.append((np.array(self.pending, self.ROW), 1))
            self.pending = []

    def extend(self, rows: np.ndarray, times: int = 1, templatable: bool = False) -> None:
        """Append the finished `rows` (of `ROW`) `times` over; appending the same array
        again only raises the count of the run it ends. `templatable`: copies in a row wait
        at most on the copy before them (see `templatable`)."""
        self._flush()
        if templatable:
            self.templatable.add(id(rows))
        if self.chunks and self.chunks[-1][0] is rows:
            self.chunks[-1] = (rows, self.chunks[-1][1] + times)
        else:
            self.chunks.append((rows, times))
        self.count += len(rows) * times

    def rows(self) -> np.ndarray:
        """Every row so far as one array of `ROW` (a copy: the caller may change it)."""
        self._flush()
        if not self.chunks:
            return np.zeros(0, self.ROW)
        # rows are tiled, joined and copied as raw bytes: NumPy copies those with memcpy but
        # structured rows field by field (and promotes their dtypes in Python to join them)
        raw = np.dtype((np.void, self.ROW.itemsize))
        if len(self.chunks) > 1 or self.chunks[0][1] > 1:
            joined = np.concatenate(
                [np.tile(c.view(raw), n) if n > 1 else c.view(raw) for c, n in self.chunks]
            )
            self.chunks = [(joined.view(self.ROW), 1)]
        return self.chunks[0][0].view(raw).copy().view(self.ROW)
