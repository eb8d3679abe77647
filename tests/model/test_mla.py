"""Multi-head latent attention (ftip-000V, ftip-00KV, ftip-00KY): explicit == absorbed, cache, masks."""
from __future__ import annotations

import pytest
import torch

from ftipbook.model.mla import LatentKVCache, MultiHeadLatentAttention, mla_attention_mask

F64 = torch.float64

#: (name, from_dims overrides): NoPE (Kimi Linear), decoupled RoPE, low-rank query + RoPE + d_v != d_n
VARIANTS = [
    ("nope", dict(rope_head_dim=0)),
    ("rope", dict(rope_head_dim=4)),
    ("rope_qlora", dict(rope_head_dim=6, q_lora_rank=10, v_head_dim=5)),
]


def _layer(seed=0, dtype=F64, **kw):
    torch.manual_seed(seed)
    dims = dict(d_model=16, n_heads=3, head_dim=4, kv_lora_rank=6)
    dims.update(kw)
    return MultiHeadLatentAttention.from_dims(**dims).to(dtype)


def _run(layer, x, *, absorb, positions=None, seg_ids=None, cache=None):
    layer.absorb = absorb
    return layer(x, positions=positions, seg_ids=seg_ids, cache=cache)


@pytest.mark.parametrize("name,kw", VARIANTS)
def test_explicit_equals_absorbed(name, kw):
    layer = _layer(**kw)
    x = torch.randn(2, 13, 16, dtype=F64)
    pos = torch.arange(13).expand(2, 13)
    a = _run(layer, x, absorb=False, positions=pos)
    b = _run(layer, x, absorb=True, positions=pos)
    torch.testing.assert_close(b, a, rtol=0, atol=1e-12)
    # and the gradients with respect to every weight
    ga = torch.autograd.grad(_run(layer, x, absorb=False, positions=pos).square().sum(), list(layer.parameters()))
    gb = torch.autograd.grad(_run(layer, x, absorb=True, positions=pos).square().sum(), list(layer.parameters()))
    for u, w in zip(ga, gb):
        torch.testing.assert_close(w, u, rtol=0, atol=1e-11)


@pytest.mark.parametrize("absorb", [False, True])
@pytest.mark.parametrize("name,kw", VARIANTS)
def test_cached_decoding_equals_full_forward(name, kw, absorb):
    layer = _layer(**kw)
    x = torch.randn(2, 11, 16, dtype=F64)
    pos = torch.arange(11).expand(2, 11)
    full = _run(layer, x, absorb=absorb, positions=pos)
    with torch.no_grad():
        cache = layer.new_cache(2, x.device, x.dtype)
        steps = [_run(layer, x[:, i : i + 1], absorb=absorb, positions=pos[:, i : i + 1], cache=cache) for i in range(11)]
        torch.testing.assert_close(torch.cat(steps, 1), full, rtol=0, atol=1e-12)
        cache.reset()
        assert cache.length == 0
        pre = _run(layer, x[:, :6], absorb=absorb, positions=pos[:, :6], cache=cache)
        rest = [_run(layer, x[:, i : i + 1], absorb=not absorb, cache=cache) for i in range(6, 11)]  # default positions
        torch.testing.assert_close(torch.cat([pre, *rest], 1), full, rtol=0, atol=1e-12)


@pytest.mark.parametrize("absorb", [False, True])
def test_causality(absorb):
    layer = _layer(rope_head_dim=4)
    x = torch.randn(1, 12, 16, dtype=F64)
    y = _run(layer, x, absorb=absorb)
    x2 = x.clone()
    x2[:, 7] += 1.0
    y2 = _run(layer, x2, absorb=absorb)
    torch.testing.assert_close(y2[:, :7], y[:, :7], rtol=0, atol=0)
    assert (y2[:, 7:] - y[:, 7:]).abs().amax(-1).min() > 1e-8


