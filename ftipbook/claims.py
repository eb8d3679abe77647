"""Capability claims and the witnesses they support: Convention ftip-0003, Definitions ftip-0005 and ftip-0007.

A capability claim (ftip-0003) names four objects, and :class:`CapabilityClaim` holds exactly these:

* a :class:`StartingArtifact` ``M_0``, with its tools, controllers and information disclosed
  (an externally supplied :class:`Component` must name its producer and acquisition procedure);
* a :class:`Procedure` ``A`` with its :class:`FeedbackSource` list, and a log of the evaluation
  items it touched while selecting training data, rewards or checkpoints;
* an :class:`EvaluationRule` ``E``: the task law, the retained artifact and the deployment procedure
  being judged, and a utility;
* a :class:`ResourceBound` ``b``: a :class:`DevelopmentBudget` and a :class:`DeploymentBudget`, two
  types that never mix. Each is a vector of named :class:`Quantity` coordinates with units;
  quantities of different units add only through a declared :class:`CostModel`.

Witnesses are decided from measured counts (:class:`Measurement`, successes out of trials) by a
declared :class:`ConfidenceRule` (exact Clopper-Pearson intervals at a stated level), never from the
point estimates alone. A :class:`Witness` has one of three verdicts: *established* (the intervals
certify the defining inequalities), *refuted* (they certify that one fails), or *undecided*.

* :func:`elicitation_witness` (ftip-0005): ``p_1(B) > p_0(B)`` and ``p_0(B) >= eps``.
* :func:`acquisition_witness` (ftip-0007): ``u_0 <= eps_0`` and ``u_1 >= eps_1`` on a transfer
  evaluation ``E+``; it raises :class:`TransferLeakError` when the procedure touched ``E+``.

How much evidence a witness needs (ftip-0008): :meth:`ConfidenceRule.min_trials` (the fewest trials
that can certify both inequalities) and :meth:`ConfidenceRule.certification_probability` (the exact
chance that ``n`` trials do, at given true rates). :func:`binomial_tail` sums binomial tails exactly in
rationals, and :meth:`ConfidenceRule.is_exact` uses it to check the floating-point interval ends.

Each interval covers its probability with probability at least ``level``, so an *established* or
*refuted* verdict, which rests on two intervals, is wrong with probability at most ``2 (1 - level)``.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction

from ftipbook import checks
from ftipbook.checks import show
from ftipbook.eval.stats import MAX_TRIALS, Interval, clopper_pearson
from ftipbook.prob import FiniteLaw

Amount = int | Fraction | float


# --- errors ---------------------------------------------------------------------------------------
class UnitMismatchError(ValueError):
    """Quantities of different units were combined without a cost model that converts them (ftip-0003)."""


class BudgetPhaseError(TypeError):
    """A development budget and a deployment budget were combined or compared (ftip-0003)."""


class BudgetExceededError(ValueError):
    """A realized resource vector is not coordinatewise within its declared bound (ftip-0003)."""


class TransferLeakError(ValueError):
    """The transfer evaluation of an acquisition witness was used for selection (ftip-0007)."""


# --- validation helpers ---------------------------------------------------------------------------
#: The most trials :func:`binomial_tail` (and so :meth:`ConfidenceRule.is_exact` and
#: :meth:`ConfidenceRule.certification_probability`) sums exactly in rationals (about 3 s at the bound).
MAX_EXACT_TRIALS = 10**4


def _name(arg: str, value: object) -> str:
    return checks.text(arg, value)


def _amount(arg: str, value: object) -> Amount:
    return checks.real(arg, value, 0)


def _count(arg: str, value: object, low: int = 0, high: int | None = None) -> int:
    return checks.integer(arg, value, low, high)


def _threshold(arg: str, value: object) -> Amount:
    return checks.probability(arg, value)


def _tuple_of(arg: str, values: object, kind: type) -> tuple:
    out = tuple(checks.items(arg, values, what=f"{kind.__name__} objects"))
    bad = [v for v in out if not isinstance(v, kind)]
    if bad:
        raise TypeError(f"{arg} must hold only {kind.__name__} objects, got {type(bad[0]).__name__} {bad[0]!r}")
    return out


# --- resources (ftip-0003) ------------------------------------------------------------------------
@dataclass(frozen=True)
class Quantity:
    """An amount of one resource in a named unit, e.g. ``Quantity(4096, "token")``."""

    amount: Amount
    unit: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "amount", _amount("amount", self.amount))
        _name("unit", self.unit)

    def _same_unit(self, other: object, op: str) -> Quantity:
        if not isinstance(other, Quantity):
            raise TypeError(f"cannot {op} a Quantity and a {type(other).__name__}: other must be a Quantity")
        if other.unit != self.unit:
            raise UnitMismatchError(
                f"cannot {op} {self} and other={other}: units {self.unit!r} and {other.unit!r} differ; "
                f"declare a CostModel that converts both to one unit")
        return other

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.amount + self._same_unit(other, "add").amount, self.unit)

    def __le__(self, other: Quantity) -> bool:
        return self.amount <= self._same_unit(other, "compare").amount

    def __lt__(self, other: Quantity) -> bool:
        return self.amount < self._same_unit(other, "compare").amount

    def __str__(self) -> str:
        return f"{self.amount} {self.unit}"


@dataclass(frozen=True)
class CostModel:
    """A declared conversion of units into one common ``unit``: ``rates[u]`` is the cost of one ``u``.

    Only through a cost model do coordinates of different units add (ftip-0003); a unit without a
    rate stays unconvertible and raises :class:`UnitMismatchError`.
    """

    unit: str
    rates: Mapping[str, Amount]

    def __post_init__(self) -> None:
        _name("unit", self.unit)
        if not isinstance(self.rates, Mapping) or not self.rates:
            raise TypeError(f"rates must be a nonempty mapping {{unit: cost per unit}}, got {show(self.rates)}")
        rates = tuple(sorted((_name("rates key", u), _amount(f"rates[{u!r}]", r)) for u, r in self.rates.items()))
        object.__setattr__(self, "rates", dict(rates))

    def __hash__(self) -> int:
        return hash((self.unit, tuple(sorted(self.rates.items()))))

    def convert(self, quantity: Quantity) -> Quantity:
        """``quantity`` expressed in this model's ``unit``."""
        if not isinstance(quantity, Quantity):
            raise TypeError(f"quantity must be a Quantity, got {type(quantity).__name__}")
        if quantity.unit == self.unit:
            return quantity
        if quantity.unit not in self.rates:
            raise UnitMismatchError(
                f"the cost model has no rate for unit {quantity.unit!r} (quantity={quantity}); it converts {sorted(self.rates)} to "
                f"{self.unit!r}")
        return Quantity(quantity.amount * self.rates[quantity.unit], self.unit)


