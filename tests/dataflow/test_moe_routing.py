"""The routing model (dataflow/routing.py) against the chapter's tables (docs/moe-sd.md,
computed there independently) and a Monte-Carlo draw; routing traces validated."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from fpgasim.config import load_model
from fpgasim.dataflow.routing import (
    expected_distinct,
    read_trace,
    touched_per_layer,
    zipf_popularity,
)
from fpgasim.errors import ConfigError

HF = Path(__file__).resolve().parents[2] / "workloads" / "models" / "hf"
N = (1, 2, 4, 8, 16, 32, 64, 128)


@pytest.mark.parametrize(("e", "k", "s", "rho", "table"), [
    (8, 2, 0, 0, (2.00, 3.50, 5.47, 7.20, 7.92, 8.00, 8.00, 8.00)),
    (128, 8, 0, 0, (8.00, 15.50, 29.12, 51.62, 82.42, 111.77, 125.94, 127.97)),
    (64, 8, 1.0, 0, (8.00, 12.80, 20.07, 30.11, 42.17, 53.70, 61.22, 63.73)),
    (128, 8, 1.5, 0, (8.00, 11.74, 17.48, 25.94, 37.89, 53.88, 73.60, 94.95)),
    (60, 4, 0, 0.35, (4.00, 6.43, 10.97, 18.93, 31.19, 45.82, 56.56, 59.80)),
])
def test_expected_distinct_matches_the_chapter(e, k, s, rho, table) -> None:
    p = zipf_popularity(e, k, s)
    assert math.isclose(sum(p), k) and max(p) <= 1
    got = [expected_distinct(p, n, 1, rho) for n in N]
    assert got == pytest.approx(table, abs=0.006)


def test_uniform_is_the_closed_form_and_batch_multiplies_tokens() -> None:
    p = zipf_popularity(128, 8, 0)
    for x, b in ((16, 1), (4, 3), (1, 8)):
        assert expected_distinct(p, x, b) == pytest.approx(128 * (1 - (1 - 8 / 128) ** (x * b)))


def test_monte_carlo_uniform_routing() -> None:
    rng = np.random.default_rng(7)
    e, k, n, draws = 64, 8, 16, 3000
    hits = np.zeros(draws)
    for d in range(draws):
        touched = set()
        for _ in range(n):
            touched.update(rng.choice(e, k, replace=False).tolist())
        hits[d] = len(touched)
    assert hits.mean() == pytest.approx(expected_distinct(zipf_popularity(e, k, 0), n), rel=0.01)


def test_whole_experts_per_layer_sum_to_the_expectation() -> None:
    m = load_model(str(HF / "Qwen3-30B-A3B.json"))
    for x in (1, 3, 16):
        per = touched_per_layer(m, x)
        d = 128 * (1 - (1 - 8 / 128) ** x)
        assert len(per) == m.layers and all(abs(t - d) < 1 for t in per)
        assert sum(per) == math.floor(m.layers * d + 0.5)
    assert set(touched_per_layer(m, 1)) == {8}  # one token: exactly k experts


def test_routing_trace(tmp_path: Path) -> None:
    m = load_model(str(HF / "Mixtral-8x7B-v0.1.json"))
    good = tmp_path / "t.csv"
    good.write_text("layer,expert,count\n" + "".join(f"-1,{e},{10 + e}\n" for e in range(8)))
    rows = read_trace(good, m.moe, m.layers)
    assert rows == (tuple(10 + e for e in range(8)),)
    traced = m.model_copy(update={"moe": m.moe.model_copy(update={"expert_counts": rows})})
    p = [c / (sum(rows[0]) / 2) for c in rows[0]]
    assert touched_per_layer(traced, 4)[0] in (math.floor(expected_distinct(tuple(p), 4)),
                                               math.ceil(expected_distinct(tuple(p), 4)))
    for text, field in (("layer,expert,count\n-1,8,1\n", "expert"),
                        ("layer,expert,count\n-1,0,5\n-1,1,1\n", "count"),
                        ("layer,expert\n-1,0\n", "count"),
                        ("layer,expert,count\n0,0,3\n0,1,3\n", "layer")):
        bad = tmp_path / "bad.csv"
        bad.write_text(text)
        with pytest.raises(ConfigError) as err:
            read_trace(bad, m.moe, m.layers)
        assert err.value.field == field and str(bad) in str(err.value)
