"""Model-instance records: architecture refinement, optimizer records and matched comparison units
(ftip-00JH, 00JI, 00JY, 00LT, 00LU).

The architecture-neutral description of a model is its interface: which inputs it accepts and
which outputs it returns. The records here refine that description only when a question needs it,
and every one subclasses :class:`~ftipbook.compare.records.Record`, so
:func:`~ftipbook.compare.records.missing_fields`, :func:`~ftipbook.compare.records.diff_records`
and :func:`~ftipbook.compare.records.check_common_conditions` apply to them:

* :class:`NextTokenInterface` and :class:`ModelRecord` are the model ``M`` at interface level:
  vocabulary, context and "a distribution over the vocabulary" as output (ftip-00JH).
* :class:`ArchitectureRecord` is the optional refinement ``A = (X, Y, Map_A)``: the map's own
  input and output spaces and the live map, which must realize ``M``'s declared interface
  (checked by calling it); :meth:`ArchitectureRecord.forget` returns ``M``, and
  :func:`require_architecture` refuses an architecture claim on a record without ``A`` by raising
  :class:`MissingField` (ftip-00JH).
* :class:`OptimizerRecord` ``O`` is read off a live ``torch.optim.Optimizer``: algorithm, every
  hyperparameter of every param group, the update rule and the state tensors (names, shapes,
  dtypes, bytes); :class:`RefinedRecord` holds the triplet ``(A, O, S)`` with the
  :class:`~ftipbook.compare.records.SystemsRecord` ``S``, and refuses to be ordered or turned into a
  number: it is a description, not a score (ftip-00JI).
* :class:`ModelInstanceRecord` has one field per coordinate of ftip-00JY and ftip-00LT;
  :func:`attribution` says whether a difference between two instances can be put down to
  architecture, and is ``"unknown"`` whenever a field is missing (ftip-00JY);
  :func:`comparable` checks a declared split into fixed and varied fields (ftip-00LT).
* :class:`ComparisonUnit` is a pair of documented instance records on one task family and
  evaluation law, with a declared cost scalarization (ftip-00LU).
"""
from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any, ClassVar

import torch

from ftipbook import _validate
from ftipbook.compare.cost import UNKNOWN, CostVector, Scalarization, Unknown
from ftipbook.compare.records import (GENERIC_LABELS, ComparisonArm, Record, SystemsRecord, TrainingRecord,
                                      check_common_conditions, describe_variant, diff_records, missing_fields)
from ftipbook.train.config import RunRandomness, TrainConfig

#: The one output kind a next-token interface declares (ftip-00JH).
DISTRIBUTION = "distribution over the vocabulary"


class MissingField(ValueError):
    """A claim needs a record field that was not recorded (ftip-00JH, ftip-00JY).

    ``record`` names the record, ``field`` the missing field and ``claim`` what was asked.
    """

    def __init__(self, record: str, field: str, claim: str) -> None:
        self.record, self.field, self.claim = record, field, claim
        super().__init__(f"{record} has no {field} field: the claim {claim!r} cannot be made about it "
                         f"(no architecture claim without an architecture record, ftip-00JH)")


class InterfaceMismatch(ValueError):
    """A map does not realize a declared interface on some input (ftip-00JH)."""


#: The most random probes :meth:`NextTokenInterface.probes` draws (each is a call of the map).
MAX_PROBES = 100_000

def _text(owner: str, name: str, value: object) -> None:
    if isinstance(value, Unknown):
        return
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{owner}.{name} must be a non-empty string or UNKNOWN, got {value!r}")


def _int(owner: str, name: str, value: object, low: int) -> None:
    if isinstance(value, Unknown):
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{owner}.{name} must be an int >= {low} or UNKNOWN, got {value!r}")


def _not_generic(owner: str, name: str, value: object) -> None:
    if isinstance(value, str) and value.strip().lower() in GENERIC_LABELS:
        raise ValueError(f"{owner}.{name}={value!r} is a family label, not an identity: name the attention, cache "
                         f"and layer pattern (ftip-00L5, ftip-00LU)")