def _coordinates(arg: str, coordinates: object) -> tuple[tuple[str, Quantity], ...]:
    if not isinstance(coordinates, Mapping):
        raise TypeError(f"{arg} must be a mapping {{name: Quantity}}, got {type(coordinates).__name__}")
    out = []
    for name, q in coordinates.items():
        _name(f"{arg} key", name)
        if isinstance(q, tuple) and len(q) == 2:
            try:
                q = Quantity(*q)
            except (TypeError, ValueError) as err:
                raise type(err)(f"{arg}[{name!r}]: {err}") from None
        if not isinstance(q, Quantity):
            raise TypeError(f"{arg}[{name!r}] must be a Quantity or an (amount, unit) pair, got {q!r}")
        out.append((name, q))
    return tuple(sorted(out))


@dataclass(frozen=True)
class Budget:
    """A vector of named resource coordinates, each a :class:`Quantity` with its own unit (ftip-0003).

    Construct with a mapping, ``DeploymentBudget({"samples": (16, "sample")})``. Adding or comparing
    budgets works coordinate by coordinate and only between budgets of the same phase.
    """

    coordinates: Mapping[str, Quantity] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if type(self) is Budget:
            raise TypeError("use DevelopmentBudget or DeploymentBudget, not the common base")
        object.__setattr__(self, "coordinates", dict(_coordinates("coordinates", self.coordinates)))

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(self.coordinates.items())))

    def __str__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={q}' for k, q in self.coordinates.items())})"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.coordinates)

    def __getitem__(self, name: str) -> Quantity:
        if name not in self.coordinates:
            raise KeyError(f"{type(self).__name__} has no coordinate {name!r}; it has {list(self.coordinates)}")
        return self.coordinates[name]

    def _same_phase(self, other: object, op: str, arg: str = "other") -> Budget:
        if not isinstance(other, Budget):
            raise TypeError(f"cannot {op} a {type(self).__name__} and a {type(other).__name__}: {arg} must be a "
                            f"{type(self).__name__}")
        if type(other) is not type(self):
            raise BudgetPhaseError(
                f"cannot {op} a {type(self).__name__} and {arg}, a {type(other).__name__}: development and "
                f"deployment budgets are separate objects")
        return other

    def __add__(self, other: Budget) -> Budget:
        """Coordinatewise sum; a coordinate present in one budget only is kept as it is."""
        other = self._same_phase(other, "add")
        out = dict(self.coordinates)
        for name, q in other.coordinates.items():
            out[name] = out[name] + q if name in out else q
        return type(self)(out)

    def violations(self, bound: Budget) -> tuple[str, ...]:
        """The coordinates where ``self`` (a realized use) is not within ``bound``, with the reason."""
        bound = self._same_phase(bound, "compare", "bound")
        out = []
        for name, used in self.coordinates.items():
            if name not in bound.coordinates:
                out.append(f"{name}: used {used}, but the bound declares no such coordinate")
            elif not used <= bound.coordinates[name]:
                out.append(f"{name}: used {used} > bound {bound.coordinates[name]}")
        return tuple(out)

    def within(self, bound: Budget) -> bool:
        """Every used coordinate is declared by ``bound`` and at most its value there."""
        return not self.violations(bound)

    def require_within(self, bound: Budget) -> None:
        """Raise :class:`BudgetExceededError`, naming the coordinates, unless :meth:`within` holds."""
        bad = self.violations(bound)
        if bad:
            raise BudgetExceededError(f"{type(self).__name__} exceeds its bound: " + "; ".join(bad))

    def total(self, cost_model: CostModel | None = None) -> Quantity:
        """The sum of all coordinates: in their one unit, or converted by a declared ``cost_model``."""
        if not self.coordinates:
            raise ValueError(f"an empty {type(self).__name__} has no total")
        if cost_model is not None and not isinstance(cost_model, CostModel):
            raise TypeError(f"cost_model must be a CostModel or None, got {type(cost_model).__name__}")
        quantities = list(self.coordinates.values())
        if cost_model is not None:
            quantities = [cost_model.convert(q) for q in quantities]
        out = quantities[0]
        for q in quantities[1:]:
            out = out + q
        return out


