"""Comparison records: who is compared, under which conditions, trained and run how (ftip-00L5 to 00L8).

A paired comparison is only as good as what it writes down. Each record here is a frozen
dataclass of named coordinates; a coordinate nobody recorded holds
:data:`~ftipbook.compare.cost.UNKNOWN` (the default), never a guess:

* :class:`SystemIdentity` and :class:`ComparisonPair`: the two systems, by checkpoint, variant,
  layer pattern, parameter counts, tokenizer and context limit (ftip-00L5); a bare family label
  such as ``"Transformer"`` is refused.
* :class:`EvaluationConditions`: task family, prompt law, scoring rule, sampling seeds, stopping
  rule, evaluator version (ftip-00L6).
* :class:`TrainingRecord` with its :class:`TuningProtocol`: the training and post-training
  coordinates and the search resources of an equal-tuning arm (ftip-00L7).
* :class:`SystemsRecord`: hardware, software, kernels, precision, batch, cache policy, sequence
  lengths, warm-up, concurrency, decoding (ftip-00L8), filled from a live model by
  :meth:`SystemsRecord.capture`.

Three functions work on every record type, so later record types (architecture, optimizer,
model-instance records) only need to subclass :class:`Record`: :func:`missing_fields` lists the
unknown coordinates, :func:`diff_records` lists the coordinates that differ, and
:func:`check_common_conditions` turns every difference or unknown into a named
:class:`ComparisonArm` (ftip-00L6: an exception is a separate arm, not an architecture effect).
"""
from __future__ import annotations

import os
import platform
from dataclasses import dataclass, fields
from typing import Any, ClassVar

import torch

from ftipbook.artifact import ModelArtifact
from ftipbook.compare.cost import UNKNOWN, Unknown
from ftipbook.model.config import MIXERS
from ftipbook.train.config import RunRandomness, TrainConfig
from ftipbook.train.optimizers import build_schedule

#: Family words that do not identify a system, because they leave attention, cache and layer pattern unnamed.
GENERIC_LABELS = frozenset({
    "transformer", "the transformer", "transformers", "baseline", "reference", "model", "llm",
    "attention", "full attention", "linear attention", "hybrid", "kimi", "kimi linear",
})


def _text(record: str, name: str, value: object) -> None:
    if isinstance(value, Unknown):
        return
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{record}.{name} must be a non-empty string or UNKNOWN, got {value!r}")


def _count(record: str, name: str, value: object, low: int = 0) -> None:
    if isinstance(value, Unknown):
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{record}.{name} must be an int >= {low} or UNKNOWN, got {value!r}")