# ----------------------------------------------------------------------------------------------
# ftip-00JH: the model record M and its optional architecture refinement A
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NextTokenInterface(Record):
    """The declared interface of a next-token model (ftip-00JH): input space ``X`` = token-id
    sequences of length ``1..context`` over ``{0, ..., vocab_size - 1}``, output space ``Y`` = the
    distributions over that vocabulary (``output`` must be :data:`DISTRIBUTION`)."""

    KIND: ClassVar[str] = "interface"

    vocab_size: int
    context: int
    output: str = DISTRIBUTION

    def __post_init__(self) -> None:
        _int("NextTokenInterface", "vocab_size", self.vocab_size, 1)
        _int("NextTokenInterface", "context", self.context, 1)
        if isinstance(self.vocab_size, Unknown) or isinstance(self.context, Unknown):
            raise ValueError("a declared interface needs its vocab_size and context")
        if self.output != DISTRIBUTION:
            raise ValueError(f"NextTokenInterface.output={self.output!r}; the only declared output is {DISTRIBUTION!r}")

    @property
    def input_space(self) -> str:
        """``X`` in words."""
        return f"token-id sequences of length 1..{self.context} over {{0, ..., {self.vocab_size - 1}}}"

    @property
    def output_space(self) -> str:
        """``Y`` in words."""
        return f"probability vectors of length {self.vocab_size} ({self.output})"

    def probes(self, n: int = 4, seed: int = 0) -> tuple[tuple[int, ...], ...]:
        """Inputs on which :meth:`check` calls a map: the shortest and the longest allowed prefix (ending
        in the first and the last token id) and ``n`` more of seeded random lengths, with seeded random ids."""
        _int("probes", "n", n, 0)
        _validate.integer("n", n, high=MAX_PROBES)
        rng = random.Random(seed)
        lengths = [1, self.context] + [rng.randint(1, self.context) for _ in range(n)]
        out = [[rng.randrange(self.vocab_size) for _ in range(length)] for length in lengths]
        out[0][-1], out[1][-1] = 0, self.vocab_size - 1
        return tuple(tuple(ids) for ids in out)

    def check(self, law: Any, prefixes: Iterable[Sequence[int]] | None = None, *, atol: float = 1e-9) -> int:
        """Call ``law.next_token_law`` on each prefix (default :meth:`probes`) and check that the output
        is a distribution over the vocabulary: ``vocab_size`` entries, each finite and ``>= 0``, summing
        to 1 (exactly for exact fractions, within ``atol`` for floats). Returns the number of calls;
        raises :class:`InterfaceMismatch` naming the prefix and the failed clause."""
        if not callable(getattr(law, "next_token_law", None)):
            raise TypeError(f"a map must offer next_token_law(prefix) (ftipbook.prob.NextTokenLaw), "
                            f"got {type(law).__name__}")
        prefixes = self.probes() if prefixes is None else [tuple(p) for p in prefixes]
        calls = 0
        for prefix in prefixes:
            if not 1 <= len(prefix) <= self.context or any(
                    isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < self.vocab_size for i in prefix):
                raise ValueError(f"prefix {_short(prefix)} is not in X = {self.input_space}")
            try:
                out = law.next_token_law(list(prefix))
            except Exception as err:  # the map refused an input of the declared space
                raise InterfaceMismatch(
                    f"the map refused the length-{len(prefix)} prefix {_short(prefix)}: {err}") from err
            calls += 1
            values = out.detach().double().reshape(-1).tolist() if isinstance(out, torch.Tensor) else list(out)
            where = f"on the length-{len(prefix)} prefix {_short(prefix)}"
            if len(values) != self.vocab_size:
                raise InterfaceMismatch(
                    f"{where} the map returned {len(values)} values, not vocab_size={self.vocab_size}")
            if any(not math.isfinite(v) or v < 0 for v in values):
                raise InterfaceMismatch(
                    f"{where} the map returned a negative or non-finite entry, so not a distribution")
            exact = all(isinstance(v, (int, Fraction)) for v in values)
            total = sum(values) if exact else math.fsum(values)
            if (total != 1) if exact else abs(total - 1) > atol:
                raise InterfaceMismatch(f"{where} the map's outputs do not sum to 1, so not a distribution "
                                        f"(sum {float(total)!r})")
        return calls


def _short(prefix: Sequence[int]) -> str:
    prefix = list(prefix)
    return str(prefix) if len(prefix) <= 6 else f"[{prefix[0]}, {prefix[1]}, ..., {prefix[-1]}]"


@dataclass(frozen=True)
class ModelRecord(Record):
    """The architecture-neutral record ``M`` of one model (ftip-00JH): its name, declared interface
    and checkpoint. It makes no architecture claim."""

    KIND: ClassVar[str] = "model"

    name: str
    interface: NextTokenInterface
    checkpoint: str | Unknown = UNKNOWN

    def __post_init__(self) -> None:
        _text("ModelRecord", "name", self.name)
        if isinstance(self.name, Unknown):
            raise ValueError("ModelRecord.name is required")
        _text("ModelRecord", "checkpoint", self.checkpoint)
        if not isinstance(self.interface, NextTokenInterface):
            raise TypeError(f"ModelRecord.interface must be a NextTokenInterface, got {type(self.interface).__name__}")


