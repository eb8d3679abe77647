"""Argument checks shared by the comparison modules.

Each check returns the value it accepts and refuses anything else before work starts, with an
error that names the argument and the value: ``TypeError`` for a value of the wrong kind,
``ValueError`` for one outside the allowed range.
"""
from __future__ import annotations

import math
from numbers import Real


def real(name: str, value: object, *, finite: bool = True) -> float:
    """``value`` as a float: a real number (not a bool), never NaN, and finite unless ``finite=False``."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name}={value!r} must be a {'finite ' if finite else ''}real number")
    if finite and not math.isfinite(value):
        raise ValueError(f"{name}={value!r} must be a finite real number")
    return value
