"""OpenAI chat completions, and any OpenAI-compatible endpoint (Together, Ollama, vLLM) by base URL.

The stable system prompt goes first so OpenAI's automatic prefix cache can reuse it, and
``prompt_cache_key`` (derived from the prefix hash) steers requests with the same prefix to the
same cache. The per-turn context travels as a leading text part of the last user message, or,
on OpenAI's own API, as a user message after a follow-up's tool answers (:func:`render_openai`).
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

from hermes_core.errors import IncompleteResponse, ProviderError, ServerError
from hermes_core.finite_json import strict_text
from hermes_core.providers._sdk import (
    SDKProvider,
    a_page,
    completion_deltas,
    delta_completion,
    event_deltas,
)
from hermes_core.providers.base import CallOptions
from hermes_core.providers.counts import token_count
from hermes_core.providers.deadline import Answered
from hermes_core.providers.lessons import RefusalMemory
from hermes_core.providers.observed import bill
from hermes_core.providers.refused import (
    RefusedFields,
    refused_field,
    refuses_streaming,
    status_and_body,
)
from hermes_core.providers.unreported import counted_usage
from hermes_core.request_ids import naming, shown_id
from hermes_core.types import Completion, Credential, Delta, Message, Prompt, ToolCall, Usage

OFFICIAL_HOST = "api.openai.com"
_PATH = "/chat/completions"
_SECURITY = {"bearer_auth": True}   # the auth create() asks for: the API key as a bearer token


def _chat_completion_type() -> type:
    """The SDK's response model, imported on first use like the SDK itself."""
    from openai.types.chat import ChatCompletion

    return ChatCompletion


@functools.cache
def _chunk_stream_type(is_async: bool) -> Any:
    """``Stream[ChatCompletionChunk]`` (``AsyncStream`` for an async client), what create() reads a
    streamed answer with."""
    from openai import AsyncStream, Stream
    from openai.types.chat import ChatCompletionChunk

    return (AsyncStream if is_async else Stream)[ChatCompletionChunk]


@functools.cache
def _client_class(is_async: bool) -> Any:
    """The SDK's client with an event reader that dispatches only events carrying data, as SSE
    does. The SDK's dispatched a block of only ``event:``, ``id:`` or ``retry:`` fields (a
    proxy's named keep-alive, a reconnection hint) as an event with empty data, which it then
    parsed as a chunk: the whole answer failed as a malformed event. The decoder is chosen
    through ``_make_sse_decoder``, the seam Anthropic's own Bedrock client overrides."""
    from openai import AsyncOpenAI, OpenAI
    from openai._streaming import ServerSentEvent, SSEDecoder

    class DataEventDecoder(SSEDecoder):
        def decode(self, line: str) -> ServerSentEvent | None:
            if not line and not self._data:   # the end of a block with no data: no event
                self._event, self._retry = None, None   # the last event id stays, as SSE says
                return None
            return super().decode(line)

    base = AsyncOpenAI if is_async else OpenAI
    return type(base.__name__, (base,), {"_make_sse_decoder": lambda self: DataEventDecoder(),
                                          "__module__": __name__})


def _post(client: Any, payload: dict[str, Any], timeout: Any, **stream: Any) -> Any:
    """``payload`` to the chat completions path as ``create()`` sends it: bearer auth, the
    timeout, parsed into a ``ChatCompletion`` (or read as a chunk stream with ``stream``)."""
    return client.post(_PATH, cast_to=_chat_completion_type(), body=payload,
                       options={"timeout": timeout, "security": _SECURITY}, **stream)


def is_loopback(url: str | None) -> bool:
    """True for an endpoint on this machine (localhost, 127.0.0.0/8, ::1)."""
    if not url:
        return False
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").lower()
    return host == "localhost" or host.startswith("127.") or host == "::1"


def _message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content}
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function",
                              # a model's NaN echoed back: strict servers refuse it
                              "function": {"name": c.name, "arguments": strict_text(c.arguments)}}
                             for c in m.tool_calls]
        if not m.content:
            out["content"] = None
    if m.name:
        out["name"] = m.name
    return out