@dataclass(frozen=True, eq=True)
class DevelopmentBudget(Budget):
    """The complete development budget: training tokens, rollouts, accelerator work, wall-clock, ... (ftip-0003)."""

    __hash__ = Budget.__hash__


@dataclass(frozen=True, eq=True)
class DeploymentBudget(Budget):
    """The budget for judging a frozen artifact on fresh problems: samples, tool calls, tokens, ... (ftip-0003)."""

    __hash__ = Budget.__hash__


@dataclass(frozen=True)
class ResourceBound:
    """The bound ``b`` of a claim (ftip-0003): a development and a deployment budget, kept apart."""

    development: DevelopmentBudget
    deployment: DeploymentBudget

    def __post_init__(self) -> None:
        if not isinstance(self.development, DevelopmentBudget):
            raise TypeError(f"development must be a DevelopmentBudget, got {type(self.development).__name__}")
        if not isinstance(self.deployment, DeploymentBudget):
            raise TypeError(f"deployment must be a DeploymentBudget, got {type(self.deployment).__name__}")


# --- the four objects of a claim (ftip-0003) ------------------------------------------------------
COMPONENT_KINDS = ("tool", "controller", "library", "information")
FEEDBACK_KINDS = ("examples", "comparisons", "rewards", "interaction", "verifier")
#: What a procedure may use evaluation items for; any of these makes them unusable as transfer evidence.
SELECTION_USES = ("training-data", "reward", "checkpoint")


@dataclass(frozen=True)
class Component:
    """A disclosed resource of the starting point: a tool, controller, library or information.

    An ``external`` component (supplied from outside the charged process) must declare its
    ``producer`` and ``acquisition`` procedure (ftip-0003); it is not silently part of ``M_0``.
    """

    name: str
    kind: str
    external: bool = False
    producer: str | None = None
    acquisition: str | None = None

    def __post_init__(self) -> None:
        _name("name", self.name)
        if self.kind not in COMPONENT_KINDS:
            raise ValueError(f"kind={self.kind!r} must be one of {COMPONENT_KINDS}")
        if not isinstance(self.external, bool):
            raise TypeError(f"external must be a bool, got {self.external!r}")
        if self.external:
            for arg in ("producer", "acquisition"):
                if getattr(self, arg) is None:
                    raise ValueError(f"external component {self.name!r} must declare its {arg}")
                _name(arg, getattr(self, arg))


@dataclass(frozen=True)
class StartingArtifact:
    """``M_0`` with its disclosed tools and controllers (ftip-0003); ``artifact`` is the model object."""

    name: str
    artifact: object
    tools: tuple[Component, ...] = ()
    controllers: tuple[Component, ...] = ()
    information: tuple[Component, ...] = ()

    def __post_init__(self) -> None:
        _name("name", self.name)
        if self.artifact is None:
            raise ValueError("artifact must be the starting model itself, not None")
        for arg, kinds in (("tools", ("tool",)), ("controllers", ("controller",)),
                           ("information", ("information", "library"))):
            parts = _tuple_of(arg, getattr(self, arg), Component)
            wrong = [c.name for c in parts if c.kind not in kinds]
            if wrong:
                raise ValueError(f"{arg} may hold only components of kind {kinds}; {wrong} are not")
            object.__setattr__(self, arg, parts)

    @property
    def components(self) -> tuple[Component, ...]:
        return self.tools + self.controllers + self.information


