"""Bad values for every public callable of ``ftipbook.prob``, ``ftipbook.claims``, ``ftipbook.tasks``,
``ftipbook.env`` and ``ftipbook.eval`` (issue 25, item 4), shared by ``tests/test_bad_inputs_eval.py``.

Each :class:`Entry` is one callable with valid keyword arguments and, per argument, the bad values to
try (from the argument's *kind*: a count, a seed, a probability, a level, a finite real, a bool, a
name, a callable, an object of a declared type) and the good values that must be accepted (numpy
scalars and ``Fraction`` objects where a number is meant). :func:`public_callables` lists the
surface by introspection, so a callable missing from the catalog is noticed by the test.

:func:`classify` sorts each call into ``clear`` (``ValueError``/``TypeError`` naming the argument),
``unnamed`` (right type, the message does not name the argument), ``internal`` (any other exception),
``silent`` (a result came back) and ``hang`` (more than :data:`HANG_S` seconds); a good value that is
refused is ``refused``.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import random
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction as F
from functools import cache
from typing import Any

import numpy as np

NAN, INF = float("nan"), float("inf")
HUGE = 10**400  # overflows a float
HANG_S = 3.0


@dataclass(frozen=True)
class Gen:
    """A generator of ``items``, made afresh for each call (a generator is consumed once)."""

    items: tuple

    def __repr__(self) -> str:
        return f"<generator of {list(self.items)!r}>"


def gen(*items: Any) -> Gen:
    return Gen(items)


@dataclass(frozen=True)
class Entry:
    """``call(**{**valid, name: value})`` for each bad (and good) ``value`` of ``name``."""

    name: str
    call: Callable[..., Any]
    valid: dict[str, Any]
    bad: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    good: dict[str, tuple[Any, ...]] = field(default_factory=dict)


# --- bad and good values by kind ----------------------------------------------------------------------
def count(low: int = 0, high: int | None = None, work: bool = True, optional: bool = False) -> tuple:
    """An int in ``[low, high]``; ``work``: it sets an amount of work, so a huge value must be refused."""
    out = [True, 1.7, F(3, 2), "3", NAN, [1], low - 1]
    if high is not None:
        out.append(high + 1)
    elif work:
        out.append(HUGE)
    return tuple(out) if optional else (*out, None)


INT_GOOD = (np.int64(3),)
SEED = (NAN, 1.5, True, "1", -1, 2**64, [0], None)
SEED_OPT = SEED[:-1]
PROB = (1.5, -0.1, NAN, INF, "0.5", True, None, 1j, HUGE, F(3, 2), F(HUGE, 3))
PROB_GOOD = (np.float32(0.5), F(1, 2), np.float64(0.25))
LEVEL = (0, 1, 1.5, -0.1, NAN, "0.95", True, None, HUGE)
LEVEL_GOOD = (np.float32(0.95), F(19, 20))
REAL = (NAN, INF, -INF, "1", True, None, 1j)
REAL_GOOD = (np.float32(1.5), F(3, 2))
BOOL = ("no", "yes", 1, 0, None, 1.0)
NAME = (5, None, b"x", "")
FUNC = (5, None, "f")
OBJ = (None, 5, "x")


# --- shared fixtures ---------------------------------------------------------------------------------
def _law():
    from ftipbook.prob import FiniteLaw
    return FiniteLaw({"a": F(1, 4), "b": F(3, 4)})


@cache
def _lm():
    from ftipbook.prob import TableLM
    return TableLM(("x", "y", "$"), {(): {"x": F(1, 2), "$": F(1, 2)}}, default={"y": F(1, 2), "$": F(1, 2)})


class _BadLM:
    """A next-token law that is not a law: probabilities 3/2 and -1/2."""

    def next_token_law(self, prefix):
        return (F(3, 2), F(-1, 2))


class _NanLM:
    def next_token_law(self, prefix):
        return (NAN, 1.0)


def _quantity(**kw):
    from ftipbook.claims import Quantity
    return Quantity(**{"amount": 3, "unit": "token", **kw})


def _dep(**coords):
    from ftipbook.claims import DeploymentBudget
    return DeploymentBudget(coords or {"samples": (16, "sample")})


def _dev():
    from ftipbook.claims import DevelopmentBudget
    return DevelopmentBudget({"tokens": (100, "token")})


def _eset():
    from ftipbook.claims import EvaluationSet
    return EvaluationSet("E+", ("i1", "i2"), ("t1", "t2"))


def _procedure():
    from ftipbook.claims import FeedbackSource, Procedure
    return Procedure("sft", (FeedbackSource("demos", "examples"),))


def _measurement(**kw):
    from ftipbook.claims import Measurement
    return Measurement(**{"successes": 3, "trials": 10, "event": "E+", "evaluator": "exact", "protocol": "greedy",
                          **kw})


def _rule():
    from ftipbook.claims import ConfidenceRule
    return ConfidenceRule()


def _claim():
    from ftipbook.claims import CapabilityClaim, EvaluationRule, ResourceBound, StartingArtifact
    return CapabilityClaim(StartingArtifact("m0", object()), _procedure(),
                           EvaluationRule(("q",), "final", "greedy", lambda x, o: 1), ResourceBound(_dev(), _dep()))


def _toy_task():
    from ftipbook import tasks as T

    def inst(i, prompt, ref):
        return T.Instance(T.PublicInstance(i, prompt, ("calculator",)), T.EvaluatorSecret(ref))
    return T.Task("toy", (inst("a", "1+2=", "3"), inst("b", "5+9=", "14")))


def _task_law():
    from ftipbook import tasks as T
    return T.TaskLaw.uniform(_toy_task())


def _budget():
    from ftipbook import tasks as T
    return T.budget(prompt_tokens=10_000, new_tokens=10_000, candidates=64, tool_calls=64, verifier_calls=64)


@cache
def _artifact():
    from ftipbook import zoo
    return zoo.load("sft-elicit")


def _protocol(**kw):
    from ftipbook import tasks as T
    return T.InferenceProtocol(**{"name": "greedy", "max_new_tokens": 4, **kw})


def _retry(**kw):
    from ftipbook import tasks as T
    return T.RetryProtocol(**{"name": "retry", "max_new_tokens": 4, "checker": T.CALCULATOR, "rounds": 2, **kw})


def _public():
    from ftipbook import tasks as T
    return T.PublicInstance("a", "1+2=", ("calculator",))


def _evaluator():
    from ftipbook import tasks as T
    return T.Evaluator(_toy_task(), T.EXACT_MATCH)


def _record():
    from ftipbook import tasks as T
    result = T.ProtocolResult("3", T.Resources.zeros(), (), 0)
    return T.EvaluationRecord("a", result, (1,), ("correct",))


def _history():
    from ftipbook.env import PublicHistory
    return PublicHistory(("o0", "o1"), ("a0",))


def _trajectory():
    from ftipbook.env import HORIZON, StoppedTrajectory
    return StoppedTrajectory((0, 1), ("o0", "o1"), ("a0",), HORIZON)


def _door():
    from ftipbook.env.examples import door_environment
    return door_environment(3)


def _door_policy():
    from ftipbook.env import Policy
    return Policy.deterministic(lambda h: ("take key", "unlock", "enter")[min(h.t, 2)])


def _interaction():
    from ftipbook.env import Interaction, Stopping
    from ftipbook.env.examples import door_terminal
    return Interaction(_door(), _door_policy(), Stopping((door_terminal(),)))


def _realization():
    from ftipbook.env import calculator_realization
    return calculator_realization(("7+5",), 3)


def _stopping():
    from ftipbook.env import Stopping
    from ftipbook.env.examples import door_terminal
    return Stopping((door_terminal(),))


def _stop_rule():
    from ftipbook.env import StoppingRule
    return StoppingRule.on_action("end", {"enter"})


@cache
def _model_policy():
    from ftipbook.env import ModelPolicy
    art = _artifact()
    return ModelPolicy(art.model(), art.tokenizer)


def _repeated():
    from ftipbook.eval.stats import RepeatedMeasurement
    return RepeatedMeasurement(1, 3)


def _measurements():
    return _repeated().record([1.0, 2.0, 4.0])


SCORES = [0.1, 0.5, 0.9, 0.4]


# --- the catalog -------------------------------------------------------------------------------------
@cache
def entries() -> tuple[Entry, ...]:
    from ftipbook import claims as C
    from ftipbook import prob as P
    from ftipbook import tasks as T
    from ftipbook.env import calculator as EC
    from ftipbook.env import examples as EX
    from ftipbook.env import history as EH
    from ftipbook.env import interaction as EI
    from ftipbook.env import kernels as EK
    from ftipbook.env import policy as EP
    from ftipbook.env import realization as ER
    from ftipbook.env import spaces as ES
    from ftipbook.env import stopping as EST
    from ftipbook.env import tokens as ETK
    from ftipbook.eval import metrics as M
    from ftipbook.eval import recall_probe as RP
    from ftipbook.eval import stats as S

    law, lm, rng = _law(), _lm(), random.Random(0)
    E = Entry
    out = [
        # ---------------------------------------------------------------- prob
        E("prob.FiniteLaw", P.FiniteLaw, dict(probs={"a": F(1, 4), "b": F(3, 4)}), {
            "probs": ({"a": 1.5, "b": -0.5}, {"a": NAN, "b": 1.0}, {"a": HUGE, "b": 0}, {"a": F(HUGE, 1)}, {},
                      5, [0.5, 0.5], {"a": "1"}, {"a": True}, {"a": 0.5}, None)},
            {"probs": ({"a": np.float32(0.25), "b": np.float32(0.75)}, {"a": F(19, 20), "b": 0.05})}),
        E("prob.FiniteLaw.uniform", P.FiniteLaw.uniform, dict(outcomes=["a", "b"]),
          {"outcomes": (5, None, [], [[1], [2]])}),
        E("prob.FiniteLaw.from_weights", P.FiniteLaw.from_weights, dict(weights={"a": 1, "b": 3}),
          {"weights": (5, None, {}, {"a": -1}, {"a": NAN}, {"a": 0}, {"a": HUGE, "b": 1.0}, {"a": "1"}, {"a": True})},
          {"weights": ({"a": np.float32(1), "b": np.int64(3)},)}),
        E("prob.FiniteLaw.__call__", lambda outcome: law(outcome), dict(outcome="a"), {"outcome": ("z", [1])}),
        E("prob.FiniteLaw.prob", lambda event: law.prob(event), dict(event={"a"}),
          {"event": ({"z"}, 5, None, "ab")}),
        E("prob.FiniteLaw.condition", lambda event: law.condition(event), dict(event={"a"}),
          {"event": ({"z"}, 5, set(), None)}),
        E("prob.FiniteLaw.conditional_prob", lambda b, a: law.conditional_prob(b, a), dict(b={"a"}, a={"a", "b"}),
          {"b": ({"z"}, 5, None), "a": ({"z"}, 5, None, set())}),
        E("prob.FiniteLaw.expectation", lambda z: law.expectation(z), dict(z=lambda x: 1),
          {"z": (5, None, lambda x: NAN, lambda x: "s")}),
        E("prob.FiniteLaw.pushforward", lambda f: law.pushforward(f), dict(f=str.upper), {"f": FUNC + (lambda x: [x],)}),
        E("prob.FiniteLaw.product", lambda other: law.product(other), dict(other=_law()), {"other": OBJ}),
        E("prob.FiniteLaw.sample", lambda rng: law.sample(rng), dict(rng=rng), {"rng": OBJ + (0,)}),
        E("prob.FiniteLaw.samples", lambda n, seed: law.samples(n, seed), dict(n=3, seed=0),
          {"n": count(0), "seed": SEED}, {"n": INT_GOOD, "seed": INT_GOOD}),
        E("prob.preimage", P.preimage, dict(f=str.upper, a={"A"}, domain=["a", "b"]),
          {"f": FUNC, "a": (5, None), "domain": (5, None)}),
        E("prob.expectation", P.expectation, dict(law=law, z=lambda x: 1), {"law": OBJ, "z": FUNC}),
        E("prob.is_independent", P.is_independent, dict(law=law, z=str, w=str, tol=1e-12),
          {"law": OBJ, "z": FUNC, "w": FUNC, "tol": REAL + (-1.0,)}, {"tol": (np.float32(1e-6), F(1, 10**9))}),
        E("prob.FiniteKernel", P.FiniteKernel, dict(rows={0: {"a": 1}}), {"rows": (5, None, {}, {0: {"a": 2}}, {0: 5})}),
        E("prob.FiniteKernel.__call__", lambda x: P.FiniteKernel({0: {"a": 1}})(x), dict(x=0), {"x": (1, [0])}),
        E("prob.FiniteKernel.joint", lambda law: P.FiniteKernel({"a": {0: 1}, "b": {1: 1}}).joint(law),
          dict(law=law), {"law": OBJ}),
        E("prob.FiniteKernel.marginal", lambda law: P.FiniteKernel({"a": {0: 1}, "b": {1: 1}}).marginal(law),
          dict(law=law), {"law": OBJ}),
        E("prob.MeasurableKernel", P.MeasurableKernel, dict(law=lambda x: None), {"law": FUNC}),
        E("prob.MeasurableKernel.prob", lambda x, low, high: _normal_kernel().prob(x, low, high),
          dict(x=0.0, low=-1.0, high=1.0), {"low": (NAN, INF, "1", True, None, 1j, 2.0),
                                            "high": (NAN, -INF, "1", True, None, 1j, -2.0)},
          {"low": (np.float32(0.5), F(1, 2), -INF), "high": (np.float32(1.5), INF)}),
        E("prob.MeasurableKernel.point_prob", lambda x, y: _normal_kernel().point_prob(x, y), dict(x=0.0, y=0.5),
          {"y": REAL}, {"y": REAL_GOOD}),
        E("prob.MeasurableKernel.expectation", lambda x, f, low, high, n: _normal_kernel().expectation(x, f, low, high, n),
          dict(x=0.0, f=lambda y: y * 0 + 1, low=-1.0, high=1.0, n=101),
          {"f": FUNC, "low": REAL + (2.0,), "high": REAL + (-2.0,), "n": count(2)},
          {"low": (np.float32(0.5), F(1, 2)), "n": INT_GOOD}),
        E("prob.TableLM", P.TableLM, dict(vocab=("x", "$"), table={(): {"x": F(1, 2), "$": F(1, 2)}}, default=None), {
            "vocab": (5, None, (), ("x", "x"), "x$"), "table": (5, None, {(): {"x": 2}}, {(): 5}, {("q",): {"x": 1}}),
            "default": (5, {"x": 1.5})}),
        E("prob.TableLM.id", lambda name: lm.id(name), dict(name="x"), {"name": ("q", 5, None)}),
        E("prob.TableLM.ids", lambda names: lm.ids(names), dict(names=["x"]), {"names": (["q"], 5, None)}),
        E("prob.TableLM.names", lambda ids: lm.names(ids), dict(ids=[0]),
          {"ids": ([3], [-1], [1.7], [True], 5, None, ["0"])}, {"ids": ([np.int64(1)],)}),
        E("prob.TableLM.next_token_law", lambda prefix: lm.next_token_law(prefix), dict(prefix=[0]),
          {"prefix": ([3], [-1], [1.7], [True], 5, None, ["0"], [NAN])}, {"prefix": ([np.int64(1)],)}),
        E("prob.prefix", P.prefix, dict(x=("a", "b"), t=2), {"x": (5, None), "t": count(1, 3)}, {"t": (np.int64(2),)}),
        E("prob.is_completed", P.is_completed, dict(y=[0, 2], eos=2),
          {"y": (5, None, [1.7, 2], [True, 2]), "eos": (1.7, True, "2", None, -1, [2])}, {"eos": (np.int64(2),)}),
        E("prob.token_probs", P.token_probs, dict(lm=lm, prompt=[0], continuation=[1, 2]), {
            "lm": (None, 5, _BadLM(), _NanLM()), "prompt": ([1.7], [True], [-1], [9], 5, None, ["0"]),
            "continuation": ([1.7], [True], [-1], [9], 5, None, ["0"])}, {"continuation": ([np.int64(1)],)}),
        E("prob.sequence_prob", P.sequence_prob, dict(lm=lm, prompt=[0], continuation=[1, 2]), {
            "lm": (None, 5, _BadLM(), _NanLM()), "prompt": ([1.7], [True], [-1], [9], 5, None),
            "continuation": ([1.7], [True], [-1], [9], 5, None)}),
        E("prob.sequence_nll", P.sequence_nll, dict(lm=lm, prompt=[0], continuation=[1, 2]), {
            "lm": (None, 5, _BadLM(), _NanLM()), "prompt": ([1.7], [True], [-1], [9], 5, None),
            "continuation": ([1.7], [True], [-1], [9], 5, None)}),
        E("prob.Continuation", P.Continuation, dict(tokens=(1,), prob=F(1, 2), stop_reason=_eos()), {
            "tokens": (5, None, (1.7,)), "prob": PROB, "stop_reason": ("eos", None)}, {"prob": PROB_GOOD}),
        E("prob.PrefixTree", P.PrefixTree, dict(lm=lm, prompt=[0], eos=2, max_len=2), {
            "lm": (None, 5, _BadLM(), _NanLM()), "prompt": ([1.7], [True], [-1], [9], 5, None),
            "eos": (1.7, True, "2", -1, 3), "max_len": count(1)}, {"max_len": INT_GOOD, "eos": (np.int64(2),)}),
        E("prob.PrefixTree.path_prob", lambda continuation: P.PrefixTree(lm, [0], eos=2, max_len=2).path_prob(
            continuation), dict(continuation=[1, 2]), {"continuation": ([1.7, 2], [True], 5, None, ["1"])}),
        E("prob.PrefixTree.mass", lambda reason: P.PrefixTree(lm, [0], eos=2, max_len=2).mass(reason),
          dict(reason=None), {"reason": ("eos", 5)}),
        E("prob.enumerate_continuations", P.enumerate_continuations, dict(lm=lm, prompt=[0], eos=2, max_len=2), {
            "lm": (None, 5, _BadLM()), "prompt": ([1.7], [True], [-1], 5, None),
            "eos": (1.7, True, "2", -1, 3), "max_len": count(1)}),
        # ---------------------------------------------------------------- claims
        E("claims.Quantity", C.Quantity, dict(amount=3, unit="token"),
          {"amount": REAL + (-1, F(-1, 2)), "unit": NAME},
          {"amount": (np.float32(1.5), F(3, 2), np.int64(3), HUGE, F(HUGE, 3))}),
        E("claims.Quantity.__add__", lambda other: _quantity() + other, dict(other=_quantity()),
          {"other": OBJ + (_quantity(unit="s"),)}),
        E("claims.Quantity.__le__", lambda other: _quantity() <= other, dict(other=_quantity()),
          {"other": OBJ + (_quantity(unit="s"),)}),
        E("claims.Quantity.__lt__", lambda other: _quantity() < other, dict(other=_quantity()),
          {"other": OBJ + (_quantity(unit="s"),)}),
        E("claims.CostModel", C.CostModel, dict(unit="usd", rates={"token": F(1, 1000)}), {
            "unit": NAME, "rates": (5, None, {}, {"token": NAN}, {"token": -1}, {"token": "1"}, {5: 1}, {"t": True})},
          {"rates": ({"token": np.float32(0.5)}, {"token": HUGE})}),
        E("claims.CostModel.convert", lambda quantity: C.CostModel("usd", {"token": 2}).convert(quantity),
          dict(quantity=_quantity()), {"quantity": OBJ + (_quantity(unit="s"),)}),
        E("claims.DeploymentBudget", C.DeploymentBudget, dict(coordinates={"samples": (16, "sample")}), {
            "coordinates": (5, None, [("s", 1)], {"s": 5}, {"s": (NAN, "x")}, {5: (1, "x")}, {"s": (1, "a", 2)})},
          {"coordinates": ({"s": (np.float32(1), "x")}, {"s": (HUGE, "x")})}),
        E("claims.DevelopmentBudget", C.DevelopmentBudget, dict(coordinates={"tokens": (16, "token")}),
          {"coordinates": (5, None, {"s": 5})}),
        E("claims.Budget.violations", lambda bound: _dep().violations(bound), dict(bound=_dep()),
          {"bound": OBJ + (_dev(),)}),
        E("claims.Budget.within", lambda bound: _dep().within(bound), dict(bound=_dep()), {"bound": OBJ + (_dev(),)}),
        E("claims.Budget.require_within", lambda bound: _dep().require_within(bound), dict(bound=_dep()),
          {"bound": OBJ + (_dev(),)}),
        E("claims.Budget.total", lambda cost_model: _dep().total(cost_model), dict(cost_model=None),
          {"cost_model": (5, "x")}),
        E("claims.Budget.__add__", lambda other: _dep() + other, dict(other=_dep()), {"other": OBJ + (_dev(),)}),
        E("claims.ResourceBound", C.ResourceBound, dict(development=_dev(), deployment=_dep()),
          {"development": OBJ + (_dep(),), "deployment": OBJ + (_dev(),)}),
        E("claims.Component", C.Component, dict(name="calc", kind="tool", external=True, producer="p",
                                                acquisition="bought"), {
            "name": NAME, "kind": ("wand", None, 5), "external": BOOL, "producer": (5, "", None),
            "acquisition": (5, "", None)}),
        E("claims.StartingArtifact", C.StartingArtifact, dict(name="m0", artifact=object(), tools=(),
                                                              controllers=(), information=()), {
            "name": NAME, "artifact": (None,), "tools": (5, "ab", [5]), "controllers": (5, [5]),
            "information": (5, [5])}),
        E("claims.FeedbackSource", C.FeedbackSource, dict(name="demos", kind="examples"),
          {"name": NAME, "kind": ("gossip", None, 5)}),
        E("claims.EvaluationSet", C.EvaluationSet, dict(name="E", ids=("i1",), contents=("t",)), {
            "name": NAME, "ids": (5, None, (), ("i", "i"), (5,), "ab"), "contents": (5, None, (), ("a", "b"))}),
        E("claims.EvaluationSet.from_documents", C.EvaluationSet.from_documents,
          dict(name="E", documents=[_doc()]), {"name": NAME, "documents": (5, None, [], [5])}),
        E("claims.EvaluationSet.matching", lambda contents: _eset().matching(contents), dict(contents=["t1"]),
          {"contents": (5, None, [[1]])}),
        E("claims.Touch", C.Touch, dict(evaluation="E", item_ids=frozenset({"i"}), use="reward"), {
            "evaluation": NAME, "item_ids": (5, None, {"i"}, frozenset({5})), "use": ("fun", None)}),
        E("claims.Procedure", C.Procedure, dict(name="sft", feedback=(), touches=()), {
            "name": NAME, "feedback": (5, None, [5], "ab"), "touches": (5, None, [5])}),
        E("claims.Procedure.touch", lambda evaluation, use, item_ids: _procedure().touch(evaluation, use, item_ids),
          dict(evaluation=_eset(), use="reward", item_ids=["i1"]), {
              "evaluation": OBJ, "use": ("fun", None, 5), "item_ids": (["zz"], 5, "i1", [5])}),
        E("claims.Procedure.touch_by_content", lambda evaluation, contents, use: _procedure().touch_by_content(
            evaluation, contents, use), dict(evaluation=_eset(), contents=["t1"], use="reward"), {
            "evaluation": OBJ, "contents": (5, None, [[1]]), "use": ("fun", None, 5)}),
        E("claims.Procedure.touched", lambda evaluation: _procedure().touched(evaluation), dict(evaluation=_eset()),
          {"evaluation": OBJ}),
        E("claims.EvaluationRule", C.EvaluationRule, dict(task_law=("q",), retained_artifact="final",
                                                           deployment="greedy", utility=lambda x, o: 1), {
            "task_law": (5, None, "abc", (), [[1], [1]]), "retained_artifact": NAME, "deployment": NAME,
            "utility": FUNC}),
        E("claims.EvaluationRule.value", lambda respond: C.EvaluationRule(("q",), "f", "g", lambda x, o: o).value(
            respond), dict(respond=lambda x: 1), {"respond": FUNC + (lambda x: NAN, lambda x: "s", lambda x: -1)}),
        E("claims.CapabilityClaim", C.CapabilityClaim, dict(start=_claim().start, procedure=_procedure(),
                                                            evaluation=_claim().evaluation, bound=_claim().bound),
          {"start": OBJ, "procedure": OBJ, "evaluation": OBJ, "bound": OBJ}),
        E("claims.CapabilityClaim.acquisition_witness", lambda **kw: _claim().acquisition_witness(**kw),
          dict(before=_measurement(successes=0, trials=40), after=_measurement(successes=40, trials=40),
               eps0=0.2, eps1=0.8, transfer=_eset(), rule=None), {
              "before": OBJ, "after": OBJ, "eps0": PROB, "eps1": PROB, "transfer": OBJ, "rule": (5, "x")},
          {"eps0": (np.float32(0.2), F(1, 5)), "eps1": (np.float32(0.8), F(4, 5))}),
        E("claims.ConfidenceRule", C.ConfidenceRule, dict(level=0.95, method="clopper-pearson"),
          {"level": LEVEL, "method": ("wald", None, 5)}, {"level": LEVEL_GOOD}),
        E("claims.ConfidenceRule.interval", lambda successes, trials: _rule().interval(successes, trials),
          dict(successes=3, trials=10), {"successes": count(0, 10), "trials": count(1)},
          {"successes": INT_GOOD, "trials": (np.int64(10),)}),
        E("claims.ConfidenceRule.is_exact", lambda successes, trials, interval, delta: _rule().is_exact(
            successes, trials, interval, delta), dict(successes=3, trials=10, interval=_rule().interval(3, 10),
                                                      delta=1e-7), {
            "successes": count(0, 10), "trials": count(1), "interval": OBJ, "delta": REAL + (-1.0, 0.6)},
          {"delta": (np.float32(1e-6), F(1, 10**7))}),
        E("claims.ConfidenceRule.certifying_counts", lambda trials, eps0, eps1: _rule().certifying_counts(
            trials, eps0, eps1), dict(trials=40, eps0=0.2, eps1=0.8),
          {"trials": count(1), "eps0": PROB, "eps1": PROB}, {"eps0": PROB_GOOD, "trials": (np.int64(40),)}),
        E("claims.ConfidenceRule.certification_probability", lambda trials, u0, u1, eps0, eps1: _rule(
        ).certification_probability(trials, u0, u1, eps0, eps1), dict(trials=40, u0=F(1, 10), u1=F(9, 10), eps0=0.2,
                                                                       eps1=0.8), {
            "trials": count(1), "u0": PROB, "u1": PROB, "eps0": PROB, "eps1": PROB},
          {"eps0": PROB_GOOD, "u0": (F(1, 10), 0)}),
        E("claims.ConfidenceRule.min_trials", lambda eps0, eps1: _rule().min_trials(eps0, eps1),
          dict(eps0=0.2, eps1=0.8), {"eps0": PROB + (0,), "eps1": PROB + (1,)},
          {"eps0": PROB_GOOD, "eps1": (np.float32(0.8), F(4, 5))}),
        E("claims.binomial_tail", C.binomial_tail, dict(successes=3, trials=10, p=F(1, 2)),
          {"successes": count(0, work=False), "trials": count(1), "p": PROB}, {"p": (F(1, 3), 0, 1)}),
        E("claims.Measurement", C.Measurement, dict(successes=3, trials=10, event="E", evaluator="x", protocol="p",
                                                    budget=None), {
            "successes": count(0, 10), "trials": count(1, work=False), "event": NAME, "evaluator": NAME,
            "protocol": NAME, "budget": (5, _dev())}, {"successes": INT_GOOD}),
        E("claims.Measurement.from_outcomes", C.Measurement.from_outcomes,
          dict(outcomes=[True, False], event="E", evaluator="x", protocol="p", budget=None), {
              "outcomes": (5, None, [], ["no"], [1, 0], "TF"), "event": NAME, "evaluator": NAME, "protocol": NAME,
              "budget": (5, _dev())}, {"outcomes": ([np.bool_(True)], gen(*[True, False]))}),
        E("claims.Witness", C.Witness, dict(kind="elicitation", verdict=C.Verdict.UNDECIDED,
                                            before=_rule().interval(1, 2), after=_rule().interval(1, 2),
                                            thresholds=(0.1,), reasons=()), {
            "kind": (5, None, "other"), "verdict": ("established", None), "before": OBJ, "after": OBJ,
            "thresholds": (5, (NAN,)), "reasons": (5, None)}),
        E("claims.elicitation_witness", C.elicitation_witness,
          dict(before=_measurement(successes=20, trials=40), after=_measurement(successes=38, trials=40), eps=0.1,
               rule=None), {
              "before": OBJ, "after": OBJ + (_measurement(successes=38, trials=40, protocol="best-of-8"),
                                             _measurement(successes=38, trials=40, budget=_dep())),
              "eps": PROB + (0,), "rule": (5, "x")},
          {"eps": PROB_GOOD}),
        E("claims.acquisition_witness", C.acquisition_witness,
          dict(before=_measurement(successes=0, trials=40), after=_measurement(successes=40, trials=40),
               eps0=0.2, eps1=0.8, transfer=_eset(), procedure=_procedure(), rule=None), {
              "before": OBJ, "after": OBJ + (_measurement(successes=40, trials=40, protocol="best-of-8"),),
              "eps0": PROB, "eps1": PROB, "transfer": OBJ, "procedure": OBJ, "rule": (5, "x")},
          {"eps0": PROB_GOOD}),
        # ---------------------------------------------------------------- tasks
        E("tasks.PublicInstance", T.PublicInstance, dict(instance_id="a", prompt="1+2=", tools=(), schema=""), {
            "instance_id": NAME, "prompt": (5, None, b"x"), "tools": (5, None, "calc", ("",), [5]),
            "schema": (5, None)}),
        E("tasks.EvaluatorSecret", T.EvaluatorSecret, dict(reference="3", hidden_tests=()), {
            "reference": (5, None, b"3"), "hidden_tests": (5, None, "ab", (5,))}),
        E("tasks.Instance", T.Instance, dict(public=_public(), secret=T.EvaluatorSecret("3")),
          {"public": OBJ, "secret": OBJ}),
        E("tasks.parses_as_integer", T.parses_as_integer, dict(x=_public(), o="3"), {"x": OBJ, "o": (5, None)}),
        E("tasks.Task", T.Task, dict(name="t", instances=_toy_task().instances, admissible=T.parses_as_integer,
                                     is_outcome=T.is_text), {
            "name": NAME, "instances": (5, None, (), (5,), [5]), "admissible": FUNC, "is_outcome": FUNC}),
        E("tasks.Task.is_admissible", lambda x, o: _toy_task().is_admissible(x, o), dict(x=_public(), o="3"),
          {"x": OBJ, "o": (5, None)}),
        E("tasks.Task.__getitem__", lambda instance_id: _toy_task()[instance_id], dict(instance_id="a"),
          {"instance_id": ("zz", 5, None)}),
        E("tasks.arithmetic_task", T.arithmetic_task, dict(name="add", documents=[_doc()], tools=()), {
            "name": NAME, "documents": (5, None, [], [5]), "tools": (5, "calc", [5])}),
        E("tasks.TaskLaw", T.TaskLaw, dict(task=_toy_task(), law=T.FiniteLaw.uniform(["a", "b"])),
          {"task": OBJ, "law": OBJ + (T.FiniteLaw({"zz": 1}),)}),
        E("tasks.TaskLaw.uniform", T.TaskLaw.uniform, dict(task=_toy_task()), {"task": OBJ}),
        E("tasks.TaskLaw.from_weights", T.TaskLaw.from_weights, dict(task=_toy_task(), weights={"a": 1, "b": 2}), {
            "task": OBJ, "weights": (5, None, {"a": -1}, {"a": NAN}, {"zz": 1}, {"a": "1"})},
          {"weights": ({"a": np.float32(1), "b": F(1, 2)},)}),
        E("tasks.TaskLaw.__call__", lambda instance_id: _task_law()(instance_id), dict(instance_id="a"),
          {"instance_id": ("zz", 5, None, [1])}),
        E("tasks.TaskLaw.expectation", lambda f: _task_law().expectation(f), dict(f=lambda x: 1),
          {"f": FUNC + (lambda x: NAN, lambda x: "s")}),
        E("tasks.EvaluationSample", T.EvaluationSample, dict(
            task_law=_task_law(), joint=T.FiniteLaw({("a",): F(1, 2), ("b",): F(1, 2)}), independent=True), {
            "task_law": OBJ, "joint": OBJ + (T.FiniteLaw({("a",): 1}),), "independent": BOOL}),
        E("tasks.EvaluationSample.marginal", lambda i: T.EvaluationSample.iid(_task_law(), 2).marginal(i), dict(i=0),
          {"i": count(0, 1)}, {"i": (np.int64(1),)}),
        E("tasks.EvaluationSample.iid", T.EvaluationSample.iid, dict(task_law=_task_law(), n=2),
          {"task_law": OBJ, "n": count(1)}, {"n": INT_GOOD}),
        E("tasks.EvaluationSample.without_replacement", T.EvaluationSample.without_replacement,
          dict(task_law=_task_law(), n=2), {"task_law": OBJ, "n": count(1)}, {"n": (np.int64(2),)}),
        E("tasks.EvaluationSample.draw", lambda rng: T.EvaluationSample.iid(_task_law(), 2).draw(rng),
          dict(rng=rng), {"rng": OBJ + (0,)}),
        E("tasks.EvaluationSample.mean_variance", lambda f: T.EvaluationSample.iid(_task_law(), 2).mean_variance(f),
          dict(f=lambda x: 1), {"f": FUNC + (lambda x: NAN, lambda x: "s")}),
        E("tasks.Resources", T.Resources, dict(coords=(("t", 1),)), {
            "coords": (5, None, (), (("t", -1),), (("t", NAN),), (("t", True),), (("t", "1"),), (("t", 1), ("t", 2)),
                       ((5, 1),), [("t", 1)])},
          {"coords": ((("t", np.float32(1)),), (("t", F(1, 2)),), (("t", HUGE),))}),
        E("tasks.Resources.of", lambda **kw: T.Resources.of(**kw), dict(t=1),
          {"t": REAL + (-1,)}, {"t": (np.float32(1), F(1, 2), np.int64(2))}),
        E("tasks.Resources.zeros", T.Resources.zeros, dict(names=("a", "b")), {"names": (5, None, "ab", ("a", "a"), [5])}),
        E("tasks.Resources.exceeded", lambda budget: T.Resources.zeros().exceeded(budget), dict(budget=_budget()),
          {"budget": OBJ + (T.Resources.of(t=1),)}),
        E("tasks.Resources.__le__", lambda other: T.Resources.zeros() <= other, dict(other=_budget()),
          {"other": OBJ + (T.Resources.of(t=1),)}),
        E("tasks.Resources.__add__", lambda other: T.Resources.zeros() + other, dict(other=_budget()),
          {"other": OBJ + (T.Resources.of(t=1),)}),
        E("tasks.Resources.__getitem__", lambda name: _budget()[name], dict(name="candidates"),
          {"name": ("zz", 5, None)}),
        E("tasks.BudgetExceeded", T.BudgetExceeded, dict(coordinate="c", used=2, allowed=1, usage=T.Resources.zeros()),
          {"coordinate": NAME, "used": REAL, "allowed": REAL, "usage": OBJ}),
        E("tasks.Candidate", T.Candidate, dict(text="3", new_tokens=2, logprob=-0.5, stop_reason=_eos()), {
            "text": (5, None), "new_tokens": count(0, work=False), "logprob": (NAN, INF, "1", True, None, 1.0),
            "stop_reason": ("eos", None)}, {"logprob": (np.float32(-1.0), -INF)}),
        E("tasks.Tool", T.Tool, dict(name="calc", fn=lambda x, c: True), {"name": NAME, "fn": FUNC}),
        E("tasks.logprob_score", T.logprob_score, dict(x=_public(), candidate=T.Candidate("3", 1, -1.0, _eos())),
          {"x": OBJ, "candidate": OBJ}),
        E("tasks.ProtocolResult", T.ProtocolResult, dict(outcome="3", resources=T.Resources.zeros(), candidates=(),
                                                         chosen=0), {
            "outcome": (5, None), "resources": OBJ, "candidates": (5, None, (5,)), "chosen": count(-1, work=False)}),
        E("tasks.InferenceProtocol", T.InferenceProtocol, dict(name="p", max_new_tokens=4, template="Q: {prompt}",
                                                               temperature=0.5, top_k=None, top_p=None,
                                                               n_candidates=1, selection="first", checker=None,
                                                               verifier=None), {
            "name": NAME, "max_new_tokens": count(1), "template": (
                5, None, "{prompt}{prompt!r}", "{prompt!r}", "{prompt:>9}", "{prompt}{x}", "{}", "no field",
                "{prompt}{prompt}", "{0}{prompt}", "{prompt.upper}", "{prompt[0]}"),
            "temperature": REAL + (-1.0,), "top_k": count(1, optional=True), "top_p": PROB + (0,),
            "n_candidates": count(1), "selection": ("best", None, 5), "checker": (5, "calc"),
            "verifier": (5, "v")},
          {"temperature": (np.float32(0.5), F(1, 2)), "top_p": (np.float32(0.9), F(9, 10)), "top_k": INT_GOOD,
           "max_new_tokens": INT_GOOD, "template": ("{{literal}} {prompt}",)}),
        E("tasks.InferenceProtocol.prompt_text", lambda x: _protocol().prompt_text(x), dict(x=_public()),
          {"x": OBJ}),
        E("tasks.InferenceProtocol.run", lambda artifact, x, budget, seed, model: _protocol().run(
            artifact, x, budget, seed, model=model), dict(artifact=_artifact(), x=_public(), budget=_budget(),
                                                          seed=0, model=None), {
            "artifact": OBJ, "x": OBJ, "budget": OBJ + (T.Resources.of(t=1),), "seed": SEED, "model": (5, "m")},
          {"seed": INT_GOOD}),
        E("tasks.RetryProtocol", T.RetryProtocol, dict(name="r", max_new_tokens=4, checker=T.CALCULATOR, rounds=2,
                                                       temperature=1.0, template="{prompt}"), {
            "name": NAME, "max_new_tokens": count(1), "checker": OBJ, "rounds": count(1),
            "temperature": REAL + (0.0, -1.0), "template": (5, None, "{prompt}{prompt!r}", "{prompt:>9}")},
          {"temperature": REAL_GOOD, "rounds": INT_GOOD}),
        E("tasks.RetryProtocol.run", lambda artifact, x, budget, seed, model: _retry().run(
            artifact, x, budget, seed, model=model), dict(artifact=_artifact(), x=_public(), budget=_budget(),
                                                          seed=0, model=None), {
            "artifact": OBJ, "x": OBJ, "budget": OBJ + (T.Resources.of(t=1),), "seed": SEED, "model": (5, "m")},
          {"seed": INT_GOOD}),
        E("tasks.majority_index", T.majority_index, dict(answers=["1", "2", "1"]),
          {"answers": (5, None, [], [[1]])}, {"answers": (gen(*["1"]),)}),
        E("tasks.budget", lambda **kw: T.budget(**kw), dict(candidates=1),
          {"candidates": REAL + (-1,), "seconds": (1,)}, {"candidates": (np.float32(2), F(1, 2))}),
        E("tasks.Utility", T.Utility, dict(names=("c",), fn=lambda i, o, r: (1,), inadmissible=(0,), bounds=((0, 1),)), {
            "names": (5, None, (), ("c", "c"), ("",), "c"), "fn": FUNC,
            "inadmissible": (5, None, (NAN,), (True,), ("1",), (0, 1), (2,)),
            "bounds": (5, ((1, 0),), ((0, NAN),), ((NAN, 1),), (("a", "b"),), ((0,),), ((0, 1), (0, 1)))},
          {"inadmissible": ((np.float32(0.5),), (F(1, 2),)), "bounds": (((np.float32(0), F(1, 1)),),)}),
        E("tasks.noisy_judge", T.noisy_judge, dict(flip=0.1), {"flip": PROB}, {"flip": PROB_GOOD}),
        E("tasks.Evaluator", T.Evaluator, dict(task=_toy_task(), utility=T.EXACT_MATCH), {"task": OBJ, "utility": OBJ}),
        E("tasks.Evaluator.score", lambda instance_id, o, omega: _evaluator().score(instance_id, o, omega),
          dict(instance_id="a", o="3", omega=0), {"instance_id": ("zz", 5, None), "o": (5, None), "omega": SEED},
          {"omega": INT_GOOD}),
        E("tasks.derive_seed", T.derive_seed, dict(seed=0), {"seed": SEED}, {"seed": INT_GOOD}),
        E("tasks.EvaluationRecord", T.EvaluationRecord, dict(instance_id="a", result=_record().result, utility=(1,),
                                                             names=("correct",)), {
            "instance_id": NAME, "result": OBJ, "utility": (5, None, (NAN,)), "names": (5, None, (5,))}),
        E("tasks.evaluate", T.evaluate, dict(protocol=_protocol(), artifact=_artifact(), evaluator=_evaluator(),
                                             instance_ids=["a"], budget=_budget(), inference_seed=0,
                                             evaluator_seed=0), {
            "protocol": OBJ, "artifact": OBJ, "evaluator": OBJ, "instance_ids": (5, None, [], "a", ["zz"]),
            "budget": OBJ, "inference_seed": SEED, "evaluator_seed": SEED},
          {"inference_seed": INT_GOOD, "instance_ids": (("a",),)}),
        E("tasks.summarize", T.summarize, dict(records=[_record()]), {"records": (5, None, [], [5], "ab")},
          {"records": (gen(*[_record()]),)}),
        E("tasks.group_summaries", T.group_summaries, dict(records=[_record()], group_of=len), {
            "records": (5, None, [5], "ab"), "group_of": FUNC + (lambda i: [i],)}),
        E("tasks.dominates", T.dominates, dict(a={"x": 1}, b={"x": 0}, senses={"x": "max"}), {
            "a": (5, None, {"x": NAN}, {"x": "1"}, {}), "b": (5, None, {"x": NAN}, {"x": "1"}),
            "senses": (5, None, {}, {"x": "up"}, {"y": "max"})},
          {"a": ({"x": np.float32(1)}, {"x": F(1, 2)})}),
        E("tasks.is_text", T.is_text, dict(o="x"), {}),
        # ---------------------------------------------------------------- env
        E("env.spaces.check_int", ES.check_int, dict(name="n", value=3, low=0),
          {"value": count(0, work=False), "name": (5, None), "low": (1.5, "0", True, None)}, {"value": INT_GOOD}),
        E("env.spaces.check_callable", ES.check_callable, dict(name="f", value=len), {"value": FUNC}),
        E("env.Spaces", ES.Spaces, dict(states=("a",), observations=None, actions=None, t_max=2), {
            "states": (5, "ab", ()), "observations": (5, "ab", ()), "actions": (5, "ab", (), [[1]]),
            "t_max": count(0)}, {"t_max": INT_GOOD}),
        E("env.Spaces.check", lambda kind, value: ES.Spaces(("a",), None, None, 1).check(kind, value),
          dict(kind="states", value="a"), {"kind": ("rewards", None, 5), "value": ("zz", [1])}),
        E("env.StopCause", EH.StopCause, dict(owner=EH.StopOwner.AGENT, rule="r"),
          {"owner": ("agent", None), "rule": NAME}),
        E("env.PublicHistory", EH.PublicHistory, dict(observations=("o0",), actions=()), {
            "observations": (5, None, "o0", ()), "actions": (5, None, "a", ("a",))}),
        E("env.PublicHistory.extend", lambda action, observation: _history().extend(action, observation),
          dict(action="a1", observation="o2"), {"action": ([1],), "observation": ([1],)}),
        E("env.PublicHistory.prefix", lambda t: _history().prefix(t), dict(t=1), {"t": count(0, 1)},
          {"t": INT_GOOD[:0] + (np.int64(1),)}),
        E("env.StoppedTrajectory", EH.StoppedTrajectory, dict(states=(0,), observations=("o",), actions=(),
                                                              cause=EH.HORIZON), {
            "states": (5, None, (), "s"), "observations": (5, None, "o"), "actions": (5, None, ("a",)),
            "cause": ("horizon", None)}),
        E("env.kernels.check_rng", EK.check_rng, dict(rng=rng), {"rng": OBJ + (0,)}),
        E("env.InitialLaw", EK.InitialLaw, dict(law=T.FiniteLaw({("s", "o"): 1}), sampler=None), {
            "law": (5, "x", T.FiniteLaw({"s": 1})), "sampler": (5, "x")}),
        E("env.InitialLaw.rendered", EK.InitialLaw.rendered, dict(state_law=_law(), obs=str.upper),
          {"state_law": OBJ, "obs": FUNC + (lambda s: [s],)}),
        E("env.InitialLaw.sample", lambda rng: EK.InitialLaw(T.FiniteLaw({("s", "o"): 1})).sample(rng), dict(rng=rng),
          {"rng": OBJ + (0,)}),
        E("env.TransitionKernel", EK.TransitionKernel, dict(law=lambda t, s, a: None, sampler=None,
                                                            deterministic=False), {
            "law": (5, "x"), "sampler": (5, "x"), "deterministic": BOOL}),
        E("env.TransitionKernel.tool", EK.TransitionKernel.tool, dict(update=lambda t, s, a: (s, a)),
          {"update": FUNC}),
        E("env.TransitionKernel.factored", EK.TransitionKernel.factored,
          dict(transition=lambda t, s, a: _law(), observe=lambda t, s, a: _law()),
          {"transition": FUNC, "observe": FUNC}),
        E("env.TransitionKernel.next_law", lambda t, state, action: _door().kernel.next_law(t, state, action),
          dict(t=0, state="locked", action="take key"), {"t": count(0, work=False), "state": ("zz", [1])}),
        E("env.TransitionKernel.sample", lambda t, state, action, rng: _door().kernel.sample(t, state, action, rng),
          dict(t=0, state="locked", action="take key", rng=rng),
          {"t": count(0, work=False), "state": ("zz",), "rng": OBJ + (0,)}),
        E("env.Environment", EK.Environment, dict(spaces=_door().spaces, initial=_door().initial,
                                                  kernel=_door().kernel),
          {"spaces": OBJ, "initial": OBJ, "kernel": OBJ}),
        E("env.policy.check_history", EP.check_history, dict(history=_history()), {"history": OBJ + (("o",),)}),
        E("env.Policy", EP.Policy, dict(law=None, sampler=lambda h, r: "a", name="p"), {
            "law": (5, "x"), "sampler": (5, "x"), "name": NAME}),
        E("env.Policy.deterministic", EP.Policy.deterministic, dict(choose=lambda h: "a", name="d"),
          {"choose": FUNC, "name": NAME}),
        E("env.Policy.action_law", lambda history: _door_policy().action_law(history), dict(history=_history()),
          {"history": OBJ}),
        E("env.Policy.sample", lambda history, rng: _door_policy().sample(history, rng),
          dict(history=_history(), rng=rng), {"history": OBJ, "rng": OBJ + (0,)}),
        E("env.StoppingRule", EST.StoppingRule, dict(name="r", owner=EH.StopOwner.AGENT, decide=lambda h: False), {
            "name": NAME, "owner": ("agent", None, EH.StopOwner.HORIZON), "decide": FUNC}),
        E("env.StoppingRule.stop_prob", lambda history: EST.StoppingRule("r", EH.StopOwner.AGENT, lambda h: F(1, 2)
                                                                          ).stop_prob(history),
          dict(history=_history()), {"history": OBJ}),
        E("env.StoppingRule.on_action", EST.StoppingRule.on_action, dict(name="end", actions={"a"}),
          {"name": NAME, "actions": (5, None, set(), [[1]])}),
        E("env.StoppingRule.on_observation", EST.StoppingRule.on_observation, dict(name="t", terminal=bool),
          {"name": NAME, "terminal": FUNC}),
        E("env.StoppingRule.budget", EST.StoppingRule.budget, dict(name="b", cost=lambda h: h.t, limit=3), {
            "name": NAME, "cost": FUNC, "limit": REAL + (-1,)}, {"limit": (np.float32(2), F(5, 2), np.int64(3))}),
        E("env.Stopping", EST.Stopping, dict(rules=(_stop_rule(),)), {
            "rules": (5, None, (5,), "ab", (_stop_rule(), _stop_rule()))}),
        E("env.Stopping.split", lambda history, t_max: _stopping().split(history, t_max),
          dict(history=_history(), t_max=3), {"history": OBJ, "t_max": count(1, work=False)},
          {"t_max": INT_GOOD}),
        E("env.Stopping.sample", lambda history, t_max, rng: _stopping().sample(history, t_max, rng),
          dict(history=_history(), t_max=3, rng=rng), {"history": OBJ, "t_max": count(1, work=False),
                                                       "rng": OBJ + (0,)}, {"t_max": INT_GOOD}),
        E("env.Estimate", EI.Estimate, dict(hits=1, n=2, interval=S.clopper_pearson(1, 2)), {
            "hits": count(0, 2), "n": count(1, work=False), "interval": OBJ}),
        E("env.Estimate.contains", lambda p: EI.Estimate(1, 2, S.clopper_pearson(1, 2)).contains(p), dict(p=0.5),
          {"p": PROB}, {"p": PROB_GOOD}),
        E("env.Interaction", EI.Interaction, dict(environment=_door(), policy=_door_policy(), stopping=_stopping()),
          {"environment": OBJ, "policy": OBJ, "stopping": OBJ}),
        E("env.Interaction.law", lambda max_trajectories: _interaction().law(max_trajectories),
          dict(max_trajectories=100), {"max_trajectories": count(1, work=False)}, {"max_trajectories": INT_GOOD}),
        E("env.Interaction.prob", lambda z: _interaction().prob(z), dict(z=_trajectory()), {"z": OBJ}),
        E("env.Interaction.prob_of", lambda event: _interaction().prob_of(event), dict(event=lambda z: True),
          {"event": FUNC}),
        E("env.Interaction.sample", lambda rng: _interaction().sample(rng), dict(rng=rng), {"rng": OBJ + (0,)}),
        E("env.Interaction.samples", lambda n, seed: _interaction().samples(n, seed), dict(n=3, seed=0),
          {"n": count(1), "seed": SEED}, {"n": INT_GOOD, "seed": INT_GOOD}),
        E("env.Interaction.estimate", lambda event, n, seed, level: _interaction().estimate(event, n, seed, level),
          dict(event=lambda z: True, n=3, seed=0, level=0.99), {
              "event": FUNC, "n": count(1), "seed": SEED, "level": LEVEL}, {"level": LEVEL_GOOD, "n": INT_GOOD}),
        E("env.state_dependence", EI.state_dependence, dict(law=_interaction().law(), tol=1e-12),
          {"law": OBJ + (_law(),), "tol": REAL + (-1.0,)}, {"tol": (np.float32(1e-6), F(1, 10**9))}),
        E("env.InteractiveRealization", ER.InteractiveRealization, dict(
            instances=("7+5",), spaces=ES.Spaces(None, None, None, 2), initial=EC.calculator_initial,
            kernel=lambda x: EC.calculator_kernel(), outcome=EC.final_answer, admissible=lambda x, y: True), {
            "instances": (5, None, "ab", (), ("a", "a")), "spaces": OBJ, "initial": FUNC, "kernel": FUNC,
            "outcome": FUNC, "admissible": FUNC}),
        E("env.InteractiveRealization.environment", lambda x: _realization().environment(x), dict(x="7+5"),
          {"x": ("1+1", 5, None)}),
        E("env.InteractiveRealization.interaction", lambda x, policy, stopping: _realization().interaction(
            x, policy, stopping), dict(x="7+5", policy=_door_policy(), stopping=_stopping()),
          {"x": ("1+1", 5), "policy": OBJ, "stopping": OBJ}),
        E("env.InteractiveRealization.out", lambda x, z: _realization().out(x, z), dict(x="7+5", z=_trajectory()),
          {"x": ("1+1", 5), "z": OBJ}),
        E("env.InteractiveRealization.outcome_law", lambda x, policy, stopping: _realization().outcome_law(
            x, policy, stopping), dict(x="7+5", policy=EP.Policy.deterministic(lambda h: EC.Answer(12)),
                                       stopping=EC.answer_stopping()),
          {"x": ("1+1", 5), "policy": OBJ, "stopping": OBJ}),
        E("env.tokens.serialize", ETK.serialize, dict(history=EH.PublicHistory(((0,),), ())), {"history": OBJ}),
        E("env.token_environment", ETK.token_environment, dict(prompt=[0], vocab_size=3, max_len=2), {
            "prompt": ([1.7], [True], [-1], [3], 5, None, [], "ab"), "vocab_size": count(1),
            "max_len": count(1)}, {"prompt": ([np.int64(1)],), "vocab_size": INT_GOOD, "max_len": INT_GOOD}),
        E("env.lm_policy", ETK.lm_policy, dict(lm=lm, name="lm"), {"lm": OBJ, "name": NAME}),
        E("env.token_interaction", ETK.token_interaction, dict(lm=lm, prompt=[0], eos=2, max_len=2), {
            "lm": OBJ, "prompt": ([1.7], [True], [-1], [3], 5, None, []), "eos": (1.7, True, "2", -1, 3, [2]),
            "max_len": count(1)}, {"eos": (np.int64(2),), "max_len": INT_GOOD}),
        E("env.tokens.stop_reason", ETK.stop_reason, dict(z=_trajectory()), {"z": OBJ}),
        E("env.continuations", ETK.continuations, dict(law=ETK.token_interaction(lm, [0], eos=2, max_len=2).law()),
          {"law": OBJ + (_law(),)}),
        E("env.calculator.evaluate", EC.evaluate, dict(expression="7+5"), {"expression": (5, None, "7/5", "")}),
        E("env.parse_action", EC.parse_action, dict(text="7+5"), {"text": (5, None, b"7")}),
        E("env.Answer", EC.Answer, dict(value=3), {"value": (1.7, "3", True, None, NAN)}, {"value": INT_GOOD}),
        E("env.Calc", EC.Calc, dict(expression="7+5"), {"expression": (5, None, "7/5")}),
        E("env.Malformed", EC.Malformed, dict(text="x"), {"text": (5, None)}),
        E("env.calculator.calculator_step", EC.calculator_step, dict(t=0, state=("7+5", None), action=EC.Calc("7+5")),
          {"t": count(0, work=False), "state": (5, None, ()), "action": OBJ}),
        E("env.calculator.calculator_initial", EC.calculator_initial, dict(question="7+5"),
          {"question": (5, None, "seven")}),
        E("env.calculator.final_answer", EC.final_answer, dict(question="7+5", z=_trajectory()),
          {"z": OBJ}),
        E("env.calculator_realization", EC.calculator_realization, dict(questions=["7+5"], t_max=3), {
            "questions": (5, None, "7+5", [], ["x"], [5]), "t_max": count(1)}, {"t_max": INT_GOOD}),
        E("env.calculator.question_prompt", EC.question_prompt, dict(history=_history()), {"history": OBJ}),
        E("env.ModelPolicy", EC.ModelPolicy, dict(model=_artifact().model(), tokenizer=_artifact().tokenizer,
                                                  max_new_tokens=4, temperature=0.0), {
            "model": OBJ, "tokenizer": OBJ, "max_new_tokens": count(1),
            "temperature": REAL + (-1.0,), "serialize": FUNC, "parse": FUNC},
          {"temperature": REAL_GOOD, "max_new_tokens": INT_GOOD}),
        E("env.ModelPolicy.text", lambda history, seed: _model_policy().text(history, seed),
          dict(history=EH.PublicHistory(("7+5",), ()), seed=None), {"history": OBJ, "seed": SEED_OPT},
          {"seed": INT_GOOD}),
        E("env.examples.door_step", EX.door_step, dict(t=0, state="locked", action="enter"),
          {"t": count(0, work=False), "state": ("zz", [1])}),
        E("env.examples.door_environment", EX.door_environment, dict(t_max=3), {"t_max": count(0)},
          {"t_max": INT_GOOD}),
        E("env.examples.counter_step_law", EX.counter_step_law, dict(bias=F(1, 2)), {"bias": PROB},
          {"bias": (F(1, 3), 0, 1)}),
        E("env.examples.noisy_counter", EX.noisy_counter, dict(t_max=2, bias=F(1, 2)),
          {"t_max": count(0), "bias": PROB}, {"t_max": INT_GOOD}),
        # ---------------------------------------------------------------- eval
        E("eval.metrics.discovery_probability", M.discovery_probability, dict(p=0.1, n=3), {
            "p": PROB[:-2] + ([0.5, 1.5], [NAN], "ab"), "n": count(0, optional=True)},
          {"p": PROB_GOOD, "n": INT_GOOD}),
        E("eval.metrics.pass_at_k", M.pass_at_k, dict(item_probs=[0.1, 0.2], k=3), {
            "item_probs": (5 + 0j, None, [], [1.5], [NAN], "ab", [[0.1]]), "k": count(1)},
          {"item_probs": (np.float32(0.5), F(1, 2), [np.float32(0.5)], gen(*[0.5])), "k": INT_GOOD}),
        E("eval.metrics.pass_at_k_unbiased", M.pass_at_k_unbiased, dict(n=10, c=3, k=2), {
            "n": count(1), "c": (1.7, True, "3", None, -1, 11, [1.5], [True]), "k": count(1, 10)},
          {"c": (np.int64(3), [np.int64(3)], gen(*[3])), "n": (np.int64(10),), "k": INT_GOOD}),
        E("eval.metrics.best_of_k", M.best_of_k, dict(scores=[0.1, 0.5, 0.9], k=2), {
            "scores": (5, None, [], [NAN, 1.0], ["a", "b"], [[]], [True, False], [[0.1], 5]), "k": count(1, 3)},
          {"scores": ([np.float32(0.5), F(1, 2)], gen(*[0.1, 0.5])), "k": INT_GOOD}),
        E("eval.metrics.majority_vote", M.majority_vote, dict(answers=["a", "b", "a"]),
          {"answers": (5, None, [], [[1]])}, {"answers": (gen(*"aba"),)}),
        E("eval.stats.Interval", S.Interval, dict(low=0.1, high=0.9, level=0.95, method="m"), {
            # level 1 is a band that holds by declaration (a tolerance band), so it is valid here
            "low": REAL + (1.5,), "high": REAL + (-0.5, 0.05), "level": tuple(v for v in LEVEL if not (
                isinstance(v, (int, float)) and not isinstance(v, bool) and v == 1)), "method": (5, None)},
          {"low": (np.float32(0.1), F(1, 10)), "level": LEVEL_GOOD}),
        E("eval.stats.Interval.contains", lambda x: S.Interval(0.1, 0.9, 0.95, "m").contains(x), dict(x=0.5),
          {"x": REAL}, {"x": REAL_GOOD}),
        E("eval.stats.bootstrap_mean_ci", S.bootstrap_mean_ci, dict(values=SCORES, level=0.95, n_boot=200, seed=0), {
            "values": (5, None, [1.0], [NAN, 1.0], ["a", "b"], [[1.0, 2.0]], [True, False]), "level": LEVEL,
            "n_boot": count(100), "seed": SEED},
          {"level": LEVEL_GOOD, "seed": INT_GOOD, "n_boot": (np.int64(200),),
           "values": ([np.float32(0.5), F(1, 2)], gen(*SCORES))}),
        E("eval.stats.Measurements.bootstrap_ci", lambda level, n_boot, seed: _measurements().bootstrap_ci(
            level=level, n_boot=n_boot, seed=seed), dict(level=0.95, n_boot=200, seed=0),
          {"level": LEVEL, "n_boot": count(100), "seed": SEED}, {"level": LEVEL_GOOD}),
        E("eval.stats.Measurements.summary", lambda digits: _measurements().summary(digits), dict(digits=3),
          {"digits": count(0, 17)}, {"digits": INT_GOOD}),
        E("eval.stats.Measurements", S.Measurements, dict(rule=_repeated(), values=(1.0, 2.0, 3.0)), {
            "rule": OBJ, "values": (5, None, (NAN, 1.0, 2.0), (1.0,), ("a", "b", "c"))}),
        E("eval.stats.RepeatedMeasurement", S.RepeatedMeasurement, dict(warmup=1, reps=3, seeds=None,
                                                                        aggregation="mean", unit="s"), {
            "warmup": count(0), "reps": count(2), "seeds": (5, (1.5, 2, 3), (True, 1, 2), (1, 2), "abc", (-1, 1, 2)),
            "aggregation": ("min", "max", None, 5), "unit": NAME},
          {"warmup": INT_GOOD, "reps": INT_GOOD, "seeds": ((np.int64(1), 2, 3), [1, 2, 3])}),
        E("eval.stats.RepeatedMeasurement.record", lambda values: _repeated().record(values),
          dict(values=[1.0, 2.0, 3.0]), {"values": (5, None, [1.0], [NAN, 1.0, 2.0], ["a", "b", "c"])},
          {"values": (gen(*[1.0, 2.0, 3.0]), [np.float32(1), F(1, 2), 3])}),
        E("eval.stats.RepeatedMeasurement.run", lambda fn: _repeated().run(fn), dict(fn=lambda: 1.0),
          {"fn": FUNC + (lambda: NAN, lambda: "x")}),
        E("eval.stats.RepeatedMeasurement.time", lambda fn, device: _repeated().time(fn, device=device),
          dict(fn=lambda: None, device=None), {"fn": FUNC, "device": (5, "nonsense")}),
        E("eval.stats.BootstrapResult", S.BootstrapResult, dict(estimate=0.1, interval=S.Interval(0, 1, 0.9, "m"),
                                                                n_a=2, n_b=2, n_boot=200, seed=0), {
            "estimate": REAL, "interval": OBJ, "n_a": count(1, work=False), "n_b": count(1, work=False),
            "n_boot": count(100, work=False), "seed": SEED}),
        E("eval.stats.paired_bootstrap", S.paired_bootstrap, dict(a=SCORES, b=SCORES[::-1], n_boot=200, level=0.9,
                                                                  seed=0), {
            "a": (5, None, [1.0], [NAN] * 4, ["a"] * 4, [0.1] * 3), "b": (5, None, [NAN] * 4, [0.1] * 3),
            "n_boot": count(100), "level": LEVEL, "seed": SEED},
          {"a": (gen(*SCORES),), "level": LEVEL_GOOD, "seed": INT_GOOD}),
        E("eval.stats.unpaired_bootstrap", S.unpaired_bootstrap, dict(a=SCORES, b=SCORES[:3], n_boot=200, level=0.9,
                                                                      seed=0), {
            "a": (5, None, [1.0], [NAN] * 4), "b": (5, None, [NAN] * 4), "n_boot": count(100), "level": LEVEL,
            "seed": SEED}, {"b": (gen(*SCORES),), "level": LEVEL_GOOD, "seed": INT_GOOD}),
        E("eval.stats.BootstrapProcedure", S.BootstrapProcedure, dict(paired=True, n_boot=200, level=0.9, seed=0,
                                                                      statistic="mean difference"), {
            "paired": BOOL, "n_boot": count(100), "level": LEVEL, "seed": SEED, "statistic": ("median", None)},
          {"level": LEVEL_GOOD, "seed": INT_GOOD, "n_boot": (np.int64(200),)}),
        E("eval.stats.BootstrapProcedure.apply", lambda a, b: S.BootstrapProcedure(n_boot=200).apply(a, b),
          dict(a=SCORES, b=SCORES[::-1]), {"a": (5, None, [NAN] * 4), "b": (5, None, [NAN] * 4, [0.1] * 3)}),
        E("eval.stats.binomial_cdf", S.binomial_cdf, dict(k=3, n=10, p=0.5), {
            "k": (1.7, True, "3", None, NAN), "n": count(0), "p": PROB}, {"p": PROB_GOOD, "n": INT_GOOD}),
        E("eval.stats.clopper_pearson", S.clopper_pearson, dict(k=3, n=10, level=0.95, side="two-sided"), {
            "k": count(0, 10), "n": count(1), "level": LEVEL, "side": ("both", None, 5)},
          {"level": LEVEL_GOOD, "k": INT_GOOD, "n": (np.int64(10),)}),
        E("eval.recall_probe.probe_keys", RP.probe_keys, dict(n_pairs=4, d_k=3, generator=_gen()), {
            "n_pairs": count(1), "d_k": count(1), "generator": OBJ + (0,)}, {"n_pairs": INT_GOOD}),
        E("eval.recall_probe.recall_probe", RP.recall_probe, dict(n_pairs=4, d_k=3, seed=0, sharpness=50.0), {
            "n_pairs": count(1), "d_k": count(1), "seed": SEED, "sharpness": REAL + (0.0, -1.0)},
          {"sharpness": REAL_GOOD, "seed": INT_GOOD, "n_pairs": INT_GOOD}),
        E("eval.recall_probe.recall_exact_match", RP.recall_exact_match, dict(n_pairs=4, d_k=3, n_labels=3, seed=0,
                                                                              sharpness=50.0), {
            "n_pairs": count(1), "d_k": count(1), "n_labels": count(2), "seed": SEED,
            "sharpness": REAL + (0.0, -1.0)}, {"sharpness": REAL_GOOD, "n_labels": INT_GOOD}),
    ]
    return tuple(out)


def _eos():
    from ftipbook.model.generate import StopReason
    return StopReason.EOS


def _doc():
    from ftipbook.data.corpus import Document
    return Document("17+58=75", "test", "d1", answer="75")


def _gen():
    import torch
    return torch.Generator().manual_seed(0)


@cache
def _normal_kernel():
    import torch

    from ftipbook.prob import MeasurableKernel
    return MeasurableKernel(lambda x: torch.distributions.Normal(torch.tensor(float(x), dtype=torch.float64), 1.0))


# --- the surface, by introspection -------------------------------------------------------------------
MODULES = ("ftipbook.prob", "ftipbook.claims", "ftipbook.tasks", "ftipbook.env", "ftipbook.eval")


def _modules() -> list:
    out = []
    for name in MODULES:
        mod = importlib.import_module(name)
        out.append(mod)
        if hasattr(mod, "__path__"):
            out += [importlib.import_module(f"{name}.{m.name}") for m in pkgutil.iter_modules(mod.__path__)]
    return out


def _takes_arguments(fn: Callable) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    return any(p.name not in ("self", "cls") for p in params)


def public_callables() -> dict[str, Callable]:
    """``{catalog name: callable}`` for every public function, class and method taking arguments.

    Names are ``<module without "ftipbook.">.<qualname>``; ``env`` classes re-exported by the package
    keep their defining module's name. Exceptions, enums, protocols and zero-argument methods are left
    out: there is nothing to validate.
    """
    out: dict[str, Callable] = {}
    for mod in _modules():
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                continue
            prefix = mod.__name__.removeprefix("ftipbook.")
            if inspect.isfunction(obj):
                out[f"{prefix}.{name}"] = obj
            elif inspect.isclass(obj) and not issubclass(obj, (BaseException,)) and not _is_enum_or_protocol(obj):
                out[f"{prefix}.{name}"] = obj
                for attr, member in vars(obj).items():
                    fn = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                    if not inspect.isfunction(fn) or attr.startswith("_") and attr not in _DUNDERS:
                        continue
                    if attr in ("__init__", "__post_init__") or (dataclass_field(obj, attr)):
                        continue
                    if _takes_arguments(fn):
                        out[f"{prefix}.{name}.{attr}"] = fn
    return out


_DUNDERS = ("__call__", "__add__", "__le__", "__lt__", "__ge__", "__getitem__")


def dataclass_field(cls: type, attr: str) -> bool:
    """A callable default of a dataclass field (``Task.admissible``) is a value, not a method."""
    return attr in getattr(cls, "__dataclass_fields__", {})


def _is_enum_or_protocol(cls: type) -> bool:
    import enum
    return issubclass(cls, enum.Enum) or getattr(cls, "_is_protocol", False)


#: Catalog names that stand for a surface name (the env package re-exports its classes).
ALIASES = {"env.spaces.Spaces": "env.Spaces"}


def catalog_name(surface: str) -> str:
    """The catalog entry that covers the surface name ``surface`` (``env.<module>.X`` -> ``env.X``)."""
    names = {e.name for e in entries()}
    if surface in names:
        return surface
    parts = surface.split(".")
    if parts[0] == "env" and len(parts) > 2:
        short = ".".join(["env"] + parts[2:])
        if short in names:
            return short
    if parts[0] == "claims" and parts[1] in ("DeploymentBudget", "DevelopmentBudget") and len(parts) > 2:
        return ".".join(["claims", "Budget"] + parts[2:])
    return surface


# --- classification ----------------------------------------------------------------------------------
class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang


def _call(entry: Entry, name: str, value: Any):
    kwargs = {k: (iter(v.items) if isinstance(v, Gen) else v) for k, v in {**entry.valid, name: value}.items()}
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, HANG_S)
    try:
        return entry.call(**kwargs)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def classify(entry: Entry, name: str, value: Any) -> tuple[str, str]:
    """``(outcome, detail)`` for a bad value: clear, unnamed, internal, silent or hang."""
    try:
        _call(entry, name, value)
    except _Hang:
        return "hang", f"still running after {HANG_S} s"
    except (ValueError, TypeError) as err:
        return ("clear" if name in str(err) else "unnamed"), f"{type(err).__name__}: {str(err)[:200]}"
    except Exception as err:  # noqa: BLE001 (the point is to catch what should not happen)
        return "internal", f"{type(err).__name__}: {str(err)[:200]}"
    return "silent", "returned"


def accepts(entry: Entry, name: str, value: Any) -> tuple[bool, str]:
    """Whether a good value is accepted (no exception)."""
    try:
        _call(entry, name, value)
    except _Hang:
        return False, "hang"
    except Exception as err:  # noqa: BLE001
        return False, f"{type(err).__name__}: {str(err)[:200]}"
    return True, ""


def cases() -> Iterator[tuple[Entry, str, Any]]:
    for entry in entries():
        for name, values in entry.bad.items():
            for value in values:
                yield entry, name, value


def good_cases() -> Iterator[tuple[Entry, str, Any]]:
    for entry in entries():
        for name, values in entry.good.items():
            for value in values:
                yield entry, name, value


__all__ = ["Entry", "accepts", "cases", "catalog_name", "classify", "entries", "good_cases", "public_callables"]


def same_as_list(entry: Entry, name: str, value: Gen) -> bool:
    """Whether a call with a fresh generator returns what the call with the same items as a list returns."""
    return repr(_call(entry, name, value)) == repr(_call(entry, name, list(value.items)))


def module_of(entry: Entry) -> str:
    parts = entry.name.split(".")
    return ".".join(parts[:2]) if parts[0] == "eval" else parts[0]


def table() -> dict[str, dict[str, int]]:
    """``{module: {outcome: count}}`` over every bad and good case (good cases: accepted or refused)."""
    import collections
    out: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for entry, name, value in cases():
        outcome, _ = classify(entry, name, value)
        out[module_of(entry)]["tried"] += 1
        out[module_of(entry)][outcome] += 1
    for entry, name, value in good_cases():
        ok, _ = accepts(entry, name, value)
        if ok and isinstance(value, Gen) and not same_as_list(entry, name, value):
            ok = False
        out[module_of(entry)]["good"] += 1
        out[module_of(entry)]["refused" if not ok else "accepted"] += 1
    return out


def limit_memory(gib: int = 4) -> None:
    """Cap this process's heap, so a call that allocates without bound fails with MemoryError."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = gib << 30
    if soft == resource.RLIM_INFINITY or soft > cap:
        resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))


