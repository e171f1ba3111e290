"""Context files (SOUL.md, MEMORY.md, USER.md, HERMES.md): fingerprint, read safely, scan, truncate.

Everything here is about turning one file on disk into one section of the cache-stable system
prompt, without ever crashing on what a user (or an attacker) left in that file:

* **Fingerprint.** ``(mtime_ns, size, inode, mode, uid, gid, ctime_ns)`` from one ``stat()``:
  cheap enough to check every turn, and an atomic replace (new inode) or an in-place edit (new
  mtime/size) both move it. Mode and owner are in it because fixing an unreadable file (``chmod
  644``, ``chown`` after a ``sudo`` edit) leaves mtime alone, and the file must be re-read once it
  can be. ctime is in it because tools that preserve timestamps (``touch -r``, ``cp -p``,
  ``rsync -t``) put the old mtime back after a same-size edit, while the kernel moves ctime on
  every write and nothing can set it back. The one edit it cannot see is an in-place rewrite to
  the same size within one filesystem timestamp tick (a few ms) of the previous write; writes
  through hermes_core notify the builders directly (:func:`notify_file_changed`), and
  ``PromptBuilder.invalidate()`` covers any other writer.
* **Consistent reads.** A file is stat-ed, read, and stat-ed again; if the fingerprint moved while
  we read, we read again (a few times), so the prompt never mixes two versions of a file with the
  fingerprint of a third.
* **Safe decoding.** UTF-8, or the UTF-16/32 a byte-order mark announces (:func:`decode_text`);
  otherwise a GBK / GB18030 (or other double-byte CJK) file, or UTF-16 without a mark, is read
  in the encoding :mod:`~hermes_core.agent.prompt.guess_encoding` finds, and a warning naming
  the file says which.
  Line endings become ``\n`` (CRLF and CR-only files are paragraphs and line numbers as an
  editor shows them). Missing files are skipped quietly. Unreadable, binary (NUL bytes),
  undecodable, empty and huge files produce a :class:`ContextEvent` warning that names the file;
  they are skipped, or (huge) read as a head and a tail only.
* **Project links.** A project file that is a link may not lead out of its repository, but to
  Markdown (:func:`link_escapes`): a cloned repository is not trusted with the user's files.
* **Injection scan** (:mod:`hermes_core.injection`). Each hostile paragraph is replaced by a
  one-line ``[BLOCKED: ...]`` notice (the whole file only when every paragraph is hostile); the
  matched text itself never reaches the prompt.
* **Token budget.** An over-long file keeps its head (70 % of the budget) and tail (20 %) with a
  marker between, so both the intro and the most recent additions survive.
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import os
import re
import stat
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from hermes_core.agent.prompt.clean_parts import STORE as CLEAN_PARTS
from hermes_core.agent.prompt.guess_encoding import guess_decode, is_text
from hermes_core.agent.prompt.guess_encoding import shown as shown_codec
from hermes_core.forked import child_lock
from hermes_core.injection import (  # noqa: F401 - re-exported for callers
    INJECTION_CATEGORIES,
    GuardedText,
    blocked_notice,
    guard_text,
    scan_for_injection,
)
from hermes_core.injection.memo import GuardMemo
from hermes_core.tokens import DEFAULT_ENCODING, count_tokens, head_tokens, tail_tokens

log = logging.getLogger("hermes_core.prompt")

Fingerprint = tuple[int, int, int, int, int, int, int]
"""``(st_mtime_ns, st_size, st_ino, st_mode, st_uid, st_gid, st_ctime_ns)`` of a file."""

EventKind = Literal["warning", "blocked"]

HEAD_SHARE = 0.7
TAIL_SHARE = 0.2
DEFAULT_MAX_FILE_BYTES = 2_000_000
READ_RETRIES = 3


@dataclass(frozen=True, slots=True)
class ContextEvent:
    """Something a user should know about a context file (shown once, when the file is read)."""

    kind: EventKind
    file: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.reason}"


@dataclass(frozen=True, slots=True)
class ReadPolicy:
    """How a context file is read: its token budget (in ``encoding``), byte cap and injection
    scan."""

    token_budget: int = 20_000
    encoding: str = DEFAULT_ENCODING
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    injection_scan: bool = True
    scan_categories: tuple[str, ...] = INJECTION_CATEGORIES
    retries: int = READ_RETRIES
    # the file is data about the user and past work (MEMORY.md, USER.md), not instructions:
    # orders about "your reply" in it are scanned as hostile (hermes_core.injection.hijack)
    data: bool = False


Status = Literal["ok", "truncated", "blocked", "skipped", "missing"]


@dataclass(frozen=True, slots=True)
class LoadedFile:
    """The outcome of reading one context file.

    ``text`` is what goes into the prompt ("" when skipped); ``fingerprint`` is the stat that
    ``text`` corresponds to (None when the file changed under every read: re-read next time);
    ``status`` is one of ok, truncated, blocked, skipped, missing; ``reads`` counts the times the
    file's bytes were actually read (retries included).
    """

    path: Path
    text: str
    fingerprint: Fingerprint | None
    status: Status
    events: tuple[ContextEvent, ...] = ()
    reads: int = 0
    tokens: int = 0
    #: the file's text as read, before its cut and scan ("" when none was read): what a cut in
    #: another encoding starts from (:func:`cut_file_text`)
    original: str = field(default="", repr=False)


# --------------------------------------------------------------------------- fingerprints

def fingerprint_of(st: os.stat_result) -> Fingerprint:
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_mode, st.st_uid, st.st_gid, st.st_ctime_ns)


def stat_fingerprint(path: Path | str) -> Fingerprint | None:
    """The file's fingerprint, or None when nothing is there (or it cannot even be stat-ed)."""
    try:
        return fingerprint_of(os.stat(path))
    except OSError:
        return None


