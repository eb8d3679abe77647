"""Issue 25, item 4: argument checks of ``compare``, ``model.depth``, ``model.jepa``,
``model.candidates``, ``study``, ``depth_study`` and ``jepa_study``.

* :mod:`ftipbook._validate` against hand-written expectations;
* the whole public surface of those modules, enumerated by introspection
  (:func:`ftipbook._validate.public_callables`, so a new function cannot be missed): every callable
  is guarded, and every annotated argument refuses values of the wrong kind by name before the
  function body runs;
* the issue's examples, each a test that fails on the code before the fix;
* hypothesis: numbers of every numeric kind are the same number, a generator is the same sequence.
"""
from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ftipbook import _validate
from ftipbook._validate import ArgumentKindError

import ftipbook.compare as compare_package

MODULES = sorted("ftipbook.compare." + m.name for m in pkgutil.iter_modules(compare_package.__path__)
                 if m.name != "checks") + ["ftipbook.model.depth", "ftipbook.model.jepa", "ftipbook.study",
                                           "ftipbook.depth_study", "ftipbook.jepa_study"]


# ------------------------------------------------------------------------------------ the helpers
@pytest.mark.parametrize("value, expected", [(3, 3), (np.int64(3), 3), (np.uint8(200), 200), (-2**70, -2**70)])
def test_integer_accepts_ints_of_every_kind(value, expected):
    out = _validate.integer("n", value)
    assert out == expected and type(out) is int


@pytest.mark.parametrize("value", [1.7, 2.0, True, np.bool_(False), "3", None, Fraction(4, 1), np.float64(2.0)])
def test_integer_refuses_what_is_not_an_int(value):
    with pytest.raises(TypeError, match=r"^n=.* must be an int") as err:
        _validate.integer("n", value)
    assert isinstance(err.value, ValueError)  # ArgumentKindError is both


def test_integer_bounds_name_the_range():
    assert _validate.integer("k", 5, low=1, high=5) == 5
    with pytest.raises(ValueError, match=r"k=6 must be an int in \[1, 5\]"):
        _validate.integer("k", 6, low=1, high=5)
    with pytest.raises(ValueError, match=r"k=0 must be an int >= 1"):
        _validate.integer("k", 0, low=1)
    with pytest.raises(ValueError, match=r"seed=-1 must be an int in \[0, 9223372036854775807\]"):
        _validate.seed("seed", -1)
    with pytest.raises(ValueError, match="seed=9223372036854775808"):
        _validate.seed("seed", 2**63)


@pytest.mark.parametrize("value, expected", [(1, 1.0), (0.25, 0.25), (np.float32(0.5), 0.5), (Fraction(1, 4), 0.25),
                                             (np.int64(-3), -3.0)])
def test_real_accepts_numbers_of_every_kind(value, expected):
    out = _validate.real("x", value)
    assert out == expected and type(out) is float


@pytest.mark.parametrize("value, error, message", [
    (True, TypeError, r"x=True must be a real number, got bool"),
    ("0.5", TypeError, r"x='0.5' must be a real number, got str"),
    (None, TypeError, r"x=None must be a real number, got NoneType"),
    (complex(1, 1), TypeError, r"must be a real number, got complex"),
    (math.nan, ValueError, r"x=nan must be a finite real number"),
    (math.inf, ValueError, r"x=inf must be a finite real number"),
    (10**400, ValueError, r"is too large for a float"),
    (Fraction(10**400, 3), ValueError, r"is too large for a float"),
])
def test_real_refuses_by_name(value, error, message):
    with pytest.raises(error, match=message):
        _validate.real("x", value)


def test_real_bounds_and_infinity():
    assert _validate.real("c", math.inf, low=0.0, finite=False) == math.inf
    with pytest.raises(ValueError, match=r"c=-1 must be a real number >= 0.0"):
        _validate.real("c", -1, low=0.0)
    with pytest.raises(ValueError, match=r"p=1.5 must be a real number in \[0.0, 1.0\]"):
        _validate.probability("p", 1.5)
    with pytest.raises(ValueError, match=r"level=1 must be a real number in \(0.0, 1.0\)"):
        _validate.level("level", 1)
    assert _validate.level("level", np.float32(0.95)) == float(np.float32(0.95))