@pytest.mark.parametrize("absorb", [False, True])
@pytest.mark.parametrize("name,kw", VARIANTS[:2])
def test_packed_equals_separate(name, kw, absorb):
    layer = _layer(**kw)
    lengths = [[4, 7, 3], [9, 5]]
    docs = [[torch.randn(1, n, 16, dtype=F64) for n in row] for row in lengths]
    x = torch.cat([torch.cat(row, 1) for row in docs], 0)
    seg = torch.stack([torch.cat([torch.full((n,), i) for i, n in enumerate(row)]) for row in lengths])
    pos = torch.stack([torch.cat([torch.arange(n) for n in row]) for row in lengths])  # restart per document
    packed = _run(layer, x, absorb=absorb, positions=pos, seg_ids=seg)
    for r, row in enumerate(docs):
        start = 0
        for d in row:
            n = d.shape[1]
            alone = _run(layer, d, absorb=absorb, positions=torch.arange(n).view(1, n))
            torch.testing.assert_close(packed[r : r + 1, start : start + n], alone, rtol=0, atol=1e-12)
            start += n


def test_packed_decoding_across_calls_uses_cached_segment_ids():
    layer = _layer(rope_head_dim=4)
    a, b = torch.randn(1, 5, 16, dtype=F64), torch.randn(1, 4, 16, dtype=F64)
    with torch.no_grad():
        cache = layer.new_cache(1, None, F64)
        layer(a, positions=torch.arange(5).view(1, 5), seg_ids=torch.zeros(1, 5, dtype=torch.long), cache=cache)
        first = layer(b[:, :1], positions=torch.zeros(1, 1, dtype=torch.long), seg_ids=torch.ones(1, 1, dtype=torch.long), cache=cache)
        # later calls without seg_ids continue the last cached document
        rest = [layer(b[:, i : i + 1], positions=torch.tensor([[i]]), seg_ids=None, cache=cache) for i in range(1, 4)]
        alone = layer(b, positions=torch.arange(4).view(1, 4), seg_ids=None, cache=None)
    torch.testing.assert_close(torch.cat([first, *rest], 1), alone, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name,kw", VARIANTS)
def test_cache_holds_only_latent_and_rope_key(name, kw):
    layer = _layer(dtype=torch.float32, **kw)
    d_c, d_r = layer.kv_lora_rank, layer.rope_head_dim
    batch = 3
    with torch.no_grad():
        cache = layer.new_cache(batch, None, torch.float32)
        assert isinstance(cache, LatentKVCache) and cache.nbytes() == 0
        total = 0
        for t in (5, 1, 1, 7):
            layer(torch.randn(batch, t, 16), positions=torch.arange(total, total + t).expand(batch, t), seg_ids=None, cache=cache)
            total += t
            assert cache.nbytes() == (d_c + d_r) * 4 * total * batch
            assert cache.nbytes() == batch * total * layer.cache_bytes_per_token(torch.float32)
    assert cache.c_kv.shape == (batch, total, d_c) and cache.k_rope.shape == (batch, total, d_r)
    half = layer.new_cache(1, None, torch.bfloat16)
    assert layer.cache_bytes_per_token(torch.bfloat16) == (d_c + d_r) * 2 and half.c_kv.dtype == torch.bfloat16


def test_explicit_path_calls_sdpa(monkeypatch):
    from torch.nn import functional

    calls = []
    real = functional.scaled_dot_product_attention

    def spy(*args, **kwargs):
        calls.append(kwargs.get("scale"))
        return real(*args, **kwargs)

    monkeypatch.setattr(functional, "scaled_dot_product_attention", spy)
    layer = _layer(rope_head_dim=4)
    _run(layer, torch.randn(1, 3, 16, dtype=F64), absorb=False)
    assert calls == [pytest.approx((4 + 4) ** -0.5)]


def test_mask_is_causal_and_block_causal():
    seg = torch.tensor([[0, 0, 1, 1, 1]])
    m = mla_attention_mask(5, 5, seg_q=seg, seg_k=seg)
    expected = torch.tensor([
        [1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0],
        [0, 0, 1, 0, 0],
        [0, 0, 1, 1, 0],
        [0, 0, 1, 1, 1],
    ], dtype=torch.bool)
    assert torch.equal(m[0, 0], expected)
    assert torch.equal(mla_attention_mask(2, 5)[0, 0], torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=torch.bool))


