"""What both official SDKs share: error translation and client construction rules.

The openai and anthropic SDKs raise the same shapes (``APIStatusError`` with ``status_code``,
``response`` and ``body``; ``APITimeoutError``; ``APIConnectionError``). This module turns them into
the hermes_core error tree through :func:`hermes_core.errors.error_from_status`, redacting the key.
"""

from __future__ import annotations

from typing import Any

from ..errors import ConnectionFailed, ProviderError, Timeout, error_from_status
from ..redact import redact
from ..types import Credential


def translate(exc: BaseException, *, provider: str, credential: Credential | None,
              timeout_cls: type[BaseException], connection_cls: type[BaseException],
              status_cls: type[BaseException]) -> ProviderError:
    """Map an SDK exception onto the error tree (the caller raises it ``from None``)."""
    secrets = [credential.secret] if credential else []
    if isinstance(exc, status_cls):
        response: Any = getattr(exc, "response", None)
        headers = dict(response.headers) if response is not None else {}
        body = getattr(exc, "body", None)
        status = int(getattr(exc, "status_code", 0) or 0)
        return error_from_status(status, headers, body, provider=provider,
                                 redact=lambda s: redact(s, secrets))
    if isinstance(exc, timeout_cls):
        return Timeout(f"{provider}: request timed out", provider=provider)
    if isinstance(exc, connection_cls):
        cause = exc.__cause__ or exc.__context__
        detail = redact(str(cause or exc), secrets)
        return ConnectionFailed(f"{provider}: cannot connect ({detail})", provider=provider)
    return ProviderError(f"{provider}: {type(exc).__name__}: {redact(str(exc), secrets)}",
                         provider=provider)


def usage_int(obj: Any, name: str) -> int:
    value = getattr(obj, name, None) if obj is not None else None
    return int(value or 0)
