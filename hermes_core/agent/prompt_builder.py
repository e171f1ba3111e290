"""PromptBuilder: a cache-stable system prompt plus a per-turn context block.

The system prompt is SOUL -> MEMORY -> USER -> project context, joined by ``\\n\\n---\\n\\n``, and
nothing else: no date, no session id, no model name, no retrieved skills. That makes it
byte-identical across turns (and across a model switch) until one of those files changes, which is
what provider prompt caches need: Anthropic and OpenAI both match on an exact prefix.

**Dirty-flag cache.** Every ``build()`` stats each source (``(mtime_ns, size, inode)``, plus mode
and owner so a permission fix is seen, and ctime so an edit that restores the mtime is); when
nothing moved, the cached text, hash and token counts are reused without opening a file. A file
read within one timestamp tick of its last change (:func:`~hermes_core.agent.prompt.files.is_settled`)
is read again next turn, until a read finds it settled, or finds the fingerprint it had a tick
earlier (:func:`~hermes_core.agent.prompt.files.held_still`: a stamp ahead of the clock never
ages): a same-size write by another program in that tick leaves every stat field as it was (the
racy-clean case git knows). A source
that is not there is stood for by its folder: while the folder's fingerprint stays the one it had
when the file was found missing (and the folder had settled, see
:func:`~hermes_core.agent.prompt.files.settled_fingerprint`), no name was added to it, so one stat
of the home folder replaces three of missing files. When one
source moved, only that file is re-read and the sections re-joined. Writes made through
:mod:`hermes_core.agent.prompt.memory_files` notify the builder directly (no need to wait for a stat).

**Per-turn context.** The date/session line, the skills block (a :class:`SkillSelector`) and the
episodic-memory block (a :class:`MemorySource`) form ``Prompt.context``, which the providers send as
a leading text block of the last user message, after every cache breakpoint.

**Retrieval query.** Selectors get one :class:`~hermes_core.types.RetrievalQuery`: the message,
and apart from it the last ``prompt.history_turns`` user turns (with the assistant replies that
followed them), most recent first, each clipped to 300 characters. Retrieval scores the message;
the history only breaks ties and stands in for a short follow-up ("and in Chinese?"), so an
earlier topic never outvotes a message about something else. What the selector and the memory
source decided comes back on the prompt (``Prompt.turn``), not as state left on them.

**Cache plan.** Markers are placed by :mod:`hermes_core.agent.prompt.cache_plan`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from hermes_core.agent.prompt.cache_plan import message_tokens, plan_cache
from hermes_core.agent.prompt.clean_parts import STORE as CLEAN_PARTS
from hermes_core.agent.prompt.files import (
    ContextEvent,
    Fingerprint,
    LoadedFile,
    Look,
    ReadPolicy,
    cut_file_text,
    find_git_root,
    held_still,
    is_settled,
    look_for_project_file,
    next_look,
    probe,
    project_candidates,
    read_context_file,
    register_watcher,
    search_dirs,
    settled_fingerprint,
    tick_passed,
    unusable_candidates,
)
from hermes_core.agent.prompt.token_count import TokenCounter, tools_json
from hermes_core.config import Settings
from hermes_core.forked import child_lock
from hermes_core.injection import notices_in
from hermes_core.injection.verdicts import use_home_cache
from hermes_core.tokens import DEFAULT_ENCODING, count_tokens
from hermes_core.types import (
    CachePlan,
    MemoryFragment,
    Message,
    Prompt,
    RetrievalQuery,
    ToolSpec,
    TurnContext,
)

if TYPE_CHECKING:
    from hermes_core.agent.prompt.memory_files import MemoryStore

log = logging.getLogger("hermes_core.prompt")

SECTION_SEPARATOR = "\n\n---\n\n"
HISTORY_CLIP_CHARS = 300
# how a turn's record tells each kind of BLOCKED notice found in the skill selector's block
_BLOCKED_TOLD = {
    "file": "replaced by a BLOCKED notice",
    "paragraph": "that paragraph was replaced by a BLOCKED notice, the rest is loaded",
    "description": "the description was withheld; the skill is still listed by name",
}

DEFAULT_IDENTITY = (
    "You are Hermes, a helpful, knowledgeable and direct AI assistant. You answer accurately and "
    "concisely, say so when you are unsure, ask a clarifying question when a request is "
    "ambiguous, and use the tools and skills available to you when they help. You reply in the "
    "language the user writes in."
)


# --------------------------------------------------------------------------- seams

@runtime_checkable
class SkillSelector(Protocol):
    """Chooses skills for this turn; returns a rendered block ("" for none).

    The older form: ``query`` is the message and recent history as one text, ``message`` alone is
    what hard triggers should match. A selector that also has ``select_turn(RetrievalQuery) ->
    (block, result)`` is called that way instead, and its result travels on ``Prompt.turn``.
    """

    def select(self, query: str, history: Sequence[Message], message: str) -> str: ...


@runtime_checkable
class MemorySource(Protocol):
    """Recalls past sessions for this turn; returns a rendered block ("" for none).

    A source that also has ``recall(RetrievalQuery, exclude_session) -> (block, fragments)`` is
    called that way instead, and the fragments travel on ``Prompt.turn``.
    """

    def memories_block(self, query: str, exclude_session: str | None) -> str: ...


# --------------------------------------------------------------------------- retrieval query

def retrieval_query(message: str, history: Sequence[Message], turns: int) -> str:
    """The older single-text query: ``message`` twice, then the recent turns (most recent first)."""
    return RetrievalQuery.of(message, history, turns=turns, clip=HISTORY_CLIP_CHARS).text


def _folders_of(paths: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(os.path.dirname(p) for p in paths))


# --------------------------------------------------------------------------- sources

@dataclass
class _Source:
    """One section of the system prompt and what we last knew about its file."""

    key: Literal["soul", "memory", "user", "project"]
    path: Path | None
    fingerprint: Fingerprint | None = None
    loaded: bool = False
    dirty: bool = True
    text: str = ""
    tokens: int = 0
    events: tuple[ContextEvent, ...] = ()
    status: str = "missing"
    absent: bool = False   # the last look found nothing of that name (not even a broken link)
    # read within one timestamp tick of its last change: a same-size write in that tick would
    # leave every stat field as it was, so it is read again until a read finds it settled
    racy: bool = False
    seen: Look | None = None   # its fingerprint, and when a read first found it so
    held_since: int | None = None   # when a look first kept its text over an emptied file
    original: str = ""   # the file's text as read, before its cut ("" when none was read)
    # encoding -> (text, tokens): the file cut to its budget in another encoding than o200k's
    cuts: dict[str, tuple[str, int]] = field(default_factory=dict)


_HEADERS = {
    "memory": "## Memory (MEMORY.md)\n\n",
    "user": "## About the user (USER.md)\n\n",
}


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """What the builder currently holds for one source (for CLIs and diagnostics)."""

    key: str
    path: str | None
    status: str
    tokens: int


@dataclass
class _Stable:
    system: str = ""
    sha256: str = ""
    tokens: int = 0
    sections: dict[str, int] = field(default_factory=dict)


class PromptBuilder:
    """Builds a :class:`~hermes_core.types.Prompt` per turn around a cached, stable prefix.

    Thread-safe: the stable part is refreshed under a lock; the per-turn part is built by the
    caller's thread. ``rebuilds`` counts how often the system prompt was re-joined, ``file_reads``
    how often a file's bytes were read; both exist so tests can prove the cache works.
    """

    def __init__(self, home: Path, settings: Settings | None = None, *, cwd: Path | None = None,
                 skill_selector: SkillSelector | None = None,
                 memory_source: MemorySource | None = None,
                 clock: Callable[[], datetime] | None = None,
                 file_clock: Callable[[], int] = time.time_ns) -> None:
        self.settings = settings or Settings(source=None)
        self.home = Path(home).expanduser().absolute()
        # None when the working folder was deleted under the process: os.getcwd() then raises,
        # and there is no project to read context from (said once, the rest of the prompt stands)
        self.cwd: Path | None = None
        self._gone: tuple[ContextEvent, ...] = ()
        try:
            self.cwd = (Path(cwd) if cwd is not None else Path.cwd()).expanduser().absolute()
        except OSError as e:
            self._gone = (ContextEvent("warning", str(cwd or "the current folder"),
                                       f"no longer exists ({e.strerror or e}): deleted under this "
                                       "process; no project context (HERMES.md, AGENTS.md) is "
                                       "loaded"),)
            log.warning("%s", self._gone[0])
        self.skill_selector = skill_selector
        self.memory_source = memory_source
        self._clock = clock or (lambda: datetime.now(UTC))
        # what "now" is when judging whether a file or folder changed too recently to trust its
        # stat (epoch ns, the files' own clock); tests pass a later one to read every file settled
        self._file_clock = file_clock
        p = self.settings.prompt
        self._policy = ReadPolicy(token_budget=p.file_token_budget, max_file_bytes=p.max_file_bytes,
                                  injection_scan=p.injection_scan,
                                  scan_categories=tuple(p.injection_categories))
        # MEMORY.md and USER.md hold notes about the user and past work: data, scanned as such
        self._data_policy = replace(self._policy, data=True)
        if p.injection_scan:
            # the learned scorer's verdicts on this home's files (and recalled memories) are kept
            # in it by content hash, so a restart with nothing changed never imports scikit-learn
            use_home_cache(self.home / "cache" / "injection")
            # and the parts of its context files the rules found clean: a restart with nothing
            # changed scans nothing
            CLEAN_PARTS.attach(self.home / "cache" / "injection")
        self._sources = (_Source("soul", self.home / "SOUL.md"),
                         _Source("memory", self.home / "MEMORY.md"),
                         _Source("user", self.home / "USER.md"),
                         _Source("project", None))
        self._find_candidates()
        self._home_dir = str(self.home)
        self._home_paths = tuple(str(s.path) for s in self._sources[:3])
        # folder -> its fingerprint when the sources absent from it were last looked for
        self._settled: dict[str, Fingerprint] = {}
        self._looked: dict[str, Look] = {}   # folder -> its fingerprint, and when first seen so
        self._clock_cache: tuple[object, str] | None = None
        self._stable: _Stable | None = None
        # encoding -> (the o200k prefix it was made beside, the prefix cut in that encoding)
        self._stables: dict[str, tuple[_Stable, _Stable]] = {}
        self._force = True
        # free in a forked child: held across the files' reads, it was held for ever in a worker
        # forked during a turn of the parent's, whose first turn then hung
        self._lock = child_lock(threading.RLock())
        self.rebuilds = 0
        self.file_reads = 0
        self.turn_events: tuple[ContextEvent, ...] = ()
        register_watcher(self)

    # ------------------------------------------------------------------ invalidation

    def invalidate(self, path: Path | None = None) -> None:
        """Forget cached content: of every source (``path=None``), or of the source at ``path``.

        The next ``build()`` re-reads what was invalidated; a full invalidation also re-joins the
        prompt even if no text changed.
        """
        with self._lock:
            if path is None:
                for s in self._sources:
                    s.dirty = True
                self._find_candidates()
                self._settled.clear()
                self._looked.clear()
                self._force = True
                return
            # realpath, not Path.resolve(): that raises on a symlink loop (Python 3.11), and one
            # looping file must not stop the others from being invalidated
            target = os.path.realpath(path)
            for s in self._sources:
                if s.path is not None and os.path.realpath(s.path) == target:
                    s.dirty = True

    def _find_candidates(self) -> None:
        """The project-file candidates for ``cwd``, their folders, and the real path of the
        topmost folder searched: a candidate that is a link may not lead out of it."""
        self._candidates: tuple[str, ...] = ()
        self._candidate_dirs: tuple[str, ...] = ()
        self._project_root: str | None = None
        if self.cwd is None:
            return
        dirs = search_dirs(self.cwd, find_git_root(self.cwd))
        self._candidates = project_candidates(dirs)
        self._candidate_dirs = _folders_of(self._candidates)
        self._project_root = os.path.realpath(dirs[-1])

    def file_changed(self, path: Path) -> None:
        """Called by :func:`~hermes_core.agent.prompt.files.notify_file_changed` after a write."""
        self.invalidate(path)

    def memory_store(self) -> MemoryStore:
        """A :class:`~hermes_core.agent.prompt.memory_files.MemoryStore` on this builder's home."""
        from hermes_core.agent.prompt.memory_files import MemoryStore

        return MemoryStore(self.home, self.settings)

    # ------------------------------------------------------------------ the stable prefix

    def _policy_for(self, src: _Source) -> ReadPolicy:
        """How ``src``'s file is read and cut: MEMORY.md and USER.md as data, the rest as files."""
        return self._data_policy if src.key in ("memory", "user") else self._policy

    def _load(self, src: _Source, path: Path, now_ns: int) -> bool:
        name = path.name
        policy = self._policy_for(src)
        result: LoadedFile = read_context_file(path, policy, display_name=name)
        self.file_reads += result.reads
        src.path, src.fingerprint, src.loaded, src.dirty = path, result.fingerprint, True, False
        src.events, src.status, src.held_since = result.events, result.status, None
        # the fingerprint was taken before the read: settled then, any later write moves it; or
        # the same as a tick ago (a stamp ahead of the clock never ages)
        fp = result.fingerprint
        still = held_still(fp, src.seen, now_ns)
        src.seen = next_look(fp, src.seen, now_ns)
        src.racy = fp is not None and not is_settled(fp[0], now_ns) and not still
        text = self._dressed(src, result.status, result.text)
        # a change past the cut (the omitted middle) moves what another encoding's cut holds
        changed = text != src.text or result.original != src.original
        src.text, src.tokens, src.original, src.cuts = text, count_tokens(text), result.original, {}
        return changed

    @staticmethod
    def _dressed(src: _Source, status: str, text: str) -> str:
        """A source's text as the system prompt holds it: SOUL.md stood for by the default
        identity when missing or wholly blocked, the others under their heading."""
        if src.key == "soul":
            if status in ("missing", "skipped"):
                return DEFAULT_IDENTITY
            return f"{DEFAULT_IDENTITY}\n\n{text}" if status == "blocked" else text
        if not text:
            return text
        name = src.path.name if src.path is not None else ""
        return (_HEADERS.get(src.key) or f"## Project context ({name})\n\n") + text

    def _cut(self, src: _Source, encoding: str) -> tuple[str, int]:
        """``src``'s text and tokens with its file cut to its budget in ``encoding`` (the model's
        own, when it is not o200k_base's): cut from the file as read, so the cut is the one a
        build in that encoding makes; the o200k text when that already fits."""
        if encoding == DEFAULT_ENCODING:
            return src.text, src.tokens
        held = src.cuts.get(encoding)
        if held is not None:
            return held
        text = src.text
        policy = self._policy_for(src)
        if src.original and src.path is not None and (
                src.status == "truncated"
                or count_tokens(src.original, encoding) > policy.token_budget):
            body, status, events = cut_file_text(src.original, replace(policy, encoding=encoding),
                                                 name=src.path.name, shown=str(src.path))
            for event in events:
                log.warning("%s (cut in %s)", event, encoding)
            text = self._dressed(src, status, body)
        held = src.cuts[encoding] = (text, count_tokens(text, encoding))
        return held

    def _clear(self, src: _Source) -> bool:
        changed = bool(src.text)
        src.path, src.fingerprint, src.loaded, src.dirty = None, None, True, False
        src.text, src.tokens, src.events, src.status = "", 0, (), "missing"
        src.original, src.cuts = "", {}
        return changed

    def _refresh(self) -> _Stable:
        """Stat every source, re-read the ones that moved, re-join if any text changed.

        A source found absent is looked for again only when its folder changed: one stat of the
        home folder stands for the missing SOUL.md, MEMORY.md and USER.md, one per searched folder
        for a project file never found (a file that appears adds a name, which moves the folder's
        mtime; see :func:`~hermes_core.agent.prompt.files.settled_fingerprint` for the folders
        changed too recently to trust that). A file that is there is stat-ed every turn."""
        changed = False
        now = self._file_clock()
        home_fp, home_settled = settled_fingerprint(self._home_dir, now)
        quiet = (not self._force and home_fp is not None
                 and self._settled.get(self._home_dir) == home_fp)
        for src, where in zip(self._sources[:3], self._home_paths, strict=True):
            if quiet and src.absent and src.loaded and not src.dirty:
                continue   # was not there, and no name was added to its folder since
            fp, there = probe(where)
            if self._mid_write(src, fp, now):
                pass
            elif src.dirty or src.racy or self._force or not src.loaded or fp != src.fingerprint:
                assert src.path is not None
                changed |= self._load(src, src.path, now)
            src.absent = not there and src.fingerprint is None
        self._settle(self._home_dir, home_fp, home_settled, now)
        project = self._sources[3]
        if self._force or not project.absent or project.dirty or not self._project_quiet(now):
            found, any_there = look_for_project_file(self._candidates, self._project_root)
            if found is None:
                if self._force or not project.loaded or project.path is not None:
                    gone = self._gone_under(project)
                    changed |= self._clear(project)
                    project.events = self._gone + gone + unusable_candidates(
                        self._candidates, None, self._project_root)
            else:
                path, fp = found
                if path == project.path and self._mid_write(project, fp, now):
                    pass
                elif (project.dirty or project.racy or self._force or path != project.path
                        or fp != project.fingerprint or not project.loaded):
                    changed |= self._load(project, path, now)
                    project.events = (unusable_candidates(self._candidates, path, self._project_root)
                                      + project.events)
            project.absent = found is None and not any_there
        if changed or self._force or self._stable is None:
            self._stable = self._join()
            self.rebuilds += 1
            self._force = False
        return self._stable

    def _gone_under(self, project: _Source) -> tuple[ContextEvent, ...]:
        """A warning (logged once, here) when the project file was lost with the working folder:
        deleted under the process (a branch switch, ``rm -r`` in another shell)."""
        if project.path is None or self.cwd is None or os.path.isdir(self.cwd):
            return ()
        event = ContextEvent("warning", str(self.cwd), "no longer exists: the working folder was "
                             f"deleted under this process; its project context ({project.path.name})"
                             " is dropped")
        log.warning("%s", event)
        return (event,)

    def _mid_write(self, src: _Source, fp: Fingerprint | None, now: int) -> bool:
        """``src``'s file, which had text, is empty and stamped within a tick: most likely
        emptied by a writer about to write it (``open(path, "w")``, an in-place save). Its text
        stands this turn, without a read, and it is looked at again next turn; once settled
        (or the same a tick later, see :func:`~hermes_core.agent.prompt.files.held_still`) an
        empty file is read as one. Never over a write we were told of (``notify_file_changed``:
        the agent's removal of its last entry is a finished write) or ``invalidate()``, and for a
        tick from the first such turn at most: a file emptied again at every look (a script's
        loop) gets another fingerprint each time, and would keep its old text for ever."""
        if (src.dirty or self._force or fp is None or fp[1] != 0 or not src.original
                or not stat.S_ISREG(fp[3])):
            src.held_since = None
            return False
        still = held_still(fp, src.seen, now)
        src.seen = next_look(fp, src.seen, now)
        since = now if src.held_since is None else src.held_since
        if is_settled(fp[0], now) or still or tick_passed(since, now, fp[0]):
            src.held_since = None
            return False
        src.held_since, src.racy = since, True
        return True

    def _settle(self, folder: str, fp: Fingerprint | None, settled: bool, now: int) -> None:
        """Remember ``folder``'s fingerprint as the one its absent sources were last seen absent
        under (taken before they were looked for), when it is settled: old enough, or the same
        as a tick ago (:func:`~hermes_core.agent.prompt.files.held_still`)."""
        seen = self._looked.get(folder)
        settled = settled or held_still(fp, seen, now)
        look = next_look(fp, seen, now)
        if look is None:
            self._looked.pop(folder, None)
        else:
            self._looked[folder] = look
        if settled and fp is not None:
            self._settled[folder] = fp
        else:
            self._settled.pop(folder, None)

    def _project_quiet(self, now: int) -> bool:
        """No project-file candidate was there at the last look and none of their folders changed
        since: stats each folder (and records it for the next turn)."""
        quiet = True
        for folder in self._candidate_dirs:
            fp, settled = settled_fingerprint(folder, now)
            if fp is None or self._settled.get(folder) != fp:
                quiet = False
            self._settle(folder, fp, settled, now)
        return quiet

    def _join(self, encoding: str = DEFAULT_ENCODING) -> _Stable:
        cuts = [(s.key, *self._cut(s, encoding)) for s in self._sources]
        system = SECTION_SEPARATOR.join(text for _, text, _ in cuts if text)
        return _Stable(system=system,
                       sha256=hashlib.sha256(system.encode("utf-8")).hexdigest(),
                       tokens=count_tokens(system, encoding),
                       sections={key: n for key, _, n in cuts})

    def _stable_in(self, encoding: str) -> _Stable:
        """The stable prefix with every file cut in ``encoding`` (caller holds the lock): each
        model's prefix stays byte-identical from turn to turn, as its cache needs."""
        stable = self._refresh()
        if encoding == DEFAULT_ENCODING:
            return stable
        held = self._stables.get(encoding)
        if held is None or held[0] is not stable:
            held = self._stables[encoding] = (stable, self._join(encoding))
        return held[1]

    @property
    def system_prompt(self) -> str:
        """The current stable system prompt (refreshing it first)."""
        with self._lock:
            return self._refresh().system

    @property
    def events(self) -> tuple[ContextEvent, ...]:
        """Warnings about the files behind the current system prompt, plus the last turn's."""
        with self._lock:
            return tuple(e for s in self._sources for e in s.events) + self.turn_events

    def sources(self, encoding: str = DEFAULT_ENCODING) -> tuple[SourceInfo, ...]:
        """Each source as a build in ``encoding`` holds it, its tokens in that encoding."""
        with self._lock:
            return tuple(SourceInfo(s.key, str(s.path) if s.path else None, s.status,
                                    self._cut(s, encoding)[1]) for s in self._sources)

    def section_tokens(self, counter: TokenCounter) -> dict[str, int]:
        """Each source's text as a request counted with ``counter`` holds it (the files cut in
        its encoding), counted with it: the compactor's counts are all the model's."""
        encoding = getattr(counter, "encoding", DEFAULT_ENCODING)
        with self._lock:
            return {s.key: counter.count(self._cut(s, encoding)[0]) for s in self._sources}

    def recut(self, prompt: Prompt, encoding: str) -> Prompt:
        """``prompt`` for a model counting in ``encoding``: its files cut, and its recalled
        sessions fitted, to their budgets in that encoding. A turn's prompt is built before
        routing picks the model (or a failover another): gpt-4's cl100k_base spends 2-3x
        o200k_base's tokens on Thai or Hindi, so budgets met in one encoding are overrun in the
        other. A system prompt that is not this builder's (a hook's) is left as it is; the
        counts are the compactor's to redo."""
        turn = prompt.turn
        if turn is None or turn.encoding == encoding:
            return prompt
        with self._lock:
            was, stable = self._stable_in(turn.encoding).system, self._stable_in(encoding)
        system = stable.system if prompt.system == was else prompt.system
        context, memories = prompt.context, turn.memories_block
        refit = getattr(self.memory_source, "refit", None)
        if memories and refit is not None:
            block, fragments = refit(turn.memories, encoding)
            if block != memories:
                context = context.replace(memories, block, 1)
                turn = replace(turn, memories_block=block, memories=tuple(fragments))
        return replace(prompt, system=system, context=context,
                       turn=replace(turn, encoding=encoding))

    # ------------------------------------------------------------------ one turn

    def _clock_line(self, session_id: str | None, model: str | None) -> str:
        now = self._clock()
        key = (now.replace(second=0, microsecond=0), session_id, model)
        cached = self._clock_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        line = self._format_clock(now, session_id, model)
        self._clock_cache = (key, line)
        return line

    @staticmethod
    def _format_clock(now: datetime, session_id: str | None, model: str | None) -> str:
        when = f"{now:%Y-%m-%d %H:%M} {now.tzname() or ''}".rstrip()
        parts = [f"Current date and time: {when} ({now:%A})"]
        if session_id:
            parts.append(f"session: {session_id}")
        if model:
            parts.append(f"model: {model}")
        return " | ".join(parts)

    def _call_block(self, what: str, fn: Callable[[], str], events: list[ContextEvent]) -> str:
        try:
            block = fn()
        except Exception as e:  # a failing add-on must not cost the user their turn
            log.warning("%s failed (%s: %s); continuing without it", what, type(e).__name__, e)
            events.append(ContextEvent("warning", what, f"failed ({type(e).__name__}: {e}); "
                                       "this turn has no such block"))
            return ""
        return block.strip() if isinstance(block, str) else ""

    def _select_skills(self, selector: SkillSelector, query: RetrievalQuery,
                       history: Sequence[Message], events: list[ContextEvent]) -> tuple[str, Any]:
        select_turn = getattr(selector, "select_turn", None)
        got: list[Any] = [None]

        def call() -> str:
            if select_turn is None:
                return selector.select(query.text, history, query.message)
            block, got[0] = select_turn(query)
            return str(block)
        block = self._call_block("skill selector", call, events)
        for name, why, what in notices_in(block):   # an auto-loaded SKILL.md's blocked parts,
            events.append(ContextEvent("blocked", name, f"{why}; " + _BLOCKED_TOLD[what]))  # a hint's
        return block, got[0]

    def _recall(self, source: MemorySource, query: RetrievalQuery, session_id: str | None,
                events: list[ContextEvent], encoding: str) -> tuple[str, tuple[MemoryFragment, ...]]:
        recall = getattr(source, "recall", None)
        if recall is None:
            return self._call_block("memory source",
                                    lambda: source.memories_block(query.text, session_id), events), ()
        got: list[tuple[MemoryFragment, ...]] = [()]
        refit = getattr(source, "refit", None) if encoding != DEFAULT_ENCODING else None

        def call() -> str:
            block, fragments = recall(query, session_id)
            if refit is not None and block:   # fitted in o200k_base: fitted again in the model's
                block, fragments = refit(fragments, encoding)
            got[0] = tuple(fragments)
            return str(block)
        block = self._call_block("memory source", call, events)
        return block, got[0] if block else ()

    def build(self, message: str, history: Sequence[Message] = (), *,
              session_id: str | None = None, model: str | None = None,
              provider_kind: str | None = None, tools: Sequence[ToolSpec] = (),
              encoding: str = DEFAULT_ENCODING) -> Prompt:
        """The prompt for one turn: stable system, per-turn context, history + this message.

        Cache markers are planned by the call loop for the provider that actually receives the
        request; ``provider_kind`` plans them here too, for callers that render without the loop.
        The files and recalled sessions are cut to their budgets in ``encoding`` (the model's,
        when it is known before routing; :meth:`recut` when routing picks another), and every
        count is in it.
        """
        with self._lock:
            stable = self._stable_in(encoding)
        history = tuple(history)
        turn_events: list[ContextEvent] = []
        query = RetrievalQuery.of(message, history, turns=self.settings.prompt.history_turns,
                                  clip=HISTORY_CLIP_CHARS)
        skills, retrieval = "", None
        if self.skill_selector is not None:
            skills, retrieval = self._select_skills(self.skill_selector, query, history, turn_events)
        memories, fragments = "", tuple[MemoryFragment, ...]()
        if self.memory_source is not None:
            memories, fragments = self._recall(self.memory_source, query, session_id, turn_events,
                                               encoding)
        self.turn_events = tuple(turn_events)
        turn = TurnContext(skills_block=skills, memories_block=memories,
                           clock_line=self._clock_line(session_id, model), retrieval=retrieval,
                           memories=fragments, query=query, encoding=encoding)
        context = turn.render()
        messages = (*history, Message("user", message))
        msg_tokens = [message_tokens(m.content) for m in messages]
        tools = tuple(tools)
        tools_tokens = count_tokens(tools_json(tools), encoding)
        llm = self.settings.llm
        cache = CachePlan(ttl=llm.cache_ttl) if provider_kind is None else plan_cache(
            provider_kind=provider_kind, model=model, enabled=llm.cache_system_prompt,
            ttl=llm.cache_ttl, prefix_sha256=stable.sha256,
            prefix_tokens=stable.tokens + tools_tokens, messages=messages,
            message_tokens=msg_tokens,
            message_breakpoints=self.settings.prompt.message_breakpoints,
            min_slack=self.settings.prompt.cache_min_slack)
        context_tokens = count_tokens(context, encoding)
        if encoding != DEFAULT_ENCODING:
            msg_tokens = [count_tokens(m.content, encoding) for m in messages]
        history_tokens = sum(msg_tokens[:-1])
        tokens = {**stable.sections, "system": stable.tokens, "context": context_tokens,
                  "skills": count_tokens(skills, encoding),
                  "memories": count_tokens(memories, encoding),
                  "history": history_tokens, "message": msg_tokens[-1], "tools": tools_tokens,
                  "total": stable.tokens + context_tokens + history_tokens + msg_tokens[-1]
                  + tools_tokens}
        return Prompt(system=stable.system, messages=messages, context=context, tools=tools,
                      cache=cache, tokens=tokens, turn=turn)
