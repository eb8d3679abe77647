"""The whole public surface of the newer modules, fed bad values of each kind (issue 25, item 5).

Shared by ``tools/probe_inputs.py`` (group ``surface``) and ``tests/test_surface.py``.

**How every public callable is found.** :func:`public_callables` imports each module of
:data:`ROOTS`, walks packages with :func:`pkgutil.walk_packages` (skipping private ``_x``
modules), and takes every name that does not start with ``_``, is callable and is *defined* in that
module (``obj.__module__`` is the module: re-exports are found once, where they are defined); a
module's ``__all__``, when it has one, is honoured. For each public class it adds the public
functions, class methods and static methods that the class itself defines (``vars(cls)``), plus
``__call__``. Nothing is listed by hand, so a new function is enumerated the moment it is
written; the test then fails until it has a valid call (:data:`RECIPES` or automatic derivation)
or an explicit, reasoned exemption (:data:`EXEMPT`, or one of the rules of :func:`exempt_reason`).

**The valid call.** Every parameter gets a valid value, in this order: the callable's own entry in
:data:`RECIPES`; the parameter's default; an entry of :data:`BY_NAME` (``seed``, ``level``, ...); an
entry of :data:`BY_ANNOTATION` (``FiniteLaw``, ``Interval``, ``DecoderLM``, ...). For a method, the
instance is built by its class's valid call (or :data:`INSTANCES`). The recipes for domain objects
(histories, tasks, cost grids, studies, ...) live in ``tests/surface_recipes.py`` and are merged in
below. The first valid call may take :data:`WARM_LIMIT` (it may load a committed build), the second
must return within :data:`TIME_LIMIT`; a callable whose valid call fails is reported as *no recipe*.

**The bad values.** :func:`kinds_for` derives the kinds from the valid value's type (and the
parameter's name and annotation), one change at a time:

======================  =====================================================  ===========
valid value             values tried                                           expectation
======================  =====================================================  ===========
``bool``                ``"no"``                                               refuse
``int``                 ``v + 0.7``, ``True``; ``numpy.int64(v)``             refuse; accept
``int``                 ``10**400``, ``10**9`` (in a child process)            bounded
seed (by name)          ``nan``, ``1.5``                                       refuse
``float``/``Fraction``  ``nan``, ``inf``, ``"0.5"``; ``numpy.float32(v)``,
                        ``Fraction(v)``; ``10**400`` (child process)           refuse; accept; bounded
probability (by name)   ``-0.5``, ``1.5``                                      refuse
``low``/``high`` pairs  the two swapped (a reversed interval)                  refuse
list / tuple            a generator of the same items                          same
list / tuple / dict     numbers replaced by numpy scalars and ``Fraction``s     accept
list / tuple / dict     nested 100 000 deep (child process)                    refuse
``str`` (text only)     ``3``, ``b"x"``, ``None`` (unless optional)            refuse
a domain object         a plain ``object()`` (not under ``Any``/``object``)    refuse
token ids (by name)     the first id replaced by ``1.7``, ``True``, ``-1``     refuse
======================  =====================================================  ===========

**Outcomes.** ``clear``: the case ended as it should (a ``ValueError``/``TypeError`` whose message
names the parameter for *refuse*; the same result as the plain value for *accept* and *same*; a
clear error or any result within the time limit for *bounded*). ``unnamed``: the right exception
type, but the message does not name the parameter. ``internal``: any other exception.
``silent``: a bad value returned a result (or an accepted value returned a different result).
``refused-valid``: a numpy scalar or ``Fraction`` meant as a number was refused. ``hang``: past
:data:`TIME_LIMIT` seconds or out of memory.
"""
from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import json
import math
import os
import pkgutil
import resource
import select
import signal
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np
import torch

#: The modules whose public surface is probed (packages are walked).
ROOTS = ("ftipbook.prob", "ftipbook.claims", "ftipbook.tasks", "ftipbook.env", "ftipbook.eval", "ftipbook.compare",
         "ftipbook.study", "ftipbook.depth_study", "ftipbook.jepa_study", "ftipbook.model.depth",
         "ftipbook.model.jepa", "ftipbook.model.candidates", "ftipbook.model.hf_hybrid")
#: CPU seconds after which a case counts as a hang.
TIME_LIMIT = 2.0
#: CPU seconds allowed to the first valid call of a callable (it may load a tokenizer or a committed build once).
WARM_LIMIT = 10.0
#: Wall seconds after which a child process is killed (it may be sleeping or starved on a busy machine).
WALL_LIMIT = 30.0
#: Outcome columns, in table order.
OUTCOMES = ("clear", "unnamed", "internal", "silent", "refused-valid", "hang")
NAN, INF = float("nan"), float("inf")
#: Parameter names that hold a probability (a value in [0, 1]).
PROB_NAMES = frozenset({"p", "prob", "probability", "level", "alpha", "confidence", "flip", "delta", "coverage",
                        "quantile", "p_m", "p_k", "rate"})
