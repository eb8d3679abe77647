"""Cost vectors with units, declared scalarizations, order flips and Pareto dominance (ftip-00JQ, 00JT, 00L9).

Definition ftip-00JQ keeps the costs of a system apart, as a vector ``c`` of named coordinates
(training FLOPs, inference FLOPs, wall time, memory, energy, ...), each with its unit. A scalar
cost ``C = w . c`` is a *declared* study choice with nonnegative weights, not a property of the
system. Definition ftip-00L9 adds that coordinates nobody measured are marked unknown, never
silently zero: a scalarization that puts positive weight on an unknown coordinate returns
:data:`UNKNOWN`, not a number.

Example ftip-00JT adds that the scalar order of two systems depends on the declared weights:
:func:`order_flip_weights` solves for the nonnegative weights at which it flips.

Conventions: costs lie in ``[0, +inf]`` (``+inf`` means infeasible, as in ftip-00JJ); a zero
weight ignores its coordinate entirely (so ``0 * inf`` and ``0 * UNKNOWN`` never arise).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Real
from dataclasses import dataclass
from types import MappingProxyType

from ftipbook import _validate
from ftipbook.model.accounting import cache_bytes, flops_per_token
from ftipbook.model.config import ModelConfig


@dataclass(frozen=True)
class Unknown:
    """A value nobody recorded or measured (ftip-00L9, ftip-00JY); ``reason`` says which and why.

    It is not a number: arithmetic and ``float()`` on it raise ``TypeError``, so an unknown cost or
    field cannot leak into a computed result. Test with ``isinstance(x, Unknown)``.
    """

    reason: str = "not recorded"

    def __float__(self) -> float:
        raise TypeError(f"an unknown value ({self.reason}) has no numeric value")

    def __bool__(self) -> bool:
        raise TypeError(f"an unknown value ({self.reason}) is neither true nor false; test isinstance(x, Unknown)")

    def __repr__(self) -> str:
        return "UNKNOWN" if self.reason == "not recorded" else f"Unknown({self.reason!r})"


#: The marker of a coordinate or record field that was not recorded.
UNKNOWN = Unknown()

#: Training FLOPs per token as a multiple of the forward FLOPs (forward + backward), the usual convention.
TRAIN_FORWARD_MULTIPLE = 3

#: The coordinates Definition ftip-00L9 asks for, with the units this library uses for them.
STANDARD_UNITS: Mapping[str, str] = MappingProxyType({
    "train_flops": "FLOP",
    "inference_flops": "FLOP",
    "wall_time": "s",
    "memory": "byte",
    "energy": "J",
    "context_length": "token",
})


def training_flops(cfg: ModelConfig, tokens: int, context: int) -> float:
    """Declared training compute of ``tokens`` tokens in windows of length ``context`` (ftip-00L9):
    ``TRAIN_FORWARD_MULTIPLE x`` the forward matrix FLOPs per token of a causal prefill
    (:func:`ftipbook.model.accounting.flops_per_token`) times ``tokens``. An accounting rule, not a
    measurement: the kernels actually run may execute more."""
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        raise ValueError(f"tokens={tokens!r} must be an int >= 0")
    return TRAIN_FORWARD_MULTIPLE * flops_per_token(cfg, context, "prefill") * tokens


def checkpoint_cost_vector(record: Mapping, context: int) -> "CostVector":
    """The cost vector of one trained checkpoint from its record (``ftipbook.zoo.verify(name)``) (ftip-00JQ, 00L9).

    ``train_flops`` is :func:`training_flops` of the record's model over the tokens it was trained
    on (``step x batch_size x seq_len``); ``inference_flops`` the decode FLOPs per token and
    ``memory`` the cache bytes at ``context`` tokens; ``context_length`` is ``context``. Wall time
    and energy were not measured for these records and are :data:`UNKNOWN`; the hardware is a
    systems-record field, not a numeric coordinate.
    """
    if isinstance(context, bool) or not isinstance(context, int) or context < 1:
        raise ValueError(f"context={context!r} must be an int >= 1")
    missing = sorted({"model", "step", "train"} - set(record))
    if missing:
        raise ValueError(f"the record has no {missing}; pass a checkpoint record such as ftipbook.zoo.verify(name)")
    cfg, train = ModelConfig(**record["model"]), record["train"]
    tokens = record["step"] * train["batch_size"] * train["seq_len"]
    return CostVector.standard(
        train_flops=training_flops(cfg, tokens, train["seq_len"]),
        inference_flops=flops_per_token(cfg, context, "decode"),
        memory=cache_bytes(cfg, context),
        context_length=context,
    )


def _check_cost(name: str, value: object) -> float | Unknown:
    """A cost coordinate: a real number in ``[0, +inf]`` (numpy scalars and ``Fraction`` s too,
    as a ``float``) or UNKNOWN."""
    if isinstance(value, Unknown):
        return value
    if _validate.is_bool(value) or not isinstance(value, Real):
        raise TypeError(
            f"cost coordinate {name!r} must be a real number in [0, inf] or UNKNOWN, got {type(value).__name__} {value!r}"
        )
    try:
        x = float(value)
    except OverflowError:
        _validate.real(f"cost coordinate {name!r}", value, finite=False)  # raises, naming the coordinate
        raise
    if math.isnan(x) or x < 0:
        raise ValueError(f"cost coordinate {name!r}={value!r} must lie in [0, inf] (use UNKNOWN when not measured)")
    return value if type(value) in (int, float) else x


@dataclass(frozen=True)
class CostVector:
    """Named cost coordinates with units (ftip-00JQ, ftip-00L9); unmeasured ones are :data:`UNKNOWN`.

    ``CostVector({"wall_time": 1.5, "energy": UNKNOWN}, {"wall_time": "s", "energy": "J"})``.
    Values lie in ``[0, +inf]``; every coordinate has a non-empty unit string. Use
    :meth:`standard` for the coordinates of ftip-00L9.
    """

    values: Mapping[str, float | Unknown]
    units: Mapping[str, str]

    def __post_init__(self) -> None:
        if not isinstance(self.values, Mapping) or not isinstance(self.units, Mapping):
            raise TypeError("CostVector(values, units) takes two mappings from coordinate name to value and unit")
        if set(self.values) != set(self.units):
            raise ValueError(
                f"every coordinate needs a unit and every unit a coordinate; values have {sorted(self.values)}, "
                f"units have {sorted(self.units)}"
            )
        if not self.values:
            raise ValueError("a cost vector needs at least one coordinate")
        checked = {}
        for name in self.values:
            if not isinstance(name, str) or not name:
                raise ValueError(f"coordinate names must be non-empty strings, got {name!r}")
            unit = self.units[name]
            if not isinstance(unit, str) or not unit.strip():
                raise ValueError(f"coordinate {name!r} has no unit (got {unit!r}); declare one, e.g. 's' or 'FLOP'")
            checked[name] = _check_cost(name, self.values[name])
        object.__setattr__(self, "values", MappingProxyType(checked))
        object.__setattr__(self, "units", MappingProxyType(dict(self.units)))

    @classmethod
    def standard(cls, **values: float | Unknown) -> "CostVector":
        """The six coordinates of ftip-00L9 in :data:`STANDARD_UNITS`; any not given is :data:`UNKNOWN`.

        ``CostVector.standard(train_flops=3e12, wall_time=0.4, memory=2**20, context_length=64)``.
        """
        extra = sorted(set(values) - set(STANDARD_UNITS))
        if extra:
            raise ValueError(f"unknown coordinate(s) {extra}; the standard ones are {list(STANDARD_UNITS)}")
        return cls({name: values.get(name, UNKNOWN) for name in STANDARD_UNITS}, dict(STANDARD_UNITS))

    @property
    def names(self) -> tuple[str, ...]:
        """The coordinate names, in declaration order."""
        return tuple(self.values)

    def __getitem__(self, name: str) -> float | Unknown:
        if name not in self.values:
            raise KeyError(f"no coordinate {name!r}; this vector has {list(self.values)}")
        return self.values[name]

    def unknown(self) -> tuple[str, ...]:
        """Names of the coordinates marked unknown."""
        return tuple(n for n, v in self.values.items() if isinstance(v, Unknown))

    def rows(self) -> list[tuple[str, str, str]]:
        """``(name, value, unit)`` strings for a small printed table (values to 4 significant digits)."""
        return [(n, "UNKNOWN" if isinstance(v, Unknown) else f"{v:.4g}", self.units[n]) for n, v in self.values.items()]


@dataclass(frozen=True)
class Scalarization:
    """A declared scalar cost ``C = sum_i w_i c_i`` (ftip-00JQ, ftip-00L9).

    ``weights`` maps coordinate names to ``w_i >= 0`` (finite); ``units`` declares the unit each
    weight expects, so a vector measured in other units is refused instead of mixing seconds with
    milliseconds. ``scalar_unit`` names the unit of ``C``. Calling it on a :class:`CostVector`
    returns ``C`` or, when a positively weighted coordinate is unknown, an :class:`Unknown` naming
    it. Coordinates with weight zero are ignored.
    """

    weights: Mapping[str, float]
    units: Mapping[str, str]
    scalar_unit: str = "declared cost unit"

    def __post_init__(self) -> None:
        if set(self.weights) != set(self.units):
            raise ValueError(
                f"declare a unit for every weight: weights name {sorted(self.weights)}, units name {sorted(self.units)}"
            )
        if not self.weights:
            raise ValueError("a scalarization needs at least one weighted coordinate")
        for name, w in self.weights.items():
            if isinstance(w, bool) or not isinstance(w, (int, float)):
                raise TypeError(f"weight of {name!r} must be a real number, got {type(w).__name__}")
            if not (math.isfinite(w) and w >= 0):
                raise ValueError(f"weight of {name!r} is {w!r}; weights must be finite and >= 0 (ftip-00JQ)")
        if not any(w > 0 for w in self.weights.values()):
            raise ValueError("all weights are zero: the scalar cost would ignore every coordinate")
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))
        object.__setattr__(self, "units", MappingProxyType(dict(self.units)))

    def __call__(self, cost: CostVector) -> float | Unknown:
        if not isinstance(cost, CostVector):
            raise TypeError(f"a scalarization applies to a CostVector, got {type(cost).__name__}")
        missing = sorted(set(self.weights) - set(cost.values))
        if missing:
            raise ValueError(f"the cost vector has no coordinate(s) {missing}; it has {list(cost.names)}")
        unknown = []
        total = 0.0
        for name, w in self.weights.items():
            if cost.units[name] != self.units[name]:
                raise ValueError(
                    f"unit mismatch on {name!r}: the weight is declared per {self.units[name]!r} but the vector "
                    f"is measured in {cost.units[name]!r}; convert the measurement first"
                )
            if w == 0:
                continue
            value = cost.values[name]
            if isinstance(value, Unknown):
                unknown.append(name)
            else:
                total += w * value
        if unknown:
            return Unknown(f"positive weight on unknown coordinate(s) {', '.join(unknown)}")
        return total


@dataclass(frozen=True)
class OrderFlip:
    """Where the scalar order of two cost vectors flips, over nonnegative weights (ftip-00JQ, 00JT).

    ``difference`` holds ``d_i = a_i - b_i`` on the reference scalarization's coordinates, so under
    weights ``w`` system ``a`` is cheaper when ``w . d < 0``, ``b`` when ``w . d > 0``, and they tie
    on the hyperplane ``w . d = 0``. ``reference_order`` is ``"a"``, ``"b"`` or ``"tie"`` under
    ``reference``. ``thresholds[i]`` is the weight on coordinate ``i`` (the others kept as in
    ``reference``) at which the two scalar costs are equal, or ``None`` when no nonnegative weight
    on ``i`` makes them equal (``d_i = 0``, or the equal point would need a negative weight).
    ``flips`` says whether some nonnegative weights give the strict order opposite to the
    reference's (for a tied reference: whether both strict orders occur), which happens exactly
    when ``d`` has coordinates of both signs, that is when neither vector Pareto-dominates.
    """

    reference: Scalarization
    difference: Mapping[str, float]
    reference_order: str
    thresholds: Mapping[str, float | None]
    flips: bool

    def with_weight(self, coordinate: str, weight: float) -> Scalarization:
        """The reference scalarization with the weight of ``coordinate`` replaced by ``weight``."""
        if coordinate not in self.reference.weights:
            raise KeyError(f"no coordinate {coordinate!r}; the reference weights {list(self.reference.weights)}")
        return Scalarization({**self.reference.weights, coordinate: weight}, self.reference.units,
                             self.reference.scalar_unit)


def _order(x: float) -> str:
    return "a" if x < 0 else "b" if x > 0 else "tie"


def order_flip_weights(a: CostVector, b: CostVector, reference: Scalarization) -> OrderFlip:
    """Solve for the nonnegative weights under which the scalar order of ``a`` and ``b`` flips (ftip-00JT).

    ``reference`` is the declared :class:`Scalarization` (it already refuses negative weights);
    both vectors must carry its coordinates in its units (``ValueError`` naming the coordinate
    otherwise) and every one of those coordinates must be measured: the order under weights that
    load an unknown coordinate is unknown, so an unknown coordinate is refused by name. The
    threshold weight on coordinate ``i`` solves ``w . d = 0`` with the other weights fixed:
    ``w_i = reference_i - (reference . d) / d_i``.
    """
    if not isinstance(reference, Scalarization):
        raise TypeError(f"reference must be a Scalarization, got {type(reference).__name__}")
    for name, vector in (("a", a), ("b", b)):
        if not isinstance(vector, CostVector):
            raise TypeError(f"{name} must be a CostVector, got {type(vector).__name__}")
        reference(vector)  # refuses missing coordinates and unit mismatches by name
        unknown = [n for n in reference.weights if isinstance(vector[n], Unknown)]
        if unknown:
            raise ValueError(f"{name} has unknown coordinate(s) {unknown}: the order under weights on them is "
                             f"unknown; measure them or drop them from the scalarization")
        infinite = [n for n in reference.weights if math.isinf(vector[n])]
        if infinite:
            raise ValueError(f"{name} has infinite coordinate(s) {infinite}: an infeasible cost has no finite "
                             f"scalar order to flip")
    d = {n: a[n] - b[n] for n in reference.weights}
    total = sum(reference.weights[n] * x for n, x in d.items())
    thresholds = {}
    for n, x in d.items():
        w = reference.weights[n] - total / x if x != 0 else None
        thresholds[n] = w if w is not None and w >= 0 else None
    signs = {_order(x) for x in d.values()} - {"tie"}
    flips = len(signs) == 2  # some coordinate favours each system
    return OrderFlip(reference, MappingProxyType(d), _order(total), MappingProxyType(thresholds), flips)


def pareto_dominates(a: CostVector, b: CostVector) -> bool | Unknown:
    """Whether ``a`` Pareto-dominates ``b``: no coordinate worse and at least one strictly better.

    Both vectors must have the same coordinates in the same units. Unknown coordinates make the
    answer :class:`Unknown` unless a known coordinate already shows that ``a`` is worse (then
    ``False``).
    """
    if not isinstance(a, CostVector) or not isinstance(b, CostVector):
        raise TypeError("pareto_dominates compares two CostVectors")
    if set(a.names) != set(b.names):
        raise ValueError(f"the vectors have different coordinates: {sorted(a.names)} vs {sorted(b.names)}")
    for name in a.names:
        if a.units[name] != b.units[name]:
            raise ValueError(f"unit mismatch on {name!r}: {a.units[name]!r} vs {b.units[name]!r}")
    unknown = [n for n in a.names if isinstance(a[n], Unknown) or isinstance(b[n], Unknown)]
    known = [n for n in a.names if n not in unknown]
    if any(a[n] > b[n] for n in known):
        return False
    if unknown:
        return Unknown(f"dominance undetermined: unknown coordinate(s) {', '.join(unknown)}")
    return any(a[n] < b[n] for n in known)


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
