"""What leaves for a provider holds no configured key: scrubbed in the call loop, whatever the
part of the prompt it came from, and checked on the wire through the real SDKs (respx)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hermes_core.agent.prompt.outbound import ScrubMemo, scrub_prompt, withheld_keys
from hermes_core.redact import Redactor
from hermes_core.types import Message, Prompt, ToolCall, ToolSpec, fingerprint
from tests.agent.conftest import KEYS, MODELS, URLS, run_turn, wire_response

CUSTOM_KEY = "zq-custom-0123456789abcdef"   # a custom endpoint's key: no known key shape
MARKER = f"[{fingerprint(CUSTOM_KEY)}]"


def _agent(home: Path, kind: str, **kwargs: Any) -> Any:
    from hermes_core.agent.agent import Agent
    from hermes_core.config import load_settings
    from hermes_core.providers.anthropic import AnthropicProvider
    from hermes_core.providers.openai import OpenAIProvider

    cfg = {"home": str(home), "llm": {"routing": {"default_model": MODELS[kind]}},
           "credentials": {kind: {"keys": [{"key": KEYS[kind]}]},
                           "custom": {"keys": [{"key": CUSTOM_KEY}]}},
           "context_engine": {"enabled": False}}
    provider = OpenAIProvider() if kind == "openai" else AnthropicProvider()
    return Agent(load_settings(cfg, env={}), provider=provider,
                 loop_options={"sleep": lambda s: None}, **kwargs)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("mode", ["sync", "async", "stream"])
def test_a_configured_key_typed_in_a_turn_never_reaches_the_provider(
        kind: str, mode: str, empty_home: Path, respx_mock: Any) -> None:
    (empty_home / "MEMORY.md").write_text(f"The staging key is {CUSTOM_KEY}.\n")
    seen: list[str] = []

    def lookup(name: str) -> str:
        """Look a name up."""
        seen.append(name)
        return f"{name} is configured with {CUSTOM_KEY}"

    call = ToolCall("c1", "lookup", json.dumps({"name": f"svc {CUSTOM_KEY}"}))
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, mode == "stream", f"checking {CUSTOM_KEY}", (call,)),
        wire_response(kind, mode == "stream", "done"),
        wire_response(kind, mode == "stream", "again")])
    agent = _agent(empty_home, kind, tools=[lookup])
    run_turn(agent, mode, f"my custom endpoint key is {CUSTOM_KEY}, is it valid?")
    run_turn(agent, mode, "and now?")   # the first turn comes back from the in-memory history

    assert route.call_count == 3
    for sent in route.calls:
        body = sent.request.content.decode()
        assert CUSTOM_KEY not in body
        assert MARKER in body
    assert seen   # the tool ran on the model's arguments (the model's own copy is its business)


def test_scrub_prompt_covers_every_part_sent() -> None:
    scrub = Redactor([CUSTOM_KEY])
    prompt = Prompt(
        system=f"memory: {CUSTOM_KEY}", context=f"recalled: {CUSTOM_KEY}",
        messages=(Message("user", f"key {CUSTOM_KEY}"),
                  Message("assistant", f"saw {CUSTOM_KEY}",
                          tool_calls=(ToolCall("c1", "t", json.dumps({"k": CUSTOM_KEY})),)),
                  Message("tool", f"out {CUSTOM_KEY}", tool_call_id="c1", name="t")),
        tools=(ToolSpec("t", f"uses {CUSTOM_KEY}",
                        {"type": "object", "properties": {"k": {"description": CUSTOM_KEY}}}),))
    sent = scrub_prompt(prompt, scrub)
    assert CUSTOM_KEY not in repr(sent) + json.dumps(sent.tools[0].parameters)
    assert sent.system == f"memory: {MARKER}"
    assert sent.messages[1].tool_calls[0].arguments == json.dumps({"k": MARKER})
    assert withheld_keys(sent, scrub.secrets) == (fingerprint(CUSTOM_KEY),)


def test_scrub_prompt_returns_a_clean_prompt_itself() -> None:
    prompt = Prompt(system="persona", messages=(Message("user", "hello"),))
    assert scrub_prompt(prompt, Redactor([CUSTOM_KEY])) is prompt
    assert withheld_keys(prompt, (CUSTOM_KEY,)) == ()


def test_scrub_prompt_covers_the_turn_s_decisions_carried_with_it() -> None:
    from hermes_core.retrieval.result import RetrievalResult
    from hermes_core.types import RetrievalQuery, TurnContext

    turn = TurnContext(skills_block=f"skills {CUSTOM_KEY}", memories_block=f"past {CUSTOM_KEY}",
                       extra=(f"hook {CUSTOM_KEY}",),
                       retrieval=RetrievalResult(f"key {CUSTOM_KEY}", "none",
                                                 translation=f"钥匙 {CUSTOM_KEY}"),
                       query=RetrievalQuery(f"key {CUSTOM_KEY}", (f"said {CUSTOM_KEY}",),
                                            (f"before {CUSTOM_KEY}",)))
    prompt = Prompt(system="persona", messages=(Message("user", "hello"),), turn=turn)
    sent = scrub_prompt(prompt, Redactor([CUSTOM_KEY]))
    # not sent, but recorded with the request by test doubles and shown by Reply.prompt
    assert CUSTOM_KEY not in repr(sent)
    assert sent.turn is not None and sent.turn.retrieval.query == f"key {MARKER}"
    assert sent.turn.query is not None and sent.turn.query.previous_users == (f"before {MARKER}",)


def _counting_scrub() -> tuple[list[str], Callable[[str], str]]:
    """A scrub of ``CUSTOM_KEY`` that notes every text it is handed (how often a part is scrubbed)."""
    seen: list[str] = []
    scrub = Redactor([CUSTOM_KEY])

    def counting(text: str) -> str:
        seen.append(text)
        return scrub(text)

    return seen, counting


def _turns(key: str) -> list[Prompt]:
    """Three turns of one conversation: the same system prompt, a history growing by a pair a
    turn, a per-turn context; a key at the very start and end of every part."""
    system = f"{key} soul\n\n---\n\nmemory: sk-proj-{'a1' * 12} and {key}"
    history: list[Message] = []
    prompts = []
    for i in range(3):
        new = Message("user", f"{key} turn {i} Bearer abcdefghijklmnop1234 {key}")
        prompts.append(Prompt(system=system, messages=(*history, new),
                              context=f"{key} clock {i}\n\nskills\n\nrecalled {key}"))
        history += [new, Message("assistant", f"reply {i} {key}",
                                 tool_calls=(ToolCall(f"c{i}", "t", json.dumps({"k": key})),))]
    return prompts


def test_a_memo_scrubs_each_turn_as_the_whole_prompt_is_scrubbed() -> None:
    scrub = Redactor([CUSTOM_KEY])
    memo = ScrubMemo()
    for prompt in _turns(CUSTOM_KEY):
        sent = scrub_prompt(prompt, scrub, memo)
        assert sent == scrub_prompt(prompt, scrub)
        assert CUSTOM_KEY not in repr(sent) and "abcdefghijklmnop1234" not in repr(sent)


def test_the_stable_parts_are_scrubbed_once_and_the_turn_s_parts_every_turn() -> None:
    seen, counting = _counting_scrub()
    memo = ScrubMemo()
    prompts = _turns(CUSTOM_KEY)
    for prompt in prompts:
        scrub_prompt(prompt, counting, memo)
    assert seen.count(prompts[0].system) == 1
    for i, prompt in enumerate(prompts):
        assert seen.count(prompt.context) == 1
        assert seen.count(prompt.messages[-1].content) == (2 if i < 2 else 1)  # new, then history


def test_a_secret_registered_after_a_turn_is_scrubbed_from_the_remembered_parts() -> None:
    from hermes_core.redact import register_secrets

    later = "zq-registered-later-0a1b2c3d4e5f"
    scrub, memo = Redactor([CUSTOM_KEY]), ScrubMemo()
    prompts = _turns(later)
    first = scrub_prompt(prompts[0], scrub, memo)
    assert later in first.system    # not a key to anyone yet
    register_secrets([later])
    second = scrub_prompt(prompts[1], scrub, memo)
    assert later not in repr(second) and second == scrub_prompt(prompts[1], scrub)


def test_a_memo_bound_to_another_redactor_forgets_the_first_one_s_texts() -> None:
    memo = ScrubMemo()
    prompt = Prompt(system="other-key-0123456789abcdef here",
                    messages=(Message("user", "x"), Message("user", "y")))
    assert scrub_prompt(prompt, Redactor([CUSTOM_KEY]), memo) is prompt
    other = scrub_prompt(prompt, Redactor(["other-key-0123456789abcdef"]), memo)
    assert "other-key-0123456789abcdef" not in other.system


def test_a_bind_that_read_the_generation_before_a_registration_cannot_hand_stale_texts_to_later_turns(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Three turns of one call loop on three threads: C scrubs the system before a key is
    registered and stores its result only after; B binds after the registration; A read the
    generation before it but takes the memo's lock after B (the window between
    ``registered_generation()`` and the lock, forced here). A must not bring the memo back to the
    old generation: C's stale text would be stored and handed to B, whose turn began after the
    key was known."""
    import threading

    from hermes_core.agent.prompt import outbound
    from hermes_core.redact import register_secrets, registered_generation

    later = "zq-registered-mid-turn-9f8e7d6c5b"
    system = f"soul with {later}"
    scrub = Redactor([CUSTOM_KEY])
    computed, release = threading.Event(), threading.Event()

    def slow(text: str) -> str:
        out = scrub(text)            # before the registration: the key is not one yet
        if text == system and not computed.is_set():
            computed.set()
            release.wait(10)
        return out

    memo = ScrubMemo()
    old = registered_generation()
    c = threading.Thread(target=lambda: memo.bind(slow)(system))
    c.start()
    assert computed.wait(10)
    register_secrets([later])
    b = memo.bind(slow)                                         # B: after the registration
    with monkeypatch.context() as m:
        m.setattr(outbound, "registered_generation", lambda: old)
        memo.bind(slow)                                         # A: read before, locks after
    release.set()
    c.join(10)
    assert later not in b(system)


