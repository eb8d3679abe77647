"""Interface-preserving reduction: records that differ, output laws that agree (ftip-00KC).

Theorem ftip-00KC says: when two architecture records induce the same conditional output law on a
fixed task and evaluation interface, every evaluation functional ``J`` of that law takes the same
value on both. ``J`` is a function of the law, so this is a pushforward identity; it says nothing
about two architectures in general. This module holds the pieces a check of it needs:

* two constructions of a second record with the same law as a given ``DecoderLM``:
  :func:`gqa_as_mha` (an MHA model whose key/value projections repeat a GQA model's per query
  group, more parameters and a larger cache) and :func:`with_mla_absorb` (the same MLA weights run
  on the explicit or on the absorbed path, ``ModelConfig.mla_absorb``);
* :class:`DeclaredTask`, a fixed finite task (prompts with declared answers over one vocabulary),
  and :func:`task_prefixes`, every prefix whose next-token law the task's functionals read;
* :func:`output_law_distance`, the largest total-variation distance between two next-token laws
  over declared prefixes;
* evaluation functionals that read a model only through ``next_token_law(prefix)``
  (:class:`~ftipbook.prob.NextTokenLaw`): :func:`expected_nll`, :func:`greedy_exact_match`,
  :func:`exact_pass_at_k`, :func:`expected_reward` and :func:`kl_to_reference`;
  :func:`standard_functionals` binds them to one task, and :func:`same_law_values` evaluates every
  functional on both records.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Real

import torch

from ftipbook.eval.metrics import pass_at_k
from ftipbook.model.transformer import DecoderLM
from ftipbook.prob import NextTokenLaw

#: An evaluation functional maps a next-token law (any :class:`~ftipbook.prob.NextTokenLaw`) to a number.
Functional = Callable[[NextTokenLaw], float]
#: Tolerance on the total mass of a next-token law read through the interface.
MASS_TOL = 1e-9


# ----------------------------------------------------------------------------------------------
# two records with one law
# ----------------------------------------------------------------------------------------------
def _twin(model: DecoderLM, cfg, state: Mapping[str, torch.Tensor]) -> DecoderLM:
    """A ``DecoderLM(cfg)`` on ``model``'s device and dtype holding ``state``; the global RNG is untouched."""
    p = next(model.parameters())
    with torch.random.fork_rng(devices=[]):
        twin = DecoderLM(cfg)
    twin = twin.to(device=p.device, dtype=p.dtype)
    twin.load_state_dict(state)
    return twin.train(model.training)


def gqa_as_mha(model: DecoderLM) -> DecoderLM:
    """The MHA model that computes the same function as a GQA (or MQA) ``model`` (ftip-00KC, ftip-000V).

    Under GQA with ``H`` query heads and ``G`` key/value heads, query head ``h`` reads key/value head
    ``h // (H / G)``. The returned model has ``n_kv_heads = H`` and, in every attention layer, key and
    value projections that repeat each of ``model``'s ``G`` heads ``H / G`` times in that order
    (biases too); every other tensor is copied. It is a different architecture record (its
    ``ModelConfig``, parameter count and cache bytes differ) with the same next-token law.
    """
    if not isinstance(model, DecoderLM):
        raise TypeError(f"model must be an ftipbook DecoderLM, got {type(model).__name__}")
    cfg = model.cfg
    if "A" not in cfg.layer_kinds:
        raise ValueError(f"model has no softmax attention layer ('A'); layer_kinds={cfg.layer_kinds!r}")
    h, g, dh = cfg.n_heads, cfg.kv_heads, cfg.d_head
    if g == h:
        raise ValueError(f"model is already MHA (n_kv_heads={cfg.n_kv_heads!r}, n_heads={h}); "
                         f"gqa_as_mha expands a GQA or MQA model (n_kv_heads < n_heads)")
    group = h // g
    state = dict(model.state_dict())
    for i, kind in enumerate(cfg.layer_kinds):
        if kind != "A":
            continue
        for suffix in ("weight", "bias"):
            name = f"blocks.{i}.mixer.fn.qkv.{suffix}"
            if name not in state:
                continue
            q, k, v = state[name].split([h * dh, g * dh, g * dh], dim=0)
            rest = tuple(q.shape[1:])
            k, v = (x.reshape(g, dh, *rest).repeat_interleave(group, dim=0).reshape(h * dh, *rest) for x in (k, v))
            state[name] = torch.cat([q, k, v])
    return _twin(model, dataclasses.replace(cfg, n_kv_heads=None), state)


