"""``/route`` after a failed turn describes that turn, not the turn before it (it used to list the
previous turn's "ok" attempt under the failed turn's decision)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from hermes_core.agent.agent import Agent
from hermes_core.cli.repl import Repl
from hermes_core.config import load_settings
from hermes_core.errors import BadRequest, ServerError
from hermes_core.testing import FakeProvider


def _routes(tmp_path: Path, failure: Exception) -> tuple[str, str]:
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False},
                              "credential_pool": {"backoff_base_s": 0.001, "backoff_max_s": 0.001}})
    fake = FakeProvider(["first answer"], default=None)
    fake.add(*[failure] * 10)
    agent = Agent(settings, provider=fake)
    out = io.StringIO()
    Repl(agent, stdin=io.StringIO("first\n/route\nsecond\n/route\n/exit\n"), stdout=out,
         stream=False).run()
    text = out.getvalue()
    assert "error: " in text
    first, second = text.split("model: ")[1:3]
    return first, second


@pytest.mark.parametrize("failure", [ServerError("upstream broke", status_code=500),
                                     BadRequest("bad request body", status_code=400)])
def test_route_after_a_failed_turn_describes_the_failed_turn(tmp_path: Path, failure):
    first, second = _routes(tmp_path, failure)
    assert "fake/gpt-4o: ok -> done" in first
    assert ": ok -> done" not in second, second
    if isinstance(failure, ServerError):   # the call loop's attempts, from AllProvidersFailed
        assert "attempt fake/gpt-4o: 500 -> failover" in second, second
    else:                                  # raised at once: the error itself
        assert "failed: bad request body" in second, second


def test_prompt_after_a_failed_turn_says_it_shows_the_turn_before(tmp_path: Path):
    settings = load_settings({"home": str(tmp_path), "skill_utils": {"enabled": False},
                              "context_engine": {"enabled": False}})
    fake = FakeProvider(["first answer", BadRequest("bad request body", status_code=400)])
    agent = Agent(settings, provider=fake)
    out = io.StringIO()
    Repl(agent, stdin=io.StringIO("first\nsecond\n/prompt\n/exit\n"), stdout=out,
         stream=False).run()
    shown = out.getvalue().split("bad request body", 1)[1]
    assert "the last turn failed" in shown and '"first"' in shown
