"""Long summaries are indexed as passages: a long session ranks for its words as a short one does,
short ones rank as before, and the count of passages keeps ``memory stats`` exact."""

from __future__ import annotations

import multiprocessing
import random
import shutil
import signal
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core.agent.context_engine import ContextEngine
from hermes_core.agent.episodic import passages, reindex
from hermes_core.agent.episodic.retention import RetentionPolicy
from hermes_core.agent.episodic.store import SessionRecord, SessionStore
from tests.agent.episodic.conftest import open_and_die_at_statement, open_tracing

NOW = 1_800_000_000.0
QUERY = ("kubernetes", "grafana", "terraform")


def _filler(rng: random.Random, words: int) -> str:
    """Words no query asks for, about as many as a summary the summariser writes has."""
    return " ".join(f"{rng.choice('bcdfgklmnprstvz')}{rng.choice('aeiou')}{rng.randrange(400)}x"
                    for _ in range(words))


def _archive(rng: random.Random, long_summary: str) -> list[SessionRecord]:
    recs = [SessionRecord(f"filler-{i}", _filler(rng, 50) + f" ticket{i}.", (), NOW - 3_600)
            for i in range(120)]
    # weaker answers: short sessions holding one or two of the three words
    for i, held in enumerate([QUERY[:1], QUERY[1:2], QUERY[2:], QUERY[:2], QUERY[1:]]):
        recs.append(SessionRecord(f"weaker-{i}", f"{_filler(rng, 20)} {' '.join(held)} "
                                                f"{_filler(rng, 25)} note{i}.", (), NOW - 3_600))
    recs.append(SessionRecord("long", long_summary, (), NOW - 3_600))
    return recs


def test_a_long_summary_holding_every_asked_word_ranks_above_short_ones_holding_fewer(
        tmp_path: Path) -> None:
    rng = random.Random(5)
    # 400 words, the three asked ones far apart (a long session covers many things)
    long_summary = " ".join([_filler(rng, 40), QUERY[0], _filler(rng, 150), QUERY[1],
                             _filler(rng, 150), QUERY[2], _filler(rng, 57)]) + "."
    with ContextEngine(tmp_path / "m.db", clock=lambda: NOW) as engine:
        engine.store.upsert_many(_archive(rng, long_summary))
        got = [f.session_id for f in engine.retrieve(" ".join(QUERY), 3)]
    assert got[0] == "long"


def _long(rng: random.Random, marker: str, words: int = 400) -> str:
    return f"{marker}start {_filler(rng, words)} {marker}end."


def test_a_long_segmented_summary_is_cut_into_equal_passages_in_order_and_a_short_one_kept_whole(
        ) -> None:
    short = " ".join(f"w{i}" for i in range(passages.SPLIT_ABOVE))
    assert passages.split(short) == [short]
    long = " ".join(f"w{i}" for i in range(1_000))
    parts = passages.split(long)
    assert " ".join(parts) == long
    sizes = {len(p.split()) for p in parts}
    assert max(sizes) <= passages.PASSAGE_TOKENS and max(sizes) - min(sizes) <= 1
    huge = " ".join(f"w{i}" for i in range(100_000))
    assert len(passages.split(huge)) == passages.MAX_PASSAGES
    assert " ".join(passages.split(huge)) == huge


def test_sessions_of_one_row_score_exactly_as_fts5_ranks_the_or_query(tmp_path: Path) -> None:
    rng = random.Random(3)
    with SessionStore(tmp_path / "m.db", segment=str.lower) as store:
        store.upsert_many([SessionRecord(f"s{i}", f"{_filler(rng, 30)} "
                                         f"{' '.join(rng.sample(QUERY, rng.randint(1, 3)))}",
                                         (), NOW) for i in range(60)])
        expressions = tuple(f'"{w}"' for w in QUERY)
        fts = store.connection.execute(
            "SELECT session_id, rank FROM sessions_fts WHERE sessions_fts MATCH ?"
            " ORDER BY rank, rowid", (" OR ".join(expressions),)).fetchall()
        got = [(h.session_id, h.bm25) for h in store.search(expressions, 100)]
    assert [sid for sid, _ in got] == [sid for sid, _ in fts]
    assert [b for _, b in got] == pytest.approx([r for _, r in fts], rel=1e-9)