def with_mla_absorb(model: DecoderLM, absorb: bool) -> DecoderLM:
    """A copy of an MLA ``model`` that runs its MLA layers on the absorbed (``True``) or explicit path (ftip-00KC).

    The weights are the same; only ``ModelConfig.mla_absorb`` changes, and with it the kernels and
    the FLOPs a forward executes. The path ``model`` already runs is refused.
    """
    if not isinstance(model, DecoderLM):
        raise TypeError(f"model must be an ftipbook DecoderLM, got {type(model).__name__}")
    if not isinstance(absorb, bool):
        raise TypeError(f"absorb must be True or False, got {type(absorb).__name__} {absorb!r}")
    cfg = model.cfg
    if "M" not in cfg.layer_kinds:
        raise ValueError(f"model has no MLA layer ('M'); layer_kinds={cfg.layer_kinds!r}")
    if cfg.mla_absorb == absorb:
        raise ValueError(f"model already runs MLA with mla_absorb={absorb}; ask for the other path")
    return _twin(model, dataclasses.replace(cfg, mla_absorb=absorb), model.state_dict())


# ----------------------------------------------------------------------------------------------
# the fixed task and the interface
# ----------------------------------------------------------------------------------------------
def _ids(name: str, seq: object, vocab_size: int) -> tuple[int, ...]:
    if isinstance(seq, (str, bytes)) or not isinstance(seq, Sequence):
        raise TypeError(f"{name} must be a sequence of token ids, got {type(seq).__name__} {seq!r}")
    out = tuple(seq)
    if not out:
        raise ValueError(f"{name} is empty; it needs at least one token id")
    for t in out:
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < vocab_size:
            raise ValueError(f"{name}={out!r} has {t!r}, not a token id in [0, {vocab_size})")
    return out


@dataclass(frozen=True)
class DeclaredTask:
    """A fixed finite task (ftip-00KC): ``prompts[i]`` must be continued by ``answers[i]``, ids in ``[0, vocab_size)``.

    The evaluation interface is the model's next-token law after each prefix of
    ``prompts[i] + answers[i]``; :func:`task_prefixes` lists those prefixes.
    """

    prompts: tuple[tuple[int, ...], ...]
    answers: tuple[tuple[int, ...], ...]
    vocab_size: int

    def __post_init__(self) -> None:
        if isinstance(self.vocab_size, bool) or not isinstance(self.vocab_size, int) or self.vocab_size < 2:
            raise ValueError(f"vocab_size={self.vocab_size!r} must be an int >= 2")
        prompts, answers = tuple(self.prompts), tuple(self.answers)
        if not prompts:
            raise ValueError("prompts is empty; a task needs at least one item")
        if len(prompts) != len(answers):
            raise ValueError(f"{len(prompts)} prompts but {len(answers)} answers; give one answer per prompt")
        object.__setattr__(self, "prompts", tuple(_ids(f"prompts[{i}]", p, self.vocab_size)
                                                  for i, p in enumerate(prompts)))
        object.__setattr__(self, "answers", tuple(_ids(f"answers[{i}]", a, self.vocab_size)
                                                  for i, a in enumerate(answers)))

    def items(self) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
        """``(prompt, answer)`` pairs in order."""
        return tuple(zip(self.prompts, self.answers))


def task_prefixes(task: DeclaredTask) -> tuple[tuple[int, ...], ...]:
    """Every prefix ``prompt + answer[:t]`` (``0 <= t < len(answer)``) the task's functionals read, each once."""
    if not isinstance(task, DeclaredTask):
        raise TypeError(f"task must be a DeclaredTask, got {type(task).__name__}")
    return tuple(dict.fromkeys(p + a[:t] for p, a in task.items() for t in range(len(a))))


