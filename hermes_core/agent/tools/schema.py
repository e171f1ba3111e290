"""A plain Python function as a tool the model may call.

The JSON schema is built from the function's signature, type hints and docstring through pydantic
(a generated arguments model), so it never drifts from the code, and the same model validates the
model's arguments before the function runs. Docstrings are read by ``docstrings`` (Google, NumPy,
Sphinx and Epydoc styles): the summary becomes the tool's description, each parameter's text its
property description.
"""

from __future__ import annotations

import difflib
import enum
import functools
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

import typing_extensions
from pydantic import MISSING, BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from hermes_core.agent.tools import call_shape, docstrings, lenient, typed_dicts
from hermes_core.agent.tools.call_shape import CallShape
from hermes_core.agent.tools.hints import local_names
from hermes_core.agent.tools.hints import read as read_hints
from hermes_core.finite_json import non_finite
from hermes_core.redact import redact
from hermes_core.types import ToolSpec

#: The names the OpenAI and Anthropic APIs accept for a tool.
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: The property names Anthropic accepts in a tool's input schema (one outside it is a 400 for the
#: whole request, every tool with it); a Python identifier may hold any letter.
_PROPERTY = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
#: The most of a description sent per tool (the APIs reject very long ones, and every tool's text
#: is paid for on every turn).
MAX_DESCRIPTION = 1024


class Keep(enum.Enum):
    """The type of :data:`KEEP`."""

    KEEP = "keep"


#: An option of :func:`make_tool` (and ``@tool``) not given: a Tool passed in keeps its own.
#: Distinct from None, which for ``timeout_s`` means "no timeout": with None as "keep", a
#: tool's timeout could never be cleared.
KEEP: Final = Keep.KEEP


