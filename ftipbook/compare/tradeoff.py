"""Testing the predicted architecture tradeoff mechanism by mechanism (ftip-00LG).

Remark ftip-00LG chains the note's two models into one prediction and asks that it be tested
against matched measurements, one mechanism at a time:

1. state sizes ``kappa, sigma`` and a context ``T`` give each design's attention-state bytes per
   sequence (ftip-00KY, :mod:`ftipbook.compare.cache_model`);
2. a fixed device memory for that state gives the number of concurrent rollouts, and, assuming
   memory-bound decoding, the generation speed factor ``s_gen = concurrency_K / concurrency_M``;
3. with generation share ``f`` that gives the attempt-throughput factor, attempts under a budget
   and, with independent verified successes, the discovery probabilities (ftip-00L3,
   :mod:`ftipbook.compare.throughput`).

:func:`predictions` turns a :class:`TradeoffSetting` into one
:class:`~ftipbook.compare.reports.ConditionalPrediction` per measurable quantity (generation
share, speed factor, hybrid per-attempt success rate, hybrid discovery probability).
:func:`simulate_study` produces *simulated* matched measurements from a :class:`World` in which
any of the inputs may differ from the assumed ones (shorter contexts, expensive verification, a
lower success rate, correlated attempts), and :func:`check_world` compares each prediction with
its measurement through a declared test. The pattern of disagreements names the failing
assumption. The simulated world shares the memory-bound speed mechanism of step 2; it is a
harness for the logic of the test, not evidence about real systems.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ftipbook.compare import cache_model, throughput
from ftipbook.compare.reports import (ConditionalPrediction, MeanTest, ModelInput, PredictionCheck, ProportionTest,
                                      ToleranceTest)
from ftipbook.model.config import ModelConfig

#: The four measured quantities, in the order of the prediction chain.
QUANTITIES = ("generation share f", "speed factor s_gen", "hybrid success rate p_K", "hybrid discovery")

#: Tests declared before any simulated measurement (the chapter may declare others).
DEFAULT_TESTS: Mapping[str, ToleranceTest | MeanTest | ProportionTest] = {
    "generation share f": ToleranceTest(abs_tol=0.05),
    "speed factor s_gen": ToleranceTest(rel_tol=0.10),
    "hybrid success rate p_K": MeanTest(level=0.95, n_boot=1000, seed=0),
    "hybrid discovery": ProportionTest(level=0.95),
}


def concurrency(kappa: int, sigma: int, ell: int, memory: int, context: int) -> tuple[int, int]:
    """Rollouts whose attention state fits in ``memory`` bytes: ``(full MLA, hybrid)``, each
    ``floor(memory / bytes per sequence)`` with the per-sequence bytes of ftip-00KY at ``T = context``."""
    full, hybrid = cache_model.stylized_state_memory(ell, 1, context, kappa, sigma)
    if memory < max(full, hybrid):
        raise ValueError(f"memory={memory} bytes holds no rollout of one design at T={context} "
                         f"(needs {full} bytes for full MLA, {hybrid} for the hybrid)")
    return math.floor(memory / full), math.floor(memory / hybrid)


def _speed(kappa: float, sigma: float, ell: float, memory: float, context: float) -> float:
    conc_m, conc_k = concurrency(int(kappa), int(sigma), int(ell), int(memory), int(context))
    return conc_k / conc_m


def _attempts(f: float, s_gen: float, budget: float) -> tuple[int, int]:
    return (throughput.attempts_under_budget(budget, 1.0),
            throughput.attempts_under_budget(budget, throughput.attempt_cost(1.0, f, s_gen)))


@dataclass(frozen=True)
class TradeoffSetting:
    """The inputs of the prediction: state sizes (bytes), layer groups ``ell``, device ``memory`` for
    attention state (bytes), assumed ``context`` and generation share ``f``, assumed per-attempt
    success rates ``p_m, p_k`` and the budget in baseline attempts."""

    kappa: int
    sigma: int
    ell: int
    memory: int
    context: int
    f: float
    p_m: float
    p_k: float
    budget: float

    def __post_init__(self) -> None:
        for name in ("kappa", "sigma", "ell", "memory", "context"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r} must be an int >= 1")
        for name in ("f", "p_m", "p_k"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0 <= value <= 1):
                raise ValueError(f"{name}={value!r} must lie in [0, 1]")
        if not (isinstance(self.budget, (int, float)) and math.isfinite(self.budget) and self.budget >= 1):
            raise ValueError(f"budget={self.budget!r} must be a finite number >= 1 (baseline attempts)")
        concurrency(self.kappa, self.sigma, self.ell, self.memory, self.context)

    @classmethod
    def from_config(cls, cfg: ModelConfig, *, memory: int, context: int, f: float, p_m: float, p_k: float,
                    budget: float) -> "TradeoffSetting":
        """``kappa``, ``sigma`` and ``ell`` read off a 3:1 hybrid configuration (:func:`~ftipbook.compare.cache_model.state_sizes`)."""
        sizes = cache_model.state_sizes(cfg)
        return cls(sizes.kappa, sizes.sigma, sizes.ell, memory, context, f, p_m, p_k, budget)


def predictions(setting: TradeoffSetting) -> dict[str, ConditionalPrediction]:
    """One conditional prediction per quantity of :data:`QUANTITIES`, each derived from its inputs."""
    s = setting
    sizes = [ModelInput("kappa", s.kappa, "measured", "MLA cache bytes per token of the config"),
             ModelInput("sigma", s.sigma, "measured", "KDA state bytes of the config"),
             ModelInput("ell", s.ell, "measured", "MLA layers of the config"),
             ModelInput("memory", s.memory, "measured", "declared device memory for attention state")]
    context = ModelInput("context", s.context, "assumed", "long-context workload")
    share = ModelInput("f", s.f, "assumed", "generation share of a baseline attempt")
    p_k = ModelInput("p_K", s.p_k, "assumed", "hybrid verified-success rate per attempt")
    budget = ModelInput("budget", s.budget, "measured", "declared budget in baseline attempts")
    chain = "memory-bound decoding: s_gen = concurrency ratio at T (ftip-00KY)"

    def discovery(kappa, sigma, ell, memory, context, f, p_K, budget):
        n_k = _attempts(f, _speed(kappa, sigma, ell, memory, context), budget)[1]
        return throughput.discovery_probability(p_K, n_k)

    return {
        "generation share f": ConditionalPrediction.derive("generation share f", "assumed value", lambda f: f, [share]),
        "speed factor s_gen": ConditionalPrediction.derive("speed factor s_gen", chain, _speed, sizes + [context]),
        "hybrid success rate p_K": ConditionalPrediction.derive("hybrid success rate p_K", "assumed value",
                                                                lambda p_K: p_K, [p_k]),
        "hybrid discovery": ConditionalPrediction.derive(
            "hybrid discovery", chain + "; N_K = floor(B / (1 - f + f/s_gen)); 1 - (1 - p_K)^N_K, independent attempts",
            discovery, sizes + [context, share, p_k, budget]),
    }


def break_even(setting: TradeoffSetting) -> float:
    """The least hybrid success rate at which its predicted discovery matches the baseline's,
    ``1 - (1 - p_M)^(N_M / N_K)`` with the attempt counts the setting predicts (ftip-00L3)."""
    s_gen = _speed(setting.kappa, setting.sigma, setting.ell, setting.memory, setting.context)
    n_m, n_k = _attempts(setting.f, s_gen, setting.budget)
    return throughput.break_even_success(setting.p_m, n_m, n_k)


@dataclass(frozen=True)
class World:
    """What holds in a simulated study: the actual context, generation share, hybrid success rate,
    and the correlation ``rho`` of attempts on one problem (0 = independent)."""

    name: str
    context: int
    f: float
    p_k: float
    rho: float = 0.0

    def __post_init__(self) -> None:
        if not (0 <= self.f <= 1 and 0 <= self.p_k <= 1 and 0 <= self.rho < 1):
            raise ValueError(f"world {self.name!r}: f and p_k must lie in [0, 1] and rho in [0, 1)")

    @classmethod
    def as_assumed(cls, setting: TradeoffSetting, name: str = "as assumed") -> "World":
        """The world in which every assumption of ``setting`` holds."""
        return cls(name, setting.context, setting.f, setting.p_k, 0.0)


def simulate_study(setting: TradeoffSetting, world: World, *, budgets: int = 1000, seed: int = 0) -> dict[str, object]:
    """Simulated matched measurements of the four quantities in ``world``.

    Costs follow the world's inputs exactly (so ``f`` and ``s_gen`` are read off without noise);
    each of ``budgets`` independent budgets runs ``N_K`` hybrid attempts whose successes are
    Bernoulli(``p_k``), or, with ``rho > 0``, Bernoulli(``theta``) given a per-budget
    ``theta ~ Beta`` of mean ``p_k`` and pairwise correlation ``rho``. Returns, per quantity, the
    data its declared test takes: the share, the speed factor, the per-budget success fractions,
    and ``(budgets with a success, budgets)``.
    """
    if isinstance(budgets, bool) or not isinstance(budgets, int) or budgets < 2:
        raise ValueError(f"budgets={budgets!r} must be an int >= 2")
    s_gen = _speed(setting.kappa, setting.sigma, setting.ell, setting.memory, world.context)
    n_k = _attempts(world.f, s_gen, setting.budget)[1]
    if n_k < 1:
        raise ValueError(f"world {world.name!r}: the budget buys no hybrid attempt")
    rng = np.random.Generator(np.random.PCG64(seed))
    if world.rho == 0 or world.p_k in (0, 1):
        theta = np.full(budgets, world.p_k)
    else:
        scale = (1 - world.rho) / world.rho
        theta = rng.beta(world.p_k * scale, (1 - world.p_k) * scale, size=budgets)
    hits = rng.random((budgets, n_k)) < theta[:, None]
    return {
        "generation share f": world.f,
        "speed factor s_gen": s_gen,
        "hybrid success rate p_K": hits.mean(axis=1),
        "hybrid discovery": (int(hits.any(axis=1).sum()), budgets),
    }


def check_world(setting: TradeoffSetting, world: World, tests: Mapping[str, object] = DEFAULT_TESTS, *,
                budgets: int = 1000, seed: int = 0) -> dict[str, PredictionCheck]:
    """Each prediction of :func:`predictions` against the simulated measurements of ``world``."""
    missing = sorted(set(QUANTITIES) - set(tests))
    if missing:
        raise ValueError(f"declare a test for every quantity; missing: {missing}")
    preds = predictions(setting)
    data = simulate_study(setting, world, budgets=budgets, seed=seed)
    return {q: preds[q].check(tests[q], data[q]) for q in QUANTITIES}


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
