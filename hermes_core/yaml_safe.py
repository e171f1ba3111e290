"""YAML -> plain data under hard limits: depth, node count after alias expansion, size.

PyYAML's own loaders expand aliases by reference and build the tree recursively, so a 276-byte
"billion laughs" file costs minutes once anything walks it, a recursive alias (``a: &a [*a]``)
never ends, and nesting a few hundred levels deep raises ``RecursionError``. Every YAML file
hermes_core reads (config.yaml, SKILL.md front matter) goes through :func:`load_yaml` instead:
one event pass rejects deep nesting and huge documents before any tree is built, then the tree
is walked with a node budget (aliases count every time they are expanded) and a cycle check.
Empty values (``key:`` with nothing after it) are ordinary YAML nulls and load as ``None``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from hermes_core.redact import redact

MAX_DEPTH = 32
MAX_NODES = 20_000
MAX_CHARS = 1_000_000

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
Path = tuple[Any, ...]
Interpolate = Callable[[str, Path, int], str]


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


def _precheck(text: str, max_depth: int, max_nodes: int, loader: Any) -> None:
    """One pass over the parser's events (no tree yet): depth and size are known before any
    recursion can start."""
    depth = 0
    for events, ev in enumerate(yaml.parse(text, Loader=loader), start=1):
        line = ev.start_mark.line + 1 if ev.start_mark is not None else None
        if events > max_nodes:
            raise YamlLimitError(f"too large: more than {max_nodes} entries", line=line)
        if isinstance(ev, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
            if depth > max_depth:
                raise YamlLimitError(f"nested more than {max_depth} levels deep", line=line)
        elif isinstance(ev, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1


def compose(text: str, *, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES,
            max_chars: int = MAX_CHARS) -> yaml.Node | None:
    """The single document's node tree (None for an empty document), limits checked first."""
    if len(text) > max_chars:
        raise YamlLimitError(f"too large ({len(text)} characters; limit {max_chars})")
    try:
        try:
            _precheck(text, max_depth, max_nodes, _Loader)
            node: yaml.Node | None = yaml.compose(text, Loader=_Loader)
        except yaml.YAMLError as e:
            if _Loader is yaml.SafeLoader or "escape" not in str(getattr(e, "problem", "")):
                raise
            # libyaml refuses some escapes PyYAML reads (half a surrogate pair, "\ud83d"):
            # the pure-Python loader decides, under the same limits. Only then: it takes seconds
            # over a megabyte that libyaml rejects in milliseconds
            _precheck(text, max_depth, max_nodes, yaml.SafeLoader)
            node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        opened = getattr(e, "context_mark", None)
        mark = getattr(e, "problem_mark", None) or opened
        end = len(text.rstrip())
        if opened is not None and mark is not None and mark.index >= end:
            mark = opened   # something left open to the end: the line that opened it
        line = None if mark is None else min(mark.line + 1, text[:end].count("\n") + 1)
        # the parser quotes the offending text (an alias name, a token), which may be a pasted key
        raise YamlLimitError(f"invalid YAML: {redact(problem)}", line=line) from None
    except RecursionError:  # pragma: no cover - the precheck bounds the depth first
        raise YamlLimitError(f"nested more than {max_depth} levels deep") from None
    return node


