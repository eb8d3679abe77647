"""Three ceiling layers and architecture differences over a declared grid (ftip-00JL, ftip-00JM, ftip-00JK).

Definition ftip-00JL separates, for one task and one evaluation law,

* the *representational ceiling* of an architecture ``A``: the best score of any parameter value
  of ``A`` (:func:`representational_ceiling`, the maximum over a declared finite parameter set;
  a lower bound on the supremum over all parameters unless the set holds a parameter of every
  behaviour the score can see);
* the *optimizer-reachable ceiling* of ``(A, O)``: the best score among the iterates a declared
  optimizer reaches from declared initializations at declared horizons
  (:func:`optimizer_reachable`);
* the *systems-feasible frontier* of ``(A, O, S, C)``: the same iterates, each charged the cost
  its systems configuration ``S`` measures, restricted to cost at most ``C``
  (:meth:`ReachableSet.feasible`, the frontier value of ftip-00JJ).

Each layer is a supremum over a subset of the previous layer's set, so
``representational >= reachable >= feasible``; :class:`CeilingLayers` checks that order and
refuses a "representational" grid that misses parameters the optimizer reached. Nothing forces
equality: the gaps are measured, not assumed.

Remark ftip-00JM: a difference between two architectures is a comparative estimand, defined
only once the coordinates held fixed are named. :func:`difference_grid` evaluates two systems over
a declared grid of evaluation coordinates and reports every cell, so a difference that changes
size or sign with the coordinates is visible.

Remark ftip-00JK: :func:`answer_probability` is an evaluation functional that reads only the
model/interface map (the conditional law of the answer given the prompt), so it cannot change
under a change of kernel, parameterization or optimizer state that leaves the map fixed.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from types import MappingProxyType
from typing import Any

import torch

from ftipbook.compare.frontier import FrontierValue, Intervention, frontier_value


def _callable(name: str, value: object) -> None:
    if not callable(value):
        raise TypeError(f"{name} must be callable, got {type(value).__name__}")


def _finite(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


# ----------------------------------------------------------------------------------------------
# ftip-00JL: representational ceiling
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GridCeiling:
    """The best score over a declared finite parameter grid: ``value`` at ``argmax`` (first in grid order)."""

    value: float
    argmax: Mapping[str, float]
    n_points: int


def representational_ceiling(score: Callable[..., float], grid: Mapping[str, Sequence[float]]) -> GridCeiling:
    """``max score(**theta)`` over the product grid ``theta in prod_k grid[k]`` (ftip-00JL).

    ``grid`` maps each parameter name to its declared finite values. The result is the
    representational ceiling of the architecture on this parameter set; over all parameters it is
    a lower bound, exact when the set meets every behaviour the score distinguishes.
    """
    _callable("score", score)
    if not isinstance(grid, Mapping) or not grid:
        raise ValueError(f"grid must be a non-empty mapping name -> values, got {grid!r}")
    axes = {}
    for name, values in grid.items():
        values = list(values)
        if not values:
            raise ValueError(f"grid[{name!r}] is empty: declare at least one value")
        axes[name] = [_finite(f"grid[{name!r}] value", v) for v in values]
    best: tuple[float, dict[str, float]] | None = None
    n = 0
    for point in itertools.product(*axes.values()):
        theta = dict(zip(axes, point))
        s = _finite(f"score at {theta}", score(**theta))
        n += 1
        if best is None or s > best[0]:
            best = (s, theta)
    return GridCeiling(best[0], MappingProxyType(best[1]), n)


# ----------------------------------------------------------------------------------------------
# ftip-00JL: optimizer-reachable ceiling and systems-feasible frontier
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReachedPoint:
    """The iterate of run ``init`` after ``horizon`` optimizer steps: its parameters, score and cost."""

    init: int
    horizon: int
    params: tuple[float, ...]
    score: float
    cost: float

    @property
    def name(self) -> str:
        """A label such as ``"init 0, h=5"`` (initialization index, horizon)."""
        return f"init {self.init}, h={self.horizon}"


@dataclass(frozen=True)
class ReachableSet:
    """Every iterate the declared optimizer ``optimizer`` reaches at the declared horizons (ftip-00JL)."""

    optimizer: str
    cost_per_step: float
    points: tuple[ReachedPoint, ...]

    @property
    def ceiling(self) -> ReachedPoint:
        """The best reached point; ties go to the cheaper, then to the earlier declared."""
        return min(self.points, key=lambda p: (-p.score, p.cost))

    def interventions(self) -> list[Intervention]:
        """Each reached point as an :class:`~ftipbook.compare.frontier.Intervention` (cost, score)."""
        return [Intervention(p.name, p.cost, p.score) for p in self.points]

    def feasible(self, budget: float) -> FrontierValue:
        """The systems-feasible frontier ``V(C)`` of ftip-00JL at ``budget = C`` (ftip-00JJ conventions)."""
        return frontier_value(self.interventions(), budget)


def optimizer_reachable(loss: Callable[[torch.Tensor], torch.Tensor], score: Callable[[torch.Tensor], float],
                        make_optimizer: Callable[[list[torch.Tensor]], torch.optim.Optimizer],
                        inits: Sequence[Sequence[float]], horizons: Sequence[int], *,
                        cost_per_step: float, optimizer: str) -> ReachableSet:
    """Run ``make_optimizer([theta])`` on ``loss`` from each declared init; score the iterate at each horizon.

    ``theta`` is one float64 parameter vector; ``horizons`` are strictly increasing step counts
    (``0`` is the init itself). The run to the largest horizon passes every smaller one, so one
    run per init gives every horizon: this is exact for optimizers whose update at step ``t`` does
    not depend on the horizon (no schedule tied to the run length). The iterate after ``h`` steps
    costs ``h * cost_per_step`` (a measured cost of one step under the systems configuration).
    ``optimizer`` names the declared optimizer and its settings, for the record.
    """
    for name, fn in (("loss", loss), ("score", score), ("make_optimizer", make_optimizer)):
        _callable(name, fn)
    if not isinstance(optimizer, str) or not optimizer.strip():
        raise ValueError(f"optimizer must name the declared optimizer, got {optimizer!r}")
    cost = _finite("cost_per_step", cost_per_step)
    if cost < 0:
        raise ValueError(f"cost_per_step={cost!r} must be >= 0")
    horizons = list(horizons)
    if not horizons or any(isinstance(h, bool) or not isinstance(h, int) or h < 0 for h in horizons):
        raise ValueError(f"horizons must be a non-empty list of ints >= 0, got {horizons!r}")
    if any(b <= a for a, b in zip(horizons, horizons[1:])):
        raise ValueError(f"horizons must be strictly increasing, got {horizons!r}")
    inits = [list(i) for i in inits]
    if not inits:
        raise ValueError("inits must declare at least one initialization")
    points = []
    for i, init in enumerate(inits):
        theta = torch.tensor([_finite(f"inits[{i}] entry", v) for v in init], dtype=torch.float64,
                             requires_grad=True)
        opt = make_optimizer([theta])
        if not isinstance(opt, torch.optim.Optimizer):
            raise TypeError(f"make_optimizer must return a torch.optim.Optimizer, got {type(opt).__name__}")
        step = 0
        for h in horizons:
            while step < h:
                opt.zero_grad()
                loss(theta).backward()
                opt.step()
                step += 1
            params = theta.detach().clone()
            points.append(ReachedPoint(i, h, tuple(params.tolist()), _finite("score", score(params)), h * cost))
    return ReachableSet(optimizer, cost, tuple(points))


@dataclass(frozen=True)
class CeilingLayers:
    """The three layers of ftip-00JL at one budget, checked to be ordered.

    ``representational >= reachable >= feasible`` (``feasible`` may be ``-inf``: nothing
    affordable). ``ValueError`` if the order fails, which happens when the representational grid
    misses a parameter the optimizer reached: such a grid maximum is not a ceiling.
    """

    representational: float
    reachable: float
    feasible: float
    budget: float

    def __post_init__(self) -> None:
        if self.reachable > self.representational:
            raise ValueError(
                f"reachable ceiling {self.reachable!r} exceeds the representational value {self.representational!r}: "
                f"the grid misses parameters the optimizer reached, so its maximum is a lower bound, not a ceiling")
        if self.feasible > self.reachable:
            raise ValueError(f"feasible frontier {self.feasible!r} exceeds the reachable ceiling {self.reachable!r}: "
                             f"the feasible points must be reached points")

    @property
    def gaps(self) -> tuple[float, float]:
        """``(representational - reachable, reachable - feasible)``; ``inf`` when nothing is feasible."""
        return self.representational - self.reachable, self.reachable - self.feasible


def ceiling_layers(representational: GridCeiling, reachable: ReachableSet, budget: float) -> CeilingLayers:
    """The three ceiling layers of ftip-00JL for one task, from a grid ceiling, a reachable set and a budget ``C``."""
    if not isinstance(representational, GridCeiling) or not isinstance(reachable, ReachableSet):
        raise TypeError("ceiling_layers takes a GridCeiling and a ReachableSet")
    feasible = reachable.feasible(budget)
    return CeilingLayers(representational.value, reachable.ceiling.score, feasible.value, feasible.budget)


# ----------------------------------------------------------------------------------------------
# ftip-00JM: a difference over a declared grid of coordinates
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GridCell:
    """One grid point: the coordinates and both systems' scores there."""

    coordinates: Mapping[str, Any]
    score_a: float
    score_b: float

    @property
    def difference(self) -> float:
        """``score_a - score_b``."""
        return self.score_a - self.score_b


