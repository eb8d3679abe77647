"""Tests of ftipbook.env: spaces, histories, kernels, policies, stopping, interaction laws, realizations."""
from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction as F

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ftipbook.env import (HORIZON, Answer, Calc, Environment, InitialLaw, Interaction, InteractiveRealization,
                          Malformed, ModelPolicy, Policy, PublicHistory, Spaces, StopCause, StoppedTrajectory,
                          Stopping, StoppingRule, StopOwner, TransitionKernel, calculator_realization,
                          continuations, parse_action, token_environment, token_interaction)
from ftipbook.env.calculator import answer_stopping, evaluate, final_answer
from ftipbook.model.config import ModelConfig
from ftipbook.model.generate import StopReason
from ftipbook.model.transformer import build_model
from ftipbook.prob import FiniteLaw, TableLM, enumerate_continuations


# --- a small stochastic environment used throughout -------------------------------------------------------
def coin_env(t_max: int = 3, bias: F = F(2, 3)) -> Environment:
    """Hidden state: a count; action 'push' moves it up with probability ``bias``; the observation is noisy."""
    spaces = Spaces(range(10), ("lo", "hi"), ("push", "wait"), t_max)
    initial = InitialLaw(FiniteLaw({(0, "lo"): F(3, 4), (1, "hi"): F(1, 4)}))

    def law(t, s, a):
        up = bias if a == "push" else F(0)
        rows = {}
        for s2, w in ((s + 1, up), (s, 1 - up)):
            for o, v in (("hi", F(s2, s2 + 1)), ("lo", F(1, s2 + 1))):
                if w * v:
                    rows[(s2, o)] = rows.get((s2, o), 0) + w * v
        return FiniteLaw(rows)

    return Environment(spaces, initial, TransitionKernel(law))


def push_policy() -> Policy:
    return Policy(lambda h: FiniteLaw({"push": F(1, 3) if h.last_observation == "hi" else F(4, 5),
                                       "wait": F(2, 3) if h.last_observation == "hi" else F(1, 5)}))


def stop_hi_twice() -> Stopping:
    return Stopping((StoppingRule.on_observation("hi", lambda o: o == "hi"),))


def brute_force_law(env: Environment, policy: Policy, stopping: Stopping, states=None) -> dict:
    """Every alternating sequence up to T_max by itertools.product, weighted by the factorization of ftip-0028."""
    out = {}
    states = sorted(env.spaces.states) if states is None else states
    obs, acts = sorted(env.spaces.observations), sorted(env.spaces.actions)
    for n in range(env.t_max + 1):
        for s_seq in itertools.product(states, repeat=n + 1):
            for o_seq in itertools.product(obs, repeat=n + 1):
                for a_seq in itertools.product(acts, repeat=n):
                    p0 = env.initial.law.outcomes
                    p = env.initial.law((s_seq[0], o_seq[0])) if (s_seq[0], o_seq[0]) in p0 else 0
                    for t in range(n):
                        h = PublicHistory(o_seq[: t + 1], a_seq[:t])
                        stopped = any(r.stop_prob(h) for r in stopping.rules)
                        pi = policy.action_law(h)
                        k = env.kernel.next_law(t, s_seq[t], a_seq[t])
                        pair = (s_seq[t + 1], o_seq[t + 1])
                        p *= (0 if stopped else 1) * pi(a_seq[t]) * (k(pair) if pair in k.outcomes else 0)
                    if p == 0:
                        continue
                    h = PublicHistory(o_seq, a_seq)
                    fired = [r for r in stopping.rules if r.stop_prob(h)]
                    if fired:
                        cause = fired[0].cause
                    elif n == env.t_max:
                        cause = HORIZON
                    else:
                        continue
                    out[StoppedTrajectory(s_seq, o_seq, a_seq, cause)] = p
    return out


