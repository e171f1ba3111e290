"""Anthropic reports an exhausted prepaid balance as a 400 (``invalid_request_error``, "Your
credit balance is too low ...") and has a ``billing_error`` type; both are quota exhaustion.

They were mapped to BadRequest, which the call loop raises as is: the key stayed in rotation
(every later request hit it first and failed the same way) and the request never moved to the
next key or provider.
"""

from __future__ import annotations

import random

import httpx
import pytest
from routing_doubles import FakeClock

from hermes_core.agent.credential_pool import CredentialPool
from hermes_core.agent.pool.state import InMemoryPoolState
from hermes_core.agent.resilience import CallLoop
from hermes_core.agent.smart_routing import Router
from hermes_core.config import load_settings
from hermes_core.errors import BadRequest, QuotaExhausted, error_from_status
from hermes_core.providers import build_providers
from hermes_core.providers.base import CallOptions
from hermes_core.testing import ANTHROPIC_URL, anthropic_error, anthropic_message
from hermes_core.types import Message, Prompt

LOW = ("Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing "
       "to upgrade or purchase credits.")
K1, K2 = "sk-ant-review2-SECRET-broke-001", "sk-ant-review2-SECRET-funded-02"


@pytest.mark.parametrize(("status", "body"), [
    (400, anthropic_error(400, LOW)),
    (400, anthropic_error(400, "billing problem", type="billing_error")),
    (403, anthropic_error(403, "billing problem", type="billing_error")),
])
def test_billing_answers_are_quota_exhausted(status, body) -> None:
    assert isinstance(error_from_status(status, {}, body, provider="anthropic"), QuotaExhausted)


def test_an_ordinary_400_stays_a_bad_request() -> None:
    err = error_from_status(400, {}, anthropic_error(400, "messages: roles must alternate"))
    assert type(err) is BadRequest


def test_broke_key_is_removed_and_the_next_key_answers(respx_mock) -> None:
    settings = load_settings({
        "llm": {"routing": {"default_model": "claude-sonnet-4", "providers": [
            {"name": "anthropic", "type": "anthropic", "priority": 1,
             "models": ["claude-sonnet-4"]}]}},
        "credentials": {"anthropic": {"keys": [{"key": K1}, {"key": K2}]}},
        "credential_pool": {"rotation": "fill_first"},
    })
    clock = FakeClock()
    pool = CredentialPool.from_settings(settings, InMemoryPoolState(clock), rng=random.Random(1))
    loop = CallLoop(build_providers(settings), pool, settings, clock=clock, sleep=clock.sleep,
                    asleep=clock.asleep, rng=random.Random(2), audit_path=False)

    def answer(request: httpx.Request) -> httpx.Response:
        if request.headers.get("authorization") == f"Bearer {K1}":
            return httpx.Response(400, json=anthropic_error(400, LOW))
        return httpx.Response(200, json=anthropic_message("funded", model="claude-sonnet-4"))

    route = respx_mock.post(ANTHROPIC_URL).mock(side_effect=answer)
    prompt = Prompt(system="s", messages=(Message("user", "hi"),))
    done, attempts = loop.complete(prompt, Router.from_settings(settings).select("hi"),
                                   CallOptions(max_tokens=16, timeout_s=5))
    assert done.text == "funded"
    assert [a.decision for a in attempts] == ["remove_key", "done"]
    loop.complete(prompt, Router.from_settings(settings).select("hi"), CallOptions(max_tokens=16))
    assert route.call_count == 3   # the broke key is not tried again
    assert {s.fingerprint: s.state for s in pool.status()}[attempts[0].key_fingerprint] == "removed"
