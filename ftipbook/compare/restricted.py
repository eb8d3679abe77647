"""The restricted-envelope comparison arm: a declared class of interventions and its supremum (ftip-00JX, 00LX).

For each architecture the arm declares an allowed class ``E_A`` (:class:`AllowedClass`): the
training, post-training and inference procedures it may use, each member a named recipe, with
the exclusions, the search budget, the seeds and the stopping rule in view. Under one finite cost
cap ``C``, one evaluation law and one declared :class:`~ftipbook.compare.cost.Scalarization`, the
envelope of ``E_A`` is the frontier value of ftip-00JJ restricted to the class,
``sup {J(eta) : eta in E_A, c(eta) <= C}``, computed by
:func:`ftipbook.compare.frontier.frontier_value` with its extended-real conventions (an empty
feasible class gives ``-inf``, a feasible unbounded family ``+inf``, a finite supremum may be
unattained).

:meth:`RestrictedEnvelopeArm.envelope` evaluates every member (full coverage, so the supremum over
the members is certified); :meth:`RestrictedEnvelopeArm.search` evaluates at most the class's
search budget and returns a *lower bound*, certified as the supremum only when it covered every
member of the class or when a declared :class:`UpperBound` argument matches it (ftip-00LX).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ftipbook.compare.cost import Scalarization, Unknown
from ftipbook.compare.frontier import FrontierValue, Intervention, InterventionFamily, Undefined, frontier_value

#: The three kinds of procedure every member recipe of an allowed class declares (ftip-00JX).
PROCEDURES = ("training", "post_training", "inference")

#: ``runner(architecture, package, recipe, seed)`` returns an outcome with ``.score`` and ``.cost``
#: (a :class:`~ftipbook.compare.cost.CostVector`), such as :class:`ftipbook.compare.arms.Outcome`.
Runner = Callable[[str, Mapping[str, Any], Mapping[str, Any], int], Any]


def _name(what: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-empty string, got {value!r}")
    return value


def _count(what: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{what}={value!r} must be >= {minimum}")
    return value


def interventions_from_outcomes(outcomes: Mapping[str, Sequence[Any]], accounting: Scalarization
                                ) -> tuple[Intervention, ...]:
    """One :class:`~ftipbook.compare.frontier.Intervention` per named intervention from its runs (ftip-00JX).

    ``outcomes[name]`` lists the outcomes of one intervention over the evaluation law's seeds.
    Its score ``J`` is their mean; its scalar cost is the largest ``accounting(outcome.cost)``
    over them, so it fits under a cap only when every run does. A weighted cost that is unknown
    is refused by name: an intervention of unknown cost cannot be placed under a cap.
    """
    if not isinstance(accounting, Scalarization):
        raise TypeError(f"accounting must be a Scalarization, got {type(accounting).__name__}")
    out = []
    for name, runs in outcomes.items():
        runs = list(runs)
        if not runs:
            raise ValueError(f"intervention {name!r} has no outcomes; evaluate it at least once")
        costs = [accounting(o.cost) for o in runs]
        unknown = [c for c in costs if isinstance(c, Unknown)]
        if unknown:
            raise ValueError(f"intervention {name!r} has an unknown weighted cost ({unknown[0].reason}); "
                             f"it cannot be placed under a cost cap")
        out.append(Intervention(name, max(costs), math.fsum(o.score for o in runs) / len(runs)))
    return tuple(out)


@dataclass(frozen=True)
class AllowedClass:
    """A declared allowed intervention class ``E_A`` of one architecture (ftip-00JX).

    ``members`` maps each member's name to its recipe, which names its ``training``,
    ``post_training`` and ``inference`` procedures (:data:`PROCEDURES`) and any other
    coordinates; ``package`` the architecture's declared fields; ``exclusions`` what the class
    leaves out, each with its reason; ``families`` declared infinite families (their supremum is
    a stated fact, never searched); ``seeds`` the seeds each member is run at; ``search_budget``
    the most members a search may evaluate; ``patience`` the stopping rule (stop after that many
    evaluations in a row without a better feasible score; ``None``: stop when the budget is spent).
    """

    architecture: str
    package: Mapping[str, Any]
    members: Mapping[str, Mapping[str, Any]]
    exclusions: Mapping[str, str]
    search_budget: int
    seeds: tuple[int, ...]
    patience: int | None = None
    families: tuple[InterventionFamily, ...] = ()

    def __post_init__(self) -> None:
        _name("architecture", self.architecture)
        if not isinstance(self.package, Mapping):
            raise TypeError(f"package must be a mapping of declared fields, got {type(self.package).__name__}")
        if not isinstance(self.members, Mapping):
            raise TypeError(f"members must map member names to recipes, got {type(self.members).__name__}")
        members = {}
        for name, recipe in self.members.items():
            _name("member name", name)
            if not isinstance(recipe, Mapping):
                raise TypeError(f"member {name!r} must be a recipe mapping, got {type(recipe).__name__}")
            missing = [p for p in PROCEDURES if p not in recipe]
            if missing:
                raise ValueError(f"member {name!r} does not declare its {', '.join(missing)} procedure(s); "
                                 f"every member names {list(PROCEDURES)}")
            members[name] = MappingProxyType(dict(recipe))
        if not isinstance(self.exclusions, Mapping):
            raise TypeError(f"exclusions must map excluded procedures to reasons, got {type(self.exclusions).__name__}")
        for name, reason in self.exclusions.items():
            _name("exclusion", name)
            _name(f"the reason for excluding {name!r}", reason)
            if name in members:
                raise ValueError(f"{name!r} is both a member and an exclusion of the class of {self.architecture!r}")
        _count("search_budget", self.search_budget, 1)
        if self.patience is not None:
            _count("patience", self.patience, 1)
        seeds = tuple(self.seeds) if isinstance(self.seeds, Sequence) and not isinstance(self.seeds, str) else None
        if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds) \
                or len(set(seeds)) != len(seeds):
            raise ValueError(f"seeds={self.seeds!r} must be a non-empty sequence of distinct ints")
        families = tuple(self.families)
        for f in families:
            if not isinstance(f, InterventionFamily):
                raise TypeError(f"families must be InterventionFamily objects, got {type(f).__name__}")
            if f.name in members:
                raise ValueError(f"family {f.name!r} has the name of a member")
        if not members and not families:
            raise ValueError(f"the class of {self.architecture!r} is empty; declare at least one member or family")
        object.__setattr__(self, "package", MappingProxyType(dict(self.package)))
        object.__setattr__(self, "members", MappingProxyType(members))
        object.__setattr__(self, "exclusions", MappingProxyType(dict(self.exclusions)))
        object.__setattr__(self, "seeds", seeds)
        object.__setattr__(self, "families", families)

    @property
    def stopping_rule(self) -> str:
        """The declared stopping rule, in words."""
        if self.patience is None:
            return f"evaluate until {self.search_budget} member(s) have run"
        return (f"stop after {self.patience} evaluation(s) in a row without a better feasible score, "
                f"or after {self.search_budget}")

    def enlarged(self, members: Mapping[str, Mapping[str, Any]] = MappingProxyType({}),
                 families: Sequence[InterventionFamily] = ()) -> "AllowedClass":
        """This class with more members and families (exclusions they lift are dropped); same budget and seeds."""
        clash = sorted(set(members) & set(self.members))
        if clash:
            raise ValueError(f"members {clash} are already in the class; an enlargement adds new ones")
        return AllowedClass(self.architecture, self.package, {**self.members, **members},
                            {k: v for k, v in self.exclusions.items() if k not in members},
                            self.search_budget, self.seeds, self.patience, self.families + tuple(families))

    def contains(self, other: "AllowedClass") -> bool:
        """Whether ``other`` is a subclass of this one: every member (same recipe) and family of it is here."""
        if not isinstance(other, AllowedClass):
            raise TypeError(f"other must be an AllowedClass, got {type(other).__name__}")
        return (all(name in self.members and dict(self.members[name]) == dict(recipe)
                    for name, recipe in other.members.items())
                and set(other.families) <= set(self.families))


@dataclass(frozen=True)
class UpperBound:
    """A declared argument that no member of the class scores above ``value`` under the cap (ftip-00LX)."""

    value: float
    argument: str

    def __post_init__(self) -> None:
        if isinstance(self.value, bool) or not isinstance(self.value, (int, float)) or math.isnan(self.value):
            raise ValueError(f"value={self.value!r} must be a real number (or +-inf)")
        _name("argument", self.argument)


@dataclass(frozen=True)
class Envelope:
    """The envelope of one allowed class under the cap, or a lower bound on it (ftip-00JX, ftip-00LX).

    ``frontier`` is :func:`~ftipbook.compare.frontier.frontier_value` over ``evaluated`` (the
    members that ran, as interventions) and the declared families; ``unsearched`` names the
    members that did not run. ``certified`` says whether ``value`` is the supremum over the whole
    class, and ``reason`` why (full coverage, a matching upper bound) or why not.
    """

    architecture: str
    cap: float
    frontier: FrontierValue
    evaluated: tuple[Intervention, ...]
    unsearched: tuple[str, ...]
    certified: bool
    reason: str

    @property
    def value(self) -> float:
        """The supremum (certified) or the lower bound (not certified), in the extended reals."""
        return self.frontier.value


def envelope_difference(a: Envelope, b: Envelope) -> float | Undefined:
    """``a.value - b.value`` in the extended reals, or :class:`~ftipbook.compare.frontier.Undefined` (ftip-00JX).

    Defined only for two certified envelopes under the same cap: a lower bound is not a
    supremum, and ``inf - inf`` has no value.
    """
    for name, e in (("a", a), ("b", b)):
        if not isinstance(e, Envelope):
            raise TypeError(f"{name} must be an Envelope, got {type(e).__name__}")
    if a.cap != b.cap:
        raise ValueError(f"the envelopes have different caps ({a.cap} vs {b.cap}); compare under one cap")
    for e in (a, b):
        if not e.certified:
            return Undefined(f"the value for {e.architecture!r} is a lower bound only ({e.reason})")
    if math.isinf(a.value) and a.value == b.value:
        return Undefined(f"both envelopes are {a.value}; {a.value} - {b.value} has no value")
    return a.value - b.value


@dataclass(frozen=True)
class RestrictedEnvelopeArm:
    """A restricted-envelope comparison arm (ftip-00JX): one allowed class per architecture, one cap,
    one evaluation law and one declared cost accounting for all of them.

    ``classes`` maps architecture names to their :class:`AllowedClass`; ``cap`` is the finite cost
    cap ``C >= 0`` in the scalar unit of ``accounting``; ``evaluation_law`` names the common
    evaluation law (task, draws, scoring). The envelope depends on the classes: it is a
    restriction-dependent quantity, not an architecture's unrestricted ceiling.
    """

    classes: Mapping[str, AllowedClass]
    cap: float
    accounting: Scalarization
    evaluation_law: str

    def __post_init__(self) -> None:
        if not isinstance(self.classes, Mapping) or not self.classes:
            raise ValueError("classes must map at least one architecture name to its AllowedClass")
        for arch, cls in self.classes.items():
            if not isinstance(cls, AllowedClass):
                raise TypeError(f"classes[{arch!r}] must be an AllowedClass, got {type(cls).__name__}")
            if cls.architecture != arch:
                raise ValueError(f"classes[{arch!r}] declares architecture {cls.architecture!r}")
        if isinstance(self.cap, bool) or not isinstance(self.cap, (int, float)) or not math.isfinite(self.cap) \
                or self.cap < 0:
            raise ValueError(f"cap={self.cap!r} must be a finite cost >= 0 (ftip-00JX)")
        if not isinstance(self.accounting, Scalarization):
            raise TypeError(f"accounting must be a Scalarization (the declared cost rule), "
                            f"got {type(self.accounting).__name__}")
        _name("evaluation_law", self.evaluation_law)
        object.__setattr__(self, "classes", MappingProxyType(dict(self.classes)))

    def _class(self, architecture: str) -> AllowedClass:
        if architecture not in self.classes:
            raise ValueError(f"architecture {architecture!r} has no declared class; declared: {list(self.classes)}")
        return self.classes[architecture]

    def _run(self, runner: Runner, cls: AllowedClass, name: str) -> Intervention:
        runs = [runner(cls.architecture, cls.package, cls.members[name], s) for s in cls.seeds]
        for o in runs:
            if not hasattr(o, "score") or not hasattr(o, "cost"):
                raise TypeError(f"the runner returned {type(o).__name__} for member {name!r}; it must return an "
                                f"outcome with .score and .cost")
        return interventions_from_outcomes({name: runs}, self.accounting)[0]

    def envelope(self, runner: Runner, architecture: str) -> Envelope:
        """Evaluate every member of the class of ``architecture``: the envelope, certified by full coverage."""
        if not callable(runner):
            raise TypeError(f"runner must be callable, got {type(runner).__name__}")
        cls = self._class(architecture)
        evaluated = tuple(self._run(runner, cls, name) for name in cls.members)
        fv = frontier_value(evaluated + cls.families, self.cap)
        return Envelope(architecture, float(self.cap), fv, evaluated, (), True,
                        f"every one of the {len(evaluated)} member(s) evaluated"
                        + (f", {len(cls.families)} declared famil(ies) by their stated supremum" if cls.families
                           else ""))

    def envelopes(self, runner: Runner) -> Mapping[str, Envelope]:
        """:meth:`envelope` of every declared architecture."""
        return MappingProxyType({arch: self.envelope(runner, arch) for arch in self.classes})

    def search(self, runner: Runner, architecture: str, order: Sequence[str] | None = None,
               upper_bound: UpperBound | None = None) -> Envelope:
        """A finite search of the class of ``architecture`` (ftip-00LX).

        Members run in ``order`` (default: declaration order) until the search budget is spent or
        the stopping rule fires. The value over what ran is a lower bound on the envelope. It is
        certified as the envelope only when every member ran and no family is declared, or when
        ``upper_bound`` matches it; an upper bound below the lower bound contradicts a measured
        score and is refused.
        """
        if not callable(runner):
            raise TypeError(f"runner must be callable, got {type(runner).__name__}")
        cls = self._class(architecture)
        order = list(cls.members) if order is None else list(order)
        unknown = [n for n in order if n not in cls.members]
        if unknown or len(set(order)) != len(order):
            raise ValueError(f"order must list distinct members of the class; {unknown or order} is not that")
        if upper_bound is not None and not isinstance(upper_bound, UpperBound):
            raise TypeError(f"upper_bound must be an UpperBound or None, got {type(upper_bound).__name__}")
        evaluated: list[Intervention] = []
        best, since = -math.inf, 0
        for name in order[:cls.search_budget]:
            eta = self._run(runner, cls, name)
            evaluated.append(eta)
            if eta.cost <= self.cap and eta.score > best:
                best, since = eta.score, 0
            else:
                since += 1
            if cls.patience is not None and since >= cls.patience:
                break
        done = {e.name for e in evaluated}
        unsearched = tuple(n for n in cls.members if n not in done) + tuple(f.name for f in cls.families)
        fv = frontier_value(evaluated, self.cap)
        if not unsearched:
            certified, reason = True, f"full coverage: all {len(evaluated)} member(s) evaluated"
        elif upper_bound is not None and upper_bound.value < fv.value:
            raise ValueError(f"the upper bound {upper_bound.value} is below the score {fv.value} that a searched "
                             f"member attains; the argument '{upper_bound.argument}' is wrong")
        elif upper_bound is not None and upper_bound.value == fv.value:
            certified, reason = True, f"matching upper bound: {upper_bound.argument}"
        else:
            certified = False
            reason = (f"lower bound only: {len(unsearched)} element(s) not searched"
                      + ("" if upper_bound is None else f", and the upper bound {upper_bound.value} does not match"))
        return Envelope(architecture, float(self.cap), fv, tuple(evaluated), unsearched, certified, reason)


__all__ = ["PROCEDURES", "Runner", "interventions_from_outcomes", "AllowedClass", "UpperBound", "Envelope",
           "envelope_difference", "RestrictedEnvelopeArm"]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
