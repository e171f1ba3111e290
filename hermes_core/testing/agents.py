"""An Agent wired for tests: a given home, a test-double provider, no waiting, no audit file.

Why: most agent tests differ only in the provider double and a few settings; building the
Agent the same way everywhere keeps them from testing their own wiring by accident.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_core.agent.agent import Agent
from hermes_core.config import load_settings


def offline_agent(home: Path, provider: Any, *, fast_model: str | None = None,
                  **settings: Any) -> Agent:
    """An Agent on ``home`` answering through ``provider``, default model "m-default" (and
    ``fast_model`` when given), no real sleeping, no audit file, no environment keys."""
    routing: dict[str, Any] = {"default_model": "m-default"}
    if fast_model is not None:
        routing["fast_model"] = fast_model
    cfg = {"home": str(home), "llm": {"routing": routing}, **settings}
    return Agent(load_settings(cfg, env={}), provider=provider,
                 loop_options={"sleep": lambda s: None, "audit_path": False})
