"""Explore over clusters (docs/multi-fpga.md, "Exploring cluster sizes"): the fronts of
tokens/s against cards and watts, and the cheapest variant meeting a tokens/s target."""

from __future__ import annotations

import pandas as pd

from fpgasim.studies.explore import cheapest_meeting, front_flags, target_lines


def _summary() -> pd.DataFrame:
    rows = [  # (cards, parallel, rate, watts, fits)
        (1, "tp", 70.0, 60.0, True),
        (2, "tp", 140.0, 120.0, True),
        (2, "pp", 70.0, 100.0, True),
        (4, "tp", 260.0, 230.0, True),
        (4, "pp", 300.0, 180.0, False),  # faster and thriftier, but does not fit
        (8, "tp", 470.0, 450.0, True),
    ]
    return pd.DataFrame([{
        "board": f"b cards={c} parallel={p}", "algorithm": "longspec", "batch": 1,
        "context": 1024, "changes": f"cluster.cards={c}; cluster.parallel={p}",
        "cards": c, "dsps_used": 6144, "cluster_dsps": 6144 * c, "tokens_per_s": r,
        "batch_tokens_per_s": r, "cluster_w": w, "fits": f, "decision": "use AD",
    } for c, p, r, w, f in rows])


def test_fronts_keep_only_undominated_fitting_variants() -> None:
    s = _summary()
    assert front_flags(s, "cards") == [True, True, False, True, False, True]
    assert front_flags(s, "cluster_w") == [True, True, False, True, False, True]
    cheaper = s.assign(cluster_w=[60.0, 120.0, 50.0, 230.0, 180.0, 450.0])
    # 2 x pp now draws less than one card for the same rate: it dominates the one card
    assert front_flags(cheaper, "cluster_w") == [False, True, True, True, False, True]


def test_cheapest_meeting_a_target_is_fewest_cards_then_dsps() -> None:
    s = _summary()
    best = cheapest_meeting(s, 200.0)
    assert list(best["board"]) == ["b cards=4 parallel=tp"]  # 4 x pp is faster but unfit
    assert list(cheapest_meeting(s, 70.0)["board"]) == ["b cards=1 parallel=tp"]
    line, = target_lines(s, 200.0)
    assert "cheapest meeting 200 tok/s: cluster.cards=4; cluster.parallel=tp (4 cards, " \
        "24,576 DSPs, 260 tok/s, 230 W" in line
    line, = target_lines(s, 1000.0)
    assert "no fitting variant reaches 1000 tok/s (the fastest fitting: cluster.cards=8" in line
