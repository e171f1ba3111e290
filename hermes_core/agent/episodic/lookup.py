"""A session id typed back by a person: as stored, or as ``memory search`` printed it.

``memory search`` prints a line ``score  age  id  [tags]`` with control characters shown as
``\\xNN``; people copy the id with its tags, the spaces around it, the whole line, or the first
few characters of a long one. Forgetting cannot be undone, so a prefix names a session only when
it is at least ``MIN_PREFIX_CHARS`` long (as git takes an abbreviated commit id) and no other id
starts with it; an exact id always wins over a prefix of another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: A typed id shorter than this is never read as the start of a longer one.
MIN_PREFIX_CHARS = 4
#: How many ids an ambiguous prefix names in its message.
SHOWN_IDS = 5

# the whole line search printed: the score (``%10.4g``), the age (``%7.1fd``), then the id
_LINE = re.compile(r"\s*[-+.\deEinfa]+\s+\d+(?:\.\d+)?d\s+(?P<rest>\S.*)", re.DOTALL)
# the tags search prints after an id: two spaces, then [a, b]
_TAGS = re.compile(r"\s{2}\[[^\[\]]*\]\s*\Z")
# a control character as search showed it (``terminal_safe``)
_ESCAPED = re.compile(r"\\x([01][0-9a-fA-F]|7[fF]|[89][0-9a-fA-F])")


def _unescaped(text: str) -> str:
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)


def readings(text: str) -> tuple[str, ...]:
    """What ``text`` may name, most literal first: itself, without the spaces around it, without
    the tags search printed after it, the id part of a whole search line; each also with the
    control characters search escaped put back. Distinct and non-empty."""
    bases = [text, text.strip()]
    line = _LINE.fullmatch(text)
    for t in (text, line.group("rest") if line else ""):
        bare = _TAGS.sub("", t)
        bases += [bare, bare.strip(), t.strip()]
    out = [b for base in bases for b in (base, _unescaped(base))]
    return tuple(dict.fromkeys(r for r in out if r.strip()))


@dataclass(frozen=True, slots=True)
class IdLookup:
    """The stored ids a typed id names.

    ``ids``: the one exact id; or the ids (at most ``SHOWN_IDS + 1``) starting with it, read as a
    prefix (``by_prefix``); empty when none. ``shorter``: when nothing was found, how many ids
    (at most ``SHOWN_IDS + 1``) start with a reading too short to be a prefix.
    """

    typed: str
    ids: tuple[str, ...] = ()
    by_prefix: bool = False
    shorter: int = 0

    @property
    def unique(self) -> str | None:
        """The one session named, or None (none, or an ambiguous prefix)."""
        return self.ids[0] if len(self.ids) == 1 else None
