"""YAML -> plain data under hard limits: depth, node count after alias expansion, size.

PyYAML's own loaders expand aliases by reference and build the tree recursively, so a 276-byte
"billion laughs" file costs minutes once anything walks it, a recursive alias (``a: &a [*a]``)
never ends, and nesting a few hundred levels deep raises ``RecursionError``. Every YAML file
hermes_core reads (config.yaml, SKILL.md front matter) goes through :func:`load_yaml` instead:
plain data is built straight from the parser's events with an explicit stack (no node tree, no
recursion), depth, entry count and alias expansion checked as each event arrives. An alias costs
the size of what it names, known when that anchor closed, so an alias bomb is refused before
more than the budget is copied. A text long enough to hold more entries than allowed is first
counted in a pass over its events alone, so refusing a megabyte of keys costs the parser's time,
not the time to build it. Empty values (``key:`` with nothing after it) are ordinary YAML nulls
and load as ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import yaml

from hermes_core.redact import redact

MAX_DEPTH = 32
MAX_NODES = 20_000
MAX_CHARS = 1_000_000

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
Path = tuple[Any, ...]
Interpolate = Callable[[str, Path, int], str]
_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_NO_KEY = object()
_SCALAR_CONSTRUCTORS: dict[str, Any] = {
    f"tag:yaml.org,2002:{t}": yaml.constructor.SafeConstructor.yaml_constructors[f"tag:yaml.org,2002:{t}"]
    for t in ("null", "bool", "int", "float", "binary", "timestamp")}


class YamlLimitError(ValueError):
    """The YAML is malformed or over a limit; ``line`` (1-based) and ``path`` say where."""

    def __init__(self, reason: str, *, line: int | None = None, path: Path = ()) -> None:
        self.reason = reason
        self.line = line
        self.path = path
        super().__init__(reason if line is None else f"line {line}: {reason}")


def format_path(parts: Path) -> str:
    """``("llm", "routing", "providers", 0, "name")`` -> ``llm.routing.providers[0].name``."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


@dataclass
class _Frame:
    """One open mapping or sequence: its value, where it sits, and its expanded size so far."""

    value: Any
    path: Path
    dotted: str
    anchor: str | None
    line: int
    size: int = 1
    key: Any = _NO_KEY
    key_end: tuple[int, int] = (0, 0)   # the pending key's last line (1-based) and index