def next_law(lm: NextTokenLaw, prefix: Sequence[int], vocab_size: int) -> torch.Tensor:
    """``lm``'s next-token law after ``prefix`` as a float64 vector, checked to be a law on ``vocab_size`` ids.

    This is the only way the functionals of this module read a model (ftip-00KC).
    """
    if not callable(getattr(lm, "next_token_law", None)):
        raise TypeError(f"lm must expose next_token_law(prefix) (ftipbook.prob.NextTokenLaw), got {type(lm).__name__}")
    raw = lm.next_token_law(list(prefix))
    law = raw.detach().to("cpu", torch.float64) if isinstance(raw, torch.Tensor) else \
        torch.tensor([float(p) for p in raw], dtype=torch.float64)
    if law.shape != (vocab_size,):
        raise ValueError(f"{type(lm).__name__}.next_token_law({list(prefix)}) has shape {tuple(law.shape)}; "
                         f"the task's vocabulary has {vocab_size} ids")
    if not torch.isfinite(law).all() or (law < 0).any() or abs(float(law.sum()) - 1) > MASS_TOL:
        raise ValueError(f"{type(lm).__name__}.next_token_law({list(prefix)}) is not a probability vector "
                         f"(sum {float(law.sum())!r}, min {float(law.min())!r})")
    return law


def output_law_distance(a: NextTokenLaw, b: NextTokenLaw, prefixes: Iterable[Sequence[int]], vocab_size: int) -> float:
    """``max_x TV(a(. | x), b(. | x)) = max_x (1/2) sum_y |a(y | x) - b(y | x)|`` over the declared ``prefixes``.

    0 means the two records induce the same next-token law, hence the same law of every finite
    continuation, on those prefixes (ftip-00KC). Computed in float64.
    """
    xs = [tuple(x) for x in prefixes]
    if not xs:
        raise ValueError("prefixes is empty; declare the prefixes on which the two laws are compared")
    worst = 0.0
    for x in xs:
        _ids("prefix", x, vocab_size)
        gap = 0.5 * float((next_law(a, x, vocab_size) - next_law(b, x, vocab_size)).abs().sum())
        worst = max(worst, gap)
    return worst


# ----------------------------------------------------------------------------------------------
# evaluation functionals of the output law
# ----------------------------------------------------------------------------------------------
def _task(task: object) -> DeclaredTask:
    if not isinstance(task, DeclaredTask):
        raise TypeError(f"task must be a DeclaredTask, got {type(task).__name__}")
    return task


def answer_probabilities(lm: NextTokenLaw, task: DeclaredTask) -> tuple[float, ...]:
    """``P(answer_i | prompt_i) = prod_t lm(answer_i[t] | prompt_i + answer_i[:t])`` for every item."""
    task = _task(task)
    return tuple(math.prod(float(next_law(lm, p + a[:t], task.vocab_size)[a[t]]) for t in range(len(a)))
                 for p, a in task.items())


def expected_nll(lm: NextTokenLaw, task: DeclaredTask) -> float:
    """Mean over items of ``-log P(answer | prompt)`` in nats (teacher forcing)."""
    task = _task(task)
    total = [-sum(math.log(float(next_law(lm, p + a[:t], task.vocab_size)[a[t]])) for t in range(len(a)))
             for p, a in task.items()]
    return math.fsum(total) / len(total)


def greedy_exact_match(lm: NextTokenLaw, task: DeclaredTask) -> float:
    """Fraction of items whose greedy continuation of ``len(answer)`` tokens equals the answer.

    Greedy takes the most likely id after each prefix, the lowest id on an exact tie.
    """
    task = _task(task)
    hits = 0
    for p, a in task.items():
        out: tuple[int, ...] = ()
        for _ in range(len(a)):
            law = next_law(lm, p + out, task.vocab_size)
            out += (int(torch.argmax(law)),)
        hits += out == a
    return hits / len(task.prompts)


def exact_pass_at_k(lm: NextTokenLaw, task: DeclaredTask, k: int) -> float:
    """Population pass@k ``mean_i 1 - (1 - P(answer_i | prompt_i))^k`` of sampling at temperature 1.

    The per-item success probabilities are exact products of next-token probabilities
    (:func:`answer_probabilities`), not estimates from samples.
    """
    return float(pass_at_k(answer_probabilities(lm, task), k))


