"""ContextEngine: episodic memory of past sessions for the per-turn prompt context.

Past sessions are summarised when they end (:meth:`ContextEngine.record_session`) and stored in
``HERMES_HOME/sessions.db`` (:mod:`hermes_core.agent.episodic.store`). Each turn, the PromptBuilder calls
:meth:`ContextEngine.memories_block` with the user's message; the most relevant, recent sessions
come back as a short "Relevant past sessions" block that travels after the cache breakpoint, never
in the cached system prefix.

Retrieval: the message is segmented with the shared tokenizer and turned into a MATCH expression
that cannot be syntax (:func:`hermes_core.agent.episodic.ranking.build_match`); FTS5 returns
3x ``max_results`` rows by bm25; those are re-ranked by ``relevance x recency weight x stored
prior`` with an injectable clock (:func:`hermes_core.agent.episodic.ranking.rerank`), the current
session dropped.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

from hermes_core.agent.episodic.follow_up import is_follow_up
from hermes_core.agent.episodic.guard import RecallGuard
from hermes_core.agent.episodic.lookup import MIN_PREFIX_CHARS, SHOWN_IDS, IdLookup, readings
from hermes_core.agent.episodic.ranking import (
    COMMON_DF,
    RECENT_BUDGET,
    Hit,
    MatchPlan,
    clip_text,
    plan_match,
    query_terms,
    render_memories,
    rerank,
    score_floor,
    tie_break,
)
from hermes_core.agent.episodic.retention import BATCHES_PER_RECORD, RetentionPolicy
from hermes_core.agent.episodic.selection import distinct, fit_to_budget
from hermes_core.agent.episodic.store import (
    SessionRecord,
    SessionStore,
    normalise_tags,
    normalise_text,
    scrub_surrogates,
)
from hermes_core.agent.episodic.summarise import (
    SessionSummary,
    Summarizer,
    clip_words,
    extractive_summary,
)
from hermes_core.config import ContextEngineSettings, Settings
from hermes_core.errors import (
    SessionDatabaseMissing,
    SessionDatabaseUnusable,
    SessionStoreError,
    SummaryFailed,
)
from hermes_core.injection import (
    INJECTION_CATEGORIES,
    GuardedText,
)
from hermes_core.redact import is_key_piece, redact, scan_needles
from hermes_core.tokens import DEFAULT_ENCODING
from hermes_core.types import (
    MemoryFragment,
    Message,
    RetrievalQuery,
)

log = logging.getLogger("hermes_core.memory")

OVERFETCH = 3
#: At most this many hits are ranked for one recall when near duplicates keep filling the
#: over-fetch (the same fact recorded in hundreds of sessions).
MAX_FETCH = 2_000
SQL_INT_MAX = 2**63 - 1
DB_FILENAME = "sessions.db"

RecordStatus = Literal["inserted", "replaced", "unchanged", "duplicate", "empty", "disabled"]

__all__ = [
    "ContextEngine",
    "RecordResult",
    "SessionDatabaseMissing",
    "SessionDatabaseUnusable",
    "SessionStoreError",
    "default_db_path",
    "render_memories",
]


@dataclass(frozen=True, slots=True)
class RecordResult:
    """What :meth:`ContextEngine.record_session` / :meth:`ContextEngine.add` did.

    ``status``: inserted / replaced (an earlier recording of this session was deleted first) /
    unchanged (same summary already stored for it) / duplicate (another session, ``duplicate_of``,
    already holds this exact summary) / empty (nothing to summarise) / disabled (config).
    """

    status: RecordStatus
    session_id: str
    summary: SessionSummary | None = None
    memory_id: str | None = None
    duplicate_of: str | None = None


def default_db_path(settings: Settings) -> Path:
    """``context_engine.db_path`` (relative paths are under the home), else ``HOME/sessions.db``."""
    home = settings.home_path
    configured = settings.context_engine.db_path
    if configured:
        p = Path(os.path.expanduser(configured))
        return p if p.is_absolute() else home / p
    return home / DB_FILENAME


def parse_timestamp(text: str) -> float:
    """ISO 8601 (``2026-01-31``, ``2026-01-31T08:00:00Z``, with offset) -> epoch seconds; naive = UTC."""
    raw = text.strip()
    try:
        dt = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"not an ISO 8601 date/time: {text!r}") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    try:  # an offset can push the UTC instant out of years 1-9999 (then nothing can display it)
        dt.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"date/time out of range in UTC: {text!r}") from None
    return dt.timestamp()


def _summary_of(texts: Mapping[int, tuple[str, tuple[str, ...]]],
                item: tuple[Hit, float, float]) -> str | None:
    got = texts.get(item[0].rowid)
    return None if got is None else got[0]


class ContextEngine:
    """Episodic memory over one SQLite database. Thread-safe; one per process is enough.

    ``clock`` returns epoch seconds (inject it in tests); ``summarizer`` is the default used by
    :meth:`record_session` when the call gives none. A missing database is created unless
    ``create=False`` (then :class:`SessionDatabaseMissing`); a corrupted or foreign file raises
    :class:`SessionDatabaseUnusable` and is left untouched. ``read_only`` (a preview): the file is
    opened read-only and nothing is written, not even the once-per-key rewrite of sessions stored
    before a key was configured (what is read is redacted anyway; the next writable open rewrites).
    """

    def __init__(self, db_path: str | os.PathLike[str], *,
                 settings: ContextEngineSettings | None = None,
                 clock: Callable[[], float] = time.time,
                 summarizer: Summarizer | None = None,
                 create: bool = True,
                 injection_categories: Sequence[str] = INJECTION_CATEGORIES,
                 redactor: Callable[[str], str] = redact, read_only: bool = False) -> None:
        self.settings = settings or ContextEngineSettings()
        self._redact = redactor
        self._clock = clock
        self._scan = tuple(injection_categories)
        self._guard = RecallGuard(self._scan)
        self._summarizer = summarizer
        self.store = SessionStore(db_path, create=create, clock=clock,
                                  busy_timeout_s=self.settings.busy_timeout_s, read_only=read_only)
        self._scrub_stored()

    @classmethod
    def from_settings(cls, settings: Settings, *, clock: Callable[[], float] = time.time,
                      summarizer: Summarizer | None = None, create: bool = True,
                      read_only: bool = False) -> ContextEngine:
        """The engine for ``settings``: its ``context_engine`` section and :func:`default_db_path`."""
        p = settings.prompt
        return cls(default_db_path(settings), settings=settings.context_engine, clock=clock,
                   summarizer=summarizer, create=create,
                   injection_categories=p.injection_categories if p.injection_scan else (),
                   redactor=settings.redactor(), read_only=read_only)

    @property
    def db_path(self) -> Path:
        return self.store.path

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> ContextEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ retrieval

    def retrieve(self, query: str | RetrievalQuery, max_results: int = 5,
                 exclude_session: str | None = None, *,
                 distinct_only: bool = False) -> list[MemoryFragment]:
        """The ``max_results`` best past sessions for ``query``, best first.

        ``distinct_only`` (what a prompt recalls): of near-duplicate summaries only the best
        ranked one (:func:`~hermes_core.agent.episodic.selection.distinct`), reaching further
        down the ranking for the rest; without it (``memory search``) every matching session is
        listed, so each one can be found and forgotten.

        The message is what is searched (a short follow-up together with the previous user
        message); the recent turns of a :class:`RetrievalQuery` only break ties. Of the message's
        terms, those found in more than ``COMMON_DF`` sessions are left out while rarer ones remain
        (:func:`plan_match`), so a search reads a bounded part of the index at any archive size.
        Any text is safe (it never becomes FTS5 syntax); a query with no searchable terms returns
        []. Only a database fault raises (:class:`SessionStoreError`).
        """
        if max_results <= 0 or not isinstance(query, str | RetrievalQuery):
            return []
        q = query if isinstance(query, RetrievalQuery) else RetrievalQuery(query)
        text = q.message
        terms = query_terms(text)
        previous = (*q.previous_users, "")
        follow_up = is_follow_up(text, previous[0], terms)
        if follow_up:   # the last message that stood on its own, and any follow-ups since
            parts = [text]
            for prev, before in pairwise(previous):
                parts.append(prev)
                if not is_follow_up(prev, before):
                    break
            text = "\n".join(reversed(parts))
            terms = query_terms(text)
        if not terms:
            return []
        if exclude_session is not None:
            exclude_session = self._sid(exclude_session)  # as stored
        # SQLite's LIMIT is a signed 64-bit integer; a larger count simply means "all of them".
        limit = min(OVERFETCH * max_results + (1 if exclude_session is not None else 0), SQL_INT_MAX)
        # which terms to search, from counts remembered until the database changes: a message
        # whose terms no session has (most messages, in a young archive) costs one query. A word
        # no session has whole is also counted as the start of longer ones ("postgres":
        # PostgreSQL): only such words, so a word the archive has costs no prefix scan
        dfs = self.store.term_dfs(terms, COMMON_DF, prefix_absent=True)
        if not any(dfs.values()):   # no session has any of them (an empty archive: every turn)
            return []
        plan = plan_match(dfs)
        match = plan.expression
        if match is None:
            return []
        now = self._clock()
        fetch = limit
        history = bool(q.history) and not follow_up
        while True:
            ranked, texts, exhausted = self._ranked(plan, match, fetch, now, exclude_session,
                                                    max_results, history)
            if history:
                ranked = tie_break(ranked, texts, query_terms(q.history_text))
            kept = self._select(ranked, texts, max_results, distinct_only)
            if len(kept) < max_results and len(texts) < len(ranked):
                # copies of one summary, or index rows whose session is gone, took places: the
                # texts of the rest of the over-fetch are read only now
                texts.update(self._texts([h.rowid for h, _, _ in ranked if h.rowid not in texts]))
                kept = self._select(ranked, texts, max_results, distinct_only)
            # the same fact told in many sessions takes one slot; when copies filled the
            # over-fetch, look further down the ranking for sessions that add something
            if (not distinct_only or len(kept) >= max_results or exhausted
                    or fetch >= MAX_FETCH):
                break
            fetch = min(fetch * 4, MAX_FETCH)
        out: list[MemoryFragment] = []
        for hit, score, age in kept:
            summary, tags = texts[hit.rowid]
            # a row written before a key was configured, or by a version that redacted key shapes
            # only, may still hold it: every reader (recall into a prompt, `memory search`,
            # /memory) gets it scrubbed
            summary, tags = self._redact(summary), self._clean_tags(tags)
            out.append(MemoryFragment(hit.session_id, summary, tags, float(f"{score:.6g}"), round(age, 3)))
        return out

    def _ranked(self, plan: MatchPlan, match: str, fetch: int, now: float,
                exclude_session: str | None, max_results: int, history: bool
                ) -> tuple[list[tuple[Hit, float, float]], dict[int, tuple[str, tuple[str, ...]]], bool]:
        """The best ``fetch`` hits re-ranked, the texts of the first ``max_results`` (of all when
        ``history`` may break ties among them), and whether there are no more hits to fetch."""
        s = self.settings
        with self.store.snapshot():  # hits and texts from the same state, even with a writer busy
            hits = (self.store.search_recent(match, max(RECENT_BUDGET, fetch)) if plan.common_only
                    else self.store.search(plan.expressions, fetch))
            floor = score_floor(s.min_score, self.store.index_rows()) if s.min_score > 0 else 0.0
            ranked = rerank(hits, now=now, weights=s.recency_weights, bias=s.recency_bias,
                            exclude_session=exclude_session, limit=len(hits), min_score=floor)
            exhausted = len(ranked) <= fetch if plan.common_only else len(hits) < fetch
            ranked = ranked[:fetch]
            tied = len({score for _, score, _ in ranked}) < len(ranked)
            want = ranked if history and tied else ranked[:max_results]
            texts = self._texts([h.rowid for h, _, _ in want])
        return ranked, texts, exhausted

    def _texts(self, rowids: Sequence[int]) -> dict[int, tuple[str, tuple[str, ...]]]:
        texts = self.store.texts(rowids)
        missing = [r for r in rowids if r not in texts]
        # A hit whose session is gone is skipped and the next hits fill its place. Gone from the
        # index too, another process forgot it since the hits were read (a recall reading
        # further down its ranking): nothing to repair. Still indexed: deleted outside.
        if missing and self.store.indexed(missing):
            log.warning("%s: the full-text index lists sessions that no longer exist; run "
                        "`hermes-core memory rebuild`", self.store.path)
        return texts

    def _select(self, ranked: Sequence[tuple[Hit, float, float]],
                texts: Mapping[int, tuple[str, tuple[str, ...]]], max_results: int,
                distinct_only: bool) -> list[tuple[Hit, float, float]]:
        """The first ``max_results`` ranked hits with a text; with ``distinct_only``, near
        duplicates of a better one left out."""
        if not distinct_only:
            return [item for item in ranked if item[0].rowid in texts][:max_results]
        return distinct(ranked, partial(_summary_of, texts), limit=max_results,
                        shown_chars=self.settings.render_chars)

    def _scrub_stored(self) -> None:
        """Rewrite, once per configured key, the sessions stored before it was configured.

        Redacting on read kept such a key out of prompts and output, but not out of the file,
        which is backed up, synced and read by other tools.
        """
        secrets = tuple(getattr(self._redact, "secrets", ()))
        try:
            n = self.store.rewrite_holding(scan_needles(secrets), self._clean_record)
        except SessionStoreError as e:
            log.warning("%s: sessions stored before a key was configured could not be redacted "
                        "in the file (%s); they are redacted whenever they are read", self.store.path, e)
            return
        if n:
            log.info("%s: %d stored session(s) held a configured key; rewritten redacted",
                     self.store.path, n)

    def _clean_record(self, record: SessionRecord) -> SessionRecord:
        return replace(record, session_id=self._sid(record.session_id),
                       summary=self._redact(record.summary), tags=self._clean_tags(record.tags))

    def _clean_tags(self, tags: tuple[str, ...]) -> tuple[str, ...]:
        """Tags without a key or a piece of a configured one (:func:`is_key_piece`: "zq9",
        "horse7" of "zq9-Horse7-battery-Staple"; older versions made tags of a key's pieces)."""
        secrets = tuple(getattr(self._redact, "secrets", ()))
        return tuple(t for t in tags if self._redact(t) == t and not is_key_piece(t, secrets))

    def memories_block(self, query: str | RetrievalQuery, exclude_session: str | None = None) -> str:
        """The per-turn "Relevant past sessions" text for the PromptBuilder ('' when none).

        Uses ``context_engine.max_results``; returns '' when the engine is disabled. A database
        fault is logged and yields '' so a broken memory file never stops a chat turn. A session
        whose summary or tags carry a prompt injection (the MEMORY.md scan, same categories) is
        left out and logged: a hostile page quoted in one chat must not steer every later one.
        """
        return self.recall(query, exclude_session)[0]

    def recall(self, query: str | RetrievalQuery, exclude_session: str | None = None
               ) -> tuple[str, tuple[MemoryFragment, ...]]:
        """:meth:`memories_block` and the fragments it shows (what ``Prompt.turn.memories`` holds)."""
        if not self.settings.enabled or self.settings.max_results <= 0:
            return "", ()
        try:
            fragments = self.retrieve(query, self.settings.max_results, exclude_session,
                                      distinct_only=True)
        except SessionStoreError as e:
            log.warning("episodic memory unavailable this turn: %s", e)
            return "", ()
        chars = self.settings.render_chars
        # only what the block can show is scanned and kept: a summary of megabytes (``memory
        # add``, an import) cost a minute of scanning a turn, and the model sees the clip anyway
        fragments = [replace(f, summary=clip_text(f.summary, chars)) for f in fragments]
        if self._scan:
            guards = self._guard.guards(fragments)   # new texts scanned in one batch
            fragments = [g for f, (summary, tags) in zip(fragments, guards, strict=True)
                         if (g := self._guarded(f, summary, tags)) is not None]

        return self.refit(fragments)

    def refit(self, fragments: Sequence[MemoryFragment], encoding: str = DEFAULT_ENCODING
              ) -> tuple[str, tuple[MemoryFragment, ...]]:
        """The block of ``fragments`` (best first) fitted to ``block_tokens`` counted in
        ``encoding``: recall fits in o200k_base before routing knows the model; a model of
        another encoding (gpt-4's cl100k_base: 2-3x on Thai) has them fitted again, shortened
        further or dropped, never lengthened."""
        chars = self.settings.render_chars

        def render(frags: Sequence[MemoryFragment]) -> str:
            return render_memories(frags, max_chars_each=chars)

        fitted = fit_to_budget(fragments, render, self.settings.block_tokens, encoding)
        return render(fitted), fitted

    @staticmethod
    def _guarded(fragment: MemoryFragment, guarded: GuardedText, tags: Sequence[GuardedText]
                 ) -> MemoryFragment | None:
        """The fragment with hostile paragraphs of its summary replaced by a notice; None (left
        out, logged) when the whole summary or a tag is hostile."""
        if any(t.findings for t in tags):
            log.warning("past session %s left out of the prompt: a tag carries a possible prompt "
                        "injection", fragment.session_id)
            return None
        if not guarded.findings:
            return fragment
        if guarded.all_blocked:
            log.warning("past session %s left out of the prompt: %s", fragment.session_id,
                        guarded.findings[0].describe())
            return None
        log.warning("past session %s: %d paragraph(s) replaced by a BLOCKED notice",
                    fragment.session_id, guarded.blocked)
        return replace(fragment, summary=guarded.text)

    # ------------------------------------------------------------------ recording

    def record_session(self, session_id: str, messages: Sequence[Message],
                       summarizer: Summarizer | None = None, *,
                       created_at: float | None = None) -> RecordResult:
        """Summarise a finished session and store it (replacing an earlier recording of it).

        ``summarizer`` (else the engine's default) is typically a :class:`.summarise.ModelSummarizer`
        around the fast model. Without one, or when it raises or returns nothing usable, the
        extractive summary is used and the failure is logged.
        """
        if not self.settings.enabled:
            return RecordResult("disabled", session_id)
        if not session_id or not session_id.strip():
            raise ValueError("session_id must be a non-empty string")
        # scrub before summarising: tags are words of the chat, and a key split at its hyphens
        # ("zq9", "horse7", ...) would be stored piece by piece, past the redaction of each tag
        messages = [m if (clean := self._redact(m.content)) == m.content else replace(m, content=clean)
                    for m in messages]
        summary = self._summarise(session_id, messages, summarizer or self._summarizer)
        if not summary.summary:
            return RecordResult("empty", session_id, summary)
        count = sum(1 for m in messages if m.role in ("user", "assistant"))
        return self._store(session_id, summary, created_at=created_at, message_count=count)

    def _summarise(self, session_id: str, messages: Sequence[Message],
                   summarizer: Summarizer | None) -> SessionSummary:
        if summarizer is not None and any(m.content.strip() for m in messages):
            try:
                got = summarizer(messages)
                if not isinstance(got, SessionSummary):
                    raise SummaryFailed(f"the summariser returned {type(got).__name__}, not SessionSummary")
                text = normalise_text(got.summary)
                if not text:
                    raise SummaryFailed("the summariser returned an empty summary")
                return SessionSummary(clip_words(text), normalise_tags(got.tags), got.source or "model")
            except Exception as e:  # any summariser fault: never lose the session
                log.warning("session %s: summariser failed (%s: %s); using the extractive summary",
                            session_id, type(e).__name__, e)
        return extractive_summary(messages)

    def add(self, session_id: str, summary: str, tags: Iterable[str] | str = (), *,
            created_at: float | None = None, relevance_score: float = 1.0,
            source: str = "manual") -> RecordResult:
        """Store a summary written elsewhere (the CLI's ``memory add``); same replace rules."""
        if not session_id or not session_id.strip():
            raise ValueError("session_id must be a non-empty string")
        text = normalise_text(summary)
        if not text:
            raise ValueError("summary must not be empty")
        if not (math.isfinite(relevance_score) and relevance_score >= 0):
            raise ValueError(f"relevance_score must be >= 0 and finite (got {relevance_score})")
        return self._store(session_id, SessionSummary(text, normalise_tags(tags), source),
                           created_at=created_at, relevance_score=relevance_score)

    def add_many(self, records: Sequence[SessionRecord]) -> int:
        """Bulk insert (one transaction; imports and benchmarks); returns rows newly stored."""
        results = self.store.upsert_many(records)
        return sum(1 for r in results if r.status in ("inserted", "replaced"))

    def _store(self, session_id: str, summary: SessionSummary, *, created_at: float | None,
               relevance_score: float = 1.0, message_count: int = 0) -> RecordResult:
        # A key pasted into the chat must not live on in sessions.db, in every later prompt that
        # recalls this session, or in `memory search` output.
        summary = SessionSummary(self._redact(summary.summary), self._clean_tags(summary.tags),
                                 summary.source)
        session_id = self._sid(session_id)
        when = self._clock() if created_at is None else float(created_at)
        if not math.isfinite(when):  # SQLite stores NaN as NULL; inf would rank as brand new forever
            raise ValueError(f"created_at must be a finite epoch time (got {created_at})")
        record = SessionRecord(session_id=session_id, summary=summary.summary, tags=summary.tags,
                               created_at=when,
                               relevance_score=relevance_score, source=summary.source,
                               message_count=message_count)
        res = self.store.upsert(record)
        log.info("session %s: memory %s (%s)", session_id, res.status, summary.source)
        self._prune_after_recording()
        return RecordResult(res.status, session_id, summary, res.memory_id, res.duplicate_of)

    @property
    def retention(self) -> RetentionPolicy:
        """What the settings keep (``retention_days``, ``max_sessions``)."""
        return RetentionPolicy(self.settings.retention_days, self.settings.max_sessions)

    def _prune_after_recording(self) -> None:
        """A few steps of retention after each recording (see :mod:`.episodic.retention`); the
        session is already stored, so a prune that fails is logged, never raised."""
        policy = self.retention
        if not policy.active:
            return
        try:
            gone = self.store.prune(policy, max_batches=BATCHES_PER_RECORD)
        except SessionStoreError as e:
            log.warning("memory retention: nothing pruned this time (%s)", e)
            return
        if gone:
            log.info("memory retention: pruned %d old session(s)", gone)

    # ------------------------------------------------------------------ maintenance

    def forget(self, session_id: str) -> bool:
        """Delete one session's memory; False when none was stored."""
        return self.store.delete(self._sid(session_id))

    def lookup(self, typed: str) -> IdLookup:
        """The stored ids ``typed`` names (:mod:`.episodic.lookup`): an id exactly as stored or as
        ``memory search`` printed it (with its tags, spaces, the whole line, escapes), else a
        prefix of at least ``MIN_PREFIX_CHARS`` characters; several ids when it is ambiguous."""
        found: dict[str, list[str]] = {}
        for reading in readings(typed):
            sid = self._sid(reading)
            if sid not in found:
                found[sid] = self.store.ids_starting(sid, SHOWN_IDS + 1)
            if found[sid][:1] == [sid]:
                return IdLookup(typed, (sid,))
        for sid, ids in found.items():
            if ids and len(sid) >= MIN_PREFIX_CHARS:
                return IdLookup(typed, tuple(ids), by_prefix=True)
        return IdLookup(typed, shorter=max((len(ids) for ids in found.values()), default=0))

    def get(self, session_id: str) -> SessionRecord | None:
        return self.store.get(self._sid(session_id))

    def _sid(self, session_id: str) -> str:
        """A session id as stored: redacted like the summary (an id is written to sessions.db
        too, and a caller's id may hold a key), so the same id always finds its row."""
        return self._redact(scrub_surrogates(session_id))

    def prune(self) -> int:
        """Every session the retention settings no longer keep, in bounded steps; returns how many
        went (0 when neither ``retention_days`` nor ``max_sessions`` is set)."""
        return self.store.prune(self.retention)

    def rebuild(self) -> int:
        """Re-create the FTS index from the sessions table; returns the number of rows indexed."""
        return self.store.rebuild()

    def stats(self) -> dict[str, Any]:
        return self.store.stats()
