"""Systems variants: reference kernel, low-precision and windowed caches, deviation classes (ftip-00JK, 00JZ)."""
import math

import pytest
import torch
from torch.nn import functional as F

from ftipbook.compare.systems_variants import (
    APPROXIMATION,
    EXACT,
    NUMERIC,
    LowPrecisionKVCache,
    ReferenceAttention,
    WindowKVCache,
    classify_deviation,
    decode_logits,
    variant_cache,
)
from ftipbook.model import ModelConfig, build_model


def model(**kw):
    cfg = ModelConfig(**{**dict(vocab_size=32, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=64,
                                max_seq_len=32, pos="rope"), **kw})
    return build_model(cfg, seed=0).eval()


def by_hand(q, k, v, keep):
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    s = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(q.shape[-1])
    s = s.masked_fill(~keep, -math.inf)
    return (torch.softmax(s, -1) @ v.double()).float()


def test_reference_attention_computes_the_formula_for_causal_bool_and_gqa_calls():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, h, 5, 8, generator=g) for h in (4, 2, 2))
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    band = causal & ~torch.ones(5, 5, dtype=torch.bool).tril(-3)
    with ReferenceAttention() as ref:
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        b = F.scaled_dot_product_attention(q, k, v, attn_mask=band, enable_gqa=True)
    assert ref.calls == 2
    assert torch.allclose(a, by_hand(q, k, v, causal), atol=1e-6)
    assert torch.allclose(b, by_hand(q, k, v, band), atol=1e-6)
    with pytest.raises(ValueError, match="dropout"), ReferenceAttention():
        F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, enable_gqa=True)


def test_reference_attention_leaves_the_model_function_within_rounding():
    m = model()
    x = torch.randint(0, 32, (2, 12), generator=torch.Generator().manual_seed(1))
    with ReferenceAttention() as ref:
        ref_logits = m(x)
    assert ref.calls == 2
    assert (ref_logits - m(x)).abs().max() < 1e-5


def test_caches_decode_like_the_full_forward_and_variants_deviate_as_declared():
    m = model()
    x = torch.randint(0, 32, (2, 20), generator=torch.Generator().manual_seed(2))
    full = m(x)
    plain = decode_logits(m, x, variant_cache(m, 2))
    assert (plain - full).abs().max() < 1e-5
    assert torch.equal(decode_logits(m, x, variant_cache(m, 2, max_len=20)), plain)
    assert torch.equal(decode_logits(m, x, variant_cache(m, 2, window=20)), plain)  # window never truncates
    low = variant_cache(m, 2, storage_dtype=torch.bfloat16)
    bf = decode_logits(m, x, low)
    assert 0 < (bf - plain).abs().max() < 0.1
    assert low.nbytes() * 2 == variant_cache_bytes(m, x)
    win = decode_logits(m, x, variant_cache(m, 2, window=4))
    assert torch.equal(win[:, :4], plain[:, :4]) and (win[:, 4:] - plain[:, 4:]).abs().max() > 1e-3


def variant_cache_bytes(m, x):
    cache = variant_cache(m, x.shape[0])
    decode_logits(m, x, cache)
    return cache.nbytes()


def test_window_cache_keeps_the_last_positions():
    c = WindowKVCache(1, 1, 2, window=3)
    for t in range(5):
        k = torch.full((1, 1, 1, 2), float(t))
        keys, _ = c.update(k, k)
    assert keys[0, 0, :, 0].tolist() == [2.0, 3.0, 4.0] and c.nbytes() == 2 * 3 * 2 * 4
    assert "last 3" in c.policy
    with pytest.raises(ValueError, match="one position per update"):
        c.update(torch.zeros(1, 1, 2, 2), torch.zeros(1, 1, 2, 2))
    with pytest.raises(ValueError, match="window"):
        WindowKVCache(1, 1, 2, window=0)


def test_low_precision_cache_rounds_on_write_and_reads_in_compute_dtype():
    c = LowPrecisionKVCache(1, 1, 1, storage_dtype=torch.bfloat16, compute_dtype=torch.float32)
    k, _ = c.update(torch.full((1, 1, 1, 1), 1 + 2 ** -10), torch.zeros(1, 1, 1, 1))
    assert k.dtype == torch.float32 and k.item() == 1.0 and c.nbytes() == 4
    assert "bfloat16" in c.policy
    with pytest.raises(TypeError, match="storage_dtype"):
        LowPrecisionKVCache(1, 1, 1, storage_dtype=torch.int8, compute_dtype=torch.float32)


def test_variant_cache_and_decode_refuse_bad_input():
    m = model()
    with pytest.raises(ValueError, match="not both"):
        variant_cache(m, 1, storage_dtype=torch.bfloat16, window=2)
    with pytest.raises(ValueError, match="batch"):
        variant_cache(m, 0)
    with pytest.raises(ValueError, match="attention layers"):
        variant_cache(model(layer_pattern="K", pos="none"), 1)
    with pytest.raises(TypeError, match="DecoderLM"):
        variant_cache(torch.nn.Linear(2, 2), 1)
    with pytest.raises(ValueError, match=r"\[B, T\]"):
        decode_logits(m, torch.zeros(3, dtype=torch.long), variant_cache(m, 1))
    cache = variant_cache(m, 1)
    decode_logits(m, torch.zeros(1, 2, dtype=torch.long), cache)
    with pytest.raises(ValueError, match="fresh cache"):
        decode_logits(m, torch.zeros(1, 2, dtype=torch.long), cache)


def test_classify_deviation():
    assert classify_deviation(0.0, 0.5) == EXACT
    assert classify_deviation(1e-9, 0.5) == NUMERIC
    assert classify_deviation(0.5, 0.5) == NUMERIC
    assert classify_deviation(0.5000001, 0.5) == APPROXIMATION
    assert classify_deviation(math.inf, 0.5) == APPROXIMATION
    for bad in (dict(max_abs_diff=-1.0, tolerance=0.5), dict(max_abs_diff=0.0, tolerance=0.0),
                dict(max_abs_diff=float("nan"), tolerance=0.5), dict(max_abs_diff=0.0, tolerance=math.inf),
                dict(max_abs_diff=True, tolerance=0.5)):
        with pytest.raises(ValueError):
            classify_deviation(**bad)
