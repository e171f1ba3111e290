"""Token counts with OpenAI's own byte-pair encodings, offline: what every text budget is measured in.

The counts come from ``bpe-openai`` (GitHub's ``rust-gems`` tokenizer; its wheels carry the
``cl100k_base`` and ``o200k_base`` vocabularies, byte-identical to the files tiktoken downloads).
A character estimate was off by 2-3x for JSON, hex and base64 (most tool answers) and by 1.1-4x for
Thai, Hindi and Arabic; an exact tokenizer counts them as the model does. Where the model's own
encoding is not one of these (Anthropic, Gemini, local models), ``o200k_base`` scaled by what the
provider billed tracks the real count far more evenly across content types than the estimate did
(``agent/prompt/token_count.py`` does that scaling).

The package's native ``_bindings`` module is used, loaded from its file on first use, rather than
its tiktoken-like ``Encoding``: importing the package parses all three of its vocabularies in
Python (~1 s and +63 MiB before anything is counted, measured), its ``Encoding`` refuses texts of
a million characters or two hundred thousand tokens and raises on the text ``<|endoftext|>`` (a
tool answer may hold any of these), and the bindings count without building a token list. Loaded
alone, the native module costs ~1 ms and an encoding ~90 ms and ~67 MiB on first use, which a CLI
command that counts nothing never pays.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import threading
from collections import deque
from types import ModuleType
from typing import Any, Protocol

from hermes_core.forked import child_lock

#: The encoding budgets are measured in when the model's own is not known.
DEFAULT_ENCODING = "o200k_base"
ENCODINGS = ("o200k_base", "cl100k_base")
#: Characters of text whose counts are remembered: every turn re-counts the same system prompt and
#: history, tool answers of 100,000 characters included (a chat with 60 such answers spent
#: 85-170 ms a turn counting them again). The texts are mostly the history's own string objects,
#: so the memo rarely holds memory of its own; a lookup hashes a string once (Python keeps a
#: string's hash) and compares the same object by identity.
CACHE_CHARS = 8_000_000


class Tokenizer(Protocol):
    """What ``bpe_openai._bindings.tokenizer_for_encoding`` returns (its shipped ``.pyi``)."""

    def encode(self, text: str) -> list[int]: ...

    def decode(self, tokens: list[int]) -> str: ...

    def count(self, text: str) -> int: ...


# free in a forked child: a thread of the parent loading an encoding at the fork held it there
# for ever, and the child's first count hung (the encodings loaded are read-only tables)
_load_lock = child_lock(threading.Lock())
_BINDINGS = "bpe_openai._bindings"


def _bindings() -> ModuleType:
    """``bpe_openai._bindings`` without running ``bpe_openai/__init__`` (see the module doc)."""
    loaded = sys.modules.get(_BINDINGS)
    if loaded is not None:
        return loaded
    package = importlib.util.find_spec("bpe_openai")   # finds the folder, runs nothing
    spec = None
    if package is not None and package.submodule_search_locations:
        finder = importlib.machinery.FileFinder(
            package.submodule_search_locations[0],
            (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES))
        spec = finder.find_spec(_BINDINGS)
    if spec is None or spec.loader is None:
        raise ImportError("bpe-openai is not installed (a dependency of hermes-core): "
                          "pip install 'bpe-openai>=0.1.4,<0.2'")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # registered so a later ``import bpe_openai`` reuses it instead of initialising it twice
    sys.modules[_BINDINGS] = module
    return module


_tokenizers: dict[str, Tokenizer] = {}


def tokenizer(encoding: str = DEFAULT_ENCODING) -> Tokenizer:
    """The tokenizer of ``encoding`` (one of :data:`ENCODINGS`), loaded once per process: two
    threads counting first at once wait for one load (~90 ms, ~67 MiB), not make two."""
    tok = _tokenizers.get(encoding)
    if tok is not None:
        return tok
    if encoding not in ENCODINGS:
        raise ValueError(f"unknown token encoding {encoding!r}; known: {', '.join(ENCODINGS)}")
    with _load_lock:
        tok = _tokenizers.get(encoding)
        if tok is None:
            loaded: Any = _bindings().tokenizer_for_encoding(encoding)
            tok = _tokenizers[encoding] = loaded
    return tok


def valid_text(text: str) -> str:
    """``text`` with each lone surrogate (a JSON ``"\\ud800"``, a filename decoded with
    ``surrogateescape``) replaced by U+FFFD, as tiktoken does: the tokenizer takes UTF-8 only and
    raised on them. The length in characters is unchanged, so a cut of one is a cut of the other."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _count(text: str, encoding: str) -> int:
    return tokenizer(encoding).count(valid_text(text))


