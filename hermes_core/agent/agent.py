"""The Agent facade: config -> prompt -> model -> reply, with history, sync and async.

Each part is replaceable (a provider for tests, a prompt builder, a router, a call loop). With no
API key anywhere the agent runs on the offline provider, so it works before any key exists.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..config import ProviderSettings, Settings, load_settings
from ..providers import build_provider
from ..providers.base import CallOptions, Provider
from ..providers.offline import OfflineProvider
from ..types import Completion, Credential, Message, Prompt, RouteDecision, Usage

log = logging.getLogger("hermes_core.agent")

DEFAULT_IDENTITY = ("You are Hermes, a helpful, precise assistant. Answer in the user's language; "
                    "say so when you are unsure.")


@dataclass(frozen=True, slots=True)
class Reply:
    """What one turn produced, with everything needed to explain it."""

    text: str
    model: str
    provider: str
    usage: Usage = field(default_factory=Usage)
    prompt: Prompt | None = None
    route: RouteDecision | None = None
    retrieval: Any = None
    attempts: tuple[Any, ...] = ()
    cancelled: bool = False

    def __str__(self) -> str:
        return self.text


@dataclass
class ReplyStream:
    """Text pieces as they arrive; ``reply`` is set once the stream is exhausted."""

    _pieces: Iterator[str]
    reply: Reply | None = None

    def __iter__(self) -> Iterator[str]:
        return self._pieces


@dataclass
class SessionStats:
    turns: int = 0
    usage: Usage = field(default_factory=Usage)

    @property
    def cache_hit_ratio(self) -> float:
        return self.usage.cache_hit_ratio


def _is_loopback(url: str | None) -> bool:
    return bool(url) and any(h in (url or "") for h in ("://localhost", "://127.0.0.1", "://[::1]"))


def choose_provider(settings: Settings) -> tuple[ProviderSettings | None, list[Credential]]:
    """The first provider by priority that can be called: it has a key, or is a local endpoint."""
    for p in sorted(settings.llm.routing.providers, key=lambda p: p.priority):
        creds = settings.credentials_for(p.name)
        if creds or p.kind == "offline" or _is_loopback(p.endpoint):
            return p, creds
    if not settings.llm.routing.providers:
        for name in ("openai", "anthropic"):
            creds = settings.credentials_for(name)
            if creds:
                return ProviderSettings(name=name), creds
    return None, []


def read_soul(home: Path) -> str:
    """SOUL.md or the default identity (the PromptBuilder supersedes this when present)."""
    path = home / "SOUL.md"
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return DEFAULT_IDENTITY
    return text or DEFAULT_IDENTITY


class Agent:
    """One conversation with a model. Not shared between threads; create one per session."""

    def __init__(self, settings: Settings | None = None, *, provider: Provider | None = None,
                 model: str | None = None, credentials: Sequence[Credential] | None = None,
                 session_id: str | None = None,
                 pre_llm_call: Callable[[str, Prompt], Prompt | str | None] | None = None,
                 post_llm_call: Callable[[Reply], None] | None = None) -> None:
        self.settings = settings or load_settings()
        self.home = self.settings.home_path
        self.session_id = session_id or uuid.uuid4().hex[:12]
        self.history: list[Message] = []
        self.stats = SessionStats()
        self.pre_llm_call = pre_llm_call
        self.post_llm_call = post_llm_call
        self.offline_reason: str | None = None
        self.requested_model = model
        if provider is not None:
            self.provider: Provider = provider
            self._credentials = list(credentials or ())
        else:
            chosen, creds = choose_provider(self.settings)
            if chosen is None:
                self.provider = OfflineProvider()
                self._credentials = []
                self.offline_reason = ("no API key configured: set OPENAI_API_KEY or "
                                       "ANTHROPIC_API_KEY, or add keys under 'credentials' in "
                                       "config.yaml")
            else:
                self.provider = build_provider(chosen)
                self._credentials = creds
        self._turn = 0

    @classmethod
    def from_config(cls, config: str | os.PathLike[str] | Mapping[str, Any] | None = None, *,
                    home: str | os.PathLike[str] | None = None, offline: bool = False,
                    **kwargs: Any) -> Agent:
        settings = load_settings(config, home=home)
        if offline:
            kwargs.setdefault("provider", OfflineProvider())
        agent = cls(settings, **kwargs)
        if offline:
            agent.offline_reason = "offline mode (--offline)"
        return agent

    # ------------------------------------------------------------------ the turn

    @property
    def model(self) -> str:
        return self.requested_model or self.settings.llm.routing.default_model

    @property
    def offline(self) -> bool:
        return isinstance(self.provider, OfflineProvider)

    def _options(self) -> CallOptions:
        llm = self.settings.llm
        return CallOptions(max_tokens=llm.max_tokens, temperature=llm.temperature,
                           timeout_s=llm.request_timeout_s)

    def build_prompt(self, message: str) -> Prompt:
        prompt = Prompt(system=read_soul(self.home),
                        messages=(*self.history, Message("user", message)))
        if self.pre_llm_call is not None:
            extra = self.pre_llm_call(message, prompt)
            if isinstance(extra, Prompt):
                prompt = extra
            elif extra:
                prompt = replace(prompt, context="\n\n".join(p for p in (prompt.context, extra) if p))
        return prompt

    def _credential(self) -> Credential | None:
        if not self._credentials:
            return None
        return self._credentials[self._turn % len(self._credentials)]

    def _finish(self, message: str, prompt: Prompt, done: Completion) -> Reply:
        self.history.append(Message("user", message))
        self.history.append(Message("assistant", done.text))
        self.stats.turns += 1
        self.stats.usage = self.stats.usage + done.usage
        self._turn += 1
        reply = Reply(done.text, done.model, done.provider, done.usage, prompt)
        if self.post_llm_call is not None:
            self.post_llm_call(reply)
        return reply

    def chat(self, message: str) -> Reply:
        """Send one user message and return the reply; history grows by two messages."""
        prompt = self.build_prompt(message)
        done = self.provider.complete(prompt, self.model, self._credential(), self._options())
        return self._finish(message, prompt, done)

    async def achat(self, message: str) -> Reply:
        prompt = self.build_prompt(message)
        done = await self.provider.acomplete(prompt, self.model, self._credential(), self._options())
        return self._finish(message, prompt, done)

    def stream(self, message: str) -> ReplyStream:
        """Stream the reply's text; history is updated only when the stream completes."""
        prompt = self.build_prompt(message)
        holder = ReplyStream(iter(()))

        def pieces() -> Iterator[str]:
            parts: list[str] = []
            usage = Usage()
            for d in self.provider.stream(prompt, self.model, self._credential(), self._options()):
                if d.text:
                    parts.append(d.text)
                    yield d.text
                if d.usage is not None:
                    usage = d.usage
            done = Completion("".join(parts), self.model, self.provider.name, usage)
            holder.reply = self._finish(message, prompt, done)

        holder._pieces = pieces()
        return holder

    async def astream(self, message: str) -> AsyncIterator[str]:
        prompt = self.build_prompt(message)
        parts: list[str] = []
        usage = Usage()
        async for d in self.provider.astream(prompt, self.model, self._credential(),
                                             self._options()):
            if d.text:
                parts.append(d.text)
                yield d.text
            if d.usage is not None:
                usage = d.usage
        self._finish(message, prompt, Completion("".join(parts), self.model, self.provider.name, usage))

    # ------------------------------------------------------------------ session

    def reset(self) -> None:
        """Forget the conversation (a new session id; settings and parts stay)."""
        self.history.clear()
        self.stats = SessionStats()
        self.session_id = uuid.uuid4().hex[:12]

    @contextmanager
    def override(self, *, provider: Provider | None = None) -> Iterator[Agent]:
        """Temporarily swap parts, e.g. ``with agent.override(provider=FakeProvider()):``."""
        saved = self.provider, self._credentials
        if provider is not None:
            self.provider, self._credentials = provider, []
        try:
            yield self
        finally:
            self.provider, self._credentials = saved
