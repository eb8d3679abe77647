"""The JEPA comparability interface and evaluation laws on declared interfaces (ftip-00KA, 00KB, 00KE).

A JEPA-like model predicts latents, not tokens; an autoregressive (AR) model emits a next-token
law. They become comparable only once six coordinates are fixed (ftip-00KA), recorded in
:class:`JEPAInterface`: the predictor, the target representation, the decoder or downstream
interface that maps the representation to the task's output, the training objective, the
inference procedure and the evaluation law. :func:`check_comparable` refuses a comparison while
any coordinate of either side is :data:`~ftipbook.compare.cost.UNKNOWN` or the two evaluation
laws differ, and refuses a :class:`ParameterCountMatch` offered in place of the interfaces: equal
sizes do not type a comparison. :func:`compare_through_interface` then scores both systems with
one evaluation law, through one code path:

* :class:`NextTokenNLL`: the mean over documents of each document's mean next-token negative
  log-likelihood (nats), each document scored alone from its start with ``eos`` appended, over
  its first ``seq_len`` predicted tokens. It reads a *law map* ``tokens [B, T] -> logits
  [B, T, V]`` (a causal map: the logits at ``t`` depend on ``tokens[:, :t+1]`` only) and nothing
  else about the system.
* :func:`interface_log_loss` (ftip-00KE): the mean log-loss of a finite task of ``(prefix, next
  id)`` pairs, computed from ``next_token_law(prefix)`` alone, so that it applies to every object
  that exposes that map, whatever its architecture.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from numbers import Real
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F

from ftipbook.compare.cost import UNKNOWN, Unknown
from ftipbook.compare.records import Record, missing_fields
from ftipbook.data.corpus import Document
from ftipbook.data.windows import tokenize_documents

#: A law map takes token ids ``[B, T]`` to next-token logits ``[B, T, V]``.
LawMap = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class JEPAInterface(Record):
    """The six coordinates that make a JEPA-like system comparable with an AR model (ftip-00KA).

    ``predictor``: what predicts what (for an AR model, the model's own next-token law);
    ``target_representation``: what the predictor is trained to match; ``decoder``: the declared
    map from the representation to the task output; ``objective``: the training loss;
    ``inference``: how outputs are produced at evaluation; ``evaluation_law``: the functional
    that scores the outputs (e.g. :attr:`NextTokenNLL.description`). Each is a non-empty string
    or :data:`~ftipbook.compare.cost.UNKNOWN` (the default).
    """

    KIND: ClassVar[str] = "interface"

    predictor: str | Unknown = UNKNOWN
    target_representation: str | Unknown = UNKNOWN
    decoder: str | Unknown = UNKNOWN
    objective: str | Unknown = UNKNOWN
    inference: str | Unknown = UNKNOWN
    evaluation_law: str | Unknown = UNKNOWN

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, Unknown) and (not isinstance(value, str) or not value.strip()):
                raise ValueError(f"JEPAInterface.{f.name} must be a non-empty string or UNKNOWN, got {value!r}")


@dataclass(frozen=True)
class ParameterCountMatch:
    """Two systems' trained parameter counts and whether they agree within ``rel_tol`` (relative to the larger).

    A size match is a property of two systems, not a comparison of them: :func:`check_comparable`
    refuses it (ftip-00KA).
    """

    first: int
    second: int
    rel_tol: float = 0.1

    def __post_init__(self) -> None:
        for name in ("first", "second"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ParameterCountMatch.{name}={value!r} must be an int >= 1")
        if isinstance(self.rel_tol, bool) or not isinstance(self.rel_tol, Real) or not 0 <= self.rel_tol < 1:
            raise ValueError(f"ParameterCountMatch.rel_tol={self.rel_tol!r} must be a real number in [0, 1)")

    @property
    def matched(self) -> bool:
        """``|first - second| <= rel_tol * max(first, second)``."""
        return abs(self.first - self.second) <= self.rel_tol * max(self.first, self.second)


def check_comparable(first: JEPAInterface, second: JEPAInterface) -> None:
    """Refuse a typed comparison unless both interfaces are complete and share one evaluation law (ftip-00KA).

    ``TypeError`` for anything that is not a :class:`JEPAInterface` (a :class:`ParameterCountMatch`
    in particular); ``ValueError`` naming every missing coordinate of each side, or the two
    different evaluation laws.
    """
    for name, value in (("first", first), ("second", second)):
        if isinstance(value, ParameterCountMatch) or isinstance(value, int):
            raise TypeError(f"{name} is a parameter count ({value!r}): a parameter-count match alone is not a "
                            "typed comparison; declare both systems' JEPAInterface (ftip-00KA)")
        if not isinstance(value, JEPAInterface):
            raise TypeError(f"{name} must be a JEPAInterface, got {type(value).__name__}")
    gaps = [f"{name} is missing {', '.join(m)}" for name, value in (("first", first), ("second", second))
            if (m := missing_fields(value))]
    if gaps:
        raise ValueError("not comparable until every interface coordinate is declared: " + "; ".join(gaps)
                         + " (ftip-00KA)")
    if first.evaluation_law != second.evaluation_law:
        raise ValueError(f"the two systems declare different evaluation laws ({first.evaluation_law!r} vs "
                         f"{second.evaluation_law!r}); a typed comparison needs one")


@dataclass(frozen=True)
class NextTokenNLL:
    """Evaluation law: mean over ``documents`` of each one's mean next-token NLL in nats (ftip-00KA).

    Each document is tokenized with ``tokenizer`` (``eos`` appended) and scored alone from its
    start over its first ``seq_len`` predicted tokens; documents weigh equally. Calling the law on
    a law map returns the mean; :meth:`item_nlls` the per-document values.
    """

    documents: tuple[Document, ...]
    tokenizer: Any
    seq_len: int = 64
    batch_size: int = 16

    def __post_init__(self) -> None:
        docs = tuple(self.documents) if isinstance(self.documents, (list, tuple)) else None
        if not docs or not all(isinstance(d, Document) for d in docs):
            raise ValueError("documents must be a non-empty sequence of Documents")
        object.__setattr__(self, "documents", docs)
        for name in ("seq_len", "batch_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"NextTokenNLL.{name}={value!r} must be an int >= 1")
        for attr in ("encode", "eos_id", "pad_id", "vocab_size"):
            if not hasattr(self.tokenizer, attr):
                raise TypeError(f"tokenizer must be a tokenizer with {attr!r}, got {type(self.tokenizer).__name__}")

    @property
    def description(self) -> str:
        """The law in words, with the number of documents and ``seq_len`` (what an interface declares)."""
        return (f"mean over {len(self.documents)} documents of the mean next-token NLL (nats) of each, scored "
                f"alone from its start with eos, first {self.seq_len} predicted tokens")

    def rows(self) -> list[list[int]]:
        """Each document's first ``seq_len + 1`` token ids (the inputs and the predicted tokens)."""
        ids = [list(d.ids[:self.seq_len + 1]) for d in tokenize_documents(self.documents, self.tokenizer)]
        if any(len(r) < 2 for r in ids):
            raise ValueError("every document needs at least one predicted token")
        return ids

    @torch.no_grad()
    def item_nlls(self, law_map: LawMap) -> np.ndarray:
        """Each document's mean next-token NLL (float64 nats) under ``law_map``."""
        if not callable(law_map):
            raise TypeError(f"law_map must map token ids [B, T] to logits [B, T, V], got {type(law_map).__name__}")
        rows, out = self.rows(), []
        for start in range(0, len(rows), self.batch_size):
            chunk = rows[start:start + self.batch_size]
            width = max(len(r) for r in chunk) - 1
            tokens = torch.full((len(chunk), width), self.tokenizer.pad_id, dtype=torch.long)
            targets = torch.full((len(chunk), width), -100, dtype=torch.long)
            for i, r in enumerate(chunk):
                tokens[i, :len(r) - 1] = torch.tensor(r[:-1])
                targets[i, :len(r) - 1] = torch.tensor(r[1:])
            logits = law_map(tokens)
            if not isinstance(logits, torch.Tensor) or logits.shape[:2] != tokens.shape \
                    or logits.shape[-1] != self.tokenizer.vocab_size:
                got = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
                raise ValueError(f"law_map must return logits [B, T, {self.tokenizer.vocab_size}] for tokens "
                                 f"{tuple(tokens.shape)}, got {got}")
            nll = F.cross_entropy(logits.double().flatten(0, 1), targets.flatten(), ignore_index=-100,
                                  reduction="none").view(len(chunk), width)
            out.extend((nll.sum(dim=1) / (targets != -100).sum(dim=1)).tolist())
        return np.asarray(out, dtype=np.float64)

    def __call__(self, law_map: LawMap) -> float:
        return float(self.item_nlls(law_map).mean())


@dataclass(frozen=True)
class InterfaceComparison:
    """Two systems scored by one evaluation law on their declared interfaces (ftip-00KA).

    ``values[name]`` is the law's value (mean NLL, lower is better) and ``item_values[name]`` the
    per-document values, in document order; ``difference`` is ``values[first] - values[second]``.
    """

    names: tuple[str, str]
    interfaces: Mapping[str, JEPAInterface]
    law: str
    values: Mapping[str, float]
    item_values: Mapping[str, np.ndarray]

    @property
    def difference(self) -> float:
        return self.values[self.names[0]] - self.values[self.names[1]]


def compare_through_interface(systems: Mapping[str, tuple[JEPAInterface, LawMap]],
                              law: NextTokenNLL) -> InterfaceComparison:
    """Score two systems, each given as ``name -> (interface, law map)``, with ``law`` (ftip-00KA).

    :func:`check_comparable` runs first, and each interface must declare ``law.description`` as
    its evaluation law; nothing but the law maps is read from the systems.
    """
    if not isinstance(law, NextTokenNLL):
        raise TypeError(f"law must be a NextTokenNLL, got {type(law).__name__}")
    if not isinstance(systems, Mapping) or len(systems) != 2:
        raise ValueError("systems must map exactly two names to (JEPAInterface, law map) pairs")
    names = tuple(systems)
    pairs = [systems[n] for n in names]
    if not all(isinstance(p, tuple) and len(p) == 2 for p in pairs):
        raise TypeError("each system must be a (JEPAInterface, law map) pair")
    check_comparable(pairs[0][0], pairs[1][0])
    if pairs[0][0].evaluation_law != law.description:
        raise ValueError(f"the interfaces declare the evaluation law {pairs[0][0].evaluation_law!r}, "
                         f"not this one ({law.description!r})")
    items = {n: law.item_nlls(p[1]) for n, p in zip(names, pairs)}
    return InterfaceComparison(names, {n: p[0] for n, p in zip(names, pairs)}, law.description,
                               {n: float(v.mean()) for n, v in items.items()}, items)


def interface_log_loss(system: Any, task: Sequence[tuple[Sequence[int], int]]) -> float:
    """Mean ``-log pi(y | prefix)`` over ``task``'s ``(prefix, y)`` pairs, from ``system.next_token_law``
    only (ftip-00KE).

    Any object with ``next_token_law(prefix) -> probabilities indexed by id`` qualifies; one that
    lacks it is refused with ``TypeError`` naming the attribute. A zero probability gives ``inf``.
    """
    law_of = getattr(system, "next_token_law", None)
    if not callable(law_of):
        raise TypeError(f"{type(system).__name__} has no next_token_law(prefix): it does not realize the "
                        "next-token-law interface this result is stated for")
    if not isinstance(task, Sequence) or not task:
        raise ValueError("task must be a non-empty sequence of (prefix, next id) pairs")
    total = 0.0
    for prefix, y in task:
        if isinstance(y, bool) or not isinstance(y, int) or not prefix:
            raise ValueError(f"each task pair needs a non-empty prefix and an int next id, got {(prefix, y)!r}")
        law = law_of(list(prefix))
        if not 0 <= y < len(law):
            raise ValueError(f"next id {y} is outside the law's {len(law)} ids")
        p = float(law[y])
        total += math.inf if p <= 0 else -math.log(p)
    return total / len(task)


__all__ = ["LawMap", "JEPAInterface", "ParameterCountMatch", "check_comparable", "NextTokenNLL",
           "InterfaceComparison", "compare_through_interface", "interface_log_loss"]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
