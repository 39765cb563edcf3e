"""Shared fixtures: the reference data folder beside the repository (skips when absent)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
AAT_DIR = SHARED / "reference" / "aat"


@pytest.fixture
def aat_dir() -> Path:
    """../shared/reference/aat, or skip: the measured AAT tables live beside the repo only."""
    if not AAT_DIR.is_dir():
        pytest.skip("../shared/reference/aat is absent (measured AAT tables are not shipped)")
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
