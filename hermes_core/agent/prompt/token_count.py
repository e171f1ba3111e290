"""Token counts for budgets: exact where we can know them, a calibrated estimate otherwise.

Three counters, best first:

* ``tiktoken:<encoding>`` -- OpenAI models, when the optional ``tiktoken`` package is installed
  *and* its encoding file is already in tiktoken's local cache with the right hash. tiktoken
  downloads encoding files on first use; a library that must work offline never triggers that, so
  a missing file means this counter is simply not used.
* ``calibrated`` -- :func:`hermes_core.tokenize.estimate_tokens` scaled by the ratio between what
  the provider billed for the last request (its ``prompt_tokens``, cache reads and writes
  included) and our estimate of that same request. The provider's count is the only exact one, and
  the ratio carries over well from one turn of a conversation to the next.
* ``estimate`` -- the plain estimate, before any reply has been seen.

Which counter was used is reported (``Prompt.tokens`` consumers and ``hermes-core prompt --json``
show it), so a budget can be judged by how it was measured.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from hermes_core.config import tiktoken_cache_dir
from hermes_core.tokenize import estimate_tokens
from hermes_core.types import Message, Prompt, Usage

log = logging.getLogger("hermes_core.prompt")

#: Per-message framing the APIs add (role markers, separators): a few tokens each.
MESSAGE_OVERHEAD = 4
#: A calibration ratio outside this range says the measurement went wrong, not the estimate.
RATIO_BOUNDS = (0.25, 4.0)

#: Encoding files tiktoken would fetch, with the sha256 it checks them against.
TIKTOKEN_FILES: dict[str, tuple[str, str]] = {
    "cl100k_base": ("https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
                    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base": ("https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
                   "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
}


class TokenCounter(Protocol):
    """Counts tokens of text; ``name`` says how (``estimate``, ``calibrated``, ``tiktoken:...``)."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...


@dataclass(frozen=True, slots=True)
class EstimateCounter:
    """The CJK-aware character estimate, optionally scaled by a calibration ratio."""

    ratio: float = 1.0

    @property
    def name(self) -> str:
        return "estimate" if self.ratio == 1.0 else "calibrated"

    def count(self, text: str) -> int:
        n = estimate_tokens(text)
        return n if self.ratio == 1.0 else round(n * self.ratio)


@dataclass(frozen=True, slots=True)
class TiktokenCounter:
    """Exact counts for OpenAI models through a locally cached tiktoken encoding."""

    encoding: Any
    encoding_name: str

    @property
    def name(self) -> str:
        return f"tiktoken:{self.encoding_name}"

    def count(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))


# --------------------------------------------------------------------------- tiktoken, offline only

_encodings: dict[str, Any] = {}
_enc_lock = threading.Lock()
#: encoding -> when its file was last found missing or corrupt (``time.monotonic``). Every turn
#: chooses a counter: looking again costs a failed open() (tens of microseconds in a sandbox) and
#: the cache folder's lookup (environment reads, the temp folder); a file downloaded meanwhile, or
#: a cache folder configured meanwhile, is used within ``RECHECK_MISSING_S``.
_missing: dict[str, float] = {}
#: The counter of each encoding loaded from tiktoken's cache (a value: one per encoding serves
#: every turn).
_counters: dict[str, TiktokenCounter] = {}
RECHECK_MISSING_S = 60.0


def local_encoding_file(encoding_name: str, cache_dir: str | None) -> str | None:
    """The path of ``encoding_name``'s file in tiktoken's cache when present and intact, else None.

    Intact means the sha256 tiktoken itself checks: a file that fails it would make tiktoken
    delete it and download a fresh one, which an offline library must never cause.
    """
    known = TIKTOKEN_FILES.get(encoding_name)
    if known is None or not cache_dir:
        return None
    url, sha = known
    path = os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest())
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    return path if hashlib.sha256(data).hexdigest() == sha else None


@functools.cache
def _tiktoken() -> Any:
    """The tiktoken module, or None when the extra is not installed: asked once, as a failed
    import searches the whole module path again each time (every turn chooses a counter)."""
    try:
        import tiktoken
    except ImportError:
        return None
    return tiktoken