#: ``(low, high)`` parameter pairs that form an interval.
INTERVAL_PAIRS = (("low", "high"), ("lo", "hi"), ("lower", "upper"), ("start", "end"), ("t_min", "t_max"))
SEED_NAMES = frozenset({"seed"})
#: Parameter names (and annotations) that hold token ids: ``[1.7]``, ``[True]`` and ``[-1]`` inside are refused.
TOKEN_NAMES = frozenset({"prompt", "prompts", "continuation", "tokens", "ids", "prefix", "prefixes", "token_ids",
                         "answers"})
TOKEN_ANNOTATIONS = frozenset({"Sequence[int]", "tuple[int, ...]", "Iterable[int]", "list[int]", "Prefix",
                               "Sequence[Sequence[int]]", "tuple[tuple[int, ...], ...]"})
#: Annotations under which any object is a valid value (no ``object()`` case).
OPEN_ANNOTATIONS = frozenset({"Any", "object", "Hashable", "typing.Any", ""})
DEEP = 100_000


# ------------------------------------------------------------------------------------------ enumeration
@dataclass(frozen=True)
class Target:
    """One public callable: ``qualname`` is ``module.name`` or ``module.Class.method``."""

    qualname: str
    module: str
    obj: Any
    owner: type | None = None  # the class, for a method
    method: str | None = None  # the attribute name, for a method

    @property
    def group(self) -> str:
        """The table row: the root module (``compare``, ``model.depth``, ...), with ``:records`` appended for
        the constructor of a plain record (a dataclass with no validation of its own)."""
        return _group_of(self.qualname) + (":records" if is_plain_record(self.obj) else "")


def is_plain_record(obj: Any) -> bool:
    """A dataclass whose generated ``__init__`` is its whole constructor (no ``__post_init__``)."""
    return inspect.isclass(obj) and dataclasses.is_dataclass(obj) and not hasattr(obj, "__post_init__") \
        and "__init__" in vars(obj) and getattr(obj.__init__, "__qualname__", "").endswith("__init__") \
        and obj.__init__.__code__.co_filename == "<string>"


def modules() -> list[Any]:
    """Every module under :data:`ROOTS`, private ones (``_x``) left out."""
    out = []
    for root in ROOTS:
        module = importlib.import_module(root)
        out.append(module)
        for info in pkgutil.walk_packages(getattr(module, "__path__", []), root + "."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                out.append(importlib.import_module(info.name))
    return out


def _public(module: Any) -> Iterator[tuple[str, Any]]:
    names = getattr(module, "__all__", None)
    for name, obj in vars(module).items():
        if name.startswith("_") or (names is not None and name not in names) or not callable(obj):
            continue
        if getattr(obj, "__module__", None) == module.__name__:
            yield name, obj


@cache
def public_callables() -> tuple[Target, ...]:
    """Every public callable of :data:`ROOTS`, found by introspection (see the module docstring)."""
    out = []
    for module in modules():
        for name, obj in _public(module):
            qual = f"{module.__name__}.{name}"
            out.append(Target(qual, module.__name__, obj))
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if (attr.startswith("_") and attr != "__call__") or not (
                            inspect.isfunction(member) or isinstance(member, (classmethod, staticmethod))):
                        continue
                    out.append(Target(f"{qual}.{attr}", module.__name__, member, obj, attr))
    return tuple(out)


def parameters(target: Target) -> list[inspect.Parameter]:
    """The parameters a caller passes (``self``/``cls`` left out)."""
    func = target.obj.__func__ if isinstance(target.obj, (classmethod, staticmethod)) else target.obj
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    if target.owner is not None and not isinstance(target.obj, staticmethod):
        params = params[1:]
    return params


def _annotations(target: Target) -> dict[str, str]:
    func = target.obj.__func__ if isinstance(target.obj, (classmethod, staticmethod)) else target.obj
    if inspect.isclass(func):
        func = func.__init__
    raw = getattr(func, "__annotations__", {}) or {}
    return {k: v if isinstance(v, str) else getattr(v, "__name__", repr(v)) for k, v in raw.items()}


def exempt_reason(target: Target) -> str | None:
    """Why ``target`` has nothing to probe, or ``None``: rule-based exemptions, then :data:`EXEMPT`."""
    obj = target.obj
    if inspect.isclass(obj):
        if issubclass(obj, BaseException):
            return "an exception class: raised by the library, its message is the argument"
        if issubclass(obj, enum.Enum):
            return "an enumeration: its members are the values"
        if getattr(obj, "_is_protocol", False):
            return "a typing.Protocol: an interface with no behaviour of its own"
    if not [p for p in parameters(target) if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)] and not any(
            p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters(target)):
        return "takes no arguments"
    return EXEMPT.get(target.qualname)


# ---------------------------------------------------------------------------------------- valid values
class NoValue(Exception):
    """No valid value is known for a parameter."""


@cache
def tiny_lm():
    from ftipbook.model import ModelConfig, build_model
    return build_model(ModelConfig(vocab_size=23, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=16), seed=0
                       ).eval()


