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

import functools
import inspect
import math
import numbers
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np

#: The largest seed accepted: seeds feed ``torch.Generator.manual_seed`` and ``numpy`` generators,
#: which take 64-bit values; ``2**63 - 1`` fits both.
MAX_SEED = 2**63 - 1


class ArgumentKindError(TypeError, ValueError):
    """An argument of the wrong kind (a bool for a count, a string for a number).

    Both a ``TypeError`` and a ``ValueError``: the library's older checks raised either for these
    values, and callers that catch one of them keep working.
    """


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def is_bool(value: object) -> bool:
    """``True`` for Python and numpy booleans."""
    return isinstance(value, (bool, np.bool_))


def boolean(name: str, value: object) -> bool:
    """``value`` if it is ``True`` or ``False`` (or a numpy bool), else ``TypeError``."""
    if not is_bool(value):
        raise ArgumentKindError(f"{name}={_show(value)} must be a bool (True or False), got {type(value).__name__}")
    return bool(value)


def integer(name: str, value: object, *, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an ``int`` within ``[low, high]`` (either bound optional).

    Python and numpy integers qualify; bools, floats (even ``2.0``), strings and ``None`` do not.
    """
    if is_bool(value) or not isinstance(value, numbers.Integral):
        raise ArgumentKindError(f"{name}={_show(value)} must be an int{_range(low, high)}, "
                                f"got {type(value).__name__}")
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
        raise ArgumentKindError(f"{name}={_show(value)} must be a real number"
                                f"{_bounds(low, high, low_open, high_open)}, got {type(value).__name__}")
    try:
        x = float(value)
    except OverflowError:
        raise ValueError(f"{name}={_show(value)} is too large for a float; it must be a "
                         f"{'finite ' if finite else ''}real number{_bounds(low, high, low_open, high_open)}") from None
    if math.isnan(x):
        # the library's established wording for NaN (even where +-inf is admitted: NaN is no real number)
        raise ValueError(f"{name}={_show(value)} must be a finite real number{_bounds(low, high, low_open, high_open)}")
    if finite and math.isinf(x):
        raise ValueError(f"{name}={_show(value)} must be a finite real number{_bounds(low, high, low_open, high_open)}")
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
        raise ArgumentKindError(f"{name}={_show(value)} must be a string, got {type(value).__name__}")
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
        raise ArgumentKindError(f"{name}={_show(value)} must be a sequence of {what}, got {type(value).__name__}")
    return tuple(value)


# ----------------------------------------------------------------------------------------------
# Checks read from annotations: every public callable of a module, guarded in one line
# ----------------------------------------------------------------------------------------------
def _optional(check: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
    return lambda name, value: None if value is None else check(name, value)


def _not_nan(name: str, value: object) -> float | int:
    """A real number that is not NaN; Python ints and floats are kept as they are (an int stays
    exact and prints as one), other reals (numpy scalars, ``Fraction``) become ``float``."""
    x = real(name, value, finite=False)
    return value if type(value) in (int, float) else x


def _plain_str(name: str, value: object) -> str:
    return text(name, value, empty=True)


#: The check each simple annotation implies. ``float`` admits ``+-inf`` here (a budget or a cost
#: may be infinite); a function that needs a finite value says so itself.
_SCALAR: dict[str, Callable[[str, Any], Any]] = {
    "int": integer, "float": _not_nan, "int | float": _not_nan, "float | int": _not_nan, "Real": _not_nan,
    "bool": boolean, "str": _plain_str,
}
_CONTAINER = re.compile(r"^(Sequence|Iterable|list|tuple|Collection|Mapping|dict)\[(.*)\]$")
_MAPPINGS = ("Mapping", "dict")


def _element_check(inner: str) -> Callable[[str, Any], Any] | None:
    """The check every element of ``X[inner]`` gets: ``tuple[float, ...]``, ``Sequence[int]`` and
    ``tuple[float, float]`` check their elements; anything else is left to the function."""
    parts = [p.strip() for p in inner.split(",")]
    if parts[-1] == "...":
        parts = parts[:-1]
    return _SCALAR.get(parts[0]) if parts and len(set(parts)) == 1 else None


def _plan(annotation: object) -> Callable[[str, Any], Any] | None:
    """The check an annotation implies, or ``None`` for one this guard leaves to the function."""
    if not isinstance(annotation, str):
        annotation = getattr(annotation, "__name__", "")
    ann = annotation[len("Optional["):-1] + " | None" if annotation.startswith("Optional[") else annotation
    parts = [p.strip() for p in ann.split("|")]
    optional = "None" in parts
    base = " | ".join(p for p in parts if p != "None")
    check = _SCALAR.get(base)
    if check is None:
        match = _CONTAINER.match(base)
        if match is None:
            return _numeric_union(parts)
        kind = match.group(1)
        check = _mapping if kind in _MAPPINGS else _container(kind, _element_check(match.group(2)))
    return _optional(check) if optional else check


def _numeric_union(parts: list[str]) -> Callable[[str, Any], Any] | None:
    """For a union such as ``int | Unknown`` or ``float | str``: numpy scalars become Python numbers;
    every other value (a ``Fraction`` kept exact included) is left to the function."""
    allows_int, allows_float = "int" in parts, "float" in parts
    if not (allows_int or allows_float):
        return None

    def normalize(name: str, value: object) -> object:
        if is_bool(value) or not isinstance(value, (np.integer, np.floating)):
            return value
        if allows_int and isinstance(value, numbers.Integral):
            return int(value)
        return real(name, value, finite=False) if allows_float else value
    return normalize


def _mapping(name: str, value: object) -> object:
    if not isinstance(value, Mapping):
        raise ArgumentKindError(f"{name}={_show(value)} must be a mapping (a dict), got {type(value).__name__}")
    return value


def _container(kind: str, element: Callable[[str, Any], Any] | None) -> Callable[[str, Any], Any]:
    def check(name: str, value: object) -> object:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable) or isinstance(value, Mapping):
            raise ArgumentKindError(f"{name}={_show(value)} must be a sequence (a list or tuple), got "
                                    f"{type(value).__name__}")
        if isinstance(value, Iterator):  # read a generator once, here, before anything checks it
            value = tuple(value) if kind != "list" else list(value)
        if element is None or not isinstance(value, (list, tuple)):
            return value
        items = [element(f"{name}[{i}]", v) for i, v in enumerate(value)]
        if all(a is b for a, b in zip(items, value)):
            return value
        return type(value)(items) if type(value) in (list, tuple) else tuple(items)
    return check


def guarded(fn: Callable[..., Any], owner: str | None = None) -> Callable[..., Any]:
    """``fn`` with its annotated ``int``, ``float``, ``bool`` and ``str`` arguments (and sequences
    of them, and their ``| None`` forms) checked and normalized before it runs: numpy scalars and
    ``Fraction`` s become ``int`` / ``float``, iterators are read once into a tuple. Messages name
    an argument ``owner.name`` when ``owner`` is given (a class, for its ``__init__`` fields)."""
    if getattr(fn, "__guarded__", False):
        return fn
    signature = inspect.signature(fn)
    plans = {name: check for name, p in signature.parameters.items()
             if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and (check := _plan(p.annotation)) is not None}
    if not plans:
        return fn

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return fn(*args, **kwargs)  # let Python name the missing or unexpected argument
        arguments = bound.arguments
        for name, check in plans.items():
            if name in arguments:
                arguments[name] = check(f"{owner}.{name}" if owner else name, arguments[name])
        return fn(*bound.args, **bound.kwargs)

    wrapper.__guarded__ = True  # type: ignore[attr-defined]
    return wrapper


def public_callables(module: Any) -> Iterator[tuple[str, Any, str, Any]]:
    """``(qualified name, holder, attribute, callable)`` for every public function of ``module``,
    every public class defined there (its ``__init__``) and their public methods, class methods
    and static methods: the surface :func:`guard_module` guards and the tests enumerate."""
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    for n in names:
        obj = getattr(module, n)
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            yield n, module, n, obj
        elif inspect.isclass(obj):
            if "__init__" in vars(obj):
                yield f"{n}.__init__", obj, "__init__", vars(obj)["__init__"]
            for k, v in list(vars(obj).items()):
                if not k.startswith("_") and (inspect.isfunction(v) or isinstance(v, (classmethod, staticmethod))):
                    yield f"{n}.{k}", obj, k, v


def guard_module(name: str) -> None:
    """Guard every public callable of module ``name`` with :func:`guarded` (call it at the end of
    the module: ``guard_module(__name__)``)."""
    module = sys.modules[name]
    for _, holder, attr, obj in list(public_callables(module)):
        if isinstance(obj, (classmethod, staticmethod)):
            setattr(holder, attr, type(obj)(guarded(obj.__func__)))
        else:
            setattr(holder, attr, guarded(obj, holder.__name__ if attr == "__init__" else None))


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


__all__ = ["MAX_SEED", "ArgumentKindError", "boolean", "choice", "guard_module", "guarded", "integer", "is_bool",
           "level", "probability", "public_callables", "real", "seed", "sequence", "text"]
