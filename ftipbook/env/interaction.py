"""The induced law of a stopped interaction (ftip-0028): exact enumeration and Monte Carlo.

An :class:`Interaction` joins four independently declared objects: the initial law ``rho_0``
(ftip-001Y), the kernels ``K_t`` (ftip-001Z), a policy ``pi_t`` (ftip-0023) and a stopping rule
(ftip-0024). On finite laws, :meth:`Interaction.law` enumerates every stopped trajectory with

    rho_0(s_0, o_0) prod_{t<n} pi_t(a_t | h_t) K_t(s_{t+1}, o_{t+1} | s_t, a_t) * P(tau_stop = n | h_0..h_n)

(exact fractions when every law is given with fractions); :meth:`Interaction.prob` evaluates the
same product for one trajectory directly. Otherwise :meth:`Interaction.sample` draws trajectories
and :meth:`Interaction.estimate` gives a Monte Carlo estimate of an event with an exact
(Clopper-Pearson) interval.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from ftipbook import checks
from ftipbook.env.history import PublicHistory, StoppedTrajectory
from ftipbook.env.kernels import Environment, check_rng
from ftipbook.env.policy import Policy
from ftipbook.env.spaces import Prob, check_callable, check_int
from ftipbook.env.stopping import Stopping
from ftipbook.eval.stats import Interval, clopper_pearson
from ftipbook.prob import FiniteLaw

#: Enumeration refuses interactions with more stopped trajectories than this (use Monte Carlo).
MAX_TRAJECTORIES = 200_000


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo estimate ``hits / n`` of an event's probability, with its exact interval."""

    hits: int
    n: int
    interval: Interval

    def __post_init__(self) -> None:
        n = checks.integer("n", self.n, 1)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "hits", checks.integer("hits", self.hits, 0, n))
        checks.instance("interval", self.interval, Interval)

    @property
    def mean(self) -> float:
        return self.hits / self.n

    def contains(self, p: Prob) -> bool:
        """Whether the exact probability ``p`` lies in the interval."""
        return self.interval.low <= float(checks.probability("p", p)) <= self.interval.high


