"""The catalog a skill retriever serves, whether retrieval is on or off.

With retrieval on, that is the index: its skills and the files it skipped. With retrieval off
(``skill_utils.enabled: false``) no index is ever built, so the catalog is read fresh each time,
which costs no model and sees a skill added since. The per-turn skill list, ``skill_view`` and the
prompt preview's warnings all read it here, so they cannot disagree about which case applies.
"""

from __future__ import annotations

from typing import Protocol

from hermes_core.retrieval.skills import Catalog, CatalogIssue
from hermes_core.types import Skill


class CatalogSource(Protocol):
    """What :func:`served_catalog` needs of a retriever (``SkillRetriever`` is one). A stand-in
    without ``enabled`` counts as on and one without ``issues`` as having none."""

    @property
    def skills(self) -> list[Skill]: ...

    def load_catalog(self, *, warn: bool = True) -> Catalog: ...


def served_catalog(retriever: CatalogSource) -> Catalog:
    """The index's skills and issues, or with retrieval off the catalog as found now (read
    quietly: the callers report its issues where they need to)."""
    if not getattr(retriever, "enabled", True):
        return retriever.load_catalog(warn=False)
    skills = retriever.skills          # builds the lexical index if it is not built yet
    issues: tuple[CatalogIssue, ...] = tuple(getattr(retriever, "issues", ()))
    return Catalog(tuple(skills), issues)
