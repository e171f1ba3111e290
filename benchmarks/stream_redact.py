"""Scrubbing a streamed reply piece by piece, against scrubbing the whole reply once.

The agent scrubs a streamed reply (what the REPL prints) through
:class:`hermes_core.redact.StreamRedactor`, which must hold back only what could still become
a key, so each piece costs a look at its tail as well as the scrub of what it releases. A reply
of about C characters (English and Chinese prose, a configured key of an unusual shape in the
middle) is cut into pieces of P characters (deltas are a few characters each), with K configured
keys of odd shapes (spaces, accents, regex metacharacters, short ones: each registered in all
its encodings). Timed back to back R times:

* ``whole``: ``redact()`` of the finished reply, what a non-streaming turn costs;
* ``stream``: ``feed()`` of every piece, then ``flush()``.

Prints medians, the cost per piece and ``ratio = stream_ms_p50 / whole_ms_p50``.

    python benchmarks/stream_redact.py --json [--chars C] [--piece P] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from hermes_core.cli.argtypes import positive_int
from hermes_core.redact import Redactor, StreamRedactor, redact

KEYS = ("my secret key 42", "a.b*c+(d)?[x]|y", "p@ss:w/rd&x=1;z", "Zq7x", "zq81-PLAINTOKEN-77xx")
PROSE = ("The deploy finished at 10:42 and the logs look clean; next, rotate the staging keys. "
         "部署已经完成，日志看起来正常；接下来轮换测试环境的密钥。")


def reply(chars: int) -> str:
    body = (PROSE * (chars // len(PROSE) + 1))[:chars]
    middle = len(body) // 2
    return f"{body[:middle]} the key is {KEYS[0]} and {KEYS[1]}; {body[middle:]}"


def pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def stream_ms(chunks: list[str]) -> float:
    t = time.perf_counter()
    scrub = StreamRedactor()
    shown = [scrub.feed(c) for c in chunks]
    shown.append(scrub.flush())
    elapsed = (time.perf_counter() - t) * 1000
    assert KEYS[0] not in "".join(shown)
    return elapsed


def whole_ms(text: str) -> float:
    t = time.perf_counter()
    redact(text)
    return (time.perf_counter() - t) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chars", type=positive_int, default=4000)
    ap.add_argument("--piece", type=positive_int, default=4)
    ap.add_argument("--repeat", type=positive_int, default=15)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    Redactor(KEYS)
    text = reply(args.chars)
    chunks = pieces(text, args.piece)
    stream_ms(chunks), whole_ms(text)   # warm the caches (compiled patterns, encoded forms)
    streamed: list[float] = []
    whole: list[float] = []
    for _ in range(args.repeat):
        streamed.append(stream_ms(chunks))
        whole.append(whole_ms(text))
    out = {"chars": len(text), "pieces": len(chunks), "keys": len(KEYS), "repeat": args.repeat,
           "stream_ms_p50": round(statistics.median(streamed), 3),
           "whole_ms_p50": round(statistics.median(whole), 3)}
    out["us_per_piece"] = round(out["stream_ms_p50"] * 1000 / len(chunks), 2)
    out["ratio"] = round(statistics.median(streamed) / statistics.median(whole), 1)
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{len(chunks)} pieces of {args.piece} chars: streamed {out['stream_ms_p50']} ms "
              f"({out['us_per_piece']} us a piece), whole {out['whole_ms_p50']} ms (x{out['ratio']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
