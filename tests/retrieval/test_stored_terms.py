"""Tests of ``hermes_core/retrieval/stored_terms.py``: terms read back from the index file are the
ones written, made once each on first use, and carried through updates without being made."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from hermes_core.retrieval.stored_terms import CarriedTerms, StoredTerms, carried, verbatim_of
from hermes_core.retrieval.token_memo import SkillTerms

TERMS = (SkillTerms(("calendar", "meet"), (1, 2), "calendar meeting"),
         SkillTerms((), (), "???"),                                    # a skill with no token
         SkillTerms(("会议", "会", "crème"), (1, 3, 1), "会议 crème"),
         SkillTerms(("x\udcff",), (1,), "lone surrogate"))              # a lone surrogate, as stored


def _stored(terms: tuple[SkillTerms, ...] = TERMS) -> StoredTerms:
    blob = "\x00".join(w for t in terms for w in t.tokens).encode("utf-8", "surrogatepass")
    return StoredTerms(blob, np.asarray([len(t.tokens) for t in terms], dtype=np.int64),
                       np.asarray([c for t in terms for c in t.counts], dtype=np.int64),
                       [t.verbatim for t in terms])


def test_each_skills_terms_read_back_as_written_and_made_once() -> None:
    stored = _stored()
    assert stored.decoded() == 0 and len(stored) == 4
    assert stored[2] == TERMS[2] and stored.decoded() == 1 and stored[2] is stored[2]
    assert list(stored) == list(TERMS) and stored[1:3] == list(TERMS[1:3])
    assert [stored.n_tokens(i) for i in range(4)] == [2, 0, 3, 1]
    assert _stored(()).decoded() == 0 and list(_stored(())) == []


@pytest.mark.parametrize("order", [[0, 1, 2, 3], [3, 1, 0, 2], [2]])
def test_skills_asked_in_any_order_read_as_written_and_only_those_asked_are_made(
        order: list[int]) -> None:
    stored = _stored()
    assert stored.decoded() == 0
    assert [stored[i] for i in order] == [TERMS[i] for i in order]
    assert stored.decoded() == len(order) and all(stored[i] is stored[i] for i in order)
    assert list(stored) == list(TERMS)


def test_two_threads_asking_at_once_get_one_object() -> None:
    stored = _stored()
    got: list[SkillTerms] = []
    threads = [threading.Thread(target=lambda: got.append(stored[0])) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(t) for t in got}) == 1


@pytest.mark.parametrize(("blob", "n_tokens", "counts"), [
    (b"ab\xff", [1], [1]),            # not UTF-8: refused when read, not at a later query
    (b"a\x00b", [1], [1]),            # two tokens, one said
    (b"a\x00b", [2], [1]),            # a count missing
    (b"a\x00b", [2], [1, 0]),         # a count below 1
    (b"", [1], [1]),                  # a token said, none stored
])
def test_tokens_and_counts_that_do_not_add_up_are_refused(
        blob: bytes, n_tokens: list[int], counts: list[int]) -> None:
    with pytest.raises(ValueError):
        StoredTerms(blob, np.asarray(n_tokens, dtype=np.int64), np.asarray(counts, dtype=np.int64), ["v"])


def test_carried_terms_stay_unmade_and_stay_one_level_deep_over_updates() -> None:
    stored = _stored()
    new = SkillTerms(("new",), (1,), "new")
    # skill 1 removed, skill 3 moved up, a new skill at the end
    once = carried(stored, np.asarray([0, -1, 1, 2]), 4, {3: new})
    assert stored.decoded() == 0 and verbatim_of(once, 2) == "lone surrogate" and stored.decoded() == 0
    assert list(once) == [TERMS[0], TERMS[2], TERMS[3], new]
    other = SkillTerms(("other",), (1,), "other")
    twice = carried(once, np.asarray([-1, 0, 1, 2]), 4, {3: other})   # the first one edited away
    assert isinstance(twice, CarriedTerms) and twice.root is stored    # not a chain
    assert list(twice) == [TERMS[2], TERMS[3], new, other] and twice[2] is new
    plain = carried(tuple(TERMS), np.asarray([0, -1, 1, 2]), 4, {3: new})
    assert plain == (TERMS[0], TERMS[2], TERMS[3], new)


def test_once_every_stored_skill_is_edited_or_gone_the_stored_terms_are_let_go() -> None:
    stored = _stored()
    new = SkillTerms(("new",), (1,), "new")
    once = carried(stored, np.asarray([0, -1, -1, -1]), 2, {1: new})
    assert isinstance(once, CarriedTerms) and once.root is stored
    gone = carried(once, np.asarray([-1, 0]), 2, {1: new})
    assert gone == (new, new) and stored.decoded() == 0


def test_a_negative_index_reads_the_skill_it_names_and_spoils_no_other() -> None:
    stored = _stored()
    assert stored[-1] == TERMS[3] and stored[-4] == TERMS[0]
    assert stored[3] == TERMS[3] and stored[-1] is stored[3]
    assert stored.n_tokens(-1) == 1 and stored.verbatim(-2) == TERMS[2].verbatim
    assert list(reversed(stored)) == list(reversed(TERMS))
    with pytest.raises(IndexError):
        stored[4]
    with pytest.raises(IndexError):
        stored[-5]


def test_a_child_forked_while_a_thread_kept_a_skill_s_terms_reads_them(
        in_forked_child: Callable[[Callable[[], object]], object],
        held_by_a_thread: Callable[[Any], Any]) -> None:
    """A thread keeping the terms it made (the lock's few operations) when a server forked its
    workers: the worker's first read of any skill's terms waited on the lock for ever."""
    stored = _stored()
    with held_by_a_thread(stored._lock):
        assert in_forked_child(lambda: list(stored)) == list(TERMS)
