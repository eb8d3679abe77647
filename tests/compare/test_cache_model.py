"""Cache-ratio model (ftip-00KY): formulas, sizes from a config, and live caches of real models."""
from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ftipbook.compare import cache_model as C
from ftipbook.model import ModelConfig, build_model

HYBRID = ModelConfig(
    vocab_size=50, d_model=32, n_layers=8, n_heads=2, d_ff=64, max_seq_len=512, pos="none",
    layer_pattern="KKKM", mla_nope=True, kv_lora_rank=16,
)


def test_formulas_by_hand():
    m_mla, m_hyb = C.stylized_state_memory(ell=2, batch=3, length=10, kappa=64, sigma=3200)
    assert (m_mla, m_hyb) == (4 * 3 * 2 * 64 * 10, 3 * 2 * (64 * 10 + 3 * 3200))
    assert C.cache_ratio(10, 64, 3200) == m_hyb / m_mla
    assert C.crossover_length(64, 3200) == 50.0
    assert C.cache_ratio(50, 64, 3200) == 1.0  # equal memory exactly at T = sigma / kappa


@settings(max_examples=200, deadline=None)
@given(
    ell=st.integers(1, 8), batch=st.integers(1, 8), length=st.integers(1, 10**6),
    kappa=st.integers(1, 10**4), sigma=st.integers(1, 10**6),
)
def test_ratio_crossover_and_limit(ell, batch, length, kappa, sigma):
    m_mla, m_hyb = C.stylized_state_memory(ell, batch, length, kappa, sigma)
    ratio = C.cache_ratio(length, kappa, sigma)
    assert ratio == float(Fraction(m_hyb, m_mla))  # the closed form equals the quotient, b and l cancel
    assert (m_hyb < m_mla) == (length > C.crossover_length(kappa, sigma)) or length * kappa == sigma
    assert ratio > C.RATIO_LIMIT
    assert C.cache_ratio(length + 1, kappa, sigma) < ratio  # decreasing towards 1/4


def test_limit_is_a_75_percent_saving():
    assert abs(C.cache_ratio(10**12, 64, 3200) - C.RATIO_LIMIT) < 1e-9
    assert round(100 * (1 - C.RATIO_LIMIT)) == 75


def test_state_sizes_from_config():
    sizes = C.state_sizes(HYBRID)
    h, d_c = HYBRID.n_heads, HYBRID.kv_lora_rank
    kd = HYBRID.d_head
    assert sizes.kappa == d_c * 4  # NoPE MLA caches only the latent, float32
    assert sizes.sigma == h * kd * kd * 4 + 3 * (HYBRID.conv_kernel - 1) * h * kd * 4
    assert (sizes.ell, sizes.growing) == (2, "M")
    # with decoupled RoPE the MLA cache also holds the rotary key
    assert C.state_sizes(replace(HYBRID, mla_nope=False, pos="rope")).kappa == (d_c + HYBRID.rope_head_dim) * 4
    # bfloat16 halves kappa and the conv buffers but not the float32 recurrent state
    half = C.state_sizes(HYBRID, torch.bfloat16)
    assert half.kappa == d_c * 2 and half.sigma == h * kd * kd * 4 + 3 * 3 * h * kd * 2
    # softmax attention as the growing layer: kappa = 2 G d_h bytes
    assert C.state_sizes(replace(HYBRID, layer_pattern="AKKK")).kappa == 2 * h * kd * 4


def test_full_reference_keeps_widths():
    full = C.full_reference_config(HYBRID)
    assert full.layer_kinds == "M" * 8 and full.kv_lora_rank == HYBRID.kv_lora_rank


@pytest.mark.parametrize("pattern, kv", [("KKKM", "M"), ("KMKK", "M"), ("KKKA", "A")])
def test_measured_caches_equal_the_formula_at_every_length(pattern, kv):
    cfg = replace(HYBRID, layer_pattern=pattern)
    hybrid = build_model(cfg, seed=0).eval()
    full = build_model(C.full_reference_config(cfg), seed=1).eval()
    sizes = C.state_sizes(cfg)
    lengths = [1, 2, 7, 33, 64, 129] if pattern == "KKKM" else [1, 16, 70]
    for m in C.measure_cache_ratio(hybrid, full, lengths, batch=2):
        assert m.matches, m
        assert m.ratio == sizes.ratio(m.length)
        assert (m.hybrid_bytes < m.full_bytes) == (m.length > sizes.crossover)


def test_measure_state_bytes_counts_live_tensors():
    model = build_model(replace(HYBRID, n_layers=4), seed=0).eval()
    sizes = C.state_sizes(replace(HYBRID, n_layers=4))
    assert C.measure_state_bytes(model, 5, batch=3) == 3 * (sizes.kappa * 5 + 3 * sizes.sigma)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: C.stylized_state_memory(0, 1, 1, 1.0, 1.0), ValueError),
        (lambda: C.stylized_state_memory(1, 1, 1, -1.0, 1.0), ValueError),
        (lambda: C.cache_ratio(0, 1.0, 1.0), ValueError),
        (lambda: C.cache_ratio(2.5, 1.0, 1.0), ValueError),
        (lambda: C.crossover_length(1.0, float("inf")), ValueError),
        (lambda: C.crossover_length("1", 1.0), TypeError),
        (lambda: C.state_sizes(replace(HYBRID, layer_pattern="KKM", n_layers=6)), ValueError),
        (lambda: C.state_sizes(replace(HYBRID, layer_pattern="KKKK")), ValueError),
        (lambda: C.state_sizes(replace(HYBRID, layer_pattern="KKAM")), ValueError),
        (lambda: C.state_sizes(replace(HYBRID, n_loops=2)), ValueError),
        (lambda: C.state_sizes("KKKM"), TypeError),
    ],
)
def test_bad_inputs_are_refused(call, error):
    with pytest.raises(error):
        call()


def test_mismatched_reference_is_refused():
    hybrid = build_model(replace(HYBRID, n_layers=4), seed=0)
    wrong = build_model(replace(HYBRID, n_layers=4, layer_pattern="M", kv_lora_rank=8), seed=0)
    with pytest.raises(ValueError, match="full_reference_config"):
        C.measure_cache_ratio(hybrid, wrong, [4])