def table_lm():
    from ftipbook.prob import TableLM
    half = Fraction(1, 2)
    return TableLM(("a", "b", "EOS"), {("a",): {"a": half, "b": Fraction(1, 4), "EOS": Fraction(1, 4)}},
                   default={"a": Fraction(1, 4), "b": Fraction(1, 4), "EOS": half})


def finite_law():
    from ftipbook.prob import FiniteLaw
    return FiniteLaw({"a": Fraction(1, 4), "b": Fraction(3, 4)})


def published_interval():
    from ftipbook.compare.published import Interval
    return Interval(0.25, 0.75)


def stats_interval():
    from ftipbook.eval.stats import Interval
    return Interval(0.25, 0.75, 0.9, "percentile")


def tiny_config():
    from ftipbook.model import ModelConfig
    return ModelConfig(vocab_size=23, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=16)


def measurement(successes: int = 30):
    from ftipbook.claims import Measurement
    return Measurement(successes, 100, "B", "exact", "greedy")


def hybrid_hf_config():
    from ftipbook.model import ModelConfig
    from ftipbook.model.hf_hybrid import hybrid_config_to_hf
    cfg = ModelConfig(vocab_size=64, d_model=32, n_layers=2, n_heads=2, d_ff=64, max_seq_len=32, pos="none",
                      norm="rmsnorm", ffn="swiglu", layer_pattern="KM", kv_lora_rank=16, rope_head_dim=8,
                      mla_rotate_decoupled=False)
    return hybrid_config_to_hf(cfg, "kimi_linear")


def arithmetic():
    from ftipbook.tasks import arithmetic_task
    return arithmetic_task("add", ["1+2=3", "2+2=4"])


