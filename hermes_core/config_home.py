"""Which folder is the home, and why a named one is refused.

A home named by ``--home``, ``HERMES_HOME`` or the config must already be a folder: a typo would
otherwise become a fresh, empty home answering with the default persona. Kept apart from
``config`` so the rules (and their messages) are one small piece.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from hermes_core.config_messages import describe_value
from hermes_core.errors import ConfigError
from hermes_core.redact import looks_like_secret

DEFAULT_HOME = "~/.hermes"


def file_on_the_way(path: Path) -> Path | None:
    """The first folder of ``path`` that is a file instead, or None: the system says only that
    ``notes.txt/sub`` does not exist, and "create it first" cannot be done while the file is there."""
    for part in reversed(path.parents):
        try:
            if not part.exists():
                return None
            if not part.is_dir():
                return part
        except (OSError, ValueError):   # a name too long for the file system, a NUL byte
            return None
    return None


def check_home(home: str | os.PathLike[str] | None = None, *,
               env: Mapping[str, str] | None = None) -> Path:
    """The home a command will use, refused when it was named but does not exist.

    A home given by ``--home`` or ``HERMES_HOME`` must already be a folder: a typo would otherwise
    create a new, empty home (with a sessions.db and an audit log) and answer with the default
    persona. The default ``~/.hermes`` may be created on first use, but only inside a user home
    that exists (``HOME=/nonexistent`` must not create one).
    """
    env = os.environ if env is None else env
    if home is not None or env.get("HERMES_HOME"):
        named = str(home) if home is not None else env["HERMES_HOME"]
        where = "--home" if home is not None else "HERMES_HOME"
        if not named.strip():   # Path("") is the current folder: it exists, wherever one runs
            raise ConfigError(f"{where} is empty (an unset variable in a script?); name a folder",
                              key_path="home")
        path = Path(os.path.expanduser(named))
        if (blocker := file_on_the_way(path)) is not None:
            raise ConfigError(f"{where} names a path through {blocker}, which is a file, not a "
                              "folder", file=str(path), key_path="home")
        try:
            exists, is_dir = path.exists(), path.is_dir()
        except OSError as e:   # a name too long for the file system (ENAMETOOLONG), a loop...
            raise ConfigError(f"{where} names a path the system refuses ({e.strerror or e})",
                              file=str(path), key_path="home") from None
        if not exists:
            raise ConfigError(f"{where} names a folder that does not exist (create it first, or "
                              "check the spelling)", file=str(path), key_path="home")
        if not is_dir:
            raise ConfigError(f"{where} names a file, not a folder", file=str(path), key_path="home")
        return path
    path = Path(os.path.expanduser(DEFAULT_HOME))
    if not path.parent.is_dir():
        raise ConfigError(f"the default home {DEFAULT_HOME} is inside a user home that does not "
                          "exist (is HOME set right?); set HERMES_HOME or --home", file=str(path.parent),
                          key_path="home")
    return path


def check_named_home(home: str, *, file: str | None, line: int | None,
                     secrets: tuple[str, ...]) -> None:
    """A home named by the config (file, dict or override) must be a folder, like ``--home``;
    the default home is left to :func:`check_home` and created on first use."""
    if not home.strip():   # Path("") is the current folder: it exists, wherever one runs
        raise ConfigError("home is empty; name a folder, or leave the key out for the default "
                          f"{DEFAULT_HOME}", file=file, key_path="home", line=line)
    path = Path(os.path.expanduser(home))
    if path == Path(os.path.expanduser(DEFAULT_HOME)):
        return
    short = len(str(path)) <= 200   # a longer one is described, not shown (no second secret check)
    secret = short and (home.strip() in secrets or looks_like_secret(home))
    shown = str(path) if short and not secret else describe_value(home, secrets)
    try:
        exists, is_dir = path.exists(), path.is_dir()
    except (OSError, ValueError):   # a name too long for the file system, a NUL byte
        exists = is_dir = False
    if not exists and (blocker := file_on_the_way(path)) is not None:
        where = str(blocker) if short and not secret else "a part of it"
        raise ConfigError(f"home names a path through {where}, which is a file, not a folder: "
                          f"{shown}", file=file, key_path="home", line=line)
    if not exists:
        raise ConfigError(f"home names a folder that does not exist: {shown} (create it first, or "
                          "check the spelling)", file=file, key_path="home", line=line)
    if not is_dir:
        raise ConfigError(f"home names a file, not a folder: {shown}", file=file, key_path="home",
                          line=line)
