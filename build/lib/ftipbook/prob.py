"""Finite probability and the token interface (ftip-000A, 000B, 000C, 000G, 000H, 000I, 000J).

* :class:`FiniteLaw`: a point of the simplex ``Delta(X)`` on a finite set, with events,
  conditioning (refused on probability-zero events), expectation, push-forward and products.
  Probabilities stay exact when given as ``int``/``Fraction``; floats are accepted with a
  ``1e-9`` tolerance on the total.
* :func:`preimage`, :func:`expectation`, :func:`is_independent`: the notation of ftip-000A.
* :class:`FiniteKernel` and :class:`MeasurableKernel`: conditional laws on finite spaces (sums)
  and on real-valued outputs (integrals, via ``torch.distributions``), the contrast of ftip-000C.
* :class:`NextTokenLaw`: the observable interface of ftip-000H, ``prefix -> law over V``. The
  ftipbook ``DecoderLM`` implements it (``next_token_law``), and so does :class:`TableLM`, a
  lookup table with exact probabilities.
* Sequences (ftip-000G): one-based :func:`prefix`, :func:`is_completed`; continuation
  probability and NLL (ftip-000I) by :func:`sequence_prob` / :func:`sequence_nll`; the exact
  enumeration of every stopped continuation under an ``eos`` token and a length cap
  (:class:`PrefixTree`, :func:`enumerate_continuations`), each leaf carrying its
  :class:`~ftipbook.model.generate.StopReason` so the capped mass is recorded separately.
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

import torch

from ftipbook.model.generate import StopReason

Prob = int | float | Fraction
_TOL = 1e-9


def _sum(values: Iterable[Any], start: Any = 0) -> Any:
    """``start + v_1 + v_2 + ...`` added left to right, as written.

    Python 3.12's built-in ``sum`` compensates float rounding, so it returns other bits than 3.11
    for the same floats (ten 0.1 sum to 1.0 there, to 0.9999999999999999 before); adding in order
    gives every Python the same float law. Fractions are exact either way.
    """
    total = start
    for v in values:
        total = total + v
    return total


def _is_exact(values: Iterable[Prob]) -> bool:
    return all(isinstance(v, (int, Fraction)) and not isinstance(v, bool) for v in values)


def _check_prob(value: object, what: str) -> Prob:
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)):
        raise TypeError(f"{what} must be an int, float or Fraction, got {type(value).__name__}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a finite number >= 0, got {value!r}")
    return value


# ------------------------------------------------------------------------------------------------
class FiniteLaw:
    """A finite probability law ``p`` in ``Delta(X)`` (ftip-000B): ``{outcome: p(outcome)}``.

    Outcomes keep the order they were given in (sampling and printing follow it). Outcomes of
    probability 0 may be listed; they belong to ``X`` but not to the support.
    """

    def __init__(self, probs: Mapping[Hashable, Prob]) -> None:
        if not isinstance(probs, Mapping) or not probs:
            raise ValueError(f"probs must be a nonempty mapping {{outcome: probability}}, got {probs!r}")
        self._p = {x: _check_prob(v, f"probs: p({x!r})") for x, v in probs.items()}
        total = _sum(self._p.values())
        if (total != 1) if _is_exact(self._p.values()) else abs(total - 1) > _TOL:
            raise ValueError(f"probs: probabilities must sum to 1, got {total}")

    @classmethod
    def uniform(cls, outcomes: Iterable[Hashable]) -> FiniteLaw:
        """Equal exact mass ``1/|X|`` on each outcome."""
        outcomes = list(dict.fromkeys(outcomes))
        if not outcomes:
            raise ValueError("the uniform law needs at least one outcome")
        return cls({x: Fraction(1, len(outcomes)) for x in outcomes})

    @classmethod
    def from_weights(cls, weights: Mapping[Hashable, Prob]) -> FiniteLaw:
        """Normalize nonnegative ``weights`` (exact when they are ints/Fractions)."""
        weights = {x: _check_prob(w, f"weight of {x!r}") for x, w in weights.items()}
        total = _sum(weights.values())
        if total == 0:
            raise ValueError("weights sum to 0: there is no law to normalize to")
        if _is_exact(weights.values()):
            return cls({x: Fraction(w) / total for x, w in weights.items()})
        return cls({x: w / total for x, w in weights.items()})

    # -- the set and its events --------------------------------------------------------------------
    @property
    def outcomes(self) -> tuple[Hashable, ...]:
        """``X``, in the given order."""
        return tuple(self._p)

    @property
    def support(self) -> tuple[Hashable, ...]:
        """Outcomes of positive probability."""
        return tuple(x for x, v in self._p.items() if v > 0)

    @property
    def exact(self) -> bool:
        """Whether every probability is an ``int`` or ``Fraction``."""
        return _is_exact(self._p.values())

    def __call__(self, outcome: Hashable) -> Prob:
        """``p(x)``; ``KeyError`` for an outcome outside ``X``."""
        if outcome not in self._p:
            raise KeyError(f"{outcome!r} is not an outcome of this law")
        return self._p[outcome]

    def items(self) -> Iterator[tuple[Hashable, Prob]]:
        return iter(self._p.items())

    def _event(self, event: Iterable[Hashable] | Callable[[Hashable], bool]) -> set:
        if callable(event):
            return {x for x in self._p if event(x)}
        chosen = set(event)
        unknown = chosen - set(self._p)
        if unknown:
            raise ValueError(f"the event has outcomes outside X: {sorted(map(repr, unknown))[:5]}")
        return chosen

    def prob(self, event: Iterable[Hashable] | Callable[[Hashable], bool]) -> Prob:
        """``p(A) = sum_{x in A} p(x)``; ``A`` is a set of outcomes or a predicate."""
        chosen = self._event(event)
        return _sum((v for x, v in self._p.items() if x in chosen), Fraction(0) if self.exact else 0.0)

    def condition(self, event: Iterable[Hashable] | Callable[[Hashable], bool]) -> FiniteLaw:
        """``p(. | A)``, a law on ``A``; refuses ``p(A) = 0``."""
        chosen = self._event(event)
        p_a = self.prob(chosen)
        if p_a == 0:
            raise ValueError("cannot condition on an event of probability 0 (p(A) = 0); use a kernel instead")
        return FiniteLaw({x: (Fraction(v) / p_a if self.exact else v / p_a) for x, v in self._p.items() if x in chosen})

    def conditional_prob(self, b: Iterable[Hashable] | Callable[[Hashable], bool],
                         a: Iterable[Hashable] | Callable[[Hashable], bool]) -> Prob:
        """``p(B | A) = p(A and B) / p(A)``; refuses ``p(A) = 0``."""
        a_set, b_set = self._event(a), self._event(b)
        p_a = self.prob(a_set)
        if p_a == 0:
            raise ValueError("p(B | A) is undefined when p(A) = 0")
        joint = self.prob(a_set & b_set)
        return Fraction(joint) / p_a if self.exact else joint / p_a

    # -- random variables ----------------------------------------------------------------------------
    def expectation(self, z: Callable[[Hashable], Prob]) -> Prob:
        """``E_{x~p}[Z(x)] = sum_x p(x) Z(x)``."""
        return _sum(v * z(x) for x, v in self._p.items())

    def pushforward(self, f: Callable[[Hashable], Hashable]) -> FiniteLaw:
        """The law of the random variable ``f``: ``p_f(y) = p(f^{-1}({y}))``."""
        out: dict[Hashable, Prob] = {}
        for x, v in self._p.items():
            y = f(x)
            out[y] = out.get(y, 0) + v
        return FiniteLaw(out)

    def product(self, other: FiniteLaw) -> FiniteLaw:
        """The independent joint law on pairs ``(x, y)``: ``p(x) q(y)``."""
        return FiniteLaw({(x, y): v * w for x, v in self._p.items() for y, w in other.items()})

    def sample(self, rng: random.Random) -> Hashable:
        """One draw, by inversion of the cumulative probabilities in outcome order."""
        if not isinstance(rng, random.Random):
            raise TypeError(f"sampling needs a random.Random, got {type(rng).__name__}")
        u, acc = rng.random(), 0.0
        for x, v in self._p.items():
            acc += float(v)
            if u < acc:
                return x
        return self.support[-1]  # u fell in float round-off above the total

    def samples(self, n: int, seed: int) -> list[Hashable]:
        """``n`` independent draws with ``random.Random(seed)``."""
        rng = random.Random(seed)
        return [self.sample(rng) for _ in range(n)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FiniteLaw) and self._p == other._p

    def __repr__(self) -> str:
        body = ", ".join(f"{x!r}: {v}" for x, v in list(self._p.items())[:6])
        return f"FiniteLaw({{{body}{', ...' if len(self._p) > 6 else ''}}})"


def preimage(f: Callable[[Hashable], Hashable], a: Iterable[Hashable], domain: Iterable[Hashable]) -> set:
    """``f^{-1}(A) = {x in X : f(x) in A}`` (ftip-000A)."""
    a = set(a)
    return {x for x in domain if f(x) in a}


def expectation(law: FiniteLaw, z: Callable[[Hashable], Prob]) -> Prob:
    """``E_{x~p}[Z(x)]`` (ftip-000A)."""
    return law.expectation(z)


def is_independent(law: FiniteLaw, z: Callable[[Hashable], Hashable], w: Callable[[Hashable], Hashable],
                   *, tol: float = 1e-12) -> bool:
    """Whether ``p(Z = a, W = b) = p(Z = a) p(W = b)`` for every pair of values (exactly, for exact laws)."""
    joint = law.pushforward(lambda x: (z(x), w(x)))
    pz, pw = law.pushforward(z), law.pushforward(w)
    for a in pz.outcomes:
        for b in pw.outcomes:
            lhs = joint((a, b)) if (a, b) in joint.outcomes else 0
            rhs = pz(a) * pw(b)
            if (lhs != rhs) if law.exact else abs(lhs - rhs) > tol:
                return False
    return True


# ------------------------------------------------------------------------------------------------
class FiniteKernel:
    """A conditional law on finite spaces: ``K(. | x)`` is a :class:`FiniteLaw` for each ``x``."""

    def __init__(self, rows: Mapping[Hashable, FiniteLaw | Mapping[Hashable, Prob]]) -> None:
        if not rows:
            raise ValueError("a kernel needs at least one row")
        self.rows = {x: r if isinstance(r, FiniteLaw) else FiniteLaw(r) for x, r in rows.items()}

    def __call__(self, x: Hashable) -> FiniteLaw:
        if x not in self.rows:
            raise KeyError(f"the kernel has no row for {x!r}")
        return self.rows[x]

    def joint(self, law: FiniteLaw) -> FiniteLaw:
        """``p(x) K(y | x)`` on pairs ``(x, y)``."""
        return FiniteLaw({(x, y): v * w for x, v in law.items() for y, w in self(x).items()})

    def marginal(self, law: FiniteLaw) -> FiniteLaw:
        """``sum_x p(x) K(. | x)``."""
        return self.joint(law).pushforward(lambda xy: xy[1])


@dataclass(frozen=True)
class MeasurableKernel:
    """A conditional law with real-valued outputs: ``law(x)`` is a ``torch.distributions`` law.

    Points have probability 0, so one conditions on events of positive probability (intervals,
    :meth:`prob`) or works with the kernel itself; sums over outcomes become integrals
    (:meth:`expectation`, by trapezoid quadrature of the density).
    """

    law: Callable[[Any], torch.distributions.Distribution]

    def prob(self, x: Any, low: float, high: float) -> float:
        """``K([low, high] | x)`` from the cumulative distribution function."""
        if not low <= high:
            raise ValueError(f"need low <= high, got [{low}, {high}]")
        d = self.law(x)
        return float(d.cdf(torch.tensor(high, dtype=torch.float64)) - d.cdf(torch.tensor(low, dtype=torch.float64)))

    def point_prob(self, x: Any, y: float) -> float:
        """``K({y} | x)``: 0 for a law with a density."""
        return self.prob(x, y, y)

    def expectation(self, x: Any, f: Callable[[torch.Tensor], torch.Tensor], low: float, high: float,
                    n: int = 20001) -> float:
        """``int_low^high f(y) k(y | x) dy`` by the trapezoid rule on ``n`` points."""
        ys = torch.linspace(low, high, n, dtype=torch.float64)
        density = self.law(x).log_prob(ys).exp()
        return float(torch.trapezoid(f(ys) * density, ys))


# ------------------------------------------------------------------------------------------------
@runtime_checkable
class NextTokenLaw(Protocol):
    """``pi_theta : V* -> Delta(V)`` (ftip-000H): the law of the next token after ``prefix``.

    Returns a vector indexed by token id (a float64 tensor for ``DecoderLM``, exact fractions
    for :class:`TableLM`). It says nothing about how the law is computed.
    """

    def next_token_law(self, prefix: Sequence[int]) -> Sequence[Prob] | torch.Tensor:
        """``pi(. | prefix)``, indexed by token id."""


@dataclass(frozen=True)
class TableLM:
    """A next-token law given by a table: ``table[prefix names] = {token name: probability}``.

    ``vocab`` names the token ids ``0..|V|-1``. Prefixes missing from the table use ``default``
    (an error if there is none). Probabilities stay exact when given as fractions.
    """

    vocab: tuple[str, ...]
    table: Mapping[tuple[str, ...], Mapping[str, Prob]]
    default: Mapping[str, Prob] | None = None
    _laws: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "vocab", tuple(self.vocab))
        if not self.vocab or len(set(self.vocab)) != len(self.vocab):
            raise ValueError(f"vocab must list distinct token names, got {self.vocab!r}")
        laws = {}
        for key, row in list(self.table.items()) + ([(None, self.default)] if self.default is not None else []):
            unknown = set(row) - set(self.vocab) | (set(key) - set(self.vocab) if key is not None else set())
            if unknown:
                raise ValueError(f"table entry {key!r} names tokens outside the vocabulary: {sorted(unknown)}")
            law = FiniteLaw({name: row.get(name, 0) for name in self.vocab})
            laws[key] = tuple(law(name) for name in self.vocab)
        object.__setattr__(self, "_laws", laws)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def id(self, name: str) -> int:
        """The id of token ``name``."""
        if name not in self.vocab:
            raise KeyError(f"{name!r} is not in the vocabulary {self.vocab}")
        return self.vocab.index(name)

    def ids(self, names: Iterable[str]) -> list[int]:
        return [self.id(n) for n in names]

    def names(self, ids: Iterable[int]) -> tuple[str, ...]:
        return tuple(self.vocab[i] for i in ids)

    def next_token_law(self, prefix: Sequence[int]) -> tuple[Prob, ...]:
        """``pi(. | prefix)`` as a tuple indexed by token id."""
        ids = [int(i) for i in prefix]
        if any(not 0 <= i < len(self.vocab) for i in ids):
            raise ValueError(f"prefix {ids} has ids outside [0, {len(self.vocab)})")
        key = self.names(ids)
        if key in self._laws:
            return self._laws[key]
        if None in self._laws:
            return self._laws[None]
        raise KeyError(f"the table has no law for prefix {key} and no default")


# ------------------------------------------------------------------------------------------------
def prefix(x: Sequence[Hashable], t: int) -> tuple:
    """``x_{<t} = x_{1:t-1}`` with one-based ``t`` in ``1..|x|+1``; ``x_{<1}`` is empty (ftip-000G)."""
    if not isinstance(t, int) or not 1 <= t <= len(x) + 1:
        raise ValueError(f"t must be an int in 1..{len(x) + 1} (positions are one-based), got {t!r}")
    return tuple(x[: t - 1])


def is_completed(y: Sequence[int], eos: int) -> bool:
    """Whether ``y`` is a completed continuation: it ends with ``eos`` and has no earlier ``eos`` (ftip-000G)."""
    y = list(y)
    return bool(y) and y[-1] == eos and eos not in y[:-1]


def _factor(law: Sequence[Prob] | torch.Tensor, token: int) -> Prob:
    if not 0 <= token < len(law):
        raise ValueError(f"token {token} is outside the law's vocabulary of size {len(law)}")
    p = law[token]
    return p.item() if isinstance(p, torch.Tensor) else p


def token_probs(lm: NextTokenLaw, prompt: Sequence[int], continuation: Sequence[int]) -> list[Prob]:
    """The factors ``pi(y_t | x y_{<t})``, ``t = 1..m``, one ``next_token_law`` call each."""
    context = [int(i) for i in prompt]
    out = []
    for y in continuation:
        out.append(_factor(lm.next_token_law(context), int(y)))
        context.append(int(y))
    return out


def sequence_prob(lm: NextTokenLaw, prompt: Sequence[int], continuation: Sequence[int]) -> Prob:
    """``P(y_{1:m} | x) = prod_t pi(y_t | x y_{<t})`` (ftip-000I); exact for exact laws."""
    return math.prod(token_probs(lm, prompt, continuation), start=Fraction(1))


def sequence_nll(lm: NextTokenLaw, prompt: Sequence[int], continuation: Sequence[int]) -> float:
    """``-log P(y_{1:m} | x) = -sum_t log pi(y_t | x y_{<t})``; ``inf`` when a factor is 0."""
    factors = token_probs(lm, prompt, continuation)
    return math.inf if any(p == 0 for p in factors) else -_sum(math.log(p) for p in factors)


@dataclass(frozen=True)
class Continuation:
    """A stopped continuation: its tokens, probability and why it stopped."""

    tokens: tuple[int, ...]
    prob: Prob
    stop_reason: StopReason


class PrefixTree:
    """The tree of every continuation of ``prompt`` under ``lm``, stopped at ``eos`` or after ``max_len`` tokens.

    ``edges[node][token]`` is ``pi(token | prompt node)`` for each node (a continuation prefix,
    a tuple of ids) and token of positive probability; the leaves are the stopped continuations.
    Enumeration is exponential in ``max_len``: meant for small vocabularies and caps.
    """

    def __init__(self, lm: NextTokenLaw, prompt: Sequence[int], *, eos: int | None, max_len: int) -> None:
        if not isinstance(max_len, int) or max_len < 1:
            raise ValueError(f"max_len must be an int >= 1, got {max_len!r}")
        self.prompt, self.eos, self.max_len = tuple(int(i) for i in prompt), eos, max_len
        self.edges: dict[tuple[int, ...], dict[int, Prob]] = {}
        self.leaves: list[Continuation] = []
        self._expand(lm, (), Fraction(1))

    def _expand(self, lm: NextTokenLaw, node: tuple[int, ...], mass: Prob) -> None:
        law = lm.next_token_law(self.prompt + node)
        children = {}
        for token in range(len(law)):
            p = _factor(law, token)
            if p > 0:
                children[token] = p
        self.edges[node] = children
        for token, p in children.items():
            child, child_mass = node + (token,), mass * p
            if token == self.eos:
                self.leaves.append(Continuation(child, child_mass, StopReason.EOS))
            elif len(child) == self.max_len:
                self.leaves.append(Continuation(child, child_mass, StopReason.MAX_LEN))
            else:
                self._expand(lm, child, child_mass)

    def path_prob(self, continuation: Sequence[int]) -> Prob:
        """The product of the edge probabilities along ``continuation`` (0 off the tree)."""
        node, mass = (), Fraction(1)
        for token in continuation:
            p = self.edges.get(node, {}).get(int(token), 0)
            mass, node = mass * p, node + (int(token),)
        return mass

    def mass(self, reason: StopReason | None = None) -> Prob:
        """Total probability of the leaves (with stop reason ``reason``, if given); all leaves sum to 1."""
        return sum((c.prob for c in self.leaves if reason is None or c.stop_reason is reason), Fraction(0))


def enumerate_continuations(lm: NextTokenLaw, prompt: Sequence[int], *, eos: int | None,
                            max_len: int) -> list[Continuation]:
    """Every stopped continuation with its probability and stop reason (depth-first, by token id)."""
    return PrefixTree(lm, prompt, eos=eos, max_len=max_len).leaves