# --- spaces and histories ----------------------------------------------------------------------------------
def test_spaces_validate():
    s = Spaces(("a", "b"), None, [1, 2], 2)
    assert s.states == frozenset({"a", "b"}) and s.observations is None
    assert s.check("observations", "anything") == "anything"
    with pytest.raises(ValueError, match="not in the declared states"):
        s.check("states", "c")
    with pytest.raises(ValueError, match="t_max"):
        Spaces(None, None, None, 2.0)
    with pytest.raises(ValueError, match="t_max"):
        Spaces(None, None, None, -1)
    with pytest.raises(ValueError, match="actions"):
        Spaces(None, None, (), 1)
    with pytest.raises(TypeError, match="states"):
        Spaces("ab", None, None, 1)
    with pytest.raises(TypeError, match="hashable"):
        s.check("actions", [1])
    with pytest.raises(ValueError, match="kind"):
        s.check("rewards", 1)


def test_history_shape_and_boundary():
    h = PublicHistory(("o0",), ())
    assert h.t == 0 and h.last_action is None and h.sequence() == ("o0",)
    h2 = h.extend("a0", "o1").extend("a1", "o2")
    assert h2.sequence() == ("o0", "a0", "o1", "a1", "o2") and h2.t == 2
    assert h2.prefix(1) == PublicHistory(("o0", "o1"), ("a0",))
    with pytest.raises(ValueError, match="one more observation"):
        PublicHistory(("o0",), ("a0",))
    with pytest.raises(TypeError, match="observations"):
        PublicHistory("o0", ())
    with pytest.raises(ValueError, match="t must be"):
        h2.prefix(3)
    with pytest.raises((AttributeError, TypeError)):
        h2.state = 5  # no slot for a hidden state


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=6), st.integers(0, 3))
def test_history_prefix_is_the_history_then(steps, o0):
    h = PublicHistory((o0,), ())
    seen = [h]
    for a, o in steps:
        h = h.extend(a, o)
        seen.append(h)
    assert all(h.prefix(t) == seen[t] for t in range(h.t + 1))
    assert len(h.sequence()) == 2 * h.t + 1


def test_trajectory_projection():
    z = StoppedTrajectory((0, 1), ("lo", "hi"), ("push",), StopCause(StopOwner.ENVIRONMENT, "hi"))
    assert z.n == 1 and z.public == PublicHistory(("lo", "hi"), ("push",))
    assert z.sequence() == (0, "lo", "push", 1, "hi")
    z0 = StoppedTrajectory((0,), ("lo",), (), HORIZON)
    assert z0.n == 0 and z0.sequence() == (0, "lo")
    with pytest.raises(ValueError, match="n \\+ 1 states"):
        StoppedTrajectory((0,), ("lo", "hi"), ("push",), HORIZON)
    with pytest.raises(TypeError, match="cause"):
        StoppedTrajectory((0,), ("lo",), (), "horizon")
    with pytest.raises(TypeError, match="owner"):
        StopCause("agent", "x")


# --- kernels -----------------------------------------------------------------------------------------------
def test_initial_and_kernel_validation():
    with pytest.raises(ValueError, match="needs"):
        InitialLaw()
    with pytest.raises(ValueError, match="pairs"):
        InitialLaw(FiniteLaw({"s": 1}))
    with pytest.raises(TypeError, match="FiniteLaw"):
        InitialLaw({("s", "o"): 1})
    rendered = InitialLaw.rendered(FiniteLaw({1: F(1, 3), 2: F(2, 3)}), lambda s: s % 2)
    assert rendered.law == FiniteLaw({(1, 1): F(1, 3), (2, 0): F(2, 3)})
    with pytest.raises(ValueError, match="needs"):
        TransitionKernel()
    with pytest.raises(TypeError, match="sampler"):
        TransitionKernel(sampler=3)
    noisy = TransitionKernel(lambda t, s, a: FiniteLaw({(s, "x"): F(1, 2), (s, "y"): F(1, 2)}), deterministic=True)
    with pytest.raises(ValueError, match="point mass"):
        noisy.next_law(0, 0, 0)
    sampler_only = TransitionKernel(sampler=lambda t, s, a, rng: (s, rng.random()))
    with pytest.raises(ValueError, match="sampler only"):
        sampler_only.next_law(0, 0, 0)
    with pytest.raises(TypeError, match="rng"):
        sampler_only.sample(0, 0, 0, 7)


