"""Interactive environments and policies (ftip-001X to ftip-0028, ftip-006T, ftip-006U).

* :mod:`~ftipbook.env.spaces`: the declared spaces ``S, O, A`` and the hard horizon (ftip-001X).
* :mod:`~ftipbook.env.kernels`: the initial-state law (ftip-001Y), the transition-observation
  kernel (ftip-001Z), deterministic tools and stochastic environments (ftip-0020).
* :mod:`~ftipbook.env.history`: public histories (ftip-0021, 0022), stop causes and stopped
  trajectories with their public projection (ftip-0025).
* :mod:`~ftipbook.env.policy`: non-anticipating policies, handed a public history only (ftip-0023).
* :mod:`~ftipbook.env.stopping`: stopping rules owned by the agent, the environment or a budget,
  and the hard horizon (ftip-0024).
* :mod:`~ftipbook.env.interaction`: the induced law of a stopped interaction, exact by
  enumeration or by Monte Carlo with an exact interval (ftip-0028).
* :mod:`~ftipbook.env.realization`: the interactive realization of a task with its outcome map
  (ftip-006T, 006U).
* :mod:`~ftipbook.env.tokens`: token generation as a stopped interaction (ftip-0027).
* :mod:`~ftipbook.env.calculator`: a calculator tool whose actions are parsed from a model's text.
* :mod:`~ftipbook.env.examples`: the key-and-door tool of ftip-0026 and a noisy counter.
"""
from ftipbook.env.calculator import Answer, Calc, Malformed, ModelPolicy, calculator_realization, parse_action
from ftipbook.env.history import HORIZON, PublicHistory, StopCause, StoppedTrajectory, StopOwner
from ftipbook.env.interaction import Estimate, Interaction, state_dependence
from ftipbook.env.kernels import Environment, InitialLaw, TransitionKernel
from ftipbook.env.policy import Policy
from ftipbook.env.realization import InteractiveRealization
from ftipbook.env.spaces import Spaces
from ftipbook.env.stopping import Stopping, StoppingRule
from ftipbook.env.tokens import continuations, lm_policy, token_environment, token_interaction

__all__ = [
    "Answer", "Calc", "Environment", "Estimate", "HORIZON", "InitialLaw", "Interaction", "InteractiveRealization",
    "Malformed", "ModelPolicy", "Policy", "PublicHistory", "Spaces", "StopCause", "StopOwner", "StoppedTrajectory",
    "Stopping", "StoppingRule", "TransitionKernel", "calculator_realization", "continuations", "lm_policy",
    "parse_action", "state_dependence", "token_environment", "token_interaction",
]
