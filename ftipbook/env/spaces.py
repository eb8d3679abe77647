"""The declared spaces and the hard horizon of an interaction (ftip-001X).

``S``, ``O`` and ``A`` (environment states, public observations, agent actions) are either finite
sets, given as any iterable of hashable values, or ``None`` for a space that is declared but not
listed (token sequences, texts). Time runs over ``0..t_max`` with a finite hard horizon ``t_max``.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from fractions import Fraction

from ftipbook import checks

Prob = int | float | Fraction


#: The largest hard horizon, vocabulary and trajectory count the environments declare.
MAX_COUNT = 10**6


def check_int(name: str, value: object, *, low: int = 0, high: int | None = MAX_COUNT) -> int:
    """``value`` as an int in ``[low, high]``, else a TypeError/ValueError naming ``name``."""
    checks.text("name", name)
    return checks.integer(name, value, checks.integer("low", low), high)


def check_callable(name: str, value: object) -> None:
    checks.function(name, value)


def _space(name: str, values: Iterable[Hashable] | None) -> frozenset | None:
    if values is None:
        return None
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be an iterable of values or None, got {type(values).__name__} "
                        f"{checks.show(values)}")
    out = frozenset(checks.hashable(f"a value of {name}", v) for v in checks.items(name, values, limit=MAX_COUNT))
    if not out:
        raise ValueError(f"{name} must be a nonempty set (or None for an unlisted space)")
    return out


@dataclass(frozen=True)
class Spaces:
    """``(S, O, A, T_max)`` of Notation ftip-001X: states, observations, actions, hard horizon.

    A ``None`` space is declared but unlisted: membership is not checked and the interaction law
    can still be enumerated when every kernel and policy returns a finite law.
    """

    states: frozenset | None
    observations: frozenset | None
    actions: frozenset | None
    t_max: int

    def __post_init__(self) -> None:
        for name in ("states", "observations", "actions"):
            object.__setattr__(self, name, _space(name, getattr(self, name)))
        check_int("t_max", self.t_max)

    def check(self, kind: str, value: Hashable) -> Hashable:
        """Return ``value`` if it lies in the space ``kind`` (``"states"``, ...), else a ValueError."""
        if kind not in ("states", "observations", "actions"):
            raise ValueError(f"kind must be 'states', 'observations' or 'actions', got {kind!r}")
        try:
            hash(value)
        except TypeError:
            raise TypeError(f"a value of {kind} must be hashable, got {type(value).__name__} {value!r}") from None
        space = getattr(self, kind)
        if space is not None and value not in space:
            raise ValueError(f"{value!r} is not in the declared {kind} {sorted(map(repr, space))[:8]}")
        return value
