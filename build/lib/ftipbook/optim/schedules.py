"""Learning-rate multipliers ``step -> float`` (a schedule is part of the declared update, ftip-001I).

Each schedule is a small frozen dataclass: call it with a step index ``t = 0, 1, ...`` to get
the factor multiplying the base learning rate. They plug into
``torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)`` and into
:func:`ftipbook.optim.factored.run_factored` (``schedule=``). Past ``total_steps`` every
schedule holds its final value.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


def _steps(name: str, value: object, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")


def _phase(name: str, value: object, total_steps: int) -> None:
    """A phase length (warmup, hold) of a schedule: an int in ``[0, total_steps)``."""
    _steps(name, value, 0)
    if value >= total_steps:
        raise ValueError(f"{name}={value} must be below total_steps={total_steps}")


def _fraction(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")


def _step_index(t: object) -> int:
    if isinstance(t, bool) or not isinstance(t, int) or t < 0:
        raise ValueError(f"a schedule takes a step index t >= 0 (int), got {t!r}")
    return t


@dataclass(frozen=True)
class Constant:
    """The multiplier ``1`` at every step."""

    def __call__(self, t: int) -> float:
        _step_index(t)
        return 1.0


@dataclass(frozen=True)
class Cosine:
    """Cosine decay from ``1`` at ``t = 0`` to ``final`` at ``t = total_steps``."""

    total_steps: int
    final: float = 0.0

    def __post_init__(self) -> None:
        _steps("total_steps", self.total_steps, 1)
        _fraction("final", self.final)

    def __call__(self, t: int) -> float:
        progress = min(_step_index(t), self.total_steps) / self.total_steps
        return self.final + (1 - self.final) * 0.5 * (1 + math.cos(math.pi * progress))


@dataclass(frozen=True)
class WarmupCosine:
    """Linear warmup over ``warmup_steps`` (from ``1/warmup_steps`` to ``1``), then cosine decay to ``final``."""

    warmup_steps: int
    total_steps: int
    final: float = 0.0

    def __post_init__(self) -> None:
        _steps("total_steps", self.total_steps, 1)
        _phase("warmup_steps", self.warmup_steps, self.total_steps)
        _fraction("final", self.final)

    def __call__(self, t: int) -> float:
        t = _step_index(t)
        if t < self.warmup_steps:
            return (t + 1) / self.warmup_steps
        return Cosine(self.total_steps - self.warmup_steps, self.final)(t - self.warmup_steps)


@dataclass(frozen=True)
class LongAnneal:
    """Hold ``1`` for ``hold_steps``, then decay geometrically to ``final`` at ``total_steps`` (ftip-00BR).

    The multiplier falls by the same factor every step, so it spends equal numbers of steps in
    each decade: a long anneal. For a sign update, whose steps never shrink on their own, this is
    what lets the iterate settle. (ftipbook's declared form; the note does not give the source's.)
    """

    total_steps: int
    final: float = 1e-3
    hold_steps: int = 0

    def __post_init__(self) -> None:
        _steps("total_steps", self.total_steps, 1)
        _phase("hold_steps", self.hold_steps, self.total_steps)
        if isinstance(self.final, bool) or not isinstance(self.final, (int, float)) or not 0 < self.final <= 1:
            raise ValueError(f"final must be a number in (0, 1] (a geometric decay never reaches 0), "
                             f"got {self.final!r}")

    def __call__(self, t: int) -> float:
        t = _step_index(t)
        if t <= self.hold_steps:
            return 1.0
        progress = min(t - self.hold_steps, self.total_steps - self.hold_steps) / (self.total_steps - self.hold_steps)
        return self.final**progress


__all__ = ["Constant", "Cosine", "WarmupCosine", "LongAnneal"]
