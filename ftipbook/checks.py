"""Argument checks shared by the public functions (issue 25): each refuses a bad value with a
``TypeError`` (wrong kind) or ``ValueError`` (right kind, outside what is allowed) whose message names
the argument, shows the value and says what is allowed.

* bools are bools (``"no"`` or ``1`` is not ``True``); ints are ints (no ``bool``, no silent
  truncation of ``1.7``); numpy integers count as ints and numpy floats and ``Fraction`` objects as
  real numbers, so ``np.float32(0.95)`` and ``Fraction(19, 20)`` are accepted where a number is meant;
* reals are finite, probabilities lie in ``[0, 1]``; ints and ``Fraction`` objects are compared
  exactly, so a huge value gives a clear range error, never an ``OverflowError``;
* iterables are materialized once (:func:`items`) before they are checked, so a generator is not
  consumed by the check, and a bounded count caps the work an argument can ask for;
* :func:`show` is a short, safe ``repr`` (a deeply nested list or a 10**5-digit int cannot break
  the message).
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Iterable, Mapping
from fractions import Fraction
from itertools import islice
from numbers import Integral, Real
from typing import Any

import numpy as np

#: Seeds are ints in ``[0, 2**64)`` (what ``random``, NumPy's ``PCG64`` and ``torch`` all accept).
SEED_LIMIT = 2**64


class NotFoundError(KeyError, ValueError):
    """A name or key that is not there: a ``KeyError`` for lookups, and a ``ValueError`` naming it."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def show(value: object, width: int = 80) -> str:
    """``repr(value)``, cut to ``width`` characters; never raises."""
    try:
        text = repr(value)
    except (ValueError, RecursionError, OverflowError):  # a huge int, a deeply nested container
        text = f"<{type(value).__name__}>"
    except Exception:  # noqa: BLE001 (a user object's __repr__ may raise anything)
        text = f"<{type(value).__name__} with a failing repr>"
    return text if len(text) <= width else text[: width - 3] + "..."


def _got(value: object) -> str:
    return f"got {type(value).__name__} {show(value)}"


def is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_real(value: object) -> bool:
    return isinstance(value, Real) and not isinstance(value, (bool, np.bool_))


def boolean(name: str, value: object) -> bool:
    """``value`` as a bool: ``True``, ``False`` or a numpy bool; anything else is a ``TypeError``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool (True or False), {_got(value)}")
    return bool(value)


def _range(low: object, high: object, low_open: bool = False, high_open: bool = False) -> str:
    if low is None and high is None:
        return ""
    if high is None:
        return f" {'>' if low_open else '>='} {low}"
    if low is None:
        return f" {'<' if high_open else '<='} {high}"
    return f" in {'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"


def integer(name: str, value: object, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an ``int`` in ``[low, high]`` (either end may be open-ended with ``None``): a
    ``ValueError`` for a number that is not an int (``1.7``, ``True``), a ``TypeError`` for a non-number."""
    if not is_int(value):
        raise (ValueError if isinstance(value, (Real, np.bool_)) else TypeError)(f"{name} must be an int{_range(low, high)}, {_got(value)}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name}={show(value)} must be an int{_range(low, high)}")
    return value


def optional_integer(name: str, value: object, low: int | None = None, high: int | None = None) -> int | None:
    return None if value is None else integer(name, value, low, high)


def seed(name: str, value: object) -> int:
    """A seed: an int in ``[0, 2**64)``."""
    return integer(name, value, 0, SEED_LIMIT - 1)


def real(name: str, value: object, low: object = None, high: object = None, *, low_open: bool = False,
         high_open: bool = False, finite: bool = True) -> int | float | Fraction:
    """``value`` as a real number (ints and ``Fraction`` objects kept exact, numpy floats as ``float``),
    finite unless ``finite=False``, within the given bounds."""
    allowed = f"a {'finite ' if finite else ''}number{_range(low, high, low_open, high_open)}"
    if not is_real(value):
        raise TypeError(f"{name} must be {allowed} (an int, float or Fraction), {_got(value)}")
    if isinstance(value, np.integer):
        value = int(value)
    elif not isinstance(value, (int, Fraction)):
        value = float(value)
        if math.isnan(value) or (finite and math.isinf(value)):
            raise ValueError(f"{name}={show(value)} must be {allowed} (it is non-finite)")
    if ((low is not None and (value <= low if low_open else value < low))
            or (high is not None and (value >= high if high_open else value > high))):
        raise ValueError(f"{name}={show(value)} must be {allowed}")
    return value


def probability(name: str, value: object) -> int | float | Fraction:
    """A probability in ``[0, 1]`` (exact when given as an int or ``Fraction``)."""
    return real(name, value, 0, 1)


def level(name: str, value: object) -> float:
    """A confidence level strictly between 0 and 1, as a float."""
    return float(real(name, value, 0, 1, low_open=True, high_open=True))


def text(name: str, value: object, *, empty: bool = False) -> str:
    """A string (nonempty unless ``empty=True``)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a {'' if empty else 'nonempty '}str, {_got(value)}")
    if not empty and not value.strip():
        raise ValueError(f"{name}={show(value)} must be a nonempty str")
    return value


def choice(name: str, value: object, allowed: Iterable[object]) -> Any:
    allowed = tuple(allowed)
    if not isinstance(value, Hashable) or value not in allowed:
        raise ValueError(f"{name}={show(value)} is not allowed; allowed: {', '.join(map(repr, allowed))}")
    return value


def function(name: str, value: object) -> Callable:
    if not callable(value):
        raise TypeError(f"{name} must be callable, {_got(value)}")
    return value


def instance(name: str, value: object, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise TypeError(f"{name} must be a {names}, {_got(value)}")
    return value


def rng(name: str, value: object) -> random.Random:
    if not isinstance(value, random.Random):
        raise TypeError(f"{name} must be a random.Random, {_got(value)}")
    return value


def mapping(name: str, value: object, *, nonempty: bool = True) -> Mapping:
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping {{key: value}}, {_got(value)}")
    if nonempty and not value:
        raise ValueError(f"{name} must be a nonempty mapping, got {show(value)}")
    return value


def items(name: str, values: object, *, nonempty: bool = False, limit: int | None = None,
          what: str = "values") -> list:
    """Materialize an iterable (a list, tuple, set, generator, ...) once, as a list; a string or
    bytes is not a sequence of values here. ``limit`` caps the number of items read."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be an iterable of {what}, {_got(values)}")
    out = list(values if limit is None else islice(values, limit + 1))
    if limit is not None and len(out) > limit:
        raise ValueError(f"{name} has more than {limit} {what}; at most {limit} are allowed")
    if nonempty and not out:
        raise ValueError(f"{name} must hold at least one of the {what}, got none")
    return out


def hashable(name: str, value: object) -> Hashable:
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"{name} must be hashable, {_got(value)}") from None
    return value


def token_ids(name: str, values: object, vocab_size: int | None = None, *, nonempty: bool = False) -> list[int]:
    """A sequence of token ids: ints (numpy ints too) in ``[0, vocab_size)``."""
    ids = items(name, values, nonempty=nonempty, what="token ids")
    for i, v in enumerate(ids):
        integer(f"{name}[{i}]", v, 0, None if vocab_size is None else vocab_size - 1)
    return [int(v) for v in ids]


__all__ = ["NotFoundError", "SEED_LIMIT", "boolean", "choice", "function", "hashable", "instance", "integer",
           "is_int", "is_real", "items", "level", "mapping", "optional_integer", "probability", "real", "rng", "seed",
           "show", "text", "token_ids"]
