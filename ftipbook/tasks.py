"""Tasks, task laws, evaluation inference protocols and utilities (ftip-001N to ftip-001V).

The objects of the section *Tasks and evaluation interfaces*, kept apart as the note keeps them:

* a :class:`Task` ``T = (X_T, O_T, Adm_T)`` (ftip-001O): finite instances, text outcomes and a
  well-formedness predicate that says nothing about correctness;
* a :class:`TaskLaw` ``mu_T`` on the instances and an :class:`EvaluationSample`, a declared joint
  law of ``(X_1, ..., X_N)`` whose marginals are ``mu_T`` (ftip-001Q); independence is a flag the
  sample declares and that is checked, never assumed;
* :class:`Resources`, points of ``B_eval = R_+^m`` with named coordinates and the coordinatewise
  order (ftip-001N);
* an :class:`InferenceProtocol` ``I(M, x, b_eval; xi) = (o, c)`` (ftip-001R): prompt template,
  decoding (temperature, top-k, top-p), token horizon (stopping), candidate count and selection
  (first, majority vote, checker, verifier), allowed tools; a run returns the outcome and the
  realized resource vector ``c``, counted from the run, and refuses with :class:`BudgetExceeded`
  when ``c <= b_eval`` fails;
* a :class:`RetryProtocol`, the interactive realization of the same task: answer, observe a
  public tool's verdict, retry (ftip-001P);
* an :class:`Evaluator` applying a seeded scalar or vector utility ``u_T(x, o; omega)`` to
  admissible pairs only (ftip-001T), and per-coordinate summaries, group summaries and Pareto
  dominance that never add coordinates (:func:`summarize`, :func:`dominates`; ftip-006N);
* the information boundary of ftip-001V: a protocol receives a :class:`PublicInstance`; the
  reference answer lives in an :class:`EvaluatorSecret`, which raises
  :class:`InformationBoundaryError` when read while a protocol runs.

Decoding uses :func:`ftipbook.model.generate.generate`. Resource coordinates are counts (prompt
tokens, new tokens, candidates, tool calls, verifier calls), not seconds, so a run's resource
vector is the same on every machine.
"""
from __future__ import annotations

import contextlib
import hashlib
import math
import random
import re
import string
from collections import Counter
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from numbers import Real

import torch

from ftipbook import checks
from ftipbook.artifact import ModelArtifact
from ftipbook.checks import NotFoundError, show
from ftipbook.model.generate import StopReason, generate
from ftipbook.model.transformer import DecoderLM
from ftipbook.prob import FiniteLaw

#: The resource coordinates of a protocol run, in this order (all counts; ftip-001R).
PROTOCOL_RESOURCES = ("prompt_tokens", "new_tokens", "candidates", "tool_calls", "verifier_calls")
#: The empty outcome, of a candidate that reaches the token horizon without stopping (no answer).
NO_ANSWER = ""
#: The candidate-selection rules of :class:`InferenceProtocol`.
SELECTIONS = ("first", "majority", "checker", "verifier")
#: The largest joint law (number of N-tuples) the exact evaluation-sample constructors list.
_MAX_TUPLES = 10**6


# --- the information boundary (ftip-001V) -------------------------------------------------------
class InformationBoundaryError(RuntimeError):
    """Evaluator-only information was read while an inference protocol was running (ftip-001V)."""


_RUNNING: ContextVar[str | None] = ContextVar("ftipbook_tasks_running_protocol", default=None)
#: Special attributes that would expose an EvaluatorSecret's fields wholesale (vars, copy, pickle).
_SECRET_DUNDERS = frozenset({"__dict__", "__getstate__", "__reduce__", "__reduce_ex__"})


@contextlib.contextmanager
def _protocol_running(name: str) -> Iterator[None]:
    token = _RUNNING.set(name)
    try:
        yield
    finally:
        _RUNNING.reset(token)


@dataclass(frozen=True)
class PublicInstance:
    """The public part of a task instance ``x`` (ftip-001V): what a protocol may see.

    ``prompt`` is the instance text, ``tools`` the names of the tools the instance offers and
    ``schema`` a description of the expected response format.
    """

    instance_id: str
    prompt: str
    tools: tuple[str, ...] = ()
    schema: str = ""

    def __post_init__(self) -> None:
        for name in ("instance_id", "prompt", "schema"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"PublicInstance.{name} must be a str, got {type(getattr(self, name)).__name__}")
        if not self.instance_id:
            raise ValueError("PublicInstance.instance_id must be a nonempty str")
        if not isinstance(self.tools, tuple) or not all(isinstance(t, str) and t for t in self.tools):
            raise TypeError(f"PublicInstance.tools must be a tuple of nonempty str, got {self.tools!r}")


@dataclass(frozen=True, repr=False)
class EvaluatorSecret:
    """Evaluator-only information of an instance (ftip-001V): the reference answer and hidden tests.

    Reading any field while an :class:`InferenceProtocol` runs raises
    :class:`InformationBoundaryError`; the evaluator reads it outside protocol runs.
    """

    reference: str
    hidden_tests: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.reference, str):
            raise TypeError(f"EvaluatorSecret.reference must be a str, got {type(self.reference).__name__}")
        if not isinstance(self.hidden_tests, tuple) or not all(isinstance(t, str) for t in self.hidden_tests):
            raise TypeError(f"EvaluatorSecret.hidden_tests must be a tuple of str, got {self.hidden_tests!r}")

    def __getattribute__(self, name: str):
        if not name.startswith("__") or name in _SECRET_DUNDERS:
            running = _RUNNING.get()
            if running is not None:
                raise InformationBoundaryError(
                    f"protocol {running!r} read the evaluator-only field {name!r}; a protocol receives only the "
                    f"public instance (ftip-001V)"
                )
        return object.__getattribute__(self, name)

    def __repr__(self) -> str:
        return "EvaluatorSecret(<evaluator-only>)"


