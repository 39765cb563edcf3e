"""Shared fixtures: the reference data folder beside the repository (skips when absent)."""

from __future__ import annotations

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