def test_tool_kernel_is_a_point_mass_and_replays():
    tool = TransitionKernel.tool(lambda t, s, a: (s + a, f"got {s + a}"))
    law = tool.next_law(0, 2, 3)
    assert law.support == ((5, "got 5"),) and law((5, "got 5")) == 1 and tool.deterministic
    rng = random.Random(0)
    assert {tool.sample(0, 2, 3, rng) for _ in range(20)} == {(5, "got 5")}


def test_factored_kernel_multiplies():
    k = TransitionKernel.factored(lambda t, s, a: FiniteLaw({s + 1: F(1, 4), s: F(3, 4)}),
                                  lambda t, s2, a: FiniteLaw({"odd": F(s2 % 2), "even": F(1 - s2 % 2)}))
    law = k.next_law(0, 0, "a")
    assert law((1, "odd")) == F(1, 4) and law((0, "even")) == F(3, 4) and law((1, "even")) == 0
    bad = TransitionKernel.factored(lambda t, s, a: {s: 1}, lambda t, s2, a: FiniteLaw({0: 1}))
    with pytest.raises(TypeError, match="transition"):
        bad.next_law(0, 0, 0)


# --- policies and stopping ---------------------------------------------------------------------------------
def test_policy_receives_only_a_public_history():
    seen = []
    pol = Policy(lambda h: seen.append(h) or FiniteLaw({"push": 1}))
    Interaction(coin_env(), pol, stop_hi_twice()).law()
    assert seen and all(type(h) is PublicHistory for h in seen)
    assert all(not hasattr(h, "states") for h in seen)
    with pytest.raises(TypeError, match="PublicHistory"):
        pol.action_law((0, "lo"))
    with pytest.raises(TypeError, match="FiniteLaw"):
        Policy(lambda h: {"push": 1}).action_law(PublicHistory(("lo",), ()))
    with pytest.raises(ValueError, match="needs"):
        Policy()
    with pytest.raises(ValueError, match="sampler only"):
        Policy(sampler=lambda h, rng: "push").action_law(PublicHistory(("lo",), ()))


def test_stopping_rules_owners_and_order():
    with pytest.raises(ValueError, match="owner"):
        StoppingRule("h", StopOwner.HORIZON, lambda h: True)
    with pytest.raises(ValueError, match="distinct"):
        Stopping((StoppingRule.on_action("x", {1}), StoppingRule.on_action("x", {2})))
    with pytest.raises(TypeError, match="rules"):
        Stopping(("x",))
    bad = StoppingRule("p", StopOwner.AGENT, lambda h: 1.5)
    with pytest.raises(ValueError, match="probability"):
        bad.stop_prob(PublicHistory((0,), ()))
    coin = StoppingRule("coin", StopOwner.AGENT, lambda h: F(1, 4))
    budget = StoppingRule.budget("two calls", lambda h: h.t, 2)
    stopping = Stopping((coin, budget))
    h2 = PublicHistory((0, 0, 0), (1, 1))
    stops, go = stopping.split(h2, 5)
    assert stops == [(coin.cause, F(1, 4)), (budget.cause, F(3, 4))] and go == 0
    stops, go = stopping.split(PublicHistory((0,), ()), 0)
    assert stops == [(coin.cause, F(1, 4)), (HORIZON, F(3, 4))] and go == 0
    stops, go = stopping.split(PublicHistory((0,), ()), 3)
    assert go == F(3, 4)
    with pytest.raises(ValueError, match="past the horizon"):
        stopping.split(h2, 1)
    with pytest.raises(ValueError, match="limit"):
        StoppingRule.budget("b", lambda h: 0, -1)
    assert StoppingRule.on_action("end", {"end"}).stop_prob(PublicHistory((0,), ())) == 0


# --- the induced law ---------------------------------------------------------------------------------------
def test_enumeration_equals_brute_force_and_factorization():
    env, pol, stopping = coin_env(t_max=2), push_policy(), stop_hi_twice()
    it = Interaction(env, pol, stopping)
    law = it.law()
    assert law.exact and sum(p for _, p in law.items()) == 1
    assert dict(law.items()) == brute_force_law(env, pol, stopping, states=range(env.t_max + 2))
    for z, p in law.items():
        assert it.prob(z) == p
    z = next(iter(dict(law.items())))
    forged = StoppedTrajectory(z.states, z.observations, z.actions, StopCause(StopOwner.AGENT, "nope"))
    assert it.prob(forged) == 0