@dataclass(frozen=True)
class Instance:
    """One instance: its public view and its evaluator-only record (ftip-001V)."""

    public: PublicInstance
    secret: EvaluatorSecret

    def __post_init__(self) -> None:
        if not isinstance(self.public, PublicInstance):
            raise TypeError(f"Instance.public must be a PublicInstance, got {type(self.public).__name__}")
        if not isinstance(self.secret, EvaluatorSecret):
            raise TypeError(f"Instance.secret must be an EvaluatorSecret, got {type(self.secret).__name__}")

    @property
    def instance_id(self) -> str:
        return self.public.instance_id


# --- tasks (ftip-001O) -----------------------------------------------------------------------------
_INTEGER = re.compile(r"0|-?[1-9][0-9]*")


def parses_as_integer(x: PublicInstance, o: str) -> bool:
    """Admissibility of an arithmetic answer: ``o`` is a decimal integer without leading zeros or spaces."""
    return _INTEGER.fullmatch(o) is not None


def is_text(o: object) -> bool:
    """Membership in the outcome set of text tasks: ``O_T`` is the set of strings."""
    return isinstance(o, str)


@dataclass(frozen=True)
class Task:
    """``T = (X_T, O_T, Adm_T)`` (ftip-001O) on a finite instance set.

    ``instances`` is ``X_T`` (distinct ids), ``is_outcome`` decides membership in ``O_T`` and
    ``admissible(x, o)`` is the declared well-formedness predicate, evaluated on the public
    instance: it says whether ``o`` can be interpreted for ``x``, not whether it is correct.
    """

    name: str
    instances: tuple[Instance, ...]
    admissible: Callable[[PublicInstance, str], bool] = parses_as_integer
    is_outcome: Callable[[object], bool] = is_text

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Task.name must be a nonempty str, got {self.name!r}")
        if not isinstance(self.instances, tuple) or not self.instances:
            raise ValueError("Task.instances must be a nonempty tuple of Instance")
        if not all(isinstance(i, Instance) for i in self.instances):
            raise TypeError("Task.instances must hold Instance objects")
        ids = [i.instance_id for i in self.instances]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"Task.instances repeats the ids {repeated[:3]}")
        for name in ("admissible", "is_outcome"):
            if not callable(getattr(self, name)):
                raise TypeError(f"Task.{name} must be callable")
        object.__setattr__(self, "_by_id", {i.instance_id: i for i in self.instances})

    @property
    def ids(self) -> tuple[str, ...]:
        """The instance ids, in order."""
        return tuple(i.instance_id for i in self.instances)

    def __getitem__(self, instance_id: str) -> Instance:
        if not isinstance(instance_id, str) or instance_id not in self._by_id:
            raise NotFoundError(f"instance_id={show(instance_id)} is not an instance of task {self.name!r}")
        return self._by_id[instance_id]

    def is_admissible(self, x: PublicInstance | Instance, o: object) -> bool:
        """``Adm_T(x, o)``; ``x`` must be an instance of the task and ``o`` an element of ``O_T``."""
        public = x.public if isinstance(x, Instance) else x
        if not isinstance(public, PublicInstance):
            raise TypeError(f"x must be a PublicInstance or Instance, got {type(x).__name__}")
        if public.instance_id not in self._by_id or self._by_id[public.instance_id].public != public:
            raise ValueError(f"x={public.instance_id!r} is not an instance of task {self.name!r}")
        if not self.is_outcome(o):
            raise ValueError(f"o={o!r} is not in the outcome set of task {self.name!r}")
        return bool(self.admissible(public, o))


def arithmetic_task(name: str, documents: Sequence, tools: tuple[str, ...] = ()) -> Task:
    """The arithmetic task of a list of :class:`~ftipbook.data.corpus.Document` (e.g. a zoo benchmark).

    The public instance is the prompt (``"17+58="``); the reference answer is evaluator-only;
    admissibility is :func:`parses_as_integer`.
    """
    documents = list(documents)
    if not documents:
        raise ValueError("documents must be a nonempty sequence of Documents")
    missing = [getattr(d, "doc_id", d) for d in documents if getattr(d, "answer", None) is None]
    if missing:
        raise ValueError(f"documents without a reference answer: {missing[:3]}")
    instances = tuple(
        Instance(PublicInstance(d.doc_id, d.prompt, tools, "a decimal integer"), EvaluatorSecret(d.answer))
        for d in documents
    )
    return Task(name, instances, parses_as_integer)


# --- task laws and evaluation samples (ftip-001Q) --------------------------------------------------
@dataclass(frozen=True)
class TaskLaw:
    """``mu_T``: a probability law on the instance ids of ``task`` (ftip-001Q)."""

    task: Task
    law: FiniteLaw

    def __post_init__(self) -> None:
        if not isinstance(self.task, Task):
            raise TypeError(f"TaskLaw.task must be a Task, got {type(self.task).__name__}")
        if not isinstance(self.law, FiniteLaw):
            raise TypeError(f"TaskLaw.law must be a FiniteLaw, got {type(self.law).__name__}")
        outside = [x for x in self.law.outcomes if x not in set(self.task.ids)]
        if outside:
            raise ValueError(f"TaskLaw.law puts instances outside the task on its outcomes: {outside[:3]}")

    @classmethod
    def uniform(cls, task: Task) -> TaskLaw:
        """The uniform law on the instances (a fixed held-out benchmark)."""
        return cls(task, FiniteLaw.uniform(task.ids))

    @classmethod
    def from_weights(cls, task: Task, weights: Mapping[str, int | Fraction | float]) -> TaskLaw:
        """The law proportional to ``weights`` (one per instance id; same instances, another law)."""
        if not isinstance(weights, Mapping):
            raise TypeError(f"weights must be a mapping instance_id -> weight, got {type(weights).__name__}")
        return cls(task, FiniteLaw.from_weights(weights))

    def __call__(self, instance_id: str):
        return self.law(instance_id) if instance_id in self.law.outcomes else Fraction(0)

    def expectation(self, f: Callable[[Instance], float | Fraction]):
        """``E_{X ~ mu_T} f(X)``, exact when the law and the values are exact."""
        if not callable(f):
            raise TypeError("f must be callable on an Instance")
        return sum((p * f(self.task[x]) for x, p in self.law.items() if p), Fraction(0))