#: Valid values by parameter name (a zero-argument factory, called afresh for each call).
BY_NAME: dict[str, Callable[[], Any]] = {
    "seed": lambda: 0, "level": lambda: 0.875, "p": lambda: 0.25, "q": lambda: 0.5, "alpha": lambda: 0.125,
    "delta": lambda: 0.125, "n": lambda: 3, "k": lambda: 2, "trials": lambda: 8, "successes": lambda: 3,
    "n_boot": lambda: 200, "law": finite_law, "lm": table_lm, "model": tiny_lm, "values": lambda: [0.25, 0.5, 1.0],
    "scores": lambda: [0.25, 0.5, 1.0], "prompt": lambda: [0], "continuation": lambda: [1], "eos": lambda: 2,
    "max_len": lambda: 2, "x": lambda: 0.5, "low": lambda: 0.25, "high": lambda: 0.75, "lo": lambda: 0.25,
    "hi": lambda: 0.75, "name": lambda: "x", "a": lambda: [0.25, 0.5, 1.0], "b": lambda: [0.5, 0.25, 0.75],
    "tokens": lambda: torch.tensor([[1, 2, 3]]), "rng": lambda: __import__("random").Random(0),
    "passes": lambda: 2, "budget": lambda: 4, "t": lambda: 1,
}
#: Valid values by annotation (``X | None`` looks up ``X``).
BY_ANNOTATION: dict[str, Callable[[], Any]] = {
    "int": lambda: 2, "float": lambda: 0.5, "bool": lambda: True, "str": lambda: "x",
    "Fraction": lambda: Fraction(1, 2),
    "Fraction | float": lambda: Fraction(1, 2), "float | Fraction": lambda: 0.5, "Prob": lambda: Fraction(1, 4),
    "FiniteLaw": finite_law, "NextTokenLaw": table_lm, "TableLM": table_lm, "DecoderLM": tiny_lm,
    "torch.nn.Module": tiny_lm, "nn.Module": tiny_lm, "random.Random": lambda: __import__("random").Random(0),
    "Sequence[int]": lambda: [0, 1], "Sequence[float]": lambda: [0.25, 0.5, 1.0], "tuple[int, ...]": lambda: (0, 1),
    "tuple[float, ...]": lambda: (0.25, 0.5, 1.0), "Sequence[str]": lambda: ["a", "b"],
    "tuple[str, ...]": lambda: ("a", "b"), "Iterable[Hashable]": lambda: ["a"], "Hashable": lambda: "a",
    "Sequence[Hashable]": lambda: ["a", "b"], "Mapping[str, float]": lambda: {"a": 0.5},
    "Mapping[str, int]": lambda: {"a": 1}, "Interval": published_interval, "torch.Tensor": lambda: torch.ones(2, 3),
    "torch.dtype": lambda: torch.float32, "Amount": lambda: Fraction(1, 8), "Measurement": measurement,
    "ModelConfig": tiny_config,
    "ConfidenceRule": lambda: __import__("ftipbook.claims", fromlist=["x"]).ConfidenceRule(),
    "Mapping[Hashable, Prob]": lambda: {"a": Fraction(1, 4), "b": Fraction(3, 4)}, "Task": arithmetic,
    "torch.Generator": lambda: torch.Generator().manual_seed(0),
    "Utility": lambda: __import__("ftipbook.tasks", fromlist=["x"]).EXACT_MATCH, "dict": lambda: {"a": 0.5},
    "np.ndarray": lambda: np.array([0.25, 0.5, 1.0]),
    "Sequence[Sequence[float]]": lambda: [[0.25, 0.5], [0.5, 1.0]],
}
#: Hand-written valid arguments, keyed by qualified name (values are factories or plain values).
RECIPES: dict[str, dict[str, Any]] = {
    "ftipbook.prob.FiniteLaw": {"probs": lambda: {"a": Fraction(1, 4), "b": Fraction(3, 4)}},
    "ftipbook.prob.FiniteLaw.uniform": {"outcomes": lambda: ["a", "b", "c"]},
    "ftipbook.prob.FiniteLaw.from_weights": {"weights": lambda: {"a": 1, "b": 3}},
    "ftipbook.prob.FiniteLaw.samples": {"n": 4},
    "ftipbook.prob.prefix": {"x": lambda: ["a", "b", "c"], "t": 2},
    "ftipbook.claims.Quantity": {"amount": Fraction(1, 2), "unit": "token"},
    "ftipbook.claims.Measurement": {"successes": 30, "trials": 100, "event": "B", "evaluator": "exact",
                                    "protocol": "greedy"},
    "ftipbook.claims.elicitation_witness": {"before": lambda: measurement(30), "after": lambda: measurement(80),
                                            "eps": Fraction(1, 10)},
    "ftipbook.claims.acquisition_witness": {"before": lambda: measurement(3), "after": lambda: measurement(80),
                                            "eps0": Fraction(1, 10), "eps1": Fraction(1, 2)},
    "ftipbook.claims.ConfidenceRule.certifying_counts": {"trials": 20, "eps0": Fraction(1, 10),
                                                         "eps1": Fraction(1, 2)},
    "ftipbook.claims.ConfidenceRule.certification_probability": {
        "trials": 20, "u0": Fraction(1, 20), "u1": Fraction(3, 4), "eps0": Fraction(1, 10), "eps1": Fraction(1, 2)},
    "ftipbook.claims.ConfidenceRule.is_exact": {"successes": 3, "trials": 8},
    "ftipbook.claims.binomial_tail": {"successes": 3, "trials": 8, "p": Fraction(1, 4)},
    "ftipbook.compare.cost.CostVector": {"values": lambda: {"t": 0.5}, "units": lambda: {"t": "s"}},
    "ftipbook.compare.frontier.frontier_value": {
        "interventions": lambda: [__import__("ftipbook.compare.frontier", fromlist=["x"]).Intervention("a", 1.0, 0.5),
                                  __import__("ftipbook.compare.frontier", fromlist=["x"]).Intervention("b", 2.0, 0.75)],
        "budget": 1.5},
    "ftipbook.model.hf_hybrid.hybrid_config_from_hf": {"hf": hybrid_hf_config},
    "ftipbook.model.hf_hybrid.hybrid_config_to_hf": {"cfg": lambda: __import__("ftipbook.model.hf_hybrid", fromlist=[
        "x"]).hybrid_config_from_hf(hybrid_hf_config()), "model_type": "kimi_linear"},
    "ftipbook.model.jepa.latent_loss": {"predicted": lambda: torch.linspace(-1, 1, 12).reshape(1, 3, 4),
                                        "target": lambda: torch.linspace(1, -0.5, 12).reshape(1, 3, 4),
                                        "mask": lambda: torch.tensor([[True, False, True]])},
    "ftipbook.model.candidates.sample_candidates": {"prompts": lambda: [[1, 2]], "k": 2, "max_new_tokens": 2,
                                                    "seed": 0},
    "ftipbook.tasks.Evaluator.score": {"instance_id": "0", "o": "3", "omega": 0},
    "ftipbook.eval.recall_probe.probe_keys": {"n_pairs": 2, "d_k": 4,
                                              "generator": lambda: torch.Generator().manual_seed(0)},
    "ftipbook.eval.metrics.discovery_probability": {"p": 0.25, "n": 3},
}
#: For a method: a factory of the instance, when the class's own valid call does not give a useful one.
INSTANCES: dict[str, Callable[[], Any]] = {}
#: Callables that are not probed here, with the reason.
EXEMPT: dict[str, str] = {
    "ftipbook.study.build": "trains the whole architecture study (minutes); scripts/build_study.py --check runs it",
    "ftipbook.depth_study.build": "trains the depth-reuse experiments (minutes); scripts/build_depth.py --check "
                                  "runs it",
    "ftipbook.jepa_study.build": "trains the JEPA-like model (a minute); scripts/build_jepa.py --check runs it",
}


def _merge_recipes() -> None:
    """Add the domain-object recipes of ``tests/surface_recipes.py``."""
    from tests import surface_recipes
    RECIPES.update(surface_recipes.RECIPES)
    INSTANCES.update(surface_recipes.INSTANCES)
    BY_ANNOTATION.update(surface_recipes.BY_ANNOTATION)
    EXEMPT.update(surface_recipes.EXEMPT)


