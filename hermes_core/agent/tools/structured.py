"""Structured output: a pydantic model as the reply's format, and reading the reply back.

The providers carry the request (``CallOptions.response_format``): OpenAI-compatible endpoints as
a native ``json_schema`` response format, Anthropic as a forced call of a tool whose input schema
is the model's (its arguments come back as the reply text). Here the text is validated; one repair
round tells the model what was wrong, after which :class:`StructuredOutputError` is raised.
"""

from __future__ import annotations

import json
import re
import string
from typing import Any, TypeVar

import pydantic_core
from pydantic import BaseModel, ValidationError

from hermes_core.agent.tools.schema import (
    WireSchema,
    finite_schema,
    kept_with,
    non_finite_places,
    unsendable_properties,
    validation_message,
)
from hermes_core.errors import StructuredOutputError

T = TypeVar("T", bound=BaseModel)

# a Markdown code fence anywhere in the reply, on one line or many, with any language tag
# (json, JSON, jsonc, json5, js, javascript: models pick their own)
_OPENER = r"```[ \t]*(?:[A-Za-z][\w+.-]*)?[ \t]*\n?"
_FENCE = re.compile(_OPENER + r"(.*?)\n?[ \t]*```", re.DOTALL)
# a fence opened and not yet closed (a reply still arriving): what it holds so far
_OPEN_FENCE = re.compile(_OPENER + r"(.*)", re.DOTALL)
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
# what a JSON number is written with (its digits, sign, point and exponent)
_NUMBER_CHARS = "0123456789.eE+-"


def response_format(output: type[BaseModel]) -> dict[str, Any]:
    """What ``CallOptions.response_format`` carries: a schema name and the JSON schema (a fresh
    copy: a caller may change it).

    Generated once per model class, as tools' schemas are (pydantic builds it afresh on every
    call, about half a millisecond, and every structured turn asked for it, a repair round
    twice). Kept on the class beside the core schema it was built with, as tools' are
    (:func:`~hermes_core.agent.tools.schema.kept_with`): a model redefined (a notebook cell run
    again) is another class and gets its own, one rebuilt (``model_rebuild(force=True)`` after
    its config changed) has a new core schema, so its format is generated anew, and a model
    made per request and dropped takes its format with it."""
    if not (isinstance(output, type) and issubclass(output, BaseModel)):
        raise TypeError(f"output must be a pydantic model class, not {output!r}")
    loaded: dict[str, Any] = json.loads(kept_with(
        output, "__hermes_format__", lambda: json.dumps(_format(output), ensure_ascii=False)))
    return loaded


def _format(output: type[BaseModel]) -> dict[str, Any]:
    name = _NAME_CHARS.sub("_", output.__name__)[:64] or "output"
    schema = output.model_json_schema(schema_generator=WireSchema)   # a tuple gets items
    # a NaN or infinite default: the SDKs refused to write the request at all
    schema = finite_schema(_object_root(output.__name__, schema))
    unsendable = non_finite_places(schema)
    if unsendable:
        raise TypeError(f"output model {output.__name__}: its schema holds NaN or infinity at "
                        f"{unsendable[0]}, which JSON cannot carry; use a str choice or a finite "
                        "number")
    bad = unsendable_properties(schema)
    if bad:   # Anthropic's output tool takes this schema as its input schema
        raise TypeError(f"output model {output.__name__}: field name {bad[0]!r} cannot be sent: "
                        "the APIs take ASCII letters, digits, '_', '.' or '-', at most 64; "
                        "rename it or give it such an alias")
    return {"name": name, "schema": schema,
            "description": (output.__doc__ or "").strip()[:1024]}


