"""The process-wide retriever: built from ``Settings`` once, on first use, whatever thread asks.

Kept apart from ``retriever.py`` (which re-exports these names) because it is the one place
that reads the settings' layout of a home (its skills folder, mapping files, embedders, usage
store) into a ``SkillRetriever``; the retriever itself takes all of that as arguments.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.forked import child_lock
from hermes_core.retrieval.dense import default_embedders
from hermes_core.retrieval.synonyms import load_mapping_file
from hermes_core.retrieval.tuning import layer_weights
from hermes_core.retrieval.usage import usage_layer_for

if TYPE_CHECKING:
    from hermes_core.retrieval.retriever import SkillRetriever

_singleton: SkillRetriever | None = None
# free in a forked child: held while the retriever is built (models, indexes), a fork meanwhile
# left it held for ever and the child's first turn hung
_singleton_lock = child_lock(threading.Lock())


def build_retriever(settings: Any = None, *, home: str | os.PathLike[str] | None = None,
                    read_only: bool = False) -> SkillRetriever:
    """A retriever from ``Settings`` (or defaults): HERMES_HOME/skills plus configured folders.
    ``read_only`` (a preview): the usage history is read, never written."""
    from hermes_core.config import load_settings
    from hermes_core.retrieval.retriever import SkillRetriever  # it re-exports this module
    s = settings if settings is not None else load_settings(home=home)
    su = s.skill_utils
    home_path = Path(os.path.expanduser(str(home))) if home is not None else s.home_path
    folders = [home_path / "skills", *(os.path.expanduser(f) for f in su.folders)]
    triggers = load_mapping_file(su.triggers_file, "triggers") if su.triggers_file else None
    synonyms = load_mapping_file(su.synonyms_file, "synonyms") if su.synonyms_file else None
    layer_weights(su.weights, file=getattr(s, "source", None))  # a bad key fails before any model loads
    models = default_embedders(su.embedding_model, su.query_adapter) if su.embeddings and su.enabled else []
    retriever = SkillRetriever(su, folders=folders, catalogs=list(su.catalogs), embedders=models,
                               cache_dir=home_path / "cache" / "embeddings", triggers=triggers,
                               synonyms=synonyms,
                               usage=usage_layer_for(home_path, su, s, read_only=read_only))
    p = getattr(s, "prompt", None)
    if p is not None:
        retriever.scan_categories = tuple(p.injection_categories) if p.injection_scan else ()
    return retriever


def get_skill_retriever(settings: Any = None) -> SkillRetriever:
    """The process-wide retriever, built lazily on first call (thread-safe)."""
    global _singleton
    if _singleton is None:
        with _singleton_lock:
            if _singleton is None:
                _singleton = build_retriever(settings)
    return _singleton


def reset_skill_retriever() -> None:
    """Forget the singleton (tests, or after a config change)."""
    global _singleton
    with _singleton_lock:
        _singleton = None
