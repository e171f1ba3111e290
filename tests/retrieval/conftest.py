"""The public skills collection kept as test data (see tests/data/skills/anthropics/SOURCE.md)."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pytest

from hermes_core.tokenize import tokenize
from hermes_core.types import Skill

if TYPE_CHECKING:
    from hermes_core.retrieval.retriever import SkillRetriever
    from hermes_core.testing.retrieval import HashingEmbedder

ANTHROPIC_SKILLS = Path(__file__).resolve().parent.parent / "data" / "skills" / "anthropics"


@pytest.fixture
def anthropic_skills() -> Path:
    return ANTHROPIC_SKILLS


def two_processes_at_once(work: Callable[[str, Any, Any], None]) -> list[Any]:
    """``work(who, start, results)`` in two forked processes, "a" and "b", released at one
    moment by ``start`` (an Event); what each put on ``results`` (a Queue), sorted."""
    import multiprocessing as mp
    ctx = mp.get_context("fork")
    start, results = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=work, args=(who, start, results)) for who in "ab"]
    for p in procs:
        p.start()
    start.set()
    got = sorted(results.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
    return got


def write(folder: Path, rel: str, text: str) -> Path:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class CountingEmbedder:
    """A bag-of-words embedder that records every call: a test can tell whether a model would
    have been loaded (any embed call is a load for a real model)."""

    model_id = "test:counting"
    cache_id = "test:counting"
    multilingual = True

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(32, dtype=np.float32)
        for tok in tokenize(text):
            seed = int.from_bytes(hashlib.sha256(tok.encode()).digest()[:4], "little")
            v += np.random.default_rng(seed).standard_normal(32).astype(np.float32)
        n = float(np.linalg.norm(v))
        return v / n if n > 0 else v

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(("documents", len(texts)))
        return np.vstack([self._vec(t) for t in texts]) if texts else np.zeros((0, 32))

    def embed_query(self, text: str) -> np.ndarray:
        self.calls.append(("query", len(text)))
        return self._vec(text)

    def covers(self, text: str) -> bool:
        return True


@pytest.fixture
def counting_embedder() -> CountingEmbedder:
    return CountingEmbedder()


class ScriptEmbedder(CountingEmbedder):
    """A bag-of-characters embedder that reads text as written, as e5 does: 數據庫 and 数据库
    share no character, so they get apart vectors (the project's tokenizer, which the other test
    embedders hash, folds them to one spelling and would hide a side left unfolded)."""

    model_id = "test:script"
    cache_id = "test:script"

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(32, dtype=np.float32)
        for ch in text.lower():
            if ch.isalnum():
                seed = int.from_bytes(hashlib.sha256(ch.encode()).digest()[:4], "little")
                v += np.random.default_rng(seed).standard_normal(32).astype(np.float32)
        n = float(np.linalg.norm(v))
        return v / n if n > 0 else v


T = TypeVar("T")


def damage(path: Path, cut: int | None, flip: int) -> None:
    """``path`` torn at ``cut`` (modulo its size) or, without a cut, one byte at ``flip`` flipped:
    what a crash or a bad disk leaves of a cache file."""
    data = bytearray(path.read_bytes())
    if cut is not None:
        data = data[:cut % len(data)]
    elif data:
        data[flip % len(data)] ^= 0x41
    path.write_bytes(bytes(data))


def logged(read: Callable[[], T]) -> tuple[T, list[logging.LogRecord]]:
    """What ``read`` returns and every record logged meanwhile (a hypothesis test cannot use
    the function-scoped ``caplog``)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        return read(), records
    finally:
        root.removeHandler(handler)


_FIRST_USE = """
import os, threading
from hermes_core.retrieval import {module} as s
f = s.{fingerprint}
before, got, gate = f.cache_info().currsize, [], threading.Barrier(2)
def first():
    gate.wait()   # two threads use it first at once
    got.append(f())
threads = [threading.Thread(target=first) for _ in range(2)]
for t in threads:
    t.start()
child = os.fork()   # while they compute: the child computes its own
if child == 0:
    os._exit(0 if f() == {reference} else 1)
for t in threads:
    t.join()
print(before, got == [{reference}] * 2, os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]))
"""


def first_use_in_a_fresh_process(module: str, fingerprint: str, reference: str) -> str:
    """In a fresh process: how many values ``hermes_core.retrieval.<module>.<fingerprint>`` held
    after the import, whether two threads using it first at once both got ``reference`` (an
    expression on the module ``s``), and the exit code of a child forked while they computed,
    0 when it got ``reference`` too. A code fingerprint is computed on first use, not at import."""
    import os
    import subprocess
    import sys

    code = _FIRST_USE.format(module=module, fingerprint=fingerprint, reference=reference)
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True, env=os.environ.copy()).stdout


