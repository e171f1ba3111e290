"""Config errors in the config's own words: what was expected, what was found, what was meant.

Pydantic says "Input should be a valid tuple"; a person editing config.yaml needs "expected a list
of model names, got the string 'openai'". An unknown key names the nearest known one
(``llm.max_token`` -> ``llm.max_tokens``, ``llm.providers`` -> ``llm.routing.providers``). A value
that is, or looks like, a secret is never shown: a key pasted under the wrong setting would
otherwise be printed on every run.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from hermes_core.config_numbers import digits
from hermes_core.redact import holds_secret
from hermes_core.yaml_safe import format_path

# What the items of a list setting are, by the setting's name.
_ITEMS = {"models": "model names", "folders": "folder paths", "catalogs": "catalog file paths",
          "providers": "providers (each a mapping with at least 'name')",
          "rules": "rules (each a mapping with 'condition' and 'model')",
          "keys": "keys (each a mapping with 'key')", "injection_categories": "category names"}
_MAPPINGS = {"credentials": "a mapping of provider name to its keys (openai: {keys: [{key: ...}]})",
             "equivalents": "a mapping of model name to model name",
             "context_windows": "a mapping of model name to a token count",
             "weights": "a mapping of layer name to a number",
             "gate_thresholds": "a mapping of model id to a number",
             "gate_weights": "a mapping of model id to its weights"}


def describe_value(value: Any, secrets: Iterable[str] = ()) -> str:
    """A short, safe description of a config value (never a secret, never 4,000 digits)."""
    if value is None:
        return "nothing (an empty value)"
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, int):
        return digits(value) if value.bit_length() > 64 else f"the number {value}"
    if isinstance(value, float):
        return f"the number {value:g}"
    if isinstance(value, str):
        # only the head of a long value is shown: judge the head (with room for a key straddling
        # the cut), not a megabyte
        if value in set(secrets) or holds_secret(value[:1024], secrets):
            return f"a string of {len(value)} characters (not shown: it looks like a secret)"
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, Mapping):
        return "a mapping"
    return f"a {type(value).__name__}"


def _expected(err: Mapping[str, Any], leaf: str) -> str | None:
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind in ("list_type", "tuple_type", "set_type"):
        return f"expected a list of {_ITEMS.get(leaf, 'values')}"
    if kind in ("dict_type", "model_type", "model_attributes_type", "mapping_type"):
        return "expected " + _MAPPINGS.get(leaf, "a mapping (indented 'key: value' lines)")
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return "expected a whole number (an integer)"
    if kind in ("float_type", "float_parsing"):
        return "expected a number"
    if kind in ("bool_type", "bool_parsing"):
        return "expected a boolean (true or false)"
    if kind == "string_type":
        return "expected text (quote it)"
    if kind == "literal_error":
        return f"expected one of {ctx.get('expected', 'the listed values')}"
    if kind == "finite_number":
        return "expected a finite number"
    for bound, words in (("gt", "greater than"), ("ge", "greater than or equal to"), ("lt", "less than"),
                         ("le", "less than or equal to")):
        if bound in ctx and kind.startswith(("greater", "less")):
            return f"must be {words} {ctx[bound]}"
    if kind in ("string_too_short", "too_short"):
        return "must not be empty"
    return None


def _field_model(annotation: Any) -> tuple[type[BaseModel] | None, str]:
    """The model a field leads to, and how: "" (directly), "[]" (a list of it), "*" (a mapping)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, ""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (types.UnionType, typing.Union):
        for a in args:
            model, how = _field_model(a)
            if model is not None:
                return model, how
    if origin in (tuple, list) and args and isinstance(args[0], type) and issubclass(args[0], BaseModel):
        return args[0], "[]"
    if origin is dict and len(args) == 2 and isinstance(args[1], type) and issubclass(args[1], BaseModel):
        return args[1], "*"
    return None, ""


