"""Comparison arms as runnable drivers: common recipe, equal tuning, matched difference (ftip-00JV, 00JW, 00K0).

An arm does not train anything itself. It calls a *runner*, any callable
``runner(package_name, package, recipe, seed) -> Outcome`` that trains and evaluates one declared
architecture package under one recipe (:mod:`ftipbook.study` passes the project's trainer, a chapter
may pass a closed-form toy), and it checks what came back:

* :class:`CommonRecipeArm` (ftip-00JV) fixes one recipe for every package. Each outcome reports
  in its ``record`` the recipe coordinates *as run*; a coordinate that differs from the declared
  recipe, or that the run did not record, comes back as a separate named comparison coordinate
  (a :class:`Deviation`), and :meth:`ArmResult.difference` refuses to merge such runs into the
  common-recipe difference. The difference it does report is labelled as measured *under this
  recipe*: it is not the best either architecture could reach.
* :class:`EqualTuningArm` (ftip-00JW) lets each package choose its own recipe from a predeclared
  trial set of the same size, on the same tuning data, by the same selection and stopping rules,
  and tallies the tuning cost of every package with the same declared
  :class:`~ftipbook.compare.cost.Scalarization`.
* :func:`matched_difference` (ftip-00K0) is the estimand: the sample mean of one package's finite
  scores minus the other's, over paired draws, with a paired bootstrap interval
  (:func:`ftipbook.eval.stats.paired_bootstrap`).
"""
from __future__ import annotations

import dataclasses
import json
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ftipbook.compare.checks import real as _real
from ftipbook.compare.cost import UNKNOWN, CostVector, Scalarization, Unknown
from ftipbook.compare.records import ComparisonArm
from ftipbook.eval.stats import Interval, paired_bootstrap

#: Selection rules an equal-tuning arm may declare (the highest tuning score, ties to the earliest trial).
SELECTION_RULES = ("max_score",)

#: The ways :meth:`ArmResult.difference` may pair two packages' scores.
PAIRINGS = ("seeds", "items")


