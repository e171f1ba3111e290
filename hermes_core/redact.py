"""Keep secrets out of every string that leaves the process: logs, errors, audit lines, CLI output.

Two nets: the exact secrets we hold (credential keys, whatever their format: a custom endpoint's
key has no recognisable prefix), and patterns of well-known key formats, for secrets we never held
(a body echoing a key, a key pasted into a message).

One :class:`Redactor` is built from the settings when they are loaded
(:meth:`hermes_core.config.Settings.redactor`). Building it also registers its secrets with this
module, so every writer that calls :func:`redact` (SDK debug lines, error objects and their headers,
sessions.db, transcripts, CLI output) scrubs them too, including writers that were never handed the
redactor; and it installs :func:`install_log_redaction`, so a library user's own log handlers, added
at any time, never see a key in a record from hermes_core or the SDK and HTTP loggers.
"""

from __future__ import annotations

import base64
import functools
import logging
import re
import string
import threading
import traceback
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from hermes_core.forked import child_lock
from hermes_core.log_lines import messages_one_line, one_line
from hermes_core.redact_forms import encoded_forms
from hermes_core.types import fingerprint

_KEY_PATTERNS = re.compile(
    r"(sk-ant-[A-Za-z0-9_\-]{8,}|sk-(?:proj-)?[A-Za-z0-9_\-]{16,}|xai-[A-Za-z0-9]{16,}"
    r"|gsk_[A-Za-z0-9]{16,}|AIza[0-9A-Za-z_\-]{20,}|(?<=Bearer )[A-Za-z0-9._\-]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|AKIA[0-9A-Z]{16}|hf_[A-Za-z0-9]{20,})")
# One rule for a configured secret of any length. One of MIN_SUBSTRING characters or more is
# scrubbed wherever it appears, inside other text too (a URL, a header value, glued to a word);
# a shorter one only where it stands as a word of its own (not next to a letter, digit, '_' or
# '-'), since "abc1" or "test" inside ordinary words is not the key, while "key=abc1" or
# '"abc1"' is. Short secrets are registered process-wide all the same: the REPL, the log record
# factory and every other writer call redact() without the settings in hand. Config load warns
# about a key this short (config.warn_short_keys): it is probably a placeholder or a typo.
MIN_SUBSTRING = 8
_KNOWN: set[str] = set()
_KNOWN_SORTED: tuple[str, ...] = ()
_SHORT: frozenset[str] = frozenset()
# every registered form (the key, its percent-encoded, JSON-escaped, base64 ... spellings) ->
# the fingerprint of its key: an encoded key is shown as the key it is
_FP: dict[str, str] = {}
# registered forms holding a character a key-shaped word never has (a space, 'é', a backslash):
# a stream holds back a piece that ends in the start of one (StreamRedactor)
_SPLIT: tuple[str, ...] = ()
# free in a forked child (a thread registering secrets at the fork, loading settings or building
# a redactor, hung the child's first registration, and so its settings or agent)
_LOCK = child_lock(threading.Lock())
# moves each time register_secrets adds a form: what redact() made of a text before may change
_GENERATION = 0
_WORD_EDGE = "A-Za-z0-9_\\-"


@functools.lru_cache(maxsize=64)
def _word_pattern(secrets: frozenset[str]) -> re.Pattern[str] | None:
    """One regex matching any of ``secrets`` as a whole word (longest first)."""
    if not secrets:
        return None
    alternatives = "|".join(re.escape(s) for s in sorted(secrets, key=len, reverse=True))
    return re.compile(f"(?<![{_WORD_EDGE}])(?:{alternatives})(?![{_WORD_EDGE}])")


@functools.lru_cache(maxsize=1024)
def _forms(secret: str) -> tuple[tuple[str, str], ...]:
    """(form, fingerprint of ``secret``) for each form of ``secret``, longest first."""
    shown = fingerprint(secret)
    return tuple((f, shown) for f in sorted(encoded_forms(secret), key=len, reverse=True))