class ToolDefinitionError(TypeError):
    """A function that cannot be a tool (a bad name, an unsupported type hint)."""


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _OpenArguments(BaseModel):
    """The arguments of a tool with ``**kwargs``: further names are kept, typed by its
    ``__pydantic_extra__`` annotation."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool: the function, its validated-arguments model and how it must be run.

    ``needs_approval``: the agent's approval callback is asked before each call (and may refuse).
    ``timeout_s``: a call running longer is answered with a timeout error (a sync function's thread
    cannot be killed; it finishes in the background and its result is dropped).
    """

    name: str
    description: str
    fn: Callable[..., Any]
    arguments: type[BaseModel]
    is_async: bool
    needs_approval: bool = False
    timeout_s: float | None = None
    #: (field, parameter) for each field not named as its parameter (one that would clash with
    #: BaseModel's attributes); every other field is its parameter
    renamed: tuple[tuple[str, str], ...] = ()
    #: which arguments go by position and which one is spread (``/``, ``*args``)
    shape: CallShape = field(default_factory=CallShape)
    #: the class attribute this tool is (a method decorated with ``@tool``), set by Python
    attribute: str = field(default="", init=False, repr=False, compare=False)
    #: a method tool as its instances' tools are, without ``self`` (``fn`` the plain function):
    #: built on the first read from an instance, shared by every later one
    method_form: Tool | None = field(default=None, init=False, repr=False, compare=False)
    #: ``@tool`` over ``@classmethod``: read from the class or an instance, ``fn`` binds the class
    binds_class: bool = field(default=False, repr=False, compare=False)
    #: names the hints are read with (``make_tool(fn, localns=...)``), again for ``method_form``
    localns: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)

    def __set_name__(self, owner: type, name: str) -> None:
        object.__setattr__(self, "attribute", name)

    def __get__(self, obj: object, owner: type | None = None) -> Tool:
        """A method decorated with ``@tool``, read from an instance, is that instance's tool.

        Why: a function is bound by Python when read from an instance, a Tool (a dataclass) was
        not, so ``self`` stood in the schema as a required argument the model could never fill
        and every call failed validation. Bound the way Python binds the function. The arguments
        model (~0.7 ms to build) is built on the first read and shared by every instance of the
        class (``method_form``); each instance's tool is that form with the bound method, kept in
        its ``__dict__`` as ``functools.cached_property`` does (an instance with ``__slots__``
        and no ``__dict__`` gets a fresh one each read, a few microseconds). A tool that only
        sits in a class (a module function assigned there) is left as it is."""
        if self.binds_class:   # as a classmethod binds: a subclass's read binds the subclass
            cls = owner if owner is not None else type(obj)
            return replace(self._method_form(cls), fn=types.MethodType(self.fn, cls))
        if obj is None or not _defined_in_class(self.fn):
            return self
        bound = replace(self._method_form(obj), fn=types.MethodType(self.fn, obj))
        if self.attribute and isinstance(getattr(obj, "__dict__", None), dict):
            obj.__dict__[self.attribute] = bound
        return bound

    def _method_form(self, receiver: object) -> Tool:
        """The tool as read through ``receiver`` (an instance, or the class of a class tool),
        ``fn`` left unbound; built on the first read and kept for every later one."""
        form = self.method_form
        if form is None:
            # its docstring was checked when the function became a tool: not warned again
            built = _build(types.MethodType(self.fn, receiver), self.name, self.description,
                           self.needs_approval, self.timeout_s, check_docs=False,
                           localns=self.localns)
            form = replace(built, fn=self.fn)   # no hold on the first receiver
            object.__setattr__(self, "method_form", form)
        return form

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as both wire formats take it (a fresh copy: a
        caller may change it)."""
        loaded: dict[str, Any] = json.loads(_schema_text(self.arguments))
        return loaded

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    def parse(self, raw: str) -> dict[str, Any]:
        """The call's arguments, validated; raises ``ValueError`` (JSON) or ``ValidationError``."""
        try:
            data = json.loads(raw, parse_constant=_not_json) if (raw or "").strip() else {}
        except RecursionError:
            # arguments are the model's words (or an injected page's): "[[[[..." must be an
            # answer the model can read, not a crash of the turn
            raise ValueError("nested too deeply") from None
        data = lenient.unwrapped(data, self.name)   # the object encoded twice: a JSON string holding it
        if data is None:   # some OpenAI-compatible servers send null for "no arguments"
            data = {}
        if not isinstance(data, dict):
            # named in JSON's words: the model knows "array", not "list"
            raise ValueError(f"arguments must be a JSON object, not a JSON {_json_kind(data)}")
        model = lenient.validated(self.arguments, data, self.name)
        # by the function's own parameter names: an alias is only the name the model sees
        own = dict(self.renamed)
        named = {own.get(name, name): value for name in type(model).model_fields
                 if (value := getattr(model, name)) is not MISSING}   # a key not sent
        further = model.model_extra or {}   # a ``**kwargs`` tool's further names
        if further:
            # a parameter's own name, sent beside the name the model sees it by (its alias):
            # one keyword cannot carry both, and one was dropped in silence
            aliased = {p: sent for p, sent in _sent_as(self.arguments, self.renamed) if p != sent}
            clash = next((k for k in further if k in aliased), None)
            if clash is not None:
                raise ValueError(f"{clash!r} is the parameter sent as {aliased[clash]!r}, not a "
                                 f"further name; send it once, as {aliased[clash]!r}")
        return {**further, **named}

    def invoke(self, args: Mapping[str, Any]) -> Any:
        """Call the function with arguments :meth:`parse` returned, each kind of parameter as
        Python takes it (positional-only in place, ``*args`` spread, the rest by keyword)."""
        return self.shape.call(self.fn, args)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """A tool stays callable as the plain function it wraps."""
        return self.fn(*args, **kwargs)


def _not_json(constant: str) -> Any:
    """Python's parser reads ``NaN`` and ``Infinity`` (a lenient server passes a model's on), and a
    ``float`` parameter would take them: the tool would run on a value no caller means (a NaN
    compares false with everything). The call is refused naming it, so the model can send a
    number or null."""
    raise ValueError(f"{constant} is not a JSON value (send a number or null)")


