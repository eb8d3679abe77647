"""The interactive realization of a task and its outcome map (ftip-006T, ftip-006U).

A task ``T = (X_T, O_T, Adm_T)`` acquires interactive semantics when each instance ``x`` selects an
initial law ``rho_0^x`` and kernels ``K_t^x`` on common spaces, and an outcome map
``out_T(x, Z)`` sends each stopped trajectory to an admissible outcome. The policy and the
stopping rule are not part of the realization; :meth:`InteractiveRealization.interaction` joins
them to it only when an interaction law is formed.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

from ftipbook.env.history import StoppedTrajectory
from ftipbook.env.interaction import Interaction
from ftipbook.env.kernels import Environment, InitialLaw, TransitionKernel
from ftipbook.env.policy import Policy
from ftipbook.env.spaces import Spaces, check_callable
from ftipbook.env.stopping import Stopping
from ftipbook.prob import FiniteLaw


@dataclass(frozen=True)
class InteractiveRealization:
    """``Env_T = (S_T, O_T^obs, A_T, T_max, (rho_0^x)_x, (K_t^x)_{x,t}, out_T)`` of ftip-006T.

    ``instances`` lists ``X_T``; ``initial(x)`` and ``kernel(x)`` give the instance's laws;
    ``outcome(x, z)`` is ``out_T`` and ``admissible(x, y)`` is ``Adm_T``, checked on every outcome.
    """

    instances: tuple
    spaces: Spaces
    initial: Callable[[Hashable], InitialLaw]
    kernel: Callable[[Hashable], TransitionKernel]
    outcome: Callable[[Hashable, StoppedTrajectory], Hashable]
    admissible: Callable[[Hashable, Hashable], bool]

    def __post_init__(self) -> None:
        if isinstance(self.instances, (str, bytes)) or not isinstance(self.instances, Iterable):
            raise TypeError(f"instances must be an iterable of task instances, got {self.instances!r}")
        instances = tuple(self.instances)
        if not instances or len(set(instances)) != len(instances):
            raise ValueError(f"instances must be nonempty and distinct, got {instances!r}")
        object.__setattr__(self, "instances", instances)
        if not isinstance(self.spaces, Spaces):
            raise TypeError(f"spaces must be a Spaces, got {type(self.spaces).__name__}")
        for name in ("initial", "kernel", "outcome", "admissible"):
            check_callable(name, getattr(self, name))

    def _instance(self, x: Hashable) -> Hashable:
        if x not in self.instances:
            raise ValueError(f"x={x!r} is not an instance of the task (X_T has {len(self.instances)} instances)")
        return x

    def environment(self, x: Hashable) -> Environment:
        """The environment of instance ``x``: ``(S, O, A, T_max, rho_0^x, K^x)``."""
        return Environment(self.spaces, self.initial(self._instance(x)), self.kernel(x))

    def interaction(self, x: Hashable, policy: Policy, stopping: Stopping = Stopping()) -> Interaction:
        """Instance ``x``'s environment joined with a policy and a stopping rule."""
        return Interaction(self.environment(x), policy, stopping)

    def out(self, x: Hashable, z: StoppedTrajectory) -> Hashable:
        """``out_T(x, z)``, refused (ValueError) unless ``Adm_T(x, out_T(x, z))`` holds."""
        if not isinstance(z, StoppedTrajectory):
            raise TypeError(f"z must be a StoppedTrajectory, got {type(z).__name__}")
        y = self.outcome(self._instance(x), z)
        if not self.admissible(x, y):
            raise ValueError(f"outcome {y!r} of instance {x!r} is not admissible under Adm_T")
        return y

    def outcome_law(self, x: Hashable, policy: Policy, stopping: Stopping = Stopping()) -> FiniteLaw:
        """The law of ``out_T(x, Z)``: the push-forward of the interaction law by the outcome map."""
        return self.interaction(x, policy, stopping).law().pushforward(lambda z: self.out(x, z))