def register_secrets(secrets: Iterable[str]) -> None:
    """Make ``secrets``, in every encoding of them, known to every :func:`redact` call."""
    global _KNOWN_SORTED, _SHORT, _SPLIT, _GENERATION
    fresh = {s.strip() for s in secrets if isinstance(s, str) and s.strip()}
    if not fresh - _KNOWN - _SHORT:
        return
    with _LOCK:
        forms = [pair for s in sorted(fresh) for pair in _forms(s)]
        for form, shown in forms:
            _FP.setdefault(form, shown)
        _KNOWN.update(f for f, _ in forms if len(f) >= MIN_SUBSTRING)
        _KNOWN_SORTED = tuple(sorted(_KNOWN, key=len, reverse=True))  # longest first: no partial leftovers
        _SHORT = _SHORT | {f for f, _ in forms if len(f) < MIN_SUBSTRING}
        _SPLIT = tuple(f for f in (*_KNOWN_SORTED, *_SHORT) if not _HELD.fullmatch(f))
        _GENERATION += 1


def registered_generation() -> int:
    """A number that changes whenever a secret is registered: a memo of :func:`redact`'s results
    (:class:`hermes_core.agent.prompt.outbound.ScrubMemo`) is good while it stays the same."""
    return _GENERATION


_TOKEN_LIKE = re.compile(r"[A-Za-z0-9_\-./+=:]{20,}")
_UPPER, _LOWER, _DIGIT, _ALPHA = (re.compile(c) for c in ("[A-Z]", "[a-z]", "[0-9]", "[A-Za-z]"))


def looks_like_secret(value: str) -> bool:
    """Whether a string is shaped like a key: a known key format, or one long token mixing letters
    and digits (a custom endpoint's key has no prefix to recognise it by)."""
    text = value.strip()
    if any(not _inside_a_name(m) for m in _KEY_PATTERNS.finditer(text)):
        return True
    if not _TOKEN_LIKE.fullmatch(text) or "://" in text or text.startswith(("/", "~", ".")):
        return False
    return _random_run(text)


def _inside_a_name(m: re.Match[str]) -> bool:
    """A key prefix inside a word with no random run after it ("risk-assessment-gpt4o", "desk-
    helpdesk-prod-2024"): a deployment's or a file's name, kept whole. A key glued to a word
    ("yyysk-proj-Abc123Def456...") is still one."""
    start = m.start()
    return start > 0 and m.string[start - 1].isalnum() and not _random_run(m.group(0))


def _random_run(text: str) -> bool:
    """Whether a token holds a key's random run: a model id ("gpt-4o-mini-2024-07-18") is short
    words joined, a key one long run. Character classes by regex, not a Python loop per
    character: a 1 MB config value is checked in milliseconds (the token alphabet is ASCII, so
    these classes are exact)."""
    if _UPPER.search(text) and _LOWER.search(text) and _DIGIT.search(text):
        return True   # mixed case and digits: model ids and paths are lower case
    longest = max(re.split(r"[-_./+=:]", text), key=len)
    return (len(longest) >= 16 and bool(_DIGIT.search(longest)) and bool(_ALPHA.search(longest))
            and len(set(longest)) >= 10)


# a URL's password ("https://user:PASSWORD@host") and query parameters that carry a credential
_URL_PASSWORD = re.compile(r"://[^/\s@:]*:([^/\s@]+)@")
_SECRET_PARAM = re.compile(
    r"[?&](?:password|passwd|pwd|token|access_token|api[_-]?key|key|secret|sig|signature)=[^&\s#]+",
    re.IGNORECASE)
_WORDS = re.compile(r"[\s,;'\"()<>\[\]{}|]+")


def holds_secret(text: str, secrets: Iterable[str] = ()) -> bool:
    """Whether ``text`` is or contains something not to echo: a known secret, a key shape, one
    word among others shaped like a key ("key Zk38fj3kd92jfk3lsd0q"), a URL's password or a
    credential query parameter. For deciding whether a value may be quoted in a message at all."""
    secrets = tuple(secrets)
    if redact(text, secrets) != text or looks_like_secret(text):
        return True
    if _URL_PASSWORD.search(text) or _SECRET_PARAM.search(text):
        return True
    return any(looks_like_secret(w) for w in _WORDS.split(text) if len(w) >= 20 and w != text)


