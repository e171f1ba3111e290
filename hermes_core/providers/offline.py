"""A provider that needs no network and no key.

It answers with a short, deterministic report of what it received (model, system prompt size and
hash, the per-turn context), so the REPL and ``hermes-core prompt`` are useful before any key exists
and a user can see exactly what would have been sent.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from hermes_core.providers.base import CallOptions
from hermes_core.redact import clip
from hermes_core.tokens import count_tokens
from hermes_core.types import Completion, Credential, Delta, Prompt, Usage


def _first_lines(text: str, n: int = 6, width: int = 100) -> list[str]:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    out = [ln if len(ln) <= width else ln[: width - 1] + "…" for ln in lines[:n]]
    if len(lines) > n:
        out.append(f"… ({len(lines) - n} more lines)")
    return out


class OfflineProvider:
    """Deterministic, network-free replies describing the request."""

    kind = "offline"
    requires_key = False

    def __init__(self, name: str = "offline", endpoint: str | None = None,
                 timeout_s: float = 60.0, *, stream_delay_s: float = 0.0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.name = name
        self.stream_delay_s = stream_delay_s  # "typing" pace for demos and cancellation tests
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"OfflineProvider(name={self.name!r})"

    def render(self, prompt: Prompt, model: str, options: CallOptions) -> dict[str, Any]:
        return {"model": model, "system": prompt.system, "context": prompt.context,
                "messages": [{"role": m.role, "content": m.content} for m in prompt.messages],
                "max_tokens": options.max_tokens}

    def reply_text(self, prompt: Prompt, model: str) -> str:
        last = next((m.content for m in reversed(prompt.messages) if m.role == "user"), "")
        lines = [
            "[offline reply: nothing was sent to a model]",
            f"model: {model}",
            f"system prompt: {len(prompt.system)} chars, ~{count_tokens(prompt.system)} tokens,"
            f" sha256 {prompt.prefix_sha256[:12]}",
            f"messages: {len(prompt.messages)}; your message: {clip(last, 200)!r}",
        ]
        if prompt.context:
            lines.append(f"per-turn context (~{count_tokens(prompt.context)} tokens):")
            lines.extend("  " + ln for ln in _first_lines(prompt.context))
        else:
            lines.append("per-turn context: none")
        return "\n".join(lines)

    def _usage(self, prompt: Prompt, text: str) -> Usage:
        sent = prompt.system + prompt.context + "".join(m.content for m in prompt.messages)
        return Usage(input_tokens=count_tokens(sent), output_tokens=count_tokens(text))

    def complete(self, prompt: Prompt, model: str, credential: Credential | None,
                 options: CallOptions) -> Completion:
        text = self.reply_text(prompt, model)
        return Completion(text=text, model=model, provider=self.name,
                          usage=self._usage(prompt, text), finish_reason="stop")

    async def acomplete(self, prompt: Prompt, model: str, credential: Credential | None,
                        options: CallOptions) -> Completion:
        return self.complete(prompt, model, credential, options)

    def stream(self, prompt: Prompt, model: str, credential: Credential | None,
               options: CallOptions) -> Iterator[Delta]:
        text = self.reply_text(prompt, model)
        for i, piece in enumerate(text.splitlines(keepends=True)):
            if i and self.stream_delay_s > 0:
                self._sleep(self.stream_delay_s)
            yield Delta(text=piece)
        yield Delta(usage=self._usage(prompt, text), finish_reason="stop")

    async def astream(self, prompt: Prompt, model: str, credential: Credential | None,
                      options: CallOptions) -> AsyncIterator[Delta]:
        for d in self.stream(prompt, model, credential, options):
            yield d