def probe(path: str) -> tuple[Fingerprint | None, bool]:
    """``stat_fingerprint(path)``, and whether anything has that name at all (a dangling symlink
    has; a missing file has not). One ``lstat`` for a missing name or a plain file, as cheap as
    the ``stat`` it replaces; a symlink costs a second call."""
    fp, there, _link = _probe_link(path)
    return fp, there


def _probe_link(path: str) -> tuple[Fingerprint | None, bool, bool]:
    """:func:`probe`, and whether the name is a symlink."""
    try:
        st = os.lstat(path)
    except OSError:
        return None, False, False
    if stat.S_ISLNK(st.st_mode):
        return stat_fingerprint(path), True, True
    return fingerprint_of(st), True, False


#: A folder whose mtime is older than this when it is looked at is *settled*: any later change of
#: its entries moves its mtime (or ctime). A change within one timestamp tick of the previous one
#: may leave both where they were, so a folder changed more recently than a tick is not trusted.
#: Filesystems that keep sub-second times tick every few milliseconds (a jiffy on Linux, ~16 ms on
#: Windows); those that keep whole seconds (FAT: 2 s, HFS+: 1 s) get the longer margin.
SETTLED_NS = 100_000_000
SETTLED_COARSE_NS = 2_000_000_000


def _tick(mtime_ns: int) -> int:
    return SETTLED_COARSE_NS if mtime_ns % 1_000_000_000 == 0 else SETTLED_NS


def is_settled(mtime_ns: int, now_ns: int) -> bool:
    """Whether a change made after ``now_ns`` must move an mtime of ``mtime_ns`` (it is older than
    one timestamp tick, see :data:`SETTLED_NS`); a whole-second mtime gets the coarse margin."""
    return now_ns - mtime_ns > _tick(mtime_ns)


def tick_passed(since_ns: int, now_ns: int, mtime_ns: int) -> bool:
    """Whether more than a tick of ``mtime_ns``'s timestamps went by from ``since_ns`` to
    ``now_ns`` (both ``time.time_ns()``); a clock that went back counts as one: what was timed
    from before the jump is not trusted to be recent."""
    return now_ns < since_ns or now_ns - since_ns > _tick(mtime_ns)


Look = tuple[Fingerprint, int]
"""A fingerprint and the clock (``time.time_ns()``) when it was first seen so."""


def held_still(fp: Fingerprint | None, seen: Look | None, now_ns: int) -> bool:
    """Whether ``fp`` was already the fingerprint a tick of the clock ago (``seen``): then the
    write that stamped it, and any other in its tick, came before that earlier look, so any
    later write moves it, whatever its mtime says.

    :func:`is_settled` alone judges by age, and a stamp ahead of the clock never ages: a clock
    set back, a file unpacked or ``touch -d``-ed with a later time, was read again every turn
    until the clock caught up. Two looks settle it, and stay safe where an ahead-of-the-clock
    stamp is really *now* (a file server whose clock runs ahead): a same-tick write comes
    before the second look or not at all."""
    return (fp is not None and seen is not None and seen[0] == fp
            and now_ns - seen[1] > _tick(fp[0]))


