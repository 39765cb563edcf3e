"""Acceptance stated three ways, as distinct named inputs with conversions (docs/trees.md).

- **positional** p(d, r) (`PositionalModel`): the probability that the rank-r child at
  depth d is the token the target accepts, given that its parent was accepted; siblings
  are exclusive, so a row sums to at most 1.
- **i.i.d. rate** alpha (`iid_model`): every drafted candidate, tried in rank order, is
  the target's token with probability alpha, independently of depth and of the others:
  p(d, r) = alpha (1 - alpha)^r. On a chain of n draft tokens the expected AAT is
  (1 - alpha^(n+1)) / (1 - alpha) (Leviathan et al., 2023).
- **marginal per-token rate** beta of a tree (`marginal_rate`): the fraction of its x - 1
  draft tokens the target accepts per iteration, beta = (AAT - 1) / (x - 1). It describes
  a (model, tree) pair, not a model: the same model gives different beta on different trees.

The expected AAT always counts the bonus token (the target's own next token, produced
whatever was accepted) exactly once: AAT = 1 + sum over draft nodes of P(node accepted).
So AAT(x = 1) = 1, a chain whose every token is accepted gives x, and beta excludes it.
"""

from __future__ import annotations

from fpgasim.dataflow.token_tree import TokenTree
from fpgasim.errors import InputError
from fpgasim.tree.positional import PositionalModel


def brentq(*args, **kwargs) -> float:
    """scipy's root finder, imported on first use (scipy.optimize costs about 0.3 s and the
    CLI imports this module at start-up)."""
    from scipy.optimize import brentq as root

    return float(root(*args, **kwargs))


#: Ranks an i.i.d. model lists explicitly (the drafter's top candidates).
IID_RANKS = 10


def _check_rate(value: float, argument: str) -> float:
    v = float(value)
    if not 0.0 < v < 1.0:
        raise InputError(argument, value, "a rate strictly between 0 and 1")
    return v


def iid_model(alpha: float, ranks: int = IID_RANKS) -> PositionalModel:
    """The positional model of an i.i.d. rate: p(d, r) = alpha (1 - alpha)^r, every depth."""
    a = _check_rate(alpha, "iid_rate")
    if not 1 <= ranks <= 4096:
        raise InputError("ranks", ranks, "between 1 and 4096")
    return PositionalModel.from_vector([a * (1.0 - a) ** r for r in range(ranks)], "iid_rate")


def chain_aat(alpha: float, draft_tokens: int) -> float:
    """Expected AAT of a chain of `draft_tokens` under i.i.d. rate alpha, bonus included."""
    a = _check_rate(alpha, "iid_rate")
    return (1.0 - a ** (draft_tokens + 1)) / (1.0 - a)


def iid_from_chain_aat(aat: float, draft_tokens: int) -> float:
    """The i.i.d. rate whose chain of `draft_tokens` has expected AAT `aat`."""
    if draft_tokens < 1 or not 1.0 < aat < draft_tokens + 1:
        raise InputError(
            "aat", aat, f"an AAT between 1 and {draft_tokens + 1} (exclusive) for this chain"
        )
    return float(brentq(lambda a: chain_aat(a, draft_tokens) - aat, 1e-12, 1 - 1e-12))


def marginal_rate(model: PositionalModel, tree: TokenTree) -> float:
    """Fraction of the tree's draft tokens accepted per iteration: (AAT - 1) / (x - 1)."""
    if tree.size < 2:
        raise InputError("tree", tree.shape_str(), "a tree with at least one draft token")
    return (model.expected_aat(tree) - 1.0) / (tree.size - 1)


def aat_from_marginal(beta: float, verify_len: int) -> float:
    """Expected AAT from a marginal per-token rate on a tree of x tokens: 1 + beta (x - 1)."""
    if not 0.0 <= beta <= 1.0:
        raise InputError("marginal_rate", beta, "a fraction between 0 and 1")
    if verify_len < 1:
        raise InputError("verify_len", verify_len, "at least 1")
    return 1.0 + beta * (verify_len - 1)


def iid_from_marginal(beta: float, tree: TokenTree, ranks: int = IID_RANKS) -> float:
    """The i.i.d. rate under which `tree` has marginal per-token rate beta."""
    b = _check_rate(beta, "marginal_rate")
    lo, hi = 1e-9, 1 - 1e-9

    def gap(a: float) -> float:
        """Marginal rate of `tree` under the i.i.d. rate `a`, minus beta: brentq's root."""
        return marginal_rate(iid_model(a, ranks), tree) - b

    if gap(lo) > 0 or gap(hi) < 0:
        raise InputError(
            "marginal_rate", beta, "a rate an i.i.d. model reaches on the reference tree"
        )
    return float(brentq(gap, lo, hi, xtol=1e-12))


def scaled_to_aat(model: PositionalModel, tree: TokenTree, aat: float) -> PositionalModel:
    """The model with every p scaled by one factor so that `tree` has expected AAT `aat`."""
    top = model.scaled(1e9).expected_aat(tree)  # capped at row sums of 1
    if not 1.0 < aat <= top:
        raise InputError(
            "aat", aat, f"an AAT above 1 and at most {top:.4f} on the reference tree"
        )
    cap = 1.0 / float(model.matrix.sum(axis=1).max() or 1.0)
    factor = brentq(lambda f: model.scaled(f).expected_aat(tree) - aat, 0.0, cap, xtol=1e-12)
    return model.scaled(factor)
