"""Pretraining source mixtures (ftip-0016).

A :class:`SourceMixture` is the pair ``((Q_s), alpha)``: to draw a document, draw a source ``s``
with probability ``alpha_s`` and then a document from ``Q_s``. It induces the document law
``Q_alpha(A) = sum_s alpha_s Q_s(A)``. The weights are sampling frequencies, not byte shares;
when they come from a rule (e.g. temperature weights ``alpha_s ~ n_s^(1/tau)``) the rule is
recorded with them in the mixture's ``rule``.
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ftipbook.data.corpus import Document, FiniteSource, Source, toy_sources

#: Weights of the book's standard mixture, in the order of :func:`~ftipbook.data.corpus.toy_sources`
#: (add2, add3, templates, code, prose).
TOY_WEIGHTS = (Fraction(1, 5), Fraction(1, 10), Fraction(1, 4), Fraction(3, 20), Fraction(3, 10))


def temperature_weights(counts: Sequence[float], tau: float) -> tuple[float, ...]:
    """``alpha_s = n_s^(1/tau) / sum_r n_r^(1/tau)``: ``tau = 1`` is size-proportional, large ``tau`` tends to uniform."""
    if not counts or any(not (isinstance(n, (int, float)) and math.isfinite(n) and n > 0) for n in counts):
        raise ValueError(f"counts must be a nonempty list of positive finite numbers, got {list(counts)!r}")
    if not (isinstance(tau, (int, float)) and math.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be a positive finite number, got {tau!r}")
    powered = [float(n) ** (1.0 / tau) for n in counts]
    total = sum(powered)
    return tuple(p / total for p in powered)


@dataclass(frozen=True)
class SourceMixture:
    """``((Q_s)_s, alpha)`` of ftip-0016; ``rule`` records how ``alpha`` was chosen."""

    sources: tuple[Source, ...]
    weights: tuple[float | Fraction, ...]
    rule: str = "declared"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", tuple(self.sources))
        object.__setattr__(self, "weights", tuple(self.weights))
        if not self.sources:
            raise ValueError("a mixture needs at least one source")
        if len(self.weights) != len(self.sources):
            raise ValueError(f"{len(self.sources)} sources but {len(self.weights)} weights")
        for s in self.sources:
            if not isinstance(s, Source):
                raise TypeError(f"mixture components must be Sources, got {type(s).__name__}")
            if s.protected:
                raise ValueError(f"{s.name!r} is a protected evaluation collection and cannot be a training source")
        names = [s.name for s in self.sources]
        if len(set(names)) != len(names):
            raise ValueError(f"source names must be unique, got {names}")
        for w in self.weights:
            if not (isinstance(w, (int, float, Fraction)) and not isinstance(w, bool) and w >= 0 and math.isfinite(w)):
                raise ValueError(f"weights must be finite numbers >= 0, got {w!r}")
        total = sum(self.weights)
        exact = all(isinstance(w, (int, Fraction)) for w in self.weights)
        if (total != 1) if exact else abs(total - 1) > 1e-9:
            raise ValueError(f"weights must sum to 1 (a point of the simplex), got sum {total}")

    @classmethod
    def with_temperature(cls, sources: Sequence[Source], counts: Sequence[float], tau: float) -> SourceMixture:
        """Temperature weights from source sizes ``counts``; the rule, with ``tau`` and the counts, is recorded."""
        return cls(tuple(sources), temperature_weights(counts, tau), rule=f"temperature(tau={tau}, counts={list(counts)})")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.sources)

    @property
    def alpha(self) -> dict[str, float | Fraction]:
        """``{source name: alpha_s}``."""
        return dict(zip(self.names, self.weights))

    def choose(self, rng: random.Random) -> int:
        """The index of a source drawn with probabilities ``alpha``."""
        u, acc = rng.random(), 0.0
        for i, w in enumerate(self.weights):
            acc += float(w)
            if u < acc:
                return i
        return max(i for i, w in enumerate(self.weights) if w > 0)  # u landed in float round-off above the sum

    def sample(self, rng: random.Random) -> Document:
        """One draw from ``Q_alpha``: a source, then a document from it."""
        if not isinstance(rng, random.Random):
            raise TypeError(f"a mixture draws from a random.Random, got {type(rng).__name__}")
        return self.sources[self.choose(rng)].sample(rng)

    def documents(self, n: int, seed: int) -> list[Document]:
        """A raw corpus: ``n`` independent draws from ``Q_alpha`` with ``random.Random(seed)``."""
        if not isinstance(n, int) or n < 0:
            raise ValueError(f"n must be an int >= 0, got {n!r}")
        rng = random.Random(seed)
        return [self.sample(rng) for _ in range(n)]

    def probability(self, event: Callable[[Document], bool]) -> Fraction:
        """``Q_alpha(A) = sum_s alpha_s Q_s(A)`` exactly; needs every source to be a ``FiniteSource``."""
        total = Fraction(0)
        for s, w in zip(self.sources, self.weights):
            if not isinstance(s, FiniteSource):
                raise TypeError(f"source {s.name!r} has no enumerable support; exact Q_alpha(A) needs FiniteSources")
            if w:
                total += Fraction(w) * s.probability(event)
        return total

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serializable record: source descriptions, weights (as strings when exact) and the rule."""
        return {
            "sources": [repr(s) for s in self.sources],
            "weights": [str(w) if isinstance(w, Fraction) else w for w in self.weights],
            "rule": self.rule,
        }


def toy_mixture() -> SourceMixture:
    """The book's standard mixture: :func:`~ftipbook.data.corpus.toy_sources` with :data:`TOY_WEIGHTS`."""
    return SourceMixture(toy_sources(), TOY_WEIGHTS)