class WireSchema(GenerateJsonSchema):
    """Pydantic's generator, for a schema both APIs take (a tool's parameters, an output model).

    Silent on a default with no JSON form (``limit: Any = _UNSET``, the sentinel idiom): it is
    left out, the parameter stays optional and the function gets it when the model sends none.
    Warned of, it pointed at pydantic's own line on every definition, and under ``-W error``
    made the tool a definition error blaming the parameter's type.

    A fixed tuple (``tuple[float, float]``, a NamedTuple) is written by pydantic as
    ``prefixItems`` with no ``items``, which OpenAI refuses ("array schema missing items", a
    400 for the whole request, strict mode or not). It also gets ``items``: any of its
    positions' schemas. JSON Schema applies ``items`` only past the positions, where the
    lengths already allow nothing, so what validates is unchanged, and a reader that ignores
    ``prefixItems`` still learns what the items are."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ignored_warning_kinds = {*self.ignored_warning_kinds, "non-serializable-default"}

    def tuple_schema(self, schema: core_schema.TupleSchema) -> JsonSchemaValue:
        return _with_items(super().tuple_schema(schema))

    def named_tuple_schema(self, schema: core_schema.NamedTupleSchema) -> JsonSchemaValue:
        return _with_items(super().named_tuple_schema(schema))

    # The words in a field's ``Annotated`` (``city: Annotated[str, "the city"]``) of a model, a
    # dataclass or a TypedDict a tool takes, or of an output model: pydantic keeps them with the
    # field and passes them over, so the field went undescribed (a ``Field`` one stays first).

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        return _described(super().model_schema(schema), _field_words(schema["cls"], self.mode))

    def dataclass_schema(self, schema: core_schema.DataclassSchema) -> JsonSchemaValue:
        return _described(super().dataclass_schema(schema),
                          _field_words(schema["cls"], self.mode))

    def typed_dict_schema(self, schema: core_schema.TypedDictSchema) -> JsonSchemaValue:
        out = super().typed_dict_schema(schema)
        cls = schema.get("cls")
        return out if cls is None else _described(out, _field_words(cls, self.mode))


def _field_words(cls: type, mode: str) -> dict[str, str]:
    """The words in each field's ``Annotated`` hint of ``cls``, by the name its schema
    property has (a pydantic field's alias for ``mode``). A pydantic model or dataclass keeps
    them in its fields' metadata; a plain dataclass or a TypedDict only in its hints, read
    here (one naming what its module cannot resolve has none)."""
    fields: Mapping[str, FieldInfo] | None = getattr(cls, "__pydantic_fields__", None)
    if fields is None:
        try:
            hints = typing_extensions.get_type_hints(cls, include_extras=True)
        except Exception:   # a forward reference to what the module does not define
            return {}
        return {name: words for name, hint in hints.items()
                if (words := _annotated_words(call_shape.key_type(hint)))}
    out = {}
    for name, info in fields.items():
        words = next((m.strip() for m in info.metadata if isinstance(m, str) and m.strip()),
                     None) or _annotated_words(info.annotation)
        alias = info.validation_alias if mode == "validation" else info.serialization_alias
        if words:
            out[alias if isinstance(alias, str) else info.alias or name] = words
    return out


def _described(out: JsonSchemaValue, words: Mapping[str, str]) -> JsonSchemaValue:
    """``out`` (an object schema) with ``words`` as its properties' descriptions where they
    have none."""
    for key, prop in out.get("properties", {}).items():
        if key in words and isinstance(prop, dict) and "description" not in prop:
            prop["description"] = words[key]
    return out


#: What a tuple's position says of itself, not of the type of any item.
_POSITION_WORDS = frozenset({"title", "description", "default", "examples"})


def _with_items(out: JsonSchemaValue) -> JsonSchemaValue:
    """``out`` (an array schema) with ``items`` where it has none (see :class:`WireSchema`)."""
    if out.get("type") != "array" or "items" in out:
        return out
    kinds: dict[str, Any] = {}
    for one in out.get("prefixItems", ()):
        # a position's own words (a NamedTuple field's title, its default) say nothing of any item
        kind = {k: v for k, v in one.items() if k not in _POSITION_WORDS}
        kinds.setdefault(json.dumps(kind, sort_keys=True), kind)
    each = list(kinds.values())
    # no positions at all (``tuple[()]``, lengths 0): any schema, never applied
    out["items"] = each[0] if len(each) == 1 else {"anyOf": each} if each else {}
    return out


def kept_with(cls: type[BaseModel], attribute: str, make: Callable[[], str]) -> str:
    """``make()``, kept on ``cls`` itself under ``attribute`` beside the core schema ``cls`` has
    now: made again once ``cls`` is rebuilt (``model_rebuild(force=True)`` after its config
    changed gives a new core schema). Why on the class: it lives as long as the class and no
    longer. A cache beside it (an ``lru_cache`` of 4,096 arguments models, 1,024 output
    models) held every class it was asked for: a tool or output model made per session or
    request and dropped stayed alive, ~17 KB an arguments model, ~70 MB at the bound."""
    core = vars(cls).get("__pydantic_core_schema__")
    held = vars(cls).get(attribute)
    if isinstance(held, tuple) and held[0] is core:
        text: str = held[1]
        return text
    text = make()
    type.__setattr__(cls, attribute, (core, text))   # pydantic's class, not a field
    return text


def _schema_text(arguments: type[BaseModel]) -> str:
    """The schema of an arguments model, as JSON text. Generated once per model (kept on it:
    :func:`kept_with`): pydantic builds it afresh on every call (about half a millisecond a
    tool), and every turn offers every tool. Kept as text, so each reader gets its own copy to
    change."""
    return kept_with(arguments, "__hermes_schema__", lambda: _generated(arguments))


def _generated(arguments: type[BaseModel]) -> str:
    """:func:`_schema_text`, generated."""
    schema = arguments.model_json_schema(schema_generator=WireSchema)
    schema.pop("title", None)
    for prop in schema.setdefault("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)   # "City" for city: tokens that say nothing
    return json.dumps(finite_schema(schema), ensure_ascii=False)


#: The schema keywords whose keys are names (of properties, of definitions), not keywords.
_NAMED = frozenset({"properties", "patternProperties", "$defs", "definitions"})


def finite_schema(schema: Any) -> Any:
    """``schema`` with no NaN or infinity where it only informs: a default that holds one
    (``radius_km: float = math.inf``) is left out and said in the property's description
    ("(default: Infinity)"; the parameter stays optional and still gets it), such an example
    is dropped. Sent, either was a request the SDKs refuse to build (``allow_nan=False``), on
    every turn. One anywhere else (an ``enum``, a ``const``) is left for
    :func:`non_finite_places` to refuse: the model could never send it as JSON."""
    if isinstance(schema, list):
        return [finite_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    told = ""
    for key, value in schema.items():
        if key == "default" and next(non_finite(value), None) is not None:
            told = f"(default: {json.dumps(value)})"   # Python writes NaN, Infinity
        elif key == "examples" and isinstance(value, list):
            out[key] = [v for v in value if next(non_finite(v), None) is None]
            if not out[key]:
                del out[key]
        elif key in _NAMED and isinstance(value, dict):   # names, not keywords: a parameter
            out[key] = {name: finite_schema(sub) for name, sub in value.items()}   # "default"
        else:
            out[key] = finite_schema(value)
    if told:
        out["description"] = f"{out['description']} {told}" if out.get("description") else told
    return out


def non_finite_places(schema: Any) -> list[str]:
    """Where ``schema`` still holds a NaN or an infinity (``properties.limit.enum[1]``)."""
    return [at.removeprefix("$.") for at, _ in non_finite(schema)]


def _defined_in_class(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` is a plain function written in a class body (``Counter.add``, not
    ``helper`` or ``test.<locals>.helper``): the functions Python binds to an instance."""
    if not inspect.isfunction(fn):
        return False
    parts = fn.__qualname__.split(".")
    return len(parts) >= 2 and parts[-2] != "<locals>"


def unsendable_properties(schema: Mapping[str, Any]) -> list[str]:
    """The top-level property names of ``schema`` the APIs refuse (see ``_PROPERTY``)."""
    return [k for k in schema.get("properties", {}) if not _PROPERTY.match(k)]


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "array" if isinstance(value, list) else "string"


def _described_by(fn: Callable[..., Any]
                  ) -> tuple[Callable[..., Any], str | None, str, frozenset[str]]:
    """What describes ``fn``: the function whose hints to read, the docstring, the default tool
    name, and the keywords a partial already fixed (not the model's to set).

    A ``functools.partial`` is described by the function it wraps (its own docstring is the
    partial class's), an object with ``__call__`` by its class and that method: neither is a
    function ``typing.get_type_hints`` reads, and neither has a ``__name__``."""
    fixed: set[str] = set()
    inner: Any = fn
    while isinstance(inner, functools.partial):
        fixed.update(inner.keywords)
        inner = inner.func
    if (not isinstance(inner, type) and not inspect.isroutine(inner)
            and callable(type(inner).__call__)):
        call = type(inner).__call__
        # the class's words, else the method's own (not the "Call self as a function." every
        # ``__call__`` inherits)
        doc = inspect.cleandoc(type(inner).__doc__ or call.__doc__ or "") or None
        return call, doc, type(inner).__name__, frozenset(fixed)
    return inner, inspect.getdoc(inner), str(getattr(inner, "__name__", "")), frozenset(fixed)


def _constructor_parameters(fn: Callable[..., Any]) -> tuple[str, ...]:
    """For an object with ``__call__``, its class's constructor parameters: a class docstring
    describes them (Google style) beside the call's own, and they are not strays."""
    inner: Any = fn
    while isinstance(inner, functools.partial):
        inner = inner.func
    if isinstance(inner, type) or inspect.isroutine(inner):
        return ()
    try:
        return tuple(inspect.signature(type(inner)).parameters)
    except (TypeError, ValueError):   # a class whose signature cannot be read
        return ()


def _admits_none(hint: Any) -> Any:
    """``hint`` widened to take None: a parameter whose default is None (``limit: int = None``)
    is called with None by its own author, and a model sends ``null`` for an argument it leaves
    unset. Constraints in ``Annotated`` stay on the widened type."""
    if typing.get_origin(hint) is typing.Annotated:
        base, *meta = typing.get_args(hint)
        return typing.Annotated[(_admits_none(base), *meta)]
    if hint is Any or hint is object or hint is None or hint is type(None):
        return hint
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and \
            type(None) in typing.get_args(hint):
        return hint
    return typing.Optional[hint]  # noqa: UP045  (any hint, whether or not its type has `|`)


def _has_description(hint: Any) -> bool:
    """An ``Annotated[..., Field(description=...)]`` hint: the author's own words win over the
    docstring's."""
    return typing.get_origin(hint) is typing.Annotated and any(
        isinstance(m, FieldInfo) and m.description for m in typing.get_args(hint)[1:])


def _annotated_words(hint: Any) -> str | None:
    """The first non-blank string in an ``Annotated`` hint (``Annotated[str, "the city"]``),
    how LangChain, AutoGen and Semantic Kernel tools describe a parameter, also where the hint
    is that or None (``Annotated[str, "the city"] | None``). Pydantic passes a string there
    over, so without this the words never reached the model."""
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        some = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = some[0] if len(some) == 1 else None
    if typing.get_origin(hint) is not typing.Annotated:
        return None
    return next((m.strip() for m in typing.get_args(hint)[1:]
                 if isinstance(m, str) and m.strip()), None)


def _field(hint: Any, default: Any, alias: str | None, described: str | None) -> tuple[Any, Any]:
    """One parameter as a pydantic field definition. A default that is itself a pydantic
    ``Field(...)`` (FastAPI's idiom) is the field, the docstring and alias added to it. Words
    written beside the type (:func:`_annotated_words`) stand before the docstring's, a
    ``Field`` description before both."""
    if (isinstance(default, FieldInfo) and default.description) or _has_description(hint):
        described = None
    else:
        described = _annotated_words(hint) or described
    # only what is set: an explicit ``description=None`` would erase the Annotated one
    extra: dict[str, Any] = {k: v for k, v in (("alias", alias), ("description", described)) if v}
    if isinstance(default, FieldInfo):
        return (typing.Annotated[hint, default], Field(**extra)) if extra else (hint, default)
    if default is None:
        hint = _admits_none(hint)
    return hint, Field(default, **extra)


def make_tool(fn: Callable[..., Any], *, name: str | None = None, description: str | None = None,
              needs_approval: bool | None = None, timeout_s: float | Keep | None = KEEP,
              localns: Mapping[str, Any] | None = None) -> Tool:
    """``fn`` as a :class:`Tool`; raises :class:`ToolDefinitionError` naming what is wrong, and
    warns (:class:`~hermes_core.agent.tools.docstrings.ToolDocstringWarning`) of a docstring
    entry that names no parameter.

    ``fn`` may be a Tool already: the options given apply to a copy of it
    (``registry.add(notes.search, name="search_work")`` for a second instance's tool), the ones
    not given stay as they were. Not given is None for ``name``, ``description`` and
    ``needs_approval``, and :data:`KEEP` (the default) for ``timeout_s``, whose None means no
    timeout: ``make_tool(fetch, timeout_s=None)`` is ``fetch`` running as long as it takes.

    ``localns``: names the type hints may use beyond ``fn``'s module and closure (a class defined
    inside a function, under ``from __future__ import annotations``); a Tool's hints are read
    already, so it is not used for one."""
    if isinstance(fn, Tool):
        if name is None and description is None and needs_approval is None and timeout_s is KEEP:
            return fn
        timeout = fn.timeout_s if timeout_s is KEEP else timeout_s
        _check_options(name or fn.name, timeout)
        return replace(fn, name=name or fn.name,
                       description=(description or fn.description).strip()[:MAX_DESCRIPTION],
                       needs_approval=fn.needs_approval if needs_approval is None else needs_approval,
                       timeout_s=timeout)
    return _build(fn, name, description, bool(needs_approval),
                  None if timeout_s is KEEP else timeout_s, check_docs=True, localns=localns)


def _check_options(tool_name: str, timeout_s: float | None) -> None:
    if not _NAME.match(tool_name):
        raise ToolDefinitionError(f"tool name {tool_name!r} must be 1-64 letters, digits, '_' or '-'")
    if timeout_s is not None and not timeout_s > 0:
        raise ToolDefinitionError(f"tool {tool_name!r}: timeout_s must be > 0")


def _build(fn: Callable[..., Any], name: str | None, description: str | None,
           needs_approval: bool, timeout_s: float | None, *, check_docs: bool,
           localns: Mapping[str, Any] | None = None) -> Tool:
    if not callable(fn):
        raise ToolDefinitionError(f"a tool must be a function, not {type(fn).__name__}")
    hinted, doc, own_name, fixed = _described_by(fn)
    tool_name: str = name or own_name
    _check_options(tool_name, timeout_s)
    words = docstrings.read(doc)
    names = local_names(hinted, localns)   # the closure and localns=, for a TypedDict's keys too
    try:
        # with the extras: ``Annotated[int, Field(ge=1)]`` keeps its bound and description
        hints = read_hints(hinted, names)
    except ValueError as e:   # a forward reference that does not resolve
        raise ToolDefinitionError(f"tool {tool_name!r}: {e}") from None
    hints = _portable(tool_name, hints, names)   # typing.TypedDict, 3.11
    fields: dict[str, Any] = {}
    renamed: list[tuple[str, str]] = []
    signature = inspect.signature(fn).parameters
    params = {n: p for n, p in signature.items() if n not in fixed}
    keys = _unpacked_keys(tool_name, params.values(), hints, fixed)
    if check_docs:   # an unpacked TypedDict's keys are parameters a docstring may describe
        docstrings.warn_strays(tool_name, words,
                               [*signature, *fixed, *(k.name for k in keys or ())],
                               hinted, also_documented=_constructor_parameters(fn))
    if _hides_its_function(params.values()):
        raise ToolDefinitionError(
            f"tool {tool_name!r}: its only parameters are *args and **kwargs, without types, so "
            "a model would see none of the parameters it passes on; a decorator that hides the "
            "function it wraps? Decorate the wrapper with functools.wraps, or give them types")
    extra: Any = None
    stars: list[tuple[str, str]] = []
    entries: list[tuple[str, Any, Any, str | None]] = []   # name, type, default, description
    for p in params.values():
        hint = hints.get(p.name, Any)
        default = ... if p.default is p.empty else p.default
        # the words beside the type first (a star parameter's hint is its items' type)
        described = _annotated_words(hint) or words.params.get(p.name) or None
        try:
            if p.kind is p.VAR_KEYWORD and keys is not None:
                # each key a keyword: required, or absent unless sent (MISSING, never None)
                entries += [(k.name, k.hint if k.required else typing.Union[k.hint, MISSING],  # noqa: UP007
                             ... if k.required else MISSING,
                             _annotated_words(k.hint) or words.params.get(k.name) or None)
                            for k in keys]
                continue
            if p.kind is p.VAR_KEYWORD:
                extra = call_shape.extra_type(p.name, hint, described)
                stars = [("__pydantic_extra__", f"**{p.name}")]   # named so in errors
                continue
            if p.kind is p.VAR_POSITIONAL:
                hint, default = call_shape.spread_field(p.name, hint)
        except ValueError as e:   # a star parameter with no faithful schema
            raise ToolDefinitionError(f"tool {tool_name!r}: {e}") from None
        entries.append((p.name, hint, default, described))
    taken = {*params, *(k.name for k in keys or ())}
    for i, (own, hint, default, described) in enumerate(entries):
        if _clashes(own):
            # ``schema``, ``json``, ``validate`` would shadow BaseModel's own attributes (a warning,
            # an error under -W error) and ``model_config`` or ``_x`` cannot be fields at all: such
            # a parameter is a field under another name, its own name the alias the model sees
            inner = next(n for n in (f"arg{i}", f"arg{i}_{len(taken)}") if n not in taken)
            fields[inner] = _field(hint, default, own, described)
            renamed.append((inner, own))
        else:
            fields[own] = _field(hint, default, None, described)
    base: type[BaseModel] = _Arguments
    if extra is not None:   # typed further names: ``additionalProperties`` in the schema
        base, fields["__pydantic_extra__"] = _OpenArguments, (extra, None)
    try:
        model = create_model(f"{tool_name}_arguments", __base__=base, **fields)
        schema = json.loads(_schema_text(model))   # an unsupported hint fails here
    except Exception as e:
        raise _unschemable(tool_name, fields, [*renamed, *stars], e, base) from None
    _one_name_each(tool_name, model, renamed)
    unsendable = non_finite_places(schema)
    if unsendable:
        raise ToolDefinitionError(
            f"tool {tool_name!r}: its schema holds NaN or infinity at {unsendable[0]}, which JSON "
            "cannot carry and no model can send; take a str choice or a finite number")
    bad = unsendable_properties(schema)
    if bad:
        raise ToolDefinitionError(
            f"tool {tool_name!r}: parameter {bad[0]!r} cannot be sent: the APIs take parameter "
            "names of ASCII letters, digits, '_', '.' or '-', at most 64 (Anthropic refuses the "
            "whole request otherwise); rename it or give it such an alias")
    text = (description or words.summary or tool_name).strip()
    is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(hinted)
    return Tool(tool_name, text[:MAX_DESCRIPTION], fn, model, is_async, needs_approval, timeout_s,
                tuple(renamed), call_shape.shape_of(list(params.values())), localns=localns)


def _portable(tool_name: str, hints: Mapping[str, Any],
              names: Mapping[str, Any]) -> dict[str, Any]:
    """Each parameter's hint through :func:`typed_dicts.portable` (the return hint is no part of
    the schema); a TypedDict whose keys name what nothing defines is an error naming the tool
    and the parameter, redacted as :mod:`~hermes_core.agent.tools.hints` redacts its own."""
    out: dict[str, Any] = {}
    for param, hint in hints.items():
        if param == "return":
            continue
        try:
            out[param] = typed_dicts.portable(hint, names)
        except NameError as e:
            raise ToolDefinitionError(redact(
                f"tool {tool_name!r}: parameter {param!r}: a TypedDict in its type hint names "
                f"what neither its module nor the tool's closure or localns= defines ({e})"
            )) from None
    return out


def _unpacked_keys(tool_name: str, params: Iterable[inspect.Parameter], hints: Mapping[str, Any],
                   fixed: Collection[str]) -> tuple[call_shape.Key, ...] | None:
    """The keys of ``**kw: Unpack[TypedDict]`` the model may send (those a partial fixed are
    not its to set), or None without one. A key that is also a parameter is refused: Python
    would take it once, so no call could pass both."""
    keyed = next((p for p in params if p.kind is p.VAR_KEYWORD), None)
    if keyed is None:
        return None
    hint = hints.get(keyed.name, Any)
    try:
        keys = call_shape.unpacked_keys(keyed.name, hint)
    except ValueError as e:
        raise ToolDefinitionError(f"tool {tool_name!r}: {e}") from None
    if keys is None:
        return None
    named = {p.name for p in params if p is not keyed}
    for key in keys:
        if key.name in named:
            own = getattr(typing.get_args(hint)[0], "__name__", "")
            raise ToolDefinitionError(
                f"tool {tool_name!r}: **{keyed.name}: Unpack[{own}] has the key {key.name!r}, "
                f"which is also the parameter {key.name!r}; a call cannot pass both (rename "
                "one)")
    return tuple(k for k in keys if k.name not in fixed)


def _sent_as(arguments: type[BaseModel], renamed: Iterable[tuple[str, str]]
             ) -> list[tuple[str, str]]:
    """(parameter, the name the model sends it by) for each field of ``arguments``."""
    own = dict(renamed)
    out = []
    for name, info in arguments.model_fields.items():
        alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
        out.append((own.get(name, name), alias or name))
    return out


def _one_name_each(tool_name: str, arguments: type[BaseModel],
                   renamed: Iterable[tuple[str, str]]) -> None:
    """Refuse two parameters the model would send under one name (an alias equal to another
    parameter's name, or an unpacked key's): the schema listed one property for both, required
    twice, and no value could be valid for both."""
    seen: dict[str, str] = {}
    for param, sent in _sent_as(arguments, renamed):
        if sent in seen:
            raise ToolDefinitionError(
                f"tool {tool_name!r}: parameters {seen[sent]!r} and {param!r} are both sent as "
                f"{sent!r}, so a model could never give each its own value; give one another "
                "alias")
        seen[sent] = param


def _hides_its_function(params: Iterable[inspect.Parameter]) -> bool:
    """``(*args, **kwargs)`` with no annotation: what a decorator without ``functools.wraps``
    leaves. Described as written it would be a tool of an array and any names that never
    shows the model the wrapped function's parameters; typed star parameters are meant."""
    kinds = [(p.kind, p.annotation is p.empty) for p in params]
    star = inspect.Parameter
    return kinds == [(star.VAR_POSITIONAL, True), (star.VAR_KEYWORD, True)]


def _unschemable(tool_name: str, fields: Mapping[str, Any],
                 renamed: Sequence[tuple[str, str]], error: Exception,
                 base: type[BaseModel] = _Arguments) -> ToolDefinitionError:
    """The error for parameters pydantic cannot describe, naming the parameter at fault (each
    tried alone) and its type, on one line: pydantic's own text is a page that advises
    ``arbitrary_types_allowed``, which would describe nothing a model can send."""
    own = dict(renamed)
    for name, definition in fields.items():
        try:
            create_model("probe", __base__=base, **{name: definition}).model_json_schema()
        except Exception as e:
            hint = definition[0]
            if typing.get_origin(hint) is typing.Union and MISSING in typing.get_args(hint):
                hint = typing.get_args(hint)[0]   # an optional key: the type its TypedDict wrote
            kind = getattr(typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated
                           else hint, "__name__", None) or str(hint)
            first = (str(e).splitlines() or [type(e).__name__])[0].split(". ")[0]
            return ToolDefinitionError(
                f"tool {tool_name!r}: parameter {own.get(name, name)!r} ({kind}) cannot be "
                f"described as JSON ({first}); take a value the model can write (str, int, a "
                "pydantic model) and build the object in the tool, or fix it with "
                "functools.partial")
    first = (str(error).splitlines() or [type(error).__name__])[0]
    return ToolDefinitionError(f"tool {tool_name!r}: its parameters cannot be turned into a "
                               f"JSON schema ({first})")


def _clashes(name: str) -> bool:
    """A parameter name pydantic cannot take as a field name as it stands."""
    return name.startswith("_") or name == "model_config" or hasattr(BaseModel, name)


def tool(fn: Callable[..., Any] | None = None, *, name: str | None = None,
         description: str | None = None, needs_approval: bool | None = None,
         timeout_s: float | Keep | None = KEEP, localns: Mapping[str, Any] | None = None) -> Any:
    """Make a function a tool: ``@tool`` or ``@tool(needs_approval=True, timeout_s=5)``.

    The result is a :class:`Tool` (still callable as the function); pass it to
    ``Agent(tools=[...])``. A plain function passed there is made a tool the same way. Over a
    Tool already made (``@tool(name=...)`` stacked on ``@tool(needs_approval=True)``) only the
    options given here change it, as with :func:`make_tool`: an unset ``needs_approval`` is
    not False there (an approval asked for was dropped), ``timeout_s=None`` clears a timeout.
    ``localns`` as for :func:`make_tool`.
    """
    def wrap(f: Any) -> Any:
        # over @staticmethod / @classmethod: the function they wrap, bound as they would bind it
        # (the other order relies on classmethod wrapping descriptors, which Python 3.13 dropped)
        inner = f.__func__ if isinstance(f, (staticmethod, classmethod)) else f
        made = make_tool(inner, name=name, description=description,
                         needs_approval=needs_approval, timeout_s=timeout_s, localns=localns)
        if isinstance(f, staticmethod):
            return staticmethod(made)
        return replace(made, binds_class=True) if isinstance(f, classmethod) else made

    return wrap(fn) if fn is not None else wrap


def validation_message(e: ValidationError, whole: str = "(arguments)",
                       parameters: Sequence[str] = ()) -> str:
    """A pydantic error as short lines the model can act on (the field, what is wrong and, for
    a single value, what it sent: "days: Input should be a valid integer (sent null)");
    ``whole`` names what an error without a field is about (the arguments, or a reply).
    ``parameters``: the names a call may send, listed for one it may not (pydantic's own
    "Extra inputs are not permitted" left the model to guess what it meant)."""
    lines = []
    for err in e.errors()[:10]:
        loc = err.get("loc", ())
        where = ".".join(str(x) for x in loc) or whole
        if err.get("type") == "extra_forbidden" and len(loc) == 1 and parameters:
            near = difflib.get_close_matches(str(loc[0]), parameters, n=1)
            lines.append(f"{where}: no such parameter{f'; did you mean {near[0]!r}?' if near else ''}"
                         f" (the parameters are: {', '.join(parameters)})")
            continue
        lines.append(f"{where}: {err.get('msg', 'invalid')}{_sent(err)}")
    return "; ".join(lines)


def _sent(err: Mapping[str, Any]) -> str:
    """" (sent <value>)" for an error about one value the model wrote (not a missing field, a
    name it may not send, or a whole object or list: those are not worth repeating to it)."""
    given = err.get("input")
    if err.get("type") in ("missing", "extra_forbidden") or not (
            given is None or isinstance(given, bool | int | float | str)):
        return ""
    text = json.dumps(given, ensure_ascii=False)
    return f" (sent {text if len(text) <= 40 else text[:37] + '...'})"


def describe(tools: Mapping[str, Tool]) -> list[str]:
    """One line per tool, for display (``/tools`` style listings and errors)."""
    return [f"{t.name}({', '.join(t.parameters.get('properties', {}))})" for t in tools.values()]