class _Memo:
    """Counts by text, one table per encoding, at most ``limit`` characters of text in all.

    A lookup is one dict ``get`` with no lock (a dict's operations are atomic in CPython): a
    turn looks up every message, the system prompt and the context several times (the builder,
    the compactor, the tool room), and a locked least-recently-used lookup cost ~2.5 us each,
    which put a cached turn at 166 us against 132 with the estimate. A text is dropped in the
    order it was first counted, not by last use; one still in use is counted again once."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.tables: dict[str, dict[str, int]] = {e: {} for e in ENCODINGS}
        self.order: deque[tuple[str, str]] = deque()
        self.chars = 0
        # free again in a forked child (one a thread of the parent held, remembering a count,
        # hung the child's first new text); the counts are kept, true in any process
        self.lock = child_lock(threading.Lock())

    def get(self, text: str, encoding: str) -> int | None:
        table = self.tables.get(encoding)
        return None if table is None else table.get(text)

    def put(self, text: str, encoding: str, n: int) -> None:
        if len(text) > self.limit:
            return
        with self.lock:
            table = self.tables[encoding]
            if text in table:
                return
            table[text] = n
            self.order.append((encoding, text))
            self.chars += len(text)
            while self.chars > self.limit:
                enc, old = self.order.popleft()
                del self.tables[enc][old]
                self.chars -= len(old)


_memo = _Memo(CACHE_CHARS)


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens of ``text`` in ``encoding``, special-token names counted as the plain text they are
    (the APIs do the same with user content); each text is counted once (see :class:`_Memo`)."""
    if not text:
        return 0
    n = _memo.get(text, encoding)
    if n is None:
        n = _count(text, encoding)   # an unknown encoding raises here
        _memo.put(text, encoding, n)
    return n


def _decodable(tok: Tokenizer, ids: list[int]) -> str:
    """The text of ``ids``, dropping tokens from the end until it decodes: a token boundary may fall
    inside a character (an emoji is several tokens), and a cut there would not be text."""
    while ids:
        try:
            return tok.decode(ids)
        except ValueError:
            ids = ids[:-1]
    return ""


def _window(clean: str, tokens: int, tok: Tokenizer, *, tail: bool) -> str | None:
    """The shortest head (or tail) of ``clean`` among growing windows that counts more than
    ``tokens`` + 1, or None when the whole text fits: a cut is looked for in it, not in the whole
    text (a 3 MB file cut to 14,000 tokens was encoded whole, 1.2 s)."""
    span = max(64, tokens * 8)
    while span < len(clean):
        piece = clean[-span:] if tail else clean[:span]
        if tok.count(piece) > tokens + 1:
            return piece
        span *= 4
    return None if tok.count(clean) <= tokens else clean


def _cut_window(text: str, tokens: int, encoding: str, tail: bool
                ) -> str | tuple[Tokenizer, str, str]:
    """What :func:`head_tokens` / :func:`tail_tokens` start from: the answer itself when no cut is
    needed (empty text, a text that fits, no room at all), else the tokenizer, the text made
    valid and the window at the end the cut is looked for in."""
    if not text:
        return text
    tok = tokenizer(encoding)
    clean = valid_text(text)
    piece = _window(clean, max(tokens, 0), tok, tail=tail)
    if piece is None:
        return text
    if tokens <= 0:
        return ""
    return tok, clean, piece


def head_tokens(text: str, tokens: int, encoding: str = DEFAULT_ENCODING) -> str:
    """The longest prefix of ``text`` counting at most ``tokens`` (whole characters).

    One encoding of a window of the text gives the cut (the first ``tokens`` tokens' text); a
    prefix re-encodes differently at its ragged end (a token more, or a character that now fits),
    so the cut is checked and moved by a character until it is the longest that fits. The trial
    cuts are counted uncached: they are new strings nobody counts again.
    """
    cut = _cut_window(text, tokens, encoding, tail=False)
    if isinstance(cut, str):
        return cut
    tok, clean, piece = cut
    end = len(_decodable(tok, tok.encode(piece)[:tokens]))
    while end > 0 and tok.count(clean[:end]) > tokens:
        end -= 1
    while end < len(clean) and tok.count(clean[:end + 1]) <= tokens:
        end += 1
    return text[:end]


def tail_tokens(text: str, tokens: int, encoding: str = DEFAULT_ENCODING) -> str:
    """The longest suffix of ``text`` counting at most ``tokens`` (whole characters)."""
    cut = _cut_window(text, tokens, encoding, tail=True)
    if isinstance(cut, str):
        return cut
    tok, clean, piece = cut
    ids = tok.encode(piece)[-tokens:]
    while ids:
        try:
            start = len(clean) - len(tok.decode(ids))
            break
        except ValueError:   # the first token starts inside a character: leave it out
            ids = ids[1:]
    else:
        start = len(clean)
    while start < len(clean) and tok.count(clean[start:]) > tokens:
        start += 1
    while start > 0 and tok.count(clean[start - 1:]) <= tokens:
        start -= 1
    return text[start:]
