"""The ftip-00LG harness: predictions from state sizes, and their checks against simulated worlds."""
import dataclasses

import pytest

from ftipbook.compare import cache_model, throughput
from ftipbook.compare.tradeoff import (DEFAULT_TESTS, QUANTITIES, TradeoffSetting, World, break_even, check_world,
                                       concurrency, predictions, simulate_study)
from ftipbook.model import ModelConfig

CFG = ModelConfig(vocab_size=256, d_model=64, n_layers=4, n_heads=4, layer_pattern="KKKM", mla_nope=True, kv_lora_rank=32)
SETTING = TradeoffSetting.from_config(CFG, memory=64 * 2**20, context=4096, f=0.8, p_m=0.1, p_k=0.08, budget=10)


def test_concurrency_follows_the_cache_model():
    full, hybrid = cache_model.stylized_state_memory(1, 1, 4096, SETTING.kappa, SETTING.sigma)
    assert concurrency(SETTING.kappa, SETTING.sigma, 1, SETTING.memory, 4096) == (SETTING.memory // full, SETTING.memory // hybrid)
    # below the crossover sigma / kappa the hybrid fits fewer rollouts
    short = int(cache_model.crossover_length(SETTING.kappa, SETTING.sigma)) // 2
    m, k = concurrency(SETTING.kappa, SETTING.sigma, 1, SETTING.memory, short)
    assert k < m
    with pytest.raises(ValueError, match="holds no rollout"):
        concurrency(SETTING.kappa, SETTING.sigma, 1, 100, 4096)


def test_predictions_chain_the_two_models():
    preds = predictions(SETTING)
    assert tuple(preds) == QUANTITIES
    s = preds["speed factor s_gen"].value
    m, k = concurrency(SETTING.kappa, SETTING.sigma, 1, SETTING.memory, 4096)
    assert s == k / m
    n_k = throughput.attempts_under_budget(10, throughput.attempt_cost(1.0, 0.8, s))
    assert preds["hybrid discovery"].value == pytest.approx(1 - 0.92**n_k, abs=1e-12)
    assert preds["hybrid discovery"].unmeasured == ("context", "f", "p_K")
    assert 0 < break_even(SETTING) < SETTING.p_k  # the assumed rate clears the break-even threshold


def test_each_broken_mechanism_has_its_own_disagreement_pattern():
    base = World.as_assumed(SETTING)
    worlds = {
        "as assumed": (base, set()),
        "short contexts": (dataclasses.replace(base, context=32), {"speed factor s_gen", "hybrid discovery"}),
        "expensive verification": (dataclasses.replace(base, f=0.2), {"generation share f", "hybrid discovery"}),
        "lower success": (dataclasses.replace(base, p_k=0.04), {"hybrid success rate p_K", "hybrid discovery"}),
        "correlated attempts": (dataclasses.replace(base, rho=0.2), {"hybrid discovery"}),
    }
    patterns = set()
    for name, (world, expected) in worlds.items():
        checks = check_world(SETTING, world, budgets=1000, seed=1)
        assert {q for q, c in checks.items() if not c.agrees} == expected, name
        patterns.add(frozenset(expected))
    assert len(patterns) == len(worlds)  # the pattern identifies the failing assumption


def test_simulation_is_seeded_and_validated():
    world = World.as_assumed(SETTING)
    a = simulate_study(SETTING, world, budgets=50, seed=3)
    b = simulate_study(SETTING, world, budgets=50, seed=3)
    assert a["hybrid discovery"] == b["hybrid discovery"]
    with pytest.raises(ValueError):
        simulate_study(SETTING, world, budgets=1)
    with pytest.raises(ValueError):
        World("bad", 10, 1.5, 0.1)
    with pytest.raises(ValueError):
        TradeoffSetting(128, 6400, 1, 64 * 2**20, 4096, 0.8, 0.1, 0.08, budget=0.5)
    with pytest.raises(ValueError, match="declare a test"):
        check_world(SETTING, world, {k: v for k, v in DEFAULT_TESTS.items() if k != "hybrid discovery"})
