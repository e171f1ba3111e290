"""Episodic-memory benchmark: ContextEngine.retrieve vs a bare FTS5 MATCH, side by side.

Builds a fresh ``sessions.db`` of N synthetic sessions (default 100,000; mixed Chinese and English
summaries with a Zipf-like vocabulary, Chinese written without spaces so jieba must segment it,
ages spread over 400 days), then runs the same queries through:

* ``bare``: the plain ``MATCH ... ORDER BY rank LIMIT k`` on a pre-built match string (no query
  segmentation, no over-fetch, no re-rank, no summary fetch): the floor any FTS5 design pays;
* ``full``: ``ContextEngine.retrieve(query, k, distinct_only=True)`` (what a turn recalls):
  segmentation, safe MATCH, 3x over-fetch, recency
  re-rank, summary fetch.

Each query is timed in both modes back to back (order alternating) after a warm-up pass.
``overhead_ratio = query_ms_p50 / bare_fts_ms_p50`` (goal <= 1.5). ``insert_per_s`` counts sessions
stored per second through ``ContextEngine.add_many`` (segmentation included) in batches, each
one transaction.

``--scale F`` also builds, in the same run, an archive F times smaller (today's archive, when the
main one is where it grows to) and asks it the same queries: ``scaling.query_ms_p50_ratio`` is the
per-turn recall cost at the large archive over the small one (goal: far below F; recall reads a
bounded part of the index whatever its size).

    python benchmarks/memory.py --json [--sessions N] [--queries Q] [--db FILE] [--scale F]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic.ranking import build_match
from hermes_core.agent.episodic.store import SessionRecord, SessionStore
from hermes_core.cli.argtypes import positive_int
from hermes_core.tokenize import segment_for_index


def _vocabularies() -> tuple[list[str], list[float], list[str], list[float]]:
    """Real word frequencies: English from the stdlib's pydoc topics text, Chinese from jieba's dict.

    A few thousand words per language with their natural (Zipf) frequencies, so bm25 sees common
    and rare terms the way a real memory would, rather than a tiny vocabulary in every document.
    """
    import os
    import pydoc_data.topics
    import re
    from collections import Counter
    from itertools import accumulate

    import jieba

    text = " ".join(pydoc_data.topics.topics.values())
    en = Counter(w.lower() for w in re.findall(r"[A-Za-z]{3,}", text))
    en_words = [w for w, n in en.most_common() if n >= 2]
    zh: list[tuple[str, int]] = []
    with open(os.path.join(os.path.dirname(jieba.__file__), "dict.txt"), encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2 and 2 <= len(parts[0]) <= 4 and parts[1].isdigit():
                zh.append((parts[0], int(parts[1])))
    zh.sort(key=lambda p: -p[1])
    zh = zh[:6000]
    return (en_words, list(accumulate(float(en[w]) for w in en_words)),
            [w for w, _ in zh], list(accumulate(float(n) for _, n in zh)))


ZH_GLUE = ["我们", "讨论了", "关于", "的问题", "以及", "决定", "需要", "已经", "完成", "修复"]
EN_GLUE = ["we", "discussed", "the", "and", "decided", "to", "fix", "a", "with", "for", "after"]


def _zipf_choice(rng: random.Random, words: list[str], cum_weights: list[float]) -> str:
    return rng.choices(words, cum_weights=cum_weights)[0]


Vocab = tuple[list[str], list[float], list[str], list[float]]


def synth_query(rng: random.Random, v: Vocab) -> str:
    if rng.random() < 0.5:
        words = [_zipf_choice(rng, v[0], v[1]) for _ in range(rng.randint(2, 4))]
        return "how do I handle " + " ".join(words) + "?"
    words = [_zipf_choice(rng, v[2], v[3]) for _ in range(rng.randint(2, 3))]
    return "上次" + "和".join(words) + "的问题怎么解决"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[k]


class SentenceSegmenter:
    """``segment_for_index`` of a summary built from pooled sentences, each segmented once.

    A scaled archive is millions of summaries; jieba on each would take hours. Summaries are
    joined from a pool of sentences that each end in punctuation, so the index text of a summary
    is the join of its sentences' index texts (``agreement`` checks a sample against the real
    segmenter and is reported). Anything not built from the pool goes through the real one.
    """

    def __init__(self) -> None:
        self.known: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        got = self.known.get(text)
        return got if got is not None else segment_for_index(text)

    def remember(self, summary: str, parts: list[str]) -> None:
        self.known[summary] = " ".join(p for p in parts if p)

    def agreement(self, texts: list[str]) -> float:
        same = sum(1 for t in texts if self(t) == segment_for_index(t))
        return round(same / max(1, len(texts)), 4)


def _sentence(rng: random.Random, v: Vocab) -> tuple[str, list[str]]:
    if rng.random() < 0.5:
        words = [_zipf_choice(rng, v[0], v[1]) for _ in range(rng.randint(5, 10))]
        glue = [rng.choice(EN_GLUE) for _ in range(3)]
        return " ".join(glue[:2] + words[:4] + glue[2:] + words[4:]).capitalize() + ".", words[:2]
    words = [_zipf_choice(rng, v[2], v[3]) for _ in range(rng.randint(3, 6))]
    return rng.choice(ZH_GLUE) + "".join(words) + rng.choice(ZH_GLUE) + "。", words[:2]


def build(db: Path, sessions: int, seed: int, batch: int, now: float, vocab: Vocab
          ) -> dict[str, object]:
    """An archive of ``sessions`` sessions over a year: English and unspaced Chinese sentences
    from a pool (segmented once each), 1 in 30 a long summary of 30-60 sentences, up to 16 tags."""
    rng = random.Random(seed)
    pool_n = max(200, min(200_000, sessions))
    pool = [_sentence(rng, vocab) for _ in range(pool_n)]
    seg = SentenceSegmenter()
    pool_seg = [segment_for_index(text) for text, _ in pool]
    with SessionStore(db) as probe:   # the real segmenter's id: a later open must not re-index
        segment_id = probe.segment_id
    store = SessionStore(db, segment=seg, segment_id=segment_id)
    inserted, t_store, sample = 0, 0.0, []
    for start in range(0, sessions, batch):
        records = []
        for i in range(start, min(sessions, start + batch)):
            n = rng.randint(30, 60) if rng.random() < 1 / 30 else rng.randint(4, 8)
            picks = [rng.randrange(pool_n) for _ in range(n)]
            summary = " ".join(pool[j][0] for j in picks) + f" Ticket {i}."
            seg.remember(summary, [pool_seg[j] for j in picks] + [f"ticket {i}"])
            topical = [w for j in picks for w in pool[j][1]]
            tags = tuple(dict.fromkeys(topical))[:rng.choice((2, 4, 8, 16))]
            records.append(SessionRecord(f"bench-{i:08d}", summary, tags,
                                         created_at=now - rng.uniform(0, 365) * 86_400,
                                         source="bench"))
            if i % max(1, sessions // 200) == 0:   # 200 summaries spread over the archive
                sample.append(summary)
        t0 = time.perf_counter()
        inserted += sum(1 for r in store.upsert_many(records) if r.status == "inserted")
        t_store += time.perf_counter() - t0
        seg.known.clear()
    store.close()
    return {"stored": inserted, "insert_s": round(t_store, 2),
            "insert_per_s": round(inserted / t_store, 1) if t_store else None,
            "segmentation_agreement": seg.agreement(sample)}


def hostile_queries(rng: random.Random, v: Vocab) -> list[str]:
    """What a user may type that FTS5 would read as syntax, or that costs a lot to look up."""
    w = [_zipf_choice(rng, v[0], v[1]) for _ in range(6)]
    z = [_zipf_choice(rng, v[2], v[3]) for _ in range(6)]
    return [
        f'"{w[0]} {w[1]}" AND NOT {w[2]}', f"NEAR({w[0]} {w[1]}, 2)", f"summary:{w[0]} tags:{w[1]}",
        f"{w[0]}* {w[1][:3]}*", "*", "?!... --- ;;; )))", '"""', "^" + w[3], f"{w[4]} OR {w[5]}",
        "".join(z) * 20, ("".join(z) + "，") * 200, " ".join(w) * 700,   # CJK runs, ~10k chars
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(10_000)),
        f"{w[0][:5]}ing {w[1][:4]}ation {w[2][:6]}", "什么 的 了 是 the a of",
    ]


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def run(sessions: int, queries: int, db: Path, seed: int, batch: int, k: int) -> dict[str, object]:
    vocab = _vocabularies()
    now = time.time()
    built = build(db, sessions, seed, batch, now, vocab)
    engine = ContextEngine(db, clock=lambda: now)
    qrng = random.Random(seed + 1)   # the same queries whatever the archive's size
    qs = [synth_query(qrng, vocab) for _ in range(queries)]
    hostile = hostile_queries(qrng, vocab)
    matches = [build_match(q) for q in qs]
    conn = engine.store.connection
    bare_sql = ("SELECT rowid, rank FROM sessions_fts WHERE sessions_fts MATCH ?"
                " ORDER BY rank LIMIT ?")

    def bare(match: str | None) -> int:
        return len(conn.execute(bare_sql, (match, k)).fetchall()) if match else 0

    for q, m in zip(qs[:20], matches[:20], strict=True):  # warm-up: page cache, jieba, statements
        bare(m)
        engine.retrieve(q, k, distinct_only=True)
    bare_ms: list[float] = []
    full_ms: list[float] = []
    hits = 0
    for i, (q, m) in enumerate(zip(qs, matches, strict=True)):
        order = ("bare", "full") if i % 2 == 0 else ("full", "bare")
        for mode in order:
            t = time.perf_counter()
            if mode == "bare":
                bare(m)
                bare_ms.append((time.perf_counter() - t) * 1000)
            else:
                hits += bool(engine.retrieve(q, k, distinct_only=True))
                full_ms.append((time.perf_counter() - t) * 1000)
    hostile_ms = [min(timed(lambda q=q: engine.retrieve(q, k, distinct_only=True)) for _ in range(3))
                  for q in hostile]
    engine.close()
    p50, bare50 = statistics.median(full_ms), statistics.median(bare_ms)
    return {
        "sessions": sessions,
        **built,
        "queries": queries,
        "max_results": k,
        "query_ms_p50": round(p50, 3),
        "query_ms_p95": round(percentile(full_ms, 0.95), 3),
        "query_ms_p99": round(percentile(full_ms, 0.99), 3),
        "bare_fts_ms_p50": round(bare50, 3),
        "bare_fts_ms_p95": round(percentile(bare_ms, 0.95), 3),
        "overhead_ratio": round(p50 / bare50, 3) if bare50 else None,
        "hostile_ms_p50": round(statistics.median(hostile_ms), 3),
        "hostile_ms_max": round(max(hostile_ms), 3),
        "queries_with_results": hits,
        "db_bytes": db.stat().st_size,
        "vocabulary": {"en": len(vocab[0]), "zh": len(vocab[2])},
    }