def next_look(fp: Fingerprint | None, seen: Look | None, now_ns: int) -> Look | None:
    """What :func:`held_still` compares the next look with: ``seen`` while ``fp`` stays (and the
    clock did not go back), else this look."""
    if fp is None:
        return None
    if seen is None or seen[0] != fp or now_ns < seen[1]:
        return fp, now_ns
    return seen


def settled_fingerprint(folder: str, now_ns: int) -> tuple[Fingerprint | None, bool]:
    """The folder's fingerprint, and whether it is settled at ``now_ns`` (``time.time_ns()``):
    then, while the fingerprint stays the same, no name was added to or removed from it."""
    try:
        st = os.stat(folder)
    except OSError:
        return None, False
    return fingerprint_of(st), is_settled(st.st_mtime_ns, now_ns)


# --------------------------------------------------------------------------- truncation

def truncate_to_budget(text: str, budget: int, *, name: str,
                       encoding: str = DEFAULT_ENCODING) -> tuple[str, int]:
    """Keep the head (70 % of ``budget``) and the tail (20 %), with a marker between; tokens of
    ``encoding`` (the model's, when known).

    Returns ``(text, omitted_tokens)``; ``omitted_tokens`` is 0 when the text already fits. Cuts
    snap to a line break when one is near, so a kept section does not start mid-sentence.
    """
    total = count_tokens(text, encoding)
    if total <= budget:
        return text, 0
    head_end = len(head_tokens(text, int(budget * HEAD_SHARE), encoding))
    tail_start = max(head_end,
                     len(text) - len(tail_tokens(text, int(budget * TAIL_SHARE), encoding)))
    nl = text.rfind("\n", max(0, head_end - 200), head_end)
    if nl > 0:
        head_end = nl
    nl = text.find("\n", tail_start, min(len(text), tail_start + 200))
    if nl >= 0:
        tail_start = nl + 1
    head, tail = text[:head_end].rstrip(), text[tail_start:].lstrip("\n")
    omitted = max(0, total - count_tokens(head, encoding) - count_tokens(tail, encoding))
    marker = (f"\n\n[... {name} truncated: about {omitted} tokens omitted to fit its "
              f"{budget}-token budget (head 70%, tail 20% kept) ...]\n\n")
    return head + marker + tail, omitted


# --------------------------------------------------------------------------- reading

class _Skip(Exception):
    """Internal: the file is skipped for the given reason."""


#: Parts of context files whose scan is remembered: the head and tail of the four sources, twice
#: over (a digest and a count each for a clean part, see ``injection/memo.py``). A file read again
#: unchanged, or grown at its end past its budget (the kept head is as it was), is not scanned
#: again. Backed by the home's ``clean_parts.log`` once a builder attached it: the memo files a
#: part only when the learned model judged it (a part its failed load or e5 stand-ins passed on the
#: rules alone is scanned again by the next process, whose model may work).
GUARD_MEMO = 16
_PARTS = GuardMemo(GUARD_MEMO, CLEAN_PARTS)


#: Byte-order marks and the codec each announces; UTF-32 LE's begins with UTF-16 LE's, so first.
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
         (codecs.BOM_UTF16_BE, "utf-16-be"))


def bom_codec(raw: bytes) -> tuple[str, int]:
    """The codec a byte-order mark at the start of ``raw`` announces, and the mark's length
    (UTF-8 and 0 without one)."""
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            return codec, len(bom)
    return "utf-8", 0


class UndecodableText(ValueError):
    """The bytes are not text a context file may hold; ``str()`` says why, for people."""


def decode_text(raw: bytes) -> str:
    """The text of a context or memory file: UTF-8, or the UTF-16/32 a byte-order mark announces.

    PowerShell's ``>`` and Notepad's "Unicode" write UTF-16 with a mark; its NUL bytes made it
    look binary. Without a mark a NUL byte still means binary, and so does a NUL character in
    any encoding. Raises :class:`UndecodableText`.
    """
    codec, skip = bom_codec(raw)
    if codec == "utf-8" and b"\x00" in raw:
        raise UndecodableText("binary file (contains NUL bytes)")
    body = raw[skip:]
    try:
        text = body.decode(codec)
    except UnicodeDecodeError as e:
        if codec == "utf-8":
            line = body[: e.start].count(b"\n") + 1
            raise UndecodableText(f"not valid UTF-8 (byte 0x{body[e.start]:02x} on line {line})"
                                  ) from None
        raise UndecodableText(f"not valid {codec[:6].upper()} ({e.reason}), though its byte-order "
                              "mark says so") from None
    if "\x00" in text:
        raise UndecodableText("binary file (contains NUL characters)")
    return text


