"""What a training run declares: its hyperparameters and its randomness (ftip-001I, ftip-001J).

Remark ftip-001J lists what a pretraining run fixes besides the objective: initialization, data
order, window offsets, model randomness, precision, optimizer state, schedules and a stopping
rule. :class:`TrainConfig` names the hyperparameters and the stopping step; :class:`RunRandomness`
names the four seeds separately, so that a chapter can vary one source of randomness at a time.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import numpy as np

from ftipbook.plain_dict import from_plain_dict, to_plain_dict

OPTIMIZERS = ("adamw", "adam", "sgd", "muon_adamw")
SCHEDULES = ("constant", "cosine", "warmup_cosine")
PRECISIONS = ("auto", "fp32", "bf16")
PARALLEL = ("ddp", "fsdp")


def _int_at_least(name: str, value: object, low: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name}={value!r} must be an int >= {low}")


def _number(name: str, value: object, *, low: float, low_open: bool = False, high: float = math.inf) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (value > low if low_open else value >= low) and value <= high
    if not ok:
        bound = f"{'>' if low_open else '>='} {low}" + (f" and <= {high}" if high < math.inf else "")
        raise ValueError(f"{name}={value!r} must be a finite number {bound}")


@dataclass(frozen=True)
class RunRandomness:
    """The seeds of one run, recorded separately (Remark ftip-001J).

    ``init`` seeds the parameter initialization, ``data_order`` the order in which documents are
    drawn, ``window_offset`` where context windows start in the token stream, and ``optimizer``
    the global torch generator that the training step may draw from (stochastic optimizers,
    dropout). Each is a non-negative int below ``2**63``.
    """

    init: int = 0
    data_order: int = 0
    window_offset: int = 0
    optimizer: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63:
                raise ValueError(f"RunRandomness.{f.name}={value!r} must be an int in [0, 2**63)")

    @classmethod
    def from_seed(cls, seed: int) -> RunRandomness:
        """Four independent seeds derived from one (NumPy ``SeedSequence``), so that the streams differ."""
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed={seed!r} must be a non-negative int")
        init, data_order, window_offset, optimizer = (int(s) for s in np.random.SeedSequence(seed).generate_state(4))
        return cls(init, data_order, window_offset, optimizer)

    def to_dict(self) -> dict[str, int]:
        """The seeds by name (JSON-ready)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> RunRandomness:
        """Inverse of :meth:`to_dict`; unknown or missing names raise ``ValueError``."""
        names = {f.name for f in fields(cls)}
        if set(d) != names:
            raise ValueError(f"RunRandomness needs exactly the keys {sorted(names)}, got {sorted(d)}")
        return cls(**d)


@dataclass(frozen=True)
class TrainConfig:
    """Hyperparameters, precision, logging and the stopping step of a training run (ftip-001I).

    The loop (:class:`~ftipbook.train.loop.Trainer`) reads ``steps``, ``grad_clip``, ``precision``,
    ``eval_every``, ``checkpoint_every``, ``progress`` and ``parallel`` (how a process group shares the
    model: :mod:`ftipbook.train.distributed`); :func:`~ftipbook.train.optimizers.build_optimizer`
    and :func:`~ftipbook.train.optimizers.build_schedule` read the optimizer and schedule fields;
    ``batch_size`` and ``seq_len`` size the batches of :func:`~ftipbook.train.data.batch_stream`.
    Frozen; derive variants with ``dataclasses.replace``, which validates again.
    """

    steps: int = 100  # K, the stopping step: the run makes exactly this many updates
    batch_size: int = 16  # B, windows per (global) batch
    seq_len: int = 64  # T, tokens per window
    optimizer: str = "adamw"  # "adamw" | "adam" | "sgd" | "muon_adamw" (any torch.optim.Optimizer can be passed directly)
    lr: float = 3e-3  # peak learning rate eta
    weight_decay: float = 0.0  # decoupled weight decay (AdamW), L2 (Adam, SGD)
    betas: tuple[float, float] = (0.9, 0.95)  # Adam's (beta1, beta2)
    momentum: float = 0.0  # SGD momentum
    eps: float = 1e-8  # Adam's stabilizer
    schedule: str = "constant"  # lr multiplier (ftipbook.optim.schedules): "constant" | "cosine" | "warmup_cosine"
    warmup_steps: int = 0  # linear warmup over this many steps ("warmup_cosine")
    min_lr_ratio: float = 0.1  # final multiplier of the cosine schedules
    grad_clip: float | None = 1.0  # clip the global gradient norm to this value; None = no clipping
    precision: str = "auto"  # "auto" (bf16 autocast on CUDA, fp32 elsewhere) | "fp32" | "bf16" (CUDA only)
    eval_every: int = 0  # evaluate every this many steps (and at the end); 0 = never
    checkpoint_every: int = 0  # write a training checkpoint every this many steps; 0 = never
    progress: bool | None = None  # tqdm progress bar; None = only when stderr is a terminal
    parallel: str = "ddp"  # with a process group: "ddp" (replicated weights) | "fsdp" (sharded, FSDP2); else unused

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ``ValueError`` naming the field, its value and what is allowed."""
        _int_at_least("steps", self.steps, 1)
        _int_at_least("batch_size", self.batch_size, 1)
        _int_at_least("seq_len", self.seq_len, 1)
        for name, value, allowed in (("optimizer", self.optimizer, OPTIMIZERS),
                                     ("schedule", self.schedule, SCHEDULES),
                                     ("precision", self.precision, PRECISIONS),
                                     ("parallel", self.parallel, PARALLEL)):
            if value not in allowed:
                raise ValueError(f"{name}={value!r} is not supported; allowed: {', '.join(map(repr, allowed))}")
        _number("lr", self.lr, low=0, low_open=True)
        _number("weight_decay", self.weight_decay, low=0)
        if not (isinstance(self.betas, tuple) and len(self.betas) == 2):
            raise ValueError(f"betas={self.betas!r} must be a tuple (beta1, beta2)")
        for i, beta in enumerate(self.betas):
            _number(f"betas[{i}]", beta, low=0, high=1 - 1e-12)
        _number("momentum", self.momentum, low=0, high=1 - 1e-12)
        _number("eps", self.eps, low=0, low_open=True)
        _int_at_least("warmup_steps", self.warmup_steps, 0)
        if self.warmup_steps >= self.steps and self.schedule == "warmup_cosine":
            raise ValueError(f"warmup_steps={self.warmup_steps} must be below steps={self.steps}")
        _number("min_lr_ratio", self.min_lr_ratio, low=0, high=1)
        if self.grad_clip is not None:
            _number("grad_clip", self.grad_clip, low=0, low_open=True)
        _int_at_least("eval_every", self.eval_every, 0)
        _int_at_least("checkpoint_every", self.checkpoint_every, 0)
        if self.progress is not None and not isinstance(self.progress, bool):
            raise ValueError(f"progress={self.progress!r} must be True, False or None (auto)")

    def to_dict(self) -> dict:
        """The fields by name (JSON-ready; ``betas`` becomes a list; :func:`~ftipbook.plain_dict.to_plain_dict`)."""
        return to_plain_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> TrainConfig:
        """Inverse of :meth:`to_dict`; an unknown key raises ``ValueError``."""
        return from_plain_dict(cls, d)
