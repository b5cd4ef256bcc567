"""Shared fixtures: where the real logs are."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
SHARED = ROOT.parent / "shared"
SEEDS = SHARED / "seeds"
REAL_LOGS = SHARED / "real_logs"


def seed(prefix: str) -> Path:
    """A seed log by its number prefix ('002'); skips cleanly only if ../shared is absent."""
    matches = sorted(SEEDS.glob(f"{prefix}_*"))
    if not matches:
        pytest.skip("../shared/seeds is not beside the project")
    return matches[0]


@pytest.fixture
def samples() -> Path:
    return SAMPLES
