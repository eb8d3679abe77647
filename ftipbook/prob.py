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

from ftipbook import checks
from ftipbook.checks import NotFoundError, show
from ftipbook.model.generate import StopReason

Prob = int | float | Fraction
_TOL = 1e-9
#: The most draws :meth:`FiniteLaw.samples` makes in one call.
MAX_SAMPLES = 10**7
#: The most nodes :class:`PrefixTree` expands (enumeration is exponential in ``max_len``).
MAX_TREE_NODES = 10**5
#: The longest continuation :class:`PrefixTree` enumerates (``max_len``).
MAX_TREE_DEPTH = 4096
#: How far the probabilities of a floating-point next-token law may sum from 1.
LAW_SUM_TOL = 1e-6
#: The largest float; a float law's weights must stay below it.
_FLOAT_MAX = 1.7976931348623157e308


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
    return checks.real(what, value, 0)


# ------------------------------------------------------------------------------------------------
class FiniteLaw:
    """A finite probability law ``p`` in ``Delta(X)`` (ftip-000B): ``{outcome: p(outcome)}``.

    Outcomes keep the order they were given in (sampling and printing follow it). Outcomes of
    probability 0 may be listed; they belong to ``X`` but not to the support.
    """

    def __init__(self, probs: Mapping[Hashable, Prob]) -> None:
        checks.mapping("probs", probs)
        self._p = {x: _check_prob(v, f"probs: p({show(x)})") for x, v in probs.items()}
        big = [x for x, v in self._p.items() if v > 1]
        if big and not _is_exact(self._p.values()):  # (checked before a float sum can overflow)
            raise ValueError(f"probs: probabilities must sum to 1, got p({show(big[0])}) = {show(self._p[big[0]])}")
        total = _sum(self._p.values())
        if (total != 1) if _is_exact(self._p.values()) else abs(total - 1) > _TOL:
            raise ValueError(f"probs: probabilities must sum to 1, got {total}")

    @classmethod
    def uniform(cls, outcomes: Iterable[Hashable]) -> FiniteLaw:
        """Equal exact mass ``1/|X|`` on each outcome."""
        outcomes = checks.items("outcomes", outcomes, nonempty=True, what="outcomes")
        for i, x in enumerate(outcomes):
            checks.hashable(f"outcomes[{i}]", x)
        outcomes = list(dict.fromkeys(outcomes))
        return cls({x: Fraction(1, len(outcomes)) for x in outcomes})

    @classmethod
    def from_weights(cls, weights: Mapping[Hashable, Prob]) -> FiniteLaw:
        """Normalize nonnegative ``weights`` (exact when they are ints/Fractions)."""
        checks.mapping("weights", weights)
        weights = {x: _check_prob(w, f"weights[{show(x)}]") for x, w in weights.items()}
        if not _is_exact(weights.values()):  # floats: every weight must be a float
            big = [x for x, w in weights.items() if w > _FLOAT_MAX]
            if big:
                raise ValueError(f"weights[{show(big[0])}] is too large for a float law; give every weight as an "
                                 f"int or Fraction for an exact law")
            weights = {x: float(w) for x, w in weights.items()}
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
        """``p(x)``; :class:`~ftipbook.checks.NotFoundError` (a ``KeyError``) for an outcome outside ``X``."""
        checks.hashable("outcome", outcome)
        if outcome not in self._p:
            raise NotFoundError(f"outcome={show(outcome)} is not an outcome of this law")
        return self._p[outcome]

    def items(self) -> Iterator[tuple[Hashable, Prob]]:
        return iter(self._p.items())

    def _event(self, event: Iterable[Hashable] | Callable[[Hashable], bool], name: str = "event") -> set:
        if callable(event):
            return {x for x in self._p if event(x)}
        chosen = checks.items(name, event, what="outcomes")
        for x in chosen:
            checks.hashable(f"an outcome of {name}", x)
        chosen = set(chosen)
        unknown = chosen - set(self._p)
        if unknown:
            raise ValueError(f"the event has outcomes outside X ({name}): {sorted(map(show, unknown))[:5]}")
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
        a_set, b_set = self._event(a, "a"), self._event(b, "b")
        p_a = self.prob(a_set)
        if p_a == 0:
            raise ValueError("p(B | A) is undefined when p(A) = 0: the event a has probability 0")
        joint = self.prob(a_set & b_set)
        return Fraction(joint) / p_a if self.exact else joint / p_a

    # -- random variables ----------------------------------------------------------------------------
    def expectation(self, z: Callable[[Hashable], Prob]) -> Prob:
        """``E_{x~p}[Z(x)] = sum_x p(x) Z(x)``; ``Z`` must give finite real numbers."""
        checks.function("z", z)
        z = _real_valued(z)
        return _sum(v * z(x) for x, v in self._p.items())

    def pushforward(self, f: Callable[[Hashable], Hashable]) -> FiniteLaw:
        """The law of the random variable ``f``: ``p_f(y) = p(f^{-1}({y}))``."""
        checks.function("f", f)
        out: dict[Hashable, Prob] = {}
        for x, v in self._p.items():
            y = checks.hashable(f"f({show(x)})", f(x))
            out[y] = out.get(y, 0) + v
        return FiniteLaw(out)

    def product(self, other: FiniteLaw) -> FiniteLaw:
        """The independent joint law on pairs ``(x, y)``: ``p(x) q(y)``."""
        checks.instance("other", other, FiniteLaw)
        return FiniteLaw({(x, y): v * w for x, v in self._p.items() for y, w in other.items()})

    def sample(self, rng: random.Random) -> Hashable:
        """One draw, by inversion of the cumulative probabilities in outcome order."""
        checks.rng("rng", rng)
        u, acc = rng.random(), 0.0
        for x, v in self._p.items():
            acc += float(v)
            if u < acc:
                return x
        return self.support[-1]  # u fell in float round-off above the total

    def samples(self, n: int, seed: int) -> list[Hashable]:
        """``n`` independent draws (at most :data:`MAX_SAMPLES`) with ``random.Random(seed)``; ``seed`` is
        an int in ``[0, 2**64)``."""
        n = checks.integer("n", n, 0, MAX_SAMPLES)
        rng = random.Random(checks.seed("seed", seed))
        return [self.sample(rng) for _ in range(n)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FiniteLaw) and self._p == other._p

    def __repr__(self) -> str:
        body = ", ".join(f"{x!r}: {v}" for x, v in list(self._p.items())[:6])
        return f"FiniteLaw({{{body}{', ...' if len(self._p) > 6 else ''}}})"


