"""Stopping rules owned by the agent, the environment or a budget, and the hard horizon (ftip-0024).

A :class:`StoppingRule` decides from the public history ``H_t`` alone whether to stop at ``t``:
``decide(H_t)`` returns a bool, or a probability for a rule with declared stopping randomness.
:class:`Stopping` applies its rules in the declared order, the first that fires recording its
:class:`~ftipbook.env.history.StopCause`; at ``t = T_max`` whatever has not stopped stops with the
horizon as its cause.
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable, Collection, Hashable
from dataclasses import dataclass
from fractions import Fraction

from ftipbook import checks
from ftipbook.env.history import HORIZON, PublicHistory, StopCause, StopOwner
from ftipbook.env.kernels import check_rng
from ftipbook.env.policy import check_history
from ftipbook.env.spaces import Prob, check_callable, check_int


def _stop_prob(name: str, value: object) -> Prob:
    if isinstance(value, bool):
        return int(value)
    if not isinstance(value, (int, float, Fraction)) or not math.isfinite(value) or not 0 <= value <= 1:
        raise ValueError(f"stopping rule {name!r} must return a bool or a probability in [0, 1], got {value!r}")
    return value


@dataclass(frozen=True)
class StoppingRule:
    """One trigger of ``tau_stop`` (ftip-0024): ``decide(H_t)`` is a bool or a stopping probability."""

    name: str
    owner: StopOwner
    decide: Callable[[PublicHistory], bool | Prob]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a nonempty str, got {self.name!r}")
        if not isinstance(self.owner, StopOwner) or self.owner is StopOwner.HORIZON:
            raise ValueError(f"owner must be StopOwner.AGENT, ENVIRONMENT or BUDGET (the horizon is built in), "
                             f"got {self.owner!r}")
        check_callable("decide", self.decide)

    @property
    def cause(self) -> StopCause:
        return StopCause(self.owner, self.name)

    def stop_prob(self, history: PublicHistory) -> Prob:
        """The probability that this rule stops at ``H_t`` (0 or 1 for a deterministic rule)."""
        return _stop_prob(self.name, self.decide(check_history(history)))

    @classmethod
    def on_action(cls, name: str, actions: Collection[Hashable]) -> StoppingRule:
        """Agent-owned: stop once the last action ``A_{t-1}`` is one of ``actions`` (e.g. an end token)."""
        chosen = frozenset(actions)
        if not chosen:
            raise ValueError("actions must name at least one stopping action")
        return cls(name, StopOwner.AGENT, lambda h: h.t > 0 and h.last_action in chosen)

    @classmethod
    def on_observation(cls, name: str, terminal: Callable[[Hashable], bool]) -> StoppingRule:
        """Environment-owned: stop once the last observation ``O_t`` is terminal."""
        check_callable("terminal", terminal)
        return cls(name, StopOwner.ENVIRONMENT, lambda h: bool(terminal(h.last_observation)))

    @classmethod
    def budget(cls, name: str, cost: Callable[[PublicHistory], Prob], limit: Prob) -> StoppingRule:
        """Budget-owned: stop once the resource ``cost(H_t)`` spent so far reaches ``limit``."""
        check_callable("cost", cost)
        limit = checks.real("limit", limit, 0)
        return cls(name, StopOwner.BUDGET, lambda h: cost(h) >= limit)


@dataclass(frozen=True)
class Stopping:
    """The stopping rule of an interaction: ``rules`` in order, then the hard horizon (ftip-0024)."""

    rules: tuple[StoppingRule, ...] = ()

    def __post_init__(self) -> None:
        rules = tuple(self.rules) if isinstance(self.rules, (tuple, list)) else None
        if rules is None or not all(isinstance(r, StoppingRule) for r in rules):
            raise TypeError(f"rules must be a tuple of StoppingRule, got {self.rules!r}")
        names = [r.name for r in rules]
        if len(set(names)) != len(names) or HORIZON.rule in names:
            raise ValueError(f"rule names must be distinct and not {HORIZON.rule!r}, got {names}")
        object.__setattr__(self, "rules", rules)

    def split(self, history: PublicHistory, t_max: int) -> tuple[list[tuple[StopCause, Prob]], Prob]:
        """``([(cause, P(stop now with cause)), ...], P(continue))`` at ``H_t``; the masses sum to 1."""
        check_history(history)
        check_int("t_max", t_max, high=None)
        if history.t > t_max:
            raise ValueError(f"history at t={history.t} is past the horizon t_max={t_max}")
        stops, go = [], 1
        for rule in self.rules:
            q = rule.stop_prob(history)
            if q > 0:
                stops.append((rule.cause, go * q))
                go = go * (1 - q)
            if go == 0:
                return stops, 0
        if history.t == t_max:
            return stops + [(HORIZON, go)], 0
        return stops, go

    def sample(self, history: PublicHistory, t_max: int, rng: random.Random) -> StopCause | None:
        """The cause of stopping at ``H_t``, or ``None`` to continue; a draw only for a random rule."""
        check_rng(rng)
        check_int("t_max", t_max, high=None)
        check_history(history)
        for rule in self.rules:
            q = rule.stop_prob(history)
            if q == 1 or (q > 0 and rng.random() < q):
                return rule.cause
        return HORIZON if history.t >= t_max else None