_merge_recipes()


def _value(spec: Any) -> Any:
    return spec() if callable(spec) and not inspect.isclass(spec) and not isinstance(spec, torch.nn.Module) else spec


def _base(annotation: str) -> str:
    return annotation.replace(" | None", "").replace("None | ", "").strip("'\"")


def valid_kwargs(target: Target) -> dict[str, Any]:
    """A fresh valid argument for every parameter (``*args`` under ``"*"``, ``**kw`` under ``"**"``)."""
    hand = RECIPES.get(target.qualname, {})
    notes = _annotations(target)
    out = {}
    for p in parameters(target):
        if p.name in hand:
            out[p.name] = _value(hand[p.name])
        elif p.kind is p.VAR_POSITIONAL:
            out["*"] = _value(hand.get("*", ()))
        elif p.kind is p.VAR_KEYWORD:
            out["**"] = _value(hand.get("**", {}))
        elif p.default is not p.empty:
            out[p.name] = p.default
        elif p.name in BY_NAME:
            out[p.name] = BY_NAME[p.name]()
        elif _base(notes.get(p.name, "")) in BY_ANNOTATION:
            out[p.name] = BY_ANNOTATION[_base(notes[p.name])]()
        else:
            raise NoValue(f"no valid value for {p.name!r} ({notes.get(p.name, 'no annotation')})")
    return out


def instance(target: Target) -> Any:
    """The ``self`` of a method: :data:`INSTANCES`, else the class's own valid call."""
    owner = target.owner
    qual = f"{target.module}.{owner.__qualname__}"
    if qual in INSTANCES:
        return INSTANCES[qual]()
    return call(Target(qual, target.module, owner), valid_kwargs(Target(qual, target.module, owner)))


def call(target: Target, kwargs: dict[str, Any]) -> Any:
    """Call ``target`` with ``kwargs`` (positional-only parameters and ``*args`` passed by position)."""
    kwargs = dict(kwargs)
    star, starstar = kwargs.pop("*", ()), kwargs.pop("**", {})
    positional = []
    for p in parameters(target):
        if p.kind is p.POSITIONAL_ONLY or (star and p.kind is p.POSITIONAL_OR_KEYWORD):
            positional.append(kwargs.pop(p.name))
    if target.owner is None:
        func = target.obj
    elif isinstance(target.obj, staticmethod):
        func = getattr(target.owner, target.method)
    elif isinstance(target.obj, classmethod):
        func = getattr(target.owner, target.method)
    else:
        func = getattr(instance(target), target.method)
    return func(*positional, *star, **kwargs, **starstar)


# ------------------------------------------------------------------------------------------- bad values
@dataclass(frozen=True)
class Case:
    """One change to the valid call: ``kwargs`` replaces arguments; ``expect`` is ``refuse``, ``accept``,
    ``same`` or ``bounded``; ``isolated`` runs it in a child process."""

    target: Target
    param: str
    kind: str
    kwargs: Mapping[str, Any] = field(repr=False)
    expect: str
    isolated: bool = False

    @property
    def label(self) -> str:
        return f"{self.target.qualname}({self.param}: {self.kind})"