class _Walk:
    """Node tree -> plain data with a budget; remembers each key path's line."""

    def __init__(self, max_depth: int, max_nodes: int, interpolate: Interpolate | None) -> None:
        self.max_depth = max_depth
        self.budget = max_nodes
        self.interpolate = interpolate
        self.lines: dict[str, int] = {}
        self.active: set[int] = set()
        self.scalars = yaml.constructor.SafeConstructor()

    def scalar(self, node: yaml.ScalarNode, path: Path) -> Any:
        line = node.start_mark.line + 1
        try:
            value = self.scalars.construct_object(node)
        except (ValueError, OverflowError) as e:  # int over 4300 digits, a date like 2024-13-45
            digits = sum(c.isdigit() for c in str(node.value))
            if "integer string conversion" in str(e):   # Python's advice to call sys.set_int_max...
                raise YamlLimitError(f"a number of {digits} digits is too long to be a setting",
                                     line=line, path=path) from None
            raise YamlLimitError(f"unreadable value ({str(e).splitlines()[0][:80]})",
                                 line=line, path=path) from None
        except yaml.YAMLError as e:
            raise YamlLimitError(f"unreadable value ({getattr(e, 'problem', None) or 'bad scalar'})",
                                 line=line, path=path) from None
        if self.interpolate is not None and isinstance(value, str) and "${" in value:
            value = self.interpolate(value, path, line)
        return value

    def key(self, node: yaml.Node, path: Path) -> str:
        line = node.start_mark.line + 1
        if not isinstance(node, yaml.ScalarNode):
            raise YamlLimitError("keys must be plain text, not a list or mapping", line=line,
                                 path=(*path, "?"))
        value = self.scalar(node, (*path, "?"))
        if not isinstance(value, str):
            shown = "null" if value is None else str(value)[:40]
            raise YamlLimitError(f"keys must be text (got {type(value).__name__} {shown}); quote it",
                                 line=line, path=(*path, shown))
        return value

    def data(self, node: yaml.Node, path: Path) -> Any:
        self.budget -= 1
        line = node.start_mark.line + 1
        if self.budget < 0:
            raise YamlLimitError("too many entries once aliases are expanded (an alias bomb?)",
                                 line=line, path=path)
        self.lines.setdefault(format_path(path), line)
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node, path)
        if len(path) > self.max_depth:
            raise YamlLimitError(f"nested more than {self.max_depth} levels deep", line=line, path=path)
        if id(node) in self.active:
            raise YamlLimitError("recursive alias: the value contains itself", line=line, path=path)
        self.active.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [self.data(item, (*path, i)) for i, item in enumerate(node.value)]
            out: dict[str, Any] = {}
            for k_node, v_node in node.value:
                if k_node.tag == "tag:yaml.org,2002:merge":
                    raise YamlLimitError("merge keys ('<<') are not supported; write the keys out",
                                         line=k_node.start_mark.line + 1, path=path)
                key = self.key(k_node, path)
                if key in out:
                    raise YamlLimitError("duplicate key", line=k_node.start_mark.line + 1,
                                         path=(*path, key))
                out[key] = self.data(v_node, (*path, key))
            return out
        finally:
            self.active.discard(id(node))


def load_yaml(text: str, *, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES,
              max_chars: int = MAX_CHARS,
              interpolate: Interpolate | None = None) -> tuple[Any, dict[str, int]]:
    """Plain data (dicts, lists, scalars) and the line of every key path.

    ``interpolate(text, path, line)`` rewrites each string scalar holding ``${``. Raises
    :class:`YamlLimitError` (never RecursionError, never a PyYAML error) naming line and path.
    """
    node = compose(text, max_depth=max_depth, max_nodes=max_nodes, max_chars=max_chars)
    if node is None:
        return None, {}
    total = _expanded_size(node, max_depth, max_nodes)
    if total > max_nodes:
        raise YamlLimitError(f"too many entries once aliases are expanded ({total}+; limit "
                             f"{max_nodes}): an alias bomb?", line=node.start_mark.line + 1)
    walk = _Walk(max_depth, max_nodes, interpolate)
    return walk.data(node, ()), walk.lines


def _expanded_size(root: yaml.Node, max_depth: int, cap: int) -> int:
    """How many nodes the tree has once every alias is expanded, counted over distinct nodes
    (memoised), so a billion-laughs file is measured in microseconds, not expanded. Stops
    counting past ``cap``; a recursive alias or nesting past ``max_depth`` is reported."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: yaml.Node, depth: int) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if isinstance(node, yaml.ScalarNode):
            return 1
        if key in active:
            return 1   # a recursive alias: the walk reports it with its key path
        if depth > max_depth:
            raise YamlLimitError(f"nested more than {max_depth} levels deep",
                                 line=node.start_mark.line + 1)
        active.add(key)
        total = 1
        children = (node.value if isinstance(node, yaml.SequenceNode)
                    else [v for pair in node.value for v in pair])
        for child in children:
            total += size(child, depth + 1)
            if total > cap:
                break
        active.discard(key)
        sizes[key] = min(total, cap + 1)
        return sizes[key]

    return size(root, 0)