def test_a_memo_over_a_long_session_stays_within_its_bound() -> None:
    """A long session's memo is let go of when it holds ``max_chars`` characters of texts: it
    never grows with the session, and each turn is still scrubbed as the whole prompt is."""
    scrub, memo = Redactor([CUSTOM_KEY]), ScrubMemo(max_chars=20_000)
    system = f"soul {CUSTOM_KEY} " + "x" * 5_000
    history: list[Message] = []
    most = 0
    for i in range(3_000):
        new = Message("user", f"turn {i} {CUSTOM_KEY} " + "y" * (i % 300))
        prompt = Prompt(system=system, messages=(*history[-40:], new))
        sent = scrub_prompt(prompt, scrub, memo)
        if i % 499 == 0:
            assert sent == scrub_prompt(prompt, scrub)
        assert CUSTOM_KEY not in sent.system and CUSTOM_KEY not in sent.messages[0].content
        history += [new, Message("assistant", f"reply {i}")]
        most = max(most, memo._chars, sum(map(len, memo._done)))
    assert most <= 20_000


def _tools(key: str) -> tuple[ToolSpec, ...]:
    """Tool definitions as a turn builds them: a new tuple of equal specs; a key in a
    description and in a parameter's description."""
    return (ToolSpec("deploy", f"Deploys with {key}.", {
                "type": "object",
                "properties": {"env": {"type": "string", "description": f"token {key}"}}}),
            ToolSpec("lookup", "Looks a name up."))