@pytest.mark.parametrize("value", ["yes", "no", 1, 0, None, 0.0])
def test_boolean_refuses_truthy_values(value):
    with pytest.raises(TypeError, match=r"flag=.* must be a bool \(True or False\)"):
        _validate.boolean("flag", value)


def test_boolean_and_text_and_choice():
    assert _validate.boolean("flag", np.bool_(True)) is True
    assert _validate.text("name", "x") == "x"
    with pytest.raises(ValueError, match="name=' ' must be a non-empty string"):
        _validate.text("name", " ")
    with pytest.raises(TypeError, match="name=5 must be a string"):
        _validate.text("name", 5)
    assert _validate.choice("kind", "mse", ("cosine", "mse")) == "mse"
    with pytest.raises(ValueError, match="kind='l1' is not one of 'cosine', 'mse'"):
        _validate.choice("kind", "l1", ("cosine", "mse"))
    with pytest.raises(ValueError, match="kind=True is not one of 1, 2"):
        _validate.choice("kind", True, (1, 2))  # True == 1, but it is no choice of an int


def test_sequence_reads_a_generator_once():
    gen = (i * i for i in range(4))
    assert _validate.sequence("xs", gen) == (0, 1, 4, 9)
    with pytest.raises(TypeError, match="xs='abc' must be a sequence"):
        _validate.sequence("xs", "abc")
    with pytest.raises(TypeError, match="xs=5 must be a sequence"):
        _validate.sequence("xs", 5)


# --------------------------------------------------------------------- the enumerated surface
def _surface():
    for name in MODULES:
        module = importlib.import_module(name)
        for qualname, _holder, _attr, obj in _validate.public_callables(module):
            yield name, qualname, obj.__func__ if isinstance(obj, (classmethod, staticmethod)) else obj


SURFACE = list(_surface())

#: A value of the right kind for each annotation the guard checks (what the other arguments get).
GOOD = {"int": 1, "float": 0.5, "int | float": 0.5, "float | int": 0.5, "Real": 0.5, "bool": False, "str": "x"}
#: Values of the wrong kind for each annotation, and the words the message must hold.
BAD = {
    "int": [(1.5, "must be an int"), (True, "must be an int"), ("3", "must be an int"), (None, "must be an int")],
    "float": [(math.nan, "must be a finite real number"), ("0.5", "must be a real number"), (True, "must be a real number"),
              (None, "must be a real number")],
    "bool": [("no", "must be a bool"), (1, "must be a bool"), (None, "must be a bool")],
    "str": [(5, "must be a string"), (b"x", "must be a string"), (None, "must be a string")],
    "sequence": [(5, "must be a sequence"), ("xy", "must be a sequence"), (None, "must be a sequence")],
    "mapping": [(5, "must be a mapping"), (None, "must be a mapping")],
}


def _optional(annotation: str) -> bool:
    """Whether the guard's check of ``annotation`` lets ``None`` through."""
    try:
        _validate._plan(annotation)("x", None)
    except (TypeError, ValueError):
        return False
    return True


def _kind(annotation: object) -> str | None:
    """The :data:`BAD` key of an annotation the guard checks (``None`` for one it leaves alone or
    that admits ``None``)."""
    if not isinstance(annotation, str) or _validate._plan(annotation) is None or _optional(annotation):
        return None
    base = annotation.split("[")[0]
    if base in ("Mapping", "dict"):
        return "mapping"
    if base in ("Sequence", "Iterable", "list", "tuple", "Collection"):
        return "sequence"
    return {"int | float": "float", "float | int": "float", "Real": "float"}.get(annotation, annotation)


def _good(annotation: object) -> object:
    """A value the guard accepts for ``annotation`` (``None`` for an optional one; a bare object
    for an annotation the guard does not check)."""
    if not isinstance(annotation, str) or _validate._plan(annotation) is None:
        return object()
    if _optional(annotation):
        return None
    kind = _kind(annotation)
    return {"mapping": {}, "sequence": ()}.get(kind, GOOD.get(annotation, object()))


CASES = [(module, qualname, fn, p.name, bad, words)
         for module, qualname, fn in SURFACE
         for p in inspect.signature(fn).parameters.values()
         if (kind := _kind(p.annotation)) is not None and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
         for bad, words in BAD[kind]]