def test_a_limit_counts_sessions_not_passages_and_a_later_passage_is_found(tmp_path: Path) -> None:
    rng = random.Random(4)
    summary = f"{_filler(rng, 300)} borealis {_filler(rng, 100)} borealis {_filler(rng, 100)}"
    with SessionStore(tmp_path / "m.db", segment=str.lower) as store:
        store.upsert_many([SessionRecord("short", "borealis once", (), NOW - 10),
                           SessionRecord("long", summary, (), NOW)])   # the newest
        assert store.connection.execute("SELECT COUNT(*) FROM sessions_fts WHERE sessions_fts"
                                        " MATCH 'borealis'").fetchone()[0] == 3
        assert [h.session_id for h in store.search('"borealis"', 2)] == ["short", "long"]
        assert len(store.search('"borealis"', 1)) == 1
        assert {h.session_id for h in store.search_recent('"borealis"', 2)} == {"long", "short"}
        assert [h.session_id for h in store.search_recent('"borealis"', 1)] == ["long"]


def test_the_newest_sessions_are_found_whatever_the_passages_a_newer_one_matches_in(
        tmp_path: Path) -> None:
    """``search_recent``'s limit counts sessions: the newest session matching in several later
    passages must not push out an older one matching in a later passage only."""
    rng = random.Random(6)
    many = " ".join(f"{_filler(rng, 100)} borealis" for _ in range(4))
    with SessionStore(tmp_path / "m.db", segment=str.lower) as store:
        store.upsert_many([SessionRecord("short", "borealis once", (), NOW - 20),
                           SessionRecord("older", f"{_filler(rng, 300)} borealis", (), NOW - 10),
                           SessionRecord("newest", many, (), NOW)])
        assert [h.session_id for h in store.search_recent('"borealis"', 2)] == ["newest", "older"]


def _in_sync(store: SessionStore) -> None:
    """Counts exact: sessions, indexed sessions, and each session's rows are its passages."""
    conn = store.connection
    stats = store.stats()
    stored = conn.execute("SELECT rowid, summary, tags, session_id FROM sessions").fetchall()
    assert stats["sessions"] == stats["indexed"] == len(stored) and stats["index_in_sync"]
    rows = conn.execute("SELECT rowid, summary, tags, session_id FROM sessions_fts").fetchall()
    want = sorted((passages.passage_rowid(r[0], p), text, r[2] if p == 0 else "", r[3])
                  for r in stored for p, text in enumerate(passages.split(r[1].lower())))
    assert sorted(rows) == want
    assert passages.extra(conn) == len(rows) - len(stored)
    conn.execute("INSERT INTO sessions_fts(sessions_fts) VALUES ('integrity-check')")


def test_every_write_keeps_a_long_sessions_passages_and_the_counts_exact(tmp_path: Path) -> None:
    rng = random.Random(6)
    with SessionStore(tmp_path / "m.db", segment=str.lower, clock=lambda: NOW) as store:
        store.upsert_many([SessionRecord(f"s{i}", _long(rng, f"m{i}") if i % 3 == 0
                                         else f"short {i}", (), NOW - 1_000 + i)
                           for i in range(30)])
        _in_sync(store)
        store.upsert(SessionRecord("s0", "now short", (), NOW))        # long -> short
        store.upsert(SessionRecord("s1", _long(rng, "grown"), (), NOW))  # short -> long
        store.upsert(SessionRecord("s3", _long(rng, "again"), (), NOW))  # long -> long
        _in_sync(store)
        assert store.delete("s6")
        assert store.search('"m6start"', 5) == [] and store.search('"m6end"', 5) == []
        assert store.prune(RetentionPolicy(max_sessions=20)) == 9
        _in_sync(store)
        store.connection.execute("DELETE FROM sessions WHERE session_id = 's29'")  # outside us
        store.upsert(SessionRecord("s-reuses-rowid", _long(rng, "reuse"), (), NOW))
        assert store.search('"m27end"', 5)[0].session_id == "s27"
        assert store.rebuild() == 20
        _in_sync(store)
        assert [h.session_id for h in store.search('"againend"', 5)] == ["s3"]


OLD_ID, NEW_ID = "test-lower-1", "test-lower-1" + passages.LAYOUT


