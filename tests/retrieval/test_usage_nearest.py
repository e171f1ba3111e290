"""Tests of ``hermes_core/retrieval/usage_nearest.py``: the lexical usage index updated from the
last history's equals one built from scratch, to the bit, and measures only what may have moved."""

from __future__ import annotations

import random
import shutil
import sqlite3
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from hermes_core.retrieval.usage import UsageIndex, UsageLayer
from hermes_core.retrieval.usage_nearest import sample
from hermes_core.retrieval.usage_store import UsageStore

# few words, shared across skills and languages: ties, shared words and moving idf everywhere
WORDS = ("deploy", "staging", "logs", "parcel", "track", "weather", "send", "mail", "invoice",
         "pdf", "table", "docker", "dock", "email", "部署", "快递", "天气", "发票")
# ("mail" in "email", "dock" in "docker": a word new to the history gives kept messages a bonus)
SKILLS = ("deploy-staging", "parcel-track", "weather", "mail-send", "pdf-extract")
PROBES = ("deploy the staging logs", "track my parcel", "天气 快递", "compose a sonnet", "send mail pdf")

# one step of use: (message's words, skill, verdict); a repeat is a message drawn again
STEP = st.tuples(st.lists(st.sampled_from(WORDS), min_size=0, max_size=5),
                 st.sampled_from(SKILLS), st.booleans())


def assert_same(got: UsageIndex, want: UsageIndex) -> None:
    """Everything a turn reads from the index, compared with ``==``: the leave-one-out as the
    reliability and the gate's calibration, and each probe's scores, nearest and weight."""
    assert got.events == want.events
    assert got.reliability == want.reliability
    assert got.gate.report() == want.gate.report()
    assert got.gate == want.gate
    assert {k: (n.key, n.similarity) for k, n in got._near.items()} == \
        {k: (n.key, n.similarity) for k, n in want._near.items()}
    assert [(n.key, n.similarity) for n in got._ref_near] == [(n.key, n.similarity) for n in want._ref_near]
    for probe in PROBES:
        a, b = got.assess(probe), want.assess(probe)
        assert a.similarity == b.similarity
        if b.scores is None:
            assert a.scores is None
        else:
            assert a.scores is not None
            assert a.scores.scores.tolist() == b.scores.scores.tolist()
            assert (a.scores.weight, a.scores.nearest, a.scores.nearest_skill, a.scores.precision) == \
                (b.scores.weight, b.scores.nearest, b.scores.nearest_skill, b.scores.precision)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), steps=st.lists(STEP, min_size=1, max_size=14),
       cap=st.integers(14, 40), size=st.integers(12, 30))
