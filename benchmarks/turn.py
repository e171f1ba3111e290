"""A turn's own cost before the HTTP call, at growing catalog and memory sizes, with anchors.

    python benchmarks/turn.py --json [--sizes 20x1000,200x10000] [--cache-dir DIR] [--embeddings]

For each (skills, sessions) size an offline Agent over a synthetic catalog (the MetaTool and
HammerBench-zh dev skills, repeated with varied names and wording past their 1,110, each with two
synonyms and one trigger) and a synthetic sessions database runs ``Agent.prepare`` on messages that
follow five turns of history. Reported per size:

* ``prepare_ms_p50/p95`` and the phase breakdown (``L1``..``L5`` from the retrieval's timings,
  ``memories`` = the episodic recall, ``other`` = the rest of prepare);
* ``bm25_ms_p50`` (the index: ``bm25s`` plus the verbatim bonus) beside ``bm25s_ms_p50`` (bare
  ``bm25s`` scoring the same tokens of the same skills): ``bm25_vs_bm25s`` (goal <= 2);
* ``episodic_ms_p50/p95`` (``ContextEngine.retrieve`` with the turn's RetrievalQuery) beside
  ``bare_fts_ms_p50`` (a bare single-term ``MATCH ... ORDER BY rank LIMIT 5`` of the same database);
* the recall probe: ``planted_found`` of ``planted`` sessions with rare words, each asked about in
  a message mixing its rare words with common ones (goal: every one found at every size);
* ``pasted_log_phrase_ms``: L1 triggers + L3 synonyms on a 4,000-character pasted log.

Top level: ``growth_200x10k_to_largest`` (prepare p50 ratio; goal <= 3). Databases are built once
into ``--cache-dir`` (default ~/.cache/hermes-bench) and reused: the 1M-session one takes minutes.
Lexical only unless ``--embeddings`` (loads the embedding models: slow on a busy machine).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from hermes_core.agent.agent import Agent
from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic.ranking import query_terms, quote_term
from hermes_core.agent.episodic.store import SessionRecord
from hermes_core.cli.argtypes import positive_int
from hermes_core.config import load_settings
from hermes_core.providers.offline import OfflineProvider
from hermes_core.retrieval.bm25 import bm25_tokens, skill_tokens
from hermes_core.retrieval.retriever import SkillRetriever
from hermes_core.tokenize import tokenize
from hermes_core.types import Message, RetrievalQuery, Skill

ROOT = Path(__file__).resolve().parents[1]
# the eval data sits beside the repo (../shared/eval); a worktree one level deeper finds it too
EVAL = Path(os.environ.get("HERMES_EVAL_DIR") or next(
    (str(p) for p in (ROOT.parent / "shared" / "eval", ROOT.parent.parent / "shared" / "eval")
     if p.is_dir()), str(ROOT.parent / "shared" / "eval")))
DB_VERSION = "v3"   # v3: stamped with the store's own segmenter id (v2 archives re-index on open)
PLANTED = 10
RARE = ["quorvex", "zemblar", "plinthor", "vasquil", "droventa", "kelmori", "sprandel", "tovarix",
        "mirelth", "gondasy", "fluxamor", "brevnik", "syldrane", "ortavio", "cazmire", "pelquor",
        "threndil", "ulvasco", "nimbrel", "jostavar"]

_spec = importlib.util.spec_from_file_location("hermes_bench_memory", Path(__file__).with_name("memory.py"))
assert _spec is not None and _spec.loader is not None
_memory = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_memory)


def pool_summary(rng: random.Random, vocab: Any) -> tuple[str, tuple[str, ...]]:
    """4-8 of memory.py's sentences (English, or unspaced Chinese) and up to 4 of their topical
    words as tags: the same draws, in the same order, as the generator the cached archives of
    ``DB_VERSION`` were built with, so an archive built before stays valid."""
    sentences = [_memory._sentence(rng, vocab) for _ in range(rng.randint(4, 8))]
    tags = tuple(dict.fromkeys(w for _, words in sentences for w in words))[:4]
    return " ".join(text for text, _ in sentences), tags


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[max(0, min(len(s) - 1, round(q * (len(s) - 1))))]


def r3(x: float) -> float:
    return round(x, 3)


# ------------------------------------------------------------------ catalog

def base_skills() -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    for ds in ("metatool", "hammerbench-zh"):
        path = EVAL / ds / "skills.jsonl"
        if path.exists():
            out.extend(json.loads(line) for line in path.open(encoding="utf-8") if line.strip())
    if not out:
        raise SystemExit(f"no eval catalogs under {EVAL} (set HERMES_EVAL_DIR)")
    return out


def catalog(n: int, seed: int = 7) -> list[Skill]:
    """``n`` skills: the real ones first, then variants with another name and shuffled wording."""
    rng = random.Random(seed)
    base = base_skills()
    out: list[Skill] = []
    for i in range(n):
        src = base[i % len(base)]
        words = src["description"].split()
        if i >= len(base):
            rng.shuffle(words)
        desc = " ".join(words) if words else src["description"]
        toks = tokenize(desc) or [src["name"]]
        syn = []
        for _ in range(2):
            j = rng.randrange(len(toks))
            syn.append(" ".join(toks[j:j + rng.randint(2, 3)]))
        j = rng.randrange(len(toks))
        trig = " ".join(toks[j:j + 4]) + f" v{i}"   # four words and a tag: seldom in a message
        name = src["name"] if i < len(base) else f"{src['name']}-v{i}"
        out.append(Skill(name, desc, triggers=(trig,), synonyms=tuple(syn)))
    return out


def write_catalog(skills: list[Skill], path: Path) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for s in skills:
            fh.write(json.dumps({"name": s.name, "description": s.description,
                                 "triggers": list(s.triggers), "synonyms": list(s.synonyms)},
                                ensure_ascii=False) + "\n")


# ------------------------------------------------------------------ sessions database

def planted_summary(i: int) -> tuple[str, str]:
    a, b = RARE[(2 * i) % len(RARE)], RARE[(2 * i + 1) % len(RARE)]
    summary = (f"We traced the {a} outage to the {b} cache and fixed the deploy script; the service "
               f"is stable again. 我们修复了部署问题。")
    message = f"what did we do last time about the {a} outage and the {b} cache after the deploy?"
    return summary, message


POOL = 5_000   # distinct synthetic summaries; each session adds its own reference words


def build_db(path: Path, sessions: int, seed: int) -> float:
    """Synthetic sessions with PLANTED probes spread through.

    Summaries come from benchmarks/memory.py's generator (Zipf-distributed English and unspaced
    Chinese): a pool of POOL of them, each session one of them plus its own reference number and
    two more pool words, so every summary is distinct. The pool's segmentation is cached (the
    index holds exactly what ``segment_for_index`` gives), so a million sessions build in minutes.
    """
    from functools import lru_cache

    from hermes_core.agent.episodic.store import SessionStore
    from hermes_core.tokenize import segment_for_index

    rng = random.Random(seed)
    vocab = _memory._vocabularies()
    pool = [pool_summary(rng, vocab) for _ in range(min(POOL, sessions))]
    cached = lru_cache(maxsize=POOL * 2)(segment_for_index)

    def segment(text: str) -> str:
        head, sep, tail = text.partition(" | ref ")
        return cached(head) + (" " + segment_for_index(tail) if sep else "")

    now = time.time()
    tmp = path.with_suffix(".building")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        if p.exists():
            p.unlink()
    t0 = time.perf_counter()
    with SessionStore(tmp) as probe:   # the default segmenter's id: the open below must not re-index
        segment_id = probe.segment_id
    store = SessionStore(tmp, segment=segment, segment_id=segment_id)
    planted_at = {int((k + 0.5) * sessions / PLANTED): k for k in range(PLANTED)}
    batch = 20_000
    for start in range(0, sessions, batch):
        records = []
        for i in range(start, min(sessions, start + batch)):
            if i in planted_at:
                summary, _ = planted_summary(planted_at[i])
                tags: tuple[str, ...] = ("planted",)
            else:
                base, tags = pool[rng.randrange(len(pool))]
                extra = " ".join(_memory._zipf_choice(rng, vocab[0], vocab[1]) for _ in range(2))
                summary = f"{base} | ref {i:x} {extra}"
            records.append(SessionRecord(f"bench-{i:07d}", summary, tags,
                                         created_at=now - rng.uniform(0, 400) * 86_400, source="bench"))
        store.upsert_many(records)
        if sessions >= 100_000:
            print(f"  built {min(sessions, start + batch):,}/{sessions:,} sessions", file=sys.stderr)
    store.close()
    engine = ContextEngine(tmp)   # opens as a user would: the tokenizer stamp must match
    reindexed = engine.store.reindexed
    engine.close()
    if reindexed:
        raise SystemExit(f"{tmp}: the index was rebuilt on open; the cached segmentation differs")
    tmp.rename(path)
    return time.perf_counter() - t0


def cached_db(cache: Path, sessions: int, seed: int) -> tuple[Path, float | None]:
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"sessions-{sessions}-seed{seed}-{DB_VERSION}.db"
    if path.exists():
        return path, None
    print(f"building {path} ({sessions:,} sessions, once)", file=sys.stderr)
    return path, build_db(path, sessions, seed)


# ------------------------------------------------------------------ messages

HISTORY = [
    Message("user", "I am cleaning up our team's tooling and want a few recommendations."),
    Message("assistant", "Sure: tell me what you use today and what hurts the most."),
    Message("user", "Mostly shell scripts around the deploy and a shared spreadsheet of incidents."),
    Message("assistant", "A small runbook plus an incident template would already help."),
    Message("user", "帮我把这些整理成一份清单"),
    Message("assistant", "好的，我会整理一份清单。"),
]


def messages(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    qs: list[str] = []
    for ds in ("metatool", "hammerbench-zh"):
        path = EVAL / ds / "queries.dev.jsonl"
        if path.exists():
            qs.extend(json.loads(line)["query"] for line in path.open(encoding="utf-8") if line.strip())
    rng.shuffle(qs)
    return qs[:n]


def pasted_log(seed: int) -> str:
    rng = random.Random(seed)
    lines = []
    while sum(len(x) + 1 for x in lines) < 4_000:
        lines.append(f"2026-01-{rng.randint(1, 28):02d} ERROR worker[{rng.randint(1, 99)}] "
                     f"connection reset by peer while reading response id={rng.getrandbits(40):x}")
    return "\n".join(lines)[:4_000]


# ------------------------------------------------------------------ one size

def run_size(n_skills: int, n_sessions: int, args: argparse.Namespace) -> dict[str, Any]:
    db, built_s = cached_db(args.cache_dir, n_sessions, args.seed)
    skills = catalog(n_skills)
    out: dict[str, Any] = {"skills": n_skills, "sessions": n_sessions,
                           "db_built_s": r3(built_s) if built_s is not None else "cached"}
    with tempfile.TemporaryDirectory(prefix="hermes-turn-bench-") as tmp:
        home = Path(tmp)
        cat = home / "catalog.jsonl"
        write_catalog(skills, cat)
        settings = load_settings({"home": str(home),
                                  "skill_utils": {"catalogs": [str(cat)], "embeddings": args.embeddings,
                                                  "refresh_interval_s": None},
                                  "context_engine": {"db_path": str(db)}}, env={})
        agent = Agent(settings, provider=OfflineProvider())
        agent.history.extend(HISTORY)
        engine = agent.context_engine
        assert engine is not None and agent.retriever is not None
        if args.embeddings:
            agent.retriever.wait_warm()
        recall = engine.recall
        mem_ms: list[float] = []

        def timed_recall(query: Any, exclude: str | None = None) -> Any:
            t = time.perf_counter()
            try:
                return recall(query, exclude)
            finally:
                mem_ms.append((time.perf_counter() - t) * 1000)

        engine.recall = timed_recall  # type: ignore[method-assign]
        msgs = messages(args.queries, args.seed)
        for m in msgs[:10]:   # warm-up: indexes, jieba, statements, page cache
            agent.prepare(m)
        mem_ms.clear()
        total: list[float] = []
        phases: dict[str, list[float]] = {}
        for m in msgs:
            t = time.perf_counter()
            prompt, _ = agent.prepare(m)
            total.append((time.perf_counter() - t) * 1000)
            res = prompt.turn.retrieval if prompt.turn is not None else None
            for k, v in (getattr(res, "timings_ms", None) or {}).items():
                phases.setdefault(k, []).append(v)
        out["prepare_ms_p50"] = r3(statistics.median(total))
        out["prepare_ms_p95"] = r3(percentile(total, 0.95))
        breakdown = {k: r3(statistics.median(v)) for k, v in phases.items() if k != "total"}
        breakdown["memories"] = r3(statistics.median(mem_ms)) if mem_ms else 0.0
        out["phases_ms_p50"] = breakdown

        # BM25 beside bm25s on the same tokens of the same skills
        retr: SkillRetriever = agent.retriever
        bm = retr.bm25
        toks = [bm25_tokens(m) for m in msgs]
        ours: list[float] = []
        for t_ in toks:
            t = time.perf_counter()
            bm.score_array(t_)
            ours.append((time.perf_counter() - t) * 1000)
        out["bm25_ms_p50"] = r3(statistics.median(ours))
        try:
            import bm25s

            ref = bm25s.BM25()
            corpus = [skill_tokens(s) for s in retr.skills]
            ref.index(corpus, show_progress=False)
            theirs: list[float] = []
            for t_ in toks:
                t = time.perf_counter()
                ref.get_scores(t_)
                theirs.append((time.perf_counter() - t) * 1000)
            out["bm25s_ms_p50"] = r3(statistics.median(theirs))
            out["bm25_vs_bm25s"] = r3(out["bm25_ms_p50"] / max(out["bm25s_ms_p50"], 1e-9))
        except ImportError:
            out["bm25s_ms_p50"] = "bm25s not installed"

        # L1 + L3 on a pasted log
        log = pasted_log(args.seed)
        times = []
        for _ in range(20):
            t = time.perf_counter()
            retr.triggers.match(log)
            retr.synonyms.score(log)
            times.append((time.perf_counter() - t) * 1000)
        out["pasted_log_phrase_ms"] = r3(statistics.median(times))
        out["phrases"] = len(retr.triggers) + retr.synonyms.phrase_count

        # episodic search, its anchor, and the recall probe
        conn = engine.store.connection
        bare_sql = "SELECT rowid, rank FROM sessions_fts WHERE sessions_fts MATCH ? ORDER BY rank LIMIT 5"
        epi: list[float] = []
        bare: list[float] = []
        for i, m in enumerate(msgs):
            q = RetrievalQuery.of(m, HISTORY)
            terms = query_terms(m)
            term = terms[0] if terms else "error"
            for mode in (("full", "bare") if i % 2 == 0 else ("bare", "full")):
                t = time.perf_counter()
                if mode == "full":
                    engine.retrieve(q, 5)
                    epi.append((time.perf_counter() - t) * 1000)
                else:
                    conn.execute(bare_sql, (quote_term(term),)).fetchall()
                    bare.append((time.perf_counter() - t) * 1000)
        out["episodic_ms_p50"] = r3(statistics.median(epi))
        out["episodic_ms_p95"] = r3(percentile(epi, 0.95))
        out["bare_fts_ms_p50"] = r3(statistics.median(bare))
        found = 0
        probe_ms: list[float] = []
        for k in range(PLANTED):
            _, msg = planted_summary(k)
            t = time.perf_counter()
            got = engine.retrieve(RetrievalQuery.of(msg, HISTORY), 5)
            probe_ms.append((time.perf_counter() - t) * 1000)
            found += any(f.tags == ("planted",) and RARE[(2 * k) % len(RARE)] in f.summary for f in got)
        out["planted"] = PLANTED
        out["planted_found"] = found
        out["probe_ms_p50"] = r3(statistics.median(probe_ms))
        engine.recall = recall  # type: ignore[method-assign]
        agent.context_engine = None   # nothing to record; the cached database is left as built
        agent.close()
        engine.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sizes", default="20x1000,200x10000",
                    help="comma-separated SKILLSxSESSIONS (the issue's: 20x1000,200x10000,"
                         "2000x100000,10000x1000000)")
    ap.add_argument("--queries", type=positive_int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "hermes-bench")
    ap.add_argument("--embeddings", action="store_true", help="with the dense layer (loads models)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        sizes = [(positive_int(k), positive_int(n)) for k, _x, n in
                 (s.strip().lower().partition("x") for s in args.sizes.split(",") if s.strip())]
    except argparse.ArgumentTypeError as e:
        ap.error(f"--sizes: SKILLSxSESSIONS, each a whole number >= 1: {e}")
    if not sizes:
        ap.error("--sizes: give at least one SKILLSxSESSIONS")
    results = [run_size(k, n, args) for k, n in sizes]
    report: dict[str, Any] = {"mode": "embeddings" if args.embeddings else "lexical", "sizes": results}
    ref = next((r for r in results if (r["skills"], r["sessions"]) == (200, 10_000)), None)
    if ref is not None and results[-1] is not ref:
        report["growth_200x10k_to_largest"] = r3(results[-1]["prepare_ms_p50"] / ref["prepare_ms_p50"])
    report["all_planted_found"] = all(r["planted_found"] == r["planted"] for r in results)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
