"""A finite-state obstruction and the conditions for applying a toy result to a model (ftip-00JR, 00K1, 00M0).

Three objects:

* :func:`pigeonhole_obstruction` (ftip-00JR): a causal system whose state after each prefix takes
  at most ``K`` values, run on a task of ``K + 1`` (or more) prefixes whose continuation labels
  are pairwise distinct. Two prefixes share a state, the readout gives both the same label, so
  one required label is missed. The function finds that pair and names the missed label.
* :class:`QuantizedRecurrence`: a small real recurrence whose state is one of ``K`` integer
  levels, ``h_t = clip(floor(a h_{t-1} + b x_t + c + 1/2), 0, K - 1)``, with a readout table.
  With ``a = b = 1, c = 0`` it is a counter that saturates at ``K - 1``.
* :class:`Applicability` (ftip-00K1, ftip-00M0): the checklist that decides whether a toy result
  transfers to a concrete model. Each of the five conditions in :data:`CONDITIONS` (interface map,
  task, cost accounting, numerical regime, evaluation protocol) is a function that *runs* a check
  and answers verified, failed or unknown; the result applies only when all five are verified and
  is "unestablished" otherwise, with the conditions that were not verified named.
  :func:`pigeonhole_applicability` builds the five checks of the pigeonhole toy for a model
  exposed through a :class:`StateInterface`; :meth:`QuantizedRecurrence.interface` and
  :func:`kda_state_interface` expose the toy recurrence and a float32 Kimi Delta Attention layer.
"""
from __future__ import annotations

import copy
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from numbers import Real
from types import MappingProxyType
from typing import Any

import torch

#: The five conditions of ftip-00M0, in the order they are checked and printed.
CONDITIONS = ("interface map", "task", "cost accounting", "numerical regime", "evaluation protocol")

#: A prefix is a tuple of input symbols (token ids).
Prefix = tuple


