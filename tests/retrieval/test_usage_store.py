"""Tests of ``hermes_core/retrieval/usage_store.py`` added since the store left usage.py (its
older tests are in test_usage.py): what the cap keeps when a message is marked again, and what a
message that is not text (control characters, a binary blob) becomes."""

from __future__ import annotations

import pytest

from hermes_core.retrieval.usage_store import UsageStore


def test_a_message_marked_again_counts_as_recent_and_pushes_nothing_out() -> None:
    """A repeat kept its first id, so the cap dropped it as the oldest event though it had just
    been marked again; a new id per repeat (the fix before decision 222) let a flood of repeats
    push the rest of the history out. Neither: the repeat is the newest event, and the history
    keeps ``cap`` events."""
    st = UsageStore(None, cap=4)
    for q in ("deploy staging", "tail the logs", "send the invoice", "track my parcel"):
        st.record(q, "s")
    for _ in range(50):                                  # a flood: one event, nothing pushed out
        st.record("deploy staging", "s", "feedback", good=False)
    assert [e.query for e in st.events()] == ["tail the logs", "send the invoice",
                                              "track my parcel", "deploy staging"]
    st.record("weather tomorrow", "s")                   # the oldest goes, not the one just marked
    assert [e.query for e in st.events()] == ["send the invoice", "track my parcel",
                                              "deploy staging", "weather tomorrow"]
    assert not st.events()[2].good


def test_every_event_has_its_own_increasing_id() -> None:
    """The usage index names past messages by id, so what it carries from one history to the
    next is the same event (decision 231)."""
    st = UsageStore(None, cap=3)
    for q in ("a b", "c d", "e f", "a b", "g h"):
        st.record(q, "s")
    ids = [e.id for e in st.events()]
    assert len(ids) == 3 and ids == sorted(set(ids)) and min(ids) > 0


@pytest.mark.parametrize(("query", "stored"), [
    ("\x1b[31mdeploy\x1b[0m the staging build", "deploy the staging build"),   # a terminal's colours
    ("tail the logs\x07\x08 now", "tail the logs now"),
    ("first line\r\nsecond\tline", "first line\r\nsecond\tline"),              # whitespace is text
    ("发送\x0c发票", "发送 发票"),
])
def test_control_characters_are_cleaned_out_of_a_stored_message(query: str, stored: str) -> None:
    """A message with control characters was stored as it came: an escape sequence pasted from a
    terminal became words of a past request."""
    st = UsageStore(None)
    assert st.record(query, "s")
    assert [e.query for e in st.events()] == [stored]


@pytest.mark.parametrize("query", [
    "PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00deploy",                 # a zip's header
    "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    "".join(chr(c) for c in range(1, 32)) * 3 + "abc",
    "deploy \x00 staging",
])
def test_a_binary_message_is_refused_not_stored(query: str) -> None:
    """Bytes of a file handed over as the message (a NUL, or mostly control characters) were
    stored as a past request later ones were ranked against."""
    st = UsageStore(None)
    assert not st.record(query, "s")
    assert st.events() == []