def test_an_index_updated_event_by_event_equals_one_built_from_scratch(
        seed: int, steps: list[tuple[list[str], str, bool]], cap: int, size: int) -> None:
    """A history below or at its cap, then events arriving one by one (new messages, repeats
    with another verdict, the oldest leaving at the cap): after each, the index updated from the
    last equals a build from scratch of the same events in every similarity, reliability bin and
    gate figure."""
    rng = random.Random(seed)
    store = UsageStore(None, cap=cap)
    for i in range(rng.randint(cap // 2, cap + 3)):
        store.record(" ".join(rng.choices(WORDS, k=rng.randint(1, 6))) + f" {i % 7}", rng.choice(SKILLS))
    last = UsageIndex(store.events(), SKILLS, sample=size)
    for words, skill, good in steps:
        text = " ".join(words) if words else rng.choice([e.query for e in store.events()])
        store.record(text or "deploy", skill, good=good)
        events = store.events()
        now = UsageIndex(events, SKILLS, previous=last, sample=size)
        assert_same(now, UsageIndex(events, SKILLS, sample=size))
        last = now


def test_a_new_event_at_the_cap_measures_few_requests_whole() -> None:
    """The point of carrying: one event at the cap rescores a handful of the sampled messages and
    off-topic requests, not all of them (each was one BM25 pass over every past message)."""
    rng = random.Random(3)
    words = [f"w{i}" for i in range(300)]
    store = UsageStore(None, cap=400)
    for i in range(400):
        store.record(" ".join(rng.choices(words, k=6)), SKILLS[i % len(SKILLS)])
    first = UsageIndex(store.events(), SKILLS, sample=200)
    requests = 200 + len(first._ref_near)
    assert first.measured == requests
    store.record("w1 w2 w3 w4 w5 w6", SKILLS[0])
    events = store.events()
    after = UsageIndex(events, SKILLS, previous=first, sample=200)
    assert after.measured <= 0.1 * requests, after.measured
    assert_same(after, UsageIndex(events, SKILLS, sample=200))


def test_events_not_from_a_store_are_built_whole() -> None:
    """Events without ids (a caller's list) have no identity to carry: built from scratch."""
    store = UsageStore(None)
    for i in range(20):
        store.record(f"deploy staging {i}", SKILLS[i % 2])
    stored = store.events()
    loose = [type(e)(e.query, e.skill, e.kind, e.good) for e in stored]
    prev = UsageIndex(stored, SKILLS)
    idx = UsageIndex(loose, SKILLS, previous=prev)
    assert idx.measured == len(idx._near) + len(idx._ref_near)
    assert_same(idx, UsageIndex(loose, SKILLS))


def test_the_sample_moves_by_one_when_an_event_arrives_and_the_oldest_goes() -> None:
    rng = np.random.default_rng(0)
    digests = rng.integers(0, 2**63, 1_000, dtype=np.int64).astype(np.uint64)
    good = np.ones(1_000, dtype=bool)
    before = set(digests[sample(digests, good, 100)].tolist())
    shifted = np.concatenate([digests[1:], np.asarray([7], dtype=np.uint64)])
    after = set(shifted[sample(shifted, good, 100)].tolist())
    assert len(before ^ after) <= 2


@pytest.mark.parametrize("background", [False, True])
def test_the_layer_updates_its_lexical_index_from_the_last(background: bool) -> None:
    store = UsageStore(None, cap=60)
    for i in range(60):
        store.record(f"deploy the staging build {i} and tail logs", SKILLS[i % 3])
    layer = UsageLayer(store, inline_s=0.0 if background else 1e9, background_min=10)
    first = layer.index(SKILLS, None, None)
    store.record("track the parcel again", SKILLS[1])
    layer.index(SKILLS, None, None)
    layer.settle(timeout=60)
    now = layer.index(SKILLS, None, None)
    assert now is not first and now.measured < first.measured
    assert_same(now, UsageIndex(store.events(), SKILLS))


def test_a_request_that_met_nothing_is_measured_again_when_a_new_word_reaches_a_kept_message() -> None:
    """Its nearest (the first message, all scoring 0) left; a past message kept scores 0 still
    unless a word of the request entered the vocabulary: "dock", from a message marked bad, gives
    "docker build" its verbatim bonus."""
    from hermes_core.retrieval.bm25 import BM25Index, bm25_tokens
    from hermes_core.retrieval.usage_nearest import carried, measure
    from hermes_core.types import Skill
    old = BM25Index([Skill("event-1", "tail the logs"), Skill("event-2", "docker build")])
    new = old.updated([Skill("event-2", "docker build"), Skill("event-3", "dock the ship")])
    toks = bm25_tokens("dock")
    before = measure(old, toks, np.ones(2, dtype=bool), np.asarray([1, 2]))
    assert (before.key, before.similarity) == (1, 0.0)
    candidates, keys = np.asarray([True, False]), np.asarray([2, 3])
    got = carried(before, old, new, candidates, keys, {2: 0, 3: 1}, np.zeros(0, dtype=np.int64), {})
    want = measure(new, toks, candidates, keys)
    assert want.similarity > 0 and (got is None or (got.key, got.similarity) == (want.key, want.similarity))


# one change to a history: an event recorded (with the skill's content hash), a skill rewritten
# (its events of the old hash pruned), a skill deleted from the catalog and its events pruned,
# or a skill left out of the catalog the index is built for (its events stay in the store)
CHANGE = st.one_of(
    st.tuples(st.just("record"), st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
              st.sampled_from(SKILLS), st.booleans(), st.sampled_from(("", "h1", "h2"))),
    st.tuples(st.just("rewrite"), st.sampled_from(SKILLS), st.sampled_from(("h1", "h2"))),
    st.tuples(st.just("delete"), st.sampled_from(SKILLS)),
    st.tuples(st.just("catalog"), st.sampled_from(SKILLS)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), changes=st.lists(CHANGE, min_size=1, max_size=12),
       cap=st.integers(10, 30), size=st.integers(4, 20))
def test_an_index_updated_across_prunes_and_catalog_changes_equals_one_built_from_scratch(
        seed: int, changes: list[tuple], cap: int, size: int) -> None:
    """Events leave other than as the oldest at the cap: a rewritten skill's events pruned by
    content hash from the middle of the history, a deleted skill's all at once (the nearest of
    many sampled messages and the idf of their words gone together), a skill taken out of the
    catalog and put back (its kept events then come back before new ones). After each change
    the index updated from the last equals a build from scratch."""
    rng = random.Random(seed)
    store = UsageStore(None, cap=cap)
    hashes = dict.fromkeys(SKILLS, "h1")
    for _ in range(rng.randint(cap // 2, cap + 3)):
        skill = rng.choice(SKILLS)
        store.record(" ".join(rng.choices(WORDS, k=rng.randint(1, 6))), skill,
                     good=rng.random() < 0.8, content_hash=rng.choice(("", hashes[skill])))
    names = list(SKILLS)
    last = UsageIndex(store.events(), names, sample=size)
    for change in changes:
        if change[0] == "record":
            _, words, skill, good, h = change
            store.record(" ".join(words), skill, good=good, content_hash=h and hashes[skill])
        elif change[0] == "rewrite":
            hashes[change[1]] = change[2]
            store.prune(hashes)
        elif change[0] == "delete":
            store.prune({s: h for s, h in hashes.items() if s != change[1]})
        else:
            names = ([n for n in names if n != change[1]] if change[1] in names
                     else sorted([*names, change[1]]))
        events = store.events()
        now = UsageIndex(events, names, previous=last, sample=size)
        assert_same(now, UsageIndex(events, names, sample=size))
        last = now


def test_an_id_used_again_by_a_new_message_is_not_taken_for_the_one_that_left(tmp_path: Path) -> None:
    """A usage_events table made without AUTOINCREMENT (by another writer; the store accepts any
    table with its columns) gives a new row the id of the newest row deleted before it. The
    message that was a sampled message's nearest left (its skill rewritten, pruned) and a new
    one took its id: the update scored the new message as the kept nearest and carried the old
    margin, where a build from scratch finds the next nearest."""
    path = tmp_path / "usage.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE usage_events (id INTEGER PRIMARY KEY, at REAL NOT NULL, "
                     "query TEXT NOT NULL, skill TEXT NOT NULL, kind TEXT NOT NULL, "
                     "good INTEGER NOT NULL, content_hash TEXT NOT NULL DEFAULT '')")
    conn.close()
    store = UsageStore(path)
    for i in range(200):   # ten marked wrong share the words: one leaving moves their idf little
        store.record(f"deploy staging pipeline{i}" if i < 10 else f"filler{i}", "pdf-extract", good=i >= 10)
    store.record("deploy the logs", "deploy-staging")
    store.record("deploy staging", "deploy-staging")
    store.record("deploy staging", "mail-send", content_hash="h1")   # the nearest of the one above
    last = UsageIndex(store.events(), SKILLS)
    gone = store.events()[-1].id
    assert store.prune({**dict.fromkeys(SKILLS, ""), "mail-send": "h2"}) == 1
    store.record("weather in paris", "mail-send", content_hash="h2")
    events = store.events()
    assert events[-1].id == gone                       # the id is used again
    assert_same(UsageIndex(events, SKILLS, previous=last), UsageIndex(events, SKILLS))


class UseOfOneHome(RuleBasedStateMachine):
    """Two writers and a reader on one usage file (three connections, as three processes have):
    messages recorded and marked again, a skill rewritten (pruned), renamed in the catalog (its
    events dropped as absent), the history cleared, the oldest pushed out at a small cap, on a
    table with or without AUTOINCREMENT. After every step the reader's layer, updating its index
    from the last one it built, serves what a build from scratch of what it reads gives."""

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="usage-machine-"))
        self.names = list(SKILLS)
        self.hashes = dict.fromkeys(SKILLS, "h1")
        self.writers: list[UsageStore] = []
        self.reader: UsageLayer | None = None

    @initialize(autoincrement=st.booleans(), cap=st.integers(6, 30))
    def open_home(self, autoincrement: bool, cap: int) -> None:
        path = self.folder / "usage.sqlite3"
        if not autoincrement:
            with sqlite3.connect(path) as conn:
                conn.execute("CREATE TABLE usage_events (id INTEGER PRIMARY KEY, at REAL NOT NULL, "
                             "query TEXT NOT NULL, skill TEXT NOT NULL, kind TEXT NOT NULL, "
                             "good INTEGER NOT NULL, content_hash TEXT NOT NULL DEFAULT '')")
            conn.close()
        self.writers = [UsageStore(path, cap=cap) for _ in range(2)]
        self.reader = UsageLayer(UsageStore(path, cap=cap), inline_s=1e9)
        self.writers[0].record("deploy staging", SKILLS[0], content_hash="h1")

    @rule(who=st.integers(0, 1), words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
          skill=st.integers(0, len(SKILLS) - 1), good=st.booleans())
    def record(self, who: int, words: list[str], skill: int, good: bool) -> None:
        name = self.names[skill]
        self.writers[who].record(" ".join(words), name, good=good, content_hash=self.hashes[name])

    @rule(who=st.integers(0, 1), pick=st.integers(0, 10_000), good=st.booleans())
    def mark_again(self, who: int, pick: int, good: bool) -> None:
        events = self.writers[who].events()
        if events:
            e = events[pick % len(events)]
            self.writers[who].record(e.query, e.skill, "feedback", good=good, content_hash=e.content_hash)

    @rule(skill=st.integers(0, len(SKILLS) - 1))
    def rewrite(self, skill: int) -> None:
        name = self.names[skill]
        self.hashes[name] = "h2" if self.hashes[name] == "h1" else "h1"
        self.writers[0].prune(self.hashes)

    @rule(skill=st.integers(0, len(SKILLS) - 1))
    def rename(self, skill: int) -> None:
        old = self.names[skill]
        self.names[skill] = new = f"{old}-v2" if not old.endswith("-v2") else old[:-3]
        self.hashes[new] = self.hashes.pop(old)
        self.writers[1].prune(self.hashes)

    @rule()
    def forget(self) -> None:
        self.writers[0].clear()

    @invariant()
    def reader_serves_what_a_rebuild_gives(self) -> None:
        if self.reader is None:
            return
        got = self.reader.index(self.names, None, None)
        assert got.events == [e for e in self.reader.store.events() if e.skill in self.names]
        assert_same(got, UsageIndex(self.reader.store.events(), self.names))

    def teardown(self) -> None:
        for store in [*self.writers, *([self.reader.store] if self.reader is not None else [])]:
            store.close()
        shutil.rmtree(self.folder, ignore_errors=True)


UseOfOneHome.TestCase.settings = settings(max_examples=40, stateful_step_count=15, deadline=None,
                                          suppress_health_check=[HealthCheck.too_slow])
test_one_home_used_by_two_writers_and_a_reader = UseOfOneHome.TestCase
