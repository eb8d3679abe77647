"""Reports of a finished architecture study (ftip-00LQ, 00LR, 00LY, 00LZ, 00M1, 00M2).

A comparison study ends in statements, and each statement here is an object that refuses to be
made without the parts that support it:

* :class:`FrontierReport` (ftip-00LQ): the cost grid, the scores with their intervals, the paired
  differences, the declared scalarization and the identity and configuration of every compared
  model; :meth:`FrontierReport.validate` names whatever is missing, and only a complete report is
  exported (JSON, Markdown) or asked which measured points are Pareto or iso-quality comparisons.
  :func:`build_frontier_report` assembles one from study entries.
* :class:`EstimandKey` and :func:`ordering` (ftip-00LR): an ordering of architectures is read off
  values that share task, evaluation law, intervention class and scalarization, or not at all.
* :func:`coordinate_changes`, :func:`attribute_difference` and :func:`factorial_2x2` (ftip-00LY): a
  changed optimizer, post-training method, hardware or kernel, precision, context policy or
  evaluation law is a new intervention coordinate, unless a factorial design estimates the
  interaction.
* :class:`TransferMatrix` (ftip-00LZ, 00M2): which interfaces and budgets permit a comparison
  among architecture families; a blank or incomparable cell is a finding, and nothing is imputed.
* :class:`SequentialSignTest` and :class:`StoppingReport` (ftip-00M1): the tested grid, excluded
  configurations, stopping rule, uncertainty and negative results; "no difference detected" is
  reported with its interval and power, never as equality.
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from fractions import Fraction
from itertools import combinations
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar, Protocol

import numpy as np

from ftipbook import atomic
from ftipbook.compare.checks import real as _real
from ftipbook.compare.cost import CostVector, Scalarization, Unknown, pareto_dominates
from ftipbook.compare.frontier import (
    CostRatio,
    NotReached,
    ScoredCostMeasurement,
    Undefined,
    measured_cost_ratio,
    smallest_cost_reaching,
)
from ftipbook.compare.records import (
    EvaluationConditions,
    FieldChange,
    Record,
    SystemIdentity,
    SystemsRecord,
    TrainingRecord,
    diff_records,
    missing_fields,
)
from ftipbook.eval.stats import Interval, bootstrap_mean_ci, clopper_pearson, paired_bootstrap


class IncompleteReport(ValueError):
    """A report lacks a part the note requires; ``missing`` lists every missing part by name."""

    def __init__(self, kind: str, missing: Sequence[str]) -> None:
        self.missing = tuple(missing)
        super().__init__(f"incomplete {kind}: missing {'; '.join(self.missing)}")


class EstimandMismatch(ValueError):
    """Two values belong to different estimands (ftip-00LR); ``coordinates`` names what differs."""

    def __init__(self, coordinates: Sequence[str], detail: str) -> None:
        self.coordinates = tuple(coordinates)
        super().__init__(f"different estimands: {', '.join(self.coordinates)} differ ({detail}); "
                         f"an ordering does not transfer across them (ftip-00LR)")


class IncomparableCell(ValueError):
    """A transfer-matrix cell is blank, incomparable or open, so it has no value (ftip-00LZ)."""


class ImputationRefused(ValueError):
    """A summary would fill or average over cells that are findings, not missing scores (ftip-00LZ)."""


class MissingEvidence(ValueError):
    """A value was offered without the evidence record that produced it (ftip-00LZ, 00M2)."""


def _text(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    return value



def _interval(name: str, value: object) -> Interval | None:
    if value is not None and not isinstance(value, Interval):
        raise TypeError(f"{name} must be an Interval or None (missing), got {type(value).__name__}")
    return value


def _fmt_grid(c: float) -> str:
    return f"{c:g}"


# ----------------------------------------------------------------------------------------------
# ftip-00LQ: the frontier report
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MeasuredPoint:
    """One system at one grid cost: its score, the interval of that score, and its full cost vector.

    ``grid_cost`` is the coordinate on the declared cost grid (e.g. training steps); ``cost`` the
    recorded :class:`~ftipbook.compare.cost.CostVector` of the run; ``label`` names the run(s).
    ``interval`` may be ``None`` while a report is assembled; :meth:`FrontierReport.validate`
    then names it as missing.
    """

    system: str
    grid_cost: float
    score: float
    interval: Interval | None
    cost: CostVector
    label: str

    def __post_init__(self) -> None:
        _text("system", self.system)
        _text("label", self.label)
        object.__setattr__(self, "grid_cost", _real("grid_cost", self.grid_cost))
        object.__setattr__(self, "score", _real("score", self.score))
        _interval("interval", self.interval)
        if not isinstance(self.cost, CostVector):
            raise TypeError(f"cost must be a CostVector, got {type(self.cost).__name__}")


@dataclass(frozen=True)
class PairedScore:
    """``mean(a) - mean(b)`` over the items both systems were scored on at one grid cost, with its interval."""

    system_a: str
    system_b: str
    grid_cost: float
    difference: float
    interval: Interval | None
    n_pairs: int

    def __post_init__(self) -> None:
        _text("system_a", self.system_a)
        _text("system_b", self.system_b)
        if self.system_a == self.system_b:
            raise ValueError(f"a paired score needs two systems, got {self.system_a!r} twice")
        object.__setattr__(self, "grid_cost", _real("grid_cost", self.grid_cost))
        object.__setattr__(self, "difference", _real("difference", self.difference))
        _interval("interval", self.interval)
        if isinstance(self.n_pairs, bool) or not isinstance(self.n_pairs, int) or self.n_pairs < 2:
            raise ValueError(f"n_pairs={self.n_pairs!r} must be an int >= 2")


@dataclass(frozen=True)
class ParetoComparison:
    """The Pareto relation of two measured points (labels) from different systems.

    ``verdict`` is ``"a dominates"``, ``"b dominates"``, ``"tradeoff"`` (each better somewhere),
    ``"equal"`` or ``"undetermined"`` (an unknown cost coordinate decides it).
    """

    a: str
    b: str
    verdict: str


@dataclass(frozen=True)
class IsoQualityComparison:
    """At target ``q``: each system's cheapest measured point reaching ``q`` and the cost ratio ``a / b``.

    ``ratio`` is a :class:`~ftipbook.compare.frontier.CostRatio` when both reach ``q`` and an
    :class:`~ftipbook.compare.frontier.Undefined` (with the reason) otherwise.
    """

    target: float
    system_a: str
    system_b: str
    reached_a: ScoredCostMeasurement | NotReached
    reached_b: ScoredCostMeasurement | NotReached
    ratio: CostRatio | Undefined


def _weakly_cheaper(a: CostVector, b: CostVector) -> bool | Unknown:
    """``a <= b`` in every coordinate (``True`` also for equal vectors); unknown when a coordinate is."""
    if dict(a.values) == dict(b.values) and not a.unknown():
        return True
    return pareto_dominates(a, b)


@dataclass(frozen=True)
class FrontierReport:
    """A frontier report for a paired architecture study (ftip-00LQ).

    ``protocol`` names the task and evaluation law every score was measured under; ``grid`` is
    the declared cost grid (increasing, in ``grid_unit``); ``points`` hold each system's score,
    interval and cost vector at each grid cost; ``paired`` the paired score differences;
    ``scalarization`` the declared weights that turn a cost vector into the scalar cost of an
    iso-quality comparison; ``identities`` and ``configs`` the exact identity (checkpoint hash,
    variant, parameter counts, tokenizer) and configuration of each system; ``pareto_coordinates``
    the cost coordinates a Pareto comparison looks at. Parts may be left ``None`` or empty while
    assembling; :meth:`validate` names them.
    """

    protocol: str
    grid: tuple[float, ...]
    grid_unit: str
    points: tuple[MeasuredPoint, ...]
    paired: tuple[PairedScore, ...]
    scalarization: Scalarization | None
    identities: Mapping[str, SystemIdentity]
    configs: Mapping[str, Mapping[str, Any]]
    pareto_coordinates: tuple[str, ...]

    def __post_init__(self) -> None:
        _text("protocol", self.protocol)
        _text("grid_unit", self.grid_unit)
        grid = tuple(_real("grid cost", c) for c in self.grid)
        if any(c <= 0 for c in grid) or any(b <= a for a, b in zip(grid, grid[1:])):
            raise ValueError(f"grid={grid} must be increasing positive costs 0 < C_1 < ... < C_m (ftip-00LI)")
        object.__setattr__(self, "grid", grid)
        for name, kind in (("points", MeasuredPoint), ("paired", PairedScore)):
            items = tuple(getattr(self, name))
            for item in items:
                if not isinstance(item, kind):
                    raise TypeError(f"{name} must hold {kind.__name__} objects, got {type(item).__name__}")
            object.__setattr__(self, name, items)
        if self.scalarization is not None and not isinstance(self.scalarization, Scalarization):
            raise TypeError(f"scalarization must be a Scalarization or None, got {type(self.scalarization).__name__}")
        for name, identity in self.identities.items():
            if not isinstance(identity, SystemIdentity):
                raise TypeError(f"identities[{name!r}] must be a SystemIdentity, got {type(identity).__name__}")
        object.__setattr__(self, "identities", MappingProxyType(dict(self.identities)))
        object.__setattr__(self, "configs", MappingProxyType({k: dict(v) for k, v in self.configs.items()}))
        object.__setattr__(self, "pareto_coordinates", tuple(self.pareto_coordinates))
        seen = set()
        for p in self.points:
            if (p.system, p.grid_cost) in seen:
                raise ValueError(f"two points for {p.system!r} at grid cost {p.grid_cost:g}")
            seen.add((p.system, p.grid_cost))
            if p.grid_cost not in grid:
                raise ValueError(f"point {p.label!r} lies at {p.grid_cost:g}, off the declared grid {grid}")

    @property
    def systems(self) -> tuple[str, ...]:
        """Every system the report mentions, in first-mention order (points, then identities, configs)."""
        names = [p.system for p in self.points] + list(self.identities) + list(self.configs)
        return tuple(dict.fromkeys(names))

    def point(self, system: str, grid_cost: float) -> MeasuredPoint:
        """The measured point of ``system`` at ``grid_cost`` (``KeyError`` naming both when absent)."""
        for p in self.points:
            if p.system == system and p.grid_cost == grid_cost:
                return p
        raise KeyError(f"no measured point of {system!r} at grid cost {grid_cost:g}")

    def missing_parts(self) -> tuple[str, ...]:
        """Every part ftip-00LQ requires that this report lacks, by name (empty when complete)."""
        out: list[str] = []
        systems = self.systems
        if not self.grid:
            out.append("cost grid")
        if len(systems) < 2:
            out.append("compared models (a report compares at least two systems)")
        have = {(p.system, p.grid_cost): p for p in self.points}
        for s in systems:
            for c in self.grid:
                p = have.get((s, c))
                if p is None:
                    out.append(f"score of {s} at {_fmt_grid(c)} {self.grid_unit}")
                elif p.interval is None:
                    out.append(f"uncertainty interval of {s} at {_fmt_grid(c)} {self.grid_unit}")
        pairs = {(q.system_a, q.system_b, q.grid_cost): q for q in self.paired}
        for a, b in combinations(systems, 2):
            for c in self.grid:
                q = pairs.get((a, b, c)) or pairs.get((b, a, c))
                if q is None:
                    out.append(f"paired score {a} vs {b} at {_fmt_grid(c)} {self.grid_unit}")
                elif q.interval is None:
                    out.append(f"uncertainty interval of paired score {a} vs {b} at {_fmt_grid(c)} {self.grid_unit}")
        if self.scalarization is None:
            out.append("scalarization weights")
        else:
            for p in self.points:
                c = self.scalarization(p.cost)
                if isinstance(c, Unknown):
                    out.append(f"scalar cost of {p.label} ({c.reason})")
        for s in systems:
            identity = self.identities.get(s)
            if identity is None:
                out.append(f"identity of {s}")
            elif missing_fields(identity):
                out.append(f"identity of {s}: {', '.join(missing_fields(identity))}")
            if not self.configs.get(s):
                out.append(f"configuration of {s}")
        if not self.pareto_coordinates:
            out.append("Pareto coordinates")
        for p in self.points:
            absent = [n for n in self.pareto_coordinates if n not in p.cost.names]
            if absent:
                out.append(f"cost coordinate(s) {absent} of {p.label}")
        return tuple(out)

    def validate(self) -> "FrontierReport":
        """Return the report when complete; raise :class:`IncompleteReport` naming every missing part."""
        missing = self.missing_parts()
        if missing:
            raise IncompleteReport("frontier report (ftip-00LQ)", missing)
        return self

    def scalar_cost(self, p: MeasuredPoint) -> float:
        """The declared scalar cost of a point (the report must have a scalarization)."""
        if self.scalarization is None:
            raise IncompleteReport("frontier report (ftip-00LQ)", ["scalarization weights"])
        c = self.scalarization(p.cost)
        if isinstance(c, Unknown):
            raise IncompleteReport("frontier report (ftip-00LQ)", [f"scalar cost of {p.label} ({c.reason})"])
        return c

    def _projected(self, cost: CostVector) -> CostVector:
        names = self.pareto_coordinates
        return CostVector({n: cost[n] for n in names}, {n: cost.units[n] for n in names})

    def pareto_comparisons(self) -> tuple[ParetoComparison, ...]:
        """The Pareto relation of every pair of measured points from different systems.

        Point ``a`` dominates ``b`` when its score is at least ``b``'s and its cost is no larger
        on any of ``pareto_coordinates`` (checked with
        :func:`~ftipbook.compare.cost.pareto_dominates`), one of them strictly. Scores are the
        point estimates; the intervals say how firm each relation is.
        """
        self.validate()
        out = []
        for p, q in combinations(self.points, 2):
            if p.system == q.system:
                continue
            cp, cq = self._projected(p.cost), self._projected(q.cost)
            pq, qp = _weakly_cheaper(cp, cq), _weakly_cheaper(cq, cp)
            a_ok = (pq is True) and p.score >= q.score
            b_ok = (qp is True) and q.score >= p.score
            if a_ok and b_ok:
                verdict = "equal"
            elif a_ok:
                verdict = "a dominates"
            elif b_ok:
                verdict = "b dominates"
            elif isinstance(pq, Unknown) or isinstance(qp, Unknown):
                verdict = "undetermined"
            else:
                verdict = "tradeoff"
            out.append(ParetoComparison(p.label, q.label, verdict))
        return tuple(out)

    def measurements(self, system: str) -> list[ScoredCostMeasurement]:
        """``system``'s points as (scalar cost, score) measurements under the report's protocol."""
        unit = self.scalarization.scalar_unit if self.scalarization is not None else "declared cost unit"
        return [ScoredCostMeasurement(system, self.scalar_cost(p), p.score, self.protocol, unit, p.cost, p.label)
                for p in self.points if p.system == system]

    def iso_quality(self, target: float, system_a: str, system_b: str) -> IsoQualityComparison:
        """Each system's cheapest measured point (declared scalar cost) reaching ``target``, and their ratio."""
        self.validate()
        for s in (system_a, system_b):
            if s not in self.systems:
                raise ValueError(f"system {s!r} is not in the report; it has {list(self.systems)}")
        reached = [smallest_cost_reaching(target, self.measurements(s)) for s in (system_a, system_b)]
        return IsoQualityComparison(float(target), system_a, system_b, reached[0], reached[1],
                                    measured_cost_ratio(reached[0], reached[1]))

    def to_dict(self) -> dict[str, Any]:
        """The complete report as plain data (``UNKNOWN`` coordinates as the string ``"UNKNOWN"``)."""
        self.validate()

        def interval(i: Interval) -> dict[str, Any]:
            return {"low": i.low, "high": i.high, "level": i.level, "method": i.method}

        def cost(c: CostVector) -> dict[str, Any]:
            return {n: {"value": "UNKNOWN" if isinstance(v, Unknown) else v, "unit": c.units[n]}
                    for n, v in c.values.items()}

        s = self.scalarization
        return {
            "item": "ftip-00LQ",
            "protocol": self.protocol,
            "grid": {"unit": self.grid_unit, "values": list(self.grid)},
            "scalarization": {"weights": dict(s.weights), "units": dict(s.units), "scalar_unit": s.scalar_unit},
            "pareto_coordinates": list(self.pareto_coordinates),
            "systems": {n: {"identity": self.identities[n].to_dict(), "config": dict(self.configs[n])}
                        for n in self.systems},
            "points": [{"system": p.system, "grid_cost": p.grid_cost, "label": p.label, "score": p.score,
                        "interval": interval(p.interval), "cost": cost(p.cost),
                        "scalar_cost": self.scalar_cost(p)} for p in self.points],
            "paired": [{"system_a": q.system_a, "system_b": q.system_b, "grid_cost": q.grid_cost,
                        "difference": q.difference, "interval": interval(q.interval), "n_pairs": q.n_pairs}
                       for q in self.paired],
        }

    def to_json(self, path: str | Path) -> Path:
        """Write :meth:`to_dict` as JSON, atomically (:func:`ftipbook.atomic.write_text`); returns the path."""
        path = Path(path)
        atomic.write_text(path, json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")
        return path

    def to_markdown(self, digits: int = 4) -> str:
        """Markdown tables: the measured points, the paired differences, then each system's checkpoint and variant."""
        self.validate()
        scalar = self.scalarization.scalar_unit
        lines = [f"| system | {self.grid_unit} | score | interval | scalar cost ({scalar}) |",
                 "|---|---:|---:|---|---:|"]
        for p in self.points:
            i = p.interval
            lines.append(f"| {p.system} | {p.grid_cost:g} | {p.score:.{digits}f} | "
                         f"[{i.low:.{digits}f}, {i.high:.{digits}f}] | {self.scalar_cost(p):.4g} |")
        lines += ["", f"| a | b | {self.grid_unit} | a - b | interval | pairs |", "|---|---|---:|---:|---|---:|"]
        for q in self.paired:
            i = q.interval
            lines.append(f"| {q.system_a} | {q.system_b} | {q.grid_cost:g} | {q.difference:.{digits}f} | "
                         f"[{i.low:.{digits}f}, {i.high:.{digits}f}] | {q.n_pairs} |")
        lines += ["", "| system | checkpoint | variant |", "|---|---|---|"]
        lines += [f"| {n} | {self.identities[n].checkpoint} | {self.identities[n].variant} |" for n in self.systems]
        return "\n".join(lines)


class StudyEntryLike(Protocol):
    """What :func:`build_frontier_report` reads from one run of a study (e.g. ``ftipbook.study``'s entries)."""

    architecture: str
    budget: int
    seed: int
    item_scores: Any
    cost: CostVector


def seed_averaged_items(entries: Sequence[StudyEntryLike]) -> np.ndarray:
    """Per-item scores averaged over the given runs (one system, one grid cost, several seeds)."""
    if not entries:
        raise ValueError("no runs to average")
    rows = [np.asarray(e.item_scores, dtype=np.float64) for e in entries]
    if len({r.shape for r in rows}) != 1 or rows[0].ndim != 1:
        raise ValueError(f"item scores must be 1-D and of one length across runs, got {[r.shape for r in rows]}")
    return np.mean(rows, axis=0)


def _mean_cost(costs: Sequence[CostVector]) -> CostVector:
    """Coordinate-wise mean of cost vectors with one layout; a coordinate unknown anywhere stays unknown."""
    first = costs[0]
    values = {}
    for n in first.names:
        col = [c[n] for c in costs]
        unknown = [v for v in col if isinstance(v, Unknown)]
        values[n] = unknown[0] if unknown else math.fsum(col) / len(col)
    return CostVector(values, dict(first.units))


def build_frontier_report(entries: Iterable[StudyEntryLike], *, protocol: str, grid_unit: str,
                          scalarization: Scalarization | None, identities: Mapping[str, SystemIdentity],
                          configs: Mapping[str, Mapping[str, Any]], pareto_coordinates: Sequence[str],
                          systems: Sequence[str] | None = None, level: float = 0.95, n_boot: int = 2000,
                          seed: int = 0) -> FrontierReport:
    """A :class:`FrontierReport` from the runs of a study (ftip-00LQ).

    Runs are grouped by (architecture, budget); the grid is the sorted set of budgets. A point's
    score is the mean over items of the seed-averaged item scores, its interval the percentile
    bootstrap of that mean over items (:func:`~ftipbook.eval.stats.bootstrap_mean_ci`), and its
    cost vector the seed mean of the runs' cost vectors. A paired score compares two systems'
    seed-averaged item scores item by item (:func:`~ftipbook.eval.stats.paired_bootstrap`), so
    the interval reflects the sampling of evaluation items given these seeds, not seed-to-seed
    variation. Every system must have the same seeds at every budget.
    """
    groups: dict[tuple[str, float], list[StudyEntryLike]] = {}
    for e in entries:
        groups.setdefault((e.architecture, float(e.budget)), []).append(e)
    if not groups:
        raise ValueError("entries is empty: a frontier report needs measured runs")
    names = tuple(systems) if systems is not None else tuple(dict.fromkeys(a for a, _ in groups))
    grid = tuple(sorted({c for _, c in groups}))
    seeds = {k: sorted(e.seed for e in v) for k, v in groups.items()}
    if len({tuple(s) for s in seeds.values()}) != 1:
        raise ValueError(f"runs are not paired: seeds per (system, budget) differ: {seeds}")
    items: dict[tuple[str, float], np.ndarray] = {}
    points = []
    for s in names:
        for c in grid:
            runs = sorted(groups.get((s, c), []), key=lambda e: e.seed)
            if not runs:
                continue
            items[s, c] = seed_averaged_items(runs)
            label = f"{s}@{c:g} (seeds {', '.join(str(e.seed) for e in runs)})"
            points.append(MeasuredPoint(s, c, float(items[s, c].mean()),
                                        bootstrap_mean_ci(items[s, c], level=level, n_boot=n_boot, seed=seed),
                                        _mean_cost([e.cost for e in runs]), label))
    paired = []
    for a, b in combinations(names, 2):
        for c in grid:
            if (a, c) in items and (b, c) in items:
                r = paired_bootstrap(items[a, c], items[b, c], n_boot=n_boot, level=level, seed=seed)
                paired.append(PairedScore(a, b, c, r.estimate, r.interval, len(items[a, c])))
    return FrontierReport(protocol, grid, grid_unit, tuple(points), tuple(paired), scalarization,
                          {k: v for k, v in identities.items() if k in names},
                          {k: v for k, v in configs.items() if k in names}, tuple(pareto_coordinates))


# ----------------------------------------------------------------------------------------------
# ftip-00LR: estimands and orderings
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EstimandKey:
    """The coordinates that index a conditional frontier value (ftip-00LR).

    Changing any coordinate but ``architecture`` gives a new estimand; :func:`ordering` only
    ranks architectures whose keys agree on all the others.
    """

    architecture: str
    intervention_class: str
    task: str
    evaluation_law: str
    scalarization: str

    def __post_init__(self) -> None:
        for f in fields(self):
            _text(f.name, getattr(self, f.name))

    def context(self) -> tuple[str, ...]:
        """Every coordinate but the architecture, in declaration order."""
        return tuple(getattr(self, f.name) for f in fields(self) if f.name != "architecture")

    def differing(self, other: "EstimandKey") -> tuple[str, ...]:
        """Names of the coordinates on which ``self`` and ``other`` differ."""
        return tuple(f.name for f in fields(self) if getattr(self, f.name) != getattr(other, f.name))


def ordering(values: Mapping[EstimandKey, float], *, higher_is_better: bool = True) -> tuple[str, ...]:
    """Architectures from best to worst under one estimand context (ftip-00LR); ties keep input order.

    Every key must share intervention class, task, evaluation law and scalarization; otherwise
    :class:`EstimandMismatch` names the differing coordinates.
    """
    keys = list(values)
    if len(keys) < 2:
        raise ValueError("an ordering needs values for at least two architectures")
    for k in keys:
        if not isinstance(k, EstimandKey):
            raise TypeError(f"keys must be EstimandKey, got {type(k).__name__}")
        diff = tuple(d for d in keys[0].differing(k) if d != "architecture")
        if diff:
            raise EstimandMismatch(diff, f"{keys[0]} vs {k}")
    sign = -1.0 if higher_is_better else 1.0
    return tuple(k.architecture for k in sorted(keys, key=lambda k: sign * _real(f"value of {k}", values[k])))


# ----------------------------------------------------------------------------------------------
# ftip-00LY: coordinate changes and a 2 x 2 factorial
# ----------------------------------------------------------------------------------------------
#: The intervention coordinates named by ftip-00LY, each with the ``(record kind, field)`` pairs that carry
#: it, for the records of :mod:`ftipbook.compare.records` and for the flat model-instance record
#: (kind ``"instance"``).
COORDINATE_FIELDS: Mapping[str, tuple[tuple[str, str], ...]] = MappingProxyType({
    "optimizer": (("training", "optimizer"), ("training", "schedule"), ("instance", "optimizer")),
    "post-training": (("training", "sft"), ("training", "feedback"), ("instance", "post_training")),
    "tuning protocol": (("training", "tuning"), ("tuning", "*")),
    "hardware or kernel": (("systems", "hardware"), ("systems", "software"), ("systems", "kernel"),
                           ("instance", "hardware"), ("instance", "software"), ("instance", "kernels")),
    "precision": (("systems", "precision"), ("instance", "precision")),
    "context policy": (("systems", "prompt_length"), ("systems", "new_tokens"), ("systems", "cache_policy"),
                       ("identity", "context_limit"), ("instance", "cache_policy"),
                       ("instance", "inference_budget")),
    "evaluation law": (("evaluation", "*"), ("systems", "decoding"), ("instance", "task_suite"),
                       ("instance", "evaluation_law"), ("instance", "eval_seed")),
    "architecture": (("identity", "variant"), ("identity", "layer_pattern"), ("identity", "total_params"),
                     ("identity", "active_params"), ("identity", "checkpoint"), ("instance", "architecture"),
                     ("instance", "checkpoint"), ("instance", "parameters")),
})


@dataclass(frozen=True)
class RunConditions(Record):
    """The recorded conditions of one scored run, grouped so that :func:`coordinate_changes` sees them all
    (ftip-00LY): who was run (``identity``), how it was trained (``training``), on what stack
    (``systems``) and under which evaluation (``evaluation``)."""

    KIND: ClassVar[str] = "run"

    identity: SystemIdentity
    training: TrainingRecord
    systems: SystemsRecord
    evaluation: EvaluationConditions

    def __post_init__(self) -> None:
        for name, kind in (("identity", SystemIdentity), ("training", TrainingRecord), ("systems", SystemsRecord),
                           ("evaluation", EvaluationConditions)):
            if not isinstance(getattr(self, name), kind):
                raise TypeError(f"RunConditions.{name} must be a {kind.__name__}, "
                                f"got {type(getattr(self, name)).__name__}")


@dataclass(frozen=True)
class CoordinateChange:
    """A record field that differs (or is unrecorded) between two runs, and its intervention coordinate."""

    coordinate: str
    path: str
    a: Any
    b: Any
    status: str


def classify_change(change: FieldChange) -> str:
    """The intervention coordinate of :data:`COORDINATE_FIELDS` a changed field belongs to (ftip-00LY).

    A field no coordinate lists is its own coordinate, named ``"other: <path>"``.
    """
    if not isinstance(change, FieldChange):
        raise TypeError(f"classify_change takes a FieldChange from diff_records, got {type(change).__name__}")
    leaf = change.path.rsplit(".", 1)[-1]
    for coordinate, pairs in COORDINATE_FIELDS.items():
        for kind, name in pairs:
            if change.kind == kind and name in ("*", leaf):
                return coordinate
    return f"other: {change.path}"


def coordinate_changes(a: Record, b: Record, *, ignore: Sequence[str] = ()) -> tuple[CoordinateChange, ...]:
    """Every field where two records differ or are unrecorded (:func:`~ftipbook.compare.records.diff_records`),
    labelled with its intervention coordinate (ftip-00LY).

    Names (``name`` fields) are labels and never count. ``ignore`` lists dotted fields, or whole
    sub-records, that the comparison declares it does not use (e.g. ``"training.tuning"`` for a
    common recipe, which is not tuned).
    """
    if isinstance(ignore, str):
        raise TypeError(f"ignore must be a sequence of field paths, not the string {ignore!r}")

    def ignored(path: str) -> bool:
        return any(path == x or path.startswith(x + ".") for x in ignore)

    return tuple(CoordinateChange(classify_change(c), c.path, c.a, c.b, c.status) for c in diff_records(a, b)
                 if c.path != "name" and not c.path.endswith(".name") and not ignored(c.path))


@dataclass(frozen=True)
class Attribution:
    """What a score difference between two runs estimates (ftip-00LY).

    ``coordinates`` are the changed intervention coordinates; ``label`` says which intervention
    the difference belongs to; ``architecture_effect`` is true only when the architecture is the
    sole change, or when a factorial estimate of the interaction with every other change is given.
    """

    coordinates: tuple[str, ...]
    label: str
    architecture_effect: bool


def attribute_difference(changes: Sequence[CoordinateChange], *,
                         interaction: "FactorialEstimate | None" = None) -> Attribution:
    """Name the intervention a score difference belongs to, given the coordinates that changed (ftip-00LY).

    With the architecture alone changed, the difference is the architecture effect under the
    common conditions. With other coordinates changed too, it belongs to the joint new
    intervention, unless ``interaction`` is a :class:`FactorialEstimate` whose two factors are
    the architecture and the single other changed coordinate: then the architecture effect at
    each level of that coordinate and their interaction are estimated explicitly.
    """
    coords = tuple(dict.fromkeys(c.coordinate for c in changes))
    if not coords:
        return Attribution((), "no coordinate changed: the same intervention twice", False)
    others = tuple(c for c in coords if c != "architecture")
    if "architecture" in coords and not others:
        return Attribution(coords, "architecture effect under otherwise common conditions", True)
    if interaction is not None:
        if not isinstance(interaction, FactorialEstimate):
            raise TypeError(f"interaction must be a FactorialEstimate, got {type(interaction).__name__}")
        factors = {interaction.factor_a, interaction.factor_b}
        if "architecture" in coords and len(others) == 1 and factors == {"architecture", others[0]}:
            return Attribution(coords, f"architecture effect per {others[0]} level, interaction estimated", True)
    return Attribution(coords, f"new intervention ({' + '.join(coords)}), interaction not estimated", False)


@dataclass(frozen=True)
class Effect:
    """A mean of per-item contrasts and its percentile bootstrap interval."""

    estimate: float
    interval: Interval


@dataclass(frozen=True)
class FactorialEstimate:
    """A 2 x 2 factorial over paired items (ftip-00LY).

    ``levels_a = (a0, a1)`` and ``levels_b = (b0, b1)``; ``simple_a[b]`` is the effect of going from
    ``a0`` to ``a1`` at level ``b`` of the second factor; ``main_a`` and ``main_b`` average over the
    other factor; ``interaction`` is ``(y[a1,b1] - y[a0,b1]) - (y[a1,b0] - y[a0,b0])``, per item,
    then averaged.
    """

    factor_a: str
    factor_b: str
    levels_a: tuple[str, str]
    levels_b: tuple[str, str]
    cell_means: Mapping[tuple[str, str], float]
    simple_a: Mapping[str, Effect]
    main_a: Effect
    main_b: Effect
    interaction: Effect
    n_items: int


def factorial_2x2(scores: Mapping[tuple[str, str], Sequence[float]], *, factor_a: str, factor_b: str,
                  levels_a: tuple[str, str], levels_b: tuple[str, str], level: float = 0.95, n_boot: int = 2000,
                  seed: int = 0) -> FactorialEstimate:
    """Simple effects, main effects and the interaction of a 2 x 2 design scored on the same items.

    ``scores[(a, b)]`` holds the per-item scores of cell ``(a, b)``; all four cells must be
    present and score the same items in the same order. Each effect is the mean of a per-item
    contrast, with :func:`~ftipbook.eval.stats.bootstrap_mean_ci` over items (same ``seed`` for
    every effect).
    """
    _text("factor_a", factor_a)
    _text("factor_b", factor_b)
    if factor_a == factor_b:
        raise ValueError(f"the two factors must differ, got {factor_a!r} twice")
    for name, levels in (("levels_a", levels_a), ("levels_b", levels_b)):
        if len(tuple(levels)) != 2 or levels[0] == levels[1]:
            raise ValueError(f"{name}={levels!r} must be two distinct levels")
    cells = [(a, b) for a in levels_a for b in levels_b]
    absent = [c for c in cells if c not in scores]
    if absent:
        raise ValueError(f"scores lacks cell(s) {absent}; a 2 x 2 design needs all four {cells}")
    y = {c: np.asarray(scores[c], dtype=np.float64) for c in cells}
    lengths = {c: v.shape for c, v in y.items()}
    if len(set(lengths.values())) != 1 or y[cells[0]].ndim != 1 or len(y[cells[0]]) < 2:
        raise ValueError(f"every cell must score the same >= 2 items (1-D, one length), got shapes {lengths}")
    for c, v in y.items():
        if not np.isfinite(v).all():
            raise ValueError(f"scores[{c}] contains a non-finite value")
    (a0, a1), (b0, b1) = levels_a, levels_b

    def effect(contrast: np.ndarray) -> Effect:
        return Effect(float(contrast.mean()), bootstrap_mean_ci(contrast, level=level, n_boot=n_boot, seed=seed))

    simple = {b: y[a1, b] - y[a0, b] for b in levels_b}
    return FactorialEstimate(
        factor_a, factor_b, (a0, a1), (b0, b1),
        MappingProxyType({c: float(v.mean()) for c, v in y.items()}),
        MappingProxyType({b: effect(d) for b, d in simple.items()}),
        effect((simple[b0] + simple[b1]) / 2),
        effect((y[a0, b1] - y[a0, b0] + y[a1, b1] - y[a1, b0]) / 2),
        effect(simple[b1] - simple[b0]),
        len(y[cells[0]]),
    )


# ----------------------------------------------------------------------------------------------
# ftip-00LZ, 00M2: the architecture-family transfer matrix
# ----------------------------------------------------------------------------------------------
#: The architecture families of ftip-00LZ, as default rows.
FAMILIES = ("Transformer reference", "KDA hybrid", "looped or depth-reused", "JEPA-like")


@dataclass(frozen=True)
class Evidence:
    """The record behind a comparable cell: the model ``instances`` (checkpoint ids or hashes), the
    ``protocol`` they were measured under (interface, task, evaluation law, budget accounting), and
    the ``source`` where the measurement is recorded."""

    instances: tuple[str, ...]
    protocol: str
    source: str

    def __post_init__(self) -> None:
        instances = tuple(self.instances) if not isinstance(self.instances, str) else (self.instances,)
        if not instances:
            raise MissingEvidence("Evidence.instances is empty: name the model instance(s) measured")
        for i in instances:
            _text("Evidence.instances entry", i)
        object.__setattr__(self, "instances", instances)
        _text("Evidence.protocol", self.protocol)
        _text("Evidence.source", self.source)


@dataclass(frozen=True)
class Comparable:
    """A cell where the family can be compared under the column's interface and budget, with its
    :class:`Evidence`; ``value`` (in ``unit``) is optional and never present without evidence."""

    evidence: Evidence
    value: float | None = None
    unit: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.evidence, Evidence):
            raise MissingEvidence(f"a comparable cell needs an Evidence record, got {self.evidence!r}")
        if self.value is not None:
            object.__setattr__(self, "value", _real("value", self.value))
            _text("unit (required with a value)", self.unit)
        elif self.unit is not None:
            raise ValueError(f"unit={self.unit!r} given without a value")

    @property
    def status(self) -> str:
        return "comparable"