def describe_map(law: Any) -> tuple[str, str, str]:
    """``(X, Y, description)`` of a map as its own code sees them: an ftipbook ``DecoderLM`` maps int64
    token ids to logits (its law is their softmax); a :class:`ftipbook.prob.TableLM` maps token names
    to exact probabilities read from a table."""
    from ftipbook.model import DecoderLM
    from ftipbook.prob import TableLM

    if isinstance(law, DecoderLM):
        cfg = law.cfg
        dtype = str(next(law.parameters()).dtype).removeprefix("torch.")
        return (f"int64 token ids, 1..{cfg.max_seq_len} positions",
                f"{dtype} logits in R^{cfg.vocab_size} (law = softmax)",
                f"DecoderLM: {describe_architecture(cfg)}")
    if isinstance(law, TableLM):
        rows = len(law.table) + (law.default is not None)
        return ("tuples of token names", f"exact probabilities over {law.vocab_size} names",
                f"TableLM: {rows} table rows ({'with' if law.default is not None else 'no'} default row)")
    raise TypeError(f"describe_map knows DecoderLM and TableLM; give X, Y and a description for a {type(law).__name__}")


@dataclass(frozen=True)
class ArchitectureRecord(Record):
    """The optional refinement ``A = (X, Y, Map_A)`` of a model record ``M`` (ftip-00JH).

    ``input_space`` and ``output_space`` are the map's own spaces, ``description`` names what
    computes it, and ``map`` is the live map (any ``next_token_law`` object). Construction calls
    the map on ``M``'s interface probes and refuses one that does not realize that interface
    (:class:`InterfaceMismatch`). :meth:`forget` returns ``M``. Records print the map as
    ``<live TypeName>``; equality ignores the map object (the other fields describe it), while
    :func:`~ftipbook.compare.records.diff_records` lists ``map`` when the two records hold different objects.
    """

    KIND: ClassVar[str] = "architecture"

    model: ModelRecord
    input_space: str
    output_space: str
    description: str
    map: Any = field(compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.model, ModelRecord):
            raise TypeError(f"ArchitectureRecord.model must be a ModelRecord, got {type(self.model).__name__}")
        for name in ("input_space", "output_space", "description"):
            _text("ArchitectureRecord", name, getattr(self, name))
            if isinstance(getattr(self, name), Unknown):
                raise ValueError(f"ArchitectureRecord.{name} is part of A = (X, Y, Map_A) and must be given")
        _not_generic("ArchitectureRecord", "description", self.description)
        self.model.interface.check(self.map)

    @classmethod
    def of(cls, model: ModelRecord, law: Any) -> "ArchitectureRecord":
        """The refinement of ``model`` by the live map ``law``, with ``X``, ``Y`` and the description
        read off the map (:func:`describe_map`)."""
        return cls(model, *describe_map(law), law)

    def forget(self) -> ModelRecord:
        """Drop the architecture: the model record ``M`` it refines."""
        return self.model

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["map"] = f"<live {type(self.map).__name__}>"
        return out

    def rows(self, redact: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        return [(k, v if k != "map" else f"<live {type(self.map).__name__}>") for k, v in super().rows(redact)]


def require_architecture(record: Record, claim: str) -> ArchitectureRecord:
    """The architecture record a claim about ``record`` relies on, or :class:`MissingField` when
    ``record`` carries none (a :class:`ModelRecord`, or a triplet whose ``architecture`` is unknown)."""
    if isinstance(record, ArchitectureRecord):
        return record
    if isinstance(record, RefinedRecord) and isinstance(record.architecture, ArchitectureRecord):
        return record.architecture
    if isinstance(record, Record):
        raise MissingField(type(record).__name__, "architecture", claim)
    raise TypeError(f"require_architecture takes a Record, got {type(record).__name__}")


# ----------------------------------------------------------------------------------------------
# ftip-00JI: the optimizer record O and the descriptive triplet (A, O, S)
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StateEntry(Record):
    """One entry of an optimizer's state (ftip-00JI): the parameter it belongs to, its name, shape and
    dtype and its bytes. A plain Python number (a step counter kept on the host) has shape ``()``, its
    Python type as ``dtype`` and 0 tensor bytes."""

    KIND: ClassVar[str] = "optimizer state"

    parameter: str
    name: str
    shape: tuple[int, ...]
    dtype: str
    nbytes: int


def _value(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(_value(x) for x in v) + ")"
    return str(v)


def _state_entries(parameter: str, prefix: str, state: Mapping[str, Any]) -> list[StateEntry]:
    out = []
    for key in sorted(state):
        value, name = state[key], prefix + str(key)
        if isinstance(value, torch.Tensor):
            out.append(StateEntry(parameter, name, tuple(value.shape), str(value.dtype).removeprefix("torch."),
                                  value.numel() * value.element_size()))
        elif isinstance(value, Mapping):
            out.extend(_state_entries(parameter, name + ".", value))
        else:
            out.append(StateEntry(parameter, name, (), type(value).__name__, 0))
    return out


def _algorithm(optimizer: torch.optim.Optimizer) -> str:
    cls = type(optimizer)
    if cls.__module__.startswith("torch.optim") and getattr(torch.optim, cls.__name__, None) is cls:
        return f"torch.optim.{cls.__name__}"
    return f"{cls.__module__}.{cls.__qualname__}"


#: Param-group keys that are not hyperparameters.
_NOT_HYPER = ("params", "param_names")


@dataclass(frozen=True)
class OptimizerRecord(Record):
    """The optimizer coordinate ``O`` of a run (ftip-00JI), read off a live optimizer by :meth:`capture`.

    ``algorithm`` is the optimizer class; ``hyperparameters`` one line per param group with every
    key of the group except its parameters (the learning rate as it stands now, and the trainer's
    ``initial_lr``); ``update_rule`` the rule each group runs and the state it keeps; ``state``
    every state entry; ``steps`` the largest step count in the state (``UNKNOWN`` when the rule
    keeps none).
    """

    KIND: ClassVar[str] = "optimizer"

    algorithm: str | Unknown = UNKNOWN
    hyperparameters: tuple[str, ...] | Unknown = UNKNOWN
    update_rule: str | Unknown = UNKNOWN
    state: tuple[StateEntry, ...] | Unknown = UNKNOWN
    steps: int | Unknown = UNKNOWN

    def __post_init__(self) -> None:
        _text("OptimizerRecord", "algorithm", self.algorithm)
        _text("OptimizerRecord", "update_rule", self.update_rule)
        _int("OptimizerRecord", "steps", self.steps, 0)
        if not isinstance(self.state, Unknown):
            object.__setattr__(self, "state", tuple(self.state))
            if not all(isinstance(s, StateEntry) for s in self.state):
                raise TypeError("OptimizerRecord.state must hold StateEntry records")
        if not isinstance(self.hyperparameters, Unknown):
            object.__setattr__(self, "hyperparameters", tuple(self.hyperparameters))

    @classmethod
    def capture(cls, optimizer: torch.optim.Optimizer, model: torch.nn.Module | None = None) -> "OptimizerRecord":
        """Read the record off ``optimizer``; with ``model``, state entries name their parameters
        (``model.named_parameters()``), else ``group<g>.param<i>``."""
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(f"capture needs a torch.optim.Optimizer, got {type(optimizer).__name__}")
        names = {id(p): n for n, p in model.named_parameters()} if model is not None else {}
        hyper, rules, state = [], [], []
        for g, group in enumerate(optimizer.param_groups):
            keys = sorted(k for k in group if k not in _NOT_HYPER)
            params = group["params"]
            hyper.append(f"group {g}: " + ", ".join(f"{k}={_value(group[k])}" for k in keys))
            entries = []
            for i, p in enumerate(params):
                entries += _state_entries(names.get(id(p), f"group{g}.param{i}"), "", optimizer.state.get(p, {}))
            state += entries
            kept = ", ".join(dict.fromkeys(e.name for e in entries)) or "no state yet"
            rules.append(f"group {g}: {group.get('algorithm', type(optimizer).__name__.lower())} ({kept})")
        steps = [int(v) for g in optimizer.param_groups for p in g["params"]
                 for k, v in optimizer.state.get(p, {}).items() if k == "step"]
        return cls(_algorithm(optimizer), tuple(hyper), "; ".join(rules), tuple(state),
                   max(steps) if steps else UNKNOWN)

    @property
    def state_bytes(self) -> int:
        """Bytes of every state tensor together."""
        return sum(s.nbytes for s in self.state)

    def state_summary(self) -> list[tuple[str, int, int, str, int]]:
        """Per state name: ``(name, entries, elements, dtypes, bytes)``."""
        out: dict[str, list] = {}
        for s in self.state:
            row = out.setdefault(s.name, [s.name, 0, 0, set(), 0])
            row[1] += 1
            row[2] += math.prod(s.shape)
            row[3].add(s.dtype)
            row[4] += s.nbytes
        return [(n, k, e, "/".join(sorted(d)), b) for n, k, e, d, b in out.values()]

    @property
    def setting(self) -> str:
        """Algorithm and hyperparameters on one line, without the state; the optimizer coordinate of a recipe."""
        return f"{self.algorithm}: " + "; ".join(self.hyperparameters)

    def rows(self, redact: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        summary = ", ".join(f"{n} x{k} ({b} bytes)" for n, k, _, _, b in self.state_summary())
        return [(k, summary if k == "state" and k not in redact else v) for k, v in super().rows(redact)]


def _descriptive(op: str):
    def refuse(self: "RefinedRecord", other: object) -> bool:
        raise TypeError(f"'{op}' on an (A, O, S) record: the triplet describes a system, it is not a score to "
                        f"order or compare with a number (ftip-00JI)")
    return refuse


@dataclass(frozen=True)
class RefinedRecord(Record):
    """The triplet ``(A, O, S)`` of architecture, optimizer and systems records (ftip-00JI).

    Each part may be ``UNKNOWN`` when a question does not need it. The triplet is descriptive:
    ``<``, ``<=``, ``>``, ``>=`` (also against a number) and ``float()``/``int()`` raise
    ``TypeError``; equality and :func:`~ftipbook.compare.records.diff_records` still work.
    """

    KIND: ClassVar[str] = "refined"

    architecture: ArchitectureRecord | Unknown = UNKNOWN
    optimizer: OptimizerRecord | Unknown = UNKNOWN
    systems: SystemsRecord | Unknown = UNKNOWN

    def __post_init__(self) -> None:
        for name, kind in (("architecture", ArchitectureRecord), ("optimizer", OptimizerRecord),
                           ("systems", SystemsRecord)):
            if not isinstance(getattr(self, name), (kind, Unknown)):
                raise TypeError(f"RefinedRecord.{name} must be a {kind.__name__} or UNKNOWN, "
                                f"got {type(getattr(self, name)).__name__}")

    __lt__ = _descriptive("<")
    __le__ = _descriptive("<=")
    __gt__ = _descriptive(">")
    __ge__ = _descriptive(">=")

    def __float__(self) -> float:
        raise TypeError("an (A, O, S) record has no scalar value (ftip-00JI)")

    def __int__(self) -> int:
        raise TypeError("an (A, O, S) record has no scalar value (ftip-00JI)")


# ----------------------------------------------------------------------------------------------
# ftip-00JY, 00LT: the model-instance record
# ----------------------------------------------------------------------------------------------
#: Fields that an architecture change changes by construction (the architecture itself, the
#: weights, the parameter count and the kernels that run its mixers).
ARCHITECTURE_FIELDS = ("architecture", "checkpoint", "parameters", "kernels")
#: Fields holding measured outcomes of a run rather than conditions of it.
OUTCOME_FIELDS = ("train_cost", "inference_cost")


@dataclass(frozen=True)
class ModelInstanceRecord(Record):
    """The evidence record of one model instance (ftip-00JY, ftip-00LT).

    Identity: ``architecture`` (a variant description; a bare family label is refused),
    ``checkpoint`` (a weight hash) and ``parameters`` (measured count). Recipe: ``data`` (corpus and
    data order), ``tokens`` and ``updates`` (the training budget), ``post_training``, ``optimizer``
    (algorithm, hyperparameters and schedule). Execution stack: ``precision``, ``hardware``,
    ``software``, ``kernels``, ``cache_policy`` and ``inference_budget``. Costs:
    ``train_cost`` and ``inference_cost`` (:class:`~ftipbook.compare.cost.CostVector`, with disjoint
    coordinate names; :attr:`cost` joins them). Evaluation: ``task_suite``, ``evaluation_law`` and
    ``eval_seed``, an evaluation seed independent of the training seeds. ``name`` is a label and
    takes no part in comparisons. Missing fields are ``UNKNOWN``.
    """

    KIND: ClassVar[str] = "instance"
    MACHINE_FIELDS: ClassVar[tuple[str, ...]] = ("hardware", "software")

    name: str
    architecture: str | Unknown = UNKNOWN
    checkpoint: str | Unknown = UNKNOWN
    parameters: int | Unknown = UNKNOWN
    data: str | Unknown = UNKNOWN
    tokens: int | Unknown = UNKNOWN
    updates: int | Unknown = UNKNOWN
    post_training: str | Unknown = UNKNOWN
    optimizer: str | Unknown = UNKNOWN
    precision: str | Unknown = UNKNOWN
    hardware: str | Unknown = UNKNOWN
    software: str | Unknown = UNKNOWN
    kernels: str | Unknown = UNKNOWN
    cache_policy: str | Unknown = UNKNOWN
    inference_budget: str | Unknown = UNKNOWN
    train_cost: CostVector | Unknown = UNKNOWN
    inference_cost: CostVector | Unknown = UNKNOWN
    task_suite: str | Unknown = UNKNOWN
    evaluation_law: str | Unknown = UNKNOWN
    eval_seed: int | Unknown = UNKNOWN

    def __post_init__(self) -> None:
        if isinstance(self.name, Unknown):
            raise ValueError("ModelInstanceRecord.name is required")
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("parameters", "tokens", "updates", "eval_seed"):
                _int("ModelInstanceRecord", f.name, value, 1 if f.name == "parameters" else 0)
            elif f.name in OUTCOME_FIELDS:
                if not isinstance(value, (CostVector, Unknown)):
                    raise TypeError(f"ModelInstanceRecord.{f.name} must be a CostVector or UNKNOWN, "
                                    f"got {type(value).__name__}")
            else:
                _text("ModelInstanceRecord", f.name, value)
        _not_generic("ModelInstanceRecord", "architecture", self.architecture)
        if isinstance(self.train_cost, CostVector) and isinstance(self.inference_cost, CostVector):
            shared = sorted(set(self.train_cost.names) & set(self.inference_cost.names))
            if shared:
                raise ValueError(f"train_cost and inference_cost both have coordinate(s) {shared}; give each "
                                 f"coordinate one name (e.g. 'train_wall_time' and 'decode_wall_time')")

    @property
    def cost(self) -> CostVector | Unknown:
        """The training and inference coordinates as one vector (``UNKNOWN`` when either is missing)."""
        if isinstance(self.train_cost, Unknown) or isinstance(self.inference_cost, Unknown):
            return UNKNOWN
        return CostVector({**self.train_cost.values, **self.inference_cost.values},
                          {**self.train_cost.units, **self.inference_cost.units})

    @classmethod
    def capture(cls, name: str, model: torch.nn.Module, optimizer: torch.optim.Optimizer, config: TrainConfig,
                randomness: RunRandomness, systems: SystemsRecord, *, data: str, post_training: str,
                train_cost: CostVector, inference_cost: CostVector, task_suite: str, evaluation_law: str,
                eval_seed: int, tokenizer: Any = None) -> "ModelInstanceRecord":
        """The record of a live run: architecture, checkpoint (runtime hash of the weights, config and
        ``tokenizer``) and measured parameter count from ``model``; data order, tokens and updates from
        ``config`` and ``randomness`` (:meth:`~ftipbook.compare.records.TrainingRecord.from_run`);
        the optimizer setting from the live ``optimizer`` (:class:`OptimizerRecord`) with the schedule
        the trainer builds; precision, hardware, software, kernels, cache policy and inference workload
        from ``systems`` (:meth:`~ftipbook.compare.records.SystemsRecord.capture`). Costs are measured
        by the caller; the rest is declared. ``eval_seed`` must differ from every training seed."""
        from ftipbook.artifact import ModelArtifact
        from ftipbook.model.accounting import measured_param_count

        if not isinstance(systems, SystemsRecord):
            raise TypeError(f"systems must be a SystemsRecord (SystemsRecord.capture), got {type(systems).__name__}")
        if isinstance(eval_seed, int) and eval_seed in randomness.to_dict().values():
            used = [k for k, v in randomness.to_dict().items() if v == eval_seed]
            raise ValueError(f"eval_seed={eval_seed} is the training seed {used[0]!r}; the evaluation seed must be "
                             f"independent of training (ftip-00JY)")
        training = TrainingRecord.from_run(config, randomness, data=data, sft=post_training)
        setting = OptimizerRecord.capture(optimizer, model).setting
        artifact = ModelArtifact.from_model(model, tokenizer)
        budget = (f"batch {systems.batch}, prompt {systems.prompt_length} + {systems.new_tokens} new tokens, "
                  f"{systems.decoding}, warm-up {systems.warmup}, concurrency {systems.concurrency}")
        return cls(name, describe_architecture(model.cfg), f"sha256:{artifact.runtime_hash()}",
                   measured_param_count(model),
                   f"{training.data}; {training.token_order}", training.data_volume, training.update_count,
                   post_training, f"{setting}; schedule {training.schedule}", systems.precision, systems.hardware,
                   systems.software, systems.kernel, systems.cache_policy, budget, train_cost, inference_cost,
                   task_suite, evaluation_law, eval_seed)

    @classmethod
    def from_study(cls, entry: Any) -> "ModelInstanceRecord":
        """The record of one run of the committed study (``ftipbook.study``), read from what the run
        captured (``entry.records``, ``entry.outcome.record``, ``entry.cost``, ``entry.config``).

        The study keeps weights only for some runs, so ``checkpoint`` names the training run instead (a
        training commit: package, budget, seed and the SHA-256 of the batch stream it consumed).
        ``train_cost`` holds the coordinates of ``entry.cost`` that training spends (``train_flops``,
        ``wall_time``, ``memory``, ``energy``), ``inference_cost`` the others. Scoring is
        deterministic and teacher-forced on a fixed document draw, so ``eval_seed`` is the seed of that
        draw, ``zoo.VALID_SEED``."""
        from ftipbook import zoo

        try:
            records, run, cost, cfg = entry.records, entry.outcome.record, entry.cost, entry.config
            arch, train, systems = records["architecture"], records["training"], records["systems"]
            optimizer, evaluation = records["optimizer"], run["evaluation"]
        except (AttributeError, KeyError, TypeError) as err:
            raise TypeError(f"from_study needs a study entry (ftipbook.study.StudyEntry); missing {err}") from err
        if not isinstance(cost, CostVector):
            raise TypeError(f"entry.cost must be a CostVector, got {type(cost).__name__}")
        spent = [n for n in cost.names if n in _TRAINING_COSTS]
        seeds = train["seeds"]
        hyper = ", ".join(f"{k}={_value(tuple(v) if isinstance(v, list) else v)}"
                          for k, v in optimizer["hyperparameters"].items())
        return cls(
            f"{entry.architecture}@{entry.budget}/seed{entry.seed}",
            describe_architecture(cfg),
            f"training run {entry.architecture}/{entry.budget} steps/seed {entry.seed}, "
            f"batch stream sha256:{train['stream_sha256'][:16]}",
            arch["parameters"],
            f"{run['data']['corpus']} (sha256:{run['data']['sha256'][:16]}); data-order seed {seeds['data_order']}, "
            f"window-offset seed {seeds['window_offset']}",
            train["tokens"], run["budget_steps"], run["post_training"],
            f"{optimizer['name']}: {hyper}; schedule {train['schedule']}",
            systems["dtype"], f"{systems['device']}: {systems['cpu']}, {systems['threads']} torch threads",
            ", ".join(f"{k} {v}" for k, v in systems["versions"].items()), systems["kernels"],
            f"no decoding cache ({run['inference']})",
            f"{run['inference']}, windows of {run['seq_len']} tokens",
            CostVector({n: cost[n] for n in spent}, {n: cost.units[n] for n in spent}),
            CostVector({n: cost[n] for n in cost.names if n not in spent},
                       {n: cost.units[n] for n in cost.names if n not in spent}),
            f"{evaluation['split']} split: {evaluation['documents']} documents (sha256:{evaluation['sha256'][:16]})",
            evaluation["rule"], zoo.VALID_SEED)


#: The coordinates of a standard cost vector that training spends (the rest are inference coordinates).
_TRAINING_COSTS = ("train_flops", "wall_time", "memory", "energy")


def describe_architecture(cfg: Any) -> str:
    """The architecture field of a ``ModelConfig``: the variant label of
    :func:`~ftipbook.compare.records.describe_variant` plus the depth reuse it omits (``n_loops``)."""
    variant = describe_variant(cfg)
    return variant if cfg.n_loops == 1 else f"{variant}, block stack applied {cfg.n_loops} times"


def _instance_fields() -> tuple[str, ...]:
    return tuple(f.name for f in fields(ModelInstanceRecord) if f.name != "name")


@dataclass(frozen=True)
class Attribution:
    """Whether a difference between two instances can be put down to architecture (ftip-00JY).

    ``status`` is ``"unknown"`` when a field of either record is missing (``missing`` names them,
    as ``a.<field>`` / ``b.<field>``), ``"confounded"`` when recorded fields other than
    :data:`ARCHITECTURE_FIELDS` and :data:`OUTCOME_FIELDS` differ (``confounders``), and
    ``"architecture"`` otherwise.
    """

    status: str
    missing: tuple[str, ...] = ()
    confounders: tuple[str, ...] = ()


def attribution(a: ModelInstanceRecord, b: ModelInstanceRecord) -> Attribution:
    """Attribution status of the difference between instances ``a`` and ``b`` (ftip-00JY)."""
    if not isinstance(a, ModelInstanceRecord) or not isinstance(b, ModelInstanceRecord):
        raise TypeError(f"attribution takes two ModelInstanceRecords, got {type(a).__name__} and {type(b).__name__}")
    missing = tuple(f"a.{m}" for m in missing_fields(a)) + tuple(f"b.{m}" for m in missing_fields(b))
    if missing:
        return Attribution("unknown", missing)
    allowed = set(ARCHITECTURE_FIELDS) | set(OUTCOME_FIELDS) | {"name"}
    confounders = tuple(c.path for c in diff_records(a, b) if c.path not in allowed)
    return Attribution("confounded", (), confounders) if confounders else Attribution("architecture")


@dataclass(frozen=True)
class Comparability:
    """Result of :func:`comparable` (ftip-00LT): ``ok`` is true when no field breaks the declaration;
    ``arms`` lists each field that does, as a named
    :class:`~ftipbook.compare.records.ComparisonArm` (a fixed field that differs, or any declared
    field that is unrecorded)."""

    ok: bool
    fixed: tuple[str, ...]
    varied: tuple[str, ...]
    arms: tuple[ComparisonArm, ...]

    def __bool__(self) -> bool:
        return self.ok


def _field_names(what: str, names: Iterable[str] | str, allowed: Sequence[str]) -> tuple[str, ...]:
    if isinstance(names, str):
        raise TypeError(f"{what} must be a collection of field names, not the string {names!r}")
    names = tuple(names)
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise ValueError(f"{what} names {unknown}, which are not fields of ModelInstanceRecord; "
                         f"fields: {list(allowed)}")
    return names


def comparable(a: ModelInstanceRecord, b: ModelInstanceRecord, *, varied: Iterable[str],
               fixed: Iterable[str] | None = None) -> Comparability:
    """Check a declared comparison of two instance records (ftip-00LT).

    ``varied`` lists the fields allowed to differ; ``fixed`` those held fixed (default: every other
    field). Together they must declare every field but ``name``. The comparison passes when every
    fixed field is recorded and equal on both sides and every varied field is recorded; a field that
    differs without being declared varied, or is unknown, comes back as a named arm.
    """
    if not isinstance(a, ModelInstanceRecord) or not isinstance(b, ModelInstanceRecord):
        raise TypeError(f"comparable takes two ModelInstanceRecords, got {type(a).__name__} and {type(b).__name__}")
    allowed = _instance_fields()
    varied = _field_names("varied", varied, allowed)
    fixed = tuple(n for n in allowed if n not in varied) if fixed is None else _field_names("fixed", fixed, allowed)
    both = sorted(set(varied) & set(fixed))
    if both:
        raise ValueError(f"field(s) {both} are declared both fixed and varied")
    undeclared = [n for n in allowed if n not in varied and n not in fixed]
    if undeclared:
        raise ValueError(f"field(s) {undeclared} are declared neither fixed nor varied; a comparison declares every "
                         f"field (ftip-00LT)")
    arms = list(check_common_conditions(a, b, ignore=("name",) + varied))
    arms += [ComparisonArm(n, getattr(a, n), getattr(b, n), "unrecorded") for n in varied
             if isinstance(getattr(a, n), Unknown) or isinstance(getattr(b, n), Unknown)]
    return Comparability(not arms, fixed, varied, tuple(arms))


# ----------------------------------------------------------------------------------------------
# ftip-00LU: the comparison unit
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ComparisonUnit:
    """A pair of model-instance records on one task family and evaluation law, with a declared cost
    scalarization (ftip-00LU).

    Refused, with the reason named: a record with an undocumented (unknown) field; a record whose
    ``task_suite`` or ``evaluation_law`` is not the unit's; two records with one name or checkpoint;
    a pair that :func:`comparable` rejects under the declared ``varied`` fields; a scalarization
    that cannot price both records (a unit mismatch raises, a positive weight on an unknown
    coordinate is refused).
    """

    pair: tuple[ModelInstanceRecord, ModelInstanceRecord]
    task_family: str
    evaluation_law: str
    scalarization: Scalarization
    varied: tuple[str, ...] = ARCHITECTURE_FIELDS + OUTCOME_FIELDS

    def __post_init__(self) -> None:
        pair = tuple(self.pair) if isinstance(self.pair, (tuple, list)) else None
        if pair is None or len(pair) != 2 or not all(isinstance(r, ModelInstanceRecord) for r in pair):
            raise TypeError("ComparisonUnit.pair must be two ModelInstanceRecords")
        object.__setattr__(self, "pair", pair)
        object.__setattr__(self, "varied", tuple(self.varied))
        for name in ("task_family", "evaluation_law"):
            _text("ComparisonUnit", name, getattr(self, name))
            if isinstance(getattr(self, name), Unknown):
                raise ValueError(f"ComparisonUnit.{name} must be declared")
        if not isinstance(self.scalarization, Scalarization):
            raise TypeError(f"ComparisonUnit.scalarization must be a Scalarization, "
                            f"got {type(self.scalarization).__name__}")
        a, b = pair
        if a.name == b.name or a.checkpoint == b.checkpoint:
            raise ValueError(f"the pair must be two instances; both have name {a.name!r}" if a.name == b.name
                             else f"the pair must be two instances; both are checkpoint {a.checkpoint!r}")
        missing = [f"{r.name}.{m}" for r in pair for m in missing_fields(r)]
        if missing:
            raise ValueError(f"undocumented coordinate(s) {missing}: a comparison unit needs every field of both "
                             f"records (ftip-00LU)")
        for r in pair:
            if r.task_suite != self.task_family or r.evaluation_law != self.evaluation_law:
                raise ValueError(f"{r.name} was evaluated on {r.task_suite!r} under {r.evaluation_law!r}, not on the "
                                 f"unit's {self.task_family!r} under {self.evaluation_law!r}")
        check = comparable(a, b, varied=self.varied)
        if not check:
            raise ValueError("the pair breaks its declaration: " + "; ".join(arm.name for arm in check.arms))
        for r in pair:
            scalar = self.scalarization(r.cost)
            if isinstance(scalar, Unknown):
                raise ValueError(f"the scalar cost of {r.name} is unknown ({scalar.reason}); measure the coordinate or "
                                 f"declare a scalarization without it")

    @property
    def costs(self) -> tuple[float, float]:
        """The declared scalar cost of each record of the pair."""
        return tuple(self.scalarization(r.cost) for r in self.pair)  # type: ignore[return-value]

    @property
    def differences(self) -> tuple[str, ...]:
        """The recorded fields on which the two instances differ."""
        return tuple(c.path for c in diff_records(*self.pair) if c.path != "name")


__all__ = [
    "MAX_PROBES",
    "DISTRIBUTION", "MissingField", "InterfaceMismatch", "NextTokenInterface", "ModelRecord", "describe_map",
    "ArchitectureRecord", "require_architecture", "StateEntry", "OptimizerRecord", "RefinedRecord",
    "ARCHITECTURE_FIELDS", "OUTCOME_FIELDS", "describe_architecture", "ModelInstanceRecord", "Attribution",
    "attribution", "Comparability", "comparable", "ComparisonUnit",
]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
