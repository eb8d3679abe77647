"""Saturation statements about a declared frontier, each conditional on its evidence (ftip-00JS, 00LL, 00LM, 00LN).

The frontier is ``V_A(C)`` of Definition ftip-00JJ (:func:`~ftipbook.compare.frontier.frontier_value`).
Nothing here says that capability saturates in general; each object states what follows from
the evidence it is given, and refuses when a premise is missing:

* :func:`saturation_certificate` (ftip-00JS): a justified upper bound ``U`` and a witness that
  reaches ``q`` at cost ``C_q`` give ``q <= V_A(C) <= U`` for every finite ``C >= C_q``;
* :func:`declared_saturation` (ftip-00LL): the verdict of a declared target
  ``(q, eps, delta, C)``: saturated when the gain ``V_A(C + delta) - V_A(C)`` is at most ``eps``,
  undefined when either value is infinite;
* :func:`conditional_saturation` (ftip-00LM): a justified bound ``V_A(C + delta) <= U`` and a
  justified bound ``V_A(C) >= U - eps`` give ``0 <= V_A(C + delta) - V_A(C) <= eps``;
* :func:`indistinguishable_frontiers` (ftip-00LN): two declared intervention sets whose
  frontiers agree at every measured cost and differ beyond them, so finitely many observations
  cannot supply the upper bound the certificates need.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ftipbook.compare.frontier import Declared, Intervention, InterventionFamily, _real, frontier_value


def _budget(name: str, value: object) -> float:
    value = _real(name, value)
    if value < 0:
        raise ValueError(f"{name}={value!r} must be >= 0")
    return value


@dataclass(frozen=True)
class JustifiedBound:
    """A bound on a frontier value with the reason it holds (ftip-00JS, 00LM).

    ``value`` is a finite real; ``justification`` says why it holds (a proved score range, a
    certificate, a witness), and may not be empty: a bound nobody can justify is not evidence.
    Whether it bounds from above or below depends on where it is passed.
    """

    value: float
    justification: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", _real("value", self.value))
        if not isinstance(self.justification, str) or not self.justification.strip():
            raise ValueError(f"justification={self.justification!r}: say why the bound {self.value:g} holds; "
                             f"an unjustified bound certifies nothing")


def _declared(interventions: Iterable[Declared]) -> tuple[Declared, ...]:
    items = tuple(interventions)
    frontier_value(items, 0.0)  # validates the declared items
    return items


# ----------------------------------------------------------------------------------------------
# ftip-00JS
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CertifiedInterval:
    """``lower <= V_A(budget) <= upper`` and ``gap_lower <= U - V_A(budget) <= gap_upper`` (ftip-00JS)."""

    budget: float
    lower: float
    upper: float
    gap_lower: float
    gap_upper: float


@dataclass(frozen=True)
class SaturationCertificate:
    """The certificate of Theorem ftip-00JS: ``q <= V_A(C) <= U`` for every finite ``C >= C_q``.

    ``witness`` is the declared intervention that reaches ``q`` at cost ``C_q = witness.cost``;
    ``upper`` is the justified bound ``U``. Use :meth:`at` for the interval at one budget.
    """

    q: float
    upper: JustifiedBound
    witness: Intervention

    @property
    def cost(self) -> float:
        """``C_q``, the witness's cost: the certificate speaks from here on."""
        return self.witness.cost

    @property
    def gap_bound(self) -> float:
        """``U - q``, the largest distance to ``U`` the certificate allows."""
        return self.upper.value - self.q

    def at(self, budget: float) -> CertifiedInterval:
        """The certified interval for ``V_A(budget)``; refused below ``C_q``, where the certificate says nothing."""
        c = _budget("budget", budget)
        if c < self.cost:
            raise ValueError(f"budget={c!r} is below the witness cost C_q={self.cost!r}: the certificate bounds "
                             f"V_A(C) only for C >= C_q")
        return CertifiedInterval(c, self.q, self.upper.value, 0.0, self.gap_bound)