def _before_passages(path: Path, n: int) -> None:
    """``path`` as a version before passages left it: schema 2, one index row a session at its
    rowid holding the whole summary, the index recorded as built by ``OLD_ID``."""
    rng = random.Random(n)
    with SessionStore(path, segment=str.lower, segment_id=OLD_ID) as store:
        store.upsert_many([SessionRecord(f"s{i}", _long(rng, f"m{i}") if i % 4 == 0
                                         else f"m{i}start short m{i}end", (), NOW + i,
                                         source="chat" if i % 2 else "manual")
                           for i in range(n)])
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DROP TRIGGER index_drift_on_index")   # no version before passages had it
        conn.execute("DELETE FROM sessions_fts")
        conn.execute("INSERT INTO sessions_fts(rowid, summary, tags, session_id, created_at,"
                     " relevance_score) SELECT rowid, lower(summary), tags, session_id,"
                     " created_at, relevance_score FROM sessions")
        conn.execute("DELETE FROM meta WHERE key LIKE 'passages:%'")
        conn.execute("DELETE FROM schema_version WHERE version > 2")
    conn.close()


def _uncut(path: Path) -> int:
    """Sessions of ``path`` whose index row is still one long row (not cut into passages yet)."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT summary FROM sessions_fts WHERE rowid > 0").fetchall()
    finally:
        conn.close()
    return sum(len(passages.split(r[0])) > 1 for r in rows)


def _statements_left(path: Path, batch: int) -> int:
    """The SQL statements the re-index of a copy of ``path`` runs to the end (this open's)."""
    dry = path.with_name("dry.db")
    for suffix in ("", "-wal"):
        src, dst = Path(f"{path}{suffix}"), Path(f"{dry}{suffix}")
        dst.unlink(missing_ok=True)
        if src.exists():
            shutil.copyfile(src, dst)
    seen = [0]

    def count(_sql: str) -> None:
        seen[0] += 1

    open_tracing(dry, batch, NEW_ID, count)
    return seen[0]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.integers(1, 7), kills=st.lists(st.integers(0, 10**6), min_size=1, max_size=2),
       write_meanwhile=st.booleans())
def test_an_index_from_before_passages_is_cut_into_them_once_losing_nothing_under_kill_9(
        tmp_path_factory: pytest.TempPathFactory, batch: int, kills: list[int],
        write_meanwhile: bool) -> None:
    """The in-place cut SIGKILLed as any of its SQL statements starts (a read, a passage or an
    FTS5 shadow-table write inside a chunk's transaction, the cursor's move, the COMMIT, the
    record of the new tokenizer), once or twice, a writer maybe between: the next open cuts each
    session not yet cut exactly once, and every session is found by its words."""
    path = tmp_path_factory.mktemp("passages") / "sessions.db"
    n = 60
    _before_passages(path, n)
    marker = {f"s{i}": f"m{i}" for i in range(n)}
    with SessionStore(path, segment=str.lower, segment_id=OLD_ID) as before:
        found_before = [h.session_id for h in before.search('"m0end"', 5)]
        sources = before.stats()["sources"]
    for at in kills:
        left = _statements_left(path, batch)
        if left == 0:
            break                  # the last kill fell after the cut was recorded
        proc = multiprocessing.get_context("spawn").Process(
            target=open_and_die_at_statement, args=(str(path), 1 + at % left, batch, NEW_ID))
        proc.start()
        proc.join(timeout=120)
        assert proc.exitcode == -signal.SIGKILL
    if write_meanwhile:            # a writer of this layout that does not cut (no tokenizer id)
        rng = random.Random(batch)
        with SessionStore(path, segment=str.lower, segment_id=None) as writer:
            writer.upsert(SessionRecord("late", _long(rng, "late"), (), NOW + n))
            writer.upsert(SessionRecord("s4", _long(rng, "r4"), (), NOW + n))
            assert writer.delete("s8")
            sources = writer.stats()["sources"]
        marker |= {"late": "late", "s4": "r4"}
        del marker["s8"]
    uncut = _uncut(path)
    with SessionStore(path, segment=str.lower, segment_id=NEW_ID) as store:
        assert store.reindexed == uncut      # each long session cut once over all the opens
        assert store.stats()["schema_version"] == 3
        assert store.stats()["sources"] == sources
        _in_sync(store)                      # no passage doubled or lost, counts exact
        assert found_before == ["s0"] == [h.session_id for h in store.search('"m0end"', 5)]
        for sid, m in marker.items():
            for word in (f'"{m}start"', f'"{m}end"'):
                assert [h.session_id for h in store.search(word, 5)] == [sid]
    with SessionStore(path, segment=str.lower, segment_id=NEW_ID) as again:
        assert again.reindexed == 0
        assert dict(again.connection.execute(
            "SELECT key, value FROM meta WHERE key IN ('tokenizer', 'cut_cursor', 'reindex')"
        ).fetchall()) == {"tokenizer": NEW_ID}