@dataclass(frozen=True)
class FeedbackSource:
    """Where a procedure's feedback comes from (ftip-0003): ``kind`` in ``FEEDBACK_KINDS``."""

    name: str
    kind: str

    def __post_init__(self) -> None:
        _name("name", self.name)
        if self.kind not in FEEDBACK_KINDS:
            raise ValueError(f"kind={self.kind!r} must be one of {FEEDBACK_KINDS}")


@dataclass(frozen=True)
class EvaluationSet:
    """Named evaluation items: distinct ``ids`` and their ``contents`` (what a procedure could train on)."""

    name: str
    ids: tuple[str, ...]
    contents: tuple[Hashable, ...]

    def __post_init__(self) -> None:
        _name("name", self.name)
        ids = tuple(checks.items("ids", self.ids, nonempty=True, what="item ids"))
        contents = tuple(checks.items("contents", self.contents, what="item contents"))
        for i, item in enumerate(ids):
            _name(f"ids[{i}]", item)
        for i, c in enumerate(contents):
            checks.hashable(f"contents[{i}]", c)
        if len(set(ids)) != len(ids):
            raise ValueError(f"evaluation set {self.name!r}: ids lists an item id twice")
        if len(contents) != len(ids):
            raise ValueError(f"got {len(ids)} ids but {len(contents)} contents; give one content per item")
        object.__setattr__(self, "ids", ids)
        object.__setattr__(self, "contents", contents)

    @classmethod
    def from_documents(cls, name: str, documents: Sequence) -> EvaluationSet:
        """Items from documents with ``doc_id`` and ``text`` (e.g. a zoo benchmark's ``items``)."""
        documents = checks.items("documents", documents, nonempty=True, what="documents")
        bad = [d for d in documents if not (hasattr(d, "doc_id") and hasattr(d, "text"))]
        if bad:
            raise TypeError(f"documents must have doc_id and text (e.g. Document objects), got {show(bad[0])}")
        return cls(name, tuple(d.doc_id for d in documents), tuple(d.text for d in documents))

    def __len__(self) -> int:
        return len(self.ids)

    def matching(self, contents: Iterable[Hashable]) -> frozenset[str]:
        """The ids of the items whose content occurs in ``contents``."""
        seen = {checks.hashable("an entry of contents", c) for c in checks.items("contents", contents)}
        return frozenset(i for i, c in zip(self.ids, self.contents) if c in seen)


@dataclass(frozen=True)
class Touch:
    """A record that a procedure used items ``item_ids`` of evaluation set ``evaluation`` for ``use``."""

    evaluation: str
    item_ids: frozenset[str]
    use: str

    def __post_init__(self) -> None:
        _name("evaluation", self.evaluation)
        if not isinstance(self.item_ids, frozenset) or not all(isinstance(i, str) for i in self.item_ids):
            raise TypeError(f"item_ids must be a frozenset of item id strings, got {self.item_ids!r}")
        if self.use not in SELECTION_USES:
            raise ValueError(f"use={self.use!r} must be one of {SELECTION_USES}")


@dataclass(frozen=True)
class Procedure:
    """The procedure ``A`` of a claim (ftip-0003) with its feedback sources and its selection log.

    ``feedback`` must be given (an empty tuple declares a procedure without feedback). Each use of
    evaluation items for choosing training data, rewards or checkpoints is recorded with
    :meth:`touch` or :meth:`touch_by_content`, which return a new procedure with the record added.
    """

    name: str
    feedback: tuple[FeedbackSource, ...]
    touches: tuple[Touch, ...] = ()

    def __post_init__(self) -> None:
        _name("name", self.name)
        object.__setattr__(self, "feedback", _tuple_of("feedback", self.feedback, FeedbackSource))
        object.__setattr__(self, "touches", _tuple_of("touches", self.touches, Touch))

    def touch(self, evaluation: EvaluationSet, use: str, item_ids: Iterable[str] | None = None) -> Procedure:
        """Record that ``item_ids`` (default: all items) of ``evaluation`` were used for ``use``."""
        if not isinstance(evaluation, EvaluationSet):
            raise TypeError(f"evaluation must be an EvaluationSet, got {type(evaluation).__name__}")
        if use not in SELECTION_USES:
            raise ValueError(f"use={use!r} must be one of {SELECTION_USES}")
        ids = frozenset(evaluation.ids if item_ids is None else checks.items("item_ids", item_ids, what="item ids"))
        unknown = sorted(ids - set(evaluation.ids))
        if unknown:
            raise ValueError(f"item_ids {unknown[:3]} are not items of evaluation set {evaluation.name!r}")
        return Procedure(self.name, self.feedback, self.touches + (Touch(evaluation.name, ids, use),))

    def touch_by_content(self, evaluation: EvaluationSet, contents: Iterable[Hashable], use: str) -> Procedure:
        """Record a use of every item of ``evaluation`` whose content occurs in ``contents``
        (e.g. the training texts); nothing is recorded when none does."""
        if not isinstance(evaluation, EvaluationSet):
            raise TypeError(f"evaluation must be an EvaluationSet, got {type(evaluation).__name__}")
        hit = evaluation.matching(contents)
        return self.touch(evaluation, use, hit) if hit else self

    def touched(self, evaluation: EvaluationSet) -> frozenset[str]:
        """The ids of ``evaluation``'s items that this procedure used for selection."""
        if not isinstance(evaluation, EvaluationSet):
            raise TypeError(f"evaluation must be an EvaluationSet, got {type(evaluation).__name__}")
        return frozenset().union(*(t.item_ids for t in self.touches if t.evaluation == evaluation.name))