def _levels(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int >= 1, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{name}={value!r} must be >= 1")
    return value


def _task(task: object) -> dict[Prefix, Hashable]:
    if not isinstance(task, Mapping):
        raise TypeError(f"task must map each prefix (a tuple) to its required continuation label, "
                        f"got {type(task).__name__}")
    seen: dict[Hashable, Prefix] = {}
    for prefix, label in task.items():
        if not isinstance(prefix, tuple):
            raise TypeError(f"task prefixes must be tuples of symbols, got {type(prefix).__name__} {prefix!r}")
        if not isinstance(label, Hashable):
            raise TypeError(f"the label of prefix {prefix!r} must be hashable, got {type(label).__name__}")
        if label in seen:
            raise ValueError(f"prefixes {seen[label]!r} and {prefix!r} both require label {label!r}; "
                             f"the task needs pairwise distinct continuation labels (ftip-00JR)")
        seen[label] = prefix
    return dict(task)


# ----------------------------------------------------------------------------------------------
# ftip-00JR: the pigeonhole obstruction
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PigeonholeWitness:
    """Two prefixes with one state, hence one answer, but two different required labels (ftip-00JR).

    ``first`` and ``second`` are the earliest colliding pair in task order, ``state`` their common
    state, ``labels`` their required labels and ``output`` the readout of ``state``. ``wrong`` is
    the prefix of the pair whose required label differs from ``output`` (``first`` when both do)
    and ``wrong_label`` that required label. ``n_states`` counts the distinct states over the
    task's prefixes and ``n_wrong`` the prefixes of the whole task answered wrongly.
    """

    first: Prefix
    second: Prefix
    state: Hashable
    labels: tuple[Hashable, Hashable]
    output: Hashable
    wrong: Prefix
    wrong_label: Hashable
    n_states: int
    n_wrong: int


def pigeonhole_obstruction(task: Mapping[Prefix, Hashable], state_of: Callable[[Prefix], Hashable],
                           readout: Callable[[Hashable], Hashable], levels: int) -> PigeonholeWitness:
    """The pair of prefixes that share a state and the label that must be wrong (ftip-00JR).

    ``task`` maps at least ``levels + 1`` prefixes to pairwise distinct labels; ``state_of(prefix)``
    is the causal system's (hashable) state after the prefix and ``readout(state)`` its
    continuation label. The hypothesis that the state takes at most ``levels`` values is checked on
    the task's prefixes (``ValueError`` when it fails). Only the state reaches the readout, so the
    two prefixes of the first collision get the same answer and one of their labels is missed.
    """
    k = _levels("levels", levels)
    examples = _task(task)
    if len(examples) < k + 1:
        raise ValueError(f"task has {len(examples)} prefixes; the obstruction needs at least levels + 1 = {k + 1}")
    for name, fn in (("state_of", state_of), ("readout", readout)):
        if not callable(fn):
            raise TypeError(f"{name} must be callable, got {type(fn).__name__}")
    states = {prefix: state_of(prefix) for prefix in examples}
    for prefix, s in states.items():
        if not isinstance(s, Hashable):
            raise TypeError(f"state_of({prefix!r}) returned an unhashable {type(s).__name__}; "
                            f"the obstruction needs states that can be compared as values")
    distinct = set(states.values())
    if len(distinct) > k:
        raise ValueError(f"the system takes {len(distinct)} distinct states on the task's prefixes, more than "
                         f"levels={k}: the hypothesis 'at most K state values' fails, so there is no obstruction")
    answers = {s: readout(s) for s in distinct}
    first_seen: dict[Hashable, Prefix] = {}
    pair = None
    for prefix, s in states.items():
        if s in first_seen:
            pair = (first_seen[s], prefix)
            break
        first_seen[s] = prefix
    assert pair is not None  # pigeonhole: more prefixes than states
    a, b = pair
    s = states[a]
    output = answers[s]
    wrong = a if examples[a] != output else b
    n_wrong = sum(answers[states[p]] != label for p, label in examples.items())
    return PigeonholeWitness(a, b, s, (examples[a], examples[b]), output, wrong, examples[wrong], len(distinct),
                             n_wrong)


# ----------------------------------------------------------------------------------------------
# a K-level quantized recurrent toy
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StateInterface:
    """How a concrete model exposes itself to a finite-state toy result (ftip-00K1, ftip-00M0).

    ``state(prefix)`` is the state the model carries after the prefix, as the model stores it;
    ``output(prefix)`` its continuation label under its evaluation protocol; ``state_size(prefix)``
    the bytes of state it keeps after the prefix (its cost accounting); ``reference_state(prefix)``
    the same state recomputed in the toy's numerical regime (exact arithmetic, or ``None`` when no
    such recomputation is declared); ``reduction`` the explicit map from a state to one of
    ``levels`` toy states (``None`` with ``levels=None`` when no finite ``K`` is declared);
    ``probes`` the prefixes on which the map is checked besides a task's own.
    """

    name: str
    state: Callable[[Prefix], Any]
    output: Callable[[Prefix], Hashable]
    state_size: Callable[[Prefix], int]
    reference_state: Callable[[Prefix], Any] | None = None
    reduction: Callable[[Any], Hashable] | None = None
    levels: int | None = None
    probes: tuple[Prefix, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        for field in ("state", "output", "state_size"):
            if not callable(getattr(self, field)):
                raise TypeError(f"{field} must be callable, got {type(getattr(self, field)).__name__}")
        for field in ("reference_state", "reduction"):
            if getattr(self, field) is not None and not callable(getattr(self, field)):
                raise TypeError(f"{field} must be callable or None, got {type(getattr(self, field)).__name__}")
        if self.levels is not None:
            _levels("levels", self.levels)
        if (self.reduction is None) != (self.levels is None):
            raise ValueError("reduction and levels go together: declare both (a map onto K toy states) or neither")
        object.__setattr__(self, "probes", tuple(self.probes))
        for p in self.probes:
            if not isinstance(p, tuple):
                raise TypeError(f"probes must be tuples of symbols, got {type(p).__name__} {p!r}")


@dataclass(frozen=True)
class QuantizedRecurrence:
    """A recurrent toy whose state is one of ``levels`` integers (ftip-00JR).

    ``h_0 = init`` and ``h_t = clip(floor(a h_{t-1} + b x_t + c + 1/2), 0, levels - 1)`` for inputs
    ``x_t`` in ``alphabet``; the continuation label after a prefix is ``readout[h_t]`` (default:
    the level itself). With ``a = b = 1`` and ``c = 0`` on inputs ``{0, 1}`` it counts ones and
    saturates at ``levels - 1``. The arithmetic is float64; :meth:`exact_state` redoes it with
    fractions.
    """

    levels: int
    a: float = 1.0
    b: float = 1.0
    c: float = 0.0
    init: int = 0
    alphabet: tuple[int, ...] = (0, 1)
    readout: tuple[Hashable, ...] | None = None

    def __post_init__(self) -> None:
        k = _levels("levels", self.levels)
        for name in ("a", "b", "c"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"{name}={v!r} must be a finite real number")
        if isinstance(self.init, bool) or not isinstance(self.init, int) or not 0 <= self.init < k:
            raise ValueError(f"init={self.init!r} must be an int level in [0, {k - 1}]")
        if not self.alphabet or not all(isinstance(x, int) and not isinstance(x, bool) for x in self.alphabet):
            raise ValueError(f"alphabet={self.alphabet!r} must be a non-empty tuple of ints")
        object.__setattr__(self, "alphabet", tuple(self.alphabet))
        if self.readout is not None:
            object.__setattr__(self, "readout", tuple(self.readout))
            if len(self.readout) != k:
                raise ValueError(f"readout has {len(self.readout)} labels; it needs one per level ({k})")

    def _check(self, prefix: object) -> Prefix:
        if not isinstance(prefix, tuple):
            raise TypeError(f"prefix must be a tuple of input symbols, got {type(prefix).__name__} {prefix!r}")
        bad = [x for x in prefix if x not in self.alphabet]
        if bad:
            raise ValueError(f"prefix {prefix!r} has symbols {bad!r} outside the alphabet {self.alphabet}")
        return prefix

    def step(self, h: int, x: int) -> int:
        """One update of the recurrence in float64."""
        pre = self.a * h + self.b * x + self.c
        return min(max(math.floor(pre + 0.5), 0), self.levels - 1)

    def state(self, prefix: Prefix) -> int:
        """The level after ``prefix`` (``init`` after the empty prefix)."""
        h = self.init
        for x in self._check(prefix):
            h = self.step(h, x)
        return h

    def exact_state(self, prefix: Prefix) -> int:
        """:meth:`state` recomputed with exact fractions (the toy's numerical regime)."""
        a, b, c = Fraction(self.a), Fraction(self.b), Fraction(self.c)
        h = self.init
        for x in self._check(prefix):
            h = min(max(math.floor(a * h + b * x + c + Fraction(1, 2)), 0), self.levels - 1)
        return h

    def read(self, h: int) -> Hashable:
        """The continuation label of level ``h``."""
        return h if self.readout is None else self.readout[h]

    def output(self, prefix: Prefix) -> Hashable:
        """The continuation label after ``prefix``."""
        return self.read(self.state(prefix))

    def reachable(self) -> dict[int, Prefix]:
        """Every level reachable from ``init``, each with a shortest prefix reaching it (breadth first)."""
        found = {self.init: ()}
        frontier = [self.init]
        while frontier:
            nxt = []
            for h in frontier:
                for x in self.alphabet:
                    g = self.step(h, x)
                    if g not in found:
                        found[g] = found[h] + (x,)
                        nxt.append(g)
            frontier = nxt
        return found

    def interface(self, levels: int | None = None) -> StateInterface:
        """This recurrence as a :class:`StateInterface`: identity map onto ``levels`` (default its own) toy
        states, probed on one shortest prefix per reachable level; the state is one level, stored in the fewest
        whole bytes that hold ``levels - 1``; the reference is :meth:`exact_state`."""
        level_bytes = max(1, ((self.levels - 1).bit_length() + 7) // 8)
        return StateInterface(f"{self.levels}-level quantized recurrence", self.state, self.output,
                              lambda prefix: level_bytes, self.exact_state, lambda h: h,
                              self.levels if levels is None else levels, tuple(self.reachable().values()))


def kda_state_interface(layer: torch.nn.Module, embedding: torch.Tensor, readout: torch.Tensor,
                        probes: Sequence[Prefix] = ()) -> StateInterface:
    """A Kimi Delta Attention layer as a :class:`StateInterface`, with no declared finite ``K`` (ftip-00K1).

    A prefix of token ids is embedded with ``embedding [V, d]`` and run through ``layer`` (a
    :class:`~ftipbook.model.kda.KimiDeltaAttention`) in float32 with a decode cache; the state is
    the cache (recurrent state and convolution buffers, flattened), its size the cache's bytes,
    the reference the same computation on a float64 copy of the layer, and the label the argmax
    of ``readout [L, d]`` applied to the last output. No reduction onto finitely many toy states is
    declared: a float32 state is not one of ``K`` declared values.
    """
    if not isinstance(embedding, torch.Tensor) or embedding.dim() != 2:
        raise ValueError(f"embedding must be a [vocab, d_model] tensor, got {getattr(embedding, 'shape', embedding)!r}")
    if not isinstance(readout, torch.Tensor) or readout.dim() != 2 or readout.shape[1] != embedding.shape[1]:
        raise ValueError(f"readout must be a [labels, d_model={embedding.shape[1]}] tensor, "
                         f"got {getattr(readout, 'shape', readout)!r}")
    reference = copy.deepcopy(layer).double()

    def run(prefix: Prefix, double: bool) -> tuple[torch.Tensor, Any]:
        if not isinstance(prefix, tuple) or not prefix:
            raise ValueError(f"prefix must be a non-empty tuple of token ids, got {prefix!r}")
        if not all(isinstance(t, int) and 0 <= t < embedding.shape[0] for t in prefix):
            raise ValueError(f"prefix {prefix!r} has ids outside [0, {embedding.shape[0]})")
        net, dtype = (reference, torch.float64) if double else (layer, torch.float32)
        x = embedding.to(dtype)[list(prefix)].unsqueeze(0)
        cache = net.new_cache(1, dtype=dtype)
        with torch.no_grad():
            y = net(x, cache=cache)
        return y[0, -1], cache

    def flat(cache: Any) -> torch.Tensor:
        return torch.cat([t.reshape(-1).double() for t in (cache.state, cache.conv_q, cache.conv_k, cache.conv_v)])

    def output(prefix: Prefix) -> int:
        y, _ = run(prefix, False)
        return int(torch.argmax(readout.to(y.dtype) @ y))

    return StateInterface("float32 Kimi Delta Attention layer", lambda p: flat(run(p, False)[1]), output,
                          lambda p: run(p, False)[1].nbytes(), lambda p: flat(run(p, True)[1]),
                          probes=tuple(probes))


# ----------------------------------------------------------------------------------------------
# ftip-00K1, ftip-00M0: the applicability checklist
# ----------------------------------------------------------------------------------------------
#: A check runs and answers ``(True, detail)`` verified, ``(False, detail)`` failed, ``(None, detail)`` unknown.
Check = Callable[[], tuple]


@dataclass(frozen=True)
class ConditionResult:
    """One condition of the checklist after its check ran: ``status`` is verified, failed or unknown."""

    condition: str
    status: str
    detail: str


@dataclass(frozen=True)
class ApplicabilityReport:
    """The outcome of :meth:`Applicability.assess` (ftip-00K1, ftip-00M0).

    ``status`` is ``"applies"`` when every condition was verified and ``"unestablished"``
    otherwise; ``failing`` names the conditions not verified (failed or unknown), in checklist
    order. When the status is unestablished the toy's conclusion about the instance is unknown.
    """

    toy: str
    instance: str
    results: tuple[ConditionResult, ...]

    @property
    def failing(self) -> tuple[str, ...]:
        return tuple(r.condition for r in self.results if r.status != "verified")

    @property
    def status(self) -> str:
        return "unestablished" if self.failing else "applies"

    def lines(self) -> list[str]:
        """One printable line per condition, then the verdict."""
        out = [f"{r.condition:19s} {r.status:8s} {r.detail}" for r in self.results]
        verdict = (f"{self.toy} -> {self.instance}: {self.status}" +
                   (f" (not verified: {', '.join(self.failing)})" if self.failing else ""))
        return out + [verdict]


@dataclass(frozen=True)
class Applicability:
    """Whether a toy result transfers to a concrete model: five checks that run (ftip-00K1, ftip-00M0).

    ``checks`` maps condition names from :data:`CONDITIONS` to functions that run a check and
    return ``(True | False | None, detail)``. A condition without a check is unknown; a value that
    is not callable (a flag such as ``True``) is refused with ``TypeError``.
    """

    toy: str
    instance: str
    checks: Mapping[str, Check]

    def __post_init__(self) -> None:
        for name in ("toy", "instance"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"{name} must be a non-empty string, got {getattr(self, name)!r}")
        if not isinstance(self.checks, Mapping):
            raise TypeError(f"checks must map condition names to check functions, got {type(self.checks).__name__}")
        extra = sorted(set(self.checks) - set(CONDITIONS))
        if extra:
            raise ValueError(f"unknown condition(s) {extra}; the checklist is {list(CONDITIONS)}")
        for name, fn in self.checks.items():
            if not callable(fn):
                raise TypeError(f"the check for {name!r} is {fn!r}: pass a function that runs the check, not a flag")
        object.__setattr__(self, "checks", MappingProxyType(dict(self.checks)))

    def assess(self) -> ApplicabilityReport:
        """Run every declared check, in checklist order."""
        results = []
        for name in CONDITIONS:
            if name not in self.checks:
                results.append(ConditionResult(name, "unknown", "no check declared"))
                continue
            answer = self.checks[name]()
            if (not isinstance(answer, tuple) or len(answer) != 2 or answer[0] not in (True, False, None)
                    or not isinstance(answer[1], str)):
                raise TypeError(f"the check for {name!r} returned {answer!r}; it must return "
                                f"(True | False | None, detail string)")
            ok, detail = answer
            results.append(ConditionResult(name, {True: "verified", False: "failed", None: "unknown"}[ok], detail))
        return ApplicabilityReport(self.toy, self.instance, tuple(results))


def _same_state(a: Any, b: Any) -> tuple[bool, float]:
    """Whether two states are identical, and their largest difference (tensors compared in float64)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        x, y = torch.as_tensor(a).double(), torch.as_tensor(b).double()
        if x.shape != y.shape:
            return False, math.inf
        diff = float((x - y).abs().max()) if x.numel() else 0.0
        return diff == 0.0, diff
    if isinstance(a, Real) and isinstance(b, Real):
        diff = abs(Fraction(a) - Fraction(b))
        return diff == 0, float(diff)
    return a == b, 0.0 if a == b else math.inf


def pigeonhole_applicability(iface: StateInterface, task: Mapping[Prefix, Hashable]) -> Applicability:
    """The five checks for transferring :func:`pigeonhole_obstruction` to the model behind ``iface`` (ftip-00M0).

    * interface map: a reduction onto ``K`` declared toy states exists, takes at most ``K`` values
      on the probes and the task's prefixes, and the model's label is a function of the reduced
      state there (unknown when no finite ``K`` is declared);
    * task: at least ``K + 1`` prefixes, pairwise distinct labels, every prefix accepted by the model;
    * cost accounting: the state the model keeps has the same size after every prefix (a finite
      window, as the toy counts it; a cache that grows with the prefix fails);
    * numerical regime: the state equals its recomputation in the toy's exact regime on every
      prefix (unknown when no reference is declared);
    * evaluation protocol: the label is deterministic (two evaluations agree on every prefix).
    """
    if not isinstance(iface, StateInterface):
        raise TypeError(f"iface must be a StateInterface, got {type(iface).__name__}")
    examples = _task(task)
    memo: list[list[Prefix]] = []

    def refusal(p: Prefix) -> str | None:
        try:
            iface.output(p)
        except (ValueError, TypeError) as err:
            return str(err)
        return None

    def accepted() -> list[Prefix]:
        """The probes and task prefixes the model accepts (a refused task prefix fails the task check)."""
        if not memo:
            memo.append([p for p in dict.fromkeys(tuple(iface.probes) + tuple(examples)) if refusal(p) is None])
        return memo[0]

    def interface_map() -> tuple:
        if iface.reduction is None:
            return None, "no explicit map from the model's state onto K toy states is declared (no finite K)"
        image: dict[Hashable, tuple[Prefix, Hashable]] = {}
        prefixes = accepted()
        for p in prefixes:
            z, y = iface.reduction(iface.state(p)), iface.output(p)
            if z in image and image[z][1] != y:
                return False, (f"{image[z][0]!r} and {p!r} map to toy state {z!r} but the model answers "
                               f"{image[z][1]!r} vs {y!r}")
            image.setdefault(z, (p, y))
        if len(image) > iface.levels:
            return False, f"the map takes {len(image)} values on {len(prefixes)} prefixes, more than K={iface.levels}"
        return True, f"{len(image)} <= K={iface.levels} toy states on {len(prefixes)} prefixes; label = f(state)"

    def task_check() -> tuple:
        if iface.levels is None:
            return None, "K is not declared, so a task of K + 1 prefixes cannot be formed"
        if len(examples) < iface.levels + 1:
            return False, f"{len(examples)} prefixes; the toy needs K + 1 = {iface.levels + 1}"
        for p in examples:
            if refusal(p) is not None:
                return False, f"the model refuses prefix {p!r}: {refusal(p)}"
        return True, f"{len(examples)} >= K + 1 prefixes, pairwise distinct labels, all accepted"

    def cost() -> tuple:
        prefixes = accepted()
        sizes = {p: iface.state_size(p) for p in prefixes}
        if len(set(sizes.values())) > 1:
            lo, hi = min(sizes, key=sizes.get), max(sizes, key=sizes.get)
            return False, (f"the state grows with the prefix: {sizes[lo]} byte(s) after {len(lo)} symbol(s), "
                           f"{sizes[hi]} after {len(hi)}")
        return True, f"{next(iter(sizes.values()))} byte(s) of state after each of {len(prefixes)} prefixes"

    def regime() -> tuple:
        if iface.reference_state is None:
            return None, "no recomputation in the toy's exact regime is declared"
        worst, where = 0.0, None
        prefixes = accepted()
        for p in prefixes:
            same, diff = _same_state(iface.state(p), iface.reference_state(p))
            if not same and diff >= worst:
                worst, where = diff, p
        if where is not None:
            return False, f"the state after {where!r} differs from its exact recomputation by {worst:.0e}"
        return True, f"the state equals its exact recomputation on {len(prefixes)} prefixes"

    def protocol() -> tuple:
        for p in accepted():
            first, second = iface.output(p), iface.output(p)
            if first != second:
                return False, f"two evaluations of {p!r} answer {first!r} and {second!r}: not one label per prefix"
        return True, f"one deterministic label per prefix ({len(accepted())} prefixes evaluated twice)"

    return Applicability("pigeonhole obstruction (ftip-00JR)", iface.name,
                         {"interface map": interface_map, "task": task_check, "cost accounting": cost,
                          "numerical regime": regime, "evaluation protocol": protocol})


__all__ = ["CONDITIONS", "PigeonholeWitness", "pigeonhole_obstruction", "StateInterface", "QuantizedRecurrence",
           "kda_state_interface", "ConditionResult", "ApplicabilityReport", "Applicability",
           "pigeonhole_applicability"]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
