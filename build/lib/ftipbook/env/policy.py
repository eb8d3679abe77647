"""Non-anticipating policies (ftip-0023).

A :class:`Policy` is a family of kernels ``pi_t(da | H_t)``: it is called with a
:class:`~ftipbook.env.history.PublicHistory` and nothing else, so an action can depend on the
observations and actions so far and on fresh policy randomness, never on a hidden state or a later
observation. It is given by a finite law of actions (enumerable) and/or a sampler.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from fractions import Fraction

from ftipbook.env.history import PublicHistory
from ftipbook.env.kernels import check_rng
from ftipbook.env.spaces import check_callable
from ftipbook.prob import FiniteLaw


def check_history(history: object) -> PublicHistory:
    if not isinstance(history, PublicHistory):
        raise TypeError(f"history must be a PublicHistory, got {type(history).__name__}")
    return history


@dataclass(frozen=True)
class Policy:
    """``pi_t(da | H_t)``, ``t < T_max`` (ftip-0023): ``law(history)`` and/or ``sampler(history, rng)``."""

    law: Callable[[PublicHistory], FiniteLaw] | None = None
    sampler: Callable[[PublicHistory, random.Random], Hashable] | None = None
    name: str = "policy"

    def __post_init__(self) -> None:
        if self.law is None and self.sampler is None:
            raise ValueError("a policy needs a law of actions, a sampler, or both")
        for name in ("law", "sampler"):
            if getattr(self, name) is not None:
                check_callable(name, getattr(self, name))
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a nonempty str, got {self.name!r}")

    @classmethod
    def deterministic(cls, choose: Callable[[PublicHistory], Hashable], name: str = "deterministic") -> Policy:
        """The point mass on ``choose(H_t)``."""
        check_callable("choose", choose)
        return cls(lambda h: FiniteLaw({choose(h): Fraction(1)}), name=name)

    @property
    def enumerable(self) -> bool:
        return self.law is not None

    def action_law(self, history: PublicHistory) -> FiniteLaw:
        """``pi_t(. | H_t)`` as a finite law of actions."""
        check_history(history)
        if self.law is None:
            raise ValueError(f"policy {self.name!r} is given by a sampler only: its law cannot be enumerated")
        law = self.law(history)
        if not isinstance(law, FiniteLaw):
            raise TypeError(f"policy {self.name!r} must return a FiniteLaw of actions, got {type(law).__name__}")
        return law

    def sample(self, history: PublicHistory, rng: random.Random) -> Hashable:
        """One action ``a_t ~ pi_t(. | H_t)``."""
        check_history(history)
        check_rng(rng)
        if self.law is not None:
            return self.action_law(history).sample(rng)
        return self.sampler(history, rng)
