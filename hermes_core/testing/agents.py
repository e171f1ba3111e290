"""An Agent wired for tests: a given home, a test-double provider, no waiting, no audit file.

Why: most agent tests differ only in the provider double and a few settings; building the
Agent the same way everywhere keeps them from testing their own wiring by accident.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_core.agent.agent import Agent
from hermes_core.config import Settings, load_settings
from hermes_core.errors import ConfigError
from hermes_core.providers.base import requires_key
from hermes_core.testing.scripted import ScriptedProvider

#: The Agent's own keyword parameters (``tools``, ``approve``, ``session_id``, hooks, parts):
#: given to :func:`offline_agent` they go to the Agent, every other keyword to the settings.
_AGENT_KEYWORDS = frozenset(inspect.signature(Agent.__init__).parameters) - {"self", "settings",
                                                                             "provider"}


def _no_sleep(seconds: float) -> None:
    """The call loop's waits (Retry-After, back-off) return at once."""


async def _no_asleep(seconds: float) -> None:
    """The async forms' waits return at once too (``achat``, ``astream``)."""


def offline_agent(home: Path, provider: Any, *, fast_model: str | None = None,
                  **options: Any) -> Agent:
    """An Agent on ``home`` answering through ``provider``, default model "m-default" (and
    ``fast_model`` when given), no real sleeping (sync or async), no audit file, no environment
    keys.

    ``options`` naming an Agent parameter (``tools=[add]``, ``approve=``, ``session_id=``,
    ``loop_options=``, added to the no-sleep, no-audit ones) go to the Agent; the others are
    settings sections (``prompt={...}``). ``context_engine`` names both: a mapping is its
    settings, anything else the engine.

    A ``provider`` that needs a key (an author's own double that does not say
    ``requires_key = False``, a ``ScriptedProvider(..., requires_key=True)``) needs
    ``credentials=`` too: without one the Agent would answer offline and never call it, so that
    is a :class:`~hermes_core.errors.ConfigError` naming both fixes. The kit's doubles need no key.
    ``provider=None`` is the Agent's own offline fallback."""
    agent_kw = {k: v for k, v in options.items() if k in _AGENT_KEYWORDS
                and not (k in Settings.model_fields and isinstance(v, Mapping))}
    settings = {k: v for k, v in options.items() if k not in agent_kw}
    routing: dict[str, Any] = {"default_model": "m-default"}
    if fast_model is not None:
        routing["fast_model"] = fast_model
    cfg = {"home": str(home), "llm": {"routing": routing}, **settings}
    loop = {"sleep": _no_sleep, "asleep": _no_asleep, "audit_path": False,
            **(agent_kw.pop("loop_options", None) or {})}
    agent = Agent(load_settings(cfg, env={}), provider=provider, loop_options=loop, **agent_kw)
    if provider is not None and agent.offline_reason is not None and requires_key(provider):
        # the Agent's no-key fallback answers offline: the double would never be called
        keyless = ("drop requires_key=True" if isinstance(provider, ScriptedProvider)
                   else f"requires_key = False on {type(provider).__name__}")
        raise ConfigError(
            f"offline_agent: {type(provider).__name__} {getattr(provider, 'name', '?')!r} needs a "
            "key and none is configured, so the agent would answer offline and never call it; "
            "give it one (credentials={name: {'keys': [{'key': 'sk-test-...'}]}}) or make it "
            f"keyless ({keyless})")
    return agent
