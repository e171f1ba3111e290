"""Where ``hermes-core`` starts (the console script and ``python -m hermes_core.cli``).

Why a module of its own: start-up is about half a second of imports (config, pydantic, yaml, the
command modules), and a Ctrl-C in that time ended in a KeyboardInterrupt traceback through
importlib, because the handler in :func:`hermes_core.cli.main.main` did not exist yet. This module
imports nothing of the package (and ``import hermes_core`` itself loads nothing heavy), so from
the first line of ours that runs, a Ctrl-C ends like one in a command: a newline, exit 130.
"""

from __future__ import annotations

import sys


def main() -> int:
    """Run the command line; a Ctrl-C at any moment of start-up exits 130 without a traceback."""
    try:
        from hermes_core.cli.main import main as run

        return run()
    except KeyboardInterrupt:
        print("", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
