import asyncio, json, gzip
import httpx, pytest
from hermes_core.testing import OPENAI_URL, ANTHROPIC_URL, SSE_HEADERS, openai_chat_stream, anthropic_stream
from hermes_core.testing.builders import _sse
from hermes_core.providers._sdk import delta_completion
from hermes_core.types import ToolCall
from tests.providers.conftest import make, PROMPT, OPTS

def ev(t, d): return (t, {"type": t, **d})
START = anthropic_stream(("x",))  # unused
def astream_events(extra_mid=(), stop=True, usage=None, tool=None, stop_reason="end_turn"):
    from hermes_core.testing.builders import anthropic_message
    start = anthropic_message("", model="claude", input_tokens=10, output_tokens=1); start["stop_reason"] = None
    evs = [("message_start", {"type":"message_start","message":start}),
           ("content_block_start", {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
           ("content_block_delta", {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"你好"}}),
           *extra_mid,
           ("content_block_delta", {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"世界"}}),
           ("content_block_stop", {"type":"content_block_stop","index":0})]
    evs.append(("message_delta", {"type":"message_delta","delta":{"stop_reason":stop_reason,"stop_sequence":None},"usage": usage if usage is not None else {"output_tokens":3}}))
    if stop: evs.append(("message_stop", {"type":"message_stop"}))
    return _sse(evs)

A = {
 "ping": astream_events(extra_mid=[("ping", {"type":"ping"})]),
 "comment": b"\n\n".join(x + (b"\n\n: keepalive" if i == 2 else b"") for i, x in enumerate(astream_events().split(b"\n\n"))),
 "keep6": b"\n\n".join(astream_events().split(b"\n\n")[:6]) + b"\n\n",
 "no_stop": astream_events(stop=False),
 "usage_neg": astream_events(usage={"output_tokens": -5}),
 "usage_missing": astream_events(usage={}),
 "usage_null": astream_events(usage={"output_tokens": None, "input_tokens": None}),
 "unknown_event": astream_events(extra_mid=[("future_thing", {"type":"future_thing","x":1})]),
 "unknown_delta": astream_events(extra_mid=[("content_block_delta", {"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}})]),
}
O = {
 "utf8": openai_chat_stream(("你好", "世界", "😀")),
}

def body_chunks(body, n, how):
    chunks = [body[i:i+n] for i in range(0, len(body), n)]
    if how == "astream":
        async def g():
            for c in chunks: yield c
        return g()
    return iter(chunks)

def run(p, cred, model, how):
    if how == "stream":
        ds = list(p.stream(PROMPT, model, cred, OPTS))
    else:
        async def c(): return [x async for x in p.astream(PROMPT, model, cred, OPTS)]
        ds = asyncio.run(c())
    return delta_completion(ds, model, p.name)

@pytest.mark.parametrize("case", list(A) + list(O))
@pytest.mark.parametrize("how", ["stream", "astream"])
@pytest.mark.parametrize("n", [1, 7])
def test_probe(case, how, n, respx_mock):
    kind = "anthropic" if case in A else "openai"
    body = A.get(case) or O[case]
    p, cred, url, model = make(kind)
    respx_mock.post(url).mock(side_effect=lambda r: httpx.Response(200, headers=SSE_HEADERS, content=body_chunks(body, n, how)))
    try:
        done = run(p, cred, model, how)
        print(f"\nPROBE {case} {how} {n}: OK text={done.text!r} finish={done.finish_reason} usage={done.usage}")
    except Exception as e:
        print(f"\nPROBE {case} {how} {n}: {type(e).__name__}: {str(e)[:300]}")