def test_config_construction_and_accounting_hooks():
    from dataclasses import replace

    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    from ftipbook.model.config import ModelConfig

    base = ModelConfig(d_model=32, n_heads=4, layer_pattern="M", n_layers=1, kv_lora_rank=12, rope_head_dim=6)
    for cfg in (base, replace(base, mla_nope=True), replace(base, q_lora_rank=9, out_bias=True)):
        layer = MultiHeadLatentAttention(cfg, 0)
        d_r = 0 if cfg.mla_nope else 6
        assert (layer.head_dim, layer.kv_lora_rank, layer.rope_head_dim, layer.q_lora_rank) == (8, 12, d_r, cfg.q_lora_rank)
        assert layer.nope == cfg.mla_nope
        assert MultiHeadLatentAttention.param_count(cfg) == sum(p.numel() for p in layer.parameters())
        assert MultiHeadLatentAttention.cache_bytes(cfg, 10, torch.float32) == (12 + d_r) * 10 * 4
        for absorb in (False, True):
            layer.absorb = absorb
            with torch.no_grad():
                cache = layer.new_cache(1, None, torch.float32)
                layer(torch.randn(1, 6, 32), positions=torch.arange(6).view(1, 6), seg_ids=None, cache=cache)
                # the CPU flash SDPA kernel (chosen when q/k and v widths match) is invisible to
                # FlopCounterMode; the math backend decomposes into counted matmuls
                with sdpa_kernel(SDPBackend.MATH), FlopCounterMode(display=False) as counter:
                    layer(torch.randn(1, 1, 32), positions=torch.tensor([[6]]), seg_ids=None, cache=cache)
            expected = MultiHeadLatentAttention.flops_per_token(replace(cfg, mla_absorb=absorb) if hasattr(cfg, "mla_absorb") else _Absorb(cfg, absorb), 7, "decode")
            assert counter.get_total_flops() == expected, (cfg, absorb)


class _Absorb:
    """``cfg`` with an ``mla_absorb`` attribute (the configuration has no such field yet)."""

    def __init__(self, cfg, absorb: bool) -> None:
        self._cfg, self.mla_absorb = cfg, absorb

    def __getattr__(self, name):
        return getattr(self._cfg, name)


def test_argument_and_cache_errors():
    with pytest.raises(ValueError, match="rope_head_dim"):
        _layer(rope_head_dim=3)
    with pytest.raises(ValueError, match="kv_lora_rank"):
        _layer(kv_lora_rank=0)
    with pytest.raises(ValueError, match="q_lora_rank"):
        _layer(q_lora_rank=0)
    layer = _layer()
    x = torch.randn(1, 3, 16, dtype=F64)
    with pytest.raises(ValueError, match="x must be"):
        layer(torch.randn(1, 3, 8, dtype=F64), positions=None, seg_ids=None, cache=None)
    with pytest.raises(ValueError, match="positions"):
        layer(x, positions=torch.zeros(1, 2, dtype=torch.long), seg_ids=None, cache=None)
    with torch.no_grad():
        cache = layer.new_cache(1, None, F64, max_len=4)
        layer(x, positions=None, seg_ids=None, cache=cache)
        with pytest.raises(ValueError, match="seg_ids given"):
            layer(x[:, :1], positions=None, seg_ids=torch.zeros(1, 1, dtype=torch.long), cache=cache)
        with pytest.raises(ValueError, match="max_len"):
            layer(x, positions=None, seg_ids=None, cache=cache)
        with pytest.raises(ValueError, match="B="):
            layer(torch.randn(2, 1, 16, dtype=F64), positions=None, seg_ids=None, cache=cache)