def known_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every settable key path of ``model``; ``*`` stands for a mapping key (a provider name)."""
    out: list[tuple[str, ...]] = []
    for name, info in model.model_fields.items():
        if name == "source" and not prefix:
            continue
        path = (*prefix, name)
        out.append(path)
        sub, how = _field_model(info.annotation)
        if sub is not None:
            out.extend(known_paths(sub, (*path, "*") if how == "*" else path))
    return out


def _generic(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[tuple[str, ...], list[Any]]:
    """``loc`` with list indices dropped and mapping keys replaced by ``*``; the replaced keys."""
    out: list[str] = []
    keys: list[Any] = []
    current: type[BaseModel] | None = model
    how = ""
    for part in loc:
        if isinstance(part, int):
            continue
        if how == "*":
            out.append("*")
            keys.append(part)
            how = ""
            continue
        out.append(str(part))
        info = current.model_fields.get(str(part)) if current is not None else None
        current, how = _field_model(info.annotation) if info is not None else (None, "")
    return tuple(out), keys


def suggest_key(model: type[BaseModel], loc: tuple[Any, ...]) -> str | None:
    """The known key path nearest to an unknown one, written as the user would (or None).

    Tried in order, the first that answers wins: a typo among the key's siblings
    (``llm.max_token``); the same name as a setting at another level (``llm.providers`` ->
    ``llm.routing.providers``, ``prompt.max_tokens`` -> ``llm.max_tokens``); the one sibling that
    qualifies the word (``skill_utils.model`` -> ``skill_utils.embedding_model``), else its
    ``default_`` setting anywhere (``llm.model`` -> ``llm.routing.default_model``, not a routing
    rule's ``model``); the same name as a list item's field (``llm.routing.models`` ->
    ``llm.routing.providers[i].models``); a typo of the whole path; a looser typo among the
    siblings, then of a name anywhere. Among several paths of one name, the one nearest the key.
    """
    unknown, keys = _generic(model, loc)
    known = [".".join(p) for p in known_paths(model)]
    lists = _list_paths(model)
    best = _nearest(unknown, known, lists)
    if best is None:
        return None
    generic = best.split(".")
    it = iter(keys)
    parts = [str(next(it, "NAME")) if p == "*" else p for p in generic]
    return _with_indices(parts, generic, loc, lists)


#: Names other clients and proxies give a setting of ours (the OpenAI SDK's ``base_url``,
#: LiteLLM's ``api_base``, a provider's ``kind``, an ``api_key`` written beside the provider):
#: read as that setting before any typo match, which would offer an unrelated sibling.
_OTHER_NAMES = {"base_url": "endpoint", "api_base": "endpoint", "url": "endpoint",
                "base": "endpoint", "host": "endpoint", "kind": "type", "format": "type",
                "api_key": "key", "apikey": "key", "api_keys": "keys", "token": "key"}
#: Of those, the plain words: another client's name for our setting only beside it or in its
#: section (``skill_utils.format`` or ``context_engine.host`` is no provider's type or endpoint).
_PLAIN_NAMES = frozenset({"url", "base", "host", "kind", "format", "token"})


def _nearest(unknown: tuple[str, ...], known: list[str], lists: set[str]) -> str | None:
    """The generic dotted path :func:`suggest_key` names (see there for the order)."""
    parent, leaf = unknown[:-1], unknown[-1]
    by_leaf: dict[str, list[str]] = {}
    for k in known:
        by_leaf.setdefault(k.rsplit(".", 1)[-1], []).append(k)

    def nearest(paths: list[str]) -> str | None:
        # the most leading parts shared with the unknown key, then the shortest path
        def shared(k: str) -> int:
            n = 0
            for a, b in zip(k.split(".")[:-1], parent, strict=False):
                if a != b:
                    break
                n += 1
            return n
        return min(paths, key=lambda k: (-shared(k), k.count("."), k)) if paths else None

    siblings = {k.rsplit(".", 1)[-1]: k for k in known if tuple(k.split(".")[:-1]) == parent}
    ours = _OTHER_NAMES.get(leaf.lower())
    if ours is not None and (ours in siblings or ours in by_leaf):
        target = siblings.get(ours) or nearest(by_leaf[ours])
        if target is not None and (leaf.lower() not in _PLAIN_NAMES or ours in siblings
                                   or (parent and target.split(".")[0] == parent[0])):
            return target
    close = difflib.get_close_matches(leaf, list(siblings), n=1, cutoff=0.85)
    if close:
        return siblings[close[0]]
    same = by_leaf.get(leaf, [])
    settings = [k for k in same if not any(k.startswith(f"{lp}.") for lp in lists)]
    if settings:   # the name of a setting (not of a list item's field) at another level
        return nearest(settings)
    qualified = sorted(n for n in siblings if n.endswith(f"_{leaf}"))
    if f"default_{leaf}" in qualified or len(qualified) == 1:   # skill_utils.model: embedding_model
        return siblings[f"default_{leaf}" if f"default_{leaf}" in qualified else qualified[0]]
    for found in (nearest(by_leaf.get(f"default_{leaf}", [])), nearest(same)):
        if found is not None:
            return found
    # never the path that holds the unknown key: "providers.kind" is a close typo of "providers"
    outer = [k for k in known if not ".".join(unknown).startswith(f"{k}.")]
    whole = difflib.get_close_matches(".".join(unknown), outer, n=1, cutoff=0.85)
    if whole:
        return whole[0]
    close = difflib.get_close_matches(leaf, list(siblings), n=1, cutoff=0.6)
    if close:
        return siblings[close[0]]
    close = difflib.get_close_matches(leaf, [n for n in by_leaf if n != "*"], n=1, cutoff=0.8)
    return nearest(by_leaf[close[0]]) if close else None


def _list_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> set[str]:
    """Generic dotted paths (``*`` for a mapping key) of the fields that are lists of settings."""
    out: set[str] = set()
    for name, info in model.model_fields.items():
        sub, how = _field_model(info.annotation)
        if sub is None:
            continue
        path = (*prefix, name)
        if how == "[]":
            out.add(".".join(path))
        out |= _list_paths(sub, (*path, "*") if how == "*" else path)
    return out


def _with_indices(parts: list[str], generic: list[str], loc: tuple[Any, ...],
                  lists: set[str]) -> str:
    """The suggested path written as errors write paths: the list indices of ``loc`` put back
    where the two still agree (``credentials.custom.keys[0].weight``), ``[i]`` for an item the
    unknown key did not name (``credentials.openai.keys[i].max_rpm``)."""
    out = ""
    j = 0
    for n, part in enumerate(parts):
        out += f".{part}" if out else part
        aligned = j < len(loc) and loc[j] == part
        j = j + 1 if aligned else len(loc)   # once the paths part, no index of loc applies
        index = None
        while j < len(loc) and isinstance(loc[j], int):
            index = loc[j] if index is None else index
            out += f"[{loc[j]}]"
            j += 1
        if index is None and n < len(parts) - 1 and ".".join(generic[:n + 1]) in lists:
            out += "[i]"
    return out


def _is_key_slot(loc: tuple[Any, ...]) -> bool:
    """``credentials.<name>.keys[i]`` or ``...keys[i].key``: whatever sits there is a secret."""
    if len(loc) < 4 or loc[0] != "credentials" or loc[2] != "keys" or not isinstance(loc[3], int):
        return False
    return len(loc) == 4 or (len(loc) == 5 and loc[4] == "key")


def safe_path(loc: tuple[Any, ...], secrets: Iterable[str] = ()) -> str:
    """The key path for a message, a secret-looking key (a key pasted as a YAML key) masked."""
    known = set(secrets)
    return format_path(tuple("<secret-looking key>" if isinstance(p, str) and (
        p in known or holds_secret(p, known)) else p for p in loc))


def provider_shown(name: str, credentials: Mapping[str, Any]) -> str:
    """A provider's name for a log line of the load (keys unused, a key too short): masked when
    it is a pasted key, of a key's shape or one of the file's ``credentials`` keys. A library's
    logging has no redacting filter, and the CLI's learns the file's keys after the load."""
    keys = [k.key.strip() for c in credentials.values() for k in c.keys]
    return safe_path((name,), keys)


def mask_quoted(sentence: str, secrets: Iterable[str] = ()) -> str:
    """A validator's own sentence with every quoted value that holds a secret masked (a key
    pasted as a provider's name: "unknown provider '<the key>'")."""
    secrets = tuple(secrets)

    def shown(m: re.Match[str]) -> str:
        value = m.group(1)
        # only the head of a long value is shown: judge the head (with room for a key straddling
        # the cut), never a megabyte
        if value in secrets or holds_secret(value[:1024], secrets):
            return "'<not shown: it looks like a secret>'"
        return f"'{value}'" if len(value) <= 40 else f"'{value[:37]}...' ({len(value)} characters)"

    return re.sub(r"'([^']*)'", shown, sentence)


def explain_error(model: type[BaseModel], err: Mapping[str, Any], loc: tuple[Any, ...], *,
                  secrets: Iterable[str] = ()) -> tuple[str, str]:
    """(message, key path) for one pydantic error on ``model``'s data."""
    secrets = tuple(secrets)
    key_path = safe_path(loc, secrets)
    if err["type"] == "extra_forbidden":
        hint = suggest_key(model, loc)
        if hint is not None and "<secret-looking key>" in safe_path(tuple(hint.split(".")), secrets):
            hint = None
        return ("unknown key" + (f"; did you mean '{hint}'?" if hint else ""), key_path)
    if err["type"] == "missing":
        return ("missing required key", key_path)
    leaf = next((str(p) for p in reversed(loc) if not isinstance(p, int)), "")
    expected = _expected(err, leaf)
    if expected is None:  # a validator's own sentence (unknown provider, listed twice, ...)
        return (mask_quoted(str(err["msg"]).removeprefix("Value error, "), secrets), key_path)
    if "input" in err:
        got = err["input"]
        if _is_key_slot(loc) and not isinstance(got, list | tuple | Mapping | None):
            # an all-digit token reads as a number, "yes" as a boolean: still the key, never shown
            kind = "a number" if isinstance(got, int | float) and not isinstance(got, bool) else (
                "a boolean" if isinstance(got, bool) else f"a string of {len(str(got))} characters")
            how = "" if len(loc) == 5 else "; write it as - key: \"...\""
            return (f"{expected}, got {kind} (not shown: it is in a key's place{how})", key_path)
        return (f"{expected}, got {describe_value(got, secrets)}", key_path)
    return (expected, key_path)


NOT_HEADER_SAFE = ("holds a character an HTTP header cannot carry (only printable ASCII and "
                   "spaces): is it copied whole, without a smart quote or a line break?")


def header_safe(key: str) -> bool:
    """Whether ``key`` can be sent as written in an ``Authorization`` or ``x-api-key`` header."""
    return all(" " <= c <= "~" for c in key)