@dataclass
class _Builder:
    """Events -> plain data; remembers each key path's line and each anchor's value and size."""

    max_depth: int
    max_nodes: int
    interpolate: Interpolate | None
    lines: dict[str, int] = field(default_factory=dict)
    anchors: dict[str, tuple[Any, int]] = field(default_factory=dict)
    stack: list[_Frame] = field(default_factory=list)
    total: int = 0
    resolver: Any = field(default_factory=yaml.resolver.Resolver)
    constructor: Any = field(default_factory=yaml.constructor.SafeConstructor)

    def run(self, events: Iterator[yaml.Event]) -> Any:
        result: Any = None
        documents = 0
        for count, ev in enumerate(events, start=1):
            line = ev.start_mark.line + 1 if ev.start_mark is not None else None
            if count > self.max_nodes:
                raise YamlLimitError(f"too large: more than {self.max_nodes} entries", line=line)
            if isinstance(ev, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise YamlLimitError("invalid YAML: expected a single document in the stream, "
                                         "but found another document", line=line)
            elif isinstance(ev, yaml.ScalarEvent | yaml.AliasEvent
                            | yaml.MappingStartEvent | yaml.SequenceStartEvent):
                done = self._node(ev, line or 1)
                if done is not _NO_KEY:
                    result = done
            elif isinstance(ev, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                frame = self.stack.pop()
                if frame.anchor is not None:
                    self.anchors[frame.anchor] = (frame.value, frame.size)
                done = self._place(frame.value, frame.size, frame.line)
                if done is not _NO_KEY:
                    result = done
        return result

    def _where(self) -> tuple[Path, str, bool]:
        """The path and dotted path of the next value, and whether it is a mapping key."""
        if not self.stack:
            return (), "", False
        top = self.stack[-1]
        if isinstance(top.value, list):
            i = len(top.value)
            return (*top.path, i), f"{top.dotted}[{i}]", False
        if top.key is _NO_KEY:
            return (*top.path, "?"), top.dotted, True
        return (*top.path, top.key), (f"{top.dotted}.{top.key}" if top.dotted else str(top.key)), False

    def open_path(self, text: str, line: int | None) -> Path:
        """The key path whose value was being read at ``line``: the last key given (a mapping's
        next key not yet read is no part of it), unless its value began on the key's own line
        and the error is on a later one. The parser gives a value only once it has looked a
        line ahead for a ``:``, so after ``bm25: 1`` a tab-indented ``dense: 2`` found bm25
        still open; but a value begun beside its key does not own the next lines (YAML reads a
        tab as no indentation at all): the mapping holding the key is named, as when a comment
        had ended the value. A key with nothing after it (``llm:``) or a block scalar (``|``)
        owns the lines below it."""
        path = self._where()[0]
        if not path:
            return path
        top = self.stack[-1]
        if top.key is _NO_KEY or isinstance(top.value, list):
            return path[:-1]
        key_line, index = top.key_end
        if line is not None and line > key_line and _begun(text[index:index + 4096]):
            return path[:-1]
        return path

    def _count(self, n: int, line: int, path: Path) -> None:
        self.total += n
        if self.total > self.max_nodes:
            raise YamlLimitError(f"too many entries once aliases are expanded ({self.total}+; limit "
                                 f"{self.max_nodes}): an alias bomb?", line=line, path=path)

    def _node(self, ev: yaml.Event, line: int) -> Any:
        path, dotted, is_key = self._where()
        if isinstance(ev, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            if is_key:
                raise YamlLimitError("keys must be plain text, not a list or mapping", line=line,
                                     path=path)
            if len(self.stack) >= self.max_depth:
                raise YamlLimitError(f"nested more than {self.max_depth} levels deep", line=line,
                                     path=path)
            self._count(1, line, path)
            self.lines.setdefault(dotted, line)
            anchor = self._anchor(ev, line, path)
            value: Any = {} if isinstance(ev, yaml.MappingStartEvent) else []
            self.stack.append(_Frame(value, path, dotted, anchor, line))
            return _NO_KEY
        if isinstance(ev, yaml.AliasEvent):
            if any(f.anchor == ev.anchor for f in self.stack):
                raise YamlLimitError("recursive alias: the value contains itself", line=line,
                                     path=path)
            if ev.anchor not in self.anchors:
                raise YamlLimitError(f"invalid YAML: found undefined alias {redact(str(ev.anchor))!r}",
                                     line=line, path=path)
            value, size = self.anchors[ev.anchor]
            self._count(size, line, path)
            if not is_key:
                self.lines.setdefault(dotted, line)
            return self._place(_copy(value), size, line)
        self._count(1, line, path)
        if not is_key:
            self.lines.setdefault(dotted, line)
        anchor = self._anchor(ev, line, path)
        assert isinstance(ev, yaml.ScalarEvent)
        value = self._scalar(ev, line, path, is_key)
        if anchor is not None:
            self.anchors[anchor] = (value, 1)
        if is_key and ev.end_mark is not None:
            self.stack[-1].key_end = (ev.end_mark.line + 1, ev.end_mark.index)
        return self._place(value, 1, line)

    def _anchor(self, ev: Any, line: int, path: Path) -> str | None:
        anchor: str | None = ev.anchor
        if anchor is not None and (anchor in self.anchors or any(f.anchor == anchor for f in self.stack)):
            raise YamlLimitError("invalid YAML: found duplicate anchor", line=line, path=path)
        return anchor

    def _scalar(self, ev: yaml.ScalarEvent, line: int, path: Path, is_key: bool) -> Any:
        tag = ev.tag
        if tag is None or tag == "!":
            # a quoted scalar is text; only a plain one is matched against the implicit types
            tag = (self.resolver.resolve(yaml.ScalarNode, ev.value, ev.implicit)
                   if ev.implicit[0] else _STR)
        if tag == _MERGE and is_key:
            raise YamlLimitError("merge keys ('<<') are not supported; write the keys out",
                                 line=line, path=path[:-1])
        if tag == _STR:
            value: Any = ev.value
        else:
            construct = _SCALAR_CONSTRUCTORS.get(tag)
            if construct is None:   # "!!map x", "!!python/name:os.system": no setting is either
                raise YamlLimitError(f"unreadable value (a scalar tagged {redact(str(tag))[:40]!r})",
                                     line=line, path=path)
            # libyaml's marks are its own class: the constructors read only .line and .column
            node = yaml.ScalarNode(tag, ev.value, cast(Any, ev.start_mark), cast(Any, ev.end_mark),
                                   style=ev.style)
            try:
                # the scalar types' constructors directly: construct_object's bookkeeping (for
                # recursive objects) costs more than reading a number
                value = construct(self.constructor, node)
            except (ValueError, OverflowError) as e:  # int over 4300 digits, a date like 2024-13-45
                digits = sum(c.isdigit() for c in str(ev.value))
                if "integer string conversion" in str(e):   # Python's advice to call sys.set_int_max...
                    raise YamlLimitError(f"a number of {digits} digits is too long to be a setting",
                                         line=line, path=path) from None
                raise YamlLimitError(f"unreadable value ({str(e).splitlines()[0][:80]})",
                                     line=line, path=path) from None
            except yaml.YAMLError as e:
                raise YamlLimitError(
                    f"unreadable value ({getattr(e, 'problem', None) or 'bad scalar'})",
                    line=line, path=path) from None
        if not is_key and self.interpolate is not None and isinstance(value, str) and "${" in value:
            value = self.interpolate(value, path, line)
        return value

    def _place(self, value: Any, size: int, line: int) -> Any:
        """Put a finished value into its parent; the document's value when there is none."""
        if not self.stack:
            return value
        top = self.stack[-1]
        top.size += size
        if isinstance(top.value, list):
            top.value.append(value)
        elif top.key is _NO_KEY:
            if not isinstance(value, str):
                shown = "null" if value is None else str(value)[:40]
                raise YamlLimitError(f"keys must be text (got {type(value).__name__} {shown}); "
                                     "quote it", line=line, path=(*top.path, shown))
            if value in top.value:
                raise YamlLimitError("duplicate key", line=line, path=(*top.path, value))
            top.key = value
        else:
            top.value[top.key] = value
            top.key = _NO_KEY
        return _NO_KEY


def _begun(rest: str) -> bool:
    """Whether the text after a key (``: 1 # x`` and on) begins its value on the key's line:
    not when nothing or a comment follows the colon (an anchor or tag alone is no value
    either), nor a block scalar (``|``, ``>``), whose lines are below."""
    rest = re.split(r"[\r\n\x85\u2028\u2029]", rest, maxsplit=1)[0].strip(" \t")
    if not rest.startswith(":"):
        return False   # a "? key" whose ":" is on a later line
    words = rest[1:].split()
    while words and words[0][:1] in ("&", "!"):
        words.pop(0)
    return bool(words) and words[0][:1] not in ("#", "|", ">")


def _copy(value: Any) -> Any:
    """A fresh copy of an anchored value (callers may edit what they load); depth is bounded."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def _count_events(text: str, max_depth: int, max_nodes: int, loader: Any) -> None:
    """A pass over the events alone, for a text long enough to hold more entries than allowed:
    refusing one that does (a megabyte of keys, deep nesting repeated) costs the parser's time,
    not the time to build what it would be refused for. The builder enforces the same limits."""
    depth = 0
    for count, ev in enumerate(yaml.parse(text, Loader=loader), start=1):
        if count > max_nodes:
            line = ev.start_mark.line + 1 if ev.start_mark is not None else None
            raise YamlLimitError(f"too large: more than {max_nodes} entries", line=line)
        if isinstance(ev, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
            if depth > max_depth:
                raise YamlLimitError(f"nested more than {max_depth} levels deep",
                                     line=ev.start_mark.line + 1 if ev.start_mark else None)
        elif isinstance(ev, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1


def load_yaml(text: str, *, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES,
              max_chars: int = MAX_CHARS,
              interpolate: Interpolate | None = None) -> tuple[Any, dict[str, int]]:
    """Plain data (dicts, lists, scalars) and the line of every key path.

    ``interpolate(text, path, line)`` rewrites each string scalar holding ``${`` (an aliased
    value keeps what its anchor's site made of it). Raises :class:`YamlLimitError` (never
    RecursionError, never a PyYAML error) naming line and path.
    """
    if len(text) > max_chars:
        raise YamlLimitError(f"too large ({len(text)} characters; limit {max_chars})")
    builder: _Builder | None = None
    try:
        try:
            if len(text) > max_nodes:   # room for more entries than allowed: count them first
                _count_events(text, max_depth, max_nodes, _Loader)
            builder = _Builder(max_depth, max_nodes, interpolate)
            data = builder.run(yaml.parse(text, Loader=_Loader))
        except yaml.YAMLError as e:
            if _Loader is yaml.SafeLoader or "escape" not in str(getattr(e, "problem", "")):
                raise
            # libyaml refuses some escapes PyYAML reads (half a surrogate pair, "\ud83d"):
            # the pure-Python parser decides, under the same limits. Only then: it takes seconds
            # over a megabyte that libyaml rejects in milliseconds
            builder = _Builder(max_depth, max_nodes, interpolate)
            data = builder.run(yaml.parse(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError as e:
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        opened = getattr(e, "context_mark", None)
        mark = getattr(e, "problem_mark", None) or opened
        end = len(text.rstrip())
        if opened is not None and mark is not None and mark.index >= end:
            mark = opened   # something left open to the end: the line that opened it
        line = None if mark is None else min(mark.line + 1, text[:end].count("\n") + 1)
        position = getattr(e, "position", None)   # the reader's errors (a control character)
        if line is None and isinstance(position, int):
            line = text[:position].count("\n") + 1
        if mark is not None and text[mark.index:mark.index + 1] == "\t":
            # editors show a tab as spaces: "cannot start any token" left nothing to look for
            problem = "a tab character; YAML indents with spaces, not tabs"
        # the parser quotes the offending text (an alias name, a token), which may be a pasted key
        # the events before the error were built: the parser was inside this key's value
        where = builder.open_path(text, line) if builder is not None else ()
        raise YamlLimitError(f"invalid YAML: {redact(problem)}", line=line, path=where) from None
    return data, builder.lines