@dataclass(frozen=True)
class EvaluationRule:
    """The evaluation rule ``E`` of a claim (ftip-0003).

    ``task_law`` is a :class:`~ftipbook.prob.FiniteLaw` over instances, a nonempty sequence of
    instances (each weighted equally), or an :class:`EvaluationSet` (its contents); the rule judges
    ``retained_artifact`` (which artifact is kept, e.g. ``"final checkpoint"``) run by the declared
    ``deployment`` procedure, scoring an output with ``utility(instance, output)``.
    """

    task_law: FiniteLaw | EvaluationSet | Sequence
    retained_artifact: str
    deployment: str
    utility: Callable[[object, object], Amount]

    def __post_init__(self) -> None:
        if isinstance(self.task_law, (str, bytes)) or not isinstance(self.task_law, (FiniteLaw, EvaluationSet,
                                                                                    Sequence)):
            raise TypeError(f"task_law must be a FiniteLaw, an EvaluationSet or a sequence of instances, got "
                            f"{type(self.task_law).__name__}")
        if not isinstance(self.task_law, (FiniteLaw, EvaluationSet)):
            if len(self.task_law) == 0:
                raise ValueError("task_law must hold at least one instance")
            for i, x in enumerate(self.task_law):
                checks.hashable(f"task_law[{i}]", x)
            object.__setattr__(self, "task_law", tuple(self.task_law))
        _name("retained_artifact", self.retained_artifact)
        _name("deployment", self.deployment)
        if not callable(self.utility):
            raise TypeError(f"utility must be callable (instance, output) -> number, got {self.utility!r}")

    def law(self) -> FiniteLaw:
        """The task law as a :class:`~ftipbook.prob.FiniteLaw` (equal weights for a sequence)."""
        if isinstance(self.task_law, FiniteLaw):
            return self.task_law
        instances = self.task_law.contents if isinstance(self.task_law, EvaluationSet) else self.task_law
        weights: dict[Hashable, Fraction] = {}
        for x in instances:
            weights[x] = weights.get(x, Fraction(0)) + Fraction(1, len(instances))
        return FiniteLaw(weights)

    def value(self, respond: Callable[[object], object]) -> Amount:
        """Expected utility ``sum_x P(x) utility(x, respond(x))`` of a deterministic responder."""
        if not callable(respond):
            raise TypeError(f"respond must be callable instance -> output, got {show(respond)}")

        def score(x: object) -> Amount:
            return _amount(f"the utility at instance {show(x)} of respond's output", self.utility(x, respond(x)))

        return self.law().expectation(score)


@dataclass(frozen=True)
class CapabilityClaim:
    """A capability claim of ftip-0003: ``(M_0, A, E, b)``, all four required.

    The claim is about running ``procedure`` from ``start`` and judging the result with
    ``evaluation`` within ``bound``; witnesses built from it use its procedure's selection log.
    """

    start: StartingArtifact
    procedure: Procedure
    evaluation: EvaluationRule
    bound: ResourceBound

    def __post_init__(self) -> None:
        for arg, kind in (("start", StartingArtifact), ("procedure", Procedure), ("evaluation", EvaluationRule),
                          ("bound", ResourceBound)):
            value = getattr(self, arg)
            if not isinstance(value, kind):
                raise TypeError(f"{arg} must be a {kind.__name__}, got {type(value).__name__} {value!r}")

    def acquisition_witness(self, before: Measurement, after: Measurement, *, eps0: Amount, eps1: Amount,
                            transfer: EvaluationSet, rule: ConfidenceRule | None = None) -> Witness:
        """:func:`acquisition_witness` with this claim's procedure."""
        return acquisition_witness(before, after, eps0=eps0, eps1=eps1, transfer=transfer,
                                   procedure=self.procedure, rule=rule)


