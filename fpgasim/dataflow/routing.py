"""How many experts a verify pass touches: the routing model of a mixture-of-experts target
(docs/moe-sd.md, "How many experts a verify pass touches"; the one owner of that count).

A token's top-k set includes expert e with probability p_e (sum over e = k). Uniform
routing (the default) is p_e = k/E; a skewed popularity is a capped Zipf law of exponent
`routing_skew` (an assumption, docs/moe-sd.md § Skewed popularity, sensitivity shown
there), or a routing trace's per-layer expert counts (p_e = c_e / T, T = sum c / k). Tree
tokens of one request copy their parent's set with probability rho
(`sibling_correlation`, an assumption: default 0, range [0, 0.35] from Mixtral's Table 5,
docs/moe-sd.md § Tree tokens are not independent). With x tokens per request and B
requests:

    E[D] = sum_e 1 - ((1 - p_e) (1 - (1 - rho) p_e)^(x - 1))^B

which is E (1 - (1 - k/E)^(xB)) for uniform routing and rho = 0.
"""

from __future__ import annotations

import math
from pathlib import Path

from fpgasim.config.schema import MoeBlock, TargetModel
from fpgasim.datafiles import read_table
from fpgasim.errors import ConfigError, InputError
from fpgasim.lists import split_items


def zipf_popularity(experts: int, per_token: int, skew: float) -> tuple[float, ...]:
    """p_e of the capped Zipf law p_e = min(1, c e^-s), ranks e = 1..E, c set so that the
    p_e sum to k (s = 0: uniform k/E). The capped experts are the first ranks; c solves
    the rest exactly."""
    if skew == 0:
        return (per_token / experts,) * experts
    weights = [(e + 1) ** -skew for e in range(experts)]
    capped, c = 0, 0.0
    while capped < per_token:
        c = (per_token - capped) / sum(weights[capped:])
        if c * weights[capped] <= 1:
            break
        capped += 1
    else:
        c = 0.0
    return tuple([1.0] * capped + [min(1.0, c * w) for w in weights[capped:]])


def expected_distinct(popularity: tuple[float, ...], tokens: int, requests: int = 1,
                      rho: float = 0.0) -> float:
    """E[D]: experts of one layer touched by `requests` trees of `tokens` tokens each (the
    module docstring's closed form)."""
    if tokens < 1 or requests < 1:
        raise ValueError(f"tokens = {tokens}, requests = {requests}: each >= 1")
    return sum(1 - ((1 - p) * (1 - (1 - rho) * p) ** (tokens - 1)) ** requests
               for p in popularity)


def layer_popularity(moe: MoeBlock, layer: int) -> tuple[float, ...]:
    """p_e of one MoE layer: the trace's counts when the block has them (one row for every
    layer, or one per layer), else the capped Zipf law of `routing_skew`."""
    counts = moe.expert_counts
    if counts:
        row = counts[layer] if len(counts) > 1 else counts[0]
        tokens = sum(row) / moe.experts_per_token
        return tuple(c / tokens for c in row)
    return zipf_popularity(moe.experts, moe.experts_per_token, moe.routing_skew)


def experts_touched(model: TargetModel, layer: int, tokens: int, requests: int = 1) -> float:
    """E[D] of the model's MoE layer `layer` for a pass of `tokens` tokens per request."""
    moe = model.moe
    return expected_distinct(layer_popularity(moe, layer), tokens, requests,
                             moe.sibling_correlation)


def touched_per_layer(model: TargetModel, tokens: int, requests: int = 1) -> tuple[int, ...]:
    """Whole experts each MoE layer streams, their sum over the layers equal to the sum of
    the expectations rounded to the nearest whole expert: layer l streams
    round(S_l) - round(S_(l-1)) experts, S_l the expectations' running sum (each layer
    within one expert of its own expectation; a pass cannot stream a fraction of an
    expert, and the total is what the expectation costs, deterministically)."""
    out, before, running = [], 0, 0.0
    for layer in range(model.layers):
        running += experts_touched(model, layer, tokens, requests)
        upto = math.floor(running + 0.5)
        out.append(upto - before)
        before = upto
    return tuple(out)