@dataclass(frozen=True)
class DifferenceGrid:
    """Scores of systems ``a`` and ``b`` at every point of a declared coordinate grid (ftip-00JM)."""

    a: str
    b: str
    axes: Mapping[str, tuple[Any, ...]]
    cells: tuple[GridCell, ...]

    @property
    def differences(self) -> tuple[float, ...]:
        """``score_a - score_b`` per cell, in grid order."""
        return tuple(c.difference for c in self.cells)

    @property
    def signs(self) -> frozenset[int]:
        """The signs (``-1, 0, 1``) the difference takes over the grid."""
        return frozenset((d > 0) - (d < 0) for d in self.differences)

    @property
    def changes_sign(self) -> bool:
        """True when the difference is positive somewhere and negative somewhere else."""
        return {-1, 1} <= self.signs

    def cell(self, **coordinates: Any) -> GridCell:
        """The cell at the given coordinates (every axis named)."""
        if set(coordinates) != set(self.axes):
            raise ValueError(f"name every axis {sorted(self.axes)}, got {sorted(coordinates)}")
        for c in self.cells:
            if dict(c.coordinates) == coordinates:
                return c
        raise ValueError(f"no cell at {coordinates}; axes: {dict(self.axes)}")

    def varied(self, fixed: Mapping[str, Any]) -> tuple[GridCell, ...]:
        """The cells where the coordinates in ``fixed`` take the given values; the other axes vary."""
        unknown = set(fixed) - set(self.axes)
        if unknown:
            raise ValueError(f"unknown axes {sorted(unknown)}; axes: {sorted(self.axes)}")
        return tuple(c for c in self.cells if all(c.coordinates[k] == v for k, v in fixed.items()))


