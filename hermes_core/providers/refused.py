"""Optional request fields a model refuses, learned from its 400s and left out from then on.

Which chat.completions fields a model takes changes with every release and differs between
endpoints serving the same model: reasoning models refuse ``temperature`` other than the default,
yet gpt-5.1 takes it at ``reasoning_effort: none`` and gpt-5-chat always; Azure and gateways want
``max_completion_tokens`` where a local server wants ``max_tokens``; gpt-5.1 refuses the
``minimal`` effort gpt-5 introduced. A table of model names is wrong by the next release, so the
API's own answer decides, as it names the field: ``{"param": "temperature", "code":
"unsupported_value"}``. The field is then sent otherwise (``max_tokens`` as
``max_completion_tokens`` and back) or not at all, the call is sent once more, and the model keeps
the lesson, logged once so the user knows their setting is not applied, and kept in the home
(:mod:`.lessons`) for a week so the next process does not pay the 400 again.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_core.forked import child_lock

if TYPE_CHECKING:
    from hermes_core.providers.lessons import RefusalMemory

log = logging.getLogger(__name__)

#: The optional fields an endpoint may refuse, and what is sent instead (None: left out). Anything
#: else named by a 400 (a message's role, a tool's schema) is the request's content: not ours to drop.
ALTERNATIVES: Mapping[str, str | None] = {
    "max_tokens": "max_completion_tokens", "max_completion_tokens": "max_tokens",
    "temperature": None, "top_p": None, "stop": None, "seed": None, "reasoning_effort": None,
    "prompt_cache_key": None, "parallel_tool_calls": None,
}
_QUOTED = re.compile(r"'([a-z_.]+)'")


def status_and_body(exc: BaseException) -> tuple[int, Any]:
    """An SDK error's HTTP status (0 when it has none) and its parsed body: what the refusal
    checks below read."""
    return int(getattr(exc, "status_code", 0) or 0), getattr(exc, "body", None)


def bad_request(exc: BaseException) -> Mapping[str, Any] | None:
    """The error object of an SDK error that is a 400; None for any other status or a body with
    none."""
    status, body = status_and_body(exc)
    return error_object(body) if status == 400 else None


def error_object(body: Any) -> Mapping[str, Any] | None:
    """``body["error"]`` when the body wraps its error (OpenAI, Anthropic), else the body itself;
    None when neither is an object."""
    err = body.get("error", body) if isinstance(body, Mapping) else None
    return err if isinstance(err, Mapping) else None


def refused_field(status: int, body: Any, payload: Mapping[str, Any]) -> str | None:
    """The optional field of ``payload`` a 400 ``body`` says the model does not support; None for
    any other error. ``param`` names it (``reasoning.effort`` is the Responses API's spelling of
    ``reasoning_effort``); without one, the first quoted field name of an "unsupported" message."""
    err = error_object(body) if status == 400 else None
    if err is None:
        return None
    message = str(err.get("message") or "")
    code = str(err.get("code") or "")
    if not (code.startswith("unsupported") or "unsupported" in message.lower()
            or "not supported" in message.lower()):
        return None
    names = [str(err.get("param") or "")] if err.get("param") else _QUOTED.findall(message)
    for name in names:
        field = name.replace(".", "_")
        if field in ALTERNATIVES and field in payload:
            return field
    return None


def refuses_streaming(status: int, body: Any) -> bool:
    """Whether a 400 ``body`` refuses ``stream`` itself: an organisation not verified to stream a
    model is told so with ``param: "stream"`` on every streamed call, while the same call made
    whole is answered. Any other field, and a 400 naming none, is not this."""
    err = error_object(body) if status == 400 else None
    return err is not None and str(err.get("param") or "") == "stream"


#: How a lesson is named in the home's file (:mod:`.lessons`).
STREAM = "stream"
FIELD = "field:"


class RefusedFields:
    """What each model refused, and a payload rewritten around it; with a ``memory`` (the
    home's file), what an earlier process learned for ``provider`` too, and each new lesson
    kept there."""

    def __init__(self, memory: RefusalMemory | None = None, provider: str = "") -> None:
        self._by_model: dict[str, frozenset[str]] = {}
        self._unstreamed: set[str] = set()
        self._lock = child_lock(threading.Lock())   # free again in a forked child; what was
        # learned is kept, true of the child's calls too
        self._memory, self._provider = memory, provider
        for model, what in memory.lessons(provider) if memory is not None else ():
            if what == STREAM:
                self._unstreamed.add(model)
            elif what.startswith(FIELD) and what[len(FIELD):] in ALTERNATIVES:
                self._by_model[model] = self._by_model.get(model, frozenset()) | {what[len(FIELD):]}

    def _keep(self, model: str, what: str) -> None:
        if self._memory is not None:
            self._memory.remember(self._provider, model, what)

    def learn_unstreamed(self, model: str, provider: str) -> None:
        """Remember that ``model`` may not be streamed here: it is asked whole from now on."""
        with self._lock:
            if model in self._unstreamed:
                return
            self._unstreamed.add(model)
        self._keep(model, STREAM)
        log.warning("%s: model %s may not be streamed with this key's organisation; its replies "
                    "are asked for whole from now on", provider, model)

    def unstreamed(self, model: str) -> bool:
        """Whether ``model`` refused to be streamed (see :func:`refuses_streaming`)."""
        return model in self._unstreamed

    def learn(self, model: str, field: str, provider: str) -> bool:
        """Remember that ``model`` refuses ``field``; False when it was already known (the
        rewritten request was refused again: sending it a third time would not help)."""
        with self._lock:
            known = self._by_model.get(model, frozenset())
            if field in known:
                return False
            self._by_model[model] = known | {field}
        self._keep(model, FIELD + field)
        instead = ALTERNATIVES[field]
        log.warning("%s: model %s does not support '%s'; it is %s from now on", provider, model,
                    field, f"sent as '{instead}'" if instead and instead not in known else "left out")
        return True

    def apply(self, model: str, payload: dict[str, Any]) -> dict[str, Any]:
        """``payload`` (changed in place) without the fields ``model`` refused."""
        refused = self._by_model.get(model)
        if not refused:
            return payload
        for field in refused:
            if field not in payload:
                continue
            value = payload.pop(field)
            instead = ALTERNATIVES[field]
            if instead is not None and instead not in refused:
                payload.setdefault(instead, value)
        return payload