def test_the_tool_definitions_are_scrubbed_once_while_the_tools_and_secrets_stay() -> None:
    seen, counting = _counting_scrub()
    memo = ScrubMemo()
    for prompt in _turns(CUSTOM_KEY):
        sent = scrub_prompt(replace(prompt, tools=_tools(CUSTOM_KEY)), counting, memo)
        assert sent.tools[0].description == f"Deploys with {MARKER}."
    assert seen.count(f"Deploys with {CUSTOM_KEY}.") == 1


def test_a_changed_tool_list_is_scrubbed_again() -> None:
    scrub, memo = Redactor([CUSTOM_KEY]), ScrubMemo()
    prompt = _turns(CUSTOM_KEY)[0]
    first = scrub_prompt(replace(prompt, tools=_tools("nothing")), scrub, memo)
    assert first.tools == _tools("nothing")
    added = (*_tools("nothing"), ToolSpec("new", f"uses {CUSTOM_KEY}"))
    second = scrub_prompt(replace(prompt, tools=added), scrub, memo)
    assert CUSTOM_KEY not in repr(second.tools) and second.tools[2].description == f"uses {MARKER}"
    assert second == scrub_prompt(replace(prompt, tools=added), scrub)


def test_a_secret_registered_after_a_turn_is_scrubbed_from_the_remembered_tools() -> None:
    from hermes_core.redact import register_secrets

    later = "zq-tool-registered-later-9f8e7d6c"
    scrub, memo = Redactor([CUSTOM_KEY]), ScrubMemo()
    prompt = replace(_turns(CUSTOM_KEY)[0], tools=_tools(later))
    assert later in scrub_prompt(prompt, scrub, memo).tools[0].description
    register_secrets([later])
    second = scrub_prompt(replace(prompt, tools=_tools(later)), scrub, memo)
    assert later not in repr(second.tools) and second == scrub_prompt(prompt, scrub)


