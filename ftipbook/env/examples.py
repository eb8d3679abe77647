"""Two small declared environments used by the chapters (ftip-0020, ftip-0026).

* :func:`door_environment`: the deterministic key-and-door tool of ftip-0026; the environment
  stops at its terminal observation.
* :func:`noisy_counter`: a stochastic environment with a hidden counter that an action ``push``
  raises with probability ``bias`` and a noisy public reading of it.
"""
from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from ftipbook import checks
from ftipbook.env.kernels import Environment, InitialLaw, TransitionKernel
from ftipbook.env.spaces import Spaces, check_int
from ftipbook.env.stopping import StoppingRule
from ftipbook.prob import FiniteLaw

#: ``(state, action) -> (next state, observation)`` of the door tool; any other pair changes nothing.
DOOR_MOVES = {
    ("locked", "take key"): ("key in hand", "key held"),
    ("key in hand", "unlock"): ("unlocked", "door open"),
    ("unlocked", "enter"): ("inside", "terminal success"),
}
#: The observation that renders each door state.
DOOR_VIEW = {"locked": "door locked", "key in hand": "key held", "unlocked": "door open",
             "inside": "terminal success"}
DOOR_ACTIONS = ("take key", "unlock", "enter")


def door_step(t: int, state: str, action: str) -> tuple[str, str]:
    """``F_t(s, a)``: a listed move, otherwise the state unchanged and shown again."""
    return DOOR_MOVES.get((state, action), (state, DOOR_VIEW[state]))


def door_environment(t_max: int = 5) -> Environment:
    """Start locked (``O_0 = "door locked"``); the tool :func:`door_step`; horizon ``t_max``."""
    check_int("t_max", t_max, low=0)
    spaces = Spaces(DOOR_VIEW, DOOR_VIEW.values(), DOOR_ACTIONS, t_max)
    return Environment(spaces, InitialLaw(FiniteLaw({("locked", "door locked"): Fraction(1)})),
                       TransitionKernel.tool(door_step))


def door_terminal() -> StoppingRule:
    """The environment-owned stop at the observation ``"terminal success"``."""
    return StoppingRule.on_observation("terminal", lambda o: o == "terminal success")


def counter_step_law(bias: Fraction) -> Callable[[int, int, str], FiniteLaw]:
    """``K(s', o' | s, a)``: ``push`` raises ``s`` by one w.p. ``bias``; ``o' = "hi"`` w.p. ``s'/(s'+1)``."""
    bias = _bias(bias)

    def law(t: int, s: int, a: str) -> FiniteLaw:
        up = bias if a == "push" else Fraction(0)
        rows: dict = {}
        for s2, w in ((s + 1, up), (s, 1 - up)):
            for o, v in (("hi", Fraction(s2, s2 + 1)), ("lo", Fraction(1, s2 + 1))):
                if w * v:
                    rows[(s2, o)] = rows.get((s2, o), 0) + w * v
        return FiniteLaw(rows)

    return law


def _bias(bias: object) -> Fraction:
    if not checks.is_int(bias) and not isinstance(bias, Fraction):
        raise TypeError(f"bias must be a Fraction (or int) in [0, 1] (the laws are exact), got {checks.show(bias)}")
    return Fraction(checks.probability("bias", bias))


def noisy_counter(t_max: int = 3, bias: Fraction = Fraction(2, 3)) -> Environment:
    """``S_0 = 0`` shown ``"lo"`` w.p. 3/4, ``S_0 = 1`` shown ``"hi"`` w.p. 1/4; then :func:`counter_step_law`."""
    check_int("t_max", t_max, low=0)
    bias = _bias(bias)
    spaces = Spaces(range(t_max + 2), ("lo", "hi"), ("push", "wait"), t_max)
    initial = InitialLaw(FiniteLaw({(0, "lo"): Fraction(3, 4), (1, "hi"): Fraction(1, 4)}))
    return Environment(spaces, initial, TransitionKernel(counter_step_law(bias)))
