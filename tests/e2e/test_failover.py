"""The failover scenario end to end, over a real loopback socket and the real SDKs: one provider's
keys hit a hidden per-minute limit (429 + Retry-After 30) or answer 401; every turn is answered,
no key is tried while blocked, the 401 key is tried once, and turns fail over to the second
provider. Nothing waits: a 30 s block is longer than ``max_wait_s``, so the loop fails over.
"""

from __future__ import annotations

from collections import Counter

from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.smart_routing import Router
from hermes_core.config import load_settings
from hermes_core.testing.server import KeyBehaviour, MockLLMServer
from hermes_core.types import Message, Prompt, fingerprint

LIMITED, REVOKED, OTHER = "sk-e2e-limited-SECRET", "sk-e2e-revoked-SECRET", "sk-e2e-other-SECRET"


def test_turns_survive_limits_and_revoked_keys_then_fail_over(tmp_path) -> None:
    with MockLLMServer(reply=lambda body: "answered") as srv:
        srv.set_key(LIMITED, KeyBehaviour(rpm=2, retry_after=30))
        srv.set_key(REVOKED, KeyBehaviour(status=401))
        settings = load_settings({
            "home": str(tmp_path),
            "llm": {"routing": {"default_model": "gpt-4o", "providers": [
                {"name": "first", "type": "openai", "priority": 1, "models": ["gpt-4o"],
                 "endpoint": srv.url + "/v1"},
                {"name": "second", "type": "anthropic", "priority": 2,
                 "models": ["claude-sonnet-4"], "endpoint": srv.url}]}},
            "credentials": {"first": {"keys": [{"key": REVOKED}, {"key": LIMITED}]},
                            "second": {"keys": [{"key": OTHER}]}},
            "credential_pool": {"rotation": "fill_first"}})
        router, loop = Router.from_settings(settings), CallLoop.from_settings(settings)
        served_by = []
        history: tuple[Message, ...] = ()
        for turn in range(6):
            history += (Message("user", f"turn {turn}"),)
            prompt = Prompt(system="You are Hermes.", messages=history)
            done, _ = loop.complete(prompt, router.select(prompt, turn_count=turn))
            assert done.text == "answered"
            history += (Message("assistant", done.text),)
            served_by.append(done.provider)
        per_key = Counter((r.key_fingerprint, r.status) for r in srv.requests)
    assert per_key[(fingerprint(REVOKED), 401)] == 1                 # tried once, then removed
    assert per_key[(fingerprint(LIMITED), 200)] == 2
    assert per_key[(fingerprint(LIMITED), 429)] == 1                 # never again while blocked
    assert per_key[(fingerprint(OTHER), 200)] == 4
    assert served_by == ["first", "first", "second", "second", "second", "second"]
    audit = (tmp_path / "audit.jsonl").read_text()
    assert audit.count('"status": "429"') == 1 and "SECRET" not in audit