@dataclass(frozen=True)
class EvaluationSample:
    """A declared joint law of ``(X_1, ..., X_N)`` whose marginals are ``mu_T`` (ftip-001Q).

    ``joint`` is a finite law on ``N``-tuples of instance ids. ``independent`` declares the
    extra assumption that the draws are independent; it is checked against ``joint``, and a
    sample that does not declare it is not treated as independent.
    """

    task_law: TaskLaw
    joint: FiniteLaw
    independent: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.task_law, TaskLaw):
            raise TypeError(f"EvaluationSample.task_law must be a TaskLaw, got {type(self.task_law).__name__}")
        if not isinstance(self.joint, FiniteLaw):
            raise TypeError(f"EvaluationSample.joint must be a FiniteLaw, got {type(self.joint).__name__}")
        checks.boolean("independent", self.independent)
        sizes = {len(t) if isinstance(t, tuple) else -1 for t in self.joint.outcomes}
        if len(sizes) != 1 or min(sizes) < 1:
            raise ValueError("EvaluationSample.joint must be a law on tuples of one common length N >= 1")
        for i in range(self.size):
            marginal = self.marginal(i)
            for x in set(marginal) | set(self.task_law.law.support):
                if not _close(marginal.get(x, 0), self.task_law(x)):
                    raise ValueError(
                        f"marginal {i} of the joint law gives {x!r} probability {marginal.get(x, 0)}, but the task "
                        f"law gives {self.task_law(x)}: an evaluation sample's marginals must equal mu_T"
                    )
        if self.independent:
            for t, p in self.joint.items():
                q = math.prod((self.task_law(x) for x in t), start=Fraction(1))
                if not _close(p, q):
                    raise ValueError(
                        f"independent=True but P{t} = {p} differs from the product of marginals {q}"
                    )

    @property
    def size(self) -> int:
        """``N``."""
        return len(self.joint.outcomes[0])

    def marginal(self, i: int) -> dict[str, float | Fraction]:
        """The law of ``X_i`` (0-based) as ``{instance_id: probability}``."""
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(self.joint.outcomes[0]):
            raise ValueError(f"i={i!r} must be an int in [0, {len(self.joint.outcomes[0])})")
        out: dict[str, float | Fraction] = {}
        for t, p in self.joint.items():
            out[t[i]] = out.get(t[i], 0) + p
        return out

    @classmethod
    def iid(cls, task_law: TaskLaw, n: int) -> EvaluationSample:
        """``N`` independent draws from ``mu_T`` (the product law, declared independent)."""
        n = _count("n", n, 1)
        support = task_law.law.support
        if len(support) ** n > _MAX_TUPLES:
            raise ValueError(f"n={n}: the joint law would list {len(support)}**{n} tuples, more than {_MAX_TUPLES}")
        joint = {t: math.prod((task_law(x) for x in t), start=Fraction(1)) for t in product(support, repeat=n)}
        return cls(task_law, FiniteLaw(joint), independent=True)

    @classmethod
    def without_replacement(cls, task_law: TaskLaw, n: int) -> EvaluationSample:
        """``N`` distinct instances drawn in order without replacement, each step proportional to ``mu_T``.

        The marginals equal ``mu_T`` only when ``mu_T`` is uniform on its support; otherwise the
        construction is refused by the marginal check.
        """
        n = _count("n", n, 1)
        support = task_law.law.support
        if len(support) ** n > _MAX_TUPLES:
            raise ValueError(f"n={n}: the joint law would list {len(support)}**{n} tuples, more than {_MAX_TUPLES}")
        if n > len(support):
            raise ValueError(f"n={n} exceeds the {len(support)} instances in the support of the task law")
        joint: dict[tuple, float | Fraction] = {}
        for t in product(support, repeat=n):
            if len(set(t)) < n:
                continue
            p, left = Fraction(1), Fraction(1)
            for x in t:
                p, left = p * task_law(x) / left, left - task_law(x)
            joint[t] = p
        return cls(task_law, FiniteLaw(joint), independent=False)

    def draw(self, rng: random.Random) -> tuple[str, ...]:
        """One draw of ``(X_1, ..., X_N)`` from the joint law."""
        if not isinstance(rng, random.Random):
            raise TypeError(f"rng must be a random.Random, got {type(rng).__name__}")
        outcomes, weights = zip(*((t, float(p)) for t, p in self.joint.items()))
        return rng.choices(outcomes, weights)[0]

    def mean_variance(self, f: Callable[[Instance], float | Fraction]):
        """``Var((1/N) sum_i f(X_i))`` under the joint law (exact for exact inputs)."""
        if not callable(f):
            raise TypeError("f must be callable on an Instance")
        values = {x: f(self.task_law.task[x]) for t in self.joint.outcomes for x in t}
        n = self.size
        first = sum((p * Fraction(sum(values[x] for x in t)) / n for t, p in self.joint.items()), Fraction(0))
        second = sum((p * (Fraction(sum(values[x] for x in t)) / n) ** 2 for t, p in self.joint.items()), Fraction(0))
        return second - first**2