@functools.lru_cache(maxsize=1024)
def _encoding_name(model: str) -> str | None:
    """tiktoken's encoding for ``model`` (None: unknown), remembered: tiktoken tries each known
    prefix in turn for a model it has no entry for, on every turn."""
    import tiktoken

    try:
        return str(tiktoken.encoding_name_for_model(model))
    except KeyError:
        return None


def tiktoken_counter(model: str, *, cache_dir: str | None = None,
                     loader: Callable[[str], Any] | None = None) -> TiktokenCounter | None:
    """A tiktoken counter for an OpenAI ``model``, or None (not installed, unknown model, or the
    encoding file is not already on disk). ``loader`` replaces ``tiktoken.get_encoding`` (tests)."""
    tiktoken = _tiktoken()
    if tiktoken is None:
        return None
    name = _encoding_name(model)
    if name is None:
        return None
    if loader is None:
        loaded = _encodings.get(name)
        if loaded is not None:
            # verified and loaded by an earlier turn: the file (MBs, hashed whole to verify it)
            # is not read again on every turn
            counter = _counters.get(name)
            if counter is None or counter.encoding is not loaded:
                counter = _counters[name] = TiktokenCounter(loaded, name)
            return counter
        # a folder passed in is looked in at once (the remembered miss is the default folder's)
        seen = _missing.get(name) if cache_dir is None else None
        if seen is not None and time.monotonic() - seen < RECHECK_MISSING_S:
            return None
        folder = cache_dir if cache_dir is not None else tiktoken_cache_dir()
        if local_encoding_file(name, folder) is None:
            if cache_dir is None:
                _missing[name] = time.monotonic()
            return None
        loader = tiktoken.get_encoding
    with _enc_lock:
        enc = _encodings.get(name)
        if enc is None:
            try:
                enc = loader(name)
            except Exception as e:  # a broken install must not cost a turn: estimate instead
                log.warning("tiktoken could not load %s (%s); using the estimate", name, e)
                return None
            _encodings[name] = enc
    return TiktokenCounter(enc, name)


# --------------------------------------------------------------------------- prompts and calibration

def message_cost(m: Message, counter: TokenCounter) -> int:
    """Tokens of one message as sent: its text, its tool calls, the framing."""
    n = counter.count(m.content) + MESSAGE_OVERHEAD
    for c in m.tool_calls:
        n += counter.count(c.name) + counter.count(c.arguments) + MESSAGE_OVERHEAD
    return n


def prompt_cost(prompt: Prompt, counter: TokenCounter) -> int:
    """Tokens of the whole request: system, tools, per-turn context and every message."""
    return fixed_cost(prompt, counter) + sum(message_cost(m, counter) for m in prompt.messages)


def fixed_cost(prompt: Prompt, counter: TokenCounter) -> int:
    """Tokens of the request but its messages: system, tools and the per-turn context."""
    tools = ""
    if prompt.tools:
        tools = json.dumps([{"name": t.name, "description": t.description,
                             "parameters": dict(t.parameters)} for t in prompt.tools],
                           ensure_ascii=False, default=str)
    return counter.count(prompt.system) + counter.count(prompt.context) + counter.count(tools)


def calibration_ratio(prompt: Prompt, usage: Usage, *,
                      estimated: int | None = None) -> float | None:
    """Billed prompt tokens over our estimate of the same request (``estimated``, when the caller
    has it: ``prompt_cost`` with the plain estimate); None when unusable."""
    billed = usage.total_input_tokens
    if estimated is None:
        estimated = prompt_cost(prompt, EstimateCounter())
    if billed <= 0 or estimated <= 0:
        return None
    ratio = billed / estimated
    low, high = RATIO_BOUNDS
    return ratio if low <= ratio <= high else None


def choose_counter(model: str, provider_kind: str, ratio: float | None, *,
                   tiktoken_loader: Callable[[str], Any] | None = None) -> TokenCounter:
    """tiktoken for OpenAI models when available offline, else the calibrated estimate, else the
    plain one."""
    if provider_kind == "openai":
        exact = tiktoken_counter(model, loader=tiktoken_loader)
        if exact is not None:
            return exact
    return EstimateCounter(ratio if ratio is not None else 1.0)
