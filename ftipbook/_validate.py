"""Argument checks shared by the public functions of the library (issue 25, item 4).

Each check takes the argument's ``name`` and ``value`` and either returns the value in its
canonical Python type or raises ``TypeError`` (wrong kind) / ``ValueError`` (right kind, value out
of range) whose message names the argument, the value and what is allowed. The rules:

* a bool is not a number and a number is not a bool (``True`` is no count, ``"no"`` is no flag);
* an int is an int: ``1.7`` and ``2.0`` are refused, never truncated; numpy integers are ints;
* a real number is any :class:`numbers.Real` that is not a bool (``int``, ``float``, numpy
  scalars, :class:`fractions.Fraction`), converted to ``float``; an int too large for a float is
  a ``ValueError``, not an ``OverflowError``;
* an iterable argument is materialized once, before it is checked, so a generator is read once.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

#: The largest seed accepted: seeds feed ``torch.Generator.manual_seed`` and ``numpy`` generators,
#: which take 64-bit values; ``2**63 - 1`` fits both.
MAX_SEED = 2**63 - 1


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def is_bool(value: object) -> bool:
    """``True`` for Python and numpy booleans."""
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def boolean(name: str, value: object) -> bool:
    """``value`` if it is ``True`` or ``False`` (or a numpy bool), else ``TypeError``."""
    if not is_bool(value):
        raise TypeError(f"{name}={_show(value)} must be True or False, got {type(value).__name__}")
    return bool(value)


def integer(name: str, value: object, *, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an ``int`` within ``[low, high]`` (either bound optional).

    Python and numpy integers qualify; bools, floats (even ``2.0``), strings and ``None`` do not.
    """
    if is_bool(value) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}={_show(value)} must be an int{_range(low, high)}, got {type(value).__name__}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name}={_show(value)} must be an int{_range(low, high)}")
    return value


def seed(name: str, value: object) -> int:
    """A seed: an ``int`` in ``[0, 2**63 - 1]``."""
    return integer(name, value, low=0, high=MAX_SEED)


def real(name: str, value: object, *, low: float | None = None, high: float | None = None,
         low_open: bool = False, high_open: bool = False, finite: bool = True) -> float:
    """``value`` as a ``float`` within the declared bounds.

    ``finite=False`` admits ``+-inf`` (never NaN). Bounds are closed unless ``low_open`` /
    ``high_open``.
    """
    if is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}={_show(value)} must be a real number{_bounds(low, high, low_open, high_open)}, "
                        f"got {type(value).__name__}")
    try:
        x = float(value)
    except OverflowError:
        raise ValueError(f"{name}={_show(value)} is too large for a float; it must be a finite real number"
                         f"{_bounds(low, high, low_open, high_open)}") from None
    if math.isnan(x) or (finite and math.isinf(x)):
        raise ValueError(f"{name}={_show(value)} must be a {'finite ' if finite else ''}real number (not NaN)"
                         f"{_bounds(low, high, low_open, high_open)}")
    if low is not None and (x < low or (low_open and x == low)):
        raise ValueError(f"{name}={_show(value)} must be a real number{_bounds(low, high, low_open, high_open)}")
    if high is not None and (x > high or (high_open and x == high)):
        raise ValueError(f"{name}={_show(value)} must be a real number{_bounds(low, high, low_open, high_open)}")
    return x


def probability(name: str, value: object) -> float:
    """A probability: a real number in ``[0, 1]``, as a ``float``."""
    return real(name, value, low=0.0, high=1.0)


def level(name: str, value: object) -> float:
    """A confidence level: a real number in the open interval ``(0, 1)``."""
    return real(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


def text(name: str, value: object, *, empty: bool = False) -> str:
    """A string, non-blank unless ``empty``."""
    if not isinstance(value, str):
        raise TypeError(f"{name}={_show(value)} must be a string, got {type(value).__name__}")
    if not empty and not value.strip():
        raise ValueError(f"{name}={_show(value)} must be a non-empty string")
    return value


def choice(name: str, value: object, allowed: Iterable[Any]) -> Any:
    """``value`` if it is one of ``allowed``."""
    allowed = tuple(allowed)
    if not any(type(value) is type(a) and value == a for a in allowed):
        raise ValueError(f"{name}={_show(value)} is not one of {', '.join(map(repr, allowed))}")
    return value


def sequence(name: str, value: object, *, what: str = "values", strings: bool = False) -> tuple:
    """An iterable read once into a tuple (a generator is consumed here, before any other check).

    A ``str``/``bytes`` is refused (it is one value, not a sequence of them) unless ``strings``.
    """
    if (isinstance(value, (str, bytes)) and not strings) or not isinstance(value, Iterable):
        raise TypeError(f"{name}={_show(value)} must be a sequence of {what}, got {type(value).__name__}")
    return tuple(value)


def _range(low: int | None, high: int | None) -> str:
    if low is None and high is None:
        return ""
    if high is None:
        return f" >= {low}"
    if low is None:
        return f" <= {high}"
    return f" in [{low}, {high}]"


def _bounds(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is None and high is None:
        return ""
    if high is None:
        return f" {'>' if low_open else '>='} {low}"
    if low is None:
        return f" {'<' if high_open else '<='} {high}"
    return f" in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"


__all__ = ["MAX_SEED", "boolean", "choice", "integer", "is_bool", "level", "probability", "real", "seed",
           "sequence", "text"]