def test_a_tool_whose_parameters_are_changed_in_place_after_a_turn_is_scrubbed_again() -> None:
    """The memo compares the tools by value, against a copy taken when they were scrubbed: the
    same spec object whose parameters dict gained a key's text since must not be sent as it was
    remembered (unscrubbed: a spec the scrub left alone is handed on as itself)."""
    scrub, memo = Redactor([CUSTOM_KEY]), ScrubMemo()
    spec = ToolSpec("deploy", "Deploys.", {"type": "object", "properties": {
        "env": {"type": "string", "description": "Where to."}}})
    prompt = replace(_turns(CUSTOM_KEY)[0], tools=(spec,))
    assert scrub_prompt(prompt, scrub, memo).tools == (spec,)
    spec.parameters["properties"]["env"]["description"] = f"Where to, with {CUSTOM_KEY}."
    second = scrub_prompt(replace(prompt, tools=(spec,)), scrub, memo)
    assert CUSTOM_KEY not in repr(second.tools)
    assert second == scrub_prompt(prompt, scrub)


def test_a_tool_whose_parameters_cannot_be_copied_is_scrubbed_each_turn() -> None:
    """The memo's copy of the tools is deep; a schema holding an object that refuses a copy (a
    lock in a default) is not remembered, and still scrubbed every turn, never an error."""
    import threading

    scrub, memo = Redactor([CUSTOM_KEY]), ScrubMemo()
    spec = ToolSpec("deploy", f"Deploys with {CUSTOM_KEY}.", {"type": "object", "properties": {
        "env": {"type": "string", "default": threading.Lock()}}})
    prompt = replace(_turns(CUSTOM_KEY)[0], tools=(spec,))
    for _ in range(2):
        sent = scrub_prompt(prompt, scrub, memo)
        assert sent.tools[0].description == f"Deploys with {MARKER}."
    assert memo.misses >= 2


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_secret_in_a_tool_description_never_reaches_the_provider(
        kind: str, empty_home: Path, respx_mock: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.agent.prompt import outbound

    scrubbed: list[str] = []
    real = outbound._tool

    def counting(t: ToolSpec, scrub: Any) -> ToolSpec:
        scrubbed.append(t.name)
        return real(t, scrub)

    monkeypatch.setattr(outbound, "_tool", counting)

    def deploy(env: str) -> str:
        """Deploy to ``env`` using the staging key zq-custom-0123456789abcdef."""
        return "ok"

    assert CUSTOM_KEY in (deploy.__doc__ or "")
    route = respx_mock.post(URLS[kind]).mock(side_effect=[
        wire_response(kind, False, "one"), wire_response(kind, False, "two")])
    agent = _agent(empty_home, kind, tools=[deploy])
    run_turn(agent, "sync", "deploy please")
    run_turn(agent, "sync", "again")    # the second turn takes the tools from the memo
    assert route.call_count == 2
    for sent in route.calls:
        body = sent.request.content.decode()
        assert CUSTOM_KEY not in body and MARKER in body and "deploy" in body
    assert scrubbed.count("deploy") == 1    # the call loop's memo kept the first turn's result


def test_a_child_forked_while_a_thread_was_in_the_scrub_memo_scrubs_tools(
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    memo = ScrubMemo()
    tools = (ToolSpec("t", "uses sk-proj-forkedTOOLsecret0123456789"),)

    def child() -> object:
        scrub = lambda s: s.replace("sk-proj-forkedTOOLsecret0123456789", "[key]")  # noqa: E731
        return memo.tools(tools, scrub)[0].description

    with held_by_a_thread(memo._lock):
        assert in_forked_child(child) == "uses [key]"
