"""What both official SDKs share: error translation, client construction and the complete calls.

The openai and anthropic SDKs raise the same shapes (``APIStatusError`` with ``status_code``,
``response`` and ``body``; ``APITimeoutError``; ``APIConnectionError``). This module turns them into
the hermes_core error tree through :func:`hermes_core.errors.error_from_status`, redacting the key.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from ..errors import ConnectionFailed, ProviderError, Timeout, error_from_status
from ..redact import redact
from ..types import Completion, Credential, Prompt
from .base import CallOptions, ClientCache


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


class SDKProvider:
    """The part of an adapter that is the same for both SDKs: clients, errors, complete calls.

    A subclass names its SDK module and client classes, says where ``create`` lives on a client
    (``_api``), how to render a payload and how to read a response (``_completion``); streaming
    differs per wire format and stays in the subclass.
    """

    kind = ""
    sdk: ModuleType
    client_names: tuple[str, str]          # (sync, async) client class names in ``sdk``
    sdk_error: type[Exception]             # the SDK's root exception

    def __init__(self, name: str, endpoint: str | None = None, timeout_s: float = 60.0) -> None:
        self.name = name
        self.endpoint = endpoint
        self.timeout_s = timeout_s
        self._clients = ClientCache(self._make_client)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, endpoint={self.endpoint!r})"

    def _make_client(self, cred: Credential | None, is_async: bool) -> Any:
        cls = getattr(self.sdk, self.client_names[1] if is_async else self.client_names[0])
        base_url = (cred.endpoint if cred and cred.endpoint else None) or self.endpoint
        # Compatible local servers often need no key; the SDKs insist on a non-empty one.
        return cls(api_key=cred.secret if cred else "not-needed", base_url=base_url,
                   max_retries=0, timeout=self.timeout_s)

    def _error(self, exc: BaseException, cred: Credential | None) -> ProviderError:
        return translate(exc, provider=self.name, credential=cred,
                         timeout_cls=self.sdk.APITimeoutError,
                         connection_cls=self.sdk.APIConnectionError,
                         status_cls=self.sdk.APIStatusError)

    def render(self, prompt: Prompt, model: str, options: CallOptions) -> dict[str, Any]:
        raise NotImplementedError

    def _api(self, client: Any) -> Any:
        raise NotImplementedError

    def _completion(self, resp: Any, model: str) -> Completion:
        raise NotImplementedError

    def complete(self, prompt: Prompt, model: str, credential: Credential | None,
                 options: CallOptions) -> Completion:
        api = self._api(self._clients.get(credential))
        try:
            resp = api.create(**self.render(prompt, model, options), timeout=options.timeout_s)
        except self.sdk_error as e:
            raise self._error(e, credential) from None
        return self._completion(resp, model)

    async def acomplete(self, prompt: Prompt, model: str, credential: Credential | None,
                        options: CallOptions) -> Completion:
        api = self._api(self._clients.get(credential, is_async=True))
        try:
            resp = await api.create(**self.render(prompt, model, options),
                                    timeout=options.timeout_s)
        except self.sdk_error as e:
            raise self._error(e, credential) from None
        return self._completion(resp, model)
