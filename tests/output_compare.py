"""Compare a chapter's printed output with its stored output the way a reader's CPU allows.

Text must match exactly, except for decimal numbers, which may differ by a few units in the
last digit printed (float32 kernels differ in their last bits between CPU kinds, and rounding
to the printed precision can move the last digit). Integers (counts, ids, shapes, seeds) and
every other character stay exact. A code cell whose numbers come out of training may declare
a wider tolerance in its metadata, with the reason, visible in the chapter's source::

    ```{code-cell} ipython3
    ---
    output_tolerance: {rtol: 0.01, reason: "losses after 300 float32 training steps"}
    ---
    ```

The rules are in ``book/checks.md``; ``tests/nbval_tolerance.py`` plugs them into nbval.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

#: A decimal number standing on its own: not part of a word, a hash, a version or a name.
#: The sign belongs to the number only when no word character or closing bracket precedes it.
NUMBER = re.compile(
    r"(?:(?<![\w.)\]])-)?(?<![\w.])(?:\d+\.\d+|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w])(?!\.\d)"
)
#: The units of the last printed digit a decimal number may move by default.
DEFAULT_UNITS = 3


@dataclass(frozen=True)
class Tolerance:
    """How far a printed decimal may move: ``units`` of its last digit, or ``rtol``/``atol``."""

    units: int = DEFAULT_UNITS
    rtol: float = 0.0
    atol: float = 0.0
    reason: str = ""

    @classmethod
    def of_cell(cls, metadata: dict) -> "Tolerance":
        """The tolerance a cell declares under ``output_tolerance``, else the default."""
        declared = metadata.get("output_tolerance")
        if declared is None:
            return cls()
        if not isinstance(declared, dict):
            raise ValueError(f"output_tolerance must be a mapping, got {declared!r}")
        unknown = set(declared) - {"units", "rtol", "atol", "reason"}
        if unknown:
            raise ValueError(f"output_tolerance: unknown keys {sorted(unknown)}; "
                             "allowed: units, rtol, atol, reason")
        reason = declared.get("reason", "")
        if not isinstance(reason, str) or len(reason.split()) < 3:
            raise ValueError(f"output_tolerance needs a reason of a few words, got {reason!r}")
        tol = cls(units=int(declared.get("units", DEFAULT_UNITS)),
                  rtol=float(declared.get("rtol", 0.0)), atol=float(declared.get("atol", 0.0)),
                  reason=reason)
        for name in ("units", "rtol", "atol"):
            value = getattr(tol, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"output_tolerance: {name} must be finite and >= 0, got {value!r}")
        return tol


def last_digit(token: str) -> float | None:
    """The value of one unit in the last printed digit of ``token``; None for an integer."""
    mantissa, _, exponent = token.lower().partition("e")
    if "." not in mantissa and not exponent:
        return None
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def differences(reference: str, test: str, tol: Tolerance) -> str | None:
    """Why ``test`` does not pass for ``reference`` under ``tol``, or None when it does."""
    ref_tokens, test_tokens = NUMBER.split(reference), NUMBER.split(test)
    if ref_tokens != test_tokens:
        return _first_text_difference(reference, test)
    pairs = zip(NUMBER.finditer(reference), NUMBER.finditer(test))
    for index, (a, b) in enumerate(pairs):
        why = _number_difference(a.group(), b.group(), tol)
        if why:
            line = reference.count("\n", 0, a.start()) + 1
            return f"number {index + 1} (line {line}): stored {a.group()}, now {b.group()}: {why}"
    return None


def moved_numbers(reference: str, test: str) -> int:
    """How many printed numbers differ as text between two outputs that pass."""
    return sum(a != b for a, b in zip(NUMBER.findall(reference), NUMBER.findall(test)))


def _number_difference(a: str, b: str, tol: Tolerance) -> str | None:
    if a == b:
        return None
    units_a, units_b = last_digit(a), last_digit(b)
    if units_a is None and units_b is None:
        return "integers are compared exactly"
    x, y = float(a), float(b)
    unit = max(u for u in (units_a, units_b) if u is not None)
    allowed = max(tol.units * unit, tol.rtol * max(abs(x), abs(y)), tol.atol)
    if abs(x - y) <= allowed * (1 + 1e-9):
        return None
    rule = f"{tol.units} units of {unit:g}"
    if tol.rtol or tol.atol:
        rule += f", rtol {tol.rtol:g}, atol {tol.atol:g} ({tol.reason})"
    return f"|difference| {abs(x - y):.3g} exceeds {allowed:.3g} ({rule})"


def _first_text_difference(reference: str, test: str) -> str:
    masked_ref, masked_test = NUMBER.sub("#", reference), NUMBER.sub("#", test)
    for n, (r, t) in enumerate(zip(masked_ref.splitlines(), masked_test.splitlines()), 1):
        if r != t:
            return f"text differs on line {n} (numbers shown as #):\n  stored: {r}\n  now:    {t}"
    return (f"text differs in length: stored {len(reference.splitlines())} lines, "
            f"now {len(test.splitlines())}")
