"""Tests of ``hermes_core/providers/observed.py``: the transports hand each response's rate-limit
headers to the ``capture`` block around the call, sync and async, and keep nothing outside one."""

from __future__ import annotations

import asyncio

import httpx
import httpx2

from hermes_core.providers.deadline import AsyncDeadlineTransport, DeadlineTransport
from hermes_core.providers.observed import bill, capture
from hermes_core.testing import (
    ANTHROPIC_URL,
    OPENAI_URL,
    anthropic_message,
    openai_chat_completion,
)
from hermes_core.types import (
    Usage,
)
from tests.providers.conftest import (
    OPTS_ERR,
    PROMPT_ERR,
    SECRET_200,
)

HEADERS = {"X-RateLimit-Limit-Requests": "10", "x-ratelimit-remaining-requests": "4",
           "anthropic-ratelimit-requests-reset": "2030-01-01T00:00:00Z", "x-request-id": "r1"}


def _answer(request: httpx2.Request) -> httpx2.Response:
    return httpx2.Response(200, headers=HEADERS, json={})


def test_the_rate_limit_headers_of_a_response_reach_the_capture_block() -> None:
    client = httpx2.Client(transport=DeadlineTransport(httpx2.MockTransport(_answer)))
    with capture() as heard:
        client.get("http://test/v1/x")
    assert heard.headers == {"x-ratelimit-limit-requests": "10",
                             "x-ratelimit-remaining-requests": "4",
                             "anthropic-ratelimit-requests-reset": "2030-01-01T00:00:00Z",
                             "x-request-id": "r1"}   # the answer's id: its attempt names it
    heard.headers = {}
    client.get("http://test/v1/x")            # no block listening: nothing kept, no error
    assert heard.headers == {}


def test_async_responses_reach_the_capture_block_of_their_own_task() -> None:
    async def one(i: int) -> dict[str, str]:
        def answer(request: httpx2.Request) -> httpx2.Response:
            return httpx2.Response(200, headers={"x-ratelimit-remaining-requests": str(i)})

        client = httpx2.AsyncClient(transport=AsyncDeadlineTransport(
            httpx2.MockTransport(answer)))
        with capture() as heard:
            await asyncio.sleep(0)                # interleave with the other task
            await client.get("http://test/v1/x")
        await client.aclose()
        return heard.headers

    async def main() -> list[dict[str, str]]:
        return list(await asyncio.gather(one(1), one(2)))

    assert asyncio.run(main()) == [{"x-ratelimit-remaining-requests": "1"},
                                   {"x-ratelimit-remaining-requests": "2"}]


def test_a_repeated_rate_limit_header_is_kept_joined_and_other_headers_are_not_decoded() -> None:
    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers=[(b"X-RateLimit-Reset-Tokens", b"1s"),
                                             (b"x-ratelimit-reset-tokens", b"2s"),
                                             (b"x-note", "caf\u00e9".encode("latin-1"))])

    client = httpx2.Client(transport=DeadlineTransport(httpx2.MockTransport(answer)))
    with capture() as heard:
        client.get("http://test/v1/x")
    assert heard.headers == {"x-ratelimit-reset-tokens": "1s, 2s"}


def test_a_stream_says_what_it_was_billed_to_the_capture_block_it_began_in() -> None:
    """The call loop asks an abandoned stream's adapter what it was billed (decision 97)."""
    so_far = Usage(700, 1)
    bill(lambda: so_far)   # nobody listening: kept nowhere
    with capture() as heard:
        bill(lambda: so_far)
    assert heard.billed is not None and heard.billed() == so_far
    with capture() as quiet:
        pass
    assert quiet.billed is None


def test_a_gateway_stating_a_limit_of_zero_on_every_answer_does_not_block_its_key(
        failover_loop, respx_mock) -> None:
    """``limit 0, remaining 0`` on a 200 is a gateway with no limit configured: the key serves
    the next request at once, not the backup after the stated reset."""
    loop, router = failover_loop("openai", SECRET_200, "sk-ant-testkey-SECRET-0002")
    respx_mock.post(OPENAI_URL).mock(return_value=httpx.Response(
        200, json=openai_chat_completion("from primary"),
        headers={"x-ratelimit-limit-requests": "0", "x-ratelimit-remaining-requests": "0",
                 "x-ratelimit-reset-requests": "1m"}))
    backup = respx_mock.post(ANTHROPIC_URL).mock(return_value=httpx.Response(
        200, json=anthropic_message("from backup", model="claude-haiku")))
    for _ in range(3):
        done, _attempts = loop.complete(PROMPT_ERR, router.select("hi"), OPTS_ERR)
        assert done.text == "from primary"
    assert not backup.called
    assert {k.provider: k.state for k in loop.pool.status()}["primary"] == "ok"
