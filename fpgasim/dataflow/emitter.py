"""The one emitter of instruction rows, shared by every lowering.

A lowering appends rows as tuples in its row layout `ROW` (a NumPy structured dtype) and
reads them back as one structured array. FlightLLM's compiler, the one lowering registered
(`lowerings/registry.py`), writes rows with fractional cycles and unit masks that it
resolves into the `Program` format's `INSTR_DTYPE` per part
(`lowerings/flightllm/emitter.py`). Finished arrays can be appended whole and repeated, which is how
FlightLLM's compiler reuses identical blocks of a layer without emitting them again.
"""

from __future__ import annotations

import numpy as np

from fpgasim.errors import PassOutOfRange

#: The most instruction rows one program (or part) may hold. A row takes about 320 bytes
#: while a pass is lowered (its tuple, the structured row, the engines' arrays), so a
#: program stays under about 1.3 GB; rows grow with the context (the attention's KV chunks)
#: and the model, and shrink with larger buffers (longer instructions).
MAX_PROGRAM_ROWS = 4_000_000


def check_program_rows(count: int) -> None:
    """Refuse a program of more than `MAX_PROGRAM_ROWS` rows, as it is emitted."""
    if count > MAX_PROGRAM_ROWS:
        raise PassOutOfRange(
            f"more than {MAX_PROGRAM_ROWS} instructions",
            f"at most {MAX_PROGRAM_ROWS} instructions in one program, about 1.3 GB while it "
            "is lowered; larger buffers (`buffers`) make fewer, longer ones",
        )


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
        #: rows of the largest templatable run beyond its first two copies: a lowering keeps
        #: such a run as a two-copy template, so they are never held (the budget's discount)
        self.template_saving = 0
        #: ids of row arrays this emitter made (`_flush`) and no one else holds yet
        self._own: set[int] = set()

    def __len__(self) -> int:
        return self.count

    def row(self, fields: tuple) -> int:
        """Append one row (a tuple in `ROW`'s field order); returns its index."""
        self.pending.append(fields)
        self.count += 1
        if self.count - self.template_saving > MAX_PROGRAM_ROWS:
            check_program_rows(self.count - self.template_saving)
        return self.count - 1

    def _flush(self) -> None:
        if self.pending:
            rows = np.array(self.pending, self.ROW)
            self.chunks.append((rows, 1))
            self._own.add(id(rows))
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
        if templatable:
            run = self.chunks[-1][1]
            self.template_saving = max(self.template_saving, (run - 2) * len(rows))
        check_program_rows(self.count - self.template_saving)

    def rows(self) -> np.ndarray:
        """Every row so far as one array of `ROW` that no one else holds: the caller may
        change it. Copied only when it would be an array someone else holds (rows appended
        with `extend`, or handed out before): a part's rows are read once (0.4 s of copies
        in `reproduce all`'s passes)."""
        self._flush()
        if not self.chunks:
            return np.zeros(0, self.ROW)
        # rows are tiled, joined and copied as raw bytes: NumPy copies those with memcpy but
        # structured rows field by field (and promotes their dtypes in Python to join them)
        raw = np.dtype((np.void, self.ROW.itemsize))
        (only, times), *more = self.chunks
        if more or times > 1:
            return np.concatenate(
                [np.tile(c.view(raw), n) if n > 1 else c.view(raw) for c, n in self.chunks]
            ).view(self.ROW)
        if id(only) in self._own:
            self._own.discard(id(only))  # handed out: a later call copies it
            return only
        return only.view(raw).copy().view(self.ROW)