def is_key_piece(word: str, secrets: Iterable[str]) -> bool:
    """``word`` is a piece of one of ``secrets`` (case aside): one of its parts between
    punctuation ("horse7" of "zq9-Horse7-battery"), or any run of 6+ of its characters. A shorter
    run ("git", "api") turns up inside a random key by chance, and is an ordinary word. Tags were
    once made of a key's pieces, which no redaction of the whole key finds."""
    w = word.lower()
    if len(w) < 3:
        return False
    for secret in secrets:
        s = secret.lower()
        if w in s and (len(w) >= 6 or w in re.split(r"[^0-9a-z]+", s)):
            return True
    return False


SCRUBBED = "scrubbed:"


def scrubbed_marker(secret: str) -> str:
    """The ``meta`` key a store records once none of its rows holds ``secret`` in clear, so later
    opens skip the scan for it. Named by the key's fingerprint, never the key; one format for
    ``sessions.db`` (whose store prefixes the fingerprints it is handed) and ``usage.sqlite3``."""
    return SCRUBBED + fingerprint(secret)


# A credential by its place rather than its letters: the value of a credential query parameter,
# a URL's password, a Basic Authorization value. Values use the letters a stream holds back
# (StreamRedactor), so a streamed one is scrubbed as the whole text would be; a value already
# replaced by a key's fingerprint ("[key-...]") is left to show it.
_HELD_CLASS = r"A-Za-z0-9!#$%&*+\-./:=?@^_~"
_HELD = re.compile(f"[{_HELD_CLASS}]*")
_HELD_CHARS = frozenset("!#$%&*+-./:=?@^_~" + string.ascii_letters + string.digits)
_CREDENTIAL_NAMES = r"password|passwd|pwd|token|access_token|api[_-]?key|key|secret|sig|signature"
_CREDENTIAL_PARAM = re.compile(_CREDENTIAL_NAMES, re.IGNORECASE)
_PARAM_VALUE = re.compile(
    rf"(?<=[?&;])((?:{_CREDENTIAL_NAMES})=)"
    r"(?!\[)[A-Za-z0-9!$%*+\-./:=@^_~]+", re.IGNORECASE)
_URL_USERINFO = re.compile(r"(://[A-Za-z0-9!$%*+\-.=^_~]*:)(?!\[)[A-Za-z0-9!#$%&*+\-.:=?^_~]+(?=@)")
_BASIC = re.compile(r"(?<![A-Za-z0-9_])([Bb][Aa][Ss][Ii][Cc]\s+)([A-Za-z0-9+/_\-]{4,}={0,2})")


def _basic_value(match: re.Match[str]) -> str:
    """A Basic credential is ``base64(user:password)``; an English word after "basic" decodes to
    no such pair and is kept."""
    value = match.group(2)
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), altchars=b"-_" if any(
            c in value for c in "-_") else None, validate=True)
    except ValueError:
        return match.group(0)
    if b":" not in raw or not raw.decode("utf-8", "replace").isprintable():
        return match.group(0)
    return match.group(1) + "[REDACTED]"


def scan_needles(secrets: Iterable[str]) -> dict[str, str]:
    """What a store scans its rows for, once each, by the marker it records when done: every
    spelling of each secret. The key as written keeps the marker it always had (its
    fingerprint), so a store scanned for it is not scanned again for it; each other spelling is
    marked by the key's fingerprint and its own, so a store scanned by a version that knew only
    the key as written is scanned once more, for the spellings."""
    out: dict[str, str] = {}
    for secret in secrets:
        shown = fingerprint(secret)
        out[shown] = secret
        out.update((f"{shown}/{fingerprint(form)}", form)
                   for form in encoded_forms(secret) if form != secret)
    return out


# What redact() leaves where a known key was: the key's fingerprint (types.fingerprint) in brackets.
_SHOWN_KEY = re.compile(r"\[key-[0-9a-f]{10}\]")