def _plain(value: Any) -> Any:
    if isinstance(value, Unknown):
        return "UNKNOWN"
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Record:
    """Base of every comparison record: a frozen dataclass whose fields are the recorded coordinates.

    ``KIND`` names the group a field belongs to when records are diffed (``"identity"``,
    ``"evaluation"``, ``"training"``, ``"systems"``, ...).
    """

    KIND: ClassVar[str] = "record"

    def to_dict(self) -> dict[str, Any]:
        """Plain nested dict (``UNKNOWN`` as the string ``"UNKNOWN"``), e.g. for JSON."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}

    def rows(self, redact: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        """``(field, value)`` strings for a printed table; fields named in ``redact`` show ``<captured>``."""
        return [(f.name, "<captured>" if f.name in redact else str(_plain(getattr(self, f.name)))) for f in fields(self)]


def missing_fields(record: Record) -> tuple[str, ...]:
    """Dotted names of the coordinates of ``record`` (and of the records inside it) that are unknown."""
    if not isinstance(record, Record):
        raise TypeError(f"missing_fields takes a Record, got {type(record).__name__}")
    out: list[str] = []
    for f in fields(record):
        value = getattr(record, f.name)
        if isinstance(value, Unknown):
            out.append(f.name)
        elif isinstance(value, Record):
            out.extend(f"{f.name}.{name}" for name in missing_fields(value))
    return tuple(out)


@dataclass(frozen=True)
class FieldChange:
    """One coordinate where two records differ (``status="differs"``) or cannot be compared because
    at least one side is unknown (``status="unrecorded"``); ``kind`` is the ``KIND`` of its record."""

    path: str
    kind: str
    a: Any
    b: Any
    status: str


def diff_records(a: Record, b: Record) -> tuple[FieldChange, ...]:
    """Every coordinate where two records of the same type differ or are unknown, recursing into sub-records."""
    if not isinstance(a, Record) or type(a) is not type(b):
        raise TypeError(f"diff_records compares two records of one type, got {type(a).__name__} and {type(b).__name__}")
    out: list[FieldChange] = []
    for f in fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, Record) and type(x) is type(y):
            out.extend(FieldChange(f"{f.name}.{c.path}", c.kind, c.a, c.b, c.status) for c in diff_records(x, y))
        elif isinstance(x, Unknown) or isinstance(y, Unknown):
            out.append(FieldChange(f.name, a.KIND, x, y, "unrecorded"))
        elif x != y:
            out.append(FieldChange(f.name, a.KIND, x, y, "differs"))
    return tuple(out)


@dataclass(frozen=True)
class ComparisonArm:
    """A coordinate that is not common to both sides, to be reported as its own comparison arm (ftip-00L6)."""

    coordinate: str
    a: Any
    b: Any
    status: str

    @property
    def name(self) -> str:
        return f"separate arm: {self.coordinate} {self.status} ({_brief(self.a)} vs {_brief(self.b)})"


def _brief(value: Any) -> str:
    """A value for a one-line label: long sequences shortened to their ends and length."""
    value = _plain(value)
    if isinstance(value, list) and len(value) > 6:
        return f"[{value[0]}, {value[1]}, ..., {value[-1]}] ({len(value)} values)"
    return str(value)


def check_common_conditions(a: Record, b: Record, *, ignore: tuple[str, ...] = ()) -> tuple[ComparisonArm, ...]:
    """The coordinates that are not common to ``a`` and ``b``, each as a named :class:`ComparisonArm`.

    An empty tuple means the two sides share every recorded condition. An unknown coordinate is
    not assumed equal: it comes back as an arm with ``status="unrecorded"``. ``ignore`` lists
    dotted coordinates (or whole sub-records) that the comparison declares it varies or does not use.
    """
    def ignored(path: str) -> bool:
        return any(path == x or path.startswith(x + ".") for x in ignore)

    return tuple(ComparisonArm(c.path, c.a, c.b, c.status) for c in diff_records(a, b) if not ignored(c.path))


# ----------------------------------------------------------------------------------------------
# ftip-00L5: comparison pair identity
# ----------------------------------------------------------------------------------------------
def describe_variant(cfg: Any) -> str:
    """A variant label read off a ``ModelConfig``: mixers per layer, attention heads and positions.

    E.g. ``"4 layers KKKM: KDA + MLA (NoPE), d=64, 4 heads"``.
    """
    kinds = cfg.layer_kinds
    names = []
    for letter in dict.fromkeys(kinds):
        name = {"A": "MHA" if cfg.kv_heads == cfg.n_heads else f"GQA({cfg.kv_heads} kv heads)", "M": "MLA", "K": "KDA"}[letter]
        if letter == "M":
            name += " (NoPE)" if cfg.mla_nope else " (decoupled RoPE)"
        if letter == "A":
            name += f" ({cfg.pos})"
        names.append(name)
    return f"{len(kinds)} layers {kinds}: {' + '.join(names)}, d={cfg.d_model}, {cfg.n_heads} heads"


@dataclass(frozen=True)
class SystemIdentity(Record):
    """One side of a paired comparison (ftip-00L5).

    ``checkpoint`` is a weight hash or a training commit; ``variant`` a description that names the
    attention and cache (a bare family word such as ``"Transformer"`` is refused); ``layer_pattern``
    the mixer letters of :data:`ftipbook.model.config.MIXERS` (``A`` attention, ``M`` MLA, ``K``
    KDA), for every layer or for the repeating unit; ``tokenizer`` a tokenizer hash or id;
    ``context_limit`` in tokens.
    """

    KIND: ClassVar[str] = "identity"

    name: str
    checkpoint: str | Unknown = UNKNOWN
    variant: str | Unknown = UNKNOWN
    layer_pattern: str | Unknown = UNKNOWN
    total_params: int | Unknown = UNKNOWN
    active_params: int | Unknown = UNKNOWN
    tokenizer: str | Unknown = UNKNOWN
    context_limit: int | Unknown = UNKNOWN

    def __post_init__(self) -> None:
        _text("SystemIdentity", "name", self.name)
        if isinstance(self.name, Unknown):
            raise ValueError("SystemIdentity.name is required")
        for name in ("checkpoint", "variant", "layer_pattern", "tokenizer"):
            _text("SystemIdentity", name, getattr(self, name))
        for name in ("total_params", "active_params", "context_limit"):
            _count("SystemIdentity", name, getattr(self, name), 1)
        if isinstance(self.variant, str) and self.variant.strip().lower() in GENERIC_LABELS:
            raise ValueError(
                f"variant {self.variant!r} does not identify the system: name its attention, cache and layer "
                f"pattern (e.g. 'full MLA, 4 layers' or '3 KDA : 1 MLA (NoPE)'), ftip-00L5"
            )
        if isinstance(self.layer_pattern, str) and set(self.layer_pattern) - set(MIXERS):
            raise ValueError(f"layer_pattern {self.layer_pattern!r} must use the letters {sorted(MIXERS)} "
                             f"({', '.join(f'{k}={v}' for k, v in MIXERS.items())})")
        if (isinstance(self.total_params, int) and isinstance(self.active_params, int)
                and self.active_params > self.total_params):
            raise ValueError(f"active_params={self.active_params} exceeds total_params={self.total_params}")

    @classmethod
    def from_model(cls, name: str, model: torch.nn.Module, *, checkpoint: str | Unknown = UNKNOWN,
                   tokenizer: str | Unknown = UNKNOWN) -> "SystemIdentity":
        """Identity of a live ``DecoderLM``: variant, pattern, measured and active parameter counts and
        context limit come from the model; the checkpoint hash and tokenizer must be supplied."""
        from ftipbook.model.accounting import active_param_count, measured_param_count

        cfg = getattr(model, "cfg", None)
        if cfg is None:
            raise TypeError(f"from_model needs an ftipbook DecoderLM (with .cfg), got {type(model).__name__}")
        return cls(name, checkpoint, describe_variant(cfg), cfg.layer_kinds, measured_param_count(model),
                   active_param_count(cfg), tokenizer, cfg.max_seq_len)


    @classmethod
    def from_artifact(cls, name: str, artifact: ModelArtifact) -> "SystemIdentity":
        """Identity of a base-model artifact (ftip-001K): the checkpoint is its runtime hash (tokenizer,
        configuration, weights, numerics) and the tokenizer its ``sha256()``; the rest as in :meth:`from_model`."""
        if not isinstance(artifact, ModelArtifact):
            raise TypeError(f"from_artifact needs a ModelArtifact, got {type(artifact).__name__}")
        tokenizer = artifact.tokenizer.sha256() if hasattr(artifact.tokenizer, "sha256") else UNKNOWN
        return cls.from_model(name, artifact.model(), checkpoint=f"sha256:{artifact.runtime_hash()}", tokenizer=tokenizer)


@dataclass(frozen=True)
class ComparisonPair(Record):
    """The two systems of a paired comparison (ftip-00L5); :meth:`differences` says how they differ."""

    KIND: ClassVar[str] = "pair"

    a: SystemIdentity
    b: SystemIdentity

    def __post_init__(self) -> None:
        if not isinstance(self.a, SystemIdentity) or not isinstance(self.b, SystemIdentity):
            raise TypeError("ComparisonPair(a, b) takes two SystemIdentity records")
        if self.a.name == self.b.name:
            raise ValueError(f"both systems are called {self.a.name!r}; give each side its own name")
        if isinstance(self.a.checkpoint, str) and self.a.checkpoint == self.b.checkpoint:
            raise ValueError(f"both systems are the same checkpoint {self.a.checkpoint!r}")

    @property
    def identified(self) -> bool:
        """True when every identity coordinate of both systems is recorded."""
        return not missing_fields(self)

    def differences(self) -> tuple[FieldChange, ...]:
        """The recorded identity coordinates on which the two systems differ (name excluded; coordinates
        unknown on either side are listed by :func:`missing_fields` instead)."""
        return tuple(c for c in diff_records(self.a, self.b) if c.path != "name" and c.status == "differs")


# ----------------------------------------------------------------------------------------------
# ftip-00L6: common task and evaluation conditions
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EvaluationConditions(Record):
    """The evaluation both systems must share (ftip-00L6); compare two with :func:`check_common_conditions`."""

    KIND: ClassVar[str] = "evaluation"

    task_family: str | Unknown = UNKNOWN
    prompt_law: str | Unknown = UNKNOWN
    scoring_rule: str | Unknown = UNKNOWN
    sampling_seeds: tuple[int, ...] | Unknown = UNKNOWN
    stopping_rule: str | Unknown = UNKNOWN
    evaluator_version: str | Unknown = UNKNOWN

    def __post_init__(self) -> None:
        for name in ("task_family", "prompt_law", "scoring_rule", "stopping_rule", "evaluator_version"):
            _text("EvaluationConditions", name, getattr(self, name))
        seeds = self.sampling_seeds
        if not isinstance(seeds, Unknown):
            seeds = tuple(seeds)
            if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
                raise ValueError(f"sampling_seeds must be a non-empty tuple of ints or UNKNOWN, got {self.sampling_seeds!r}")
            object.__setattr__(self, "sampling_seeds", seeds)


# ----------------------------------------------------------------------------------------------
# ftip-00L7: training and post-training coordinates
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TuningProtocol(Record):
    """Search resources of an equal-tuning arm (ftip-00L7, ftip-00JW), declared before tuning.

    ``alternatives`` are the predeclared recipe labels the search may choose from and ``selected``
    the one its selection rule chose. Equal tuning requires equal ``tuning_data``,
    ``trial_count``, ``selection_rule``, ``stopping_rule`` and ``tuning_cost``; the alternatives
    and the choice may differ between architectures.
    """

    KIND: ClassVar[str] = "tuning"
    RESOURCES: ClassVar[tuple[str, ...]] = ("tuning_data", "trial_count", "selection_rule", "stopping_rule", "tuning_cost")

    tuning_data: str | Unknown = UNKNOWN
    trial_count: int | Unknown = UNKNOWN
    selection_rule: str | Unknown = UNKNOWN
    stopping_rule: str | Unknown = UNKNOWN
    tuning_cost: str | Unknown = UNKNOWN
    alternatives: tuple[str, ...] | Unknown = UNKNOWN
    selected: str | Unknown = UNKNOWN

    def __post_init__(self) -> None:
        for name in ("tuning_data", "selection_rule", "stopping_rule", "tuning_cost", "selected"):
            _text("TuningProtocol", name, getattr(self, name))
        _count("TuningProtocol", "trial_count", self.trial_count, 1)
        if not isinstance(self.alternatives, Unknown):
            object.__setattr__(self, "alternatives", tuple(self.alternatives))
            if not self.alternatives:
                raise ValueError("TuningProtocol.alternatives must declare at least one recipe")
            if isinstance(self.selected, str) and self.selected not in self.alternatives:
                raise ValueError(f"selected recipe {self.selected!r} is not among the predeclared alternatives "
                                 f"{list(self.alternatives)}")


@dataclass(frozen=True)
class TrainingRecord(Record):
    """Training and post-training coordinates of one system (ftip-00L7).

    ``data`` names the corpus or mixture and ``data_volume`` the tokens trained on;
    ``token_order`` the data-order policy (e.g. its seeds); ``sft`` and
    ``feedback`` the supervised and feedback/RL stages (``"none"`` when there is none);
    ``update_count`` optimizer steps; ``selection_rule`` how the reported checkpoint was chosen;
    ``tuning`` the search protocol, for equal-tuning arms.
    """

    KIND: ClassVar[str] = "training"

    data: str | Unknown = UNKNOWN
    data_volume: int | Unknown = UNKNOWN
    token_order: str | Unknown = UNKNOWN
    optimizer: str | Unknown = UNKNOWN
    schedule: str | Unknown = UNKNOWN
    sft: str | Unknown = UNKNOWN
    feedback: str | Unknown = UNKNOWN
    update_count: int | Unknown = UNKNOWN
    selection_rule: str | Unknown = UNKNOWN
    tuning: TuningProtocol | Unknown = UNKNOWN

    def __post_init__(self) -> None:
        for name in ("data", "token_order", "optimizer", "schedule", "sft", "feedback", "selection_rule"):
            _text("TrainingRecord", name, getattr(self, name))
        _count("TrainingRecord", "data_volume", self.data_volume)
        _count("TrainingRecord", "update_count", self.update_count)
        if not isinstance(self.tuning, (TuningProtocol, Unknown)):
            raise TypeError(f"TrainingRecord.tuning must be a TuningProtocol or UNKNOWN, got {type(self.tuning).__name__}")

    @classmethod
    def from_run(cls, config: TrainConfig, randomness: RunRandomness, *, data: str, sft: str = "none",
                 feedback: str = "none", selection_rule: str = "last step",
                 tuning: TuningProtocol | Unknown = UNKNOWN) -> "TrainingRecord":
        """The record of a run of :mod:`ftipbook.train`: volume ``steps x batch_size x seq_len`` tokens,
        the data-order and window-offset seeds, the optimizer settings, the schedule the trainer
        builds (with its horizon) and the update count come from ``config`` and ``randomness``; ``data`` names the corpus or mixture."""
        if not isinstance(config, TrainConfig) or not isinstance(randomness, RunRandomness):
            raise TypeError("from_run takes an ftipbook.train TrainConfig and its RunRandomness")
        optimizer = (f"{config.optimizer}(lr={config.lr:g}, betas={tuple(config.betas)}, wd={config.weight_decay:g}, "
                     f"eps={config.eps:g}, clip={config.grad_clip})")
        schedule = repr(build_schedule(config))  # every setting, the horizon included
        order = f"data-order seed {randomness.data_order}, window-offset seed {randomness.window_offset}"
        return cls(data, config.steps * config.batch_size * config.seq_len, order, optimizer, schedule, sft, feedback,
                   config.steps, selection_rule, tuning)

    def common_recipe_arms(self, other: "TrainingRecord") -> tuple[ComparisonArm, ...]:
        """Coordinates breaking a common recipe: every training coordinate must be recorded and equal
        (the tuning protocol plays no part: a common recipe is not tuned per architecture)."""
        return check_common_conditions(self, other, ignore=("tuning",))

    def equal_tuning_arms(self, other: "TrainingRecord") -> tuple[ComparisonArm, ...]:
        """Coordinates breaking an equal-tuning arm: only the search resources must be recorded and equal;
        the recipes chosen from the predeclared alternatives may differ."""
        if isinstance(self.tuning, Unknown) or isinstance(other.tuning, Unknown):
            return (ComparisonArm("tuning", self.tuning, other.tuning, "unrecorded"),)
        resources = set(TuningProtocol.RESOURCES)
        return tuple(arm for arm in check_common_conditions(self.tuning, other.tuning) if arm.coordinate in resources)


# ----------------------------------------------------------------------------------------------
# ftip-00L8: inference and systems coordinates
# ----------------------------------------------------------------------------------------------
def describe_kernels(model: torch.nn.Module) -> str:
    """The kernels a ``DecoderLM`` runs, per mixer kind: e.g. ``"A: torch SDPA; K: KDA mode=auto"``."""
    cfg = getattr(model, "cfg", None)
    if cfg is None:
        raise TypeError(f"describe_kernels needs an ftipbook DecoderLM, got {type(model).__name__}")
    parts = []
    for letter in dict.fromkeys(cfg.layer_kinds):
        if letter == "A":
            parts.append("A: torch SDPA")
        elif letter == "M":
            parts.append(f"M: MLA {'absorbed' if cfg.mla_absorb else 'explicit'} + torch SDPA")
        else:
            modes = sorted({m.mode for m in model.modules() if hasattr(m, "mode") and hasattr(m, "state_nbytes")})
            parts.append(f"K: KDA mode={'/'.join(modes)}")
    return "; ".join(parts)


@dataclass(frozen=True)
class SystemsRecord(Record):
    """Inference and systems coordinates of one measured run (ftip-00L8).

    ``hardware`` and ``software`` are machine-specific (``MACHINE_FIELDS``); print records
    with ``rows(redact=SystemsRecord.MACHINE_FIELDS)`` so stored outputs do not depend on the
    machine. ``prompt_length`` and ``new_tokens`` are the sequence lengths; ``decoding`` the
    sampling settings (e.g. ``"greedy"`` or ``"temperature=1.0, top_p=0.9"``).
    """

    KIND: ClassVar[str] = "systems"
    MACHINE_FIELDS: ClassVar[tuple[str, ...]] = ("hardware", "software")

    hardware: str | Unknown = UNKNOWN
    software: str | Unknown = UNKNOWN
    kernel: str | Unknown = UNKNOWN
    precision: str | Unknown = UNKNOWN
    batch: int | Unknown = UNKNOWN
    cache_policy: str | Unknown = UNKNOWN
    prompt_length: int | Unknown = UNKNOWN
    new_tokens: int | Unknown = UNKNOWN
    warmup: int | Unknown = UNKNOWN
    concurrency: int | Unknown = UNKNOWN
    decoding: str | Unknown = UNKNOWN

    def __post_init__(self) -> None:
        for name in ("hardware", "software", "kernel", "precision", "cache_policy", "decoding"):
            _text("SystemsRecord", name, getattr(self, name))
        for name, low in (("batch", 1), ("prompt_length", 1), ("new_tokens", 0), ("warmup", 0), ("concurrency", 1)):
            _count("SystemsRecord", name, getattr(self, name), low)

    @classmethod
    def capture(cls, model: torch.nn.Module, *, batch: int, cache_policy: str, prompt_length: int, new_tokens: int,
                warmup: int, concurrency: int = 1, decoding: str = "greedy") -> "SystemsRecord":
        """Fill hardware, software, kernel and precision from the running machine and ``model``;
        the workload coordinates are declared by the caller."""
        param = next(model.parameters())
        device = param.device
        if device.type == "cuda":
            hardware = f"cuda: {torch.cuda.get_device_name(device)}"
        else:
            hardware = f"{device.type}: {platform.machine() or 'unknown machine'}, {os.cpu_count()} logical cores, " \
                       f"{torch.get_num_threads()} torch threads"
        software = f"torch {torch.__version__}, python {platform.python_version()}"
        return cls(hardware, software, describe_kernels(model), str(param.dtype).removeprefix("torch."), batch,
                   cache_policy, prompt_length, new_tokens, warmup, concurrency, decoding)


@dataclass(frozen=True)
class SystemsIntervention:
    """Result of :func:`systems_intervention`: the changed coordinates and whether outputs changed."""

    changes: tuple[FieldChange, ...]
    max_abs_diff: float
    alters_numerics: bool

    @property
    def label(self) -> str:
        if self.alters_numerics:
            return "intervention (outputs change)"
        return "implementation detail (bitwise-identical outputs)"


def systems_intervention(before: SystemsRecord, after: SystemsRecord, out_before: torch.Tensor,
                         out_after: torch.Tensor) -> SystemsIntervention:
    """Classify a systems change by its numerical effect (ftip-00L8).

    ``out_before`` and ``out_after`` are the outputs (e.g. logits) of the same inputs under the two
    records. A change whose outputs are not bitwise identical alters the computation and is an
    intervention; only a change with identical outputs may be treated as an implementation detail.
    """
    changes = tuple(c for c in diff_records(before, after) if c.path not in SystemsRecord.MACHINE_FIELDS)
    if not changes:
        raise ValueError("the two systems records do not differ in any declared coordinate; record the change first")
    if out_before.shape != out_after.shape:
        return SystemsIntervention(changes, float("inf"), True)
    a, b = out_before.double(), out_after.double()
    diff = torch.where(a == b, 0.0, (a - b).abs())  # equal infinities (masked logits) differ by 0
    if not torch.isfinite(diff).all():
        return SystemsIntervention(changes, float("inf"), True)
    max_diff = float(diff.max()) if diff.numel() else 0.0
    identical = out_before.dtype == out_after.dtype and torch.equal(out_before, out_after)
    return SystemsIntervention(changes, max_diff, not identical)


__all__ = [
    "GENERIC_LABELS", "Record", "FieldChange", "ComparisonArm", "missing_fields", "diff_records",
    "check_common_conditions", "describe_variant", "describe_kernels", "SystemIdentity", "ComparisonPair",
    "EvaluationConditions", "TuningProtocol", "TrainingRecord", "SystemsRecord", "SystemsIntervention",
    "systems_intervention",
]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