def plain(value: Any) -> Any:
    """A JSON-like copy of a recipe or record: mappings (read-only ones included) become dicts with
    string keys, tuples lists, dataclasses their field dicts; anything else is kept as it is."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return value


def _frozen(value: Any) -> Any:
    """A read-only copy of a plain value: mappings become mapping proxies, lists tuples."""
    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def _mapping(name: str, value: object, *, nonempty: bool = True) -> dict[str, Any]:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping of named coordinates, got {type(value).__name__} {value!r}")
    if nonempty and not value:
        raise ValueError(f"{name} is empty; declare at least one coordinate")
    bad = [k for k in value if not isinstance(k, str) or not k]
    if bad:
        raise ValueError(f"{name} has coordinate names that are not non-empty strings: {bad!r}")
    return plain(value)



def _seeds(seeds: object) -> tuple[int, ...]:
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence):
        raise TypeError(f"seeds must be a sequence of ints, got {type(seeds).__name__} {seeds!r}")
    out = tuple(seeds)
    if not out:
        raise ValueError("seeds is empty; declare at least one seed")
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in out):
        raise TypeError(f"seeds must be ints, got {seeds!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"seeds={list(out)} repeats a seed; each seed is one draw")
    return out


def recipe_label(recipe: Mapping[str, Any]) -> str:
    """A one-line label of a recipe: ``key=value`` pairs in key order (nested mappings as JSON)."""
    fields = _mapping("recipe", recipe)
    return ", ".join(f"{k}={json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v}"
                     for k, v in sorted(fields.items()))


# ----------------------------------------------------------------------------------------------
# outcomes
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    """What one run of one package under one recipe returns to an arm (ftip-00JV, ftip-00JW).

    ``score`` is finite (higher is better); ``cost`` its :class:`~ftipbook.compare.cost.CostVector`;
    ``item_scores``, when given, one finite score per evaluation item, the same items in the same
    order for every package so differences pair; ``record`` the coordinates the run actually used
    (the recipe as run, so an arm can detect a deviation), as nested plain values.
    """

    score: float
    cost: CostVector
    item_scores: tuple[float, ...] | None = None
    record: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "score", _real("Outcome.score", self.score))
        if not isinstance(self.cost, CostVector):
            raise TypeError(f"Outcome.cost must be a CostVector, got {type(self.cost).__name__}")
        if self.item_scores is not None:
            if isinstance(self.item_scores, (str, bytes)) or not isinstance(self.item_scores, Sequence):
                raise TypeError(f"Outcome.item_scores must be a sequence of numbers or None, "
                                f"got {type(self.item_scores).__name__}")
            items = tuple(_real(f"Outcome.item_scores[{i}]", x) for i, x in enumerate(self.item_scores))
            if not items:
                raise ValueError("Outcome.item_scores is empty; pass None when no per-item scores exist")
            object.__setattr__(self, "item_scores", items)
        object.__setattr__(self, "record", _frozen(_mapping("Outcome.record", self.record, nonempty=False)))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (unknown cost coordinates as the string ``"UNKNOWN"``)."""
        return {"score": self.score,
                "cost": {n: {"value": "UNKNOWN" if isinstance(v, Unknown) else v, "unit": self.cost.units[n]}
                         for n, v in self.cost.values.items()},
                "item_scores": None if self.item_scores is None else list(self.item_scores),
                "record": plain(self.record)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Outcome":
        """Inverse of :meth:`to_dict`."""
        cost = CostVector({n: UNKNOWN if c["value"] == "UNKNOWN" else c["value"] for n, c in d["cost"].items()},
                          {n: c["unit"] for n, c in d["cost"].items()})
        return cls(d["score"], cost, d["item_scores"], d["record"])


Runner = Callable[[str, Mapping[str, Any], Mapping[str, Any], int], Outcome]


@dataclass(frozen=True)
class Deviation:
    """A recipe coordinate one run did not follow (ftip-00JV): a separate comparison coordinate.

    ``arm`` holds the dotted coordinate, the declared value (``a``), the value as run (``b``) and
    ``status`` (``"differs"`` or ``"unrecorded"``).
    """

    package: str
    seed: int
    arm: ComparisonArm

    @property
    def name(self) -> str:
        return f"{self.package} seed {self.seed}: {self.arm.name}"


def _deviations(declared: Mapping[str, Any], run: Mapping[str, Any], prefix: str = "") -> list[ComparisonArm]:
    out = []
    for key, want in declared.items():
        path = f"{prefix}{key}"
        if key not in run:
            out.append(ComparisonArm(path, want, None, "unrecorded"))
        elif isinstance(want, Mapping) and isinstance(run[key], Mapping):
            out.extend(_deviations(want, run[key], path + "."))
        elif plain(run[key]) != plain(want):
            out.append(ComparisonArm(path, want, run[key], "differs"))
    return out


def _call(runner: Runner, name: str, package: Mapping[str, Any], recipe: Mapping[str, Any], seed: int) -> Outcome:
    out = runner(name, package, recipe, seed)
    if not isinstance(out, Outcome):
        raise TypeError(f"the runner returned {type(out).__name__} for package {name!r}, seed {seed}; "
                        "it must return an Outcome")
    return out


def _check_items(outcomes: Mapping[Any, Outcome]) -> None:
    lengths = {len(o.item_scores) for o in outcomes.values() if o.item_scores is not None}
    if len(lengths) > 1:
        raise ValueError(f"the runs report item scores of different lengths {sorted(lengths)}; "
                         "paired item scores need the same evaluation items for every run")


# ----------------------------------------------------------------------------------------------
# ftip-00K0: the matched difference
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MatchedDifference:
    """``mean(a_scores) - mean(b_scores)`` over paired draws, and its paired bootstrap interval (ftip-00K0).

    ``pairing`` says what the draws are (``"seeds"``, ``"items"`` or ``"given"``); ``label`` what the
    number is a difference *of* (for a common-recipe arm: the package pair under this recipe).
    ``interval`` is ``None`` for a single draw, which has a difference but no resampling spread.
    """

    a: str
    b: str
    a_scores: tuple[float, ...]
    b_scores: tuple[float, ...]
    estimate: float
    interval: Interval | None
    pairing: str
    label: str

    @property
    def n(self) -> int:
        """The number of paired draws."""
        return len(self.a_scores)

    @property
    def mean_a(self) -> float:
        return math.fsum(self.a_scores) / self.n

    @property
    def mean_b(self) -> float:
        return math.fsum(self.b_scores) / self.n


def _paired_scores(name: str, values: object) -> tuple[float, ...]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence of finite numbers, got {type(values).__name__}")
    out = []
    for i, x in enumerate(values):
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise TypeError(f"{name}[{i}]={x!r} is not a real number")
        x = float(x)
        if not math.isfinite(x):
            raise ValueError(f"{name}[{i}]={x!r} is not finite; the estimand needs finite scores (ftip-00K0)")
        out.append(x)
    if not out:
        raise ValueError(f"{name} is empty; the estimand needs n >= 1 evaluation draws (ftip-00K0)")
    return tuple(out)


def matched_difference(a: Sequence[float], b: Sequence[float], *, level: float = 0.95, n_boot: int = 2000,
                       seed: int = 0, names: tuple[str, str] = ("a", "b"), pairing: str = "given",
                       label: str = "") -> MatchedDifference:
    """The difference of sample means of paired finite scores, with a paired bootstrap interval (ftip-00K0).

    ``a[i]`` and ``b[i]`` must be the same draw (evaluation item or matched seed). The estimate is
    ``fsum(a) / n - fsum(b) / n``; the interval resamples draws jointly
    (:func:`ftipbook.eval.stats.paired_bootstrap`, ``n_boot`` resamples from ``seed``) and is
    ``None`` when ``n = 1``. Unequal lengths, empty or non-finite inputs are refused by name.
    """
    x, y = _paired_scores("a", a), _paired_scores("b", b)
    if len(x) != len(y):
        raise ValueError(f"paired scores need the same draws: len(a)={len(x)} != len(b)={len(y)}")
    if pairing not in PAIRINGS + ("given",):
        raise ValueError(f"pairing={pairing!r} must be one of {PAIRINGS + ('given',)}")
    n = len(x)
    interval = None
    if n >= 2:
        interval = paired_bootstrap(x, y, n_boot=n_boot, level=level, seed=seed).interval
    estimate = math.fsum(x) / n - math.fsum(y) / n
    return MatchedDifference(names[0], names[1], x, y, estimate, interval, pairing,
                             label or f"{names[0]} minus {names[1]}")


# ----------------------------------------------------------------------------------------------
# ftip-00JV: the common-recipe arm
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ArmResult:
    """Every outcome of a :class:`CommonRecipeArm` run, keyed ``(package, seed)``, and its deviations."""

    recipe: Mapping[str, Any]
    packages: Mapping[str, Mapping[str, Any]]
    seeds: tuple[int, ...]
    outcomes: Mapping[tuple[str, int], Outcome]
    deviations: tuple[Deviation, ...]

    def outcome(self, package: str, seed: int) -> Outcome:
        """The outcome of ``package`` at ``seed``."""
        if (package, seed) not in self.outcomes:
            raise KeyError(f"no outcome for package {package!r} at seed {seed!r}; packages {list(self.packages)}, "
                           f"seeds {list(self.seeds)}")
        return self.outcomes[package, seed]

    def scores(self, package: str) -> tuple[float, ...]:
        """The scores of ``package``, one per seed in seed order."""
        return tuple(self.outcome(package, s).score for s in self.seeds)

    @property
    def coordinates(self) -> Mapping[str, tuple[tuple[str, int], ...]]:
        """Each deviating coordinate and the ``(package, seed)`` runs that deviate in it."""
        out: dict[str, list[tuple[str, int]]] = {}
        for d in self.deviations:
            out.setdefault(d.arm.coordinate, []).append((d.package, d.seed))
        return MappingProxyType({k: tuple(v) for k, v in out.items()})

    @property
    def common(self) -> bool:
        """Whether every run followed every recipe coordinate."""
        return not self.deviations

    def difference(self, a: str, b: str, *, over: str = "seeds", level: float = 0.95, n_boot: int = 2000,
                   seed: int = 0) -> MatchedDifference:
        """``a`` minus ``b`` under this recipe (ftip-00JV, ftip-00K0).

        ``over="seeds"`` pairs the two packages' scores seed by seed; ``over="items"`` pairs the
        evaluation items, each item's score averaged over the seeds. A run of either package that
        deviates from the recipe is refused: it belongs to a separate comparison coordinate.
        """
        for name in (a, b):
            if name not in self.packages:
                raise ValueError(f"package {name!r} was not declared; declared packages: {list(self.packages)}")
        if a == b:
            raise ValueError(f"a and b are both {a!r}; a difference compares two declared packages")
        if over not in PAIRINGS:
            raise ValueError(f"over={over!r} must be one of {PAIRINGS}")
        bad = [d.name for d in self.deviations if d.package in (a, b)]
        if bad:
            raise ValueError("runs deviate from the common recipe and are separate comparison coordinates, not "
                             "part of the common-recipe difference: " + "; ".join(bad))
        if over == "seeds":
            xa, xb = self.scores(a), self.scores(b)
        else:
            missing = [(p, s) for p in (a, b) for s in self.seeds if self.outcome(p, s).item_scores is None]
            if missing:
                raise ValueError(f"over='items' needs item scores; the runs {missing} report none")
            xa, xb = (tuple(math.fsum(col) / len(self.seeds) for col in
                            zip(*(self.outcome(p, s).item_scores for s in self.seeds))) for p in (a, b))
        return matched_difference(xa, xb, level=level, n_boot=n_boot, seed=seed, names=(a, b), pairing=over,
                                  label=f"{a} minus {b} under this recipe ({len(self.seeds)} seed(s), "
                                        f"paired over {over})")


@dataclass(frozen=True)
class CommonRecipeArm:
    """A common-recipe comparison arm (ftip-00JV).

    ``recipe`` holds the fixed coordinates (data, optimizer family, schedule, budgets,
    post-training and feedback, inference budget, evaluation protocol and draws), as a nested
    mapping; ``packages`` the architecture packages, ``name -> field mapping`` (e.g. ModelConfig
    fields), declared before anything runs. :meth:`run` varies only the package.
    """

    recipe: Mapping[str, Any]
    packages: Mapping[str, Mapping[str, Any]]

    def __post_init__(self) -> None:
        recipe = _mapping("recipe", self.recipe)
        if not isinstance(self.packages, Mapping):
            raise TypeError(f"packages must map package names to field mappings, got {type(self.packages).__name__}")
        if len(self.packages) < 2:
            raise ValueError(f"packages declares {len(self.packages)} package(s); a comparison needs at least two")
        packages = {}
        for name, fields in self.packages.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"package names must be non-empty strings, got {name!r}")
            packages[name] = _mapping(f"packages[{name!r}]", fields)
        object.__setattr__(self, "recipe", _frozen(recipe))
        object.__setattr__(self, "packages", _frozen(packages))

    def run(self, runner: Runner, seeds: Sequence[int]) -> ArmResult:
        """Run every package at every seed under the recipe; each run's record is checked against it."""
        if not callable(runner):
            raise TypeError(f"runner must be callable, got {type(runner).__name__}")
        seeds = _seeds(seeds)
        outcomes, deviations = {}, []
        for name, package in self.packages.items():
            for s in seeds:
                out = _call(runner, name, package, self.recipe, s)
                outcomes[name, s] = out
                deviations.extend(Deviation(name, s, arm) for arm in _deviations(self.recipe, out.record))
                if "package" in out.record:
                    deviations.extend(Deviation(name, s, arm)
                                      for arm in _deviations(package, out.record["package"], "package."))
        _check_items(outcomes)
        return ArmResult(self.recipe, self.packages, seeds, MappingProxyType(outcomes), tuple(deviations))