def shows_a_redacted_key(text: str) -> bool:
    """Whether ``text`` holds a key redact() already replaced by its fingerprint: text scrubbed
    on arrival (what the model said) held a secret even though redacting it again changes nothing."""
    return _SHOWN_KEY.search(text) is not None


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace known secrets (``secrets`` and every registered one, in every encoding of them)
    by the key's fingerprint, and key-shaped strings and credentials by their place by
    ``[REDACTED]``."""
    if not isinstance(text, str):
        text = str(text)
    short = _SHORT
    shown = _FP
    for secret in secrets:
        forms = _forms(secret) if secret else ()
        if not forms or _FP.get(secret) == forms[0][1]:   # registered: its forms are known
            continue
        for form, fp in forms:
            if len(form) >= MIN_SUBSTRING:
                if form in text:
                    text = text.replace(form, f"[{fp}]")
            else:
                short = short | {form}
                shown = shown if form in shown else {**shown, form: fp}
    for s in _KNOWN_SORTED:
        if s in text:
            text = text.replace(s, f"[{shown.get(s) or fingerprint(s)}]")
    words = _word_pattern(short)
    if words is not None:
        text = words.sub(lambda m: f"[{shown.get(m.group(0)) or fingerprint(m.group(0))}]", text)
    text = _KEY_PATTERNS.sub(lambda m: m.group(0) if _inside_a_name(m) else "[REDACTED]", text)
    if "=" in text:
        text = _PARAM_VALUE.sub(r"\1[REDACTED]", text)
    if "://" in text:
        text = _URL_USERINFO.sub(r"\1[REDACTED]", text)
    if "asic" in text or "ASIC" in text:
        text = _BASIC.sub(_basic_value, text)
    return text


def redact_cut(text: str, secrets: Iterable[str] = ()) -> str:
    """Text that ended early (a stream cut by a failure), redacted, less a tail of three or more
    characters that begins a registered form: the first half of a key is no key to
    :func:`redact`, and still half of one."""
    end = len(text)
    forms = [f for s in secrets for f, _ in _forms(s)] if secrets else []
    for form in (*forms, *_KNOWN_SORTED, *_SHORT):
        for k in range(min(len(form) - 1, len(text)), min(3, len(form) - 1) - 1, -1):
            if k > 0 and len(text) - k < end and text.endswith(form[:k]):
                end = len(text) - k
                break
    return redact(text[:end], secrets)


def redact_data(value: Any, secrets: Iterable[str] = (), _depth: int = 0) -> Any:
    """``value`` with every string in it redacted (mapping keys too), its shape kept: a parsed
    JSON error body, say. Past a nesting of 32 the rest is redacted as text."""
    secrets = tuple(secrets)
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, bytes | bytearray):
        return redact(bytes(value).decode("utf-8", "replace"), secrets)
    if _depth >= 32 and isinstance(value, Mapping | list | tuple):
        return redact(str(value), secrets)
    if isinstance(value, Mapping):
        return {redact_data(k, secrets, _depth + 1): redact_data(v, secrets, _depth + 1)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [redact_data(v, secrets, _depth + 1) for v in value]
        return tuple(items) if isinstance(value, tuple) else items
    return value


_MARKER = re.compile(r"\[(?:REDACTED|key-[0-9a-f]{10})\]")
_CLUSTER = regex.compile(r"\X")


#: Characters no rule of UAX #29 joins to a neighbour (Grapheme_Cluster_Break "Other", not
#: Prepend, not an Indic consonant): ASCII but CR and LF, CJK ideographs, hiragana, katakana.
_PLAIN = re.compile("[\x20-\x7e\u3041-\u3096\u30a1-\u30fa\u4e00-\u9fff]{2}")


def _known_boundary(text: str, end: int) -> int:
    """The last position at or before ``end`` that surely starts a grapheme cluster: between
    two plain characters (:data:`_PLAIN`). Segmenting from there gives ``end``'s cluster as
    segmenting from 0 would (a flag's pairs included), in a few characters for most text
    rather than all 2,000 of an error body."""
    for i in range(end, max(0, end - 256), -1):
        if _PLAIN.match(text, i - 1):
            return i
    return 0


def clip(text: str, limit: int, secrets: Iterable[str] = ()) -> str:
    """At most the first ``limit`` characters of ``text``, redacted *before* the cut: cut first,
    a key across the cut is no longer whole, no scrubber downstream knows its head, and it is
    shown. The cut moves back to the start of a redaction marker it would split ("[REDA" reads
    as the error's own text) and of a character as a person sees it (a grapheme cluster: an
    accent without its letter, half a flag or of a ZWJ emoji). Only a head is redacted, 1,024
    characters past the limit; when markers shortened the keys in it so much that the head's raw
    edge (perhaps inside a key, no key to :func:`redact` any more) would come within that margin,
    the head doubles: a cost that grows only with the keys the text holds."""
    raw, secrets = str(text), tuple(secrets)
    cut = max(limit, 0) + 1024
    whole = redact(raw[:cut], secrets)
    while cut < len(raw) and len(whole) < limit + 1024:
        cut *= 2
        whole = redact(raw[:cut], secrets)
    if len(whole) <= limit:
        return whole
    end, moved = max(limit, 0), -1
    while end != moved:   # a marker's "]" with an accent after it: the cluster starts inside it
        moved = end
        for marker in _MARKER.finditer(whole, max(0, end - 16), end + 16):
            if marker.start() < end < marker.end():
                end = marker.start()
        start = _known_boundary(whole, end)
        for cluster in _CLUSTER.finditer(whole, start, end + 64):
            if cluster.end() > end:
                end = cluster.start()
                break
    return whole[:end]


_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key",
                             "cookie", "set-cookie", "openai-organization"})


def redact_headers(headers: Mapping[str, str | Sequence[str]],
                   secrets: Iterable[str] = ()) -> dict[str, str]:
    """Headers safe to keep on an error or print: credentials headers masked, every value scrubbed.
    A header given as a list of its values is kept as the one text httpx joins them into (", "),
    which the header readers split again, not as the list's repr."""
    secrets = tuple(secrets)
    return {str(k): ("[REDACTED]" if str(k).lower() in _SECRET_HEADERS else redact(
                ", ".join(map(str, v)) if isinstance(v, list | tuple) else str(v), secrets))
            for k, v in headers.items()}


class Redactor:
    """The exact secrets of one configuration plus the key shapes; call it on any text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        clean = {s.strip() for s in secrets if isinstance(s, str) and s.strip()}
        self.secrets: tuple[str, ...] = tuple(sorted(clean, key=len, reverse=True))
        register_secrets(self.secrets)
        install_log_redaction()

    def __call__(self, text: str) -> str:
        return redact(text, self.secrets)

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        return redact_headers(headers, self.secrets)

    def stream(self) -> StreamRedactor:
        return StreamRedactor(self.secrets)

    def __repr__(self) -> str:
        return f"Redactor({len(self.secrets)} secret(s))"


class StreamRedactor:
    """Redacts text that arrives in pieces: a key split across pieces is still caught, and text
    that cannot be part of one is shown as it arrives.

    Each piece releases everything but the tail that could still become a secret: the last run
    of key-shaped letters (a key, a Basic value or a ``?key=`` parameter in progress, with a
    ``Bearer``/``Basic`` before it), or the start of a registered form holding other characters
    (a key with a space or an accent, a JSON-escaped one). The released text is cut where the
    whole text would be read the same, so the stream shows exactly what :func:`redact` of the
    whole reply shows. Chinese, punctuation and spaces end such a tail: a reply with no spaces is
    not held back to its end; only one unbroken ASCII word can be.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = tuple(secrets)
        self._own_split = tuple(f for s in self._secrets for f, _ in _forms(s)
                                if not _HELD.fullmatch(f))
        self._pending = ""
        self._run = 0   # where the trailing run of key letters starts in _pending

    def _prefix_start(self, text: str, forms: _SplitForms) -> int:
        """Where the longest tail of ``text`` that begins a registered form with a non-key
        letter starts (``len(text)`` when none does). A whole form at the very end is held too:
        a short key is a key only if no letter follows it."""
        if forms.prefix is None:
            return len(text)
        found = forms.prefix.search(text, max(0, len(text) - forms.longest))
        return len(text) if found is None else found.start()

    def _safe_cut(self, text: str, cut: int, forms: _SplitForms) -> int:
        """Move ``cut`` back until nothing read as one unit is cut in two: a registered form that
        ends past it (a key with a space, then the run of key letters it ends in), a word
        of key letters, a ``Bearer``/``Basic`` scheme and its value."""
        moved = True
        while moved and cut > 0:
            moved = False
            if forms.starts is not None:
                for at in forms.starts.finditer(text, max(0, cut - forms.longest + 1),
                                                cut + forms.longest):
                    if at.start() >= cut:
                        break
                    if at.start() + len(at.group(1)) > cut:
                        cut, moved = at.start(), True
                        break
            while cut > 0 and text[cut - 1] in _HELD_CHARS:
                cut, moved = cut - 1, True
            scheme = (_SCHEME_BEFORE.search(text, max(0, cut - 32), cut)
                      if cut > 0 and text[cut - 1].isspace() else None)
            if scheme is not None:   # "Bearer " released alone leaves its token unrecognised
                cut, moved = scheme.start(), True
        return cut

    def feed(self, piece: str) -> str:
        if not piece:
            return ""
        text = self._pending + piece
        run, stop = len(text), len(self._pending)
        while run > stop and text[run - 1] in _HELD_CHARS:
            run -= 1
        if run == stop:   # the piece continues the run the pending text ends with
            run = self._run
        forms = _split_forms((*self._own_split, *_SPLIT))
        cut = self._safe_cut(text, min(run, self._prefix_start(text, forms)), forms)
        self._pending, self._run = text[cut:], run - cut
        return redact(text[:cut], self._secrets) if cut else ""

    def flush(self) -> str:
        text, self._pending, self._run = self._pending, "", 0
        return redact(text, self._secrets) if text else ""

    def abandon(self) -> str:
        """The held text of a stream that failed: released as :func:`redact_cut` does, without
        a tail that begins a key (the rest of it will not come)."""
        text, self._pending, self._run = self._pending, "", 0
        return redact_cut(text, self._secrets) if text else ""


_SCHEME_BEFORE = re.compile(r"(?<![A-Za-z0-9_])(?:Bearer|[Bb][Aa][Ss][Ii][Cc])\s+\Z")


@dataclass(frozen=True, slots=True)
class _SplitForms:
    """The registered forms a stream must not cut, as two compiled searches (one regex each
    instead of a Python loop per form and piece): ``prefix`` finds the longest tail of a text
    that begins one of them, ``starts`` every place one of them starts (longest first)."""

    prefix: re.Pattern[str] | None
    starts: re.Pattern[str] | None
    longest: int


def _nested_prefix(form: str) -> str:
    """A regex matching any non-empty prefix of ``form``: ``a(?:b(?:c)?)?`` for "abc"."""
    out = ""
    for c in reversed(form[1:]):
        out = f"(?:{re.escape(c)}{out})?"
    return re.escape(form[0]) + out


@functools.lru_cache(maxsize=16)
def _split_forms(forms: tuple[str, ...]) -> _SplitForms:
    if not forms:
        return _SplitForms(None, None, 0)
    ordered = sorted(set(forms), key=len, reverse=True)
    prefix = re.compile("(?:" + "|".join(_nested_prefix(f) for f in ordered) + ")\\Z")
    starts = re.compile("(?=(" + "|".join(re.escape(f) for f in ordered) + "))")
    return _SplitForms(prefix, starts, len(ordered[0]))


class RedactingWriter:
    """A text stream whose every write is scrubbed: the CLI's stdout and stderr, so a key typed
    in the wrong place on the command line is not echoed back by argparse's usage errors, a "file
    not found" line or a report naming the model. Text streamed in pieces is scrubbed upstream
    (:class:`StreamRedactor`) as well, since a key may straddle two writes."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def write(self, text: str) -> int:
        self.inner.write(redact(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:   # flush, isatty, fileno, encoding, ...
        return getattr(self.inner, name)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts secrets and key-shaped strings from every record it sees, at
    every level (SDK and HTTP debug lines included), traceback text too."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        scrub = self.redactor or redact
        try:
            msg = record.getMessage()
        except Exception:  # a bad format string: keep the raw template, scrubbed
            msg = str(record.msg)
        clean = one_line(scrub(msg))   # a value's newline forges no record (log_lines)
        if clean != msg or record.args:
            record.msg, record.args = clean, ()
        if record.exc_info and record.exc_info[0] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            text = messages_one_line(text, record.exc_info[1])   # see log_lines
            record.exc_text, record.exc_info = scrub(text), None
        elif record.exc_text:
            record.exc_text = scrub(record.exc_text)
        return True


# Loggers whose records are scrubbed when they are made: ours, and the SDK and HTTP clients that
# log request options and response headers (a server may echo a key there) at DEBUG.
REDACTED_LOGGERS: tuple[str, ...] = ("hermes_core", "openai", "anthropic", "httpx", "httpcore",
                                     "httpx2", "httpcore2")   # the SDKs' own transport fork


def _covered(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in REDACTED_LOGGERS)


def scrub_record(record: logging.LogRecord, scrub: Callable[[str], str] = redact) -> None:
    """Redact one record in place: its message (args rendered, then dropped), traceback and stack;
    the message, and each exception's message in the traceback, made one line (:mod:`log_lines`).

    Args are rendered before scrubbing because a key usually arrives as an argument (a headers
    mapping); a record whose format string does not fit its args keeps both, as text, scrubbed, so
    logging's own error report cannot print the raw args either.
    """
    try:
        msg = record.getMessage()
    except Exception:
        msg = f"{record.msg} {record.args!r}" if record.args else str(record.msg)
    record.msg, record.args = one_line(scrub(msg)), ()   # a value's newline forges no record
    if record.exc_info and record.exc_info[0] is not None:
        text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        clean = scrub(messages_one_line(text, record.exc_info[1]))
        record.exc_text = clean
        if clean != text:   # a formatter that renders exc_info itself would print the key again
            record.exc_info = None
    elif record.exc_text:
        record.exc_text = scrub(record.exc_text)
    if record.stack_info:
        record.stack_info = scrub(record.stack_info)


class _RedactingRecordFactory:
    """Wraps the process's log record factory: records of :data:`REDACTED_LOGGERS` are scrubbed as
    they are made, before any handler or filter sees them.

    Why a record factory and not a filter: a logger's filter does not run for records propagated
    from its children (``httpx._client``, ``openai._base_client``), and a handler's filter only
    guards handlers that exist when it is added; the factory sees every record of every logger,
    whatever handler a user attaches later.
    """

    def __init__(self, inner: Callable[..., logging.LogRecord]) -> None:
        self.inner = inner

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.inner(*args, **kwargs)
        if _covered(record.name):
            scrub_record(record)
        return record


def install_log_redaction() -> None:
    """Scrub records of hermes_core and the SDK/HTTP loggers for every handler, now and later.

    Idempotent; chains to whatever factory is installed (another library's stays in effect).
    """
    with _LOCK:
        factory = logging.getLogRecordFactory()
        if not isinstance(factory, _RedactingRecordFactory):
            logging.setLogRecordFactory(_RedactingRecordFactory(factory))


def url_passwords(url: str | None) -> set[str]:
    """The passwords a URL carries: its user info's and a ``password`` query parameter's (redis-py
    reads both), and any credential query parameter's (a proxy that takes the key as ``?key=``;
    httpx logs each request's URL at -v). Unparseable URLs carry none that could be told apart."""
    if not url:
        return set()
    try:
        parts = urllib.parse.urlsplit(url)
        # urlsplit leaves the user info as written (percent-encoded); parse_qsl decodes
        found = {parts.password, urllib.parse.unquote(parts.password)} if parts.password else set()
        found.update(v for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
                     if _CREDENTIAL_PARAM.fullmatch(k) and v)
    except ValueError:
        return set()
    # the percent-encoded and the decoded forms both may appear in text
    return found | {urllib.parse.quote(p, safe="") for p in found}
