"""A calculator tool environment whose actions are parsed from a language model's text (ftip-0020, 0023).

The agent reads a question such as ``"17+58"`` (the first observation) and acts by writing text.
:func:`parse_action` turns the text into an action: a number is an :class:`Answer` (the agent
stops), an expression ``a op b`` is a :class:`Calc` call, anything else is :class:`Malformed`.
The calculator is a deterministic tool: a call shows ``"a op b=value"``, a malformed action shows
``"error"``, an answer shows ``"answer value"``. :class:`ModelPolicy` makes a ``DecoderLM`` a policy by
serializing the public history into a prompt, decoding, and parsing, the three maps the note
requires before a language model is a policy (ftip-0023).
"""
from __future__ import annotations

import operator
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ftipbook import checks
from ftipbook.env.history import PublicHistory, StopOwner, StoppedTrajectory
from ftipbook.env.kernels import InitialLaw, TransitionKernel
from ftipbook.env.policy import Policy
from ftipbook.env.realization import InteractiveRealization
from ftipbook.env.spaces import Spaces, check_callable, check_int
from ftipbook.env.stopping import Stopping, StoppingRule
from ftipbook.model.generate import StopReason, generate
from ftipbook.model.transformer import DecoderLM
from ftipbook.prob import FiniteLaw

_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul}
_EXPRESSION = re.compile(r"(\d{1,6})([+\-*])(\d{1,6})")
_NUMBER = re.compile(r"-?\d{1,7}")
#: The name of the agent-owned rule that stops after an answer.
ANSWER_RULE = "answer"


@dataclass(frozen=True)
class Answer:
    """The agent's final answer (an int)."""

    value: int


@dataclass(frozen=True)
class Calc:
    """A call of the calculator on ``a op b``."""

    expression: str


@dataclass(frozen=True)
class Malformed:
    """Text that is neither a number nor an expression."""

    text: str


Action = Answer | Calc | Malformed


def evaluate(expression: str) -> int:
    """The value of ``"a op b"`` with ``op`` in ``+ - *`` and nonnegative decimal operands."""
    if not isinstance(expression, str):
        raise TypeError(f"expression must be a str, got {type(expression).__name__}")
    m = _EXPRESSION.fullmatch(expression)
    if m is None:
        raise ValueError(f"expression must look like 'a+b', 'a-b' or 'a*b' with decimal a, b; got {expression!r}")
    return _OPS[m.group(2)](int(m.group(1)), int(m.group(3)))


def parse_action(text: str) -> Action:
    """``"75"`` -> ``Answer(75)``, ``"7+5"`` -> ``Calc("7+5")``, anything else -> ``Malformed`` (spaces stripped)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    body = text.strip()
    if _NUMBER.fullmatch(body):
        return Answer(int(body))
    if _EXPRESSION.fullmatch(body):
        return Calc(body)
    return Malformed(text)


def calculator_step(t: int, state: tuple, action: Action) -> tuple[tuple, str]:
    """``F_t(s, a)``: the state ``(question, display)`` and the observation after ``action``."""
    question, display = state
    if isinstance(action, Calc):
        value = evaluate(action.expression)
        return (question, value), f"{action.expression}={value}"
    if isinstance(action, Answer):
        return (question, display), f"answer {action.value}"
    if isinstance(action, Malformed):
        return (question, display), "error"
    raise TypeError(f"action must be an Answer, Calc or Malformed, got {type(action).__name__}")


def calculator_kernel() -> TransitionKernel:
    """The calculator as a deterministic tool (ftip-0020)."""
    return TransitionKernel.tool(calculator_step)


def calculator_initial(question: str) -> InitialLaw:
    """``S_0 = (question, None)`` (empty display), ``O_0 = question``."""
    evaluate(question)
    return InitialLaw(FiniteLaw({((question, None), question): Fraction(1)}))


def answer_stopping() -> Stopping:
    """The agent stops after an :class:`Answer`."""
    return Stopping((StoppingRule(ANSWER_RULE, StopOwner.AGENT, lambda h: isinstance(h.last_action, Answer)),))


def final_answer(question: str, z: StoppedTrajectory) -> int | None:
    """``out_T``: the value of the last action if it is an answer, else ``None`` (no answer given)."""
    last = z.actions[-1] if z.actions else None
    return last.value if isinstance(last, Answer) else None


def calculator_realization(questions: Sequence[str], t_max: int) -> InteractiveRealization:
    """The arithmetic task ``questions`` realized with the calculator (ftip-006T); outcomes ``int | None``."""
    check_int("t_max", t_max, low=1)
    questions = checks.items("questions", questions, nonempty=True, what="questions")
    for i, q in enumerate(questions):
        if not isinstance(q, str):
            raise TypeError(f"questions[{i}] must be a str 'a op b', got {checks.show(q)}")
        try:
            evaluate(q)
        except ValueError as err:
            raise ValueError(f"questions[{i}]: {err}") from None
    return InteractiveRealization(
        tuple(questions), Spaces(None, None, None, t_max), calculator_initial, lambda x: calculator_kernel(),
        final_answer, lambda x, y: y is None or (isinstance(y, int) and not isinstance(y, bool)))


def question_prompt(history: PublicHistory) -> str:
    """The default serializer: the question ``O_0`` followed by ``=``, as the zoo's arithmetic text writes it."""
    return f"{history.observations[0]}="


@dataclass(frozen=True)
class ModelPolicy:
    """The maps that make a ``DecoderLM`` a policy: serialize ``H_t``, decode, parse (ftip-0023)."""

    model: DecoderLM
    tokenizer: object
    max_new_tokens: int = 6
    temperature: float = 0.0
    serialize: Callable[[PublicHistory], str] = question_prompt
    parse: Callable[[str], Action] = parse_action

    def __post_init__(self) -> None:
        if not isinstance(self.model, DecoderLM):
            raise TypeError(f"model must be a DecoderLM, got {type(self.model).__name__}")
        for name in ("encode", "decode"):
            check_callable(f"tokenizer.{name}", getattr(self.tokenizer, name, None))
        if getattr(self.tokenizer, "eos_id", None) is None:
            raise ValueError("tokenizer must have an eos_id (the end of the model's text)")
        check_int("max_new_tokens", self.max_new_tokens, low=1)
        object.__setattr__(self, "temperature", checks.real("temperature", self.temperature, 0))
        check_callable("serialize", self.serialize)
        check_callable("parse", self.parse)

    def text(self, history: PublicHistory, seed: int | None = None) -> str:
        """The model's text after ``serialize(history)``, up to its end token."""
        checks.instance("history", history, PublicHistory)
        if seed is not None:
            checks.seed("seed", seed)
        prompt = self.tokenizer.encode(self.serialize(history))
        g = generate(self.model, prompt, self.max_new_tokens, temperature=self.temperature,
                     seed=seed, eos_id=self.tokenizer.eos_id)
        new = g.new_tokens.tolist()
        return self.tokenizer.decode(new[:-1] if g.stop_reason is StopReason.EOS else new)

    def policy(self) -> Policy:
        """Greedy decoding gives a point-mass law (enumerable); sampling gives a sampler (Monte Carlo)."""
        if self.temperature == 0:
            return Policy(lambda h: FiniteLaw({self.parse(self.text(h)): Fraction(1)}), name="greedy model")

        def sampler(h: PublicHistory, rng: random.Random) -> Action:
            return self.parse(self.text(h, seed=rng.randrange(2**31)))

        return Policy(sampler=sampler, name=f"model at temperature {self.temperature}")