def _decode(raw: bytes) -> tuple[str, str | None]:
    """The file's text, and the codec guessed for it (None when it is UTF-8 or has a mark)."""
    try:
        return decode_text(raw), None
    except UndecodableText as e:
        if bom_codec(raw)[1] == 0 and (got := guess_decode(raw)) is not None:
            return got
        raise _Skip(f"{e}; skipped" + ("; save it as UTF-8" if "valid" in str(e) else "")) from None


_UNIT = {"utf-8": 1, "utf-16-le": 2, "utf-16-be": 2, "utf-32-le": 4, "utf-32-be": 4}


def _huge_codec(head_bytes: bytes, tail_bytes: bytes
                ) -> tuple[str, int, str | None, str | None]:
    """The codec of a huge file from its head and tail: the one its mark announces, UTF-8 when
    the head reads as UTF-8, else a guess from the head (:mod:`.guess_encoding`); its mark's
    length; the guessed codec (None when not guessed); and the head's text when finding the
    codec already decoded all of it (so it is decoded once)."""
    codec, skip = bom_codec(head_bytes)
    if skip:
        return codec, skip, None, None
    if b"\x00" not in head_bytes and b"\x00" not in tail_bytes:
        with contextlib.suppress(UnicodeDecodeError):
            return codec, 0, None, codecs.getincrementaldecoder("utf-8")().decode(
                head_bytes, final=False)
    got = guess_decode(head_bytes, partial=True)
    if got is not None:
        return got[1], 0, got[1], got[0]
    return codec, 0, None, None


def _read_huge(fh: _BinaryFile, size: int, cap: int) -> tuple[str, str | None]:
    """Head and tail of a file larger than ``cap`` bytes, decoded without splitting a character;
    and the codec guessed for it (None when it is UTF-8 or has a mark)."""
    head_bytes = fh.read(int(cap * 0.75))
    start = max(0, size - int(cap * 0.25))
    start -= start % 4                   # on a code unit of any encoding without a mark
    fh.seek(start)
    tail_bytes = fh.read(size - start)   # to where the stat said it ended: it may be growing
    codec, skip, guessed, head = _huge_codec(head_bytes, tail_bytes)
    unit = _UNIT.get(codecs.lookup(codec).name, 1)   # a guess spells it utf_16_le
    if skip:
        drop = (start - skip) % unit    # the mark shifted the code units
        tail_bytes = tail_bytes[(unit - drop) % unit:]
    if codec == "utf-8":
        if b"\x00" in head_bytes or b"\x00" in tail_bytes:
            raise _Skip("binary file (contains NUL bytes); skipped")
        i = 0
        while i < min(3, len(tail_bytes)) and 0x80 <= tail_bytes[i] <= 0xBF:
            i += 1  # drop the continuation bytes of a character cut by the seek
        tail_bytes = tail_bytes[i:]
    elif unit == 2:
        first = int.from_bytes(tail_bytes[:2], "little" if codec.endswith("le") else "big")
        if 0xDC00 <= first <= 0xDFFF:
            tail_bytes = tail_bytes[2:]   # the second half of a surrogate pair cut by the seek
    elif unit == 1:
        # a double-byte code page: a line feed is never the second byte of a character, so the
        # tail starts cleanly after the first one
        nl = tail_bytes.find(b"\n")
        tail_bytes = tail_bytes[nl + 1:] if nl >= 0 else b""
    try:
        if head is None:
            head = codecs.getincrementaldecoder(codec)().decode(head_bytes[skip:], final=False)
        tail = tail_bytes.decode(codec)
    except UnicodeDecodeError as e:
        raise _Skip(f"not valid {shown_codec(codec) if guessed else codec[:6].upper()} "
                    f"({e.reason}); skipped; save it as UTF-8") from None
    if "\x00" in head or "\x00" in tail or (
            guessed and not (is_text(head, codec) and is_text(tail, codec))):
        raise _Skip("binary file (contains NUL characters); skipped")
    omitted = size - len(head_bytes) - len(tail_bytes)
    return (f"{head}\n\n[... {omitted} bytes omitted: file exceeds {cap} bytes ...]\n\n{tail}",
            guessed)


