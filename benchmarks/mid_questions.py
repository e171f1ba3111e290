"""What finding the questions asked in the unread middle of a huge message costs recall's query
(``ranking.query_terms``, decision 263, review s55rC), by what fills that middle.

    python benchmarks/mid_questions.py --json [--rounds 7] [--chars 1000000]

Each message is ``--chars`` long, its question in the middle. ``plain`` (the baseline, timed in
the same round) is a log with no question mark; ``urls`` a log of requests whose links carry
query strings (``?id=3&page=2``); ``sql`` a log of statements with placeholders (``id = ? AND``);
``lost_encoding`` a log whose Chinese messages came out as "?" (what a wrong codec leaves),
``lost_spaced`` the same of a spaced language. On 7df0b47c the middle question search read back
every "?" one by one: a middle of "?" with no space after any cost a Python step per mark.
Each ``*_ratio`` is that message's median over ``plain``'s. Medians of ``--rounds``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from hermes_core.agent.episodic.ranking import query_terms

QUESTION = "why does the haproxy failover keep flapping?\n"


def _filled(line: str, chars: int) -> str:
    half = line * (chars // 2 // len(line) + 1)
    return half[:chars // 2] + "\n" + QUESTION + half[:chars // 2]


def messages(chars: int) -> dict[str, str]:
    return {
        "plain": _filled("2026-12-01 10:00:00 INFO worker-7 processed batch 42 ok\n", chars),
        "urls": _filled("GET https://api.example.com/v1/items?id=3&page=2 200 12ms\n", chars),
        "sql": _filled("DEBUG SELECT * FROM orders WHERE id = ? AND status = ? LIMIT 1\n", chars),
        "lost_encoding": _filled("2026-12-01 10:00:00 ERROR ???????????????????????(17)\n", chars),
        "lost_spaced": _filled("???? ??????? ???????????????? ???\n", chars),
    }


def _ms(text: str) -> float:
    t = time.perf_counter()
    query_terms(text)
    return (time.perf_counter() - t) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--chars", type=int, default=1_000_000, help="length of each message")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.chars < 20_000:
        ap.error("--rounds must be at least 1 and --chars at least 20000")
    texts = messages(args.chars)
    for text in texts.values():   # jieba's dictionary and the regexes loaded before timing
        query_terms(text)
    times: dict[str, list[float]] = {name: [] for name in texts}
    for _ in range(args.rounds):
        for name, text in texts.items():
            times[name].append(_ms(text))
    med = {f"{name}_ms": round(statistics.median(ts), 3) for name, ts in times.items()}
    out: dict[str, float | int] = {"chars": args.chars, "rounds": args.rounds, **med}
    for name in texts:
        if name != "plain":
            out[f"{name}_ratio"] = round(med[f"{name}_ms"] / med["plain_ms"], 2)
    if args.json:
        print(json.dumps(out))
    else:
        for key, value in out.items():
            print(f"{key:>20}  {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