def test_the_surface_is_enumerated_and_guarded():
    """Every public callable of every module is found and wrapped by the guard (or has no
    argument the guard can check); the surface is large, so the enumeration did not miss modules."""
    assert len(SURFACE) > 450, len(SURFACE)
    assert {m for m, _, _ in SURFACE} == set(MODULES)
    unguarded = [f"{m}.{q}" for m, q, fn in SURFACE if not getattr(fn, "__guarded__", False)
                 and any(_validate._plan(p.annotation) is not None for p in inspect.signature(fn).parameters.values()
                         if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))]
    assert unguarded == []
    assert len(CASES) > 1000, len(CASES)


def _call(fn, target: str, value: object):
    args, kwargs = [], {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        v = value if p.name == target else _good(p.annotation)
        if p.kind == p.KEYWORD_ONLY:
            kwargs[p.name] = v
        else:
            args.append(v)
    return fn(*args, **kwargs)


@pytest.mark.parametrize("module, qualname, fn, name, bad, words", CASES,
                         ids=[f"{q}:{n}={b!r}" for _, q, _, n, b, _ in CASES])
def test_every_annotated_argument_refuses_the_wrong_kind_by_name(module, qualname, fn, name, bad, words):
    """The guard refuses ``bad`` before the body runs: the other arguments are placeholders the body
    could not use, so an error naming ``name`` can only come from the check."""
    with pytest.raises((TypeError, ValueError)) as err:
        _call(fn, name, bad)
    message = str(err.value)
    assert name in message and words in message, (qualname, message)


# -------------------------------------------------------------------------- the examples
def _tiny():
    from ftipbook.model import ModelConfig, build_model
    return build_model(ModelConfig(vocab_size=16, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=8), seed=0)


def test_latent_loss_refuses_an_integer_mask():
    """An int64 mask indexed rows of ``per`` (a silent wrong loss); a bool mask selects positions."""
    from ftipbook.model.jepa import latent_loss
    p, t = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0)), torch.zeros(2, 3, 4)
    t[..., 0] = 1.0
    mask = torch.tensor([[1, 0, 1], [0, 1, 0]])
    with pytest.raises(TypeError, match=r"mask must be a bool tensor .* got dtype torch.int64"):
        latent_loss(p, t, mask, "mse")
    by_hand = ((p - t) ** 2).mean(-1)[mask.bool()].mean()
    assert torch.allclose(latent_loss(p, t, mask.bool(), "mse"), by_hand)


def test_with_passes_and_feedback_passes_are_bounded():
    from ftipbook.model.depth import MAX_PASSES, FeedbackCache, with_passes
    model = _tiny()
    with pytest.raises(ValueError, match=rf"passes=1000000000000 must be an int in \[1, {MAX_PASSES}\]"):
        with_passes(model, 10**12)
    assert with_passes(model, np.int64(3)).cfg.n_loops == 3
    with pytest.raises(ValueError, match="feedback_passes=1000000000000000000000000000000 must be an int"):
        FeedbackCache([], 10**30)


def test_cost_vector_takes_numpy_scalars_and_fractions_and_names_huge_ints():
    from ftipbook.compare.cost import CostVector
    assert CostVector({"t": np.float32(1)}, {"t": "s"})["t"] == 1.0
    assert CostVector({"t": Fraction(1, 4)}, {"t": "s"})["t"] == 0.25
    with pytest.raises(ValueError, match="cost coordinate 't'=1000.* is too large for a float"):
        CostVector({"t": 10**400}, {"t": "s"})
    with pytest.raises(TypeError, match="cost coordinate .t. must be a real number in \\[0, inf\\] or UNKNOWN, got bool"):
        CostVector({"t": True}, {"t": "s"})


def test_frontier_value_reads_a_generator_once():
    """The generator was consumed by the type check, so the value was -inf."""
    from ftipbook.compare.frontier import Intervention, frontier_value
    eta = [Intervention("a", 1.0, 0.5), Intervention("b", 2.0, 0.9)]
    assert frontier_value((e for e in eta), 2.0) == frontier_value(eta, 2.0)
    assert frontier_value((e for e in eta), 2.0).value == 0.9


def test_depth_study_run_refuses_a_float_pass_count():
    from ftipbook.depth_study import DepthStudy
    with pytest.raises(TypeError, match="passes=1.0 must be an int"):
        DepthStudy.run(object(), 1.0, 0)
    with pytest.raises(TypeError, match="seed='0' must be an int"):
        DepthStudy.run(object(), 1, "0")


