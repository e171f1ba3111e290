"""When a retriever builds its indexes: on first use, on a background warm-up, or after a change
check, and what the dense layer's loading state is meanwhile.

A chat's first turn must not wait for a model (the warm-up thread loads it while L1-L3 answer),
a turn must not wait for a check that the skills changed (that runs on the same thread), and a
process that exits while a model loads must end cleanly: the warm-up thread is not a daemon
(torch aborts in C++ when a daemon thread is cut off mid-load), so it asks :func:`exiting`
before each load and stops. :class:`Warmup` holds that lifecycle for ``SkillRetriever``, which
supplies the refresh itself.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from hermes_core.retrieval.dense import DenseIndex
from hermes_core.retrieval.skills import IndexDelta
from hermes_core.types import Skill

log = logging.getLogger(__name__)


def exiting() -> bool:
    """Whether the interpreter is shutting down: the main thread has finished while a warm-up
    thread still runs (it is not a daemon, so it runs on), and the thread pools a model loader
    uses refuse new work from then on."""
    return not threading.main_thread().is_alive()


class Warmup:
    """The build lifecycle of a ``SkillRetriever`` (its other half): what it reads of the
    retriever is declared here, and :meth:`refresh` is the retriever's."""

    refresh_interval_s: float | None
    clock: Callable[[], float]
    dense: list[DenseIndex]
    _static: list[Skill] | None
    _sources: tuple[object, ...] | None
    _checked_at: float | None
    _built: bool
    _lexical_ready: threading.Event
    _warm: threading.Thread | None
    _lock_bg: threading.Lock
    _cancelled: bool
    _dense_failed: set[str]
    _dense_failed_why: dict[str, str]

    def refresh(self, *, dense: bool = True, lexicon: bool = False) -> IndexDelta:
        raise NotImplementedError

    def _sources_now(self) -> tuple[object, ...] | None:
        raise NotImplementedError

    def refresh_if_changed(self, *, background: bool = False) -> IndexDelta | None:
        """Refresh when a SKILL.md or catalog was added, removed or edited since the last refresh.

        :meth:`select` calls it on every turn with ``background=True``, so a skill written during
        a chat is offered on a later turn without a restart, and the turn itself never waits: the
        stat walk (about 23 ms for 1,000 skills) and any re-embedding run on the background thread
        :meth:`wait_warm` joins. At most one check per ``refresh_interval_s``, by ``stat`` only: an
        idle check reads no file. Returns the refresh's delta, or None when nothing ran (or it runs
        in the background).
        """
        if self.refresh_interval_s is None or self._static is not None:
            return None
        now = self.clock()
        if not self._built:
            if self._lexical_ready.is_set():
                self._checked_at = now   # the turn's full build reads the sources: that is a check
            return None
        if self._checked_at is not None and now - self._checked_at < self.refresh_interval_s:
            return None
        if not background:
            self._checked_at = now
            return self._refresh_if_stale()
        with self._lock_bg:
            if self._warm is not None and self._warm.is_alive():
                return None   # a warm-up or an earlier check is still running
            self._checked_at = now
            self._warm = threading.Thread(target=self._background_check, daemon=False,
                                          name="skill-retriever-check")
            self._warm.start()
        return None

    def _refresh_if_stale(self, lexicon: bool = False) -> IndexDelta | None:
        return None if self._sources_now() == self._sources else self.refresh(lexicon=lexicon)

    def _background_check(self) -> None:
        try:
            self._refresh_if_stale(lexicon=True)
        except Exception as e:  # the index in hand keeps serving
            log.warning("could not refresh skills: %s", e)

    def dense_status(self) -> str:
        """The embedding layer's state in words, for the chat banner and ``/skills``: off, not
        loaded yet, loading, ready (which models), or unavailable (and why)."""
        if not self.dense:
            return "off (embeddings disabled or not installed; lexical layers only)"
        failed = [f"{m}: {why}" for m, why in self._dense_failed_why.items()]
        ready = [d.embedder.model_id for d in self.dense
                 if d.embedder.model_id not in self._dense_failed and d.names and d.model_loaded]
        warm = self._warm
        if not self._built and warm is not None and warm.is_alive():
            if ready:
                pending = [d.embedder.model_id for d in self.dense if d.embedder.model_id not in ready
                           and d.embedder.model_id not in self._dense_failed]
                return f"ready ({', '.join(ready)}); loading {', '.join(pending)} (ready ones answer)"
            return "loading (lexical layers answer meanwhile)"
        if ready:
            extra = f"; unavailable {'; '.join(failed)}" if failed else ""
            return "ready (" + ", ".join(ready) + ")" + extra
        if failed:
            return "unavailable (" + "; ".join(failed) + ")"
        if self._cancelled:
            return "cancelled"
        return "not loaded yet (loads on first use)"

    def cancel_warm(self) -> None:
        """Tell a background warm-up to stop before its next model load or embedding batch: a
        chat that ends must not wait for a model it will never use."""
        self._cancelled = True

    def ensure_lexical(self) -> None:
        """The lexical layers (L1-L3) built; never loads a model. What the skill list, the tool
        offer and a trigger hit need."""
        if self._lexical_ready.is_set():
            return
        warm = self._warm
        if warm is not None and warm.is_alive() and self._lexical_ready.wait(timeout=60):
            return
        self.refresh(dense=False)

    def ensure_built(self) -> None:
        """Build on first use. While a background warm-up runs, wait only for the lexical layers
        (the dense layer abstains until it is ready)."""
        if self._built:
            return
        warm = self._warm
        if warm is not None and warm.is_alive():
            self.ensure_lexical()
            return
        if self._lexical_ready.is_set() and not self.dense:
            return
        self.refresh()

    def wait_warm(self, timeout: float | None = None) -> bool:
        """Wait for a background warm-up (or skill change check) to finish; True when none is
        running any more.

        A process about to exit calls this so the model load ends cleanly rather than being cut
        off by interpreter shutdown.
        """
        warm = self._warm
        if warm is not None and warm.is_alive():
            warm.join(timeout)
            return not warm.is_alive()
        return True

    def warm_up(self, background: bool = True) -> threading.Thread | None:
        """Build indexes and load models now, optionally on a background thread so the first turn is
        served by L1-L3 while the dense layer is still embedding."""
        if not background:
            self.refresh()
            return None
        # Not a daemon: a process that exits while torch is still loading the model on a daemon
        # thread aborts in C++ ("terminate called without an active exception"); exit waits instead.
        t = threading.Thread(target=self._warm_refresh, name="skill-retriever-warmup", daemon=False)
        self._warm = t
        t.start()
        return t

    def _warm_refresh(self) -> None:
        """refresh() for the warm-up thread: a failure is a warning, not a thread traceback on the
        user's terminal; the next retrieve() refreshes again on its own thread."""
        try:
            self.refresh(lexicon=True)
        except Exception as e:
            log.warning("skill index warm-up failed: %s", e)