def test_causes_are_recorded():
    law = Interaction(coin_env(), push_policy(), stop_hi_twice()).law()
    owners = law.pushforward(lambda z: z.cause.owner)
    assert set(owners.outcomes) == {StopOwner.ENVIRONMENT, StopOwner.HORIZON}
    assert all(z.n == 3 for z, p in law.items() if z.cause == HORIZON)
    assert all(z.observations[-1] == "hi" for z, p in law.items() if z.cause.owner is StopOwner.ENVIRONMENT)


def test_monte_carlo_agrees_with_enumeration():
    it = Interaction(coin_env(), push_policy(), stop_hi_twice())
    for event in (lambda z: z.n == 0, lambda z: z.cause == HORIZON, lambda z: z.states[-1] >= 2):
        est = it.estimate(event, 3000, seed=1, level=0.999)
        assert est.contains(it.prob_of(event)), (est, it.prob_of(event))


def test_monte_carlo_detects_a_wrong_law():
    it = Interaction(coin_env(), push_policy(), stop_hi_twice())
    other = Interaction(coin_env(bias=F(1, 5)), push_policy(), stop_hi_twice())
    event = lambda z: z.states[-1] >= 2  # noqa: E731
    assert not other.estimate(event, 3000, seed=1, level=0.999).contains(it.prob_of(event))


def test_random_stopping_rule_enumeration_and_sampling():
    coin = StoppingRule("coin", StopOwner.AGENT, lambda h: F(1, 3) if h.t else 0)
    it = Interaction(coin_env(), push_policy(), Stopping((coin,)))
    law = it.law()
    assert sum(p for _, p in law.items()) == 1
    p_coin = law.prob(lambda z: z.cause.rule == "coin")
    assert p_coin == 1 - F(2, 3) ** 3
    assert it.estimate(lambda z: z.cause.rule == "coin", 3000, seed=2, level=0.999).contains(p_coin)


def test_sampler_only_parts_refuse_enumeration():
    env = coin_env()
    pol = Policy(sampler=lambda h, rng: rng.choice(["push", "wait"]))
    it = Interaction(env, pol, stop_hi_twice())
    with pytest.raises(ValueError, match="cannot be enumerated"):
        it.law()
    z = it.sample(random.Random(0))
    assert isinstance(z, StoppedTrajectory) and z.n <= 3
    with pytest.raises(ValueError, match="cannot be evaluated"):
        it.prob(z)
    with pytest.raises(ValueError, match="not in the declared actions"):
        Interaction(env, Policy.deterministic(lambda h: "jump"), stop_hi_twice()).law()
    with pytest.raises(ValueError, match="max_trajectories"):
        Interaction(env, push_policy()).law(max_trajectories=3)
    with pytest.raises(TypeError, match="policy"):
        Interaction(env, "push")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), min_size=2, max_size=2),
       st.integers(1, 5), st.integers(0, 3))
def test_random_finite_interactions_have_total_mass_one(weights, w_stop, t_max):
    (a, b), (c, d) = weights
    env = Environment(Spaces((0, 1), (0, 1), (0, 1), t_max),
                      InitialLaw(FiniteLaw({(0, 0): F(a, a + b), (1, 1): F(b, a + b)})),
                      TransitionKernel(lambda t, s, x: FiniteLaw({((s + x) % 2, 0): F(c, c + d),
                                                                  ((s + x) % 2, 1): F(d, c + d)})))
    pol = Policy(lambda h: FiniteLaw({0: F(w_stop, w_stop + 1), 1: F(1, w_stop + 1)}))
    stopping = Stopping((StoppingRule.on_observation("one", lambda o: o == 1),))
    it = Interaction(env, pol, stopping)
    law = it.law()
    assert sum(p for _, p in law.items()) == 1
    assert dict(law.items()) == brute_force_law(env, pol, stopping)
    assert all(z.n <= t_max for z in law.outcomes)