@dataclass(frozen=True)
class Incomparable:
    """A cell where no comparison is permitted; ``reason`` is the incomparability finding."""

    reason: str

    def __post_init__(self) -> None:
        _text("Incomparable.reason", self.reason)

    @property
    def status(self) -> str:
        return "incomparable"


@dataclass(frozen=True)
class Open:
    """A cell whose comparability is an open question (ftip-00M2); ``needed`` lists what would settle it."""

    question: str
    needed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _text("Open.question", self.question)
        object.__setattr__(self, "needed", tuple(_text("Open.needed entry", n) for n in self.needed))

    @property
    def status(self) -> str:
        return "open"


@dataclass(frozen=True)
class Blank:
    """A cell nobody declared: an incomparability finding (no interface or budget was instantiated)."""

    @property
    def status(self) -> str:
        return "blank"

    @property
    def reason(self) -> str:
        return "blank: no instance of this family was declared under this interface and budget"


@dataclass(frozen=True)
class TransferMatrix:
    """Which interfaces and budgets permit a comparison among architecture families (ftip-00LZ).

    ``rows`` are families (default :data:`FAMILIES`), ``columns`` interface-and-budget conditions;
    ``cells`` maps ``(row, column)`` to a :class:`Comparable`, :class:`Incomparable` or
    :class:`Open` cell. Undeclared cells are :class:`Blank`. Families are compared only within a
    column, between comparable cells. No blank, incomparable or open cell yields a value, is
    averaged over, or is filled in.
    """

    columns: tuple[str, ...]
    cells: Mapping[tuple[str, str], Comparable | Incomparable | Open]
    rows: tuple[str, ...] = FAMILIES

    def __post_init__(self) -> None:
        for name in ("rows", "columns"):
            labels = tuple(getattr(self, name))
            if not labels or len(set(labels)) != len(labels):
                raise ValueError(f"{name}={labels!r} must be distinct, non-empty labels")
            for label in labels:
                _text(f"{name} label", label)
            object.__setattr__(self, name, labels)
        for key, cell in self.cells.items():
            if not (isinstance(key, tuple) and len(key) == 2):
                raise ValueError(f"cell key {key!r} must be a (row, column) pair")
            if key[0] not in self.rows:
                raise ValueError(f"cell key {key!r}: row {key[0]!r} is not one of {list(self.rows)}")
            if key[1] not in self.columns:
                raise ValueError(f"cell key {key!r}: column {key[1]!r} is not one of {list(self.columns)}")
            if not isinstance(cell, (Comparable, Incomparable, Open)):
                raise TypeError(f"cell {key!r} must be Comparable, Incomparable or Open, got {type(cell).__name__}")
        object.__setattr__(self, "cells", MappingProxyType(dict(self.cells)))

    def cell(self, row: str, column: str) -> Comparable | Incomparable | Open | Blank:
        """The cell at ``(row, column)``; :class:`Blank` when undeclared."""
        if row not in self.rows or column not in self.columns:
            raise KeyError(f"no cell ({row!r}, {column!r}); rows {list(self.rows)}, columns {list(self.columns)}")
        return self.cells.get((row, column), Blank())

    def value(self, row: str, column: str) -> float:
        """The value of a comparable cell; :class:`IncomparableCell` for any other cell or a cell without value."""
        cell = self.cell(row, column)
        if not isinstance(cell, Comparable):
            detail = cell.question if isinstance(cell, Open) else cell.reason
            raise IncomparableCell(f"cell ({row!r}, {column!r}) is {cell.status}: {detail}; it has no value")
        if cell.value is None:
            raise IncomparableCell(f"cell ({row!r}, {column!r}) is comparable but no value was measured")
        return cell.value

    def with_value(self, row: str, column: str, value: float, unit: str,
                   evidence: Evidence | None = None) -> "TransferMatrix":
        """A copy with a value in ``(row, column)``.

        The cell must already be comparable (its evidence is kept unless ``evidence`` replaces
        it) or be given ``evidence``; a value on an incomparable or open cell is refused
        (:class:`IncomparableCell`), and one on a blank cell without evidence too
        (:class:`MissingEvidence`).
        """
        cell = self.cell(row, column)
        if isinstance(cell, (Incomparable, Open)):
            detail = cell.question if isinstance(cell, Open) else cell.reason
            raise IncomparableCell(f"cell ({row!r}, {column!r}) is {cell.status} ({detail}); a value there would "
                                   f"overwrite a finding")
        if evidence is None:
            if isinstance(cell, Blank):
                raise MissingEvidence(f"cell ({row!r}, {column!r}) is blank: a value needs the Evidence record "
                                      f"of the measurement behind it")
            evidence = cell.evidence
        cells = dict(self.cells)
        cells[row, column] = Comparable(evidence, value, unit)
        return TransferMatrix(self.columns, cells, self.rows)

    def row_mean(self, row: str) -> float:
        """Mean of a row whose every cell is comparable with a value in one unit.

        A blank, incomparable or open cell, or a comparable cell without a value, raises
        :class:`ImputationRefused` naming the cells: averaging over them would impute them.
        """
        bad = [c for c in self.columns if not (isinstance(self.cell(row, c), Comparable)
                                               and self.cell(row, c).value is not None)]
        if bad:
            raise ImputationRefused(f"row {row!r} has no value in column(s) {bad} "
                                    f"({', '.join(self.cell(row, c).status for c in bad)}); a row mean would "
                                    f"impute them (ftip-00LZ)")
        units = {self.cells[row, c].unit for c in self.columns}
        if len(units) != 1:
            raise EstimandMismatch(["unit"], f"row {row!r} mixes units {sorted(units)}")
        return math.fsum(self.cells[row, c].value for c in self.columns) / len(self.columns)

    def impute(self, fill: object = None) -> "TransferMatrix":
        """Always refused (:class:`ImputationRefused`): a blank or incompatible cell is a finding, not a gap."""
        findings = [f"({r!r}, {c!r})" for r, c, _ in self.findings()]
        raise ImputationRefused(f"imputation refused for {len(findings)} cell(s) {', '.join(findings)}: a blank or "
                                f"incomparable cell is an incomparability finding (ftip-00LZ)")

    def comparable_rows(self, column: str) -> tuple[str, ...]:
        """The families that may be compared with one another under ``column``."""
        return tuple(r for r in self.rows if isinstance(self.cell(r, column), Comparable))

    def findings(self) -> tuple[tuple[str, str, str], ...]:
        """``(row, column, reason)`` for every blank or incomparable cell, row by row."""
        return tuple((r, c, self.cell(r, c).reason) for r in self.rows for c in self.columns
                     if isinstance(self.cell(r, c), (Blank, Incomparable)))

    def open_questions(self) -> tuple[tuple[str, str, Open], ...]:
        """``(row, column, cell)`` for every open cell."""
        return tuple((r, c, self.cells[r, c]) for r in self.rows for c in self.columns
                     if isinstance(self.cells.get((r, c)), Open))

    def to_markdown(self) -> str:
        """The matrix as a Markdown table: ``comparable`` (with value and unit when measured), ``incomparable``,
        ``open`` or ``blank`` per cell."""
        def show(cell: Comparable | Incomparable | Open | Blank) -> str:
            if isinstance(cell, Comparable) and cell.value is not None:
                return f"comparable: {cell.value:.4g} {cell.unit}"
            return cell.status

        lines = ["| family | " + " | ".join(self.columns) + " |", "|---" * (len(self.columns) + 1) + "|"]
        lines += [f"| {r} | " + " | ".join(show(self.cell(r, c)) for c in self.columns) + " |" for r in self.rows]
        return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# ftip-00M1: sequential stopping and the negative-result report
