"""The pool's name for :mod:`hermes_core.forked`, where the after-fork mechanism now lives (it
serves modules outside the pool too, top-level ones among them, which may not import from a
subsystem). Kept so code importing it from here still finds the one registry."""

from hermes_core.forked import Renewed, child_lock, own_random, renew_in_child

__all__ = ["Renewed", "child_lock", "own_random", "renew_in_child"]