def _object_root(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with an object at its top, as both APIs require (OpenAI's ``json_schema``
    response format; Anthropic's tool ``input_schema``, ``type: "object"``); a list, a string
    or a union at the top was a 400 on every call. A ``RootModel`` of a model is that model's
    schema, its ``$defs`` kept."""
    ref = schema.get("$ref")
    defs = schema.get("$defs", {})
    if isinstance(ref, str) and ref.startswith("#/$defs/") \
            and set(schema) <= {"$ref", "$defs", "title", "description"}:
        target = defs.get(ref.removeprefix("#/$defs/"), {})
        schema = {**target, "$defs": defs} if target.get("type") == "object" else schema
    if schema.get("type") != "object":
        raise TypeError(f"output model {name}: its JSON schema must be an object at the top "
                        f"(the APIs refuse {schema.get('type') or 'a reference or union'} there); "
                        "wrap it in a model with a field, e.g. class Answer(BaseModel): items: "
                        "list[...]")
    return schema


def parse_output(text: str, output: type[T]) -> T:
    """The reply as an ``output`` instance; raises ``ValidationError`` or ``ValueError``.

    A model that wraps its JSON in a Markdown fence (common without a native JSON mode), with a
    sentence before or after it ("Here is the plan:"), is read: the whole reply is tried first (a
    JSON string may itself hold a fence), then the text of a reply that is one JSON string (the
    object encoded twice), each fenced block, and each JSON object standing in the prose (a fence
    may hold an example or a shell command, the answer standing after it), as a server that
    ignores ``response_format`` answers; the error is the first candidate's, else the whole
    reply's."""
    body = text.strip()
    if not body:
        raise ValueError("the reply is empty")
    try:
        return output.model_validate_json(body)
    except ValidationError as e:
        whole = e
    wrapped, loose = _unwrapped(text, body)
    first: ValidationError | None = None
    for block in wrapped + loose:
        try:
            return output.model_validate_json(block)
        except ValidationError as e:
            if first is None and (block in wrapped or _stands_alone(block, body)):
                first = e
    raise first or whole


def parse_draft(text: str, output: type[T]) -> T | None:
    """The object a structured reply still arriving holds so far, read leniently (pydantic's
    partial mode: the fields so far, the last string as far as it came), or None.

    Unwrapped as :func:`parse_output` unwraps the final reply, in its order (the whole text, the
    text of a reply that is one JSON string, a fenced block, an object standing in the prose),
    but the last string, fence or object may not be closed yet; so the partial objects of a
    fenced reply, or one after "Here is the plan:", are those its final object completes. A
    reply that opens JSON still arriving with ``{`` is read as that object alone."""
    body = text.lstrip()   # not its end: a space there may be in a string still arriving
    if not body.strip():
        return None
    if (value := _partial(body, output)) is not None:
        return value
    # a reply that opens an object still arriving is that object: one inside it (a tree's first
    # child) may have the reply's shape while the reply itself cannot be read yet (see
    # _stands_alone); a stray "{" that opens no JSON is passed over, as the final parse does
    if body.startswith("{") and _opens_json(body):
        return None
    wrapped, loose = _unwrapped(text, body, partial=True)
    return next((v for block in (*wrapped, *loose)
                 if (v := _partial(block, output)) is not None), None)


def _partial(block: str, output: type[T]) -> T | None:
    """``block`` read leniently as an ``output`` (pydantic's partial mode), or None."""
    try:
        value = output.__pydantic_validator__.validate_json(block, allow_partial="trailing-strings")
    except (ValidationError, ValueError):   # not (yet) an object of its shape
        return None
    return value if isinstance(value, output) else None


def _unwrapped(text: str, body: str, *, partial: bool = False) -> tuple[list[str], list[str]]:
    """The blocks a reply may hold its JSON in, besides its whole text: wrapped (the text of a
    reply that is one JSON string, each fenced block) and loose (each object standing in the
    prose). ``partial``: the reply is still arriving, so a fence opened last and not closed, and
    an object that runs to the end unfinished, are blocks too (a closing fence half arrived is
    left off)."""
    # the lazy fence pattern costs ~1 ms a 12 KB text searching for a close never there: a
    # reply still arriving has one "```" until its last piece, and drafts are read ~150 times
    fences = list(_FENCE.finditer(text)) if text.count("```") > 1 else []
    wrapped = [*_string_content(body, partial=partial), *(m.group(1).strip() for m in fences)]
    if partial:
        tail = _OPEN_FENCE.search(text, fences[-1].end() if fences else 0)
        if tail is not None:
            block = tail.group(1).lstrip()
            if block.rstrip().endswith("`"):   # the closing fence begun: not the JSON's
                block = block.rstrip().rstrip("`").rstrip()
            wrapped.append(block)
    loose = [o for o in _objects_in(text, partial=partial) if o not in wrapped]
    return wrapped, loose


def _stands_alone(found: str, body: str) -> bool:
    """Whether an object found in the prose may speak for the reply when it does not validate:
    not when the reply itself opens an object that does not parse (cut off before its closing
    brace) and this one lies inside it; the inner object's mismatch ("stops: Field required")
    would send the model to add what it already wrote."""
    return not body.startswith("{") or body.startswith(found)


def _string_content(body: str, *, partial: bool = False) -> list[str]:
    """The text of a reply that is a single JSON string, when it is one; ``partial``: a string
    still arriving, as far as it came (its last escape whole: one cut inside is no read yet)."""
    if not body.startswith('"'):
        return []
    try:
        value = (pydantic_core.from_json(body, allow_partial="trailing-strings") if partial
                 else json.loads(body))
    except (ValueError, RecursionError):
        return []
    if not isinstance(value, str) or not value.strip():
        return []
    if not partial:
        return [value.strip()]
    if _cut_in_escape(body):
        # the decode stopped before an escape cut in two: a number at the content's end goes
        # on in it (``1\u0032``, a digit written as an escape), where the redactor's held tail
        # (a number still arriving) ended at the backslash; it is left off until whole
        kept = value.rstrip(_NUMBER_CHARS)   # not a pattern: one searched from each digit of
        if any(c.isdigit() for c in value[len(kept):]):   # a long run is quadratic
            value = kept
    return [value.lstrip()]   # not its end: a space there may be in a string


def _cut_in_escape(body: str) -> bool:
    """Whether a JSON string still arriving ends inside an escape (``\\``, ``\\u00``). Read
    from its end: a pattern searched over the whole text cost ~1 ms a 12 KB read."""
    at = body.rfind("\\", max(0, len(body) - 5))
    if at < 0:
        return False
    rest = body[at + 1:]
    if rest and not (rest[0] == "u" and len(rest) <= 4
                     and all(c in string.hexdigits for c in rest[1:])):
        return False
    start = at
    while start > 0 and body[start - 1] == "\\":
        start -= 1
    return (at + 1 - start) % 2 == 1   # an odd run of backslashes: the last one opens an escape


def _objects_in(text: str, limit: int = 8, starts: int = 64, *,
                partial: bool = False) -> list[str]:
    """The JSON objects standing in ``text`` (at most ``limit``), each as its own text: decoded
    from each ``{`` by the standard decoder, so braces inside strings are no trouble. At most
    ``starts`` braces are tried: a long reply full of braces must not cost a decode from each.
    ``partial``: a ``{`` that does not decode but opens JSON still arriving is taken with the
    rest of the text, and is the last (any ``{`` after it is inside it).

    A start nested past the decoder's depth is no object, and the scan ends at the second: the
    ``{`` after one is almost always inside it, as deep, and each such decode runs to the
    decoder's depth first (64 of them cost ~10 ms a read of a draft read ~150 times); one
    is passed over, as an object may follow a single deep list."""
    decoder = json.JSONDecoder()
    found: list[str] = []
    at = text.find("{")
    deep = 0
    while at != -1 and len(found) < limit and starts > 0 and deep < 2:
        starts -= 1
        try:
            value, end = decoder.raw_decode(text, at)
        except RecursionError:   # nested past the decoder's depth: no object
            deep += 1
            at = text.find("{", at + 1)
            continue
        except ValueError as e:
            if partial and _opens_json(text[at:]):
                found.append(text[at:])
                break
            if partial and _read_to_end(text, e):   # every "{" after it is inside it
                break
            at = text.find("{", at + 1)
            continue
        if isinstance(value, dict):
            found.append(text[at:end])
        at = text.find("{", end)
    return found


def _read_to_end(text: str, error: ValueError) -> bool:
    """Whether the decoder, failing, read ``text`` to its end: it stopped there, or in a string
    it read and found never closed (not at a quote where it wanted a delimiter: that string it
    never read, and a ``{}`` after it stands). Every ``{`` after the start is then inside what
    it read, so none stands in the prose. Pydantic refuses such a start when it nests past its
    depth (~200, the decoder's is ~1,000), and each later ``{``, as deep, decoded to the end
    again: up to 64 a read."""
    at = getattr(error, "pos", None)
    if at is None:
        return False
    return at == len(text) or str(getattr(error, "msg", "")).startswith("Unterminated string")


def _opens_json(text: str) -> bool:
    """Whether ``text`` is JSON cut short (pydantic's partial parser reads it)."""
    try:
        pydantic_core.from_json(text, allow_partial="trailing-strings")
    except ValueError:
        return False
    return True


def problem(e: Exception) -> str:
    if isinstance(e, ValidationError):
        return validation_message(e, "(reply)")
    return getattr(e, "msg", None) or str(e) or type(e).__name__


def repair_message(output: type[BaseModel], error: Exception) -> str:
    """The user message of the repair round: what failed, and the schema again (as sent)."""
    schema = json.dumps(response_format(output)["schema"], ensure_ascii=False)
    return (f"Your reply did not match the required JSON schema ({problem(error)}). Reply again "
            f"with only a JSON object matching this schema, nothing else:\n{schema}")


def failed(output: type[BaseModel], error: Exception, text: str) -> StructuredOutputError:
    return StructuredOutputError(output.__name__, problem(error), text)


def refused(output: type[BaseModel], text: str) -> StructuredOutputError:
    """The error for a reply the model refused to give: its words, no repair round."""
    return StructuredOutputError(output.__name__, f"the model refused: {text.strip()[:200]}"
                                 if text.strip() else "the model refused", text, refused=True)