def render_openai(prompt: Prompt, model: str, options: CallOptions, *,
                  official: bool = True) -> dict[str, Any]:
    """The exact chat.completions payload for ``prompt``: pure, so tests and the CLI can show it.

    On OpenAI's own API a follow-up (the prompt ends on tool answers) sends the per-turn context
    as a user message after them: history keeps the user's message without the context, so a
    context leading it made the next turn share no cached prefix past it and pay for the turn's
    tool answers again. A compatible server keeps it leading (its chat template may want an
    assistant answer right after a tool)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": prompt.system}]
    messages.extend(_message(m) for m in prompt.messages)
    if prompt.context:
        last_user = max((i for i, m in enumerate(prompt.messages) if m.role == "user"), default=None)
        if official and prompt.messages and prompt.messages[-1].role == "tool":
            messages.append({"role": "user", "content": prompt.context})
        elif last_user is not None:
            msg = messages[last_user + 1]
            msg["content"] = [{"type": "text", "text": prompt.context},
                              {"type": "text", "text": msg["content"]}]
        else:
            messages.append({"role": "user", "content": prompt.context})
    payload: dict[str, Any] = {"model": model, "messages": messages}
    payload["max_completion_tokens" if official else "max_tokens"] = options.max_tokens
    if options.temperature is not None:
        payload["temperature"] = options.temperature
    if prompt.tools:
        payload["tools"] = [{"type": "function", "function": {
            "name": t.name, "description": t.description, "parameters": dict(t.parameters)}}
            for t in prompt.tools]
    if official and prompt.cache.prompt_cache_key:
        payload["prompt_cache_key"] = prompt.cache.prompt_cache_key
    payload.update(_options(options, model, has_tools=bool(prompt.tools)))
    return payload


def is_reasoning_model(model: str) -> bool:
    """OpenAI's reasoning families take ``reasoning_effort`` and reject ``stop``."""
    name = model.rsplit("/", 1)[-1].lower()
    return name.startswith(("o1", "o3", "o4", "gpt-5"))


def _tool_choice(choice: str) -> Any:
    if choice in ("auto", "none", "required"):
        return choice
    return {"type": "function", "function": {"name": choice}}


def _options(options: CallOptions, model: str, *, has_tools: bool) -> dict[str, Any]:
    """The optional fields of a chat.completions request: only those the model accepts."""
    out: dict[str, Any] = {}
    reasoning = is_reasoning_model(model)
    if options.tool_choice and has_tools:   # a tool_choice without tools is a 400
        out["tool_choice"] = _tool_choice(options.tool_choice)
    if options.stop and not reasoning:
        out["stop"] = list(options.stop)[:4]   # the API takes at most four
    if options.seed is not None:
        out["seed"] = options.seed
    if options.reasoning_effort and reasoning:
        out["reasoning_effort"] = options.reasoning_effort
    rf = options.response_format
    if rf:
        schema: dict[str, Any] = {"name": rf["name"], "schema": dict(rf["schema"]), "strict": False}
        if rf.get("description"):
            schema["description"] = rf["description"]
        out["response_format"] = {"type": "json_schema", "json_schema": schema}
    return out


def _usage(u: Any) -> Usage:
    """A response's usage; unreported when it has none or one that cannot be read (a count that
    is no count, see :func:`token_count`; the prompt's or the output's count left out)."""
    if u is None:
        return Usage(reported=False)
    prompt, completion, cached, reasoning = (
        token_count(u, "prompt_tokens", required=True),
        token_count(u, "completion_tokens", required=True),
        token_count(getattr(u, "prompt_tokens_details", None), "cached_tokens"),
        token_count(getattr(u, "completion_tokens_details", None), "reasoning_tokens"))
    if prompt is None or completion is None or cached is None or reasoning is None:
        return Usage(reported=False)
    return Usage(input_tokens=max(0, prompt - cached), output_tokens=completion,
                 cache_read_tokens=cached, reasoning_tokens=reasoning)