# ----------------------------------------------------------------------------------------------
# ftip-00JW: the equal-tuning arm
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TuningResult:
    """Every trial of an :class:`EqualTuningArm` run, the selected recipe and the tuning cost per package.

    ``trials[p]`` and ``outcomes[p]`` list package ``p``'s predeclared recipes and their outcomes in
    trial order (each outcome's score is the *tuning* score); ``selected[p]`` is the index the
    selection rule chose; ``tuning_cost[p]`` the sum of ``accounting(outcome.cost)`` over ``p``'s
    trials (an :class:`~ftipbook.compare.cost.Unknown` when a trial's weighted cost is unknown).
    """

    trials: Mapping[str, tuple[Mapping[str, Any], ...]]
    outcomes: Mapping[str, tuple[Outcome, ...]]
    selected: Mapping[str, int]
    tuning_cost: Mapping[str, float | Unknown]
    tuning_data: str
    selection_rule: str
    stopping_rule: str
    accounting: Scalarization
    seed: int
    deviations: tuple[Deviation, ...] = ()

    def selected_recipe(self, package: str) -> Mapping[str, Any]:
        """The recipe the selection rule chose for ``package``."""
        if package not in self.trials:
            raise KeyError(f"no package {package!r}; packages: {list(self.trials)}")
        return self.trials[package][self.selected[package]]

    def selected_outcome(self, package: str) -> Outcome:
        """The tuning outcome of the selected recipe of ``package``."""
        self.selected_recipe(package)
        return self.outcomes[package][self.selected[package]]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of the whole result."""
        return {"trials": plain(self.trials),
                "outcomes": {p: [o.to_dict() for o in os] for p, os in self.outcomes.items()},
                "selected": dict(self.selected),
                "tuning_cost": {p: "UNKNOWN" if isinstance(c, Unknown) else c for p, c in self.tuning_cost.items()},
                "tuning_data": self.tuning_data, "selection_rule": self.selection_rule,
                "stopping_rule": self.stopping_rule, "seed": self.seed,
                "accounting": {"weights": dict(self.accounting.weights), "units": dict(self.accounting.units),
                               "scalar_unit": self.accounting.scalar_unit},
                "deviations": [{"package": d.package, "seed": d.seed, "coordinate": d.arm.coordinate,
                                "declared": plain(d.arm.a), "as_run": plain(d.arm.b), "status": d.arm.status}
                               for d in self.deviations]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "TuningResult":
        """Inverse of :meth:`to_dict`."""
        acc = d["accounting"]
        return cls(_frozen({p: list(t) for p, t in d["trials"].items()}),
                   MappingProxyType({p: tuple(Outcome.from_dict(o) for o in os) for p, os in d["outcomes"].items()}),
                   MappingProxyType(dict(d["selected"])),
                   MappingProxyType({p: UNKNOWN if c == "UNKNOWN" else c for p, c in d["tuning_cost"].items()}),
                   d["tuning_data"], d["selection_rule"], d["stopping_rule"],
                   Scalarization(acc["weights"], acc["units"], acc["scalar_unit"]), d["seed"],
                   tuple(Deviation(x["package"], x["seed"],
                                   ComparisonArm(x["coordinate"], x["declared"], x["as_run"], x["status"]))
                         for x in d["deviations"]))


@dataclass(frozen=True)
class EqualTuningArm:
    """An equal-tuning-budget comparison arm (ftip-00JW), declared before any trial runs.

    ``trials`` maps each package to its predeclared trial set (a sequence of recipes; the sets may
    differ between packages but must have equal size); ``tuning_data`` names the one tuning split
    every trial uses (it is added to each recipe as ``"tuning_data"``, and a trial that declares
    another one is refused); ``selection_rule`` is one of :data:`SELECTION_RULES`;
    ``stopping_rule`` the declared stopping rule, also added to each recipe; ``accounting`` the one
    :class:`~ftipbook.compare.cost.Scalarization` that prices every trial of every package.
    ``packages`` optionally gives each package's declared fields (default: an empty mapping).
    """

    trials: Mapping[str, Sequence[Mapping[str, Any]]]
    tuning_data: str
    selection_rule: str
    stopping_rule: str
    accounting: Scalarization
    packages: Mapping[str, Mapping[str, Any]] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.trials, Mapping):
            raise TypeError(f"trials must map package names to trial sets, got {type(self.trials).__name__}")
        if len(self.trials) < 2:
            raise ValueError(f"trials declares {len(self.trials)} package(s); a comparison needs at least two")
        for name in ("tuning_data", "stopping_rule"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{name} must be a non-empty string naming the declared choice, got {value!r}")
        if self.selection_rule not in SELECTION_RULES:
            raise ValueError(f"selection_rule={self.selection_rule!r} must be one of {SELECTION_RULES}")
        if not isinstance(self.accounting, Scalarization):
            raise TypeError(f"accounting must be a Scalarization (the declared cost rule), "
                            f"got {type(self.accounting).__name__}")
        trials = {}
        for name, recipes in self.trials.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"package names must be non-empty strings, got {name!r}")
            if isinstance(recipes, (Mapping, str, bytes)) or not isinstance(recipes, Sequence) or not recipes:
                raise ValueError(f"trials[{name!r}] must be a non-empty sequence of recipes, got {recipes!r}")
            out = []
            for i, recipe in enumerate(recipes):
                r = _mapping(f"trials[{name!r}][{i}]", recipe)
                for key in ("tuning_data", "stopping_rule"):
                    if key in r and r[key] != getattr(self, key):
                        raise ValueError(f"trials[{name!r}][{i}] declares {key}={r[key]!r}, but the arm's {key} is "
                                         f"{getattr(self, key)!r}: every trial uses the same one")
                    r[key] = getattr(self, key)
                out.append(r)
            trials[name] = out
        counts = {name: len(t) for name, t in trials.items()}
        if len(set(counts.values())) != 1:
            raise ValueError(f"trial counts differ between packages {counts}; an equal-tuning arm needs equal counts")
        packages = {name: {} for name in trials} if self.packages is None else self.packages
        if not isinstance(packages, Mapping) or set(packages) != set(trials):
            raise ValueError(f"packages must declare exactly the packages of trials {sorted(trials)}, "
                             f"got {sorted(packages) if isinstance(packages, Mapping) else packages!r}")
        object.__setattr__(self, "trials", _frozen(trials))
        object.__setattr__(self, "packages", _frozen({n: _mapping(f"packages[{n!r}]", packages[n], nonempty=False)
                                                      for n in trials}))

    @property
    def trial_count(self) -> int:
        """The number of trials each package runs."""
        return len(next(iter(self.trials.values())))

    def run(self, runner: Runner, seed: int) -> TuningResult:
        """Run every trial of every package at ``seed``, select per package, tally the tuning cost."""
        if not callable(runner):
            raise TypeError(f"runner must be callable, got {type(runner).__name__}")
        (seed,) = _seeds([seed])
        outcomes, selected, costs, deviations = {}, {}, {}, []
        for name, recipes in self.trials.items():
            outs = []
            for recipe in recipes:
                out = _call(runner, name, self.packages[name], recipe, seed)
                deviations.extend(Deviation(name, seed, arm) for arm in _deviations(recipe, out.record))
                outs.append(out)
            outcomes[name] = tuple(outs)
            best = max(o.score for o in outs)
            selected[name] = next(i for i, o in enumerate(outs) if o.score == best)
            priced = [self.accounting(o.cost) for o in outs]
            unknown = [i for i, c in enumerate(priced) if isinstance(c, Unknown)]
            costs[name] = (Unknown(f"trial(s) {unknown} of {name!r} have unknown weighted cost") if unknown
                           else math.fsum(priced))
        _check_items({(p, i): o for p, os in outcomes.items() for i, o in enumerate(os)})
        return TuningResult(self.trials, MappingProxyType(outcomes), MappingProxyType(selected),
                            MappingProxyType(costs), self.tuning_data, self.selection_rule, self.stopping_rule,
                            self.accounting, seed, tuple(deviations))


__all__ = ["SELECTION_RULES", "PAIRINGS", "plain", "recipe_label", "Outcome", "Runner", "Deviation",
           "MatchedDifference", "matched_difference", "ArmResult", "CommonRecipeArm", "TuningResult", "EqualTuningArm"]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
