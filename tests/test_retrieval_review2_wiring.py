"""Review round 2: a triggers or synonyms file that names no known skill is warned about."""

from __future__ import annotations

import pytest

from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.types import Skill

SKILLS = [Skill("weather", "Get the weather forecast"), Skill("email", "Send an email")]


def test_synonyms_file_naming_an_unknown_skill_is_warned_like_triggers(
        caplog: pytest.LogCaptureFixture) -> None:
    import logging
    r = SkillRetriever(skills=SKILLS, synonyms={"wether": ["is it raining"]},
                       triggers={"emial": ["send mail"]})
    with caplog.at_level(logging.WARNING, logger="hermes_core.retrieval.retriever"):
        r.refresh()
    assert "triggers file names unknown skill(s): emial" in caplog.text
    assert "synonyms file names unknown skill(s): wether" in caplog.text