# --- realization -------------------------------------------------------------------------------------------
def test_realization_outcome_map_and_admissibility():
    real = InteractiveRealization((1, 2), Spaces(range(10), ("lo", "hi"), ("push", "wait"), 2),
                                  lambda x: InitialLaw(FiniteLaw({(x, "lo"): 1})), lambda x: coin_env().kernel,
                                  lambda x, z: z.states[-1] - x, lambda x, y: 0 <= y <= 2)
    law = real.outcome_law(2, push_policy())
    assert sum(p for _, p in law.items()) == 1 and set(law.outcomes) <= {0, 1, 2}
    with pytest.raises(ValueError, match="not an instance"):
        real.environment(3)
    strict = InteractiveRealization((1,), real.spaces, real.initial, real.kernel, real.outcome, lambda x, y: y == 0)
    with pytest.raises(ValueError, match="not admissible"):
        strict.outcome_law(1, Policy.deterministic(lambda h: "push"))
    with pytest.raises(ValueError, match="distinct"):
        InteractiveRealization((1, 1), real.spaces, real.initial, real.kernel, real.outcome, real.admissible)


# --- tokens ------------------------------------------------------------------------------------------------
def _as_leaves(lm, prompt, eos, max_len):
    return {c.tokens: (c.prob, c.stop_reason) for c in enumerate_continuations(lm, prompt, eos=eos, max_len=max_len)}


def test_token_interaction_equals_prefix_tree_exactly():
    lm = TableLM(("a", "b", "EOS"), {("a",): {"a": F(1, 2), "b": F(1, 3), "EOS": F(1, 6)},
                                     ("a", "a"): {"EOS": F(3, 4), "b": F(1, 4)}},
                 default={"a": F(1, 5), "b": F(2, 5), "EOS": F(2, 5)})
    for max_len in (1, 2, 3):
        law = token_interaction(lm, [0], eos=2, max_len=max_len).law()
        assert law.exact and continuations(law) == _as_leaves(lm, [0], 2, max_len)
    no_eos = token_interaction(lm, [0], eos=None, max_len=2).law()
    assert all(r is StopReason.MAX_LEN for _, r in continuations(no_eos).values())
    assert len(no_eos.outcomes) == 8  # nine pairs, but P(a | a a) = 0


def test_token_interaction_with_a_decoder_lm():
    cfg = ModelConfig(vocab_size=3, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=8)
    model = build_model(cfg, seed=3).eval()
    law = token_interaction(model, [0, 1], eos=2, max_len=3).law()
    mine, ref = continuations(law), _as_leaves(model, [0, 1], 2, 3)
    assert mine.keys() == ref.keys()
    assert max(abs(mine[k][0] - ref[k][0]) for k in ref) < 1e-12
    assert all(mine[k][1] is ref[k][1] for k in ref)
    with torch.no_grad():
        after_a = torch.softmax(model(torch.tensor([[0, 1, 0]]))[0, -1].double(), -1)
        first = torch.softmax(model(torch.tensor([[0, 1]]))[0, -1].double(), -1)
    step = first[0] * after_a[2]
    assert math.isclose(mine[(0, 2)][0], float(step), rel_tol=1e-9)


def test_token_environment_validation():
    with pytest.raises(ValueError, match="prompt"):
        token_environment([], 3, 2)
    with pytest.raises(ValueError, match="prompt"):
        token_environment([5], 3, 2)
    with pytest.raises(ValueError, match="max_len"):
        token_environment([0], 3, 0)
    lm = TableLM(("a", "EOS"), {}, default={"a": F(1, 2), "EOS": F(1, 2)})
    with pytest.raises(ValueError, match="eos"):
        token_interaction(lm, [0], eos=2, max_len=2)
    with pytest.raises(TypeError, match="NextTokenLaw"):
        token_interaction(object(), [0], eos=1, max_len=2)


# --- calculator --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,action", [
    ("75", Answer(75)), (" 75 ", Answer(75)), ("-3", Answer(-3)), ("7+5", Calc("7+5")), ("12*3", Calc("12*3")),
    ("7 + 5", Malformed("7 + 5")), ("75x", Malformed("75x")), ("", Malformed("")),
])
def test_parse_action(text, action):
    assert parse_action(text) == action


@given(st.integers(0, 999), st.sampled_from("+-*"), st.integers(0, 999))
def test_calculator_evaluates_like_python(a, op, b):
    assert evaluate(f"{a}{op}{b}") == {"+": a + b, "-": a - b, "*": a * b}[op]
    assert parse_action(f"{a}{op}{b}") == Calc(f"{a}{op}{b}")


