"""The public skills collection kept as test data (see tests/data/skills/anthropics/SOURCE.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

ANTHROPIC_SKILLS = Path(__file__).resolve().parent.parent / "data" / "skills" / "anthropics"


@pytest.fixture
def anthropic_skills() -> Path:
    return ANTHROPIC_SKILLS


def write(folder: Path, rel: str, text: str) -> Path:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