def _numbers(value: Any, convert: Callable[[Any], Any]) -> Any:
    """``value`` with every int/float (not bool) inside lists, tuples and dict values converted."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return convert(value)
    if isinstance(value, list):
        return [_numbers(v, convert) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_numbers(v, convert) for v in value)
    if isinstance(value, dict):
        return {k: _numbers(v, convert) for k, v in value.items()}
    return value


def _has_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_number(v) for v in value)
    if isinstance(value, dict):
        return any(_has_number(v) for v in value.values())
    return False


def _has_leaf(value: Any) -> bool:
    """Whether a container holds a number or a string (so that nesting it deeper changes its meaning)."""
    if isinstance(value, (int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_leaf(v) for v in value)
    if isinstance(value, dict):
        return any(_has_leaf(v) for v in value.values())
    return False


def _np_scalar(x: int | float) -> Any:
    if isinstance(x, int):
        return np.int64(x) if abs(x) < 2**62 else x
    return np.float32(x) if float(np.float32(x)) == x else np.float64(x)


def _nested(value: Any) -> Any:
    inner: Any = value
    container = dict if isinstance(value, dict) else list
    for _ in range(DEEP):
        inner = {"x": inner} if container is dict else [inner]
    return inner


def kinds_for(name: str, value: Any, annotation: str, all_valid: Mapping[str, Any]) -> list[tuple[str, Any, str, bool]]:
    """``(kind, bad value, expectation, isolated)`` for one parameter whose valid value is ``value``."""
    out: list[tuple[str, Any, str, bool]] = []
    if value is None:  # an optional parameter left at None: the kinds of its annotation, refused
        base = _base(annotation)
        if base == "int":
            out += [("1.7 for an int", 1.7, "refuse", False), ("True for an int", True, "refuse", False)]
        elif base in ("float", "Fraction | float", "float | Fraction"):
            out += [("nan", NAN, "refuse", False), ("inf", INF, "refuse", False)]
        elif base == "bool":
            out.append(("'no' for a bool", "no", "refuse", False))
        if name in SEED_NAMES:
            out += [("nan seed", NAN, "refuse", False), ("1.5 seed", 1.5, "refuse", False)]
        return out
    if isinstance(value, bool):
        return [("'no' for a bool", "no", "refuse", False)]
    if isinstance(value, int):
        out += [("1.7 for an int", value + 0.7, "refuse", False), ("True for an int", True, "refuse", False),
                ("numpy int", np.int64(value), "accept", False), ("10**400", 10**400, "bounded", True),
                ("10**9", 10**9, "bounded", True)]
    elif isinstance(value, (float, Fraction)):
        out += [("nan", NAN, "refuse", False), ("inf", INF, "refuse", False),
                ("a numeric string", "0.5", "refuse", False), ("10**400", 10**400, "bounded", True)]
        if isinstance(value, float) and math.isfinite(value):
            out += [("numpy float", _np_scalar(value), "accept", False), ("Fraction", Fraction(value), "accept", False)]
        elif isinstance(value, Fraction):
            out.append(("numpy float", np.float64(float(value)), "accept", False))
    if name in SEED_NAMES and isinstance(value, int):
        out += [("nan seed", NAN, "refuse", False), ("1.5 seed", 1.5, "refuse", False)]
    if name in PROB_NAMES and isinstance(value, (float, Fraction)) and not isinstance(value, bool) and 0 <= value <= 1:
        out += [("probability -0.5", -0.5, "refuse", False), ("probability 1.5", 1.5, "refuse", False)]
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields") and value:
        items = list(value)
        out.append(("a generator", Fresh(lambda: (v for v in items)), "same", False))
    if isinstance(value, (list, tuple, dict)) and _has_leaf(value):
        out.append(("nested 100000 deep", _nested(value), "refuse", True))
    if isinstance(value, (list, tuple, dict)) and _has_number(value):
        out.append(("numpy scalars inside", _numbers(value, _np_scalar), "accept", False))
        fractions = _numbers(value, lambda x: Fraction(x) if isinstance(x, float) and math.isfinite(x) else x)
        if fractions != value or any(isinstance(v, Fraction) for v in _leaves(fractions)):
            out.append(("Fractions inside", fractions, "accept", False))
    if isinstance(value, str) and _plain_str(annotation):
        out += [("3 for a str", 3, "refuse", False), ("bytes for a str", b"x", "refuse", False)]
        if "None" not in annotation:
            out.append(("None for a str", None, "refuse", False))
    if _is_object(value) and _base(annotation) not in OPEN_ANNOTATIONS:
        out.append(("a plain object()", Fresh(object), "refuse", False))
    if (name in TOKEN_NAMES or _base(annotation) in TOKEN_ANNOTATIONS) and _first_int_path(value) is not None:
        out += [("1.7 as a token id", _with_first_int(value, 1.7), "refuse", False),
                ("True as a token id", _with_first_int(value, True), "refuse", False),
                ("-1 as a token id", _with_first_int(value, -1), "refuse", False)]
    if isinstance(value, torch.Tensor) and value.numel():
        if value.is_floating_point():
            bad = value.clone()
            bad.view(-1)[0] = NAN
            out.append(("a NaN inside a tensor", bad, "refuse", False))
        elif value.dtype == torch.bool:
            out.append(("an int64 tensor for a bool one", value.long(), "same", False))
        else:
            out.append(("a float tensor for an int one", value.double() + 0.5, "refuse", False))
    return out


def _plain_str(annotation: str) -> bool:
    """Whether a parameter annotated ``annotation`` holds text only (so 3, None and bytes are wrong types)."""
    return "str" in annotation and not any(t in annotation for t in (
        "int", "float", "Any", "object", "Hashable", "Prob", "bytes", "Sequence", "Iterable", "tuple", "Callable"))


def _is_object(value: Any) -> bool:
    """Whether ``value`` is a domain object (an instance of a class of the library, a model, a tensor or a
    function): the parameter then gets a plain ``object()``, which has none of what it needs."""
    plain = (bool, int, float, complex, Fraction, str, bytes, list, tuple, dict, set, frozenset, type(None),
             np.generic, type)
    return not isinstance(value, plain)


def _first_int_path(value: Any, path: tuple[int, ...] = ()) -> tuple[int, ...] | None:
    """The index path of the first int leaf of a list/tuple of ints (nested), or ``None``."""
    if isinstance(value, bool) or not isinstance(value, (list, tuple)) or not value or hasattr(value, "_fields"):
        return None
    first = value[0]
    if isinstance(first, int) and not isinstance(first, bool):
        return path + (0,) if all(isinstance(v, int) and not isinstance(v, bool) for v in value) else None
    return _first_int_path(first, path + (0,))


def _with_first_int(value: Any, new: Any) -> Any:
    """``value`` with its first int leaf replaced by ``new`` (containers rebuilt with their own types)."""
    items = list(value)
    if isinstance(items[0], (list, tuple)):
        items[0] = _with_first_int(items[0], new)
    else:
        items[0] = new
    return type(value)(items)


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return [value]


def cases_for(target: Target) -> list[Case]:
    """Every bad-value case of ``target`` (its valid call must work)."""
    valid = valid_kwargs(target)
    notes = _annotations(target)
    out = []
    for name, value in valid.items():
        if name in ("*", "**"):
            continue
        for kind, bad, expect, isolated in kinds_for(name, value, notes.get(name, ""), valid):
            out.append(Case(target, name, kind, {name: bad}, expect, isolated))
    for low, high in INTERVAL_PAIRS:
        a, b = valid.get(low), valid.get(high)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and a < b:
            out.append(Case(target, f"{low}/{high}", "reversed interval", {low: b, high: a}, "refuse"))
    return out


# ----------------------------------------------------------------------------------------------- running
class Timeout(BaseException):
    """Raised by the interval timer: the case ran past :data:`TIME_LIMIT`."""


def _alarm(signum, frame):
    raise Timeout()


def _timed(fn: Callable[[], Any], limit: float) -> Any:
    """``fn()``, interrupted by :class:`Timeout` after ``limit`` seconds of this process's CPU time (so that a
    busy machine does not turn slow cases into hangs)."""
    old = signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, limit)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def same(a: Any, b: Any, rel: float = 1e-5, depth: int = 0) -> bool:
    """Whether two results are the same (numbers within ``rel``; containers, dataclasses, tensors by content)."""
    if depth > 50:
        return True
    if a is b:
        return True
    if isinstance(a, (bool, np.bool_)) or isinstance(b, (bool, np.bool_)):
        return isinstance(a, (bool, np.bool_)) and isinstance(b, (bool, np.bool_)) and bool(a) == bool(b)
    numbers = (int, float, Fraction, np.integer, np.floating)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        fa, fb = float(a), float(b)
        return (math.isnan(fa) and math.isnan(fb)) or fa == fb or math.isclose(fa, fb, rel_tol=rel, abs_tol=1e-12)
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and bool(torch.allclose(a.double(), b.double(), rtol=rel, equal_nan=True)) \
            if a.is_floating_point() or b.is_floating_point() else torch.equal(a, b)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.shape == b.shape and bool(np.allclose(a, b, rtol=rel, equal_nan=True))
    if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same(a[k], b[k], rel, depth + 1) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y, rel, depth + 1) for x, y in zip(a, b))
    if type(a) is not type(b):
        return False
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name), rel, depth + 1) for f in dataclasses.fields(a))
    if hasattr(a, "__dict__") and not inspect.isroutine(a) and not isinstance(a, torch.nn.Module):
        return same(vars(a), vars(b), rel, depth + 1)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


@dataclass(frozen=True)
class Fresh:
    """A bad value made afresh for each call (a generator can be consumed once)."""

    make: Callable[[], Any]


def _materialize(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    return {k: (v.make() if isinstance(v, Fresh) else v) for k, v in kwargs.items()}


def _outcome(case: Case, run: Callable[[], Any], baseline: Any, deterministic: bool) -> tuple[str, str]:
    start = time.process_time()
    try:
        result = _timed(run, TIME_LIMIT)
    except Timeout:
        return "hang", f"still running after {TIME_LIMIT} s"
    except MemoryError:
        return "hang", "MemoryError"
    except (ValueError, TypeError) as err:
        if case.expect == "accept":
            return "refused-valid", f"{type(err).__name__}: {err}"
        names = case.param.split("/")
        return ("clear" if any(n in str(err) for n in names) else "unnamed"), f"{type(err).__name__}: {err}"
    except Exception as err:  # noqa: BLE001 (the point is to catch what should not happen)
        if case.expect == "accept":
            return "refused-valid", f"{type(err).__name__}: {err}"
        return "internal", f"{type(err).__name__}: {str(err)[:200]}"
    if time.process_time() - start > TIME_LIMIT:
        return "hang", f"returned after {time.process_time() - start:.1f} CPU s"
    if case.expect == "bounded":
        return "clear", "returned in time"
    if case.expect in ("accept", "same"):
        if not deterministic or same(result, baseline):
            return "clear", "same result"
        return "silent", f"a different result: {_short(result)} (valid: {_short(baseline)})"
    return "silent", f"returned {_short(result)}"


def _short(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001
        text = type(value).__name__
    return text[:120]


def _isolated(case: Case, run: Callable[[], Any]) -> tuple[str, str]:
    """``_outcome`` in a forked child with a memory limit; killed past the time limit."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        try:
            soft = _vm_bytes() + (2 << 30)
            resource.setrlimit(resource.RLIMIT_AS, (soft, soft))
            cpu = int(resource.getrusage(resource.RUSAGE_SELF).ru_utime + TIME_LIMIT + 2)
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))  # SIGXCPU ends a loop inside C code
            outcome = _outcome(case, run, None, False)
        except BaseException as err:  # noqa: BLE001
            outcome = ("internal", f"{type(err).__name__} in the child")
        os.write(write, json.dumps(outcome).encode())
        os._exit(0)
    os.close(write)
    ready, _, _ = select.select([read], [], [], WALL_LIMIT)
    if not ready:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(read)
        return "hang", f"killed after {WALL_LIMIT} s of wall time"
    data = b""
    while chunk := os.read(read, 65536):
        data += chunk
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if not data and os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL):
        return "hang", f"past the CPU limit inside compiled code (signal {os.WTERMSIG(status)})"
    if not data:
        return "internal", f"the child died (status {status})"
    return tuple(json.loads(data))