@pytest.mark.parametrize("call, message", [
    (lambda: __import__("ftipbook.compare.study_reports", fromlist=["x"]).sign_test_pvalue(1, 10**30),
     r"n=1000000000000000000000000000000 must be an int in \[1, 10000\]"),
    (lambda: __import__("ftipbook.compare.published", fromlist=["x"]).rounding_interval(1.0, 10**30),
     r"decimals=1000000000000000000000000000000 must be an int in \[0, 400\]"),
    (lambda: __import__("ftipbook.compare.instance", fromlist=["x"]).NextTokenInterface(4, 3).probes(10**30),
     r"n=1000000000000000000000000000000 must be an int <= 100000"),
    (lambda: __import__("ftipbook.model.jepa", fromlist=["x"]).fit_linear_readout(
        torch.zeros(4, 2), torch.zeros(4, dtype=torch.long), 3, steps=10**30), r"steps=1000.* must be an int in \[1, "),
    (lambda: __import__("ftipbook.compare.depth_records", fromlist=["x"]).run_decode(_tiny(), torch.tensor([[1, 2]]),
                                                                                     10**30),
     r"new_tokens=1000.* must be an int in \[0, 65536\]"),
])
def test_work_setting_arguments_have_upper_bounds(call, message):
    """Each of these ran without end (or an OverflowError from deep inside) before the bound."""
    with pytest.raises(ValueError, match=message):
        call()


# ----------------------------------------------------------------------------------- hypothesis
NUMBERS = st.one_of(
    st.integers(0, 10**6).map(lambda i: (i, float(i))),
    st.floats(0, 1e6, allow_nan=False).map(lambda x: (x, x)),
    st.floats(0, 1e6, allow_nan=False, width=32).map(lambda x: (np.float32(x), float(np.float32(x)))),
    st.integers(0, 10**6).map(lambda i: (np.int64(i), float(i))),
    st.fractions(0, 10**6, max_denominator=97).map(lambda f: (f, f.numerator / f.denominator)),
)


@settings(max_examples=60, deadline=None)
@given(NUMBERS)
def test_a_cost_coordinate_of_any_numeric_kind_is_that_number(pair):
    from ftipbook.compare.cost import CostVector
    value, expected = pair
    stored = CostVector({"c": value}, {"c": "s"})["c"]
    assert type(stored) in (int, float) and stored == expected  # a Python int stays exact


INTERVENTIONS = st.lists(st.tuples(st.floats(0, 10, allow_nan=False), st.floats(-5, 5, allow_nan=False)),
                         min_size=0, max_size=6)


@settings(max_examples=60, deadline=None)
@given(INTERVENTIONS, st.floats(0, 10, allow_nan=False), st.sampled_from([list, tuple, iter]))
def test_frontier_value_of_any_iterable_is_the_brute_force_supremum(points, budget, kind):
    from ftipbook.compare.frontier import Intervention, frontier_value
    eta = [Intervention(f"e{i}", c, s) for i, (c, s) in enumerate(points)]
    feasible = [s for c, s in points if c <= budget]
    assert frontier_value(kind(eta), budget).value == (max(feasible) if feasible else -math.inf)


@settings(max_examples=80, deadline=None)
@given(st.one_of(st.integers(-2**70, 2**70), st.booleans(), st.floats(), st.text(max_size=3), st.none(),
                 st.integers(-2**62, 2**62).map(np.int64)))
def test_integer_is_exactly_the_ints(value):
    is_int = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if is_int:
        assert _validate.integer("n", value) == int(value)
    else:
        with pytest.raises(ArgumentKindError, match="n="):
            _validate.integer("n", value)


def test_study_recipe_and_scores_refuse_bad_sizes_by_name():
    from ftipbook import study
    with pytest.raises(ValueError, match=r"lr=inf must be a finite real number > 0.0"):
        study.common_recipe(100, lr=math.inf)
    with pytest.raises(ValueError, match=r"lr=0 must be a real number > 0.0"):
        study.common_recipe(100, lr=0)
    with pytest.raises(ValueError, match=r"batch_size=0 must be an int >= 1"):  # was range()'s own error
        study.document_scores(_tiny(), [], batch_size=0)
    with pytest.raises(ValueError, match=r"seq_len=0 must be an int >= 1"):
        study.document_scores(_tiny(), [], seq_len=0)