def preimage(f: Callable[[Hashable], Hashable], a: Iterable[Hashable], domain: Iterable[Hashable]) -> set:
    """``f^{-1}(A) = {x in X : f(x) in A}`` (ftip-000A)."""
    checks.function("f", f)
    a = set(checks.hashable("a", x) for x in checks.items("a", a))
    return {x for x in checks.items("domain", domain) if f(x) in a}


def expectation(law: FiniteLaw, z: Callable[[Hashable], Prob]) -> Prob:
    """``E_{x~p}[Z(x)]`` (ftip-000A)."""
    return checks.instance("law", law, FiniteLaw).expectation(z)


def is_independent(law: FiniteLaw, z: Callable[[Hashable], Hashable], w: Callable[[Hashable], Hashable],
                   *, tol: float = 1e-12) -> bool:
    """Whether ``p(Z = a, W = b) = p(Z = a) p(W = b)`` for every pair of values (exactly, for exact laws)."""
    checks.instance("law", law, FiniteLaw)
    checks.function("z", z)
    checks.function("w", w)
    tol = checks.real("tol", tol, 0)
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
        checks.mapping("rows", rows)
        self.rows = {}
        for x, r in rows.items():
            if not isinstance(r, (FiniteLaw, Mapping)):
                raise TypeError(f"rows[{show(x)}] must be a FiniteLaw or a mapping {{outcome: probability}}, got "
                                f"{type(r).__name__} {show(r)}")
            try:
                self.rows[x] = r if isinstance(r, FiniteLaw) else FiniteLaw(r)
            except (TypeError, ValueError) as err:
                raise type(err)(f"rows[{show(x)}]: {err}") from None

    def __call__(self, x: Hashable) -> FiniteLaw:
        checks.hashable("x", x)
        if x not in self.rows:
            raise NotFoundError(f"x={show(x)}: the kernel has no row for it")
        return self.rows[x]

    def joint(self, law: FiniteLaw) -> FiniteLaw:
        """``p(x) K(y | x)`` on pairs ``(x, y)``."""
        checks.instance("law", law, FiniteLaw)
        return FiniteLaw({(x, y): v * w for x, v in law.items() for y, w in self(x).items()})

    def marginal(self, law: FiniteLaw) -> FiniteLaw:
        """``sum_x p(x) K(. | x)``."""
        checks.instance("law", law, FiniteLaw)
        return self.joint(law).pushforward(lambda xy: xy[1])