def read_trace(path: Path, moe: MoeBlock, layers: int) -> tuple[tuple[int, ...], ...]:
    """Per-layer expert counts of a routing trace (CSV or Parquet: columns layer, expert,
    count; one layer -1 row set for every layer, or layers 0..N-1): validated, one row of
    E counts per layer. docs/formats.md, "Routing traces"."""
    frame = read_table(path, "routing trace (layer, expert, count)")
    source = str(path)
    missing = [c for c in ("layer", "expert", "count") if c not in frame.columns]
    if missing:
        raise ConfigError(source, missing[0], "missing", "columns layer, expert, count")
    rows: dict[int, list[int]] = {}
    for layer, expert, count in zip(frame["layer"], frame["expert"], frame["count"],
                                    strict=True):
        for name, value, low, high in (("layer", layer, -1, layers - 1),
                                       ("expert", expert, 0, moe.experts - 1),
                                       ("count", count, 0, 1 << 60)):
            if (isinstance(value, bool) or not float(value).is_integer()
                    or not low <= value <= high):
                raise ConfigError(source, name, value, f"a whole number in [{low}, {high}]")
        row = rows.setdefault(int(layer), [0] * moe.experts)
        row[int(expert)] += int(count)
    if -1 in rows and len(rows) > 1:
        raise ConfigError(source, "layer", sorted(rows)[:3], "-1 alone (every layer) or "
                          f"0..{layers - 1}")
    if -1 not in rows and sorted(rows) != list(range(layers)):
        absent = next(i for i in range(layers) if i not in rows)
        raise ConfigError(source, "layer", f"{absent} absent", f"every layer 0..{layers - 1}")
    out = tuple(tuple(rows[k]) for k in sorted(rows))
    for k, row in zip(sorted(rows), out, strict=True):
        tokens = sum(row) / moe.experts_per_token
        if tokens <= 0 or max(row) > tokens:
            raise ConfigError(source, "count", f"layer {k}: max {max(row)}, sum {sum(row)}",
                              f"a sum > 0 and each count at most sum / k = {tokens:g} (a "
                              "token routes to an expert once)")
    return out


def routing_label(moe: MoeBlock) -> str:
    """How a result row's experts were counted: the popularity law and rho."""
    law = ("trace" if moe.expert_counts else
           "uniform" if moe.routing_skew == 0 else f"zipf s={moe.routing_skew:g}")
    return f"{law}, rho={moe.sibling_correlation:g}"


#: `--routing`'s keys -> (MoeBlock field, allowed range text)
_ROUTING_KEYS = {"skew": "routing_skew", "rho": "sibling_correlation", "trace": "expert_counts"}


def with_routing(model: TargetModel, spec: str | None) -> TargetModel:
    """The model with `--routing skew=S,rho=R,trace=FILE` applied to its MoE block (each key
    optional; None or empty: unchanged). A trace replaces the skew law; skew and trace
    together are refused."""
    if not spec:
        return model
    if model.moe is None:
        raise InputError("routing", spec, "only with a mixture-of-experts model")
    update: dict = {}
    for item in split_items(spec, "routing", "skew=0.6,rho=0.1"):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in _ROUTING_KEYS or key in {k for k in update}:
            raise InputError("routing", item, "skew=S (0 to 4), rho=R (0 to < 1) or "
                             "trace=FILE (layer, expert, count), each at most once")
        update[key] = value.strip()
    if "skew" in update and "trace" in update:
        raise InputError("routing", spec, "skew or trace, not both")
    fields: dict = {}
    for key, low, high in (("skew", 0.0, 4.0), ("rho", 0.0, 1.0)):
        if key in update:
            try:
                number = float(update[key])
            except ValueError:
                number = math.nan
            if not (low <= number <= high) or (key == "rho" and number == high):
                raise InputError("routing", f"{key}={update[key]}",
                                 f"{key} in [{low:g}, {high:g}{')' if key == 'rho' else ']'}")
            fields[_ROUTING_KEYS[key]] = number
    if "trace" in update:
        fields["expert_counts"] = read_trace(Path(update["trace"]), model.moe, model.layers)
        fields["routing_skew"] = 0.0
    moe = model.moe.model_copy(update=fields)
    return model.model_copy(update={"moe": moe})
