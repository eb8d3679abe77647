"""Measured contrasts and conditional predictions, kept apart (ftip-00LE, ftip-00LC, ftip-00L3).

Definition ftip-00LE separates two kinds of comparative statement:

* a :class:`MeasuredContrast` evaluates one declared quantity for two observed systems under one
  task, protocol and cost accounting (the Table 4 scores of ftip-00LC are three of them); it is
  *confirmatory* only when its matching and selection rules were fixed before the scores were
  examined, which this class records as the fingerprint of a pre-declared procedure;
* a :class:`ConditionalPrediction` derives a quantity from an explicit model whose inputs are
  each marked measured or assumed (the discovery probabilities of ftip-00L3); its assumed inputs
  stay assumptions, and a new matched measurement tests the model through a test declared in
  advance (:class:`ProportionTest`, :class:`MeanTest`, :class:`ToleranceTest`), giving a
  :class:`PredictionCheck`.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ftipbook.eval.stats import BootstrapResult, Interval, bootstrap_mean_ci, clopper_pearson

INPUT_STATUSES = ("measured", "assumed")


def _decimal(x: float) -> Fraction:
    """``x`` as the decimal it prints as, so that ``67.4 - 65.7`` is exactly ``1.7``."""
    return Fraction(repr(float(x)))


def _finite(name: str, x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, Fraction)):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__} {x!r}")
    if not math.isfinite(x):
        raise ValueError(f"{name}={x!r} must be finite")
    return float(x)


@dataclass(frozen=True)
class MeasuredContrast:
    """One declared quantity measured for two systems under one protocol (ftip-00LE).

    ``value_a`` and ``value_b`` are in ``unit``; ``higher_is_better`` fixes the direction;
    ``uncertainty`` is an interval of ``a - b`` or the words the source gives (``"not reported"``).
    ``procedure_fingerprint`` is the hash of a matching/selection/uncertainty procedure fixed
    before the scores were examined (e.g. ``BootstrapProcedure.fingerprint()`` of :mod:`ftipbook.eval.stats`);
    without it the contrast is descriptive, not confirmatory.
    """

    quantity: str
    unit: str
    system_a: str
    system_b: str
    value_a: float
    value_b: float
    protocol: str
    higher_is_better: bool = True
    uncertainty: Interval | BootstrapResult | str = "not reported"
    procedure_fingerprint: str | None = None

    def __post_init__(self) -> None:
        for name in ("quantity", "unit", "system_a", "system_b", "protocol"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"{name} must be a non-empty string")
        if self.system_a == self.system_b:
            raise ValueError(f"a contrast needs two systems, got {self.system_a!r} twice")
        object.__setattr__(self, "value_a", _finite("value_a", self.value_a))
        object.__setattr__(self, "value_b", _finite("value_b", self.value_b))
        if not isinstance(self.uncertainty, (Interval, BootstrapResult, str)):
            raise TypeError("uncertainty must be an Interval, a BootstrapResult or the source's words")

    @property
    def difference(self) -> float:
        """``value_a - value_b``, exact in decimal (``67.4 - 65.7`` gives ``1.7``)."""
        return float(_decimal(self.value_a) - _decimal(self.value_b))

    @property
    def favours(self) -> str | None:
        """The system the measurement favours, or ``None`` for a tie."""
        d = self.difference
        if d == 0:
            return None
        return self.system_a if (d > 0) == self.higher_is_better else self.system_b

    @property
    def confirmatory(self) -> bool:
        """True only when a procedure was fixed (and fingerprinted) before the scores were examined."""
        return self.procedure_fingerprint is not None


def direction_summary(contrasts: Sequence[MeasuredContrast]) -> str:
    """``"<system> on all"`` when every contrast favours one system, ``"ties on all"``, else
    ``"mixed: task-dependent"`` (ftip-00KZ: mixed signs do not give one ordering)."""
    if not contrasts:
        raise ValueError("direction_summary needs at least one contrast")
    pairs = {frozenset((c.system_a, c.system_b)) for c in contrasts}
    if len(pairs) != 1:
        raise ValueError("all contrasts must compare the same two systems")
    winners = {c.favours for c in contrasts}
    if winners == {None}:
        return "ties on all"
    if len(winners) == 1:
        return f"{winners.pop()} on all"
    return "mixed: task-dependent"


# ----------------------------------------------------------------------------------------------
# conditional predictions (ftip-00LE)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelInput:
    """One input of a conditional prediction: its value, whether it was ``measured`` or ``assumed``, and its source."""

    name: str
    value: float
    status: str
    source: str

    def __post_init__(self) -> None:
        if self.status not in INPUT_STATUSES:
            raise ValueError(f"input {self.name!r}: status={self.status!r} must be one of {INPUT_STATUSES}")
        if not isinstance(self.source, str) or not self.source.strip():
            raise ValueError(f"input {self.name!r} needs a source (where the value comes from)")
        object.__setattr__(self, "value", _finite(self.name, self.value))


@dataclass(frozen=True)
class ConditionalPrediction:
    """A comparative quantity derived from an explicit ``model`` under declared inputs (ftip-00LE).

    Build it with :meth:`derive`, which evaluates ``fn`` on the input values, so the predicted
    value cannot drift from its inputs. :attr:`unmeasured` lists the assumed inputs; a new matched
    measurement tests the prediction through :meth:`check`.
    """

    quantity: str
    model: str
    inputs: tuple[ModelInput, ...]
    value: float

    @classmethod
    def derive(cls, quantity: str, model: str, fn: Callable[..., float], inputs: Sequence[ModelInput]) -> "ConditionalPrediction":
        """``value = fn(**{i.name: i.value for i in inputs})``."""
        inputs = tuple(inputs)
        names = [i.name for i in inputs]
        if len(set(names)) != len(names):
            raise ValueError(f"input names must be distinct, got {names}")
        for i in inputs:
            if not isinstance(i, ModelInput):
                raise TypeError(f"inputs must be ModelInput records, got {type(i).__name__}")
        value = fn(**{i.name: i.value for i in inputs})
        return cls(quantity, model, inputs, _finite(f"prediction of {quantity}", value))

    @property
    def unmeasured(self) -> tuple[str, ...]:
        """Names of the inputs that are assumptions, not measurements."""
        return tuple(i.name for i in self.inputs if i.status == "assumed")

    def input_values(self) -> Mapping[str, float]:
        return {i.name: i.value for i in self.inputs}

    def check(self, test: "ProportionTest | MeanTest | ToleranceTest", data: object) -> "PredictionCheck":
        """Compare with a new matched measurement through a test declared beforehand."""
        return test.evaluate(self, data)


@dataclass(frozen=True)
class PredictionCheck:
    """A prediction against a new measurement: the observed statistic, its interval, and the verdict."""

    quantity: str
    predicted: float
    observed: float
    interval: Interval
    test: str
    agrees: bool


@dataclass(frozen=True)
class ProportionTest:
    """Declared test for a predicted probability: observe ``k`` successes in ``n`` independent
    matched trials; the prediction agrees when it lies in the Clopper-Pearson interval at ``level``."""

    level: float = 0.95

    def evaluate(self, prediction: ConditionalPrediction, data: tuple[int, int]) -> PredictionCheck:
        k, n = data
        ci = clopper_pearson(k, n, self.level)
        return PredictionCheck(prediction.quantity, prediction.value, k / n, ci,
                               f"Clopper-Pearson {self.level:.0%}, n={n}", ci.contains(prediction.value))


@dataclass(frozen=True)
class MeanTest:
    """Declared test for a predicted mean: the prediction agrees when it lies in the percentile
    bootstrap interval (``level``, ``n_boot``, ``seed``) of the mean of the new measurements."""

    level: float = 0.95
    n_boot: int = 2000
    seed: int = 0

    def evaluate(self, prediction: ConditionalPrediction, data: Sequence[float]) -> PredictionCheck:
        ci = bootstrap_mean_ci(data, level=self.level, n_boot=self.n_boot, seed=self.seed)
        observed = math.fsum(float(x) for x in data) / len(data)
        return PredictionCheck(prediction.quantity, prediction.value, observed, ci,
                               f"bootstrap mean {self.level:.0%}, n={len(data)}", ci.contains(prediction.value))


@dataclass(frozen=True)
class ToleranceTest:
    """Declared test for a quantity measured without sampling noise (e.g. a timing share read off a
    deterministic cost model): the prediction agrees when it lies within ``abs_tol`` plus
    ``rel_tol`` times the observed magnitude of the observed value."""

    abs_tol: float = 0.0
    rel_tol: float = 0.0

    def __post_init__(self) -> None:
        for name in ("abs_tol", "rel_tol"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name}={value!r} must be a finite number >= 0")
        if self.abs_tol == 0 and self.rel_tol == 0:
            raise ValueError("declare a tolerance: abs_tol or rel_tol must be > 0")

    def evaluate(self, prediction: ConditionalPrediction, data: float) -> PredictionCheck:
        observed = _finite("observed value", data)
        tol = self.abs_tol + self.rel_tol * abs(observed)
        band = Interval(observed - tol, observed + tol, 1.0, "tolerance band")
        return PredictionCheck(prediction.quantity, prediction.value, observed, band,
                               f"tolerance abs {self.abs_tol:g} + rel {self.rel_tol:g}", band.contains(prediction.value))


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]], digits: int = 4) -> str:
    """A plain-text table with right-aligned columns; floats shown with ``digits`` decimals."""
    cells = [list(map(str, headers))] + [
        [f"{c:.{digits}f}" if isinstance(c, float) else str(c) for c in row] for row in rows
    ]
    if any(len(r) != len(headers) for r in cells):
        raise ValueError("every row needs one cell per header")
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