def difference_grid(score: Callable[..., float], systems: tuple[str, str],
                    axes: Mapping[str, Sequence[Any]]) -> DifferenceGrid:
    """``score(system, **coordinates)`` for both systems at every point of the product of ``axes`` (ftip-00JM).

    ``systems`` names the two systems ``(a, b)``; the cells come in the product order of ``axes``.
    """
    _callable("score", score)
    if not isinstance(systems, tuple) or len(systems) != 2 or systems[0] == systems[1]:
        raise ValueError(f"systems must be a pair of two different names, got {systems!r}")
    if not isinstance(axes, Mapping) or not axes:
        raise ValueError(f"axes must be a non-empty mapping name -> values, got {axes!r}")
    frozen = {}
    for name, values in axes.items():
        values = tuple(values)
        if not values:
            raise ValueError(f"axes[{name!r}] is empty: declare at least one value")
        frozen[name] = values
    cells = []
    for point in itertools.product(*frozen.values()):
        where = dict(zip(frozen, point))
        a, b = (_finite(f"score({s!r}, {where})", score(s, **where)) for s in systems)
        cells.append(GridCell(MappingProxyType(where), a, b))
    return DifferenceGrid(systems[0], systems[1], MappingProxyType(frozen), tuple(cells))


# ----------------------------------------------------------------------------------------------
# ftip-00JK: an evaluation functional of the model/interface map
# ----------------------------------------------------------------------------------------------
@torch.no_grad()
def answer_probability(model: torch.nn.Module, tokenizer: Any, documents: Sequence[Any]) -> float:
    """``J = mean_i P(answer_i, eos | prompt_i)`` under ``model``'s conditional law (ftip-00JK).

    Each document has ``prompt`` and ``answer``; the probability of the answer tokens followed by
    ``eos`` is the product of the model's next-token probabilities (teacher forcing), so ``J`` is the
    exact expected 0/1 score of sampling an answer at temperature 1 from the model. It reads
    the map from prompts to next-token laws only. Documents of equal length run as one batch.
    """
    docs = list(documents)
    if not docs:
        raise ValueError("answer_probability needs at least one document")
    if getattr(tokenizer, "eos_id", None) is None:
        raise ValueError("answer_probability needs a tokenizer with an eos token")
    missing = [getattr(d, "doc_id", d) for d in docs if getattr(d, "answer", None) is None]
    if missing:
        raise ValueError(f"documents without a reference answer cannot be scored: {missing[:3]}")
    groups: dict[tuple[int, int], list[tuple[list[int], list[int]]]] = {}
    for d in docs:
        x, y = tokenizer.encode(d.prompt), tokenizer.encode(d.answer) + [tokenizer.eos_id]
        groups.setdefault((len(x), len(y)), []).append((x, y))
    device = next(model.parameters()).device
    total = 0.0
    for (n_x, n_y), members in groups.items():
        seqs = torch.tensor([x + y for x, y in members], device=device)
        logits = model(seqs)[:, n_x - 1:n_x + n_y - 1]
        logp = torch.log_softmax(logits.double(), dim=-1).gather(-1, seqs[:, n_x:].unsqueeze(-1)).squeeze(-1)
        total += float(logp.sum(dim=1).exp().sum())
    return total / len(docs)


__all__ = [
    "GridCeiling", "representational_ceiling", "ReachedPoint", "ReachableSet", "optimizer_reachable",
    "CeilingLayers", "ceiling_layers", "GridCell", "DifferenceGrid", "difference_grid", "answer_probability",
]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