@dataclass(frozen=True)
class MeasurableKernel:
    """A conditional law with real-valued outputs: ``law(x)`` is a ``torch.distributions`` law.

    Points have probability 0, so one conditions on events of positive probability (intervals,
    :meth:`prob`) or works with the kernel itself; sums over outcomes become integrals
    (:meth:`expectation`, by trapezoid quadrature of the density).
    """

    law: Callable[[Any], torch.distributions.Distribution]

    def __post_init__(self) -> None:
        checks.function("law", self.law)

    def prob(self, x: Any, low: float, high: float) -> float:
        """``K([low, high] | x)`` from the cumulative distribution function (infinite ends allowed)."""
        low = float(checks.real("low", low, finite=False))
        high = float(checks.real("high", high, finite=False))
        if not low <= high:
            raise ValueError(f"need low <= high, got low={low}, high={high}")
        d = self.law(x)
        return float(d.cdf(torch.tensor(high, dtype=torch.float64)) - d.cdf(torch.tensor(low, dtype=torch.float64)))

    def point_prob(self, x: Any, y: float) -> float:
        """``K({y} | x)``: 0 for a law with a density."""
        y = checks.real("y", y)
        return self.prob(x, y, y)

    def expectation(self, x: Any, f: Callable[[torch.Tensor], torch.Tensor], low: float, high: float,
                    n: int = 20001) -> float:
        """``int_low^high f(y) k(y | x) dy`` by the trapezoid rule on ``n`` points (``2 <= n <= 10**7``)."""
        checks.function("f", f)
        low, high = float(checks.real("low", low)), float(checks.real("high", high))
        if not low < high:
            raise ValueError(f"need low < high, got low={low}, high={high}")
        n = checks.integer("n", n, 2, 10**7)
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
        vocab = tuple(checks.items("vocab", self.vocab, nonempty=True, what="token names"))
        for i, name in enumerate(vocab):
            checks.text(f"vocab[{i}]", name)
        object.__setattr__(self, "vocab", vocab)
        if len(set(self.vocab)) != len(self.vocab):
            raise ValueError(f"vocab must list distinct token names, got {show(self.vocab)}")
        checks.mapping("table", self.table, nonempty=False)
        if self.default is not None:
            checks.mapping("default", self.default)
        laws = {}
        for key, row in list(self.table.items()) + ([(None, self.default)] if self.default is not None else []):
            where = "default" if key is None else f"table[{show(key)}]"
            if key is not None and not isinstance(key, tuple):
                raise TypeError(f"table keys must be tuples of token names, got {show(key)}")
            checks.mapping(where, row)
            unknown = set(row) - set(self.vocab) | (set(key) - set(self.vocab) if key is not None else set())
            if unknown:
                raise ValueError(f"{where} names tokens outside the vocabulary: {sorted(map(show, unknown))}")
            try:
                law = FiniteLaw({name: row.get(name, 0) for name in self.vocab})
            except (TypeError, ValueError) as err:
                raise type(err)(f"{where}: {err}") from None
            laws[key] = tuple(law(name) for name in self.vocab)
        object.__setattr__(self, "_laws", laws)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def id(self, name: str) -> int:
        """The id of token ``name``."""
        return self._id(name, "name")

    def _id(self, name: str, label: str) -> int:
        if not isinstance(name, str) or name not in self.vocab:
            raise NotFoundError(f"{label}={show(name)} is not in the vocabulary {show(self.vocab)}")
        return self.vocab.index(name)

    def ids(self, names: Iterable[str]) -> list[int]:
        names = list(names) if isinstance(names, str) else checks.items("names", names, what="token names")
        return [self._id(n, f"names[{i}]") for i, n in enumerate(names)]

    def names(self, ids: Iterable[int]) -> tuple[str, ...]:
        return tuple(self.vocab[i] for i in checks.token_ids("ids", ids, len(self.vocab)))

    def next_token_law(self, prefix: Sequence[int]) -> tuple[Prob, ...]:
        """``pi(. | prefix)`` as a tuple indexed by token id."""
        ids = checks.token_ids("prefix", prefix, len(self.vocab))
        key = self.names(ids)
        if key in self._laws:
            return self._laws[key]
        if None in self._laws:
            return self._laws[None]
        raise NotFoundError(f"prefix={show(key)}: the table has no law for it and no default")


