"""Omega(gamma): expected tokens per iteration of a dynamic draft tree with gamma candidates.

Positional model (docs/method.md): the rank-1 child of an accepted node is accepted with
probability `top1`; if it is rejected, the rank-r sibling (r >= 2) is the accepted one with
probability share_r (Sequoia's published sibling profile, renormalised). A tree's expected
accepted length is 1 + sum over its nodes of the path probability, and taking the gamma nodes
of highest path probability (at most `max_levels` deep) is the optimal tree, which is what a
dynamic tree (EAGLE-2's rerank) approximates. One parameter per drafter, `top1`, is fitted to
one published (gamma, Omega) point; the other published points check it.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: top1 is kept below this so that a chain's Omega stays finite.
MAX_TOP1 = 0.999


def sibling_shares(
    vector: Sequence[float], rejected: float, vector_width: int, width: int
) -> tuple[float, ...]:
    """Conditional P(rank r accepted | rank 1 rejected) for r = 2..width, from a Sequoia vector.

    `vector` lists P(rank-r sibling is the accepted one) for the first ranks; ranks past the
    list up to `vector_width` share the unlisted mass (1 - rejected - sum) evenly. The profile
    is sorted descending (ranks are ordered by draft probability; inversions are noise).
    """
    listed = sorted((float(v) for v in vector), reverse=True)
    tail = max(0.0, 1.0 - rejected - sum(listed)) / max(1, vector_width - len(listed))
    full = listed + [tail] * max(0, vector_width - len(listed))
    return tuple(s / (1.0 - full[0]) for s in full[1:width])


@dataclass(frozen=True)
class TreeAcceptance:
    """Positional acceptance of a dynamic tree (see the module docstring)."""

    top1: float
    shares: tuple[float, ...]
    max_levels: int

    def rank_probabilities(self) -> list[float]:
        """P(rank-r child accepted | parent accepted), r = 1..width."""
        return [self.top1] + [(1.0 - self.top1) * s for s in self.shares]

    def curve(self, max_gamma: int) -> tuple[np.ndarray, np.ndarray]:
        """(Omega, levels) of the optimal tree for gamma = 0..max_gamma candidates."""
        ps = self.rank_probabilities()
        omega = np.ones(max_gamma + 1)
        levels = np.zeros(max_gamma + 1, dtype=int)
        # heap items: (-path probability, depth, rank index, parent path probability)
        heap: list[tuple[float, int, int, float]] = [(-ps[0], 1, 0, 1.0)]
        total, deepest = 1.0, 0
        for g in range(1, max_gamma + 1):
            if not heap:
                omega[g:], levels[g:] = total, deepest
                break
            neg, depth, rank, parent = heapq.heappop(heap)
            total -= neg
            deepest = max(deepest, depth)
            omega[g], levels[g] = total, deepest
            if rank + 1 < len(ps):
                heapq.heappush(heap, (-parent * ps[rank + 1], depth, rank + 1, parent))
            if depth < self.max_levels:
                heapq.heappush(heap, (neg * ps[0], depth + 1, 0, -neg))
        return omega, levels

    def omega(self, gamma: int) -> float:
        """Expected accepted tokens per iteration (bonus token included) with gamma candidates."""
        return float(self.curve(gamma)[0][gamma])

    def levels(self, gamma: int) -> int:
        """Depth of the optimal gamma-node tree: draft passes needed to build it."""
        return int(self.curve(gamma)[1][gamma])


def fit_top1(
    gamma: int, omega: float, shares: tuple[float, ...], max_levels: int, tol: float = 1e-10
) -> float:
    """The top1 at which the optimal gamma-node tree accepts `omega` tokens (bisection)."""
    lo, hi = 0.0, MAX_TOP1
    if TreeAcceptance(hi, shares, max_levels).omega(gamma) < omega:
        raise ValueError(
            f"Omega = {omega} at gamma = {gamma} needs top1 > {MAX_TOP1} with {max_levels} levels"
        )
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if TreeAcceptance(mid, shares, max_levels).omega(gamma) < omega:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@dataclass(frozen=True)
class BlockGain:
    """top1 as a function of the drafter's extra blocks M (an assumption, see docs).

    top1(M) = base + (ref - base)·g(M)/g(ref_blocks), g(M) = 1 - 2^(-M/half_blocks):
    EAGLE-2's fitted top1 at M = 0, Dovetail's at M = ref_blocks, diminishing returns with
    half of the M -> infinity gain reached after `half_blocks` blocks.
    """

    base: float
    ref: float
    ref_blocks: int = 4
    half_blocks: float = 2.0

    def top1(self, blocks: int) -> float:
        """Fitted top-1 acceptance of a drafter with `blocks` extra blocks (capped below 1)."""

        def g(m: float) -> float:
            """The gain shape 1 - 2^(-m/half_blocks): 0 at m = 0, half at half_blocks."""
            return 1.0 - 2.0 ** (-m / self.half_blocks)

        value = self.base + (self.ref - self.base) * g(blocks) / g(self.ref_blocks)
        return float(min(MAX_TOP1, max(0.0, value)))
