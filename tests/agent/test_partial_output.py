"""Partial objects of a streamed structured reply: the drafts (``Drafts``) read leniently, as the
final reply is (fenced, after a sentence, sent as one JSON string), a number or a key still
arriving never shown. The partial objects through the agent over the real SDKs are in
``test_partial_output_stream.py``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from hermes_core.agent.partial_output import Drafts
from hermes_core.agent.tools.structured import parse_output
from hermes_core.redact import StreamRedactor, redact
from hermes_core.types import Delta
from tests.agent.conftest import FENCED, PREAMBLE, WHOLE, Stop, Trip

# ---------------------------------------------------------------- drafts


def test_drafts_yield_the_fields_present_so_far_and_nothing_twice() -> None:
    drafts = Drafts(Trip)
    made = []
    for piece in ('{"ci', 'ty": "Os', 'lo"', ', "stops": [', '{"na', 'me": "M', 'useum"}]}'):
        if drafts.feed(Delta(draft=piece)):
            made.append(drafts.take())
    # a word still arriving is held as the text's would be (it could become a key): "Os", "M"
    assert made == [Trip(city=""), Trip(city="Oslo"), Trip(city="Oslo", stops=[Stop(name="")]),
                    Trip(city="Oslo", stops=[Stop(name="Museum")])]
    assert drafts.take() is None


def test_text_and_other_deltas_make_no_partial_object() -> None:
    drafts = Drafts(Trip)
    assert not drafts.feed(Delta(text='{"city": "Oslo"}'))
    assert not drafts.feed(Delta(finish_reason="stop"))
    assert drafts.latest is None


def test_drafts_of_the_wrong_shape_make_no_partial_object() -> None:
    drafts = Drafts(Trip)
    assert not drafts.feed(Delta(draft='{"city": 12'))   # a number where a str belongs
    assert not drafts.feed(Delta(draft="Here is the plan"))
    assert drafts.latest is None


class Price(BaseModel):
    item: str
    cents: int = 0
    rate: float = 0.0


def test_a_number_still_arriving_is_not_shown_as_a_value_it_never_had() -> None:
    """``{"cents": 12`` may go on to 1234 (and a rate ``1.5`` to ``1.5e3``): pydantic reads the
    number so far as finished, so a partial object claimed 12 cents of a 1234-cent price. The
    redactor holds a trailing run of key letters, digits, ``.``, ``-``, ``+`` among them, so a
    number is read only once something ends it (as a word in a string is)."""
    drafts = Drafts(Price)
    made = []
    for piece in ('{"item": "tea, 12', ' cups", "cents": 12', '34', ', "rate": 1.5', 'e3', '}'):
        if drafts.feed(Delta(draft=piece)):
            made.append(drafts.take())
    assert made == [Price(item="tea, "), Price(item="tea, 12 cups"),
                    Price(item="tea, 12 cups", cents=1234),
                    Price(item="tea, 12 cups", cents=1234, rate=1500.0)]
    assert Price(item="tea, 12 cups", cents=12) not in made


def test_the_drafts_of_a_long_reply_are_held_as_one_string_not_piece_by_piece() -> None:
    """A 200 KB reply in 5-character pieces: each piece kept as its own str (~55 bytes for 5
    characters) held some 11 times the reply; the pieces are joined at each read."""
    import tracemalloc

    text = '{"city": "' + "fjord and hill " * 14_000 + '"}'
    drafts = Drafts(Trip)
    tracemalloc.start()
    try:
        for at in range(0, len(text), 5):
            drafts.feed(Delta(draft=text[at:at + 5]))
        # what the agent's own code holds: another test's background thread (a warm-up) may
        # allocate meanwhile, and tracemalloc counts every thread
        ours = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(True, "*hermes_core/agent/partial_output.py"),
             tracemalloc.Filter(True, "*hermes_core/agent/tools/structured.py"),
             tracemalloc.Filter(True, __file__)])
        held = sum(stat.size for stat in ours.statistics("filename"))
    finally:
        tracemalloc.stop()
    assert drafts.take() is not None
    # the joined drafts, and the partial object's one string, each about the reply's size
    assert held < 4 * len(text), (held, len(text))


def test_a_redraft_voids_the_drafts_so_far() -> None:
    drafts = Drafts(Trip)
    assert drafts.feed(Delta(draft='{"city": "Par", '))
    assert not drafts.feed(Delta(redraft=True))
    assert drafts.latest is None
    assert drafts.feed(Delta(draft='{"city": "Os", '))
    assert drafts.take() == Trip(city="Os")   # not "Par{...", nor the void "Par"


# ---------------------------------------------------------------- wrapped as the final reply is


def _fed(drafts: Drafts[Any], pieces: tuple[str, ...]) -> list[Any]:
    made = []
    for piece in pieces:
        if drafts.feed(Delta(draft=piece)):
            made.append(drafts.take())
    return made


@pytest.mark.parametrize("pieces", [FENCED, PREAMBLE], ids=["fenced", "preamble"])
def test_drafts_wrapped_in_a_fence_or_after_a_sentence_are_read_as_the_final_reply_is(
        pieces: tuple[str, ...]) -> None:
    """The final parse (``parse_output``) reads a fenced reply or one after a sentence; the
    drafts were read only as bare JSON, so such a reply showed no partial object. Failed before."""
    made = _fed(Drafts(Trip), pieces)
    assert made == [Trip(city=""), Trip(city="Oslo", stops=[Stop(name="Museum", days=2)])]


def test_a_fence_holding_an_example_before_the_answer_is_passed_over_as_in_the_final_parse(
        ) -> None:
    made = _fed(Drafts(Trip), ("Run ```bash\ncurl {x}\n``` then:\n", '{"city": "Rome", ', '"st'))
    assert made == [Trip(city="Rome")]


def test_a_closing_fence_half_arrived_does_not_hide_the_object() -> None:
    made = _fed(Drafts(Trip), ('```json\n{"city": "Oslo", ', '"stops": [{"name": "Museum"}]}\n``'))
    assert made[-1] == Trip(city="Oslo", stops=[Stop(name="Museum")])


def test_a_stray_unclosed_brace_before_the_object_does_not_hide_its_partials() -> None:
    """A reply opening with ``{"`` that is no JSON was read as that object alone: no partial
    object until the final, which parses past it. Failed before ([])."""
    made = _fed(Drafts(Trip), ('{"oops\n', 'Here is the plan: {"city": "Os', 'lo", "stops": [',
                               '{"name": "Museum", "days": 2}', "]}"))
    assert made == [Trip(city=""), Trip(city="Oslo"),
                    Trip(city="Oslo", stops=[Stop(name="Museum", days=2)])]


def test_a_reply_sent_as_one_json_string_shows_its_partial_objects() -> None:
    """The object JSON-encoded inside a string: the final parse reads it, the drafts read nothing
    until the string closed. Failed before (only the last)."""
    text = json.dumps(WHOLE)
    made = _fed(Drafts(Trip), tuple(text[at:at + 9] for at in range(0, len(text), 9)))
    assert made[0] == Trip(city="")
    assert made[-1] == Trip.model_validate_json(WHOLE)
    assert len(made) >= 3


def test_a_number_inside_a_reply_sent_as_one_json_string_is_never_shown_still_growing() -> None:
    text = json.dumps('{"item": "tea", "cents": 1234, "rate": 1.5e3}')
    for size in (3, 4, 5, 7):
        made = _fed(Drafts(Price), tuple(text[at:at + size] for at in range(0, len(text), size)))
        assert {p.cents for p in made} <= {0, 1234} and {p.rate for p in made} <= {0.0, 1500.0}
        assert made[-1] == Price(item="tea", cents=1234, rate=1500.0)


def test_a_digit_written_as_an_escape_in_a_json_string_reply_shows_no_number_growing() -> None:
    """A reply sent as one JSON string may write a digit as ``\\u0032``: the redactor's held tail
    (a word or number still arriving) then ends at the backslash, and the decoded content ended
    ``"cents": 1`` while 1234 was arriving. Failed before (cents 1 shown)."""
    text = json.dumps('{"item": "tea", "cents": 1234, "rate": 1.5e3}').replace("2", "\\u0032")
    for size in (1, 2, 3, 5):
        made = _fed(Drafts(Price), tuple(text[at:at + size] for at in range(0, len(text), size)))
        assert {p.cents for p in made} <= {0, 1234}, made
        assert {p.rate for p in made} <= {0.0, 1500.0}, made
        assert made[-1] == Price(item="tea", cents=1234, rate=1500.0)


@pytest.mark.parametrize("secret", ['pa"ss-Geheim-2024-x9', "back\\slash-Geheim-2024",
                                    "tab\tGeheim-2024-x9"])
def test_a_registered_key_in_a_reply_sent_as_one_json_string_reaches_no_object(
        secret: str) -> None:
    """A reply that is one JSON string escapes the object's strings twice: a key holding a quote,
    a backslash or a control character reads ``pa\\\"ss`` there, no form the redactor knew, so
    decoding the string (the final parse; the drafts since they read it) gave the key back whole,
    in every partial object and in ``reply.output``. Failed before (the key in both)."""
    text = json.dumps(json.dumps({"city": f"Oslo {secret} ok"}))
    made = _fed(Drafts(Trip, lambda: StreamRedactor((secret,))),
                tuple(text[at:at + 4] for at in range(0, len(text), 4)))
    assert made and all(secret not in p.city and secret[:8] not in p.city for p in made), made
    final = parse_output(redact(text, (secret,)), Trip)   # the agent scrubs a reply's text so
    assert final.city.startswith("Oslo [key-") and secret[:8] not in final.city


def test_prose_with_no_object_of_the_shape_makes_no_partial_object() -> None:
    assert _fed(Drafts(Trip), ("Here is {not json} and ", '{"name": "x"} ', "more words.")) == []


class Node(BaseModel):
    name: str
    children: list[Node] = []


@pytest.mark.parametrize("before", ["", "Here is the tree:\n"], ids=["bare", "preamble"])
def test_an_object_inside_the_reply_is_never_shown_as_the_reply(before: str) -> None:
    """While the reply's own object cannot be read yet (a list item whose required field has not
    started), an object inside it that has the reply's shape was taken for the reply: a tree
    showed its first child as the root. Failed before (with drafts unwrapped as the final is)."""
    pieces = (before + '{"name": "root", "children": [{"name": "leaf"}, ', '{"na', 'me": "b"}]}')
    made = _fed(Drafts(Node), pieces)
    assert Node(name="leaf") not in made
    assert made[-1] == Node(name="root", children=[Node(name="leaf"), Node(name="b")])


def test_a_long_preamble_does_not_thin_out_the_partial_objects_after_it() -> None:
    """The drafts were read again once the whole text had grown by 1/32 of itself, the prose
    before the object counted: after 64 KB of it a 1.5 KB trip showed one partial object where
    the bare reply showed dozens (after 1 MB, none). Failed before."""
    trip = json.dumps({"city": "Oslo", "stops": [{"name": f"stop {i}", "days": 2}
                                                 for i in range(50)]})
    preamble = "Let me think about the route first, day by day. " * 1_340 + "Here it is: "

    def partials(text: str) -> list[Any]:
        return _fed(Drafts(Trip), tuple(text[at:at + 20] for at in range(0, len(text), 20)))

    bare, introduced = partials(trip), partials(preamble + trip)
    assert len(bare) > 20
    assert len(introduced) >= len(bare) * 3 // 4, (len(introduced), len(bare))   # 1 before
    assert introduced[-1].city == "Oslo" and len(introduced[-1].stops) > 40
