"""Shared test helpers (importable: tests/ is on sys.path under pytest's rootdir import mode)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

EXAMPLE_HOME = Path(__file__).parent.parent / "examples" / "home"


def copy_example_home(dst: Path) -> Path:
    """The bundled example home, copied without the state a chat writes into it."""
    shutil.copytree(EXAMPLE_HOME, dst, ignore=shutil.ignore_patterns("sessions.db*", "cache",
                                                                      "audit.jsonl", ".chat_history"))
    return dst


def offline_agent(home: Path, provider: Any, *, fast_model: str | None = None, **settings: Any) -> Any:
    """An Agent on ``home`` answering through ``provider`` (a test double), default model
    "m-default" (and ``fast_model`` when given), no real sleeping, no audit file, no env keys."""
    from hermes_core.agent.agent import Agent
    from hermes_core.config import load_settings

    routing: dict[str, Any] = {"default_model": "m-default"}
    if fast_model is not None:
        routing["fast_model"] = fast_model
    cfg = {"home": str(home), "llm": {"routing": routing}, **settings}
    return Agent(load_settings(cfg, env={}), provider=provider,
                 loop_options={"sleep": lambda s: None, "audit_path": False})
