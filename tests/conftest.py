"""Shared fixtures: the measured AAT tables shipped in workloads/aat, the repository root."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
AAT_DIR = REPO / "workloads" / "aat"


@pytest.fixture
def aat_dir() -> Path:
    """workloads/aat: the study's measured AAT tables, shipped with the repository."""
    assert AAT_DIR.is_dir(), f"{AAT_DIR} is missing: the measured AAT tables ship with fpgasim"
    return AAT_DIR


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture(autouse=True, scope="session")
def _private_result_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Sweeps run by tests use a throw-away result cache, never the user's ~/.cache."""
    old = os.environ.get("FPGASIM_CACHE_DIR")
    os.environ["FPGASIM_CACHE_DIR"] = str(tmp_path_factory.mktemp("fpgasim-cache"))
    yield
    if old is None:
        os.environ.pop("FPGASIM_CACHE_DIR", None)
    else:
        os.environ["FPGASIM_CACHE_DIR"] = old