def _close(a: float | Fraction, b: float | Fraction) -> bool:
    if isinstance(a, (int, Fraction)) and isinstance(b, (int, Fraction)):
        return a == b
    return abs(float(a) - float(b)) <= 1e-12


#: The largest count (tokens, candidates, rounds, draws) a protocol or sample declares.
MAX_COUNT = 10**6


def _count(name: str, n: object, low: int = 0) -> int:
    return checks.integer(name, n, low, MAX_COUNT)


def _check_template(name: str, template: object) -> str:
    """A prompt template: a str whose only replacement field is one plain ``{prompt}`` (no conversion such
    as ``!r``, no format spec, no attribute or index); ``{{`` and ``}}`` stand for braces."""
    allowed = "a str with exactly one plain {prompt} field (no !r/!s conversion, no :spec; {{ }} for braces)"
    if not isinstance(template, str):
        raise TypeError(f"{name} must be {allowed}, got {type(template).__name__} {show(template)}")
    try:
        fields = [(f, conv, spec) for _, f, spec, conv in string.Formatter().parse(template) if f is not None]
    except ValueError as err:
        raise ValueError(f"{name}={show(template)} must be {allowed}: {err}") from None
    if fields != [("prompt", None, "")]:
        raise ValueError(f"{name}={show(template)} has a placeholder other than one plain {{prompt}}: it must be "
                         f"{allowed}; its fields are "
                         f"{[f + ('!' + c if c else '') + (':' + sp if sp else '') for f, c, sp in fields]}")
    return template


# --- resource vectors (ftip-001N) ------------------------------------------------------------------
@dataclass(frozen=True)
class Resources:
    """A point of ``B_eval = R_+^m`` with named coordinates (ftip-001N), e.g. ``Resources.of(new_tokens=8)``.

    ``a <= b`` is the coordinatewise order; two vectors may be incomparable (neither ``a <= b``
    nor ``b <= a``). Comparing or adding vectors over different coordinates raises
    ``ValueError``: coordinates of different units never mix.
    """

    coords: tuple[tuple[str, float | Fraction], ...]

    def __post_init__(self) -> None:
        if not isinstance(self.coords, tuple) or not self.coords:
            raise ValueError("Resources.coords must be a nonempty tuple of (name, value) pairs")
        names = []
        for pair in self.coords:
            if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str) and pair[0]):
                raise TypeError(f"Resources.coords must hold (name, value) pairs, got {pair!r}")
            name, value = pair
            if isinstance(value, bool) or not isinstance(value, Real):
                raise TypeError(f"resource {name!r} must be a real number, got {type(value).__name__} {show(value)}")
            checks.real(f"resource {name}", value, 0)
            names.append(name)
        if len(set(names)) != len(names):
            raise ValueError(f"Resources repeats a coordinate name: {names}")

    @classmethod
    def of(cls, **values: float | Fraction) -> Resources:
        """The vector with the given coordinates, in the given order."""
        return cls(tuple(values.items()))

    @classmethod
    def zeros(cls, names: Sequence[str] = PROTOCOL_RESOURCES) -> Resources:
        """The zero vector on ``names``."""
        return cls(tuple((n, 0) for n in names))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.coords)

    def __getitem__(self, name: str) -> float | Fraction:
        for n, v in self.coords:
            if n == name:
                return v
        raise KeyError(f"{name!r} is not a coordinate; coordinates: {self.names}")

    def as_dict(self) -> dict[str, float | Fraction]:
        return dict(self.coords)

    def _same_space(self, other: object) -> Resources:
        if not isinstance(other, Resources):
            raise TypeError(f"can only compare Resources with Resources, got {type(other).__name__}")
        if set(self.names) != set(other.names):
            raise ValueError(f"resource vectors on different coordinates: {self.names} and {other.names}")
        return other

    def __le__(self, other: object) -> bool:
        other = self._same_space(other)
        return all(v <= other[n] for n, v in self.coords)

    def __ge__(self, other: object) -> bool:
        return self._same_space(other) <= self

    def __add__(self, other: object) -> Resources:
        other = self._same_space(other)
        return Resources(tuple((n, v + other[n]) for n, v in self.coords))

    def exceeded(self, budget: Resources) -> tuple[str, ...]:
        """The coordinates on which ``self`` is above ``budget``."""
        budget = self._same_space(budget)
        return tuple(n for n, v in self.coords if v > budget[n])


class BudgetExceeded(RuntimeError):
    """A protocol run would use more than its declared budget on some coordinate (ftip-001R).

    ``coordinate``, ``used`` (the amount the run needed), ``allowed``, ``usage`` (the resource
    vector counted up to the refusal) and ``stop_reason`` (``"budget:<coordinate>"``).
    """

    def __init__(self, coordinate: str, used: float | Fraction, allowed: float | Fraction, usage: Resources) -> None:
        self.coordinate, self.used, self.allowed, self.usage = coordinate, used, allowed, usage
        self.stop_reason = f"budget:{coordinate}"
        super().__init__(
            f"the run needs {coordinate}={used} but the budget allows {allowed} (stop reason {self.stop_reason})"
        )