def saturation_certificate(interventions: Iterable[Declared], q: float, witness: Intervention | None,
                           upper: JustifiedBound | None) -> SaturationCertificate:
    """Certify ``q <= V_A(C) <= U`` and ``0 <= U - V_A(C) <= U - q`` for all finite ``C >= C_q`` (ftip-00JS).

    ``interventions`` is the declared set whose frontier is certified; ``witness`` must be one of
    them, of finite cost ``C_q``, with score at least the finite target ``q``; ``upper`` is the
    justified bound ``U`` on every ``V_A(C)``. The note states ``q < U``; ``q = U`` is accepted too
    and pins ``V_A(C) = U`` from ``C_q`` on (the attained-bound case of ftip-00LN). Without ``U`` or
    without a witness there is no certificate (``ValueError``); so too when a declared
    intervention already scores above ``U`` (the bound is false).
    """
    items = _declared(interventions)
    q = _real("q", q)
    if upper is None:
        raise ValueError("no upper bound U: without a justified bound on V_A there is no saturation certificate "
                         "(a frontier such as log(1 + C) passes every proposed value) (ftip-00JS)")
    if not isinstance(upper, JustifiedBound):
        raise TypeError(f"upper must be a JustifiedBound, got {type(upper).__name__}")
    if witness is None:
        raise ValueError("no witness: the certificate needs a declared intervention that reaches q at a finite cost "
                         "(ftip-00JS)")
    if not isinstance(witness, Intervention):
        raise TypeError(f"witness must be an Intervention, got {type(witness).__name__}")
    if witness not in items:
        raise ValueError(f"witness {witness.name!r} is not in the declared intervention set")
    if math.isinf(witness.cost):
        raise ValueError(f"witness {witness.name!r} has infinite cost: it is feasible at no budget")
    if witness.score < q:
        raise ValueError(f"witness {witness.name!r} scores {witness.score!r} < q={q!r}: it does not reach q")
    if q > upper.value:
        raise ValueError(f"q={q!r} exceeds U={upper.value!r}: a witness reaching q would violate the bound")
    above = [eta.name for eta in items if math.isfinite(eta.cost)
             and (eta.sup_score if isinstance(eta, InterventionFamily) else eta.score) > upper.value]
    if above:
        raise ValueError(f"declared intervention(s) {above} score above U={upper.value!r}: the bound is false")
    return SaturationCertificate(q, upper, witness)


# ----------------------------------------------------------------------------------------------
# ftip-00LL
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SaturationVerdict:
    """The outcome of a declared saturation target (ftip-00LL).

    ``status`` is ``"saturated"``, ``"not saturated"`` or ``"undefined"``; ``gain`` is
    ``V_A(C + delta) - V_A(C)`` when both values are finite and ``None`` otherwise, with
    ``reason`` saying why. The verdict holds relative to the declared intervention class only.
    """

    status: str
    q: float
    budget: float
    delta: float
    eps: float
    value: float
    value_after: float
    gain: float | None
    reason: str


def declared_saturation(interventions: Iterable[Declared], *, q: float, budget: float, delta: float,
                        eps: float) -> SaturationVerdict:
    """Whether a declared intervention class is ``eps``-saturated at ``budget`` (ftip-00LL).

    The declaration fixes a finite target ``q``, a tolerance ``eps`` and increment ``delta`` in
    ``(0, +inf)`` and a finite budget ``C >= 0``. Both ``V_A(C)`` and ``V_A(C + delta)`` must be
    finite; otherwise the verdict is ``"undefined"``. The class is ``"saturated"`` exactly when the
    gain ``V_A(C + delta) - V_A(C)`` is at most ``eps``.
    """
    items = _declared(interventions)
    q = _real("q", q)
    c = _budget("budget", budget)
    for name, value in (("delta", delta), ("eps", eps)):
        if _real(name, value) <= 0:
            raise ValueError(f"{name}={value!r} must lie in (0, +inf) (ftip-00LL)")
    delta, eps = float(delta), float(eps)
    v, v_after = frontier_value(items, c).value, frontier_value(items, c + delta).value
    bad = [f"V_A({x:g}) = {val}" for x, val in ((c, v), (c + delta, v_after)) if not math.isfinite(val)]
    if bad:
        return SaturationVerdict("undefined", q, c, delta, eps, v, v_after, None,
                                 f"{' and '.join(bad)}: the gain needs both values finite")
    gain = v_after - v
    status = "saturated" if gain <= eps else "not saturated"
    return SaturationVerdict(status, q, c, delta, eps, v, v_after, gain,
                             f"gain {gain:.6g} {'<=' if gain <= eps else '>'} eps = {eps:g}")


# ----------------------------------------------------------------------------------------------
# ftip-00LM
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ConditionalSaturation:
    """The conclusion of Theorem ftip-00LM for one budget, increment and tolerance.

    ``U - eps <= V_A(C) <= V_A(C + delta) <= U`` (both values finite real) and
    ``0 <= V_A(C + delta) - V_A(C) <= eps``, read off :attr:`value_interval` and
    :attr:`gain_interval`; ``upper`` and ``lower`` are the justified premises.
    """

    budget: float
    delta: float
    eps: float
    upper: JustifiedBound
    lower: JustifiedBound

    @property
    def value_interval(self) -> tuple[float, float]:
        """The interval holding both ``V_A(C)`` and ``V_A(C + delta)``: ``[U - eps, U]``."""
        return (self.upper.value - self.eps, self.upper.value)

    @property
    def gain_interval(self) -> tuple[float, float]:
        """The interval holding the gain ``V_A(C + delta) - V_A(C)``: ``[0, eps]``."""
        return (0.0, self.eps)