# --- measured evidence and the confidence rule (ftip-0005, ftip-0007) -----------------------------
@dataclass(frozen=True)
class ConfidenceRule:
    """The declared confidence rule: exact two-sided Clopper-Pearson intervals at ``level``."""

    level: float = 0.95
    method: str = "clopper-pearson"

    def __post_init__(self) -> None:
        object.__setattr__(self, "level", checks.level("level", self.level))
        if self.method != "clopper-pearson":
            raise ValueError(f"method={self.method!r}: only 'clopper-pearson' (exact binomial) is implemented")

    def interval(self, successes: int, trials: int) -> Interval:
        """The interval for a success probability after ``successes`` out of ``trials``."""
        trials = _count("trials", trials, 1, MAX_TRIALS)
        successes = _count("successes", successes, 0, trials)
        return clopper_pearson(successes, trials, self.level)

    def is_exact(self, successes: int, trials: int, interval: Interval, delta: float = 1e-7) -> bool:
        """Whether ``interval``'s ends are where the exact binomial tails cross ``(1 - level) / 2``,
        to within ``delta``: an independent check, in rational arithmetic, of the float root finder."""
        trials = _count("trials", trials, 1, MAX_EXACT_TRIALS)
        successes = _count("successes", successes, 0, trials)
        checks.instance("interval", interval, Interval)
        delta = float(checks.real("delta", delta, 0, 0.5, low_open=True))
        alpha = Fraction((1 - self.level) / 2)

        def at(p: float) -> Fraction:
            return Fraction(min(max(p, 0.0), 1.0)).limit_denominator(10**12)

        low, high = interval.low, interval.high
        if successes == 0:
            low_ok = low == 0
        else:
            low_ok = binomial_tail(successes, trials, at(low - delta)) < alpha < binomial_tail(
                successes, trials, at(low + delta))
        if successes == trials:
            high_ok = high == 1
        else:
            high_ok = 1 - binomial_tail(successes + 1, trials, at(high - delta)) > alpha > 1 - binomial_tail(
                successes + 1, trials, at(high + delta))
        return low_ok and high_ok

    def certifying_counts(self, trials: int, eps0: Amount, eps1: Amount) -> tuple[int, int]:
        """``(a, b)``: with ``trials`` trials, ``u <= eps0`` is certified exactly by the counts ``0..a``
        (``a = -1``: by none) and ``u >= eps1`` exactly by ``b..trials`` (``b = trials + 1``: by none)."""
        n = _count("trials", trials, 1, MAX_TRIALS)
        eps0, eps1 = _threshold("eps0", eps0), _threshold("eps1", eps1)

        def first_true(pred: Callable[[int], bool]) -> int:  # pred is monotone on 0..n+1, pred(n+1) true
            lo, hi = -1, n + 1
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if pred(mid) else (mid, hi)
            return hi

        a = first_true(lambda x: x > n or self.interval(x, n).high > eps0) - 1
        b = first_true(lambda x: x > n or self.interval(x, n).low >= eps1)
        return a, b

    def certification_probability(self, trials: int, u0: Fraction, u1: Fraction, eps0: Amount,
                                  eps1: Amount) -> Fraction:
        """Exact probability that ``trials`` independent trials before and after, with pass
        probabilities ``u0`` and ``u1``, establish the acquisition witness ``(eps0, eps1)`` (ftip-0008)."""
        for arg, u in (("u0", u0), ("u1", u1)):
            if isinstance(u, bool) or not isinstance(u, (int, Fraction)) or not 0 <= u <= 1:
                raise ValueError(f"{arg}={show(u)} must be an int or Fraction in [0, 1] (the result is exact)")
        trials = _count("trials", trials, 1, MAX_EXACT_TRIALS)
        a, b = self.certifying_counts(trials, eps0, eps1)
        before = 1 - binomial_tail(a + 1, trials, u0)  # P(X0 <= a)
        after = binomial_tail(b, trials, u1)  # P(X1 >= b)
        return before * after

    def min_trials(self, eps0: Amount, eps1: Amount) -> int:
        """The fewest trials that can certify ``u <= eps0`` (after 0 successes) and ``u >= eps1``
        (after all successes): below this count no data establish an acquisition witness."""
        eps0, eps1 = _threshold("eps0", eps0), _threshold("eps1", eps1)
        if eps0 <= 0 or eps1 >= 1:
            raise ValueError(f"eps0={eps0} = 0 or eps1={eps1} = 1 can never be certified by finite counts")

        def enough(n: int) -> bool:
            return self.interval(0, n).high <= eps0 and self.interval(n, n).low >= eps1

        hi = 1
        while not enough(hi):
            hi *= 2
            if hi > MAX_TRIALS:
                raise ValueError(f"eps0={eps0} and eps1={eps1} need more than {MAX_TRIALS} trials to certify")
        lo = hi // 2  # enough(lo) is false (or lo = 0)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if enough(mid) else (mid, hi)
        return hi