def ratio(big: object, small: object) -> float | None:
    b, s = float(str(big)), float(str(small))
    return round(b / s, 3) if s else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sessions", type=positive_int, default=100_000)
    ap.add_argument("--queries", type=positive_int, default=300)
    ap.add_argument("--max-results", type=positive_int, default=5)
    ap.add_argument("--batch", type=positive_int, default=10_000, help="sessions per insert transaction")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--db", type=Path, help="where to build the database (default: a temp dir)")
    ap.add_argument("--scale", type=positive_int, default=None, metavar="F",
                    help="build the archive F times --sessions and also today's (--sessions), same "
                         "queries, in the same run; report their ratios")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hermes-mem-bench-") as tmp:
        db = args.db or Path(tmp) / "sessions.db"
        if db.exists():
            print(f"{db} exists; give a new path", file=sys.stderr)
            return 2
        scale = args.scale if args.scale is not None and args.scale > 1 else 1
        result = run(args.sessions * scale, args.queries, db, args.seed, args.batch,
                     args.max_results)
        if scale > 1:   # today's archive, same queries, in the same run
            small = run(args.sessions, args.queries, Path(tmp) / "small.db", args.seed,
                        args.batch, args.max_results)
            result["scaling"] = {
                "archive_ratio": scale, "small_sessions": small["sessions"],
                **{f"small_{key}": small[key] for key in (
                    "query_ms_p50", "query_ms_p99", "bare_fts_ms_p50", "hostile_ms_p50",
                    "hostile_ms_max", "queries_with_results", "insert_per_s")},
                **{f"{key}_ratio": ratio(result[key], small[key]) for key in (
                    "query_ms_p50", "query_ms_p99", "bare_fts_ms_p50", "hostile_ms_max")}}
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:22} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