class _Meter:
    """Counts the resources of one run and refuses a charge that would exceed the budget."""

    def __init__(self, budget: Resources) -> None:
        self.budget = budget
        self.used = dict.fromkeys(PROTOCOL_RESOURCES, 0)

    def charge(self, name: str, amount: int) -> None:
        self.used[name] += amount
        if self.used[name] > self.budget[name]:
            raise BudgetExceeded(name, self.used[name], self.budget[name], self.usage())

    def usage(self) -> Resources:
        return Resources(tuple(self.used.items()))


# --- inference protocols (ftip-001R, ftip-001S) -----------------------------------------------------
@dataclass(frozen=True)
class Candidate:
    """One decoded candidate: its outcome text, token count, log-probability and stop reason."""

    text: str
    new_tokens: int
    logprob: float
    stop_reason: StopReason


@dataclass(frozen=True)
class Tool:
    """A public tool a protocol may call, ``fn(x, candidate) -> value``; each call counts one ``tool_calls``."""

    name: str
    fn: Callable[[PublicInstance, Candidate], object]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Tool.name must be a nonempty str, got {self.name!r}")
        if not callable(self.fn):
            raise TypeError(f"Tool.fn must be callable, got {type(self.fn).__name__}")


_OPERATION = re.compile(r"\s*(-?\d+)\s*([+\-*])\s*(-?\d+)\s*=\s*")


def _calculate(x: PublicInstance, candidate: Candidate) -> bool:
    match = _OPERATION.fullmatch(x.prompt)
    if match is None:
        raise ValueError(f"the calculator cannot parse the prompt {x.prompt!r} as 'a op b='")
    a, op, b = int(match[1]), match[2], int(match[3])
    value = a + b if op == "+" else a - b if op == "-" else a * b
    return candidate.text == str(value)


#: A checker that recomputes ``a op b`` from the public prompt ``"a op b="`` (no reference needed).
CALCULATOR = Tool("calculator", _calculate)


def logprob_score(x: PublicInstance, candidate: Candidate) -> float:
    """A verifier: the candidate's sequence log-probability under the model that produced it."""
    return candidate.logprob


@dataclass(frozen=True)
class ProtocolResult:
    """``(o, c)`` of one protocol run (ftip-001R), with the candidates it chose among."""

    outcome: str
    resources: Resources
    candidates: tuple[Candidate, ...]
    chosen: int  # index of the chosen candidate, -1 when the outcome is NO_ANSWER without a candidate


@dataclass(frozen=True)
class InferenceProtocol:
    """``I(M, x, b_eval; xi) = (o, c)`` (ftip-001R): every choice the checkpoint does not fix.

    * prompt construction: ``template`` with ``{prompt}`` standing for the public prompt;
    * decoding: ``temperature`` (``0`` greedy), ``top_k``, ``top_p`` of
      :func:`~ftipbook.model.generate.generate`;
    * stopping: the artifact's ``eos`` or ``max_new_tokens`` (a candidate that reaches the
      horizon without ``eos`` has outcome :data:`NO_ANSWER`);
    * candidates: ``n_candidates``, drawn in one batched ``generate`` call with seed ``xi``;
    * selection (test-time search): ``"first"``; ``"majority"`` (most frequent answer among the
      candidates that stopped, ties to the earliest); ``"checker"`` (the first candidate the
      tool ``checker`` accepts, else the first candidate; one tool call per candidate checked);
      ``"verifier"`` (largest ``verifier`` score, ties to the earliest; one verifier call per
      candidate);
    * tools: ``checker`` must be offered by the public instance (``x.tools``).
    """

    name: str
    max_new_tokens: int
    template: str = "{prompt}"
    temperature: float = 0.0
    top_k: int | None = None
    top_p: float | None = None
    n_candidates: int = 1
    selection: str = "first"
    checker: Tool | None = None
    verifier: Callable[[PublicInstance, Candidate], float] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name={self.name!r} must be a nonempty str")
        _count("max_new_tokens", self.max_new_tokens, 1)
        _count("n_candidates", self.n_candidates, 1)
        _check_template("template", self.template)
        checks.real("temperature (0 = greedy)", self.temperature, 0)
        if self.top_k is not None:
            _count("top_k", self.top_k, 1)
        if self.top_p is not None:
            checks.real("top_p (or None)", self.top_p, 0, 1, low_open=True)
        if self.selection not in SELECTIONS:
            raise ValueError(f"selection={self.selection!r} must be one of {SELECTIONS}")
        if self.checker is not None and not isinstance(self.checker, Tool):
            raise TypeError(f"checker must be a Tool, got {type(self.checker).__name__}")
        if (self.selection == "checker") != (self.checker is not None):
            raise ValueError("selection='checker' needs a checker Tool, and a checker needs selection='checker'")
        if self.verifier is not None and not callable(self.verifier):
            raise TypeError(f"verifier must be callable, got {type(self.verifier).__name__}")
        if (self.selection == "verifier") != (self.verifier is not None):
            raise ValueError("selection='verifier' needs a verifier, and a verifier needs selection='verifier'")

    def prompt_text(self, x: PublicInstance) -> str:
        """The constructed prompt for ``x``."""
        return self.template.format(prompt=x.prompt)

    def run(self, artifact: ModelArtifact, x: PublicInstance, budget: Resources, seed: int,
            *, model: DecoderLM | None = None) -> ProtocolResult:
        """Run the protocol on the public instance ``x`` with inference seed ``seed`` (``xi``).

        ``budget`` is a :class:`Resources` on :data:`PROTOCOL_RESOURCES`. Raises
        :class:`BudgetExceeded` when the run needs more than the budget on a coordinate, and
        ``TypeError`` when ``x`` is not a :class:`PublicInstance` (an :class:`Instance` carries
        evaluator-only information). ``model`` may pass ``artifact.model()`` built once.
        """
        if not isinstance(artifact, ModelArtifact):
            raise TypeError(f"artifact must be a ModelArtifact, got {type(artifact).__name__}")
        if not isinstance(x, PublicInstance):
            raise TypeError(f"x must be a PublicInstance (the protocol sees only public data), got {type(x).__name__}")
        if not isinstance(budget, Resources) or set(budget.names) != set(PROTOCOL_RESOURCES):
            raise ValueError(f"budget={budget!r} must be a Resources on the coordinates {PROTOCOL_RESOURCES}")
        seed = checks.seed("seed", seed)
        if artifact.tokenizer is None or artifact.tokenizer.eos_id is None:
            raise ValueError("the artifact needs a tokenizer with an eos token to run a text protocol")
        if model is None:
            model = artifact.model()
        elif not isinstance(model, DecoderLM) or model.cfg != artifact.cfg:
            raise ValueError("model must be a DecoderLM built from the artifact (artifact.model())")
        if self.checker is not None and self.checker.name not in x.tools:
            raise ValueError(f"the checker {self.checker.name!r} is not among the tools {x.tools} offered by x")
        with _protocol_running(self.name):
            return self._run(artifact, model, x, _Meter(budget), seed)

    def _run(self, artifact: ModelArtifact, model: DecoderLM, x: PublicInstance, meter: _Meter,
             seed: int) -> ProtocolResult:
        ids = artifact.encode(self.prompt_text(x))
        if not ids:
            raise ValueError(f"the constructed prompt {self.prompt_text(x)!r} encodes to no tokens")
        k, eos = self.n_candidates, artifact.tokenizer.eos_id
        meter.charge("candidates", k)
        meter.charge("prompt_tokens", k * len(ids))
        device = next(model.parameters()).device
        outs = generate(model, torch.tensor([ids] * k, device=device), self.max_new_tokens,
                        temperature=self.temperature, top_k=self.top_k, top_p=self.top_p,
                        seed=seed if self.temperature > 0 else None, eos_id=eos)
        candidates = []
        for out in outs:
            new = out.new_tokens.tolist()
            text = artifact.decode(new[:-1]) if out.stop_reason is StopReason.EOS else NO_ANSWER
            candidates.append(Candidate(text, len(new), float(out.logprobs.sum()), out.stop_reason))
        meter.charge("new_tokens", sum(c.new_tokens for c in candidates))
        chosen = self._select(x, candidates, meter)
        outcome = candidates[chosen].text if chosen >= 0 else NO_ANSWER
        usage = meter.usage()
        assert usage <= meter.budget  # guaranteed by the meter
        return ProtocolResult(outcome, usage, tuple(candidates), chosen)

    def _select(self, x: PublicInstance, candidates: list[Candidate], meter: _Meter) -> int:
        if self.selection == "first":
            return 0
        if self.selection == "majority":
            return majority_index([c.text for c in candidates])
        if self.selection == "checker":
            for j, c in enumerate(candidates):
                meter.charge("tool_calls", 1)
                if self.checker.fn(x, c):
                    return j
            return 0
        scores = []
        for c in candidates:
            meter.charge("verifier_calls", 1)
            score = float(self.verifier(x, c))
            if math.isnan(score):
                raise ValueError(f"the verifier returned NaN for candidate {c.text!r}")
            scores.append(score)
        return max(range(len(scores)), key=lambda j: (scores[j], -j))


