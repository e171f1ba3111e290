"""What the idle watch costs a streamed reply, chunk by chunk, as the SDK reads it.

Every streamed request runs under :func:`hermes_core.providers.deadline.bounded`: its transport
watches each chunk (the budgets, the lines that carry content) before the HTTP client decodes it
for the SDK. A gzip or deflate stream must be inflated to be watched; this measures whether that
is paid once or twice. An OpenAI stream of N events, sent one event a chunk as it is on the
wire (``identity``) or gzip-compressed and flushed event by event (``gzip``, as a compressing
proxy streams), is read through ``response.iter_bytes()`` (what the SDKs iterate), R times;
``gzip-whole`` is a whole (non-streamed) answer of the same words, one gzip member, sent in 4 KB
chunks (read by the client alone, or by the watch where it inflates whole answers too):

* ``bare``: the client alone, no watch (the same stream, the client's own decoding);
* ``watched``: through :class:`DeadlineTransport` under ``bounded`` (this tree's module);
* ``against`` (``--against REV``): the same through ``hermes_core/providers/deadline.py`` as it
  is at git revision REV, loaded beside this tree's (before -> after in one run).

Prints medians, the watch's cost per chunk (``watched - bare``) and ``ratio = watched / bare``;
with ``--against``, ``after_over_before`` of the per-chunk costs.

    python benchmarks/stream_watch.py --json [--events N] [--repeat R] [--against REV]
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx2
from httpx2._decoders import SUPPORTED_DECODERS

from hermes_core.cli.argtypes import positive_int
from hermes_core.providers import deadline
from hermes_core.testing import openai_chat_completion, openai_chat_stream

URL = "https://bench.test/v1/chat/completions"
ROUNDS = 50   # streams read per timed sample
ENCODINGS = ("identity", "gzip", "gzip-whole", "zstd")   # zstd where the client decodes it


def chunks(events: int, encoding: str) -> list[bytes]:
    words = tuple(f"word{i} " for i in range(events))
    if encoding == "gzip-whole":
        whole = gzip.compress(json.dumps(openai_chat_completion("".join(words))).encode())
        return [whole[at:at + 4096] for at in range(0, len(whole), 4096)]
    body = openai_chat_stream(words)
    pieces = [e + b"\n\n" for e in body.split(b"\n\n") if e]
    if encoding == "identity":
        return pieces
    if encoding == "zstd":   # one frame flushed event by event, as a compressing proxy streams
        # httpx2's zstd codec, present when it decodes zstd
        try:
            from compression import zstd  # type: ignore[import-not-found]   # Python 3.14+
        except ImportError:
            from backports import zstd
        pack = zstd.ZstdCompressor()
        return [pack.compress(p, zstd.ZstdCompressor.FLUSH_BLOCK) for p in pieces] + [
            pack.flush()]
    gz = zlib.compressobj(wbits=16 + zlib.MAX_WBITS)
    return [gz.compress(p) + gz.flush(zlib.Z_SYNC_FLUSH) for p in pieces] + [gz.flush()]


def client(body: list[bytes], encoding: str, module: ModuleType | None) -> httpx2.Client:
    headers = {"content-type": "text/event-stream"}
    if encoding == "gzip-whole":
        headers = {"content-type": "application/json", "content-encoding": "gzip"}
    elif encoding != "identity":
        headers["content-encoding"] = encoding

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers=headers, content=iter(body))

    transport: Any = httpx2.MockTransport(answer)
    if module is not None:
        transport = module.DeadlineTransport(transport)
    return httpx2.Client(transport=transport)


def read_us(http: httpx2.Client, module: ModuleType | None, idle_s: float | None = 30.0) -> float:
    """Microseconds spent iterating ROUNDS streams' bodies (the request itself not counted)."""
    spent = 0.0
    for _ in range(ROUNDS):
        if module is not None:
            bound = module.bounded(600.0, idle_s)
            bound.__enter__()
        with http.stream("POST", URL) as response:
            t = time.perf_counter()
            for _piece in response.iter_bytes():
                pass
            spent += time.perf_counter() - t
        if module is not None:
            bound.__exit__(None, None, None)
    return spent * 1e6


def load_at(rev: str) -> ModuleType:
    """``deadline.py`` as it is at git revision ``rev``, imported under another name, with the
    watch and the inflaters of ``rev`` (``watch.py``, ``inflate.py`` where ``rev`` has them):
    imported by their own names, they would be this tree's, timed on both sides."""
    root = Path(__file__).resolve().parent.parent
    folder = Path(tempfile.mkdtemp())
    module: ModuleType | None = None
    for name in ("inflate", "watch", "deadline"):   # each imports the ones before it
        shown = subprocess.run(["git", "-C", str(root), "show",
                                f"{rev}:hermes_core/providers/{name}.py"], capture_output=True)
        if shown.returncode:
            if name == "deadline":
                raise SystemExit(f"no hermes_core/providers/deadline.py at {rev}")
            continue   # before the split: deadline.py holds it
        source = shown.stdout
        for moved in ("inflate", "watch"):
            source = source.replace(f"hermes_core.providers.{moved} ".encode(),
                                    f"{moved}_against ".encode())
        path = folder / f"{name}_against.py"
        path.write_bytes(source)
        spec = importlib.util.spec_from_file_location(f"{name}_against", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    assert module is not None
    return module


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=positive_int, default=200)
    ap.add_argument("--repeat", type=positive_int, default=9)
    ap.add_argument("--against", metavar="REV", help="a git revision whose deadline.py to time too")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    modules: dict[str, ModuleType | None] = {"bare": None, "watched": deadline}
    if args.against:
        modules["against"] = load_at(args.against)
    out: dict[str, Any] = {"events": args.events, "repeat": args.repeat, "rounds": ROUNDS,
                           "against": args.against}
    encodings = [e for e in ENCODINGS if e != "zstd" or "zstd" in SUPPORTED_DECODERS]
    for encoding in encodings:
        body = chunks(args.events, encoding)
        idle = None if encoding == "gzip-whole" else 30.0
        clients = {name: client(body, encoding, m) for name, m in modules.items()}
        samples: dict[str, list[float]] = {name: [] for name in modules}
        for name in modules:
            read_us(clients[name], modules[name], idle)   # warm up
        for _ in range(args.repeat):
            for name, m in modules.items():   # interleaved: load drifts alike for each
                samples[name].append(read_us(clients[name], m, idle) / (ROUNDS * len(body)))
        med = {name: statistics.median(v) for name, v in samples.items()}
        row = {f"{name}_us_per_chunk_p50": round(v, 3) for name, v in med.items()}
        row["watch_us_per_chunk"] = round(med["watched"] - med["bare"], 3)
        row["ratio"] = round(med["watched"] / med["bare"], 3)
        if args.against:
            row["against_watch_us_per_chunk"] = round(med["against"] - med["bare"], 3)
            row["after_over_before"] = round(med["watched"] / med["against"], 3)
        out[encoding] = row
    if args.json:
        print(json.dumps(out))
    else:
        for encoding in encodings:
            print(encoding, out[encoding])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