def test_calculator_realization_with_a_scripted_agent():
    real = calculator_realization(["17+58", "3*4"], t_max=3)
    script = {0: Calc("17+58"), 1: Malformed("?")}

    def choose(h):
        if h.t in script and h.observations[0] == "17+58":
            return script[h.t]
        return Answer(int(h.observations[1].split("=")[1])) if h.t >= 1 and "=" in h.observations[1] else Answer(0)

    law = real.interaction("17+58", Policy.deterministic(choose), answer_stopping()).law()
    (z,) = law.outcomes
    assert z.observations == ("17+58", "17+58=75", "error", "answer 75") and z.states[-1] == ("17+58", 75)
    assert real.out("17+58", z) == 75 == final_answer("17+58", z)
    with pytest.raises(ValueError, match="expression"):
        calculator_realization(["17+"], 2)
    with pytest.raises(TypeError, match="model"):
        ModelPolicy("model", None)


def test_model_policy_on_the_calculator():
    from ftipbook import zoo
    model, tok = zoo.load_model("sft-elicit", device="cpu"), zoo.tokenizer()
    real = calculator_realization(["17+58", "12+30"], t_max=2)
    greedy = ModelPolicy(model, tok).policy()
    for q in real.instances:
        law = real.outcome_law(q, greedy, answer_stopping())
        assert law.support == (evaluate(q),)
    sampled = ModelPolicy(model, tok, temperature=1.0).policy()
    zs = real.interaction("17+58", sampled, answer_stopping()).samples(4, seed=0)
    assert all(z.cause.owner in (StopOwner.AGENT, StopOwner.HORIZON) for z in zs)


# --- leak check, examples, figures -------------------------------------------------------------------------
def test_state_dependence_flags_only_state_reading_policies():
    from ftipbook.env import state_dependence
    env = coin_env(t_max=2)
    assert state_dependence(Interaction(env, push_policy()).law()) == []
    reveal = lambda so: (so[0], (so[1], so[0]))  # noqa: E731
    revealing = Environment(Spaces(range(10), None, ("push", "wait"), 2),
                            InitialLaw(env.initial.law.pushforward(reveal)),
                            TransitionKernel(lambda t, s, a: env.kernel.next_law(t, s, a).pushforward(reveal)))
    oracle = Policy.deterministic(lambda h: "push" if h.last_observation[1] < 1 else "wait")
    law = Interaction(revealing, oracle).law().pushforward(
        lambda z: StoppedTrajectory(z.states, tuple(o[0] for o in z.observations), z.actions, z.cause))
    assert state_dependence(law)
    with pytest.raises(TypeError, match="FiniteLaw"):
        state_dependence({})
    with pytest.raises(TypeError, match="StoppedTrajectory"):
        state_dependence(FiniteLaw({1: 1}))


def test_door_example_runs_the_three_action_episode():
    from ftipbook.env.examples import door_environment, door_terminal, noisy_counter
    plan = {"door locked": "take key", "key held": "unlock", "door open": "enter"}
    (z,) = Interaction(door_environment(), Policy.deterministic(lambda h: plan[h.last_observation]),
                       Stopping((door_terminal(),))).law().outcomes
    assert z.actions == ("take key", "unlock", "enter") and z.observations[-1] == "terminal success"
    assert z.cause.owner is StopOwner.ENVIRONMENT
    with pytest.raises(ValueError, match="bias"):
        noisy_counter(bias=F(3, 2))
    with pytest.raises(TypeError, match="t_max"):
        door_environment(t_max="5")


def test_figures_draw_and_validate():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ftipbook.viz import env_figs
    law = Interaction(coin_env(t_max=2), push_policy(), stop_hi_twice()).law()
    ax = env_figs.draw_interaction_tree(law)
    assert ax.texts
    z = max(law.outcomes, key=lambda y: y.n)
    assert env_figs.draw_loop(z).texts
    with pytest.raises(TypeError, match="StoppedTrajectory"):
        env_figs.draw_loop("z")
    with pytest.raises(TypeError, match="StoppedTrajectory"):
        env_figs.draw_interaction_tree(FiniteLaw({1: 1}))
    plt.close("all")