@dataclass(frozen=True)
class RetryProtocol:
    """An interactive realization of a response task (ftip-001P): answer, observe a tool's verdict, retry.

    Round ``r = 0, 1, ...`` draws one candidate with seed ``derive_seed(xi, "round", r)`` and
    submits it to the public tool ``checker``; the verdict is the observation. The interaction
    stops at the first accepted candidate or after ``rounds`` rounds, and the outcome is the
    last candidate submitted. The number of rounds is a stopping time: it depends on the
    observations, so two environments (checkers) give the same policy different outcome laws.
    """

    name: str
    max_new_tokens: int
    checker: Tool
    rounds: int
    temperature: float = 1.0
    template: str = "{prompt}"

    def __post_init__(self) -> None:
        if not isinstance(self.checker, Tool):
            raise TypeError(f"checker must be a Tool, got {type(self.checker).__name__}")
        _count("rounds", self.rounds, 1)
        checks.text("name", self.name)
        _check_template("template", self.template)
        if isinstance(self.temperature, bool) or not isinstance(self.temperature, Real):
            raise TypeError(f"temperature={show(self.temperature)} must be a finite number > 0 (retries must differ)")
        checks.real("temperature (retries must differ)", self.temperature, 0, low_open=True)
        object.__setattr__(self, "_one", InferenceProtocol(self.name, self.max_new_tokens, self.template,
                                                           self.temperature))

    def run(self, artifact: ModelArtifact, x: PublicInstance, budget: Resources, seed: int,
            *, model: DecoderLM | None = None) -> ProtocolResult:
        """Interact with the checker on ``x``; the resources of all rounds add up within ``budget``."""
        if self.checker.name not in getattr(x, "tools", ()):
            raise ValueError(f"the checker {self.checker.name!r} is not among the tools offered by x")
        checks.seed("seed", seed)
        if not isinstance(budget, Resources) or set(budget.names) != set(PROTOCOL_RESOURCES):
            raise ValueError(f"budget={budget!r} must be a Resources on the coordinates {PROTOCOL_RESOURCES}")
        if not isinstance(artifact, ModelArtifact):
            raise TypeError(f"artifact must be a ModelArtifact, got {type(artifact).__name__}")
        model = artifact.model() if model is None else model
        meter, candidates = _Meter(budget), []
        for r in range(self.rounds):
            step = self._one.run(artifact, x, budget, derive_seed(seed, "round", r), model=model)
            for name, value in step.resources.coords:
                meter.charge(name, value)
            candidates.append(step.candidates[0])
            meter.charge("tool_calls", 1)
            with _protocol_running(self.name):
                accepted = bool(self.checker.fn(x, step.candidates[0]))
            if accepted:
                break
        return ProtocolResult(candidates[-1].text, meter.usage(), tuple(candidates), len(candidates) - 1)


