"""Only complete replies, OpenAI wire format: a stream closed cleanly without ``finish_reason``
is incomplete. Before the first token it fails over; after tokens the caller gets
IncompleteResponse with the text so far, and the agent's history is not updated."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from hermes_core.agent.agent import Agent
from hermes_core.config import Settings, load_settings
from hermes_core.errors import IncompleteResponse
from hermes_core.testing import ANTHROPIC_URL, SSE_HEADERS, anthropic_stream, openai_chat_stream

PRIMARY = "https://primary.test/v1"
PRIMARY_URL = PRIMARY + "/chat/completions"


def cut_openai_stream(pieces: tuple[str, ...]) -> bytes:
    """The stream as a proxy that closes the connection early leaves it: no finish, no [DONE]."""
    events = [e for e in openai_chat_stream(pieces).split(b"\n\n") if e]
    kept = [e for e in events if b'"finish_reason": "stop"' not in e and b"[DONE]" not in e
            and b'"usage"' not in e]
    return b"\n\n".join(kept) + b"\n\n"


def settings_for(tmp_path: Path) -> Settings:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return load_settings({
        "home": str(home),
        "llm": {"stream": True, "routing": {"default_model": "gpt-4o", "providers": [
            {"name": "primary", "type": "openai", "priority": 1, "models": ["gpt-4o"],
             "endpoint": PRIMARY},
            {"name": "backup", "type": "anthropic", "priority": 2, "models": ["gpt-4o"]}]}},
        "credentials": {"primary": {"keys": [{"key": "sk-primary-SECRET-000001"}]},
                        "backup": {"keys": [{"key": "sk-backup-SECRET-0000002"}]}},
        "credential_pool": {"retries_per_provider": 0},
        "skill_utils": {"enabled": False}, "context_engine": {"enabled": False},
    }, env={})


def backup(respx_mock: object) -> object:
    return respx_mock.post(ANTHROPIC_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=anthropic_stream(("whole",)),
                                             headers=SSE_HEADERS))


async def _astream(agent: Agent, text: str) -> str:
    return "".join([p async for p in agent.astream(text)])


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_cut_stream_before_the_first_token_fails_over(respx_mock: object, tmp_path: Path,
                                                        mode: str) -> None:
    respx_mock.post(PRIMARY_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=cut_openai_stream(()),
                                             headers=SSE_HEADERS))
    used = backup(respx_mock)
    agent = Agent(settings_for(tmp_path), retriever=None, context_engine=None)
    try:
        text = ("".join(agent.stream("hi")) if mode == "stream"
                else asyncio.run(_astream(agent, "hi")))
    finally:
        agent.close()
    assert text == "whole" and used.called  # type: ignore[attr-defined]
    assert [m.content for m in agent.history] == ["hi", "whole"]


@pytest.mark.parametrize("mode", ["stream", "astream"])
def test_a_cut_stream_after_tokens_raises_incomplete_and_keeps_the_history(
        respx_mock: object, tmp_path: Path, mode: str) -> None:
    respx_mock.post(PRIMARY_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=cut_openai_stream(("Hello", " wor")),
                                             headers=SSE_HEADERS))
    backup(respx_mock)
    agent = Agent(settings_for(tmp_path), retriever=None, context_engine=None)
    shown: list[str] = []
    try:
        with pytest.raises(IncompleteResponse) as ei:
            if mode == "stream":
                for piece in agent.stream("hi"):
                    shown.append(piece)
            else:
                asyncio.run(_astream(agent, "hi"))
    finally:
        agent.close()
    assert ei.value.partial_text == "Hello wor"
    assert agent.history == [] and agent.last_reply is None
    if mode == "stream":
        assert "".join(shown) == "Hello wor"


def test_a_whole_stream_is_still_a_reply(respx_mock: object, tmp_path: Path) -> None:
    respx_mock.post(PRIMARY_URL).mock(  # type: ignore[attr-defined]
        side_effect=lambda r: httpx.Response(200, content=openai_chat_stream(("Hello", "!")),
                                             headers=SSE_HEADERS))
    agent = Agent(settings_for(tmp_path), retriever=None, context_engine=None)
    try:
        assert "".join(agent.stream("hi")) == "Hello!"
    finally:
        agent.close()
    assert json.loads(json.dumps(agent.history[-1].content)) == "Hello!"
