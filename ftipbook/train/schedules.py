"""Learning-rate schedules as ``step -> multiplier`` maps (part of the scheduled eta_k of ftip-001I).

The trainer sets ``lr_k = base_lr * schedule(k)`` for the update that turns ``theta_k`` into
``theta_{k+1}`` (``k = 0, 1, ...``). Any callable ``int -> float`` works; the classes here are
small frozen dataclasses, so a run can record exactly which schedule it used.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ftipbook.train.config import TrainConfig

Schedule = Callable[[int], float]


def _check_step(step: int) -> None:
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise ValueError(f"schedule step={step!r} must be an int >= 0")


@dataclass(frozen=True)
class Constant:
    """``multiplier(k) = 1`` for every step."""

    def __call__(self, step: int) -> float:
        _check_step(step)
        return 1.0


@dataclass(frozen=True)
class WarmupDecay:
    """Linear warmup to 1 over ``warmup`` steps, then a decay to ``min_ratio`` at step ``total``.

    ``shape="cosine"``: ``min + (1 - min) (1 + cos(pi u)) / 2``; ``shape="linear"``:
    ``1 - (1 - min) u``, with ``u = (k - warmup) / (total - warmup)`` clipped to ``[0, 1]``.
    During warmup the multiplier is ``(k + 1) / warmup``, so the first update is not wasted.
    """

    warmup: int
    total: int
    min_ratio: float = 0.1
    shape: str = "cosine"

    def __post_init__(self) -> None:
        if not isinstance(self.total, int) or self.total < 1:
            raise ValueError(f"total={self.total!r} must be an int >= 1")
        if not isinstance(self.warmup, int) or not 0 <= self.warmup <= self.total:
            raise ValueError(f"warmup={self.warmup!r} must be an int in [0, total={self.total}]")
        if not 0 <= self.min_ratio <= 1:
            raise ValueError(f"min_ratio={self.min_ratio!r} must lie in [0, 1]")
        if self.shape not in ("cosine", "linear"):
            raise ValueError(f"shape={self.shape!r} is not supported; allowed: 'cosine', 'linear'")

    def __call__(self, step: int) -> float:
        _check_step(step)
        if step < self.warmup:
            return (step + 1) / self.warmup
        u = min(1.0, (step - self.warmup) / max(1, self.total - self.warmup))
        decay = (1 + math.cos(math.pi * u)) / 2 if self.shape == "cosine" else 1 - u
        return self.min_ratio + (1 - self.min_ratio) * decay


def build_schedule(cfg: TrainConfig) -> Schedule:
    """The schedule that ``cfg.schedule`` names, over ``cfg.steps`` updates."""
    if cfg.schedule == "constant":
        return Constant()
    shape = {"warmup_cosine": "cosine", "warmup_linear": "linear"}[cfg.schedule]
    return WarmupDecay(cfg.warmup_steps, cfg.steps, cfg.min_lr_ratio, shape)