def majority_index(answers: Sequence[Hashable]) -> int:
    """Index of the first occurrence of the most frequent answer other than :data:`NO_ANSWER`.

    Ties go to the answer that appears first; ``-1`` when every answer is :data:`NO_ANSWER`.
    """
    answers = list(answers)
    if not answers:
        raise ValueError("majority_index needs at least one answer")
    counts = Counter(a for a in answers if a != NO_ANSWER)
    if not counts:
        return -1
    top = max(counts.values())
    return next(j for j, a in enumerate(answers) if a != NO_ANSWER and counts[a] == top)


def budget(**values: float | Fraction) -> Resources:
    """A budget on :data:`PROTOCOL_RESOURCES`; unnamed coordinates default to 0."""
    unknown = set(values) - set(PROTOCOL_RESOURCES)
    if unknown:
        raise ValueError(f"unknown resource coordinates {sorted(unknown)} ({', '.join(sorted(unknown))}); allowed: "
                         f"{PROTOCOL_RESOURCES}")
    return Resources(tuple((n, values.get(n, 0)) for n in PROTOCOL_RESOURCES))


# --- utilities and evaluators (ftip-001T, ftip-006N) -----------------------------------------------
@dataclass(frozen=True)
class Utility:
    """A declared utility ``u_T(x, o; omega) in R^d`` (ftip-001T) with named coordinates.

    ``fn(instance, o, rng)`` returns ``d`` finite reals; ``rng`` is a ``random.Random`` seeded by
    the evaluator seed ``omega`` (a deterministic evaluator ignores it). ``inadmissible`` is the
    declared value of an inadmissible pair, on which ``fn`` is never called. ``bounds``, when
    given, are ``(low, high)`` per coordinate and are checked on every value (a bounded
    utility is integrable, so its expectation exists).
    """

    names: tuple[str, ...]
    fn: Callable[[Instance, str, random.Random], Sequence[float | Fraction]]
    inadmissible: tuple[float | Fraction, ...]
    bounds: tuple[tuple[float | Fraction, float | Fraction], ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.names, tuple) or not self.names or not all(isinstance(n, str) and n for n in self.names):
            raise ValueError(f"names={self.names!r} must be a nonempty tuple of nonempty str (d >= 1)")
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"names={self.names!r} repeats a coordinate")
        if not callable(self.fn):
            raise TypeError(f"fn must be callable, got {type(self.fn).__name__}")
        if self.bounds is not None and (not isinstance(self.bounds, tuple) or len(self.bounds) != self.d
                                        or any(len(b) != 2 or not b[0] <= b[1] for b in self.bounds)):
            raise ValueError(f"bounds={self.bounds!r} must be {self.d} pairs (low, high) with low <= high")
        object.__setattr__(self, "inadmissible", self._check(self.inadmissible, "inadmissible"))

    @property
    def d(self) -> int:
        """The utility dimension ``d`` (``1``: scalar utility)."""
        return len(self.names)

    def _check(self, value: object, what: str) -> tuple[float, ...]:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != self.d:
            raise ValueError(f"{what}={value!r} must be a sequence of {self.d} reals ({self.names})")
        out = []
        for n, v in zip(self.names, value):
            if isinstance(v, bool) or not isinstance(v, Real) or not math.isfinite(v):
                raise ValueError(f"{what}: coordinate {n!r} = {v!r} must be a finite real")
            out.append(v)
        if self.bounds is not None:
            for n, v, (lo, hi) in zip(self.names, out, self.bounds):
                if not lo <= v <= hi:
                    raise ValueError(f"{what}: coordinate {n!r} = {v!r} lies outside its declared bounds [{lo}, {hi}]")
        return tuple(out)


def _exact_match(item: Instance, o: str, rng: random.Random) -> tuple[int]:
    return (int(o == item.secret.reference),)


#: ``d = 1``, values in ``{0, 1}``: the outcome equals the reference answer (a deterministic evaluator).
EXACT_MATCH = Utility(("correct",), _exact_match, (0,), ((0, 1),))


def noisy_judge(flip: Fraction | float) -> Utility:
    """A seeded binary judge: exact match, reported flipped with probability ``flip`` (ftip-001T)."""
    flip = checks.probability("flip", flip)

    def judge(item: Instance, o: str, rng: random.Random) -> tuple[int]:
        correct = int(o == item.secret.reference)
        return (1 - correct if rng.random() < flip else correct,)

    return Utility(("judged_correct",), judge, (0,), ((0, 1),))


@dataclass(frozen=True)
class Evaluator:
    """Applies ``utility`` to admissible pairs of ``task`` with evaluator seeds (ftip-001T)."""

    task: Task
    utility: Utility

    def __post_init__(self) -> None:
        if not isinstance(self.task, Task):
            raise TypeError(f"task must be a Task, got {type(self.task).__name__}")
        if not isinstance(self.utility, Utility):
            raise TypeError(f"utility must be a Utility, got {type(self.utility).__name__}")

    def score(self, instance_id: str, o: str, omega: int) -> tuple[float, ...]:
        """``u_T(x, o; omega)``; the declared inadmissible value when ``Adm_T(x, o)`` fails."""
        omega = checks.seed("omega", omega)
        if _RUNNING.get() is not None:
            raise InformationBoundaryError(f"protocol {_RUNNING.get()!r} called the evaluator (ftip-001V)")
        item = self.task[instance_id]
        if not self.task.is_admissible(item, o):
            return self.utility.inadmissible
        return self.utility._check(self.utility.fn(item, o, random.Random(omega)), "utility value")


