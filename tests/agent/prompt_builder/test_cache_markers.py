"""Tests of ``hermes_core/agent/prompt_builder.py``: the cache markers a build plans.

Anthropic's system marker and breakpoints, none below the model's minimum or with caching off,
and OpenAI's cache key from the prefix.
"""

from __future__ import annotations

from pathlib import Path

from hermes_core.config import Settings
from hermes_core.types import Message
from tests.agent.prompt_builder.conftest import builder, conversation, write


def big_home(marked_home: Path, tokens: int) -> None:
    write(marked_home / "SOUL.md", "Be precise and kind. " * (tokens // 5 + 1))


def test_anthropic_system_marker_and_breakpoints(marked_home: Path, project: Path) -> None:
    big_home(marked_home, 1500)
    b = builder(marked_home, project)
    hist = conversation(4)
    p = b.build("latest", hist, model="claude-sonnet-4-5", provider_kind="anthropic")
    assert p.cache.system is True
    # before each of the last two user messages: the previous turn's end and this turn's start
    assert p.cache.message_indices == (5, 7)
    assert len(p.messages) - 1 not in p.cache.message_indices
    assert int(p.cache.system) + len(p.cache.message_indices) <= 4
    assert p.cache.ttl == "5m"
    assert p.cache.prompt_cache_key == "hermes-" + p.prefix_sha256[:24]


def test_breakpoints_follow_tool_turns(marked_home: Path, project: Path) -> None:
    big_home(marked_home, 1500)
    from hermes_core.types import ToolCall

    hist = [Message("user", "a"), Message("assistant", "", tool_calls=(ToolCall("t1", "f"),)),
            Message("tool", "result", tool_call_id="t1"), Message("assistant", "done"),
            Message("user", "b"), Message("assistant", "ok")]
    settings = Settings(source=None).with_overrides(**{"prompt.message_breakpoints": 3})
    p = builder(marked_home, project, settings=settings).build(
        "c", hist, model="claude-opus-4-1", provider_kind="anthropic")
    assert p.cache.message_indices == (3, 5)


def test_below_model_minimum_gets_no_marker(marked_home: Path, project: Path) -> None:
    big_home(marked_home, 2500)
    b = builder(marked_home, project)
    sonnet = b.build("x", model="claude-sonnet-4-5", provider_kind="anthropic")
    haiku = b.build("x", model="claude-haiku-4-5", provider_kind="anthropic")
    assert sonnet.tokens["system"] < 4096
    assert sonnet.cache.system is True and haiku.cache.system is False
    assert sonnet.system == haiku.system


def test_small_prompt_no_marker(marked_home: Path, project: Path) -> None:
    p = builder(marked_home, project).build("x", conversation(2), model="claude-sonnet-4-5",
                                     provider_kind="anthropic")
    assert p.cache.system is False and p.cache.message_indices == ()


def test_caching_off_and_ttl_from_config(marked_home: Path, project: Path) -> None:
    big_home(marked_home, 1500)
    off = Settings(source=None).with_overrides(**{"llm.cache_system_prompt": False})
    p = builder(marked_home, project, settings=off).build("x", conversation(3), model="claude-sonnet-4-5",
                                                   provider_kind="anthropic")
    assert p.cache.system is False and p.cache.message_indices == () and p.cache.prompt_cache_key is None
    hour = Settings(source=None).with_overrides(**{"llm.cache_ttl": "1h"})
    p = builder(marked_home, project, settings=hour).build("x", model="claude-sonnet-4-5",
                                                    provider_kind="anthropic")
    assert p.cache.ttl == "1h"


def test_openai_cache_key_from_prefix(marked_home: Path, project: Path) -> None:
    big_home(marked_home, 1500)
    b = builder(marked_home, project)
    a = b.build("one", model="gpt-4o", provider_kind="openai")
    c = b.build("two", conversation(3), model="gpt-4o-mini", provider_kind="openai")
    assert a.cache.prompt_cache_key == c.cache.prompt_cache_key == "hermes-" + a.prefix_sha256[:24]
    assert a.cache.message_indices == ()
    write(marked_home / "USER.md", "changed user\n")
    assert (b.build("one", model="gpt-4o", provider_kind="openai").cache.prompt_cache_key
            != a.cache.prompt_cache_key)