@pytest.fixture
def new_process_ids() -> Iterator[Callable[[], None]]:
    """Call it after editing code in place: ``token_store.derive_id`` forgets the fingerprints it
    kept this process, as the next process starts without them (and again after the test, so
    the edited code's ids are not kept past it)."""
    from hermes_core.retrieval.token_store import forget_derive_ids

    yield forget_derive_ids
    forget_derive_ids()


def counting_terms_made(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The tokens of every ``SkillTerms`` made from here on (derived or decoded from a file)."""
    from hermes_core.retrieval.token_memo import SkillTerms

    made: list[tuple[str, ...]] = []
    real_init = SkillTerms.__init__

    def counting(self: SkillTerms, tokens: tuple[str, ...], *rest: object) -> None:
        made.append(tokens)
        real_init(self, tokens, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(SkillTerms, "__init__", counting)
    return made


def hashing_retriever(root: Path, cache: Path) -> tuple[SkillRetriever, HashingEmbedder]:
    """A retriever over the skill folder ``root`` whose vectors are cached in ``cache``, and its
    embedder: a second one built on the same folders is a restart that finds the cache."""
    from hermes_core.retrieval.retriever import SkillRetriever
    from hermes_core.testing.retrieval import HashingEmbedder

    emb = HashingEmbedder()
    return SkillRetriever(folders=[root], embedders=[emb], cache_dir=cache), emb


#: Two skills, for what a retriever does with its settings rather than with a catalog.
SKILLS = [Skill("weather", "Get the weather forecast"), Skill("email", "Send an email")]

#: Skills of unlike topics (one with a trigger) and two alike: a message that matches one topic, a
#: history that matches another, and a tie that only the history can break.
TOPIC_SKILLS = [
    Skill("git-rebase", "Resolve git rebase conflicts and continue the rebase",
          triggers=("rebase conflict",)),
    Skill("sql-tuning", "Speed up a slow SQL query with an index and EXPLAIN"),
    Skill("pdf-extract", "Extract tables and text from a PDF file"),
    Skill("weather-city", "Weather forecast for a city"),
    Skill("weather-sea", "Weather forecast for the sea"),
]


def write_catalog(path: Path, catalog: dict[str, str]) -> None:
    """``catalog`` (name -> description) as a JSONL catalog file, one skill a line in its order."""
    path.write_text("".join(json.dumps({"name": k, "description": v}) + "\n"
                            for k, v in catalog.items()), encoding="utf-8")


def saved_then_edited(tmp_path: Path, embedders: list[Any]) -> tuple[Path, dict[str, str], str]:
    """A last process's catalog file and cache folder (``c``), BM25's state saved (which holds
    the skills' terms) and its text keys, then one skill edited in the file: what a restart finds."""
    from hermes_core.retrieval.retriever import SkillRetriever
    from hermes_core.testing.retrieval import SAMPLE_SKILLS

    path = tmp_path / "catalog.jsonl"
    skills = {s.name: s.description for s in SAMPLE_SKILLS}
    write_catalog(path, skills)
    first = SkillRetriever(catalogs=[path], embedders=embedders, cache_dir=tmp_path / "c")
    first._terms.min_new = first._text_key_cache.min_new = first._bm25_state.min_new = 1
    first.refresh()
    edited = next(iter(skills))
    skills[edited] += " It also reads archived invoices."
    write_catalog(path, skills)
    return path, skills, edited


DATA = Path(__file__).resolve().parents[1] / "data" / "catalogs"


def generic_requests() -> list[str]:
    lines = (DATA / "generic_offtopic.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["query"] for line in lines if line.strip()]


def front_matter(meta: str, body: str = "Body.") -> str:
    return f"---\n{meta}\n---\n{body}\n"


def old_usage_file(path: Path, queries: list[object]) -> None:
    """A usage.sqlite3 as versions before the schema version wrote it: the query cut at
    MAX_QUERY_CHARS *before* it was redacted, and redacted by key shapes only."""
    import sqlite3

    from hermes_core.retrieval import usage as U
    conn = sqlite3.connect(path)
    with conn:
        conn.executescript(U.SCHEMA)
        conn.executemany("INSERT INTO usage_events (at, query, skill, kind, good, content_hash) "
                         "VALUES (1.0, ?, 'email-send', 'view', 1, '')", [(q,) for q in queries])
    conn.close()