def binomial_tail(successes: int, trials: int, p: Fraction | int) -> Fraction:
    """Exact ``P(X >= successes)`` for ``X ~ Binomial(trials, p)`` at a rational ``p``, summed in integers
    over the shorter side of the distribution."""
    n, s = _count("trials", trials, 1, MAX_EXACT_TRIALS), _count("successes", successes)
    if isinstance(p, bool) or not isinstance(p, (int, Fraction)) or not 0 <= p <= 1:
        raise ValueError(f"p={show(p)} must be an int or Fraction in [0, 1]")
    if s == 0:
        return Fraction(1)
    if s > n:
        return Fraction(0)
    if p == 1:
        return Fraction(1)
    p = Fraction(p)
    a, b = p.numerator, p.denominator
    upper = s > n - s  # sum j = s..n directly when that side is shorter, else 1 - sum j = 0..s-1
    js = range(s, n + 1) if upper else range(0, s)
    j0 = js[0]
    term = math.comb(n, j0) * a**j0 * (b - a) ** (n - j0)  # comb(n, j) a^j (b - a)^(n - j)
    total = 0
    for j in js:
        total += term
        if j < n:
            term = term * (n - j) * a // ((j + 1) * (b - a))
    mass = Fraction(total, b**n)
    return mass if upper else 1 - mass


@dataclass(frozen=True)
class Measurement:
    """``successes`` out of ``trials`` for event ``event`` (a behaviour ``B`` or a transfer evaluation
    ``E+``), judged by ``evaluator`` under the deployment ``protocol`` and ``budget``."""

    successes: int
    trials: int
    event: str
    evaluator: str
    protocol: str
    budget: DeploymentBudget | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "trials", _count("trials", self.trials, 1, MAX_TRIALS))
        object.__setattr__(self, "successes", _count("successes", self.successes))
        if self.successes > self.trials:
            raise ValueError(f"successes={self.successes} exceeds trials={self.trials}")
        for arg in ("event", "evaluator", "protocol"):
            _name(arg, getattr(self, arg))
        if self.budget is not None and not isinstance(self.budget, DeploymentBudget):
            raise BudgetPhaseError(f"budget must be a DeploymentBudget (or None), got {type(self.budget).__name__}")

    @classmethod
    def from_outcomes(cls, outcomes: Sequence[bool], event: str, evaluator: str, protocol: str,
                      budget: DeploymentBudget | None = None) -> Measurement:
        """Count the ``True`` entries of a sequence of per-trial bools."""
        outcomes = [checks.boolean(f"outcomes[{i}]", o)
                    for i, o in enumerate(checks.items("outcomes", outcomes, what="bools"))]
        if not outcomes:
            raise ValueError("outcomes is empty: a measurement needs trials >= 1 (one bool per trial)")
        return cls(sum(outcomes), len(outcomes), event, evaluator, protocol, budget)

    @property
    def estimate(self) -> Fraction:
        """The point estimate ``successes / trials`` (reported, never used to decide a witness)."""
        return Fraction(self.successes, self.trials)


class Verdict(str, Enum):
    """What the declared confidence rule lets a finite experiment say about a witness."""

    ESTABLISHED = "established"
    REFUTED = "refuted"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class Witness:
    """The verdict on one witness, with the intervals and the reasons it rests on."""

    kind: str
    verdict: Verdict
    before: Interval
    after: Interval
    thresholds: tuple[Amount, ...]
    reasons: tuple[str, ...]

    def __post_init__(self) -> None:
        checks.choice("kind", self.kind, ("elicitation", "acquisition"))
        checks.instance("verdict", self.verdict, Verdict)
        checks.instance("before", self.before, Interval)
        checks.instance("after", self.after, Interval)
        thresholds = checks.items("thresholds", self.thresholds, nonempty=True, what="thresholds")
        object.__setattr__(self, "thresholds", tuple(_threshold(f"thresholds[{i}]", t)
                                                     for i, t in enumerate(thresholds)))
        reasons = checks.items("reasons", self.reasons, what="reasons")
        object.__setattr__(self, "reasons", tuple(checks.text(f"reasons[{i}]", r) for i, r in enumerate(reasons)))

    @property
    def established(self) -> bool:
        return self.verdict is Verdict.ESTABLISHED


def _rule(rule: ConfidenceRule | None) -> ConfidenceRule:
    if rule is None:
        return ConfidenceRule()
    if not isinstance(rule, ConfidenceRule):
        raise TypeError(f"rule must be a ConfidenceRule, got {type(rule).__name__}")
    return rule


def _pair(before: object, after: object, fields: tuple[str, ...]) -> None:
    for arg, m in (("before", before), ("after", after)):
        if not isinstance(m, Measurement):
            raise TypeError(f"{arg} must be a Measurement, got {type(m).__name__}")
    for f in fields:
        b, a = getattr(before, f), getattr(after, f)
        if b != a:
            show = repr if isinstance(b, str) else str
            raise ValueError(f"before and after must share the same {f}: {show(b)} != {show(a)}")