# ------------------------------------------------------------------------------------------------
def prefix(x: Sequence[Hashable], t: int) -> tuple:
    """``x_{<t} = x_{1:t-1}`` with one-based ``t`` in ``1..|x|+1``; ``x_{<1}`` is empty (ftip-000G)."""
    x = checks.items("x", x)
    if not checks.is_int(t) or not 1 <= t <= len(x) + 1:
        raise (ValueError if isinstance(t, (int, float, Fraction)) or checks.is_real(t) else TypeError)(
            f"t must be an int in 1..{len(x) + 1} (positions are one-based), got {show(t)}")
    t = int(t)
    return tuple(x[: t - 1])


def is_completed(y: Sequence[int], eos: int) -> bool:
    """Whether ``y`` is a completed continuation: it ends with ``eos`` and has no earlier ``eos`` (ftip-000G)."""
    y = checks.token_ids("y", y)
    eos = checks.integer("eos", eos, 0)
    return bool(y) and y[-1] == eos and eos not in y[:-1]


def _next_law(lm: NextTokenLaw, context: Sequence[int]) -> Sequence[Prob]:
    """``lm.next_token_law(context)``, checked to be a probability vector (a ValueError naming ``lm`` if not):
    entries in ``[0, 1]`` summing to 1 (exactly for exact laws, within :data:`LAW_SUM_TOL` otherwise)."""
    where = f"lm.next_token_law({show(list(context), 40)})"
    try:
        law = lm.next_token_law(list(context))
    except (TypeError, ValueError) as err:  # e.g. an id outside the law's vocabulary
        raise type(err)(f"the prompt and continuation: {where} refused them: {err}") from None
    if isinstance(law, torch.Tensor):
        if law.ndim != 1 or len(law) == 0 or law.is_complex() or not law.is_floating_point():
            raise ValueError(f"lm: {where} must be a nonempty 1-D float tensor, got shape {tuple(law.shape)}")
        values = law.detach().double().cpu()
        if not bool(torch.isfinite(values).all()) or bool((values < 0).any()) or bool((values > 1).any()):
            raise ValueError(f"lm: {where} has entries outside [0, 1] or non-finite: not a law")
        total = float(values.sum())
        law = values.tolist()
    else:
        law = checks.items("lm", law, nonempty=True, what="probabilities")
        law = [checks.probability(f"lm: {where}[{i}]", p) for i, p in enumerate(law)]
        total = sum(law)
    if (total != 1) if _is_exact(law) else abs(total - 1) > LAW_SUM_TOL:
        raise ValueError(f"lm: {where} sums to {total}, not 1: not a law")
    return law


def _real_valued(z: Callable[[Hashable], Prob]) -> Callable[[Hashable], Prob]:
    """``z``, with each value checked to be a finite real number (a ValueError naming ``z`` otherwise)."""
    return lambda x: checks.real(f"z({show(x)})", z(x))


def _check_lm(lm: object) -> NextTokenLaw:
    if not isinstance(lm, NextTokenLaw):
        raise TypeError(f"lm must have a next_token_law method (a NextTokenLaw), got {type(lm).__name__}")
    return lm


def _factor(law: Sequence[Prob], token: int) -> Prob:
    if not 0 <= token < len(law):
        raise ValueError(f"continuation: token {token} is outside the law's vocabulary of size {len(law)}")
    return law[token]


