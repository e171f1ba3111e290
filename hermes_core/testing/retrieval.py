"""Retrieval test helpers: a deterministic embedder, SKILL.md writers and a small skill set.

Why: the real embedding models are slow to load and are tested on their own; retrieval logic
(fusion, gating, caching, refresh) is easier to pin with an embedder whose vectors are a pure
function of the words, and with skills written to disk exactly as a user would write them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hermes_core.tokenize import cjk_ratio, tokenize
from hermes_core.types import Skill

SAMPLE_SKILLS: list[Skill] = [
    Skill("weather-forecast", "Get the weather forecast for a city: temperature, rain and wind.",
          body="Call the weather API with the city name.", triggers=("天气预报",),
          synonyms=("is it going to rain", "umbrella")),
    Skill("git-commit", "Write a git commit message from the staged diff.",
          body="Run git diff --staged, then summarise.", triggers=("git commit",)),
    Skill("pdf-extract", "Extract text and tables from a PDF document.", body="Use pdftotext."),
    Skill("Navigation.TrafficViolations.queryViolation", "查询车辆的交通违章记录",
          triggers=("查违章",)),
    Skill("Calendar.Meeting.createMeeting", "创建会议并邀请参会人",
          synonyms=("开个会", "约会议")),
    Skill("email-send", "Send an email to a contact with a subject and body.",
          synonyms=("drop a line", "mail")),
]
"""A small bilingual skill set (English and Chinese, with triggers and synonyms)."""


def write_skill(root: Path, folder: str, text: str) -> Path:
    """Write ``text`` to ``root/folder/SKILL.md`` (making the folders) and return its path."""
    d = root / folder
    d.mkdir(parents=True, exist_ok=True)
    p = d / "SKILL.md"
    p.write_text(text, encoding="utf-8")
    return p


def skill_md(name: str, description: str, body: str = "Body.", extra: str = "") -> str:
    """The text of a SKILL.md with front matter ``name``/``description`` (plus ``extra`` lines)."""
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"


class HashingEmbedder:
    """A deterministic bag-of-words embedder (no model to load).

    Each token maps to a fixed pseudo-random vector; a text is the normalised sum. Texts sharing
    words get a high cosine, so ranking behaves like a (weak) semantic model. It counts what it
    embedded, so a test can check what a cache saved.
    """

    def __init__(self, model_id: str = "test:hashing", *, english_only: bool = False, dim: int = 64):
        self.model_id = model_id
        self.english_only = english_only
        self.dim = dim
        self.documents_embedded = 0
        self.queries_embedded = 0

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for tok in tokenize(re.sub(r"\s+", " ", text)):
            seed = int.from_bytes(hashlib.sha256(tok.encode()).digest()[:4], "little")
            v += np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        n = float(np.linalg.norm(v))
        return v / n if n > 0 else v

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.documents_embedded += len(texts)
        return np.vstack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dim))

    def embed_query(self, text: str) -> np.ndarray:
        self.queries_embedded += 1
        return self._vec(text)

    def covers(self, text: str) -> bool:
        """False for mostly-Chinese text when ``english_only`` (like an English-only model)."""
        return not self.english_only or cjk_ratio(text) < 0.3
