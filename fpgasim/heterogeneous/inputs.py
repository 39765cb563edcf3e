"""Published Dovetail inputs (`workloads/experiments/dovetail1.yaml`) and what is fitted to them.

The file holds every published number the heterogeneous model uses; each row says what it
calibrates (`cpu`, `gpu`, `acceptance`) so the rest stay held-out checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, model_validator

from fpgasim.config.loader import load_file, resolve
from fpgasim.config.schema import PosFloat, PosInt, Source, Strict
from fpgasim.dataflow.drafters.network import DraftNetwork
from fpgasim.heterogeneous.costs import drafter_for
from fpgasim.heterogeneous.tree_acceptance import (
    BlockGain,
    TreeAcceptance,
    fit_top1,
    sibling_shares,
)

Seconds = Annotated[float, Field(gt=0, le=1e4, allow_inf_nan=False)]
Role = Literal["cpu", "gpu", "acceptance"]


class PublishedRow(Strict):
    """One row of Dovetail's measurement table, plus the host and tree it ran with."""

    method: Literal["EAGLE-2", "Dovetail"] = Field(description="SD method")
    device: str = Field(min_length=1, max_length=200, description="published device text")
    platform: str = Field(min_length=1, max_length=64, description="platforms/NAME.yaml")
    gamma: PosInt = Field(le=1024, description="candidate tokens verified per iteration")
    depth: PosInt = Field(le=64, description="dynamic-tree depth parameter: depth+1 draft passes")
    blocks: int = Field(0, ge=0, le=64, description="M, extra drafter blocks (0 for EAGLE-2)")
    t_target_s: Seconds = Field(description="T_T: target AD step")
    t_draft_s: Seconds = Field(description="T_D: one draft forward pass")
    t_verify_s: Seconds = Field(description="T_V(gamma): one verification")
    omega: PosFloat = Field(le=1024, description="Omega: tokens generated per iteration")
    calibrates: list[Role] = Field(default_factory=list, description="what this row calibrates")

    @property
    def draft_passes(self) -> int:
        """EAGLE-2-style drafting: one pass over the accepted tokens, then `depth` passes."""
        return self.depth + 1

    @property
    def levels(self) -> int:
        """Tree levels the drafter can build (= draft passes)."""
        return self.depth + 1

    def drafter(self, width: int) -> DraftNetwork:
        """The row's drafter (its method and M blocks), `width` tokens per later pass."""
        return drafter_for(self.method, self.blocks, width)


class AcceptanceInputs(Strict):
    sibling_vector: list[Annotated[float, Field(ge=0, le=1)]] = Field(min_length=2, max_length=64)
    sibling_rejected: float = Field(ge=0, le=1, description="P(every sibling rejected)")
    sibling_vector_width: PosInt = Field(le=1024, description="ranks the vector covers")
    half_gain_blocks: PosFloat = Field(le=64, description="assumption: blocks for half the gain")


class LaptopInputs(Strict):
    platform: str = Field(min_length=1, max_length=64)
    gamma: PosInt = Field(le=1024)
    depth: PosInt = Field(le=64)
    blocks: int = Field(ge=0, le=64)
    draft_phase_s: Seconds
    verify_phase_s: Seconds


class Dovetail1Inputs(Strict):
    """The published inputs of the dovetail1 table and the model's calibration points."""

    id: Literal["dovetail1"]
    kind: Literal["dovetail1"]
    model: str = Field(min_length=1, max_length=64, description="target model name")
    context: PosInt = Field(le=1 << 20, description="assumed context length L")
    width: PosInt = Field(le=1024, description="draft tokens per pass (tree top-k)")
    rows: list[PublishedRow] = Field(min_length=1, max_length=64)
    acceptance: AcceptanceInputs
    laptop: LaptopInputs
    cpu_only_tokens_per_s: PosFloat = Field(le=1e6, description="published CPU-only decode speed")
    sources: list[Source] = Field(default_factory=list)

    @model_validator(mode="after")
    def _roles(self) -> Dovetail1Inputs:
        for role in ("cpu", "gpu"):
            n = sum(role in r.calibrates for r in self.rows)
            if n != 1:
                raise ValueError(f"{n} rows calibrate '{role}'; mark exactly one row")
        for method in {r.method for r in self.rows}:
            n = sum("acceptance" in r.calibrates for r in self.rows if r.method == method)
            if n != 1:
                raise ValueError(f"{n} {method} rows calibrate 'acceptance'; mark exactly one")
        return self

    def row(self, role: Role, method: str | None = None) -> PublishedRow:
        """The row that calibrates `role` (for acceptance: of `method`)."""
        return next(
            r for r in self.rows if role in r.calibrates and (method is None or r.method == method)
        )


def load_dovetail1_inputs(name_or_path: str = "dovetail1") -> Dovetail1Inputs:
    """Load the published Dovetail inputs (default: workloads/experiments/dovetail1.yaml)."""
    return load_file(Dovetail1Inputs, resolve("experiment", str(name_or_path)))


@dataclass(frozen=True)
class FittedAcceptance:
    """Top-1 acceptances fitted to the published Omega points, and the M-dependence."""

    shares: tuple[float, ...]
    eagle2_top1: float
    dovetail_top1: float
    dovetail_blocks: int
    gain: BlockGain

    def tree(self, method: str, blocks: int, levels: int) -> TreeAcceptance:
        """The tree acceptance model of a method's drafter (M blocks) with `levels` levels."""
        eagle2 = method.lower().replace("-", "") == "eagle2"
        top1 = self.eagle2_top1 if eagle2 else self.gain.top1(blocks)
        return TreeAcceptance(top1, self.shares, levels)


def fit_acceptance(inputs: Dovetail1Inputs) -> FittedAcceptance:
    """Fit each method's top1 at its `acceptance` row (optimal tree, depth+1 levels)."""
    a = inputs.acceptance
    shares = sibling_shares(
        a.sibling_vector, a.sibling_rejected, a.sibling_vector_width, inputs.width
    )
    e = inputs.row("acceptance", "EAGLE-2")
    d = inputs.row("acceptance", "Dovetail")
    e_top1 = fit_top1(e.gamma, e.omega, shares, e.levels)
    d_top1 = fit_top1(d.gamma, d.omega, shares, d.levels)
    gain = BlockGain(e_top1, d_top1, d.blocks, a.half_gain_blocks)
    return FittedAcceptance(shares, e_top1, d_top1, d.blocks, gain)
