"""The model-instance comparison decision rule (ftip-00K8).

Architecture ``A`` may be called *more cost-efficient* than ``B`` at a quality target ``q`` only
when the two threshold costs were obtained under one declared protocol, with a fixed confidence
procedure and stopping rule, and every cost-vector coordinate the claim needs is present. Each
threshold cost is one of two things, and the rule says which:

* a *measured target-achieving witness* (:data:`WITNESS`): a run that was measured to reach ``q``
  at some cost (:class:`~ftipbook.compare.frontier.ScoredCostMeasurement`, or
  :class:`~ftipbook.compare.frontier.NotReached` when no run reached it). A witness bounds the
  inverse cost from above; one successful run does not identify the infimum;
* a *justified inverse-frontier value* ``C_A(q)`` (``INVERSE_FRONTIER``), read off a declared
  frontier (:class:`~ftipbook.compare.frontier.DeclaredFrontier`).

A ratio of the two costs is reported only where Definition ftip-00JP allows it (finite costs,
strictly positive denominator), through :func:`~ftipbook.compare.frontier.measured_cost_ratio` for
witnesses and :func:`~ftipbook.compare.frontier.iso_quality_ratio` for frontiers; elsewhere it is
:class:`~ftipbook.compare.frontier.Undefined`. Whenever a condition fails the verdict is
``"unknown"``; when the conditions hold but the claim cannot be made (``A`` is not cheaper, or the
two costs are of different kinds) it is ``"descriptive"``.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ftipbook.compare.checks import real as _real
from ftipbook.compare.cost import CostVector, Unknown
from ftipbook.compare.frontier import (CostRatio, DeclaredFrontier, IsoQualityRatio, NotReached,
                                       ScoredCostMeasurement, Undefined, iso_quality_ratio, measured_cost_ratio)

#: The two kinds of threshold cost a claim may carry (ftip-00K8).
WITNESS = "measured target-achieving witness"
INVERSE_FRONTIER = "justified inverse-frontier value"
COST_KINDS = (WITNESS, INVERSE_FRONTIER)

#: The three verdicts of :func:`decision_rule`.
VERDICTS = ("more cost-efficient", "descriptive", "unknown")


def _declared(owner: str, name: str, value: object) -> None:
    if isinstance(value, Unknown):
        return
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{owner}.{name} must be a non-empty string or UNKNOWN, got {value!r}")


@dataclass(frozen=True)
class ThresholdCostClaim:
    """One system's threshold cost at the target ``q``, with what the decision rule needs (ftip-00K8).

    ``source`` is the cost: a :class:`~ftipbook.compare.frontier.ScoredCostMeasurement` or
    :class:`~ftipbook.compare.frontier.NotReached` when ``kind`` is :data:`WITNESS`, a
    :class:`~ftipbook.compare.frontier.DeclaredFrontier` when ``kind`` is ``INVERSE_FRONTIER``.
    ``protocol`` is the declared protocol id (it must equal the measurement's protocol or the
    frontier's interface); ``confidence_procedure`` and ``stopping_rule`` name the fixed procedures
    (``UNKNOWN`` when not fixed); ``costs`` is the cost vector whose coordinates the claim offers.
    """

    system: str
    q: float
    kind: str
    source: ScoredCostMeasurement | NotReached | DeclaredFrontier
    protocol: str
    confidence_procedure: str | Unknown
    stopping_rule: str | Unknown
    costs: CostVector

    def __post_init__(self) -> None:
        if not isinstance(self.system, str) or not self.system.strip():
            raise ValueError(f"ThresholdCostClaim.system must be a non-empty string, got {self.system!r}")
        object.__setattr__(self, "q", _real("q", self.q))
        if self.kind not in COST_KINDS:
            raise ValueError(f"ThresholdCostClaim.kind={self.kind!r} must be one of {COST_KINDS}")
        if not isinstance(self.protocol, str) or not self.protocol.strip():
            raise ValueError(f"ThresholdCostClaim.protocol must be a non-empty string, got {self.protocol!r}")
        _declared("ThresholdCostClaim", "confidence_procedure", self.confidence_procedure)
        _declared("ThresholdCostClaim", "stopping_rule", self.stopping_rule)
        if not isinstance(self.costs, CostVector):
            raise TypeError(f"ThresholdCostClaim.costs must be a CostVector, got {type(self.costs).__name__}")
        src = self.source
        if self.kind == WITNESS:
            if not isinstance(src, (ScoredCostMeasurement, NotReached)):
                raise TypeError(f"a {WITNESS!r} is a ScoredCostMeasurement or NotReached, got {type(src).__name__}")
            if isinstance(src, ScoredCostMeasurement):
                if src.protocol != self.protocol:
                    raise ValueError(f"the measurement was taken under protocol {src.protocol!r}, "
                                     f"not the declared {self.protocol!r}")
                if src.score < self.q:
                    raise ValueError(f"the measurement scores {src.score!r} < q={self.q!r}: it does not "
                                     f"achieve the target, so it is no witness")
            elif src.target != self.q:
                raise ValueError(f"NotReached is for q={src.target!r}, the claim for q={self.q!r}")
        else:
            if not isinstance(src, DeclaredFrontier):
                raise TypeError(f"a {INVERSE_FRONTIER!r} is read off a DeclaredFrontier, got {type(src).__name__}")
            if src.interface != self.protocol:
                raise ValueError(f"the frontier's interface {src.interface!r} is not the declared protocol "
                                 f"{self.protocol!r}")

    @property
    def cost(self) -> float:
        """The threshold cost in ``[0, +inf]``: the witness's cost (``+inf`` when not reached) or ``C_A(q)``."""
        if isinstance(self.source, ScoredCostMeasurement):
            return self.source.cost
        if isinstance(self.source, NotReached):
            return math.inf
        return self.source.inverse_cost(self.q).value


@dataclass(frozen=True)
class Decision:
    """The verdict of :func:`decision_rule`: one of :data:`VERDICTS`, with the reason in words.

    ``ratio`` is ``cost(a) / cost(b)`` (a :class:`~ftipbook.compare.frontier.CostRatio` or
    :class:`~ftipbook.compare.frontier.IsoQualityRatio`), an
    :class:`~ftipbook.compare.frontier.Undefined` off its domain, or ``None`` when the conditions
    fail and no ratio is formed. ``kind`` is the cost kind of both claims (``None`` when they differ).
    """

    verdict: str
    reason: str
    ratio: CostRatio | IsoQualityRatio | Undefined | None
    kind: str | None


def _needs(needs: object) -> tuple[str, ...]:
    if isinstance(needs, str) or not isinstance(needs, Sequence):
        raise TypeError(f"needs must be a sequence of cost-coordinate names, got {type(needs).__name__} {needs!r}")
    out = tuple(needs)
    if not out:
        raise ValueError("needs is empty: a cost-efficiency claim needs at least one cost coordinate")
    for name in out:
        if not isinstance(name, str) or not name:
            raise ValueError(f"needs holds {name!r}; coordinate names are non-empty strings")
    return out


def _unknown(reason: str) -> Decision:
    return Decision("unknown", reason, None, None)


def decision_rule(a: ThresholdCostClaim, b: ThresholdCostClaim, needs: Sequence[str]) -> Decision:
    """Whether ``a``'s architecture may be called more cost-efficient than ``b``'s at ``q`` (ftip-00K8).

    ``needs`` names the cost-vector coordinates the claim relies on. In order: the two claims must
    share ``q``, the protocol, a declared confidence procedure and a declared stopping rule, and both
    cost vectors must hold every needed coordinate with a known value; otherwise ``"unknown"``. Then
    the ratio is formed on its domain, and the verdict is ``"more cost-efficient"`` when both costs
    are of one kind and ``a``'s is strictly smaller, ``"descriptive"`` otherwise. A witness verdict
    says that it compares witnesses, not the infima ``C_A(q)``, ``C_B(q)``.
    """
    for name, claim in (("a", a), ("b", b)):
        if not isinstance(claim, ThresholdCostClaim):
            raise TypeError(f"{name} must be a ThresholdCostClaim, got {type(claim).__name__}")
    needs = _needs(needs)
    if a.q != b.q:
        return _unknown(f"the claims are at different targets (q={a.q:g} vs q={b.q:g})")
    if a.protocol != b.protocol:
        return _unknown(f"the threshold costs use different protocols ({a.protocol!r} vs {b.protocol!r})")
    for field in ("confidence_procedure", "stopping_rule"):
        x, y = getattr(a, field), getattr(b, field)
        if isinstance(x, Unknown) or isinstance(y, Unknown):
            side = a.system if isinstance(x, Unknown) else b.system
            return _unknown(f"the {field.replace('_', ' ')} of {side} is not fixed")
        if x != y:
            return _unknown(f"the {field.replace('_', ' ')}s differ ({x!r} vs {y!r})")
    for claim in (a, b):
        absent = [n for n in needs if n not in claim.costs.names or isinstance(claim.costs[n], Unknown)]
        if absent:
            return _unknown(f"cost coordinate(s) {absent} needed by the claim are missing for {claim.system}")

    if a.kind != b.kind:
        return Decision("descriptive", f"{a.system}'s cost is a {a.kind} and {b.system}'s a {b.kind}: different "
                        f"quantities, reported side by side without an efficiency claim", None, None)
    if a.kind == WITNESS:
        ratio = measured_cost_ratio(a.source, b.source)
        what = ("witness costs: each run was measured to reach q, which bounds C(q) from above; "
                "one successful run does not identify the infimum C(q)")
    else:
        ratio = iso_quality_ratio(a.source, b.source, a.q)
        what = "inverse-frontier values C_A(q) and C_B(q) of the declared frontiers"
    ca, cb = a.cost, b.cost
    if math.isinf(ca) and math.isinf(cb):
        return Decision("unknown", f"neither {a.system} nor {b.system} reaches q={a.q:g}: no threshold cost",
                        ratio, a.kind)
    if ca < cb:
        return Decision("more cost-efficient", f"{a.system} reaches q={a.q:g} at a smaller cost than {b.system} "
                        f"({ca:.6g} < {cb:.6g}) under one protocol; {what}", ratio, a.kind)
    return Decision("descriptive", f"{a.system} does not reach q={a.q:g} at a smaller cost than {b.system} "
                    f"({ca:.6g} >= {cb:.6g}); {what}", ratio, a.kind)


__all__ = ["WITNESS", "INVERSE_FRONTIER", "COST_KINDS", "VERDICTS", "ThresholdCostClaim", "Decision",
           "decision_rule"]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
