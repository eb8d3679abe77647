"""Token generation as a stopped environment interaction (ftip-0027).

The state is the token sequence so far (prompt, then emitted tokens), the first observation is
the prompt, each action is one token id and the environment echoes it back as the next observation
(a deterministic tool, ftip-0020). The policy is a next-token law (:class:`~ftipbook.prob.NextTokenLaw`:
a ``DecoderLM`` or a :class:`~ftipbook.prob.TableLM`) applied to the serialized history
``prompt + actions``; the agent stops after an end token, the hard horizon after ``max_len`` tokens.
:func:`continuations` maps the interaction law to the continuation law of ftip-000I, keyed as
:func:`~ftipbook.prob.enumerate_continuations` keys it.
"""
from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import torch

from ftipbook.env.history import PublicHistory, StopOwner, StoppedTrajectory
from ftipbook.env.interaction import Interaction
from ftipbook.env.kernels import Environment, InitialLaw, TransitionKernel
from ftipbook.env.policy import Policy
from ftipbook.env.spaces import Prob, Spaces, check_int
from ftipbook.env.stopping import Stopping, StoppingRule
from ftipbook.model.generate import StopReason
from ftipbook.prob import FiniteLaw, NextTokenLaw

#: The name of the agent-owned rule that stops after the end token.
EOS_RULE = "eos"


def _prompt(prompt: Sequence[int], vocab_size: int) -> tuple[int, ...]:
    if isinstance(prompt, (str, bytes)) or not isinstance(prompt, Sequence):
        raise TypeError(f"prompt must be a sequence of token ids, got {type(prompt).__name__}")
    ids = tuple(prompt)
    if not ids or any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < vocab_size for i in ids):
        raise ValueError(f"prompt must be a nonempty sequence of ids in [0, {vocab_size}), got {ids!r}")
    return ids


def token_environment(prompt: Sequence[int], vocab_size: int, max_len: int) -> Environment:
    """``S_0 = O_0 = prompt``; ``F_t(s, a) = (s + (a,), a)``; actions ``0..vocab_size-1``; ``T_max = max_len``."""
    check_int("vocab_size", vocab_size, low=1)
    check_int("max_len", max_len, low=1)
    ids = _prompt(prompt, vocab_size)
    spaces = Spaces(None, None, range(vocab_size), max_len)
    return Environment(spaces, InitialLaw(FiniteLaw({(ids, ids): Fraction(1)})),
                       TransitionKernel.tool(lambda t, s, a: (s + (a,), a)))


def serialize(history: PublicHistory) -> tuple[int, ...]:
    """The model's context for ``H_t``: the prompt ``O_0`` followed by the emitted tokens ``A_0..A_{t-1}``."""
    return tuple(history.observations[0]) + tuple(history.actions)


def lm_policy(lm: NextTokenLaw, name: str = "next-token law") -> Policy:
    """``pi_t(a | H_t) = lm(a | serialize(H_t))`` (ftip-0023 on top of ftip-000H); exact for exact tables."""
    if not isinstance(lm, NextTokenLaw):
        raise TypeError(f"lm must implement next_token_law (a NextTokenLaw), got {type(lm).__name__}")

    def law(history: PublicHistory) -> FiniteLaw:
        probs = lm.next_token_law(list(serialize(history)))
        if isinstance(probs, torch.Tensor):
            probs = probs.detach().double().cpu().tolist()
        return FiniteLaw(dict(enumerate(probs)))

    return Policy(law, name=name)


def token_interaction(lm: NextTokenLaw, prompt: Sequence[int], *, eos: int | None, max_len: int) -> Interaction:
    """Generation after ``prompt`` as a stopped interaction: agent stop at ``eos``, horizon at ``max_len``."""
    policy = lm_policy(lm)
    if isinstance(prompt, (str, bytes)) or not isinstance(prompt, Sequence):
        raise TypeError(f"prompt must be a sequence of token ids, got {type(prompt).__name__}")
    if not prompt or any(not isinstance(i, int) or isinstance(i, bool) or i < 0 for i in prompt):
        raise ValueError(f"prompt must be a nonempty sequence of token ids (ints >= 0), got {prompt!r}")
    vocab = len(lm.next_token_law(list(prompt)))
    if eos is not None:
        check_int("eos", eos)
        if eos >= vocab:
            raise ValueError(f"eos={eos} is outside the vocabulary [0, {vocab})")
    rules = () if eos is None else (StoppingRule.on_action(EOS_RULE, {eos}),)
    return Interaction(token_environment(prompt, vocab, max_len), policy, Stopping(rules))


def stop_reason(z: StoppedTrajectory) -> StopReason:
    """The generation stop reason of ftip-000G for a token trajectory: EOS (agent) or MAX_LEN (horizon)."""
    if z.cause.owner is StopOwner.AGENT and z.cause.rule == EOS_RULE:
        return StopReason.EOS
    if z.cause.owner is StopOwner.HORIZON:
        return StopReason.MAX_LEN
    raise ValueError(f"{z.cause!r} is not a stop cause of token generation")


def continuations(law: FiniteLaw) -> dict[tuple[int, ...], tuple[Prob, StopReason]]:
    """``{emitted tokens: (probability, stop reason)}`` for the law of a :func:`token_interaction`."""
    out = {}
    for z, p in law.items():
        if not isinstance(z, StoppedTrajectory):
            raise TypeError(f"law must be a law of StoppedTrajectory, got an outcome {type(z).__name__}")
        out[tuple(z.actions)] = (p, stop_reason(z))
    return out
