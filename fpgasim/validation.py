"""How far an absolute figure (tokens/s, W, tokens/J) may be from silicon: the nearest design
and part the simulator was checked against on hardware, and its measured error there.

One owner of the ledger of silicon checks (docs/validation.md is its text): each
`SiliconCheck` is a published measurement of one design on one part and the simulator's
error against it, as docs/validation.md computes it. `validation_of` turns a board into the
one line every result row carries in its `validation` field (simulate, solve, generate,
explore) and tables print once under the table; it also names the assumptions an absolute
figure rests on where the part's sources give no fact (its idle draw, its memory's access
behaviour), so that a number resting on them says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from fpgasim.config.board import Board
from fpgasim.engine.energy import energy_constants

#: the study's accounting (`analytic`) is a roofline of the study's tables, not a model of
#: silicon (docs/accounting.md)
ACCOUNTING = "analytic"


@dataclass(frozen=True)
class SiliconCheck:
    """One published measurement of a design on a part, and the simulator's error there.

    The errors are the simulator's figure over the measured one, minus 1, at each decode
    context the measurement may have used (its context is not stated: the artefact ships
    T = 128 and 512); docs/validation.md derives them and tests/simulate/test_validation.py
    recomputes
    them from the model."""

    name: str
    design: str
    fpga: str
    workload: str
    tokens_per_s: float
    power_w: float
    source: str
    contexts: tuple[int, ...]
    speed_error: tuple[float, ...]
    power_error: tuple[float, ...]

    @property
    def energy_error(self) -> tuple[float, ...]:
        """tokens/J over the measured tokens/s / W, minus 1, at each context."""
        return tuple((1 + s) / (1 + p) - 1
                     for s, p in zip(self.speed_error, self.power_error, strict=True))

    def errors_text(self) -> str:
        """'tokens/s +a% to +b%, W +c%, tokens/J +d%': the measured errors in words."""
        return (f"tokens/s {_span(self.speed_error)}, W {_span(self.power_error)}, "
                f"tokens/J {_span(self.energy_error)}")


def _span(errors: tuple[float, ...]) -> str:
    """A signed percentage, or the range of several ('+5% to +9%')."""
    lo, hi = min(errors), max(errors)
    if round(lo * 100) == round(hi * 100):
        return f"{lo:+.0%}"
    return f"{lo:+.0%} to {hi:+.0%}"


#: FlightLLM's U280 decode (LLaMA2-7B, batch 1): 55 tokens/s from its public artefact's README
#: (FlightLLM/flightllm_test_demo, timed ap_start..ap_done by its host program), 45 W of board
#: power during that decode from a survey sheet of LLM accelerators (given in issue 40);
#: the simulator's figures at T = 128 and 512 on `boards/flightllm-u280.yaml` (`fast` engine;
#: docs/validation.md, "The comparison (round 2 against silicon)"), to 0.01 percentage point
FLIGHTLLM_U280 = SiliconCheck(
    name="FlightLLM on U280",
    design="flightllm",
    fpga="u280",
    workload="LLaMA2-7B decode, batch 1",
    tokens_per_s=55.0,
    power_w=45.0,
    source="FlightLLM/flightllm_test_demo README (55 tokens/s); survey sheet (45 W)",
    contexts=(128, 512),
    speed_error=(0.6553, 0.5473),
    power_error=(0.3397, 0.3359),
)

#: every silicon check, nearest first when several apply
LEDGER: tuple[SiliconCheck, ...] = (FLIGHTLLM_U280,)


@dataclass(frozen=True)
class Validation:
    """What an absolute figure of a board rests on: its silicon check (or the nearest), and
    the assumptions the part's sources leave."""

    basis: str  # "validated", "nearest", "not validated" or "accounting"
    check: SiliconCheck | None
    assumptions: tuple[str, ...]

    @property
    def text(self) -> str:
        """The one line results carry in their `validation` field."""
        if self.basis == "accounting":
            head = "the study's accounting (analytic), not validated against silicon"
        elif self.check is None or self.basis == "not validated":
            head = "not validated against silicon"
        elif not self.check.speed_error:
            head = f"{self.check.name} against silicon: comparison pending"
        elif self.basis == "validated":
            head = (f"{self.check.name} against silicon ({self.check.workload}): "
                    f"{self.check.errors_text()}")
        else:
            head = (f"nearest silicon check {self.check.name} ({self.check.workload}): "
                    f"{self.check.errors_text()}; this board is not validated")
        return "; ".join((head, *self.assumptions))


def _assumptions(board: Board) -> tuple[str, ...]:
    """What the board's figures rest on beyond its part's sources: assumptions (its idle draw,
    its memory's access behaviour) and a reading of its bandwidth other than the data sheet's."""
    out = []
    if energy_constants(board).static_w.assumption:
        out.append(f"static power assumed (no idle readout of {board.fpga.name})")
    if board.fit.transfer_basis == "assumed":
        out.append(f"transfer efficiencies assumed ({board.fit.transfer_note.split(':')[0]})")
    if board.fit.bandwidth_reading == "gib":
        out.append(f"the part's {board.fpga.memory.bandwidth_gb_s:g} GB/s read as GiB/s "
                   "(+7.4%, FlightLLM's VHK158 configuration)")
    return tuple(out)


def validation_of(board: Board, engine_name: str) -> Validation:
    """The validation of a board's absolute figures on an engine (module docstring): its own
    silicon check when the board is a checked design on a checked part, unchanged; else the
    check that shares its design or its part; else none. The accounting engine is not a
    model of silicon."""
    assumptions = _assumptions(board)
    if engine_name == ACCOUNTING:
        return Validation("accounting", None, assumptions)
    changed = " " in board.name  # `--vary` changes follow the board's name
    design, fpga = board.design.name, board.fpga.name
    for check in LEDGER:
        if check.design == design and check.fpga == fpga and not changed:
            return Validation("validated", check, assumptions)
    for check in LEDGER:
        # every check is of FlightLLM's lowering: sharing the part says nothing of another
        # accelerator's (DFX's is predicted blind, docs/validation.md)
        if check.design == design or (check.fpga == fpga and board.lowering == "flightllm"):
            return Validation("nearest", check, assumptions)
    return Validation("not validated", None, assumptions)


def validation_line(texts: list[str]) -> list[str]:
    """The lines printed once under a table whose rows carry these `validation` texts."""
    distinct = list(dict.fromkeys(texts))
    return [f"validation: {t} (docs/validation.md)" for t in distinct]