# ----------------------------------------------------------------------------------------------
def _binomial_pmf(n: int, p: Fraction | float) -> list:
    """``P(X = j)`` for ``j = 0..n``, ``X ~ Binomial(n, p)``; exact when ``p`` is a ``Fraction``."""
    q = 1 - p
    return [math.comb(n, j) * p ** j * q ** (n - j) for j in range(n + 1)]


#: The most paired items the exact sign test takes (its p-value is an exact sum of ``n`` binomial
#: coefficients of ``n``-bit size; 10 000 items take well under a second).
MAX_SIGN_TEST_N = 10_000


def sign_test_pvalue(wins: int, n: int) -> Fraction:
    """Exact two-sided sign-test p-value ``min(1, 2 min(P(X <= wins), P(X >= wins)))``, ``X ~ Binomial(n, 1/2)``."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SIGN_TEST_N:
        raise ValueError(f"n={n!r} must be an int in [1, {MAX_SIGN_TEST_N}] (the exact test sums n binomial terms)")
    if isinstance(wins, bool) or not isinstance(wins, int) or not 0 <= wins <= n:
        raise ValueError(f"wins={wins!r} must be an int in [0, n={n}]")
    low = Fraction(sum(math.comb(n, j) for j in range(wins + 1)), 2 ** n)
    high = Fraction(sum(math.comb(n, j) for j in range(wins, n + 1)), 2 ** n)
    return min(Fraction(1), 2 * min(low, high))


@dataclass(frozen=True)
class SequentialOutcome:
    """Where a :class:`SequentialSignTest` stopped: ``decision`` is ``"difference detected"``,
    ``"stopped for futility"`` or ``"no difference detected at the last look"``; ``interval`` is the
    Clopper-Pearson interval of the win probability at the items used."""

    decision: str
    look: int
    n: int
    wins: int
    p_value: Fraction
    interval: Interval

    @property
    def detected(self) -> bool:
        return self.decision == "difference detected"


@dataclass(frozen=True)
class OperatingCharacteristics:
    """Exact probabilities of a :class:`SequentialSignTest` at win probability ``p``."""

    p: Fraction | float
    detect: Fraction | float
    futility: Fraction | float
    expected_n: Fraction | float


@dataclass(frozen=True)
class SequentialSignTest:
    """A group-sequential two-sided sign test on paired items with futility stopping (ftip-00M1).

    The test looks after ``looks[k]`` paired items (increasing). At each look it detects a
    difference when the exact two-sided sign-test p-value is at most ``alpha / len(looks)``
    (Bonferroni over looks, so the overall false-detection rate is at most ``alpha``). At an
    interim look it stops for futility when the observed win fraction is within ``futility`` of
    one half. :meth:`operating` computes its detection probability exactly, for any true win
    probability.
    """

    looks: tuple[int, ...]
    alpha: float = 0.05
    futility: float = 0.1

    def __post_init__(self) -> None:
        looks = tuple(self.looks)
        if not looks or any(isinstance(n, bool) or not isinstance(n, int) for n in looks) or looks[0] < 1 \
                or any(b <= a for a, b in zip(looks, looks[1:])):
            raise ValueError(f"looks={self.looks!r} must be increasing ints >= 1 (items seen at each look)")
        object.__setattr__(self, "looks", looks)
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) or not 0 < self.alpha < 1:
            raise ValueError(f"alpha={self.alpha!r} must lie strictly between 0 and 1")
        if isinstance(self.futility, bool) or not isinstance(self.futility, (int, float)) \
                or not 0 <= self.futility < 0.5:
            raise ValueError(f"futility={self.futility!r} must lie in [0, 0.5)")

    @property
    def per_look_alpha(self) -> Fraction:
        return Fraction(self.alpha).limit_denominator(10 ** 12) / len(self.looks)

    def rejects(self, wins: int, n: int) -> bool:
        """Whether ``wins`` out of ``n`` detects a difference at one look."""
        return sign_test_pvalue(wins, n) <= self.per_look_alpha

    def futile(self, wins: int, n: int) -> bool:
        """Whether ``wins`` out of ``n`` stops for futility at an interim look."""
        return abs(Fraction(wins, n) - Fraction(1, 2)) <= Fraction(self.futility).limit_denominator(10 ** 12)

    def run(self, a_better: Sequence[bool], *, level: float = 0.95) -> SequentialOutcome:
        """Apply the rule to items in their declared order (``a_better[i]``: system a won item ``i``)."""
        signs = list(a_better)
        for i, s in enumerate(signs):
            if not isinstance(s, (bool, np.bool_)):
                raise TypeError(f"a_better[{i}]={s!r} must be a bool (ties are not items of a sign test)")
        if len(signs) < self.looks[-1]:
            raise ValueError(f"{len(signs)} items given; the rule looks at up to {self.looks[-1]}")
        for k, n in enumerate(self.looks):
            wins = int(sum(bool(s) for s in signs[:n]))
            last = k == len(self.looks) - 1
            if self.rejects(wins, n):
                decision = "difference detected"
            elif last:
                decision = "no difference detected at the last look"
            elif self.futile(wins, n):
                decision = "stopped for futility"
            else:
                continue
            return SequentialOutcome(decision, k + 1, n, wins, sign_test_pvalue(wins, n),
                                     clopper_pearson(wins, n, level))
        raise AssertionError("unreachable: the last look always decides")

    def operating(self, p: Fraction | float) -> OperatingCharacteristics:
        """Exact detection and futility probabilities and expected items used, at true win probability ``p``.

        Dynamic programming over the looks; with a ``Fraction`` ``p`` the arithmetic is exact.
        """
        if isinstance(p, bool) or not isinstance(p, (int, float, Fraction)) or not 0 <= p <= 1:
            raise ValueError(f"p={p!r} must be a probability in [0, 1]")
        alive = {0: Fraction(1) if isinstance(p, Fraction) else 1.0}
        detect = futile = expected = 0 * alive[0]
        previous = 0
        for k, n in enumerate(self.looks):
            step = _binomial_pmf(n - previous, p)
            nxt: dict[int, Any] = {}
            for w, mass in alive.items():
                for j, pj in enumerate(step):
                    nxt[w + j] = nxt.get(w + j, 0 * mass) + mass * pj
            alive = {}
            for w, mass in nxt.items():
                if self.rejects(w, n):
                    detect += mass
                    expected += mass * n
                elif k == len(self.looks) - 1:
                    expected += mass * n
                elif self.futile(w, n):
                    futile += mass
                    expected += mass * n
                else:
                    alive[w] = mass
            previous = n
        return OperatingCharacteristics(p, detect, futile, expected)

    def describe(self) -> str:
        return (f"sequential two-sided sign test, looks after {list(self.looks)} items, alpha {self.alpha:g} split "
                f"equally over looks, futility when |win fraction - 1/2| <= {self.futility:g} at an interim look")


@dataclass(frozen=True)
class ComparisonResult:
    """One tested comparison: its estimate and interval, whether a difference was detected, the
    declared practically large difference ``margin`` (same unit), and optionally the power the
    design had to detect a difference of that size."""

    comparison: str
    estimate: float
    interval: Interval
    detected: bool
    margin: float
    unit: str
    power_at_margin: float | None = None

    def __post_init__(self) -> None:
        _text("comparison", self.comparison)
        _text("unit", self.unit)
        object.__setattr__(self, "estimate", _real("estimate", self.estimate))
        if not isinstance(self.interval, Interval):
            raise TypeError(f"interval must be an Interval, got {type(self.interval).__name__}")
        if not isinstance(self.detected, bool):
            raise TypeError(f"detected must be a bool, got {self.detected!r}")
        margin = _real("margin", self.margin)
        if margin <= 0:
            raise ValueError(f"margin={margin!r} must be > 0: the smallest difference that would matter")
        object.__setattr__(self, "margin", margin)
        if self.power_at_margin is not None and (isinstance(self.power_at_margin, bool)
                                                 or not isinstance(self.power_at_margin, (int, float, Fraction))
                                                 or not 0 <= self.power_at_margin <= 1):
            raise ValueError(f"power_at_margin={self.power_at_margin!r} must be a probability")

    @property
    def contains_practical_difference(self) -> bool:
        """Whether the interval still contains a difference of at least ``margin`` in either direction."""
        return self.interval.low <= -self.margin or self.interval.high >= self.margin

    @property
    def verdict(self) -> str:
        """The honest reading of this result (ftip-00M1)."""
        i = self.interval
        where = f"[{i.low:.4g}, {i.high:.4g}] {self.unit}"
        if self.detected:
            return f"difference detected: {where}"
        if self.contains_practical_difference:
            power = "" if self.power_at_margin is None else f"; power at the margin {self.power_at_margin:.2f}"
            return (f"no difference detected; the interval {where} still contains differences of "
                    f"+-{self.margin:g} {self.unit}{power}: not evidence of equal potential")
        return (f"no difference detected; the interval {where} lies within +-{self.margin:g} {self.unit}: "
                f"equivalent at that margin under this study only")


@dataclass(frozen=True)
class StoppingReport:
    """The report of a completed comparison (ftip-00M1).

    ``tested_grid`` (in ``grid_unit``) is every cost point actually run; ``excluded`` maps each
    configuration left out to the reason (an empty mapping declares that none was); ``stopping_rule``
    is the declared rule (its description, or a :class:`SequentialSignTest`); ``uncertainty`` names
    the interval procedure; ``results`` hold every tested comparison. ``None`` marks a part not yet
    supplied; :meth:`validate` names it.
    """

    tested_grid: tuple[float, ...] | None
    grid_unit: str
    excluded: Mapping[str, str] | None
    stopping_rule: str | SequentialSignTest | None
    uncertainty: str | None
    results: tuple[ComparisonResult, ...]

    def __post_init__(self) -> None:
        _text("grid_unit", self.grid_unit)
        if self.tested_grid is not None:
            object.__setattr__(self, "tested_grid", tuple(_real("tested grid cost", c) for c in self.tested_grid))
        if self.excluded is not None:
            for k, v in self.excluded.items():
                _text("excluded configuration", k)
                _text(f"reason for excluding {k!r}", v)
            object.__setattr__(self, "excluded", MappingProxyType(dict(self.excluded)))
        if self.uncertainty is not None and not isinstance(self.uncertainty, str):
            raise TypeError(f"uncertainty must name the interval procedure (a string), got {self.uncertainty!r}")
        if self.stopping_rule is not None and not isinstance(self.stopping_rule, (str, SequentialSignTest)):
            raise TypeError(f"stopping_rule must be a description or a SequentialSignTest, got "
                            f"{type(self.stopping_rule).__name__}")
        results = tuple(self.results)
        for r in results:
            if not isinstance(r, ComparisonResult):
                raise TypeError(f"results must hold ComparisonResult objects, got {type(r).__name__}")
        object.__setattr__(self, "results", results)

    def missing_parts(self) -> tuple[str, ...]:
        """Every part ftip-00M1 requires that this report lacks, by name."""
        out = []
        if not self.tested_grid:
            out.append("tested cost grid")
        if self.excluded is None:
            out.append("excluded configurations (declare an empty mapping when none was excluded)")
        if self.stopping_rule is None or (isinstance(self.stopping_rule, str) and not self.stopping_rule.strip()):
            out.append("stopping rule")
        if self.uncertainty is None or not self.uncertainty.strip():
            out.append("uncertainty procedure")
        if not self.results:
            out.append("results (every tested comparison, negative ones included)")
        return tuple(out)

    def validate(self) -> "StoppingReport":
        """Return the report when complete; raise :class:`IncompleteReport` naming every missing part."""
        missing = self.missing_parts()
        if missing:
            raise IncompleteReport("negative-result and stopping report (ftip-00M1)", missing)
        return self

    def negative_results(self) -> tuple[ComparisonResult, ...]:
        """The comparisons where no difference was detected."""
        return tuple(r for r in self.results if not r.detected)

    def to_markdown(self) -> str:
        """The report as Markdown: grid, exclusions, rule, uncertainty, then one line per result."""
        self.validate()
        rule = self.stopping_rule.describe() if isinstance(self.stopping_rule, SequentialSignTest) \
            else self.stopping_rule
        lines = [f"- tested grid ({self.grid_unit}): {', '.join(f'{c:g}' for c in self.tested_grid)}",
                 "- excluded configurations: " + ("; ".join(f"{k} ({v})" for k, v in self.excluded.items())
                                                 or "none"),
                 f"- stopping rule: {rule}", f"- uncertainty: {self.uncertainty}",
                 f"- negative results: {len(self.negative_results())} of {len(self.results)} comparisons", "",
                 "| comparison | estimate | verdict |", "|---|---:|---|"]
        lines += [f"| {r.comparison} | {r.estimate:.4g} | {r.verdict} |" for r in self.results]
        return "\n".join(lines)



from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