class _BinaryFile(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...
    def seek(self, offset: int, whence: int = 0, /) -> int: ...


def read_context_file(path: Path, policy: ReadPolicy = ReadPolicy(), *,
                      display_name: str | None = None) -> LoadedFile:
    """Read one context file for the prompt: never raises for a bad file, always explains.

    ``display_name`` is what the prompt shows (``BLOCKED`` notices, truncation markers); events
    name the full path. Every event is also logged once, as a warning, here.
    """
    name = display_name or path.name
    shown = str(path)
    events: list[ContextEvent] = []
    reads = 0
    fp: Fingerprint | None = None

    def done(status: Status, text: str = "", reason: str | None = None,
             original: str = "") -> LoadedFile:
        if reason is not None:
            events.append(ContextEvent("warning", shown, reason))
        for ev in events:
            _emit(ev)
        return LoadedFile(path, text, fp, status, tuple(events), reads,
                          count_tokens(text, policy.encoding) if text else 0, original)

    text = ""
    guessed: str | None = None
    huge = False
    settled = False
    try:
        for _attempt in range(max(1, policy.retries)):
            try:
                st = os.stat(path)
            except FileNotFoundError:
                fp = None
                return done("missing", reason=_dangling(path))
            fp = fingerprint_of(st)
            if stat.S_ISDIR(st.st_mode):
                return done("skipped", reason="is a directory, not a file; skipped")
            if not stat.S_ISREG(st.st_mode):
                return done("skipped", reason="not a regular file; skipped")
            reads += 1
            with open(path, "rb") as fh:
                huge = st.st_size > policy.max_file_bytes
                try:
                    # never past the cap: a file growing since the stat is read again anyway
                    text, guessed = (_read_huge(fh, st.st_size, policy.max_file_bytes) if huge
                                     else _decode(fh.read(policy.max_file_bytes + 1)))
                    settled = True
                except _Skip:
                    # Half-written bytes (an editor rewriting in place) look binary or cut a
                    # character: judge them only if the file did not move while we read.
                    if stat_fingerprint(path) == fp:
                        raise
                    settled = False
                    continue
            if stat_fingerprint(path) == fp:
                break
        else:
            fp = None
            if not settled:
                return done("skipped", reason="kept changing while being read; skipped this "
                            "turn, re-reading next turn")
            events.append(ContextEvent("warning", shown, "kept changing while being read; "
                                       "using the last read and re-reading next turn"))
    except _Skip as e:
        return done("skipped", reason=str(e))
    except FileNotFoundError:  # deleted between stat and open
        fp = None
        return done("missing")
    except PermissionError:
        return done("skipped", reason="permission denied; skipped")
    except OSError as e:
        return done("skipped", reason=f"cannot read ({e.strerror or e}); skipped")

    if guessed is not None:
        events.append(ContextEvent("warning", shown, f"not UTF-8: read as {shown_codec(guessed)}, "
                                   "the encoding its bytes fit best; save it as UTF-8 if its "
                                   "text looks wrong"))
    if huge:
        events.append(ContextEvent("warning", shown, f"larger than {policy.max_file_bytes} bytes; "
                                   "only its head and tail were read"))
    # one line ending: a CR-only file (classic Mac, some exporters) was a single line to the scan,
    # so one hostile paragraph cost the whole file, reported as line 1; CRLF sent carriage returns
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        return done("skipped", reason="file is empty; skipped")
    original = text.strip("\n")
    text, status, cut_events = cut_file_text(original, policy, name=name, shown=shown)
    events.extend(cut_events)
    return done("truncated" if huge and status == "ok" else status, text, original=original)


def cut_file_text(original: str, policy: ReadPolicy, *, name: str, shown: str
                  ) -> tuple[str, Status, tuple[ContextEvent, ...]]:
    """A file's text as read cut to ``policy``'s budget in its encoding, then scanned: the text
    the prompt holds, its status (ok, truncated or blocked) and the events to tell (not yet
    logged). Also what the builder cuts again from for a model of another encoding."""
    events: list[ContextEvent] = []
    text, omitted = truncate_to_budget(original, policy.token_budget, name=name,
                                       encoding=policy.encoding)
    if omitted:
        events.append(ContextEvent("warning", shown, f"over its {policy.token_budget}-token "
                                   f"budget; about {omitted} tokens from the middle omitted"))
    if policy.injection_scan:   # only what the prompt will hold: a 2 MB file costs its budget
        text, blocked = _guard(text, original, name, shown, policy, events)
        if blocked:
            return text, "blocked", tuple(events)
    return text, "truncated" if omitted else "ok", tuple(events)


_MARKER = re.compile(r"\n\n\[\.\.\. .{1,200}? truncated: about \d+ tokens omitted .{1,200}?\.\.\.\]\n\n")


def _guard(text: str, original: str, name: str, shown: str, policy: ReadPolicy,
           events: list[ContextEvent]) -> tuple[str, bool]:
    """(text with hostile paragraphs replaced, whether nothing is left but the notice); the head
    and tail of a truncated file are guarded apart, tail lines numbered as in the file."""
    m = _MARKER.search(text)
    parts = [(text, 1)] if m is None else [(text[:m.start()], 1), (text[m.end():], 0)]
    guarded = []
    for part, first in parts:
        if first == 0:   # the tail: numbered where it sits in the file, after the omitted middle
            at = original.rfind(part)
            first = original.count("\n", 0, at) + 1 if at >= 0 else 1
        guarded.append(_guarded_part(part, name, policy, first))
    findings = [f for g in guarded for f in g.findings]
    if guarded and all(g.all_blocked for g in guarded):
        events.append(ContextEvent("blocked", shown, f"{findings[0].describe()}; replaced by a "
                                   "BLOCKED notice (prompt.injection_scan: false loads it anyway)"))
        return blocked_notice(name, findings[0]), True
    for finding in findings:   # one hostile paragraph costs that paragraph only
        events.append(ContextEvent("blocked", shown, f"{finding.describe()}; that paragraph was "
                                   "replaced by a BLOCKED notice, the rest is loaded"))
    if m is None:
        return guarded[0].text, False
    return guarded[0].text + m.group() + guarded[1].text, False




def _guarded_part(part: str, name: str, policy: ReadPolicy, first: int) -> GuardedText:
    """One part guarded: found clean by this process or an earlier one (``_PARTS`` and its log,
    :mod:`.clean_parts`), or scanned now (a clean one judged by the model stored for the next)."""
    return _PARTS.guard([part], name=name, categories=policy.scan_categories, first_line=first,
                        data=policy.data)[0]


def _dangling(path: Path) -> str | None:
    """Why a name that stats as missing is worth a warning: it is a link whose target is gone (a
    dotfiles repo moved), which would otherwise drop the file from every prompt without a word."""
    try:
        target = os.readlink(path)
    except OSError:   # not a link (or gone): simply missing
        return None
    shown = os.path.join(os.path.dirname(path), target)
    return f"is a link to {shown}, which does not exist; skipped until it does"


def _emit(event: ContextEvent) -> None:
    log.warning("%s", event)


# --------------------------------------------------------------------------- project context

PROJECT_PRIMARY = ("HERMES.md", ".hermes.md")
PROJECT_FALLBACK = ("AGENTS.md",)


def find_git_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding ``.git`` (a dir or a worktree file)."""
    for d in (start, *start.parents):
        if os.path.lexists(d / ".git"):
            return d
    return None


def search_dirs(cwd: Path, git_root: Path | None) -> tuple[Path, ...]:
    """Directories searched for project context: ``cwd`` up to the git root (just ``cwd`` outside
    a repository, so a stray file in ``/home`` is never picked up)."""
    if git_root is None or (git_root != cwd and git_root not in cwd.parents):
        return (cwd,)
    dirs: list[Path] = []
    for d in (cwd, *cwd.parents):
        dirs.append(d)
        if d == git_root:
            break
    return tuple(dirs)


def project_candidates(dirs: Sequence[Path]) -> tuple[str, ...]:
    """Every path that may hold project context, in priority order: HERMES.md or .hermes.md
    nearest to cwd first, then AGENTS.md nearest to cwd (first match wins)."""
    return tuple(str(d / n) for names in (PROJECT_PRIMARY, PROJECT_FALLBACK)
                 for d in dirs for n in names)


def find_project_file(candidates: Sequence[str],
                      root: str | None = None) -> tuple[Path, Fingerprint] | None:
    """The first usable candidate that is a regular file, with its fingerprint (one stat per
    candidate); see :func:`look_for_project_file` for ``root``."""
    return look_for_project_file(candidates, root)[0]


def look_for_project_file(candidates: Sequence[str], root: str | None = None
                          ) -> tuple[tuple[Path, Fingerprint] | None, bool]:
    """:func:`find_project_file` (symlinks followed), and whether any candidate's name was there
    at all: when none was, no candidate can appear without its folder changing.

    ``root`` (a real path: the repository's top, or the folder searched outside a repository)
    bounds where a candidate that is a link may lead (:func:`link_escapes`); one leading out is
    passed over like a link to nothing."""
    there_any = False
    for c in candidates:
        fp, there, link = _probe_link(c)
        there_any = there_any or there
        if fp is not None and stat.S_ISREG(fp[3]):
            if link and root is not None and link_escapes(c, root) is not None:
                continue
            return (Path(c), fp), True
    return None, there_any


#: What a project file linking out of its repository may lead to: a Markdown file, as a folder of
#: shared agent rules holds, and not a key file or a credentials store.
LINKED_RULES_SUFFIXES = (".md", ".markdown")


def link_escapes(path: str, root: str) -> str | None:
    """Where the link ``path`` leads, when that is out of ``root`` (a real path) and of the link's
    own folder, and is not a Markdown file; None when it may be read.

    A cloned repository is the user's to run in, not to trust: a HERMES.md committed as a link to
    ``../../.aws/credentials`` would otherwise put that file in every system prompt, sent to the
    provider. A link within the repository, or to shared rules kept as Markdown elsewhere, is read.
    """
    real = os.path.realpath(path)
    if real.lower().endswith(LINKED_RULES_SUFFIXES):
        return None
    for base in (root, os.path.realpath(os.path.dirname(path))):
        if os.path.commonpath((real, base)) == base:
            return None
    return real


def _not_a_file(path: str) -> str | None:
    """Why ``path`` (symlinks followed) is no file to read, or None when it is one (or cannot
    be stat-ed: :func:`look_for_project_file` passed it over as missing then)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, not a file; skipped"
    kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")
    return f"not a regular file ({kind}); skipped, never opened"


def unusable_candidates(candidates: Sequence[str], until: Path | None,
                        root: str | None = None) -> tuple[ContextEvent, ...]:
    """A warning (logged once, here) for each candidate ahead of ``until`` (all of them when
    None) that is a link to a missing target, one leading out of ``root``, or no regular file
    (a folder, a FIFO, a device): a project file that silently stopped counting, or gave its
    place to a lower one. Called when the chosen file changes, not every turn."""
    events: list[ContextEvent] = []
    for c in candidates:
        if until is not None and c == str(until):
            break
        if not os.path.lexists(c):
            continue
        if not os.path.exists(c):
            reason = _dangling(Path(c))
        elif root is not None and os.path.islink(c) and (real := link_escapes(c, root)):
            reason = (f"is a link to {real}, outside the repository {root}; skipped: a project "
                      "file may lead out of its repository only to a Markdown (.md) file")
        else:
            reason = _not_a_file(c)
        if reason is not None:
            events.append(ContextEvent("warning", c, reason))
            _emit(events[-1])
    return tuple(events)


# --------------------------------------------------------------------------- change notification

class FileWatcher(Protocol):
    """Anything that caches file contents and wants to hear about writes made by hermes_core."""

    def file_changed(self, path: Path) -> None: ...


@dataclass
class _Registry:
    watchers: weakref.WeakSet[FileWatcher] = field(default_factory=weakref.WeakSet)
    # free in a forked child (one a thread held at the fork hung the child's first builder)
    lock: threading.Lock = field(default_factory=lambda: child_lock(threading.Lock()))


_REGISTRY = _Registry()


def register_watcher(watcher: FileWatcher) -> None:
    """Subscribe ``watcher`` (held weakly) to :func:`notify_file_changed`."""
    with _REGISTRY.lock:
        _REGISTRY.watchers.add(watcher)


def notify_file_changed(path: Path) -> None:
    """Tell every live watcher that hermes_core just wrote ``path`` (e.g. a memory entry)."""
    with _REGISTRY.lock:
        watchers = list(_REGISTRY.watchers)
    resolved = Path(os.path.realpath(path))  # Path.resolve() raises on a symlink loop
    for w in watchers:
        w.file_changed(resolved)
