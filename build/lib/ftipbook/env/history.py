"""Public histories and stopped trajectories (ftip-0021, ftip-0022, ftip-0025).

A :class:`PublicHistory` holds the observations and actions of ``H_t = (O_0, A_0, ..., A_{t-1}, O_t)``
and nothing else: it has fixed slots, so no state can be attached to it. Policies and stopping
rules receive only this object, which is what makes them non-anticipating (ftip-0022, ftip-0023).
A :class:`StoppedTrajectory` adds the hidden states and the recorded cause of stopping; its
:attr:`~StoppedTrajectory.public` projection is the history ``H_n``.
"""
from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from enum import Enum


class StopOwner(str, Enum):
    """Who owns a stopping decision (ftip-0024)."""

    AGENT = "agent"  # e.g. the policy emitted a final action or an end token
    ENVIRONMENT = "environment"  # e.g. a terminal observation
    BUDGET = "budget"  # a resource limit computed from the public history
    HORIZON = "horizon"  # the hard horizon T_max of ftip-001X


@dataclass(frozen=True)
class StopCause:
    """The recorded reason an interaction stopped: the rule's owner and name (ftip-0024)."""

    owner: StopOwner
    rule: str

    def __post_init__(self) -> None:
        if not isinstance(self.owner, StopOwner):
            raise TypeError(f"owner must be a StopOwner, got {type(self.owner).__name__} {self.owner!r}")
        if not isinstance(self.rule, str) or not self.rule:
            raise ValueError(f"rule must be a nonempty name, got {self.rule!r}")


HORIZON = StopCause(StopOwner.HORIZON, "horizon")


def _as_tuple(name: str, values: object) -> tuple:
    if isinstance(values, (str, bytes)) or not isinstance(values, (tuple, list)):
        raise TypeError(f"{name} must be a tuple or list, got {type(values).__name__} {values!r}")
    return tuple(values)


@dataclass(frozen=True, slots=True)
class PublicHistory:
    """``H_t = (O_0, A_0, O_1, ..., A_{t-1}, O_t)`` (ftip-0021): ``t + 1`` observations, ``t`` actions.

    It holds no state unless an observation revealed it (ftip-0022); ``slots`` forbid adding one.
    """

    observations: tuple
    actions: tuple

    def __post_init__(self) -> None:
        obs, acts = _as_tuple("observations", self.observations), _as_tuple("actions", self.actions)
        if len(obs) != len(acts) + 1:
            raise ValueError(f"a history has one more observation than actions, got {len(obs)} and {len(acts)}")
        object.__setattr__(self, "observations", obs)
        object.__setattr__(self, "actions", acts)

    @property
    def t(self) -> int:
        """The time ``t`` of ``H_t``: the number of actions taken so far."""
        return len(self.actions)

    @property
    def last_observation(self) -> Hashable:
        return self.observations[-1]

    @property
    def last_action(self) -> Hashable | None:
        """``A_{t-1}``, or ``None`` at ``t = 0``."""
        return self.actions[-1] if self.actions else None

    def sequence(self) -> tuple:
        """The alternating tuple ``(o_0, a_0, o_1, ..., a_{t-1}, o_t)``."""
        out = [self.observations[0]]
        for a, o in zip(self.actions, self.observations[1:]):
            out += [a, o]
        return tuple(out)

    def extend(self, action: Hashable, observation: Hashable) -> PublicHistory:
        """``H_{t+1} = (H_t, a_t, o_{t+1})``."""
        return PublicHistory(self.observations + (observation,), self.actions + (action,))

    def prefix(self, t: int) -> PublicHistory:
        """``H_s`` for ``s = t <= self.t``: the history as it stood before action ``A_t``."""
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t <= self.t:
            raise ValueError(f"t must be an int in 0..{self.t}, got {t!r}")
        return PublicHistory(self.observations[: t + 1], self.actions[:t])


@dataclass(frozen=True)
class StoppedTrajectory:
    """``Z = (S_0, O_0, A_0, S_1, O_1, ..., A_{n-1}, S_n, O_n)`` stopped at ``n`` (ftip-0025), with its cause."""

    states: tuple
    observations: tuple
    actions: tuple
    cause: StopCause

    def __post_init__(self) -> None:
        states = _as_tuple("states", self.states)
        history = PublicHistory(self.observations, self.actions)
        if len(states) != len(history.observations):
            raise ValueError(f"a trajectory stopped at n = {history.t} has n + 1 states, got {len(states)}")
        if not isinstance(self.cause, StopCause):
            raise TypeError(f"cause must be a StopCause, got {type(self.cause).__name__} {self.cause!r}")
        object.__setattr__(self, "states", states)
        object.__setattr__(self, "observations", history.observations)
        object.__setattr__(self, "actions", history.actions)

    @property
    def n(self) -> int:
        """The stopping time ``tau_stop``."""
        return len(self.actions)

    @property
    def public(self) -> PublicHistory:
        """The public projection ``H_n``: the trajectory without its states (ftip-0025)."""
        return PublicHistory(self.observations, self.actions)

    def sequence(self) -> tuple:
        """The alternating tuple ``(s_0, o_0, a_0, s_1, o_1, ..., a_{n-1}, s_n, o_n)``."""
        out = [self.states[0], self.observations[0]]
        for a, s, o in zip(self.actions, self.states[1:], self.observations[1:]):
            out += [a, s, o]
        return tuple(out)