def test_an_index_from_before_passages_by_the_same_tokenizer_is_cut_without_segmenting_again(
        tmp_path: Path) -> None:
    """Only a row over ``SPLIT_ABOVE`` tokens changes with the layout, and the index holds its
    segmented text: the upgrade cuts those rows in place, with no segmenter call and no second
    index (at 1,000,000 sessions a full re-index is about 20 minutes of segmenting)."""
    path = tmp_path / "sessions.db"
    n = 60
    _before_passages(path, n)
    calls = [0]

    def counting(text: str) -> str:
        calls[0] += 1
        return text.lower()

    with SessionStore(path, segment=counting, segment_id=NEW_ID) as store:
        assert calls[0] == 0
        assert store.reindexed == len(range(0, n, 4))       # the long sessions only
        assert store.connection.execute("SELECT value FROM meta WHERE key = 'tokenizer'"
                                        ).fetchone() == (NEW_ID,)
        _in_sync(store)
        for i in range(n):
            for word in (f'"m{i}start"', f'"m{i}end"'):
                assert [h.session_id for h in store.search(word, 5)] == [f"s{i}"]
    with SessionStore(path, segment=counting, segment_id=NEW_ID) as again:
        assert again.reindexed == 0 and calls[0] == 0


def test_cutting_an_index_into_passages_in_place_is_spread_over_opens(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "sessions.db"
    n = 60
    _before_passages(path, n)
    monkeypatch.setattr(reindex, "BATCH_ROWS", 1)        # rows read ten at a time
    monkeypatch.setattr(reindex, "OPEN_ROWS", 4)
    cut, opens = [], 0
    while True:
        with SessionStore(path, segment=str.lower, segment_id=NEW_ID) as store:
            opens += 1
            cut.append(store.reindexed)
            recorded = store.connection.execute(
                "SELECT value FROM meta WHERE key = 'tokenizer'").fetchone()[0]
            assert store.stats()["index_in_sync"]     # each session whole or cut meanwhile
            if recorded == NEW_ID:
                break
    assert max(cut) <= 4 + 3 and sum(cut) == len(range(0, n, 4)) and opens > 2
    with SessionStore(path, segment=str.lower, segment_id=NEW_ID) as store:
        assert store.reindexed == 0
        _in_sync(store)
        assert store.connection.execute("SELECT value FROM meta WHERE key = 'cut_cursor'"
                                        ).fetchone() is None
        for i in range(n):
            for word in (f'"m{i}start"', f'"m{i}end"'):
                assert [h.session_id for h in store.search(word, 5)] == [f"s{i}"]


def test_a_key_in_a_long_summarys_last_passage_and_a_forgotten_long_session_leave_the_file(
        planted_archive: Callable[[str, str], tuple[Path, Callable[[], bytes]]]) -> None:
    needle = "zq9-Horse7-battery-Staple"
    rng = random.Random(8)
    filler = " ".join(f"step{rng.randrange(10**6)}" for _ in range(300))
    path, raw = planted_archive("holder", f"staging notes {filler} the proxy key {needle} "
                                          "and xylophonicdiagnosis")
    with SessionStore(path, clock=lambda: NOW) as store:
        assert passages.extra(store.connection) >= 3
        assert store.rewrite_holding(
            {"m1": needle}, lambda r: replace(r, summary=r.summary.replace(needle, "[gone]"))) == 1
        assert [h.session_id for h in store.search('"xylophonicdiagnosis"', 5)] == ["holder"]
        assert store.stats()["index_in_sync"]
    assert b"staple" not in raw() and b"battery" not in raw()
    with SessionStore(path, clock=lambda: NOW) as store:
        assert store.delete("holder")
        assert passages.extra(store.connection) == 0 and store.stats()["index_in_sync"]
    assert b"xylophonicdiagnosis" not in raw() and b"staging" not in raw()