def _vm_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 8 << 30


@dataclass
class Report:
    """What the probe found: per-case outcomes and per-callable status."""

    outcomes: list[tuple[str, str, str, str]] = field(default_factory=list)  # (group, label, outcome, detail)
    no_recipe: dict[str, str] = field(default_factory=dict)  # qualname -> why the valid call failed
    exempt: dict[str, str] = field(default_factory=dict)
    probed: list[str] = field(default_factory=list)
    groups: dict[str, str] = field(default_factory=dict)  # qualname -> table row


def probe_target(target: Target, report: Report, skip: frozenset[str] = frozenset()) -> None:
    """Run every case of ``target`` and add them to ``report``."""
    report.groups[target.qualname] = target.group
    reason = exempt_reason(target)
    if reason is not None:
        report.exempt[target.qualname] = reason
        return
    try:
        valid = valid_kwargs(target)
        baseline = _timed(lambda: call(target, valid), WARM_LIMIT)  # the first call may fill caches
        again = _timed(lambda: call(target, valid_kwargs(target)), TIME_LIMIT)
    except NoValue as err:
        report.no_recipe[target.qualname] = str(err)
        return
    except BaseException as err:  # noqa: BLE001
        if isinstance(err, KeyboardInterrupt):
            raise
        report.no_recipe[target.qualname] = f"the valid call failed: {type(err).__name__}: {str(err)[:160]}"
        return
    deterministic = same(baseline, again)
    report.probed.append(target.qualname)
    for case in cases_for(target):
        if case.label in skip:
            continue

        def run(case=case):
            kwargs = valid_kwargs(target)
            kwargs.update(_materialize(case.kwargs))
            return call(target, kwargs)

        # a plain record's generated __init__ only stores its arguments: no case of it can hang, so none needs a
        # child process (forking a large process is most of the probe's cost)
        isolated = case.isolated and not is_plain_record(target.obj)
        outcome, detail = _isolated(case, run) if isolated else _outcome(case, run, baseline, deterministic)
        report.outcomes.append((target.group, case.label, outcome, detail))


