"""Which model a name asked for answered as, remembered for the agent's life.

An Azure deployment is asked for by the name its owner gave it ("prod-chat"); only its answers say
which model runs behind it ("gpt-4o-2024-08-06"), and only that model has a price. A failed attempt
brings no answer to say so: priced by the name asked for, a timed-out call whose prompt was billed
was "no price for prod-chat", its tokens in no total. What an earlier reply of the same provider
and name said is the best knowledge there is (a deployment is rarely moved to another model), so
replies teach it here and every turn of the agent prices failed attempts through it. A name never
answered for stays itself: priced if ``llm.prices`` names it, else reported unpriced.
"""

from __future__ import annotations

#: Distinct (provider, name) pairs kept; the oldest learned is forgotten first past it.
LIMIT = 256


class ServedAs:
    """(provider, model asked for) -> the model its latest reply said answered."""

    __slots__ = ("_limit", "_seen")

    def __init__(self, limit: int = LIMIT) -> None:
        self._limit = limit
        self._seen: dict[tuple[str, str], str] = {}

    def learn(self, provider: str, requested: str, answered: str) -> None:
        """A reply of ``provider`` to ``requested`` named ``answered`` as the model."""
        key = (provider, requested)
        self._seen.pop(key, None)   # re-inserted last: the most recently learned goes last
        self._seen[key] = answered
        while len(self._seen) > self._limit:
            del self._seen[next(iter(self._seen))]

    def get(self, provider: str, requested: str) -> str:
        """The model ``requested`` of ``provider`` last answered as; itself when never heard."""
        return self._seen.get((provider, requested), requested)
