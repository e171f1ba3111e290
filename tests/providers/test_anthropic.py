"""Only complete replies, Anthropic wire format: a stream without its stop reason and
``message_stop`` is incomplete, with the same rule as OpenAI's (see test_openai)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from hermes_core.agent.agent import Agent
from hermes_core.config import Settings, load_settings
from hermes_core.errors import IncompleteResponse
from hermes_core.testing import ANTHROPIC_URL, SSE_HEADERS, anthropic_stream, openai_chat_stream

BACKUP = "https://backup.test/v1"


def cut_anthropic_stream(pieces: tuple[str, ...]) -> bytes:
    events = [e for e in anthropic_stream(pieces).split(b"\n\n") if e]
    kept = [e for e in events if b"message_delta" not in e and b"message_stop" not in e]
    return b"\n\n".join(kept) + b"\n\n"


def settings_for(tmp_path: Path) -> Settings:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return load_settings({
        "home": str(home),
        "llm": {"stream": True, "routing": {"default_model": "claude-sonnet-4", "providers": [
            {"name": "primary", "type": "anthropic", "priority": 1, "models": ["claude-sonnet-4"]},
            {"name": "backup", "type": "openai", "priority": 2, "models": ["claude-sonnet-4"],
             "endpoint": BACKUP}]}},
        "credentials": {"primary": {"keys": [{"key": "sk-ant-primary-SECRET-01"}]},
                        "backup": {"keys": [{"key": "sk-backup-SECRET-0000002"}]}},
        "credential_pool": {"retries_per_provider": 0},
        "skill_utils": {"enabled": False}, "context_engine": {"enabled": False},
    }, env={})


async def _astream(agent: Agent, text: str) -> str:
    return "".join([p async for p in agent.astream(text)])


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_cut_stream_before_the_first_token_fails_over(respx_mock: object, tmp_path: Path,
                                                        mode: str) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=cut_anthropic_stream(()),
                                             headers=SSE_HEADERS))
    used = respx_mock.post(BACKUP + "/chat/completions").mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=openai_chat_stream(("whole",)),
                                             headers=SSE_HEADERS))
    agent = Agent(settings_for(tmp_path), retriever=None, context_engine=None)
    try:
        text = ("".join(agent.stream("hi")) if mode == "stream"
                else asyncio.run(_astream(agent, "hi")))
    finally:
        agent.close()
    assert text == "whole" and used.called  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_cut_stream_after_tokens_raises_incomplete_and_keeps_the_history(
        respx_mock: object, tmp_path: Path, mode: str) -> None:
    respx_mock.post(ANTHROPIC_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=cut_anthropic_stream(("Hello", " wor")),
                                             headers=SSE_HEADERS))
    agent = Agent(settings_for(tmp_path), retriever=None, context_engine=None)
    try:
        with pytest.raises(IncompleteResponse) as ei:
            if mode == "stream":
                "".join(agent.stream("hi"))
            else:
                asyncio.run(_astream(agent, "hi"))
    finally:
        agent.close()
    assert ei.value.partial_text == "Hello wor"
    assert agent.history == []