def derive_seed(seed: int, *keys: object) -> int:
    """A seed for ``keys`` (e.g. an instance id) derived from ``seed``, the same on every machine."""
    seed = checks.seed("seed", seed)
    digest = hashlib.sha256(repr((seed, *keys)).encode()).digest()
    return int.from_bytes(digest[:7], "big")


@dataclass(frozen=True)
class EvaluationRecord:
    """One protocol run on one instance and its score, with the utility's coordinate names."""

    instance_id: str
    result: ProtocolResult
    utility: tuple[float, ...]
    names: tuple[str, ...]


def evaluate(protocol: InferenceProtocol | RetryProtocol, artifact: ModelArtifact, evaluator: Evaluator,
             instance_ids: Sequence[str], budget: Resources, *, inference_seed: int,
             evaluator_seed: int) -> list[EvaluationRecord]:
    """Run ``protocol`` on the public view of each instance and score it (ftip-001R, 001T, 001V).

    The inference seed ``xi`` and evaluator seed ``omega`` of an instance are derived from the
    two separate seeds and the instance id; the protocol sees only ``instance.public``.
    """
    if not isinstance(protocol, (InferenceProtocol, RetryProtocol)):
        raise TypeError(f"protocol must be an InferenceProtocol or RetryProtocol, got {type(protocol).__name__}")
    if not isinstance(evaluator, Evaluator):
        raise TypeError(f"evaluator must be an Evaluator, got {type(evaluator).__name__}")
    if isinstance(instance_ids, str) or not isinstance(instance_ids, Sequence) or not instance_ids:
        raise ValueError("instance_ids must be a nonempty sequence of instance ids")
    for name, seed in (("inference_seed", inference_seed), ("evaluator_seed", evaluator_seed)):
        checks.seed(name, seed)
    model = artifact.model() if isinstance(artifact, ModelArtifact) else None
    records = []
    for i in instance_ids:
        item = evaluator.task[i]
        result = protocol.run(artifact, item.public, budget, derive_seed(inference_seed, "xi", i), model=model)
        omega = derive_seed(evaluator_seed, "omega", i)
        records.append(EvaluationRecord(i, result, evaluator.score(i, result.outcome, omega), evaluator.utility.names))
    return records


# --- several evaluation quantities (ftip-006N) ------------------------------------------------------
def summarize(records: Sequence[EvaluationRecord]) -> dict[str, float | Fraction]:
    """The mean of every utility coordinate and every resource coordinate over ``records`` (ftip-006N).

    Each quantity keeps its own name and unit; nothing is added across coordinates. Means of
    integer values are exact ``Fraction`` objects.
    """
    if isinstance(records, (str, bytes)) or not isinstance(records, Sequence) or not records:
        raise ValueError("records must be a nonempty sequence of EvaluationRecord")
    if not all(isinstance(r, EvaluationRecord) for r in records):
        raise TypeError("records must hold EvaluationRecord objects")
    names, resources = records[0].names, records[0].result.resources.names
    if any(r.names != names or r.result.resources.names != resources for r in records):
        raise ValueError("records mix utilities or resource vectors with different coordinates")
    if set(names) & set(resources):
        raise ValueError(f"utility and resource coordinates share names: {sorted(set(names) & set(resources))}")
    out: dict[str, float | Fraction] = {}
    for j, name in enumerate(names):
        out[name] = _mean([r.utility[j] for r in records])
    for name in resources:
        out[name] = _mean([r.result.resources[name] for r in records])
    return out


def _mean(values: list[float | Fraction]) -> float | Fraction:
    if all(isinstance(v, (int, Fraction)) for v in values):
        return Fraction(sum(values)) / len(values)
    return math.fsum(values) / len(values)


def group_summaries(records: Sequence[EvaluationRecord], group_of: Callable[[str], Hashable]) -> dict:
    """:func:`summarize` within each group of instances (``group_of(instance_id)``), groups in first-seen order."""
    if not callable(group_of):
        raise TypeError("group_of must be callable on an instance id")
    groups: dict[Hashable, list[EvaluationRecord]] = {}
    for r in records:
        groups.setdefault(group_of(r.instance_id), []).append(r)
    return {g: summarize(rs) for g, rs in groups.items()}


def dominates(a: Mapping[str, float | Fraction], b: Mapping[str, float | Fraction], senses: Mapping[str, str]) -> bool:
    """Pareto dominance of summary ``a`` over ``b`` on the coordinates of ``senses`` (ftip-006N).

    ``senses[name]`` is ``"max"`` (higher is better) or ``"min"``; ``a`` dominates when it is no
    worse on every coordinate and strictly better on one.
    """
    if not isinstance(senses, Mapping) or not senses:
        raise ValueError("senses must be a nonempty mapping {coordinate: 'max' or 'min'}")
    bad = {n: s for n, s in senses.items() if s not in ("max", "min")}
    if bad:
        raise ValueError(f"senses must be 'max' or 'min', got {bad}")
    missing = [n for n in senses if n not in a or n not in b]
    if missing:
        raise ValueError(f"coordinates {missing} are missing from a summary")
    better = {n: (a[n] - b[n]) if s == "max" else (b[n] - a[n]) for n, s in senses.items()}
    return all(v >= 0 for v in better.values()) and any(v > 0 for v in better.values())
