"""The pool hands out leases; removed keys no longer count as keys; status takes one name."""

from __future__ import annotations

import dataclasses

import pytest

from hermes_core.agent.credential_pool import CredentialPool, Lease
from hermes_core.agent.pool.state import InMemoryPoolState, PoolPolicy
from hermes_core.config import load_settings
from hermes_core.types import Credential


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_acquire_hands_out_a_frozen_lease_and_marks_the_probe() -> None:
    clock = Clock()
    cred = Credential("p", "sk-only-key-SECRET-000001")
    pool = CredentialPool({"p": [cred]}, policy=PoolPolicy(breaker_failures=1,
                                                           breaker_cooldown_s=5.0),
                          backend=InMemoryPoolState(clock))
    first = pool.acquire("p")
    assert isinstance(first, Lease) and first.credential == cred and not first.probe
    assert first.lease_id and "SECRET" not in repr(first)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.probe = True  # type: ignore[misc]
    pool.failure(first)                 # the breaker opens
    clock.t += 5.0
    probe = pool.acquire("p")
    assert probe.probe and probe.credential == cred
    pool.release(probe)                 # the probe ended without a signal: slot freed
    assert pool.acquire("p").probe


def test_a_removed_only_key_means_no_keys_and_status_takes_one_name() -> None:
    pool = CredentialPool({"openai": [Credential("openai", "sk-openai-SECRET-00000001")],
                           "anthropic": [Credential("anthropic", "sk-ant-SECRET-000000001")]})
    pool.remove(pool.acquire("openai"), "after HTTP 401")
    assert not pool.has_keys("openai") and pool.configured("openai")
    assert pool.has_keys("anthropic")
    rows = pool.status("openai")
    assert [(r.provider, r.state) for r in rows] == [("openai", "removed")]
    assert len(pool.status(["openai", "anthropic"])) == 2


def test_credentials_say_where_they_were_configured() -> None:
    s = load_settings({"credentials": {"openai": {"keys": [{"key": "sk-one-SECRET-0000000001"},
                                                           {"key": "sk-two-SECRET-0000000002"}]}}},
                      env={})
    assert [c.source for c in s.credentials_for("openai")] == [
        "credentials.openai.keys[0]", "credentials.openai.keys[1]"]
    env = load_settings({}, env={"OPENAI_API_KEY": "sk-env-SECRET-0000000001"})
    assert [c.source for c in env.credentials_for("openai")] == ["OPENAI_API_KEY"]
