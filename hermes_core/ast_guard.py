"""The one way hermes_core turns text into an AST: never two at once, never with a collection inside.

CPython 3.11 before 3.11.8 keeps the AST constructor's recursion count in state the whole
interpreter shares (CPython gh-106905). The constructor runs no Python code of its own, so a thread
inside it keeps the GIL, except when one of its allocations starts a garbage collection: the
finalizers and callbacks a collection runs are Python code, and the GIL can pass to another thread
there. If that thread builds an AST too (a rule condition being compiled, or ``np.load`` parsing a
``.npy`` header with ``ast.literal_eval`` on the skill warm-up thread), it resets the shared count,
and the first thread raises ``SystemError: AST constructor recursion depth mismatch`` for a tree it
built correctly.

:func:`holding_ast` is held around every AST this package builds, and around every ``np.load``
whose headers numpy parses: one process-wide lock, with collection held off until the block ends
(and left off when it was off), so none of ours is interrupted and none of ours runs inside
another of ours.

What it does not cover, and why nothing more is done. Ours never fail: inside the lock with
collection off, the constructor keeps the GIL to the end, so no other thread's parse can run in
the middle of ours. A parse outside hermes_core, on another thread, can still fail: if a
collection starts inside it and the GIL passes, any parse that runs meanwhile (ours, or that
library's own on a third thread) resets the count and the *foreign* parse raises. Ours only
narrow that window (while one of ours runs, collection is off for every thread, so no foreign
parse is interrupted then), they do not close it. They run at known times: each rule condition
once per text (cached) when the router is built, and the ``np.load`` headers when the stores
and models load (the skill warm-up thread among them); nothing of ours parses per turn. Closing
it for everyone would mean replacing ``ast.parse`` (or ``compile``) process-wide with a locked
wrapper: a patch of the standard library under every other library, for a bug CPython fixed in
3.11.8 (and 3.12); the fix for a foreign parse that hits it is that upgrade. On a fixed
interpreter this guard costs one uncontended lock and a paused collector per parse, so it is
kept everywhere rather than switched by version.
"""

from __future__ import annotations

import ast
import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from hermes_core.forked import child_lock, renew_in_child

# re-entrant: an np.load block may hold it while a caller holds it too; free in a forked child
_LOCK = child_lock(threading.RLock())


class _Collection:
    """Whether a block of ours has collection off, to turn on again at its end."""

    def __init__(self) -> None:
        self.off = False
        renew_in_child(self)

    def renew_after_fork(self) -> None:
        """In a forked child (:mod:`hermes_core.forked`): collection on again if a block had it
        off. The block was on a thread of the parent (the warm-up loading an ``.npz``), not in
        the child, so nothing turned it on again: the child never collected a cycle."""
        if self.off:
            self.off = False
            gc.enable()


_COLLECTION = _Collection()


@contextmanager
def holding_ast() -> Iterator[None]:
    """Run the block under the process-wide AST lock with garbage collection held off."""
    with _LOCK:
        was_enabled = gc.isenabled()
        gc.disable()
        if was_enabled:   # an inner block (collection already off) leaves it to the outer one
            _COLLECTION.off = True
        try:
            yield
        finally:
            if was_enabled:
                _COLLECTION.off = False
                gc.enable()


def parse_expression(text: str) -> ast.Expression:
    """``ast.parse(text, mode="eval")`` under :func:`holding_ast`.

    Raises SyntaxError as ``ast.parse`` does; an expression nested too deep for the interpreter's
    stack (RecursionError, or the SystemError the constructor raises for it) is a ValueError, so a
    hostile condition is refused as invalid rather than escaping as a crash."""
    try:
        with holding_ast():
            tree = ast.parse(text, mode="eval")
    except (RecursionError, SystemError, MemoryError) as e:
        raise ValueError(f"the expression is nested too deeply to parse ({type(e).__name__})") from None
    assert isinstance(tree, ast.Expression)
    return tree