def expected_reward(lm: NextTokenLaw, task: DeclaredTask, reward: Callable[[tuple[int, ...], int], float]) -> float:
    """Mean over prompts of ``sum_y lm(y | prompt) r(prompt, y)``: the expected reward of one sampled token."""
    task = _task(task)
    if not callable(reward):
        raise TypeError(f"reward must be a function (prompt, token) -> real, got {type(reward).__name__}")
    values = []
    for p in task.prompts:
        law = next_law(lm, p, task.vocab_size)
        r = [reward(p, y) for y in range(task.vocab_size)]
        bad = [(y, v) for y, v in enumerate(r)
               if isinstance(v, bool) or not isinstance(v, Real) or not math.isfinite(v)]
        if bad:
            raise ValueError(f"reward({p}, {bad[0][0]}) = {bad[0][1]!r} is not a finite real number")
        values.append(math.fsum(float(law[y]) * float(r[y]) for y in range(task.vocab_size)))
    return math.fsum(values) / len(values)


def kl_to_reference(lm: NextTokenLaw, task: DeclaredTask, reference: NextTokenLaw) -> float:
    """Mean over prompts of ``KL(lm(. | prompt) || reference(. | prompt))`` in nats; ``+inf`` when
    ``lm`` puts mass where the reference puts none."""
    task = _task(task)
    values = []
    for p in task.prompts:
        law, ref = next_law(lm, p, task.vocab_size), next_law(reference, p, task.vocab_size)
        terms = []
        for y in range(task.vocab_size):
            q, r = float(law[y]), float(ref[y])
            if q == 0:
                continue
            if r == 0:
                return math.inf
            terms.append(q * math.log(q / r))
        values.append(math.fsum(terms))
    return math.fsum(values) / len(values)


def standard_functionals(task: DeclaredTask, *, k: int, reward: Callable[[tuple[int, ...], int], float],
                         reference: NextTokenLaw) -> dict[str, Functional]:
    """The five functionals of this module bound to ``task``: name -> ``J(lm)`` (ftip-00KC)."""
    task = _task(task)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k={k!r} must be an int >= 1")
    if not callable(reward):
        raise TypeError(f"reward must be a function (prompt, token) -> real, got {type(reward).__name__}")
    if not callable(getattr(reference, "next_token_law", None)):
        raise TypeError(f"reference must expose next_token_law(prefix), got {type(reference).__name__}")
    return {
        "expected NLL": lambda lm: expected_nll(lm, task),
        "greedy exact match": lambda lm: greedy_exact_match(lm, task),
        f"pass@{k}": lambda lm: exact_pass_at_k(lm, task, k),
        "expected reward": lambda lm: expected_reward(lm, task, reward),
        "KL to reference": lambda lm: kl_to_reference(lm, task, reference),
    }


@dataclass(frozen=True)
class FunctionalPair:
    """One functional ``J`` evaluated on two records: ``a = J(law_a)``, ``b = J(law_b)``."""

    name: str
    a: float
    b: float

    @property
    def gap(self) -> float:
        """``|J(a) - J(b)|`` (0 when both are the same infinity)."""
        return 0.0 if self.a == self.b else abs(self.a - self.b)


def same_law_values(a: NextTokenLaw, b: NextTokenLaw,
                    functionals: Mapping[str, Functional]) -> tuple[FunctionalPair, ...]:
    """Every functional of ``functionals`` on both records, in order (ftip-00KC)."""
    if not isinstance(functionals, Mapping) or not functionals:
        raise ValueError("functionals must be a non-empty mapping name -> J(lm)")
    for name, fn in functionals.items():
        if not callable(fn):
            raise TypeError(f"functional {name!r} is {type(fn).__name__}, not a function of a next-token law")
    return tuple(FunctionalPair(name, float(fn(a)), float(fn(b))) for name, fn in functionals.items())


__all__ = [
    "Functional", "MASS_TOL", "gqa_as_mha", "with_mla_absorb", "DeclaredTask", "task_prefixes", "next_law",
    "output_law_distance", "answer_probabilities", "expected_nll", "greedy_exact_match", "exact_pass_at_k",
    "expected_reward", "kl_to_reference", "standard_functionals", "FunctionalPair", "same_law_values",
]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
