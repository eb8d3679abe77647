"""Cleaning a raw corpus: filter, deduplication, decontamination, and their ordered pipeline
(ftip-0070, ftip-0071, ftip-0072, ftip-0017).

A corpus is a list of :class:`~ftipbook.data.corpus.Document` (a multiset kept in order). Every
operator is declared by a ``spec()`` (what it reads, its thresholds and rules, its revision),
and ``spec_hash()`` hashes that declaration, so two operators with the same hash are the same
operator. :class:`OrderedPipeline` applies operators in a declared order and records the order,
each operator's spec and the SHA-256 of its input and output corpora: changing the order can
change the result, and the record shows it.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ftipbook.data.corpus import BenchmarkSource, Document
from ftipbook.tokenizer import Normalizer


class Rejected:
    """The type of the rejection symbol ``dagger`` of ftip-0070; :data:`REJECT` is its only value."""

    _instance = None

    def __new__(cls) -> Rejected:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "REJECT"


#: What a :class:`DocumentFilter` returns for a rejected document.
REJECT = Rejected()


def _hash_json(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def corpus_hash(corpus: Sequence[Document]) -> str:
    """SHA-256 of the corpus as an ordered list of ``(source, doc_id, text)``."""
    return _hash_json([[d.source, d.doc_id, d.text] for d in corpus])


def _check_corpus(corpus: Sequence[Document]) -> list[Document]:
    corpus = list(corpus)
    bad = next((d for d in corpus if not isinstance(d, Document)), None)
    if bad is not None:
        raise TypeError(f"a corpus is a list of Documents, found {type(bad).__name__}")
    return corpus


# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DocumentFilter:
    """A declared map ``F: document -> document or REJECT`` (ftip-0070).

    ``rule`` does the work; ``features``, ``thresholds``, ``transform`` (what a kept document
    becomes, ``"none"`` if it is kept as is) and ``revision`` declare it, and only they enter
    :meth:`spec_hash`. Build common filters with :meth:`min_length`, :meth:`reject_pattern`
    and :meth:`normalize`.
    """

    name: str
    rule: Callable[[Document], Document | Rejected] = field(compare=False)
    features: tuple[str, ...] = ()
    thresholds: Mapping[str, Any] = field(default_factory=dict)
    transform: str = "none"
    revision: str = "1"

    def __call__(self, doc: Document) -> Document | Rejected:
        out = self.rule(doc)
        if out is not REJECT and not isinstance(out, Document):
            raise TypeError(f"filter {self.name!r} returned {type(out).__name__}; a filter returns a Document or REJECT")
        return out

    def apply(self, corpus: Sequence[Document]) -> list[Document]:
        """The lift ``F#``: apply ``F`` to every document and drop the rejections."""
        return [out for out in map(self, _check_corpus(corpus)) if out is not REJECT]

    def acceptance_rate(self, corpus: Sequence[Document]) -> float:
        corpus = _check_corpus(corpus)
        return len(self.apply(corpus)) / len(corpus) if corpus else float("nan")

    def spec(self) -> dict[str, Any]:
        """The declaration: name, features read, thresholds, transformation and revision."""
        return {"kind": "filter", "name": self.name, "features": list(self.features),
                "thresholds": dict(self.thresholds), "transform": self.transform, "revision": self.revision}

    def spec_hash(self) -> str:
        """SHA-256 of :meth:`spec`."""
        return _hash_json(self.spec())

    @classmethod
    def min_length(cls, min_chars: int, *, revision: str = "1") -> DocumentFilter:
        """Reject documents shorter than ``min_chars`` characters."""
        if not isinstance(min_chars, int) or min_chars < 0:
            raise ValueError(f"min_chars must be an int >= 0, got {min_chars!r}")
        return cls(f"min_length({min_chars})", lambda d: d if len(d.text) >= min_chars else REJECT,
                   ("length_chars",), {"min_chars": min_chars}, revision=revision)

    @classmethod
    def reject_pattern(cls, pattern: str, *, name: str | None = None, revision: str = "1") -> DocumentFilter:
        """Reject documents in which the regular expression ``pattern`` occurs."""
        compiled = re.compile(pattern)
        return cls(name or f"reject_pattern({pattern!r})", lambda d: REJECT if compiled.search(d.text) else d,
                   ("text",), {"pattern": pattern}, revision=revision)

    @classmethod
    def normalize(cls, normalizer: Normalizer, *, revision: str = "1") -> DocumentFilter:
        """Keep every document, with its text replaced by ``normalizer(text)``."""
        def rule(d: Document) -> Document:
            text = normalizer(d.text)
            answer = None if d.answer is None else normalizer(d.answer)
            return Document(text, d.source, d.doc_id, answer if answer and text.endswith(answer) else None)

        return cls(f"normalize({normalizer.to_dict()})", rule, ("text",), {}, transform=f"normalize {normalizer.to_dict()}",
                   revision=revision)


