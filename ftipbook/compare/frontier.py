"""Quality targets, measured costs, cost ratios, the frontier value and its inverse (ftip-00JJ, 00JP, 00KX, 00L0, 00L2).

Four ideas from the note, each with its own object:

* the *frontier value* ``V_A(C) = sup {J(eta) : eta in I_A, c(eta) <= C}`` over a declared set of
  interventions, with the extended-real conventions of ftip-00JJ: the empty feasible set has
  value ``-inf``, an unbounded feasible score set ``+inf``, infinite-cost interventions are never
  feasible, and a finite supremum may be unattained (:func:`frontier_value`);
* the *smallest measured cost reaching a target* ``q`` among (cost, score) measurements taken
  under one protocol, or an explicit "not reached" (ftip-00KX, :func:`smallest_cost_reaching`);
* the *measured iso-quality cost ratio* ``c_K(q) / c_T(q)``, defined only for
  ``0 <= c_K < inf`` and ``0 < c_T < inf`` and :class:`Undefined` otherwise (ftip-00L0,
  :func:`measured_cost_ratio`);
* the *inverse cost* ``C_A(q) = inf {C >= 0 : V_A(C) >= q}`` in ``[0, +inf]`` with whether the
  infimum is attained (ftip-00JP, :func:`inverse_cost`), and the *iso-quality ratio*
  ``C_A(q) / C_B(q)`` of two declared frontiers, defined only for ``0 <= C_A < inf`` and
  ``0 < C_B < inf`` (:func:`iso_quality_ratio`).

A throughput or cache ratio (for example a published decoding speedup) is not a measured cost
at a quality target: these functions refuse such objects with ``TypeError`` rather than
converting them.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from numbers import Real

from ftipbook.compare.checks import real as _real
from ftipbook.compare.cost import CostVector, Unknown


@dataclass(frozen=True)
class Undefined:
    """A quantity outside the domain where the note defines it, with the reason (ftip-00L0, 00JP).

    Not a number: ``float()`` and truth tests raise ``TypeError``, so it cannot be mistaken for 0,
    1 or NaN downstream.
    """

    reason: str

    def __float__(self) -> float:
        raise TypeError(f"undefined ({self.reason}) has no numeric value")

    def __bool__(self) -> bool:
        raise TypeError(f"undefined ({self.reason}) is neither true nor false; test isinstance(x, Undefined)")



# ----------------------------------------------------------------------------------------------
# measurements at a quality target (ftip-00KX)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScoredCostMeasurement:
    """One measured point: ``system`` reached ``score`` at scalar ``cost`` under ``protocol`` (ftip-00KX).

    ``protocol`` names everything the score depends on besides the system (task, prompt law,
    scoring rule, post-training condition); points are comparable only under one protocol.
    ``cost`` is a measured, finite, nonnegative scalar in ``cost_unit``; ``costs`` optionally keeps
    the full :class:`~ftipbook.compare.cost.CostVector` it came from, which ftip-00L0 asks to
    report beside any ratio. ``label`` says which run or checkpoint the point is.
    """

    system: str
    cost: float
    score: float
    protocol: str
    cost_unit: str
    costs: CostVector | None = None
    label: str = ""

    def __post_init__(self) -> None:
        for name in ("system", "protocol", "cost_unit"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"{name} must be a non-empty string, got {getattr(self, name)!r}")
        cost = _real("cost", self.cost)
        if cost < 0:
            raise ValueError(f"cost={cost!r} must be >= 0: a measured cost cannot be negative")
        object.__setattr__(self, "cost", cost)
        object.__setattr__(self, "score", _real("score", self.score))
        if self.costs is not None and not isinstance(self.costs, CostVector):
            raise TypeError(f"costs must be a CostVector or None, got {type(self.costs).__name__}")


@dataclass(frozen=True)
class NotReached:
    """No measurement of ``system`` reached the target ``q`` (ftip-00KX); ``best_score`` is the highest seen.

    Not a cost: ``float()`` raises ``TypeError``; :func:`measured_cost_ratio` turns it into
    :class:`Undefined`.
    """

    target: float
    system: str
    best_score: float
    n_measurements: int

    def __float__(self) -> float:
        raise TypeError(f"{self.system} never reached the target {self.target}; there is no cost to convert")


def _measurements(measurements: Iterable[ScoredCostMeasurement]) -> list[ScoredCostMeasurement]:
    points = list(measurements)
    if not points:
        raise ValueError("no measurements: pass the (cost, score) points of one system under one protocol")
    for p in points:
        if not isinstance(p, ScoredCostMeasurement):
            raise TypeError(
                f"expected ScoredCostMeasurement points, got {type(p).__name__}: a throughput or cache ratio "
                f"is not a measured cost at a quality target and cannot stand in for one (ftip-00KX)"
            )
    for name in ("system", "protocol", "cost_unit"):
        seen = sorted({getattr(p, name) for p in points})
        if len(seen) > 1:
            raise ValueError(f"measurements mix {name}s {seen}; the smallest cost reaching q is defined per "
                             f"system under one protocol and one cost unit")
    return points


def smallest_cost_reaching(q: float, measurements: Iterable[ScoredCostMeasurement]) -> ScoredCostMeasurement | NotReached:
    """The measurement with the smallest cost among those with ``score >= q`` (ftip-00KX).

    ``q`` is a finite real target. Ties in cost go to the higher score, then to the earlier point.
    When no point reaches ``q`` the answer is :class:`NotReached`, never an extrapolated cost.
    """
    q = _real("q", q)
    points = _measurements(measurements)
    reaching = [p for p in points if p.score >= q]
    if not reaching:
        return NotReached(q, points[0].system, max(p.score for p in points), len(points))
    return min(reaching, key=lambda p: (p.cost, -p.score))


# ----------------------------------------------------------------------------------------------
# the measured iso-quality cost ratio (ftip-00L0)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CostRatio:
    """``value = c_K / c_T`` with the two costs it came from (measurements keep their cost vectors)."""

    value: float
    numerator: ScoredCostMeasurement | float
    denominator: ScoredCostMeasurement | float


#: What :func:`measured_cost_ratio` accepts for each cost (any real number where ``float`` is written).
CostLike = ScoredCostMeasurement | NotReached | Unknown | Undefined | float


def _cost_of(name: str, c: object) -> float | Undefined:
    if isinstance(c, ScoredCostMeasurement):
        return c.cost
    if isinstance(c, NotReached):
        return Undefined(f"{name}: {c.system} did not reach q={c.target:g} (best score {c.best_score:.6g})")
    if isinstance(c, Unknown):
        return Undefined(f"{name}: the cost at q was not measured ({c.reason})")
    if isinstance(c, Undefined):
        return c
    if isinstance(c, bool) or not isinstance(c, Real):
        raise TypeError(
            f"{name} must be a measured cost at the target (a number or a ScoredCostMeasurement), got "
            f"{type(c).__name__}: a published speedup or throughput ratio is not a cost and is not converted (ftip-00L0)"
        )
    value = float(c)
    if math.isnan(value) or value < 0:
        raise ValueError(f"{name}={value!r} must be a cost in [0, inf]")
    return value


def measured_cost_ratio(c_k: CostLike, c_t: CostLike) -> CostRatio | Undefined:
    """``rho = c_K(q) / c_T(q)`` where ``0 <= c_K < inf`` and ``0 < c_T < inf``; :class:`Undefined` elsewhere (ftip-00L0).

    Each argument is a cost (a number or the :class:`ScoredCostMeasurement` returned by
    :func:`smallest_cost_reaching`), or a marker that the threshold was not reached
    (:class:`NotReached`) or not measured (:class:`~ftipbook.compare.cost.Unknown`). Two
    measurements must share protocol and cost unit. Anything else, such as a published speedup
    record, raises ``TypeError``.
    """
    if isinstance(c_k, ScoredCostMeasurement) and isinstance(c_t, ScoredCostMeasurement):
        for name in ("protocol", "cost_unit"):
            if getattr(c_k, name) != getattr(c_t, name):
                raise ValueError(f"the two costs have different {name}s ({getattr(c_k, name)!r} vs "
                                 f"{getattr(c_t, name)!r}); the ratio needs one protocol and one accounting rule")
    num, den = _cost_of("c_K", c_k), _cost_of("c_T", c_t)
    for part in (num, den):
        if isinstance(part, Undefined):
            return part
    if math.isinf(num):
        return Undefined("c_K = +inf: the numerator must be finite")
    if math.isinf(den):
        return Undefined("c_T = +inf: the denominator must be finite")
    if den == 0:
        return Undefined("c_T = 0: the denominator must be positive")
    return CostRatio(num / den, c_k if isinstance(c_k, ScoredCostMeasurement) else num,
                     c_t if isinstance(c_t, ScoredCostMeasurement) else den)


# ----------------------------------------------------------------------------------------------
# the frontier value (ftip-00JJ)
# ----------------------------------------------------------------------------------------------
def _intervention_cost(name: str, value: object) -> float:
    """The cost ``c(eta)`` of intervention ``name`` as a float in ``[0, +inf]`` (ftip-00JJ)."""
    cost = _real("cost", value, finite=False)
    if cost < 0:
        raise ValueError(f"cost={cost!r} of {name!r} must lie in [0, +inf]")
    return cost


@dataclass(frozen=True)
class Intervention:
    """One declared intervention ``eta`` with scalar cost ``c(eta) in [0, +inf]`` and finite score ``J`` (ftip-00JJ)."""

    name: str
    cost: float
    score: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "cost", _intervention_cost(self.name, self.cost))
        object.__setattr__(self, "score", _real("score", self.score))


@dataclass(frozen=True)
class InterventionFamily:
    """A declared infinite family of interventions, all of cost ``cost``, whose scores have supremum ``sup_score``.

    ``sup_score = +inf`` declares an unbounded family (scores ``n`` at cost 1); a finite
    ``sup_score`` with ``attained=False`` declares an unattained supremum (scores ``1 - 1/n``).
    The supremum is declared, not computed: it is a mathematical fact about the family.
    """

    name: str
    cost: float
    sup_score: float
    attained: bool

    def __post_init__(self) -> None:
        cost = _intervention_cost(self.name, self.cost)
        sup = _real("sup_score", self.sup_score, finite=False)
        if sup == -math.inf:
            raise ValueError("sup_score = -inf would be an empty family; declare no family instead")
        if math.isinf(sup) and self.attained:
            raise ValueError("an unbounded family (sup_score = +inf) cannot attain its supremum")
        object.__setattr__(self, "cost", cost)
        object.__setattr__(self, "sup_score", sup)


@dataclass(frozen=True)
class CostInfimumFamily:
    """A declared infinite family of interventions, all scoring ``score``, whose costs decrease to ``cost`` (ftip-00JP).

    Every member costs strictly more than ``cost`` and, for every ``C > cost``, some member costs at
    most ``C``: the note's ``eta_n`` with score 1 and cost ``1/n`` is
    ``CostInfimumFamily("eta_n", cost=0.0, score=1.0)``. A budget ``C`` affords a member exactly
    when ``C > cost``, so the infimum of the costs is never attained (declare an attaining member
    as an :class:`Intervention`). Like :class:`InterventionFamily`, the infimum is declared, not
    computed: it is a mathematical fact about the family that a finite list cannot show.
    """

    name: str
    cost: float
    score: float

    def __post_init__(self) -> None:
        cost = _intervention_cost(self.name, self.cost)
        if math.isinf(cost):
            raise ValueError(f"cost={cost!r} of {self.name!r}: a cost infimum of +inf is an infeasible family; "
                             f"declare no family instead")
        object.__setattr__(self, "cost", cost)
        object.__setattr__(self, "score", _real("score", self.score))


@dataclass(frozen=True)
class FrontierValue:
    """``V_A(C)`` in the extended reals, whether some feasible intervention attains it, and which."""

    budget: float
    value: float
    attained: bool
    witness: str | None
    n_feasible: int


#: What a declared intervention set may hold.
Declared = Intervention | InterventionFamily | CostInfimumFamily


def frontier_value(interventions: Sequence[Declared], budget: float) -> FrontierValue:
    """``V_A(C) = sup {J(eta): c(eta) <= C}`` over a declared intervention set (ftip-00JJ).

    ``budget`` is a finite ``C >= 0``. Conventions: no feasible intervention gives ``-inf``; a
    feasible unbounded family gives ``+inf``; interventions of infinite cost are never feasible;
    a :class:`CostInfimumFamily` is feasible only at budgets strictly above its cost infimum;
    ``attained`` says whether a feasible intervention (or an attaining family) has score equal
    to the supremum, and ``witness`` names the first one.
    """
    c = _real("budget", budget)
    if c < 0:
        raise ValueError(f"budget={c!r} must be >= 0")
    for eta in interventions:
        if not isinstance(eta, (Intervention, InterventionFamily, CostInfimumFamily)):
            raise TypeError(f"interventions must be Intervention, InterventionFamily or CostInfimumFamily, "
                            f"got {type(eta).__name__}")
    feasible = [eta for eta in interventions if eta.cost <= c]
    feasible = [eta for eta in feasible if not (isinstance(eta, CostInfimumFamily) and eta.cost == c)]
    if not feasible:
        return FrontierValue(c, -math.inf, False, None, 0)
    scores = [eta.sup_score if isinstance(eta, InterventionFamily) else eta.score for eta in feasible]
    value = max(scores)
    for eta, s in zip(feasible, scores):
        if s == value and (not isinstance(eta, InterventionFamily) or eta.attained):
            return FrontierValue(c, value, True, eta.name, len(feasible))
    return FrontierValue(c, value, False, None, len(feasible))


# ----------------------------------------------------------------------------------------------
# the inverse cost and the iso-quality ratio (ftip-00JP)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class InverseCost:
    """``C_A(q) = inf {C >= 0 : V_A(C) >= q}`` in ``[0, +inf]`` (ftip-00JP), with how it is reached.

    ``attained`` says whether ``V_A(value) >= q`` (the infimum over budgets is a minimum); it is
    ``False`` when ``value = +inf`` (no budget reaches ``q``). ``witness`` names a declared
    intervention that scores at least ``q`` at cost at most ``value``, or is ``None``: a budget can
    reach ``q`` through an unattained supremum without any intervention that scores ``q``.
    """

    q: float
    value: float
    attained: bool
    witness: str | None


def _reaches(eta: Declared, q: float) -> bool:
    """Whether some member of ``eta`` scores at least ``q``."""
    if isinstance(eta, InterventionFamily):
        return eta.sup_score > q or (eta.sup_score == q and eta.attained)
    return eta.score >= q


def inverse_cost(interventions: Iterable[Declared], q: float) -> InverseCost:
    """The inverse cost ``C_A(q) = inf {C >= 0 : V_A(C) >= q}`` of a declared intervention set (ftip-00JP).

    ``q`` is a finite real target and ``V_A`` is :func:`frontier_value`; the infimum of the empty
    set is ``+inf``. ``V_A(C) >= q`` holds exactly when some feasible declared item has score (or
    score supremum) at least ``q``, so ``C_A(q)`` is the smallest cost of such an item, unattained
    when only :class:`CostInfimumFamily` declarations reach it. A threshold infimum, not an
    executable minimum: see :class:`InverseCost` for the witness.
    """
    q = _real("q", q)
    interventions = tuple(interventions)
    frontier_value(interventions, 0.0)  # validates the declared items
    sups = [(eta, eta.sup_score if isinstance(eta, InterventionFamily) else eta.score) for eta in interventions]
    costs = [eta.cost for eta, s in sups if s >= q and math.isfinite(eta.cost)]
    if not costs:
        return InverseCost(q, math.inf, False, None)
    value = min(costs)
    attained = frontier_value(interventions, value).value >= q
    witness = next((eta.name for eta in interventions
                    if not isinstance(eta, CostInfimumFamily) and eta.cost <= value and _reaches(eta, q)), None)
    return InverseCost(q, value, attained, witness)


@dataclass(frozen=True)
class DeclaredFrontier:
    """The frontier ``V_A`` of Definition ftip-00JJ with the labels a comparison must match (ftip-00JP).

    ``system`` names the architecture, ``interventions`` its declared intervention set,
    ``cost_unit`` the unit of the scalar cost (the accounting rule), ``interface`` the evaluation
    interface and target definition, ``arm`` the comparison arm (common recipe, equal tuning, ...).
    """

    system: str
    interventions: tuple[Declared, ...]
    cost_unit: str
    interface: str
    arm: str

    def __post_init__(self) -> None:
        for name in ("system", "cost_unit", "interface", "arm"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"{name} must be a non-empty string, got {getattr(self, name)!r}")
        object.__setattr__(self, "interventions", tuple(self.interventions))
        frontier_value(self.interventions, 0.0)  # validates the declared items

    def value(self, budget: float) -> FrontierValue:
        """``V_A(budget)``, see :func:`frontier_value`."""
        return frontier_value(self.interventions, budget)

    def inverse_cost(self, q: float) -> InverseCost:
        """``C_A(q)``, see :func:`inverse_cost`."""
        return inverse_cost(self.interventions, q)


@dataclass(frozen=True)
class IsoQualityRatio:
    """``rho_{A/B}(q) = C_A(q) / C_B(q)`` with the two inverse costs it came from (ftip-00JP)."""

    value: float
    q: float
    numerator: InverseCost
    denominator: InverseCost


def iso_quality_ratio(a: DeclaredFrontier, b: DeclaredFrontier, q: float) -> IsoQualityRatio | Undefined:
    """``rho_{A/B}(q) = C_A(q) / C_B(q)`` on ``0 <= C_A(q) < inf``, ``0 < C_B(q) < inf`` (ftip-00JP).

    Both frontiers are read at the one target ``q``; they must share the cost unit, the
    evaluation interface and the comparison arm (``ValueError`` naming the field otherwise).
    Off the domain the answer is :class:`Undefined` with the reason; in particular two inverse
    costs of zero (the note's family with score 1 at cost ``1/n``) give no ratio, not ``0/0``.
    """
    for name, f in (("a", a), ("b", b)):
        if not isinstance(f, DeclaredFrontier):
            raise TypeError(f"{name} must be a DeclaredFrontier, got {type(f).__name__}")
    for field in ("cost_unit", "interface", "arm"):
        if getattr(a, field) != getattr(b, field):
            raise ValueError(f"the frontiers have different {field}s ({getattr(a, field)!r} vs {getattr(b, field)!r}); "
                             f"an iso-quality ratio needs one target, interface, cost unit and arm (ftip-00JP)")
    ca, cb = a.inverse_cost(q), b.inverse_cost(q)
    if math.isinf(ca.value):
        return Undefined(f"C_A(q) = +inf: {a.system} never reaches q={ca.q:g}, the numerator must be finite")
    if math.isinf(cb.value):
        return Undefined(f"C_B(q) = +inf: {b.system} never reaches q={cb.q:g}, the denominator must be finite")
    if cb.value == 0:
        what = "the putative ratio 0/0 is excluded" if ca.value == 0 else "the denominator must be positive"
        return Undefined(f"C_B(q) = 0 for {b.system} at q={cb.q:g}: {what}")
    return IsoQualityRatio(ca.value / cb.value, ca.q, ca, cb)


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