def conditional_saturation(*, budget: float, delta: float, eps: float, upper: JustifiedBound | None,
                           lower: JustifiedBound | Intervention | None) -> ConditionalSaturation:
    """Certify ``0 <= V_A(C + delta) - V_A(C) <= eps`` from two justified bounds (ftip-00LM).

    ``upper`` justifies ``V_A(C + delta) <= U``; ``lower`` justifies ``V_A(C) >= U - eps``, either
    as a :class:`JustifiedBound` or as a witness :class:`~ftipbook.compare.frontier.Intervention`
    of cost at most ``C`` (its score is the bound). ``budget``, ``delta`` and ``eps`` are finite and
    ``>= 0``. Both bounds are required: the absence of an observed improvement is not an upper
    bound (ftip-00LN), so a missing one is refused, as is a lower bound below ``U - eps``.
    """
    c = _budget("budget", budget)
    delta, eps = _budget("delta", delta), _budget("eps", eps)
    if upper is None:
        raise ValueError("no upper bound on V_A(C + delta): the certificate needs justified upper-bound evidence; "
                         "not having observed an improvement is not such evidence (ftip-00LM, 00LN)")
    if lower is None:
        raise ValueError("no lower bound on V_A(C): the certificate needs justified evidence that V_A(C) >= U - eps, "
                         "such as a witness intervention of cost at most C (ftip-00LM)")
    if not isinstance(upper, JustifiedBound):
        raise TypeError(f"upper must be a JustifiedBound, got {type(upper).__name__}")
    if isinstance(lower, Intervention):
        if lower.cost > c:
            raise ValueError(f"witness {lower.name!r} costs {lower.cost!r} > budget={c!r}: it does not bound V_A(C)")
        lower = JustifiedBound(lower.score, f"witness {lower.name!r} scores {lower.score!r} at cost {lower.cost!r}")
    if not isinstance(lower, JustifiedBound):
        raise TypeError(f"lower must be a JustifiedBound or an Intervention, got {type(lower).__name__}")
    if lower.value < upper.value - eps:
        raise ValueError(f"the lower bound {lower.value!r} is below U - eps = {upper.value - eps!r}: "
                         f"the premise V_A(C) >= U - eps is not established")
    return ConditionalSaturation(c, delta, eps, upper, lower)


# ----------------------------------------------------------------------------------------------
# ftip-00LN
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class IndistinguishableFrontiers:
    """Two declared intervention sets that agree on every measured cost and differ at ``C0`` (ftip-00LN).

    ``realizations[theta]`` for ``theta`` in ``(0, 1)`` is the set of two interventions with costs
    ``0`` and ``C0`` and scores ``0`` and ``theta``; its frontier is ``V_theta``.
    """

    measured_costs: tuple[float, ...]
    c0: float
    realizations: Mapping[int, tuple[Intervention, Intervention]]

    def frontier(self, theta: int, budget: float) -> float:
        """``V_theta(budget)``, computed by :func:`~ftipbook.compare.frontier.frontier_value`."""
        if theta not in self.realizations:
            raise ValueError(f"theta={theta!r} must be 0 or 1")
        return frontier_value(self.realizations[theta], budget).value


def indistinguishable_frontiers(measured_costs: Sequence[float], c0: float) -> IndistinguishableFrontiers:
    """The construction of Example ftip-00LN for a finite set ``S`` of measured costs and ``C0 > max S``.

    Interventions of cost ``0`` (score ``0``) and ``C0`` (score ``theta``): ``theta = 0`` gives
    ``V_0 = 0``, ``theta = 1`` gives ``V_1 = 1`` from ``C0`` on; the two agree at every cost in
    ``S`` (all below ``C0``) and differ at ``C0``.
    """
    costs = tuple(_budget("measured cost", x) for x in measured_costs)
    c0 = _real("c0", c0)
    if c0 <= 0:
        raise ValueError(f"c0={c0!r} must be > 0")
    if costs and c0 <= max(costs):
        raise ValueError(f"c0={c0!r} must exceed every measured cost (max {max(costs)!r})")
    realizations = {theta: (Intervention("cost 0", 0.0, 0.0), Intervention("cost C0", c0, float(theta)))
                    for theta in (0, 1)}
    return IndistinguishableFrontiers(costs, c0, MappingProxyType(realizations))


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