# ------------------------------------------------------------------------------------------------
class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


def _shingles(text: str, n: int) -> frozenset[tuple[str, ...]]:
    words = tuple(text.split())
    if len(words) < n:
        return frozenset([words]) if words else frozenset()
    return frozenset(words[i:i + n] for i in range(len(words) - n + 1))


def jaccard(a: frozenset, b: frozenset) -> float:
    """``|A and B| / |A or B|`` (1 for two empty sets)."""
    return 1.0 if not a and not b else len(a & b) / len(a | b)


DEDUP_MODES = ("exact", "normalized", "near")
TIE_BREAKS = ("first", "longest")


@dataclass(frozen=True)
class Deduplicator:
    """A deduplication operator ``D`` (ftip-0071) with a declared duplicate relation.

    * ``mode="exact"``: same text; ``"normalized"``: same ``normalizer(text)``; ``"near"``:
      Jaccard similarity of the word ``ngram``-shingle sets of the normalized texts at least
      ``threshold`` (a text with fewer than ``ngram`` words is one shingle).
    * Clusters are the connected components of the relation (union-find), so near-duplicate
      chains are merged transitively.
    * Each cluster keeps one representative: ``tie_break="first"`` the earliest in corpus order,
      ``"longest"`` the longest text (ties to the earliest). Kept documents stay in corpus order.
    """

    mode: str = "exact"
    normalizer: Normalizer = Normalizer(nfkc=True, lowercase=True, collapse_whitespace=True)
    ngram: int = 3
    threshold: float = 0.5
    tie_break: str = "first"
    revision: str = "1"

    def __post_init__(self) -> None:
        if self.mode not in DEDUP_MODES:
            raise ValueError(f"mode must be one of {DEDUP_MODES}, got {self.mode!r}")
        if self.tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {self.tie_break!r}")
        if not isinstance(self.ngram, int) or self.ngram < 1:
            raise ValueError(f"ngram must be an int >= 1, got {self.ngram!r}")
        if not 0 < self.threshold <= 1:
            raise ValueError(f"threshold must lie in (0, 1], got {self.threshold!r}")

    def _key(self, doc: Document) -> str:
        return doc.text if self.mode == "exact" else self.normalizer(doc.text)

    def clusters(self, corpus: Sequence[Document]) -> list[list[int]]:
        """Duplicate clusters as lists of corpus indices (sorted), in order of their first member."""
        corpus = _check_corpus(corpus)
        uf = _UnionFind(len(corpus))
        keys = [self._key(d) for d in corpus]
        if self.mode in ("exact", "normalized"):
            first: dict[str, int] = {}
            for i, k in enumerate(keys):
                uf.union(first.setdefault(k, i), i)
        else:
            shingles = [_shingles(k, self.ngram) for k in keys]
            index: dict[tuple[str, ...], list[int]] = {}
            for i, s in enumerate(shingles):
                for g in s:
                    index.setdefault(g, []).append(i)
            candidates = {(i, j) for members in index.values() for a, i in enumerate(members) for j in members[a + 1:]}
            empty = [i for i, s in enumerate(shingles) if not s]
            candidates |= {(i, j) for a, i in enumerate(empty) for j in empty[a + 1:]}
            for i, j in sorted(candidates):
                if jaccard(shingles[i], shingles[j]) >= self.threshold:
                    uf.union(i, j)
        groups: dict[int, list[int]] = {}
        for i in range(len(corpus)):
            groups.setdefault(uf.find(i), []).append(i)
        return sorted(groups.values())

    def representatives(self, corpus: Sequence[Document]) -> list[int]:
        """The kept index of every cluster, sorted."""
        corpus = _check_corpus(corpus)
        if self.tie_break == "first":
            return sorted(c[0] for c in self.clusters(corpus))
        return sorted(max(c, key=lambda i: (len(corpus[i].text), -i)) for c in self.clusters(corpus))

    def apply(self, corpus: Sequence[Document]) -> list[Document]:
        """``D(C)``: one representative per cluster, in corpus order."""
        corpus = _check_corpus(corpus)
        return [corpus[i] for i in self.representatives(corpus)]

    def duplicate_rate(self, corpus: Sequence[Document]) -> float:
        """The fraction of documents removed."""
        corpus = _check_corpus(corpus)
        return 1 - len(self.apply(corpus)) / len(corpus) if corpus else 0.0

    def spec(self) -> dict[str, Any]:
        """The declaration: relation, normalization, shingles, threshold, clustering, tie-break, revision."""
        return {"kind": "dedup", "mode": self.mode, "normalizer": self.normalizer.to_dict(), "ngram": self.ngram,
                "threshold": self.threshold, "cluster": "connected components", "tie_break": self.tie_break,
                "revision": self.revision}

    def spec_hash(self) -> str:
        """SHA-256 of :meth:`spec`."""
        return _hash_json(self.spec())