def _content_text(value: Any) -> str:
    """A message's or delta's ``content`` as text. The API sends a string; some compatible
    servers (Mistral's reasoning models) send a list of parts: the text parts are the answer,
    a thinking part is not. Anything else is not text the reply can carry."""
    if value is None or isinstance(value, str):
        return value or ""
    if isinstance(value, list):
        return "".join(str(p.get("text") or "") for p in value
                       if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _arguments_text(value: Any) -> str:
    """A call's arguments as the JSON text the API specifies. Some compatible servers send the
    JSON object itself; the SDK keeps whatever arrived, and a dict passed on as the text crashed
    the stream's joining of fragments and the tool runner."""
    if value is None or isinstance(value, str):
        return value or ""
    return json.dumps(value, ensure_ascii=False)


def _new_call_id() -> str:
    """An id for a call the server sent without one. Unique in the whole conversation, not per
    round: ``call_0`` in every round put two tool_use blocks with one id into the history, which
    Anthropic refuses after a failover."""
    return f"call_{uuid.uuid4().hex[:24]}"


def _tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(c.id or _new_call_id(), c.function.name,
                          _arguments_text(c.function.arguments) or "{}")
                 for c in raw or ())


class _ToolCallAssembler:
    """Stream chunks carry tool calls in fragments keyed by index; join them.

    Compatible servers bend the rule: Ollama sends each call of a parallel set whole but all with
    index 0, older servers send no index at all, some send no call id, some resend the whole name
    with every fragment. A fragment whose id differs from the id its slot already holds starts a
    new call; a fragment without an index continues the latest call; a call without an id gets a
    fresh one (:func:`_new_call_id`) so its tool result can answer it.
    """

    def __init__(self) -> None:
        self.parts: list[dict[str, str]] = []
        self._by_index: dict[Any, int] = {}

    def add(self, deltas: Any) -> None:
        for d in deltas or ():
            index = getattr(d, "index", None)
            call_id = getattr(d, "id", None)
            pos = self._by_index.get(index)
            if pos is None and index is None and self.parts:
                pos = len(self.parts) - 1
            if pos is not None and call_id and self.parts[pos]["id"] not in ("", call_id):
                pos = None
            if pos is None:
                self.parts.append({"id": "", "name": "", "arguments": ""})
                pos = len(self.parts) - 1
            self._by_index[index] = pos
            slot = self.parts[pos]
            if call_id:
                slot["id"] = call_id
            fn = getattr(d, "function", None)
            if fn is not None and fn.name and fn.name != slot["name"]:
                # a name comes in pieces (Gemini) or whole with every fragment (MiniMax behind
                # NVIDIA NIM, Fireworks): a piece equal to the whole name so far is it resent
                slot["name"] += fn.name
            if fn is not None:
                slot["arguments"] += _arguments_text(fn.arguments)

    def done(self) -> list[ToolCall]:
        return [ToolCall(p["id"] or _new_call_id(), p["name"], p["arguments"] or "{}")
                for p in self.parts]


