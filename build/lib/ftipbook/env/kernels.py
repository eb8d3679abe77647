"""The environment's laws: initial-state law and transition-observation kernel (ftip-001Y, 001Z, 0020).

Each law is given by a finite law (:class:`~ftipbook.prob.FiniteLaw`, exact with fractions), which
allows exact enumeration, or only by a sampler, which allows Monte Carlo; a law given both ways
samples from its finite law. Outcomes are pairs ``(state, observation)``.

* :class:`InitialLaw`: ``rho_0(ds_0, do_0)``, a joint law of the hidden initial state and the first
  observation (:meth:`InitialLaw.rendered` for ``O_0 = obs(S_0)``).
* :class:`TransitionKernel`: ``K_t(ds', do' | s, a)``; :meth:`TransitionKernel.tool` is the point
  mass of a deterministic update ``F_t(s, a) = (s', o')`` (ftip-0020), and
  :meth:`TransitionKernel.factored` the product ``P_t(ds' | s, a) Q_t(do' | s', a)``.
* :class:`Environment`: the spaces with the two laws.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from fractions import Fraction

from ftipbook.env.spaces import Spaces, check_callable
from ftipbook.prob import FiniteLaw


def check_rng(rng: object) -> random.Random:
    if not isinstance(rng, random.Random):
        raise TypeError(f"rng must be a random.Random, got {type(rng).__name__}")
    return rng


def _pair(name: str, value: object) -> tuple:
    if not (isinstance(value, tuple) and len(value) == 2):
        raise ValueError(f"{name} must give (state, observation) pairs, got {value!r}")
    return value


def _pair_law(name: str, law: object) -> FiniteLaw:
    if not isinstance(law, FiniteLaw):
        raise TypeError(f"{name} must be a FiniteLaw on (state, observation) pairs, got {type(law).__name__}")
    for outcome in law.outcomes:
        _pair(name, outcome)
    return law


@dataclass(frozen=True)
class InitialLaw:
    """``rho_0``, a probability law on ``S x O`` (ftip-001Y); ``law`` on pairs and/or ``sampler(rng)``."""

    law: FiniteLaw | None = None
    sampler: Callable[[random.Random], tuple] | None = None

    def __post_init__(self) -> None:
        if self.law is None and self.sampler is None:
            raise ValueError("an initial law needs a finite law, a sampler, or both")
        if self.law is not None:
            _pair_law("law", self.law)
        if self.sampler is not None:
            check_callable("sampler", self.sampler)

    @classmethod
    def rendered(cls, state_law: FiniteLaw, obs: Callable[[Hashable], Hashable]) -> InitialLaw:
        """The deterministic rendering ``O_0 = obs(S_0)`` with ``S_0 ~ state_law``."""
        if not isinstance(state_law, FiniteLaw):
            raise TypeError(f"state_law must be a FiniteLaw, got {type(state_law).__name__}")
        check_callable("obs", obs)
        return cls(state_law.pushforward(lambda s: (s, obs(s))))

    @property
    def enumerable(self) -> bool:
        return self.law is not None

    def sample(self, rng: random.Random) -> tuple:
        """One draw ``(s_0, o_0)``."""
        check_rng(rng)
        if self.law is not None:
            return self.law.sample(rng)
        return _pair("sampler", self.sampler(rng))


@dataclass(frozen=True)
class TransitionKernel:
    """``K_t(ds_{t+1}, do_{t+1} | s_t, a_t)`` (ftip-001Z): ``law(t, s, a)`` and/or ``sampler(t, s, a, rng)``.

    ``deterministic`` declares a tool (ftip-0020): each row is a point mass, so re-executing a call
    from an unchanged state reproduces its observation.
    """

    law: Callable[[int, Hashable, Hashable], FiniteLaw] | None = None
    sampler: Callable[[int, Hashable, Hashable, random.Random], tuple] | None = None
    deterministic: bool = False

    def __post_init__(self) -> None:
        if self.law is None and self.sampler is None:
            raise ValueError("a transition-observation kernel needs a law, a sampler, or both")
        for name in ("law", "sampler"):
            if getattr(self, name) is not None:
                check_callable(name, getattr(self, name))
        if not isinstance(self.deterministic, bool):
            raise TypeError(f"deterministic must be a bool, got {self.deterministic!r}")
        if self.deterministic and self.law is None:
            raise ValueError("a deterministic kernel is declared by its law (a point mass per row)")

    @classmethod
    def tool(cls, update: Callable[[int, Hashable, Hashable], tuple]) -> TransitionKernel:
        """The point-mass kernel ``delta_{F_t(s, a)}`` of a deterministic update ``F_t`` (ftip-0020)."""
        check_callable("update", update)
        return cls(lambda t, s, a: FiniteLaw({_pair("update", update(t, s, a)): Fraction(1)}), deterministic=True)

    @classmethod
    def factored(cls, transition: Callable[[int, Hashable, Hashable], FiniteLaw],
                 observe: Callable[[int, Hashable, Hashable], FiniteLaw]) -> TransitionKernel:
        """``K_t(s', o' | s, a) = P_t(s' | s, a) Q_t(o' | s', a)`` for declared ``P_t`` and ``Q_t`` (ftip-001Z)."""
        check_callable("transition", transition)
        check_callable("observe", observe)

        def law(t: int, s: Hashable, a: Hashable) -> FiniteLaw:
            p = transition(t, s, a)
            if not isinstance(p, FiniteLaw):
                raise TypeError(f"transition must return a FiniteLaw on states, got {type(p).__name__}")
            rows = {}
            for s_next, w in p.items():
                q = observe(t, s_next, a)
                if not isinstance(q, FiniteLaw):
                    raise TypeError(f"observe must return a FiniteLaw on observations, got {type(q).__name__}")
                for o_next, v in q.items():
                    rows[(s_next, o_next)] = rows.get((s_next, o_next), 0) + w * v
            return FiniteLaw(rows)

        return cls(law)

    @property
    def enumerable(self) -> bool:
        return self.law is not None

    def next_law(self, t: int, state: Hashable, action: Hashable) -> FiniteLaw:
        """The law of ``(S_{t+1}, O_{t+1})`` given ``S_t = state``, ``A_t = action``."""
        if self.law is None:
            raise ValueError("this kernel is given by a sampler only: its law cannot be enumerated (use Monte Carlo)")
        law = _pair_law(f"the kernel at t={t}", self.law(t, state, action))
        if self.deterministic and len(law.support) != 1:
            raise ValueError(f"a deterministic kernel must give a point mass, got support {law.support!r} at t={t}")
        return law

    def sample(self, t: int, state: Hashable, action: Hashable, rng: random.Random) -> tuple:
        """One draw of ``(s_{t+1}, o_{t+1})``."""
        check_rng(rng)
        if self.law is not None:
            return self.next_law(t, state, action).sample(rng)
        return _pair("sampler", self.sampler(t, state, action, rng))


@dataclass(frozen=True)
class Environment:
    """Spaces, initial law and kernel: everything but the policy and the stopping rule (ftip-001X to 0020)."""

    spaces: Spaces
    initial: InitialLaw
    kernel: TransitionKernel

    def __post_init__(self) -> None:
        for name, kind in (("spaces", Spaces), ("initial", InitialLaw), ("kernel", TransitionKernel)):
            if not isinstance(getattr(self, name), kind):
                raise TypeError(f"{name} must be a {kind.__name__}, got {type(getattr(self, name)).__name__}")

    @property
    def t_max(self) -> int:
        return self.spaces.t_max

    @property
    def enumerable(self) -> bool:
        return self.initial.enumerable and self.kernel.enumerable
