"""An optional request classifier: TF-IDF + linear SVM with calibrated confidence.

Trained from labelled examples (``hermes-core route train FILE.jsonl``; one
``{"text": ..., "label": ...}`` per line, the label a slot such as ``code_model`` / ``fast`` or a
model name). The router lets it decide only when its calibrated probability reaches
``llm.routing.classifier.min_confidence`` (0.9 by default), else the rules decide: an SVM's raw
margin is not a probability, so it is wrapped in :class:`CalibratedClassifierCV` (Platt scaling).

Word features use the shared mixed CJK tokenizer, and character n-grams catch code and paths.
The model file is a pickle, and unpickling runs code. So the file starts with a header line
(:data:`MAGIC` and the SHA-256 of the pickle that follows) and :meth:`RouteClassifier.load` checks
both before unpickling anything: a ``.pkl`` from elsewhere, a file saved by an older version or a
tampered payload is refused with a :class:`ConfigError` naming it. The checksum is not a signature
(whoever can write the file can forge it); it keeps foreign and damaged files out. Still load only
files you trained yourself, from a directory only you can write.
"""

from __future__ import annotations

import hashlib
import pickle
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hermes_core.atomic_write import write_atomic
from hermes_core.errors import ConfigError
from hermes_core.jsonl import read_jsonl
from hermes_core.tokenize import tokenize

FORMAT = "hermes-route-classifier/1"
#: First bytes of a classifier file; the header line ends with ``sha256=<hex of the payload>``.
MAGIC = b"HERMES-ROUTE-CLASSIFIER/2 "
MAX_TRAIN_BYTES = 50_000_000


@dataclass(frozen=True, slots=True)
class Example:
    text: str
    label: str


def read_examples(path: str | Path) -> list[Example]:
    """Labelled examples from JSONL; a bad line is a ConfigError naming file and line."""
    p = Path(path)
    if not p.exists():   # a folder or a pipe is named as such by read_jsonl
        raise ConfigError("training file not found", file=str(p))
    if p.is_file() and p.stat().st_size > MAX_TRAIN_BYTES:
        raise ConfigError(f"training file larger than {MAX_TRAIN_BYTES} bytes", file=str(p))
    out: list[Example] = []
    for n, obj in read_jsonl(p, what="training file"):
        if not isinstance(obj, dict):
            raise ConfigError("each line must be an object with 'text' and 'label'", file=str(p),
                              line=n)
        text, label = obj.get("text"), obj.get("label")
        if not isinstance(text, str) or not text.strip():
            raise ConfigError("'text' must be a non-empty string", file=str(p), line=n)
        if not isinstance(label, str) or not label.strip():
            raise ConfigError("'label' must be a non-empty string", file=str(p), line=n)
        out.append(Example(text, label.strip()))
    return out


def _tokens(text: str) -> list[str]:
    return tokenize(text)


class RouteClassifier:
    """A fitted text -> label model with calibrated confidences."""

    def __init__(self, pipeline: Any, labels: Sequence[str]) -> None:
        self.pipeline = pipeline
        self.labels = tuple(labels)

    @classmethod
    def train(cls, examples: Sequence[Example], *, source: str | None = None) -> RouteClassifier:
        from sklearn.calibration import CalibratedClassifierCV
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.pipeline import FeatureUnion, make_pipeline
        from sklearn.svm import LinearSVC

        counts = Counter(e.label for e in examples)
        if len(counts) < 2:
            raise ConfigError("training needs at least two different labels", file=source)
        fewest = min(counts.values())
        if fewest < 2:
            rare = ", ".join(sorted(label for label, c in counts.items() if c < 2))
            raise ConfigError(f"each label needs at least 2 examples (too few: {rare})", file=source)
        features = FeatureUnion([
            ("words", TfidfVectorizer(tokenizer=_tokens, lowercase=False, token_pattern=None,
                                      ngram_range=(1, 2), sublinear_tf=True)),
            ("chars", TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True,
                                      min_df=1)),
        ])
        svm = CalibratedClassifierCV(LinearSVC(C=1.0), cv=min(5, fewest), method="sigmoid")
        pipeline = make_pipeline(features, svm)
        pipeline.fit([e.text for e in examples], [e.label for e in examples])
        return cls(pipeline, list(pipeline.classes_))

    def predict(self, text: str) -> tuple[str, float]:
        """(label, calibrated probability of that label)."""
        probs = self.pipeline.predict_proba([text])[0]
        best = int(probs.argmax())
        return str(self.pipeline.classes_[best]), float(probs[best])

    def save(self, path: str | Path) -> None:
        p = Path(path)
        payload = pickle.dumps({"format": FORMAT, "labels": self.labels, "pipeline": self.pipeline})
        header = MAGIC + b"sha256=" + hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n"
        try:
            write_atomic(p, header + payload)
        except OSError as e:  # unwritable, a file in the way, disk full: say which path
            raise ConfigError(f"cannot write classifier {p}: {e.strerror or e}") from None

    @classmethod
    def load(cls, path: str | Path, *, key_path: str | None = None,
             config_file: str | None = None) -> RouteClassifier:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"classifier file not found: {p} (train one with "
                              "'hermes-core route train FILE.jsonl')",
                              file=config_file, key_path=key_path)
        try:
            data = p.read_bytes()
        except OSError as e:
            raise ConfigError(f"cannot read classifier {p}: {e.strerror or e}", file=config_file,
                              key_path=key_path) from None
        header, _, payload = data.partition(b"\n")
        if not header.startswith(MAGIC + b"sha256="):
            raise ConfigError(f"cannot read classifier {p}: not written by 'hermes-core route train' "
                              "(no hermes header); refusing to unpickle it - retrain it",
                              file=config_file, key_path=key_path)
        expected = header.removeprefix(MAGIC + b"sha256=").decode("ascii", "replace")
        if hashlib.sha256(payload).hexdigest() != expected:
            raise ConfigError(f"cannot read classifier {p}: checksum mismatch (damaged or edited); "
                              "refusing to unpickle it - retrain it", file=config_file,
                              key_path=key_path)
        try:
            obj = pickle.loads(payload)  # our own file: header and checksum verified above
        except Exception as e:
            raise ConfigError(f"cannot read classifier {p}: {type(e).__name__}", file=config_file,
                              key_path=key_path) from None
        if not isinstance(obj, dict) or obj.get("format") != FORMAT:
            raise ConfigError(f"{p} is not a hermes route classifier", file=config_file,
                              key_path=key_path)
        return cls(obj["pipeline"], obj["labels"])