def probe(skip: frozenset[str] = frozenset(), only: Callable[[Target], bool] | None = None) -> Report:
    """Probe every public callable (or those ``only`` selects), skipping the case labels in ``skip``."""
    report = Report()
    torch.set_num_threads(1)
    for target in public_callables():
        if only is None or only(target):
            probe_target(target, report, skip)
    return report


def table(report: Report) -> str:
    """The per-module table: tried and each outcome column."""
    import collections
    rows: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for group, _, outcome, _ in report.outcomes:
        rows[group][outcome] += 1
    coverage = collections.defaultdict(lambda: [0, 0, 0])
    for quals, column in ((report.probed, 0), (report.no_recipe, 1), (report.exempt, 2)):
        for qual in quals:
            coverage[report.groups[qual]][column] += 1
    head = f"{'module':<20}{'callables':>10}{'probed':>8}{'recipe?':>8}{'exempt':>7}{'tried':>7}" + "".join(
        f"{c:>14}" for c in OUTCOMES)
    lines = [head]
    total = collections.Counter()
    cov_total = [0, 0, 0]
    for group in sorted(set(rows) | set(coverage)):
        counts, cov = rows[group], coverage[group]
        total.update(counts)
        cov_total = [x + y for x, y in zip(cov_total, cov)]
        lines.append(f"{group:<20}{sum(cov):>10}{cov[0]:>8}{cov[1]:>8}{cov[2]:>7}{sum(counts.values()):>7}"
                     + "".join(f"{counts[c]:>14}" for c in OUTCOMES))
    lines.append(f"{'total':<20}{sum(cov_total):>10}{cov_total[0]:>8}{cov_total[1]:>8}{cov_total[2]:>7}"
                 f"{sum(total.values()):>7}" + "".join(f"{total[c]:>14}" for c in OUTCOMES))
    return "\n".join(lines)


def _group_of(qualname: str) -> str:
    for root in sorted(ROOTS, key=len, reverse=True):
        if qualname.startswith(root + "."):
            return root.removeprefix("ftipbook.")
    return qualname


__all__ = ["BY_ANNOTATION", "BY_NAME", "EXEMPT", "INSTANCES", "OUTCOMES", "RECIPES", "ROOTS", "Case", "Report",
           "Target", "cases_for", "exempt_reason", "probe", "public_callables", "same", "table"]