# ------------------------------------------------------------------------------------------------
def _units(text: str, unit: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Matching units (lowercased) and the character span ``[start, end)`` of each in ``text``.

    ``unit="word"``: maximal runs of non-space characters. ``unit="char"``: single
    non-space characters (whitespace is ignored, so spacing differences do not hide a match).
    """
    if unit == "word":
        found = [(m.group().lower(), m.span()) for m in re.finditer(r"\S+", text)]
    else:
        found = [(c.lower(), (i, i + 1)) for i, c in enumerate(text) if not c.isspace()]
    return [u for u, _ in found], [s for _, s in found]


DECONTAMINATION_GRANULARITIES = ("document", "span")


@dataclass(frozen=True)
class Decontaminator:
    """An evaluation decontamination operator ``C_E`` (ftip-0072) against a protected collection.

    A match is an ``n``-gram of ``unit``\\ s (lowercased words, or non-space characters) shared
    with an item of ``protected``; an item shorter than ``n`` units contributes itself as one
    gram. ``granularity="document"`` removes a document with at least ``min_matches`` matched
    grams; ``"span"`` deletes the characters each matched gram covers (repeating until no
    match is left) and drops a document left with no text.
    """

    protected: BenchmarkSource
    n: int = 8
    unit: str = "word"
    granularity: str = "document"
    min_matches: int = 1
    revision: str = "1"
    _grams: frozenset = field(init=False, repr=False, compare=False)
    _gram_lengths: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.protected, BenchmarkSource):
            raise TypeError(f"the protected collection must be a BenchmarkSource, got {type(self.protected).__name__}")
        if self.unit not in ("word", "char"):
            raise ValueError(f"unit must be 'word' or 'char', got {self.unit!r}")
        if self.granularity not in DECONTAMINATION_GRANULARITIES:
            raise ValueError(f"granularity must be one of {DECONTAMINATION_GRANULARITIES}, got {self.granularity!r}")
        if not isinstance(self.n, int) or self.n < 1:
            raise ValueError(f"n must be an int >= 1, got {self.n!r}")
        if not isinstance(self.min_matches, int) or self.min_matches < 1:
            raise ValueError(f"min_matches must be an int >= 1, got {self.min_matches!r}")
        grams = set()
        for d in self.protected.items:
            units, _ = _units(d.text, self.unit)
            if 0 < len(units) < self.n:
                grams.add(tuple(units))
            grams.update(tuple(units[i:i + self.n]) for i in range(len(units) - self.n + 1))
        object.__setattr__(self, "_grams", frozenset(grams))
        object.__setattr__(self, "_gram_lengths", tuple(sorted({len(g) for g in grams})))

    def matches(self, doc: Document) -> list[tuple[int, int]]:
        """Character spans ``[start, end)`` of ``doc.text`` covered by each matched gram."""
        units, spans = _units(doc.text, self.unit)
        found = []
        for k in self._gram_lengths:
            for i in range(len(units) - k + 1):
                if tuple(units[i:i + k]) in self._grams:
                    found.append((spans[i][0], spans[i + k - 1][1]))
        return sorted(found)

    def is_contaminated(self, doc: Document) -> bool:
        return len(self.matches(doc)) >= self.min_matches

    def contamination_rate(self, corpus: Sequence[Document]) -> float:
        """Fraction of documents with at least ``min_matches`` matched grams."""
        corpus = _check_corpus(corpus)
        return sum(map(self.is_contaminated, corpus)) / len(corpus) if corpus else 0.0

    def _strip(self, doc: Document) -> Document | None:
        text = doc.text
        while True:
            spans = self.matches(Document(text, doc.source, doc.doc_id))
            if not spans:
                break
            keep, last = [], 0
            for start, end in spans:
                if start > last:
                    keep.append(text[last:start])
                last = max(last, end)
            keep.append(text[last:])
            text = "".join(keep)
        if not text.strip():
            return None
        answer = doc.answer if doc.answer is not None and text.endswith(doc.answer) else None
        return Document(text, doc.source, doc.doc_id, answer)

    def apply(self, corpus: Sequence[Document]) -> list[Document]:
        """``C_E(C)``."""
        corpus = _check_corpus(corpus)
        if self.granularity == "document":
            return [d for d in corpus if not self.is_contaminated(d)]
        out = []
        for d in corpus:
            kept = self._strip(d) if self.matches(d) else d
            if kept is not None:
                out.append(kept)
        return out

    def spec(self) -> dict[str, Any]:
        """The declaration: protected collection (name and hash), n-grams, normalization, granularity, revision."""
        return {"kind": "decontaminate", "protected": self.protected.name,
                "protected_hash": corpus_hash(self.protected.items), "n": self.n, "unit": self.unit,
                "normalization": "lowercase; whitespace ignored", "granularity": self.granularity,
                "min_matches": self.min_matches, "revision": self.revision}

    def spec_hash(self) -> str:
        """SHA-256 of :meth:`spec`."""
        return _hash_json(self.spec())


# ------------------------------------------------------------------------------------------------
Operator = DocumentFilter | Deduplicator | Decontaminator


@dataclass(frozen=True)
class PipelineRun:
    """The output of an :class:`OrderedPipeline` and its record."""

    corpus: list[Document]
    record: dict[str, Any]


@dataclass(frozen=True)
class OrderedPipeline:
    """An ordered pretraining data pipeline (ftip-0017): operators applied in the listed order.

    The book's order is filter, deduplication, decontamination: ``C_E(D(F#(C_raw)))``.
    """

    steps: tuple[Operator, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", tuple(self.steps))
        if not self.steps:
            raise ValueError("a pipeline needs at least one operator")
        for s in self.steps:
            if not isinstance(s, (DocumentFilter, Deduplicator, Decontaminator)):
                raise TypeError(f"pipeline steps are DocumentFilter, Deduplicator or Decontaminator, got {type(s).__name__}")

    def run(self, corpus: Sequence[Document]) -> PipelineRun:
        """Apply the steps; the record lists, per step, its spec and the sizes and hashes around it."""
        current = _check_corpus(corpus)
        steps = []
        for s in self.steps:
            before = len(current)
            current = s.apply(current)
            steps.append({"spec": s.spec(), "in": before, "out": len(current), "out_hash": corpus_hash(current)})
        record = {"order": [s.spec()["kind"] for s in self.steps], "steps": steps,
                  "input_hash": corpus_hash(corpus), "output_hash": corpus_hash(current)}
        record["pipeline_hash"] = _hash_json([s.spec() for s in self.steps])
        return PipelineRun(current, record)

    def __call__(self, corpus: Sequence[Document]) -> list[Document]:
        return self.run(corpus).corpus