class OpenAIProvider(SDKProvider):
    """Chat completions over the official SDK (``max_retries=0``: hermes_core owns retries)."""

    kind = "openai"
    request_id_header = "x-request-id"
    sdk_module = "openai"
    client_names = ("OpenAI", "AsyncOpenAI")
    sdk_error_name = "OpenAIError"

    def __init__(self, name: str = "openai", endpoint: str | None = None,
                 timeout_s: float = 60.0) -> None:
        super().__init__(name, endpoint, timeout_s)
        self.refused = RefusedFields()

    def keep_lessons(self, memory: RefusalMemory) -> None:
        self.refused = RefusedFields(memory, self.name)

    def _client_class(self, is_async: bool) -> Any:
        return _client_class(is_async)

    @property
    def requires_key(self) -> bool:
        """A local server (Ollama, vLLM on loopback) is called without a key when none is set."""
        return not is_loopback(self.endpoint)

    @property
    def official(self) -> bool:
        return self.endpoint is None or OFFICIAL_HOST in self.endpoint

    def render(self, prompt: Prompt, model: str, options: CallOptions) -> dict[str, Any]:
        return self.refused.apply(model, render_openai(prompt, model, options,
                                                       official=self.official))

    def learned(self, exc: BaseException, payload: dict[str, Any], model: str) -> bool:
        """A 400 naming an optional field ``model`` does not support (see :mod:`.refused`)."""
        field = refused_field(*status_and_body(exc), payload)
        return field is not None and self.refused.learn(model, field, self.name)

    def _api(self, client: Any) -> Any:
        return client.chat.completions

    def _create(self, client: Any, payload: dict[str, Any], timeout: float) -> Any:
        """``payload`` posted as it is, through the client's public ``post``: the same request
        ``chat.completions.create`` sends (path, auth, parsing into a ``ChatCompletion``), minus
        its walk of every parameter against the typed request schema, which leaves a payload
        already in wire form unchanged (pinned by a test against the SDK's own transform) and was
        a quarter of the SDK's CPU per call."""
        return _post(client, payload, timeout)

    def _open_stream(self, client: Any, payload: dict[str, Any], timeout: Any, *,
                     is_async: bool) -> Any:
        """The streamed request, posted like :meth:`_create` (an awaitable for an async client)."""
        return _post(client, payload, timeout, stream=True, stream_cls=_chunk_stream_type(is_async))

    def _whole_type(self) -> Any:
        return _chat_completion_type()

    def _completion(self, resp: Any, model: str, *, structured: bool) -> Completion:
        # ``structured`` changes nothing here: the structure is the message's content, asked
        # for or not, and a function call is a call whatever its name (``structured_output``
        # is no tool on this wire; the tool runner answers it as unknown)
        # JSON of another shape (the SDK fills missing fields with None), or a body with no
        # message: not an empty answer, the endpoint failing
        if not resp.choices or resp.choices[0].message is None:
            raise TypeError("no message")
        choice = resp.choices[0]
        msg = choice.message
        # A refusal arrives in ``refusal`` with ``content: null``; it is the model's answer, and
        # the finish reason says so in Anthropic's word (its stop reason "refusal"): a structured
        # reply that is a refusal is not a malformed one to be repaired.
        content = _content_text(msg.content)
        refusal = (getattr(msg, "refusal", None) or "") if not content else ""
        return Completion(text=content or refusal, model=resp.model or model,
                          provider=self.name, usage=_usage(getattr(resp, "usage", None)),
                          tool_calls=_tool_calls(msg.tool_calls),
                          finish_reason="refusal" if refusal else choice.finish_reason,
                          request_id=getattr(resp, "_request_id", None) or resp.id)

    def _metered(self, done: Completion, payload: dict[str, Any]) -> Completion:
        """A reply whose body carried no usage (a compatible server that never sends it) was
        billed all the same: counted here (:mod:`.unreported`)."""
        if done.usage.reported:
            return done
        outputs = [done.text, *(v for c in done.tool_calls for v in (c.name, c.arguments))]
        return replace(done, usage=counted_usage(payload, str(payload.get("model")), outputs))

    def _event_type(self) -> Any:
        from openai.types.chat import ChatCompletionChunk

        return ChatCompletionChunk

    def _from_events(self, events: Iterable[Any], payload: dict[str, Any],
                     model: str) -> Completion:
        tools, state = _ToolCallAssembler(), {}  # type: ignore[var-annotated]
        deltas = [d for chunk in events for d in self._step(chunk, tools, state)]
        deltas.extend(self._finish(tools, state, self._billed(lambda: payload, model, tools,
                                                              state)))
        return delta_completion(deltas, model, self.name, state.get("id"))

    def _stream_payload(self, prompt: Prompt, model: str, options: CallOptions) -> dict[str, Any]:
        payload = self.render(prompt, model, options)
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}
        return payload

    def _step(self, chunk: Any, tools: _ToolCallAssembler, state: dict[str, Any],
              hold: bool = False) -> list[Delta]:
        """The deltas ``chunk`` makes, read whole (see :func:`event_deltas`): the one per-chunk
        step both shells (``stream``'s ``for``, ``astream``'s ``async for``) and a whole answer
        read as a stream feed."""
        return event_deltas(self.name, self._chunk_deltas(chunk, tools, state, hold))

    def _chunk_deltas(self, chunk: Any, tools: _ToolCallAssembler,
                      state: dict[str, Any], hold: bool = False) -> Iterator[Delta]:
        """``hold``: the text is kept, not yielded, until the reply is whole (see ``_finish``)."""
        state["seen"] = True
        if "id" not in state and getattr(chunk, "id", None):
            state["id"] = chunk.id   # the answer's id (a whole answer's fallback request id)
        if "model" not in state and getattr(chunk, "model", None):
            state["model"] = chunk.model   # the model that answers (a dated name, a deployment's)
        if chunk.usage is not None:
            usage = _usage(chunk.usage)
            if usage.reported:
                state["usage"] = usage
            else:   # a report that cannot be read is none: the stream is counted at its end
                state.pop("usage", None)
        if state.get("finish"):
            # the answer ended with its finish_reason: what a proxy sends after it (the stream
            # played twice, a retried upstream's answer joined on) is not part of it
            return
        for choice in chunk.choices or ():
            if getattr(choice, "index", None) not in (0, None):
                continue   # a choice never asked for (no ``n``): neither its text nor its end
            if choice.delta is not None:
                content = _content_text(choice.delta.content)
                refusal = None if content else getattr(choice.delta, "refusal", None)
                if refusal:
                    state["refused"] = True
                text = content or refusal
                if text:
                    state.setdefault("text", []).append(text)
                    if not hold:
                        yield Delta(text=text)
                    elif not (state.get("refused") or state.get("called")):
                        # a refusal is no draft of the object: it comes whole, as the reply
                        state["drafted"] = True
                        yield Delta(draft=text)
                if hold and choice.delta.tool_calls and not state.get("called"):
                    # the choice is a tool round, known only now: its content drafted so far
                    # (a guess the call then corrects) is void, and what follows is not drafted
                    state["called"] = True
                    if state.get("drafted"):
                        yield Delta(redraft=True)
                tools.add(choice.delta.tool_calls)
            if choice.finish_reason:
                state["finish"] = choice.finish_reason

    def _finish(self, tools: _ToolCallAssembler, state: dict[str, Any],
                billed: Callable[[], Usage | None], hold: bool = False) -> Iterator[Delta]:
        if not state.get("seen"):
            # a proxy's empty 200: reached the server, not refused; a page is billed nothing
            empty = ServerError(f"{self.name}: the stream ended without a single chunk",
                                provider=self.name)
            raise empty if state.get("page") else self._charged(empty, billed)
        if not state.get("finish"):
            # Every chunk stream ends with a finish_reason: one closed cleanly before it (a proxy
            # or load balancer cutting the connection) must not pass for a whole answer.
            error = IncompleteResponse(f"{self.name}: the stream ended before the reply finished "
                                       "(no finish_reason): the answer is incomplete",
                                       provider=self.name,
                                       partial_text="".join(state.get("text", ())))
            error.usage = billed()
            raise naming(error, self.request_id_header, state.get("request_id"))
        if hold and state.get("text"):   # a structured reply, held until whole: shown once
            yield Delta(text="".join(state["text"]))
        for call in tools.done():
            yield Delta(tool_call=call)
        yield Delta(usage=billed(),
                    finish_reason="refusal" if state.get("refused") else state.get("finish"),
                    model=state.get("model"),
                    request_id=shown_id(state.get("request_id") or state.get("id")))

    def _billed(self, payload: Callable[[], dict[str, Any]], model: str,
                tools: _ToolCallAssembler, state: dict[str, Any],
                before: Callable[[], Usage | None] | None = None) -> Callable[[], Usage | None]:
        """What the stream was billed so far, asked when it ends or fails: its usage chunk's
        report, else (the chunk never came) a count of the prompt and of what arrived
        (:mod:`.unreported`); before the first chunk, what ``before`` says (the prompt, once
        the request reached the server: see :meth:`_unstarted`), else None."""
        def billed() -> Usage | None:
            if "usage" in state:
                return state["usage"]   # type: ignore[no-any-return]
            if not state.get("seen"):
                return before() if before is not None else None
            outputs = ["".join(state.get("text", ())),
                       *(v for p in tools.parts for v in (p["name"], p["arguments"]))]
            return counted_usage(payload(), model, outputs)
        return billed

    def _reading(self, prompt: Prompt, model: str, options: CallOptions) -> tuple[
            _ToolCallAssembler, dict[str, Any], Answered, Callable[[], Usage | None]]:
        """A stream's tool-call and state accumulators, the note of whether its request reached
        the server, and its bill (see :meth:`_billed`), told to the call loop's capture."""
        tools = _ToolCallAssembler()
        state: dict[str, Any] = {}
        reached = Answered()
        payload = functools.partial(self._stream_payload, prompt, model, options)
        billed = self._billed(payload, model, tools, state, self._unstarted(reached, payload))
        bill(billed)
        return tools, state, reached, billed

    def _ask_whole(self, e: Exception, model: str, credential: Credential | None,
                   state: dict[str, Any], billed: Callable[[], Usage | None]) -> bool:
        """True when ``e``, raised before anything arrived, refused streaming ``model`` (the
        reply is then asked for whole); False when only the close failed after the finish
        reason; else its provider error is raised, carrying what the stream was billed."""
        started = bool(state.get("seen"))   # a chunk came (not ``state``: it holds "page" too)
        if isinstance(e, self.sdk_error) and self._stream_refused(e, model, started):
            return True
        error = self._read_failed(e, credential, bool(state.get("finish")), state.get("headers"))
        if error is not None:
            secrets = [credential.secret] if credential else []
            raise self._charged(naming(error, self.request_id_header, state.get("request_id"),
                                       secrets), billed) from None
        return False

    @staticmethod
    def _charged(error: ProviderError, billed: Callable[[], Usage | None]) -> ProviderError:
        """``error`` carrying what its attempt was billed (see :meth:`_billed`)."""
        error.usage = billed()
        return error

    def _stream_refused(self, exc: BaseException, model: str, started: bool) -> bool:
        """A streamed call refused before anything arrived because ``model`` may not be streamed
        here (see :func:`refuses_streaming`): learned, and the reply is then asked for whole."""
        if started or not refuses_streaming(*status_and_body(exc)):
            return False
        self.refused.learn_unstreamed(model, self.name)
        return True

    def stream(self, prompt: Prompt, model: str, credential: Credential | None,
               options: CallOptions) -> Iterator[Delta]:
        """The reply as deltas. A structured reply (``response_format``) is held until whole,
        as Anthropic's output tool arrives: a stream cut inside its JSON has shown nothing, so
        the call loop asks again, and no caller is shown half an object it cannot use. Its
        pieces come meanwhile as drafts (``Delta.draft``), progress that is not the text; a
        choice's first tool call voids those shown (``Delta.redraft``): it is a tool round."""
        whole = self.refused.unstreamed(model)
        hold = bool(options.response_format)
        client = self._clients.get(credential)
        tools, state, reached, billed = self._reading(prompt, model, options)
        answered = None
        try:
            if not whole:
                stream = self._opened(client, prompt, model, options, credential, reached)
                with stream:
                    state["request_id"] = self._stated_id(stream)
                    state["headers"] = getattr(getattr(stream, "response", None), "headers", None)
                    answered = self._whole_in_stream(stream, prompt, model, options)
                    for chunk in () if answered is not None else stream:
                        yield from self._step(chunk, tools, state, hold)
                    state["page"] = a_page(stream)
        except self._read_errors as e:
            whole = self._ask_whole(e, model, credential, state, billed)
        if answered is not None or whole:
            yield from completion_deltas(answered if answered is not None
                                         else self.complete(prompt, model, credential, options))
            return
        yield from self._finish(tools, state, billed, hold)

    async def astream(self, prompt: Prompt, model: str, credential: Credential | None,
                      options: CallOptions) -> AsyncIterator[Delta]:
        whole = self.refused.unstreamed(model)
        hold = bool(options.response_format)
        client = self._clients.get(credential, is_async=True)
        tools, state, reached, billed = self._reading(prompt, model, options)
        answered = None
        try:
            if not whole:
                stream = await self._aopened(client, prompt, model, options, credential, reached)
                async with stream:
                    state["request_id"] = self._stated_id(stream)
                    state["headers"] = getattr(getattr(stream, "response", None), "headers", None)
                    answered = self._whole_in_stream(stream, prompt, model, options)
                    if answered is None:
                        async for chunk in stream:
                            for d in self._step(chunk, tools, state, hold):
                                yield d
                    state["page"] = a_page(stream)
        except self._read_errors as e:
            whole = self._ask_whole(e, model, credential, state, billed)
        if answered is not None or whole:
            done = (answered if answered is not None
                    else await self.acomplete(prompt, model, credential, options))
            for d in completion_deltas(done):
                yield d
            return
        for d in self._finish(tools, state, billed, hold):
            yield d

