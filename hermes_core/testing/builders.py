"""Response bodies shaped exactly like the real APIs, for mocking at the HTTP level with respx.

Use them with ``respx_mock`` so the real SDK code parses real-looking responses::

    respx_mock.post("https://api.openai.com/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=openai_chat_completion("hi")))
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hermes_core.types import ToolCall

OPENAI_URL = "https://api.openai.com/v1/chat/completions"
ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"


def openai_chat_completion(text: str = "Hello!", *, model: str = "gpt-4o-mini",
                           prompt_tokens: int = 12, completion_tokens: int = 5,
                           cached_tokens: int = 0, tool_calls: Sequence[ToolCall] = (),
                           finish_reason: str | None = None, id: str = "chatcmpl-test") -> dict[str, Any]:
    """A ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None}
    if tool_calls:
        message["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments}}
                                 for c in tool_calls]
    return {
        "id": id, "object": "chat.completion", "created": 1_700_000_000, "model": model,
        "system_fingerprint": "fp_test",
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop")}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens,
                  "prompt_tokens_details": {"cached_tokens": cached_tokens, "audio_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0}},
    }


def _sse(events: Iterable[tuple[str | None, Any]]) -> bytes:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(out).encode("utf-8")


def openai_chat_stream(pieces: Sequence[str] = ("Hel", "lo", "!"), *, model: str = "gpt-4o-mini",
                       prompt_tokens: int = 12, cached_tokens: int = 0,
                       tool_calls: Sequence[ToolCall] = (), fail_after: int | None = None,
                       id: str = "chatcmpl-test") -> bytes:
    """An SSE body of ``chat.completion.chunk`` objects ending with usage and ``[DONE]``.

    ``fail_after=n`` cuts the stream after n text chunks with an error event, as a server that dies
    mid-stream does.
    """
    base = {"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
            "system_fingerprint": "fp_test"}
    events: list[tuple[str | None, Any]] = [(None, {**base, "choices": [
        {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})]
    for i, p in enumerate(pieces):
        if fail_after is not None and i >= fail_after:
            events.append((None, {"error": {"message": "stream interrupted", "type": "server_error"}}))
            return _sse(events)
        events.append((None, {**base, "choices": [
            {"index": 0, "delta": {"content": p}, "finish_reason": None}]}))
    for n, c in enumerate(tool_calls):
        events.append((None, {**base, "choices": [{"index": 0, "finish_reason": None, "delta": {
            "tool_calls": [{"index": n, "id": c.id, "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments}}]}}]}))
    events.append((None, {**base, "choices": [
        {"index": 0, "delta": {}, "finish_reason": "tool_calls" if tool_calls else "stop"}]}))
    completion_tokens = max(1, len(pieces))
    events.append((None, {**base, "choices": [], "usage": {
        "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": cached_tokens}}}))
    events.append((None, "[DONE]"))
    return _sse(events)


def anthropic_message(text: str = "Hello!", *, model: str = "claude-3-5-sonnet-20241022",
                      input_tokens: int = 12, output_tokens: int = 5, cache_read: int = 0,
                      cache_write: int = 0, tool_calls: Sequence[ToolCall] = (),
                      stop_reason: str | None = None, id: str = "msg_test",
                      container: str | None = None) -> dict[str, Any]:
    """A Messages API ``message`` object; ``container``: the id of the code-execution container
    the reply ran in."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": json.loads(c.arguments)}
                for c in tool_calls]
    message: dict[str, Any] = {
        "id": id, "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": stop_reason or ("tool_use" if tool_calls else "end_turn"),
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                  "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_write},
    }
    if container is not None:
        message["container"] = _container(container)
    return message


def _container(container: str | None) -> dict[str, Any] | None:
    return None if container is None else {"id": container, "expires_at": "2026-12-05T01:00:00Z"}


def anthropic_stream(pieces: Sequence[str] = ("Hel", "lo", "!"), *,
                     model: str = "claude-3-5-sonnet-20241022", input_tokens: int = 12,
                     cache_read: int = 0, cache_write: int = 0, tool_calls: Sequence[ToolCall] = (),
                     fail_after: int | None = None, id: str = "msg_test") -> bytes:
    """An SSE body of Messages stream events; ``fail_after`` ends it with an ``error`` event."""
    start = anthropic_message("", model=model, input_tokens=input_tokens, output_tokens=1,
                              cache_read=cache_read, cache_write=cache_write, id=id)
    start["stop_reason"] = None
    events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}})]
    for i, p in enumerate(pieces):
        if fail_after is not None and i >= fail_after:
            events.append(("error", {"type": "error", "error": {"type": "overloaded_error",
                                                                "message": "Overloaded"}}))
            return _sse(events)
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "text_delta", "text": p}}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    for n, c in enumerate(tool_calls, start=1):
        events.append(("content_block_start", {"type": "content_block_start", "index": n,
                       "content_block": {"type": "tool_use", "id": c.id, "name": c.name, "input": {}}}))
        events.append(("content_block_delta", {"type": "content_block_delta", "index": n,
                       "delta": {"type": "input_json_delta", "partial_json": c.arguments}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": n}))
    events.append(("message_delta", {"type": "message_delta",
                   "delta": {"stop_reason": "tool_use" if tool_calls else "end_turn",
                             "stop_sequence": None},
                   "usage": {"output_tokens": max(1, len(pieces))}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(events)


def code_execution_blocks(text: str, *, code: str = "print(6 * 7)", stdout: str = "42\n",
                          id: str = "srvtoolu_c1") -> list[dict[str, Any]]:
    """The content of a reply in which Anthropic ran code in its container (the code execution
    server tool): the call, its result, then ``text``."""
    return [
        {"type": "server_tool_use", "id": id, "name": "code_execution", "input": {"code": code}},
        {"type": "code_execution_tool_result", "tool_use_id": id,
         "content": {"type": "code_execution_result", "stdout": stdout, "stderr": "",
                     "return_code": 0, "content": []}},
        {"type": "text", "text": text},
    ]


def web_search_blocks(text: str, *, query: str = "oslo weather",
                      id: str = "srvtoolu_1") -> list[dict[str, Any]]:
    """The content of a reply in which Anthropic ran its web search (a server tool): the call,
    its result, then ``text``; what a paused long turn (``pause_turn``) carries."""
    return [
        {"type": "server_tool_use", "id": id, "name": "web_search", "input": {"query": query}},
        {"type": "web_search_tool_result", "tool_use_id": id,
         "content": [{"type": "web_search_result", "url": "https://example.test", "title": "t",
                      "encrypted_content": "e", "page_age": None}]},
        {"type": "text", "text": text},
    ]


def anthropic_blocks_stream(blocks: Sequence[Mapping[str, Any]], *, stop_reason: str = "end_turn",
                            model: str = "claude-sonnet-4-5", input_tokens: int = 12,
                            output_tokens: int = 5, cache_write: int = 0,
                            container: str | None = None) -> bytes:
    """An SSE body streaming the whole ``blocks`` (any type: thinking, server tools, their
    results, text with citations, one never seen), each started empty and filled by the deltas
    its type sends, as the API does; ends with ``stop_reason`` and cumulative usage, and the
    ``container`` the reply ran in (the API names it in ``message_delta``)."""
    start = anthropic_message("", model=model, input_tokens=input_tokens, output_tokens=1,
                              cache_write=cache_write)
    start["stop_reason"] = None
    events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start",
                                                               "message": start})]
    for i, block in enumerate(blocks):
        kind = block["type"]
        empty = ({**block, "thinking": ""} if kind == "thinking" else
                 {**block, "text": ""} if kind == "text" else
                 {**block, "input": {}} if "input" in block else dict(block))
        deltas: list[dict[str, Any]] = []
        if kind == "thinking":
            deltas = [{"type": "thinking_delta", "thinking": block["thinking"]},
                      {"type": "signature_delta", "signature": block["signature"]}]
        elif kind == "text":
            deltas = [{"type": "citations_delta", "citation": c} for c in block.get("citations") or ()]
            deltas.append({"type": "text_delta", "text": block["text"]})
        elif "input" in block:
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                               "content_block": empty}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": i,
                                            "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": stop_reason, "stop_sequence": None,
                                               "container": _container(container)},
                                     "usage": {"output_tokens": output_tokens}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(events)


SSE_HEADERS = {"content-type": "text/event-stream"}


def openai_error(status: int, message: str = "error", *, type: str | None = None,
                 code: str | None = None, param: str | None = None) -> dict[str, Any]:
    """An OpenAI error body; ``param`` names the request field at fault."""
    default_type = {400: "invalid_request_error", 401: "invalid_request_error",
                    429: "rate_limit_error"}.get(status, "server_error")
    return {"error": {"message": message, "type": type or default_type, "param": param, "code": code}}


def anthropic_error(status: int, message: str = "error", *, type: str | None = None) -> dict[str, Any]:
    """An Anthropic error body."""
    default_type = {400: "invalid_request_error", 401: "authentication_error",
                    403: "permission_error", 404: "not_found_error", 429: "rate_limit_error",
                    529: "overloaded_error"}.get(status, "api_error")
    return {"type": "error", "error": {"type": type or default_type, "message": message}}


def retry_after_headers(form: str, seconds: float, *, now: float | None = None) -> Mapping[str, str]:
    """Headers a 429 carries, in one of the forms servers use.

    ``form``: ``retry-after`` (seconds), ``retry-after-ms``, ``http-date``, ``openai-reset``
    (``x-ratelimit-reset-requests`` duration), ``anthropic-reset`` (RFC 3339 time). A time is
    sent with the ``Date`` a server sends beside it (``now``, to the second, the stated time
    ``seconds`` after it), so it reads as ``seconds`` however late it is read, as a real
    server's does.
    """
    now = float(int(time.time() if now is None else now))   # Date has whole seconds
    date = {"date": email.utils.formatdate(now, usegmt=True)}
    if form == "retry-after":
        return {"retry-after": str(int(seconds))}
    if form == "retry-after-ms":
        return {"retry-after-ms": str(int(seconds * 1000))}
    if form == "http-date":
        return {"retry-after": email.utils.formatdate(now + seconds, usegmt=True), **date}
    if form == "openai-reset":
        m, s = divmod(seconds, 60)
        return {"x-ratelimit-remaining-requests": "0",
                "x-ratelimit-reset-requests": (f"{int(m)}m" if m else "") + f"{s:g}s"}
    if form == "anthropic-reset":
        from datetime import UTC, datetime

        when = datetime.fromtimestamp(now + seconds, tz=UTC).isoformat().replace("+00:00", "Z")
        return {"anthropic-ratelimit-requests-remaining": "0",
                "anthropic-ratelimit-requests-reset": when, **date}
    raise ValueError(f"unknown retry-after form {form!r}")