def main() -> None:
    import sys
    limit_memory()
    if "--trace" in sys.argv:
        import time
        for entry, name, value in cases():
            start = time.perf_counter()
            outcome, detail = classify(entry, name, value)
            print(f"{time.perf_counter() - start:6.2f} {outcome:9} {entry.name}({name}={_show(value)})", flush=True)
        return
    show = "--show" in sys.argv
    cols = ("tried", "clear", "unnamed", "internal", "silent", "hang", "good", "refused")
    rows = table()
    print(f"{'module':14}" + "".join(f"{c:>9}" for c in cols))
    total = {c: 0 for c in cols}
    for mod in sorted(rows):
        print(f"{mod:14}" + "".join(f"{rows[mod][c]:>9}" for c in cols))
        for c in cols:
            total[c] += rows[mod][c]
    print(f"{'total':14}" + "".join(f"{total[c]:>9}" for c in cols))
    if show:
        for entry, name, value in cases():
            outcome, detail = classify(entry, name, value)
            if outcome != "clear":
                print(f"{outcome:9} {entry.name}({name}={_show(value)}): {detail}")
        for entry, name, value in good_cases():
            ok, detail = accepts(entry, name, value)
            if ok and isinstance(value, Gen) and not same_as_list(entry, name, value):
                ok, detail = False, "a generator gives another result than the list"
            if not ok:
                print(f"refused   {entry.name}({name}={_show(value)}): {detail}")
    missing = sorted({catalog_name(n) for n in public_callables()} - {e.name for e in entries()})
    print("not catalogued:", missing)


def _show(value: Any) -> str:
    try:
        text = repr(value)
    except ValueError:
        text = f"<{type(value).__name__}>"
    return text if len(text) < 60 else text[:57] + "..."


if __name__ == "__main__":
    main()