def token_probs(lm: NextTokenLaw, prompt: Sequence[int], continuation: Sequence[int]) -> list[Prob]:
    """The factors ``pi(y_t | x y_{<t})``, ``t = 1..m``, one ``next_token_law`` call each."""
    _check_lm(lm)
    context = checks.token_ids("prompt", prompt)
    out = []
    for y in checks.token_ids("continuation", continuation):
        out.append(_factor(_next_law(lm, context), int(y)))
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

    def __post_init__(self) -> None:
        object.__setattr__(self, "tokens", tuple(checks.token_ids("tokens", self.tokens)))
        object.__setattr__(self, "prob", checks.probability("prob", self.prob))
        checks.instance("stop_reason", self.stop_reason, StopReason)


class PrefixTree:
    """The tree of every continuation of ``prompt`` under ``lm``, stopped at ``eos`` or after ``max_len`` tokens.

    ``edges[node][token]`` is ``pi(token | prompt node)`` for each node (a continuation prefix,
    a tuple of ids) and token of positive probability; the leaves are the stopped continuations.
    Enumeration is exponential in ``max_len``: meant for small vocabularies and caps; ``max_len`` is at
    most :data:`MAX_TREE_DEPTH` and a tree of more than :data:`MAX_TREE_NODES` nodes is refused.
    """

    def __init__(self, lm: NextTokenLaw, prompt: Sequence[int], *, eos: int | None, max_len: int) -> None:
        _check_lm(lm)
        self.prompt = tuple(checks.token_ids("prompt", prompt))
        self.eos = checks.optional_integer("eos", eos, 0)
        self.max_len = checks.integer("max_len", max_len, 1, MAX_TREE_DEPTH)
        self.edges: dict[tuple[int, ...], dict[int, Prob]] = {}
        self.leaves: list[Continuation] = []
        self._expand(lm)

    def _expand(self, lm: NextTokenLaw) -> None:
        """Depth-first, children by token id, with an explicit stack (no recursion limit on ``max_len``)."""
        stack: list[tuple[tuple[int, ...], Prob, StopReason | None]] = [((), Fraction(1), None)]
        while stack:
            node, mass, leaf = stack.pop()
            if leaf is not None:
                self.leaves.append(Continuation(node, mass, leaf))
                continue
            if len(self.edges) >= MAX_TREE_NODES:
                raise ValueError(f"the tree of continuations has more than {MAX_TREE_NODES} nodes; lower "
                                 f"max_len={self.max_len} (enumeration is exponential in it)")
            law = _next_law(lm, self.prompt + node)
            if self.eos is not None and self.eos >= len(law):
                raise ValueError(f"eos={self.eos} is outside the law's vocabulary of size {len(law)}")
            children = {token: p for token, p in enumerate(law) if p > 0}
            self.edges[node] = children
            pending = []
            for token, p in children.items():
                child = node + (token,)
                leaf = StopReason.EOS if token == self.eos else StopReason.MAX_LEN if len(child) == self.max_len \
                    else None
                pending.append((child, mass * p, leaf))
            stack.extend(reversed(pending))

    def path_prob(self, continuation: Sequence[int]) -> Prob:
        """The product of the edge probabilities along ``continuation`` (0 off the tree)."""
        node, mass = (), Fraction(1)
        for token in checks.token_ids("continuation", continuation):
            p = self.edges.get(node, {}).get(int(token), 0)
            mass, node = mass * p, node + (int(token),)
        return mass

    def mass(self, reason: StopReason | None = None) -> Prob:
        """Total probability of the leaves (with stop reason ``reason``, if given); all leaves sum to 1."""
        if reason is not None:
            checks.instance("reason", reason, StopReason)
        return sum((c.prob for c in self.leaves if reason is None or c.stop_reason is reason), Fraction(0))


def enumerate_continuations(lm: NextTokenLaw, prompt: Sequence[int], *, eos: int | None,
                            max_len: int) -> list[Continuation]:
    """Every stopped continuation with its probability and stop reason (depth-first, by token id)."""
    return PrefixTree(lm, prompt, eos=eos, max_len=max_len).leaves
