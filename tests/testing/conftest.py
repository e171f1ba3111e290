"""An offline Agent on a test double, with Agent keyword arguments passed through."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def double_agent(home: Path, provider: Any, *, llm: dict[str, Any] | None = None,
                 **agent_kwargs: Any) -> Any:
    from hermes_core.agent.agent import Agent
    from hermes_core.config import load_settings

    cfg = {"home": str(home), "llm": llm or {"routing": {"default_model": "m-default"}},
           "context_engine": {"enabled": False}}
    return Agent(load_settings(cfg, env={}), provider=provider,
                 loop_options={"sleep": lambda s: None, "audit_path": False}, **agent_kwargs)


@pytest.fixture
def make_agent(tmp_path: Path) -> Any:
    return lambda provider, **kw: double_agent(tmp_path, provider, **kw)