@dataclass(frozen=True)
class Interaction:
    """An environment with a policy and a stopping rule: the stopped interaction of ftip-0028."""

    environment: Environment
    policy: Policy
    stopping: Stopping = Stopping()

    def __post_init__(self) -> None:
        for name, kind in (("environment", Environment), ("policy", Policy), ("stopping", Stopping)):
            if not isinstance(getattr(self, name), kind):
                raise TypeError(f"{name} must be a {kind.__name__}, got {type(getattr(self, name)).__name__}")

    @property
    def enumerable(self) -> bool:
        return self.environment.enumerable and self.policy.enumerable

    # -- exact --------------------------------------------------------------------------------------
    def law(self, max_trajectories: int = MAX_TRAJECTORIES) -> FiniteLaw:
        """The law of the stopped trajectory ``Z``, by enumeration of every branch of positive mass."""
        check_int("max_trajectories", max_trajectories, low=1, high=None)
        if not self.enumerable:
            raise ValueError("the interaction has a sampler-only part: its law cannot be enumerated (use estimate)")
        env, out = self.environment, {}
        for (s0, o0), p0 in env.initial.law.items():
            if p0 > 0:
                env.spaces.check("states", s0)
                env.spaces.check("observations", o0)
                self._expand((s0,), PublicHistory((o0,), ()), p0, out, max_trajectories)
        return FiniteLaw(out)

    def _expand(self, states: tuple, h: PublicHistory, mass: Prob, out: dict, limit: int) -> None:
        env = self.environment
        stops, go = self.stopping.split(h, env.t_max)
        for cause, q in stops:
            if q > 0:
                z = StoppedTrajectory(states, h.observations, h.actions, cause)
                out[z] = out.get(z, 0) + mass * q
                if len(out) > limit:
                    raise ValueError(f"more than max_trajectories={limit} stopped trajectories: use estimate")
        if go == 0:
            return
        for a, pa in self.policy.action_law(h).items():
            if pa == 0:
                continue
            env.spaces.check("actions", a)
            for (s1, o1), pk in env.kernel.next_law(h.t, states[-1], a).items():
                if pk > 0:
                    env.spaces.check("states", s1)
                    env.spaces.check("observations", o1)
                    self._expand(states + (s1,), h.extend(a, o1), mass * go * pa * pk, out, limit)

    def prob(self, z: StoppedTrajectory) -> Prob:
        """``P(Z = z)`` from the factorization of ftip-0028, evaluated along ``z`` alone."""
        if not isinstance(z, StoppedTrajectory):
            raise TypeError(f"z must be a StoppedTrajectory, got {type(z).__name__}")
        if not self.enumerable:
            raise ValueError("the interaction has a sampler-only part: P(Z = z) cannot be evaluated")
        env, h = self.environment, z.public
        if z.n > env.t_max:
            return 0
        law0 = env.initial.law
        pair = (z.states[0], z.observations[0])
        p = law0(pair) if pair in law0.outcomes else 0
        for t in range(z.n + 1):
            stops, go = self.stopping.split(h.prefix(t), env.t_max)
            if t == z.n:
                return p * sum((q for cause, q in stops if cause == z.cause), Fraction(0))
            pi = self.policy.action_law(h.prefix(t))
            k = env.kernel.next_law(t, z.states[t], z.actions[t])
            step = (z.states[t + 1], z.observations[t + 1])
            p_action = pi(z.actions[t]) if z.actions[t] in pi.outcomes else 0
            p = p * go * p_action * (k(step) if step in k.outcomes else 0)
        return p

    def prob_of(self, event: Callable[[StoppedTrajectory], bool]) -> Prob:
        """``P(Z in event)`` under the enumerated law."""
        check_callable("event", event)
        return self.law().prob(event)

    # -- Monte Carlo --------------------------------------------------------------------------------
    def sample(self, rng: random.Random) -> StoppedTrajectory:
        """One stopped trajectory: draw ``(s_0, o_0)``, then alternate stop check, action, kernel."""
        check_rng(rng)
        env = self.environment
        s, o = env.initial.sample(rng)
        env.spaces.check("states", s)
        env.spaces.check("observations", o)
        states, h = (s,), PublicHistory((o,), ())
        while True:
            cause = self.stopping.sample(h, env.t_max, rng)
            if cause is not None:
                return StoppedTrajectory(states, h.observations, h.actions, cause)
            a = env.spaces.check("actions", self.policy.sample(h, rng))
            s, o = env.kernel.sample(h.t, states[-1], a, rng)
            env.spaces.check("states", s)
            env.spaces.check("observations", o)
            states, h = states + (s,), h.extend(a, o)

    def samples(self, n: int, seed: int) -> list[StoppedTrajectory]:
        """``n`` independent trajectories (at most 10**6) with ``random.Random(seed)``, ``seed`` in ``[0, 2**64)``."""
        check_int("n", n, low=1)
        rng = random.Random(checks.seed("seed", seed))
        return [self.sample(rng) for _ in range(n)]

    def estimate(self, event: Callable[[StoppedTrajectory], bool], n: int, seed: int,
                 level: float = 0.99) -> Estimate:
        """Monte Carlo ``P(Z in event)`` from ``n`` draws, with a Clopper-Pearson interval at ``level``."""
        check_callable("event", event)
        level = checks.level("level", level)
        hits = sum(checks.boolean("event(z)", event(z)) for z in self.samples(n, seed))
        return Estimate(hits, n, clopper_pearson(hits, n, level))


def state_dependence(law: FiniteLaw, tol: float = 1e-12) -> list[PublicHistory]:
    """The histories ``h_t`` at which ``P(A_t | H_t = h_t, S_0..S_t)`` differs between state paths (ftip-0022).

    Computed from an enumerated law of stopped trajectories: for a policy that reads only the public
    history the list is empty; a policy fed the hidden state through any channel shows up here.
    Exact comparison for exact laws, within ``tol`` otherwise.
    """
    if not isinstance(law, FiniteLaw):
        raise TypeError(f"law must be a FiniteLaw of StoppedTrajectory, got {type(law).__name__}")
    tol = checks.real("tol", tol, 0)
    rows: dict[tuple, dict] = {}
    for z, p in law.items():
        if not isinstance(z, StoppedTrajectory):
            raise TypeError(f"law must be a law of StoppedTrajectory, got an outcome {type(z).__name__}")
        for t in range(z.n):
            row = rows.setdefault((z.public.prefix(t), z.states[: t + 1]), {})
            row[z.actions[t]] = row.get(z.actions[t], 0) + p
    laws: dict[PublicHistory, list[dict]] = {}
    for (h, _), row in rows.items():
        total = sum(row.values())
        if total > 0:
            laws.setdefault(h, []).append({a: (Fraction(v) if law.exact else v) / total for a, v in row.items() if v})

    def same(p: dict, q: dict) -> bool:
        if law.exact:
            return p == q
        return p.keys() == q.keys() and all(abs(p[a] - q[a]) <= tol for a in p)

    return [h for h, conds in laws.items() if not all(same(c, conds[0]) for c in conds)]
