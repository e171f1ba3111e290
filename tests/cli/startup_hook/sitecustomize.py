"""Test hook (on PYTHONPATH of a child process only): stop the import of one module until SIGINT,
or make it fail.

``HERMES_TEST_BLOCK_IMPORT`` names the module; when the child is about to import it, it writes
one byte to the pipe ``HERMES_TEST_READY_FD`` names and sleeps, so the parent's SIGINT lands
inside that import at a known point instead of racing a timer.

``HERMES_TEST_BREAK_IMPORT`` names a module whose import raises RuntimeError with the text of
``HERMES_TEST_BREAK_MESSAGE``: a bug (or a broken installation) met while the command starts.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

_TARGET = os.environ.get("HERMES_TEST_BLOCK_IMPORT", "")
_READY_FD = int(os.environ.get("HERMES_TEST_READY_FD", "-1"))


class _BlockImport:
    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if name != _TARGET:
            return None
        sys.meta_path.remove(self)
        os.write(_READY_FD, b"!")
        os.close(_READY_FD)
        time.sleep(120)    # the parent's SIGINT ends this with KeyboardInterrupt
        return None


class _BreakImport:
    def __init__(self, target: str, message: str) -> None:
        self.target, self.message = target, message

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if name == self.target:
            raise RuntimeError(self.message)
        return None


if _TARGET and _READY_FD >= 0:
    sys.meta_path.insert(0, _BlockImport())
if os.environ.get("HERMES_TEST_BREAK_IMPORT"):
    sys.meta_path.insert(0, _BreakImport(os.environ["HERMES_TEST_BREAK_IMPORT"],
                                         os.environ.get("HERMES_TEST_BREAK_MESSAGE", "")))
