"""Argument checks shared by the comparison modules (a thin layer over :mod:`ftipbook._validate`).

Each check returns the value it accepts and refuses anything else before work starts, with an
error that names the argument and the value: ``TypeError`` for a value of the wrong kind,
``ValueError`` for one outside the allowed range.
"""
from __future__ import annotations

from ftipbook import _validate


def real(name: str, value: object, *, finite: bool = True) -> float:
    """``value`` as a float: a real number (not a bool; numpy scalars and ``Fraction`` s are), never
    NaN, and finite unless ``finite=False``."""
    return _validate.real(name, value, finite=finite)