def _verdict(certified: list[str], failed: list[str]) -> Verdict:
    if failed:
        return Verdict.REFUTED
    return Verdict.ESTABLISHED if len(certified) == 2 else Verdict.UNDECIDED


def elicitation_witness(before: Measurement, after: Measurement, *, eps: Amount,
                        rule: ConfidenceRule | None = None) -> Witness:
    """Decide the elicitation witness of ftip-0005: ``p_1(B) > p_0(B)`` with ``p_0(B) >= eps``.

    ``before`` measures ``B`` under the declared starting procedure, ``after`` after the
    intervention, with the same event, evaluator, sampling protocol and deployment budget (they belong
    to the claim; a change of any of them is refused, as :func:`acquisition_witness` refuses it). With intervals ``[l_0, h_0]``, ``[l_1, h_1]``:
    established when ``l_0 >= eps`` and ``l_1 > h_0``; refuted when ``h_0 < eps`` or ``h_1 <= l_0``
    (then ``p_1 <= p_0``); undecided otherwise.
    """
    rule = _rule(rule)
    eps = _threshold("eps", eps)
    if eps == 0:
        raise ValueError("eps must be > 0: the tolerance of an elicitation witness is positive")
    _pair(before, after, ("event", "evaluator", "budget", "protocol"))
    i0, i1 = rule.interval(before.successes, before.trials), rule.interval(after.successes, after.trials)
    certified, failed = [], []
    if i0.low >= eps:
        certified.append(f"p0 >= eps: lower bound {i0.low:.4g} >= {eps}")
    elif i0.high < eps:
        failed.append(f"p0 < eps: upper bound {i0.high:.4g} < {eps}")
    if i1.low > i0.high:
        certified.append(f"p1 > p0: lower bound of p1 {i1.low:.4g} > upper bound of p0 {i0.high:.4g}")
    elif i1.high <= i0.low:
        failed.append(f"p1 <= p0: upper bound of p1 {i1.high:.4g} <= lower bound of p0 {i0.low:.4g}")
    return Witness("elicitation", _verdict(certified, failed), i0, i1, (eps,), tuple(certified + failed))


def acquisition_witness(before: Measurement, after: Measurement, *, eps0: Amount, eps1: Amount,
                        transfer: EvaluationSet, procedure: Procedure,
                        rule: ConfidenceRule | None = None) -> Witness:
    """Decide the acquisition witness of ftip-0007: ``u_0 <= eps0`` and ``u_1 >= eps1`` on ``transfer``.

    Both measurements must be of ``transfer`` with the same evaluator, protocol and budget.
    Raises :class:`TransferLeakError` when ``procedure`` used any item of ``transfer`` to select
    training data, rewards or checkpoints. With intervals ``[l_0, h_0]``, ``[l_1, h_1]``: established
    when ``h_0 <= eps0`` and ``l_1 >= eps1``; refuted when ``l_0 > eps0`` or ``h_1 < eps1``.
    """
    rule = _rule(rule)
    eps0, eps1 = _threshold("eps0", eps0), _threshold("eps1", eps1)
    if not eps0 < eps1:
        raise ValueError(f"thresholds must satisfy 0 <= eps0 < eps1 <= 1, got eps0={eps0}, eps1={eps1}")
    if not isinstance(procedure, Procedure):
        raise TypeError(f"procedure must be a Procedure, got {type(procedure).__name__}")
    if not isinstance(transfer, EvaluationSet):
        raise TypeError(f"transfer must be an EvaluationSet, got {type(transfer).__name__}")
    _pair(before, after, ("event", "evaluator", "protocol", "budget"))
    if before.event != transfer.name:
        raise ValueError(f"the measurements are of {before.event!r}, not of the transfer evaluation {transfer.name!r}")
    leaked = procedure.touched(transfer)
    if leaked:
        uses = sorted({t.use for t in procedure.touches if t.evaluation == transfer.name})
        raise TransferLeakError(
            f"procedure {procedure.name!r} used {len(leaked)} of the {len(transfer)} items of transfer evaluation "
            f"{transfer.name!r} for {', '.join(uses)} (e.g. {sorted(leaked)[0]!r}); it is not independent evidence")
    i0, i1 = rule.interval(before.successes, before.trials), rule.interval(after.successes, after.trials)
    certified, failed = [], []
    if i0.high <= eps0:
        certified.append(f"u0 <= eps0: upper bound {i0.high:.4g} <= {eps0}")
    elif i0.low > eps0:
        failed.append(f"u0 > eps0: lower bound {i0.low:.4g} > {eps0}")
    if i1.low >= eps1:
        certified.append(f"u1 >= eps1: lower bound {i1.low:.4g} >= {eps1}")
    elif i1.high < eps1:
        failed.append(f"u1 < eps1: upper bound {i1.high:.4g} < {eps1}")
    return Witness("acquisition", _verdict(certified, failed), i0, i1, (eps0, eps1), tuple(certified + failed))
