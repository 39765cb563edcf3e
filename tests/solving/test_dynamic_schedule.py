"""Dynamic schedule: ranges are contiguous, cover every context once, merge equal neighbours."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fpgasim.solving.dynamic_schedule import (
    SCHEDULE_COLUMNS,
    boundaries,
    build_schedule,
    lookup,
    schedule_yaml,
)


def summary(contexts, xs, decisions=None) -> pd.DataFrame:
    decisions = decisions or ["use SD"] * len(contexts)
    return pd.DataFrame(
        {
            "context": contexts,
            "best_verify_len": xs,
            "best_tree": [f"{x - 1}" for x in xs],
            "best_speedup": [1.5 + 0.01 * i for i in range(len(xs))],
            "decision": decisions,
        }
    )


def check_continuous(schedule: pd.DataFrame) -> None:
    rows = schedule.to_dict("records")
    assert rows[0]["context_from"] == 1
    assert pd.isna(rows[-1]["context_to"])
    for prev, nxt in zip(rows, rows[1:], strict=False):
        assert prev["context_to"] == nxt["context_from"]  # no gap, no overlap
        assert prev["context_from"] < prev["context_to"]
        assert (prev["verify_len"], prev["tree"]) != (nxt["verify_len"], nxt["tree"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 200_000), min_size=1, max_size=12, unique=True),
    st.data(),
)
def test_schedule_is_continuous_and_solved_contexts_map_to_their_x(contexts, data) -> None:
    contexts = sorted(contexts)
    xs = data.draw(st.lists(st.integers(2, 6), min_size=len(contexts), max_size=len(contexts)))
    schedule = build_schedule(summary(contexts, xs))
    assert list(schedule.columns) == SCHEDULE_COLUMNS
    check_continuous(schedule)
    for c, x in zip(contexts, xs, strict=True):
        assert lookup(schedule, c)["verify_len"] == x
    solved = [int(c) for r in schedule["solved_contexts"] for c in r.split(",")]
    assert solved == contexts


def test_boundaries_are_geometric_midpoints() -> None:
    assert boundaries([128, 512, 2048]) == [1, 256, 1024]
    assert boundaries([1, 2]) == [1, 2]


def test_merge_and_ad_ranges() -> None:
    s = summary([128, 512, 2048, 8192], [13, 13, 16, 16], ["use AD", "use SD", "use SD", "use SD"])
    schedule = build_schedule(s)
    assert schedule["verify_len"].tolist() == [1, 13, 16]
    assert schedule["tree"].tolist() == ["", "12", "15"]
    assert schedule["solved_contexts"].tolist() == ["128", "512", "2048,8192"]
    assert schedule.loc[2, "speedup_min"] == pytest.approx(1.52)
    assert schedule.loc[2, "speedup_max"] == pytest.approx(1.53)
    check_continuous(schedule)
    with pytest.raises(KeyError):
        lookup(schedule, 0)
    with pytest.raises(ValueError, match="one row per context"):
        build_schedule(summary([128, 128], [3, 4]))


def test_yaml_round_trip() -> None:
    schedule = build_schedule(summary([128, 4096], [13, 17]))
    text = schedule_yaml(schedule, {"board": "v80", "tasks": ["gov_report"]})
    doc = yaml.safe_load(text)
    assert doc["board"] == "v80"
    assert doc["ranges"][0] == {
        "context_from": 1,
        "context_to": 724,
        "verify_len": 13,
        "tree": "12",
        "decision": "use SD",
        "solved_contexts": [128],
        "speedup_min": 1.5,
        "speedup_max": 1.5,
    }
    assert doc["ranges"][1]["context_to"] is None
