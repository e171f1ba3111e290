"""Which phrase patterns can match a text at all, told by the literals they require.

A phrase regex that begins with ``\\b`` and an alternation is tried at every position of the
text, and the scan holds a hundred of them: on a long document that is most of the scan's time.
Each pattern is therefore filed under the literals one of which every match must contain (its
"heads", read off the pattern itself: "ignore" or "disregard", "系统提示", ...); a substring test
for them decides whether the pattern is run. Only the patterns whose heads are present are
compiled together and searched, so the result is what the whole alternation would find.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

M = re.MULTILINE


def _class_end(s: str, i: int) -> int:
    j = i + 1
    if j < len(s) and s[j] == "^":
        j += 1
    if j < len(s) and s[j] == "]":
        j += 1
    while j < len(s) and s[j] != "]":
        j += 2 if s[j] == "\\" else 1
    return j + 1


def _walk(s: str, i: int = 0) -> Iterator[tuple[int, str, int]]:
    """(index, character, group depth) of each character of ``s`` from ``i`` outside escapes and
    character classes, which are stepped over whole (a parenthesis or bar inside them is a
    literal); ``(`` comes with the depth it opens, ``)`` with the depth it returns to. Splitting
    at top-level bars and finding a group's end both read this one walk."""
    depth, j = 0, i
    while j < len(s):
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            j = _class_end(s, j)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        yield j, c, depth
        j += 1


def _group_end(s: str, i: int) -> int:
    """The index just after the group that opens at ``i``."""
    for j, c, depth in _walk(s, i):
        if c == ")" and depth == 0:
            return j + 1
    raise ValueError(s)


def _split_top(s: str) -> list[str]:
    """The top-level alternatives of ``s``."""
    cuts = [j for j, c, depth in _walk(s) if c == "|" and depth == 0]
    return [s[a + 1:b] for a, b in zip([-1, *cuts], [*cuts, len(s)], strict=True)]


def _quant(s: str, j: int) -> tuple[int, bool]:
    """(index after a quantifier at j, whether it allows zero repetitions)."""
    if j >= len(s):
        return j, False
    if s[j] in "?*":
        k = j + 1
    elif s[j] == "+":
        return (j + 2 if j + 1 < len(s) and s[j + 1] in "?+" else j + 1), False
    elif s[j] == "{":
        k = s.index("}", j) + 1
        low = s[j + 1:k - 1].split(",")[0]
        if k < len(s) and s[k] in "?+":
            k += 1
        return k, low in ("", "0")
    else:
        return j, False
    if k < len(s) and s[k] in "?+":
        k += 1
    return k, True


def _atom(s: str, i: int) -> tuple[str | None, int]:
    """(the literal character at i or None for anything else, index after the atom)."""
    c = s[i]
    if c == "\\":
        n = s[i + 1]
        if n == "u":
            return chr(int(s[i + 2:i + 6], 16)), i + 6
        if n == "U":
            return chr(int(s[i + 2:i + 10], 16)), i + 10
        if n == "x":
            return chr(int(s[i + 2:i + 4], 16)), i + 4
        if n.isalnum():
            return None, i + 2
        return n, i + 2
    if c == "[":
        return None, _class_end(s, i)
    if c == ".":
        return None, i + 1
    return c, i + 1


def heads(s: str) -> frozenset[str] | None:
    """Literals one of which every match of ``s`` contains (the longest such set); None when no
    such set is found."""
    out: set[str] = set()
    for groups in requirements(s) or ((),):
        if not groups:
            return None
        out |= max(groups, key=lambda g: min(map(len, g)))
    return frozenset(out)


Requirement = tuple[tuple[frozenset[str], ...], ...]


def requirements(s: str) -> Requirement | None:
    """For each top-level alternative of ``s``, the literal groups a match of it must contain,
    each group as "one of these literals" (``\\b(?:reveal|leak)\\b.*(?:api\\s+key|secrets)`` needs
    one of reveal, leak *and* one of secrets, api); None when an alternative requires no literal."""
    out = []
    for alt in _split_top(s):
        groups = _seq_groups(alt)
        if not groups:
            return None
        out.append(tuple(groups))
    return tuple(out)


def _seq_groups(s: str) -> list[frozenset[str]]:
    """The required literals (or alternations of literals) of a sequence, in order."""
    out: list[frozenset[str]] = []

    def end_run(run: str) -> str:
        if run:
            out.append(frozenset({run}))
        return ""

    i, run = 0, ""
    while i < len(s):
        c = s[i]
        if c in "^$" or s.startswith(("\\b", "\\B", "\\A", "\\Z"), i):
            run = end_run(run)
            i += 1 if c in "^$" else 2
            continue
        if c == "(":
            end = _group_end(s, i)
            after, optional = _quant(s, end)
            run = end_run(run)
            if not (s.startswith(("(?=", "(?!", "(?<=", "(?<!"), i) or optional):
                inner = s[i + 3:end - 1] if s.startswith("(?:", i) else (
                    s[i + 1:end - 1] if s[i + 1] != "?" else None)
                h = heads(inner) if inner is not None else None
                if h:
                    out.append(h)
            i = after
            continue
        char, j = _atom(s, i)
        after, optional = _quant(s, j)
        if char is None or optional:
            run = end_run(run)
            i = after
            continue
        run += char
        if after != j:   # "+" or {n,}: once is certain, the run ends
            run = end_run(run)
        i = after
    end_run(run)
    return out


def satisfied(req: Requirement, text: str) -> bool:
    """Whether ``text`` holds every literal group of at least one alternative."""
    return any(all(any(x in text for x in group) for group in groups) for groups in req)


class GatedPattern:
    """An alternation of phrase patterns, each run only when one of its literal heads
    (:func:`heads`) occurs in the text. ``search`` finds the leftmost match, as the alternation
    compiled whole would; ``finditer`` yields each run pattern's matches in turn (every match
    the whole alternation finds, and the ones it would skip as overlapping, in pattern order)."""

    __slots__ = ("_entries", "_whole", "pattern")

    # Below this length the whole alternation costs less than testing every pattern's heads.
    SHORT = 200

    def __init__(self, sources: tuple[str, ...], flags: int = M) -> None:
        self.pattern = "|".join(f"(?:{src})" for src in sources)
        self._whole = [re.compile(self.pattern, flags)]
        self._entries = tuple((requirements(src), re.compile(src, flags)) for src in sources)

    def _active(self, text: str) -> list[re.Pattern[str]]:
        if len(text) < self.SHORT:
            return self._whole
        return [p for req, p in self._entries if req is None or satisfied(req, text)]

    def search(self, text: str) -> re.Match[str] | None:
        found = [m for p in self._active(text) if (m := p.search(text)) is not None]
        return min(found, key=lambda m: m.start()) if found else None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        for pattern in self._active(text):
            yield from pattern.finditer(text)


