"""Prompt-injection scan: the face of the subsystem.

Context files, recalled memories and skill bodies all reach the model, and any of them may have
been written by someone other than the user. Callers import from here; the work is split by job:

- :mod:`.scan` splits a text into paragraphs, tells instruction from quotation and blocks a
  hostile paragraph with a visible notice (:func:`guard_text`), never the whole file;
- :mod:`.normalise` builds the views matched (NFKC, TR39 confusables, invisible code points,
  words split by spaces or line breaks rejoined, encoded blobs decoded);
- :mod:`.patterns` and :mod:`.gate` hold the six-language phrase tables and run each phrase
  only when the literals it needs occur; :mod:`.hijack` holds orders aimed at the answer;
- :mod:`.hidden` reads what the file's reader never sees (comments, elements styled away);
- :mod:`.learned`, :mod:`.semantic` and :mod:`.verdicts` are the learned scorer, its opt-in e5
  stage and the cache of their verdicts.
"""

from __future__ import annotations

from hermes_core.injection.scan import (
    INJECTION_CATEGORIES,
    SEMANTIC,
    SEMANTIC_DATA,
    GuardedText,
    InjectionFinding,
    Paragraph,
    blocked_notice,
    description_notice,
    guard_cached,
    guard_many,
    guard_text,
    list_items,
    notices_in,
    scan_for_injection,
    scan_paragraph,
    split_paragraphs,
)

__all__ = [
    "INJECTION_CATEGORIES",
    "SEMANTIC",
    "SEMANTIC_DATA",
    "GuardedText",
    "InjectionFinding",
    "Paragraph",
    "blocked_notice",
    "description_notice",
    "guard_cached",
    "guard_many",
    "guard_text",
    "list_items",
    "notices_in",
    "scan_for_injection",
    "scan_paragraph",
    "split_paragraphs",
]
