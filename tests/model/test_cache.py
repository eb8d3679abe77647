"""KVCache get/update/reset contract and HybridCache (and that the model really reads its cache)."""
import pytest
import torch

from ftipbook.model import HybridCache, KVCache


def _kv(t, b=2, h=3, d=4):
    return torch.randn(b, h, t, d), torch.randn(b, h, t, d)


@pytest.mark.parametrize("max_len", [None, 10])
def test_update_appends_and_get_returns_everything(max_len):
    cache = KVCache(2, 3, 4, max_len=max_len)
    k1, v1 = _kv(4)
    k2, v2 = _kv(1)
    cache.update(k1, v1)
    k, v = cache.update(k2, v2)
    assert cache.length == 5
    torch.testing.assert_close(k, torch.cat([k1, k2], dim=2))
    torch.testing.assert_close(v, torch.cat([v1, v2], dim=2))
    assert all(torch.equal(a, b) for a, b in zip(cache.get(), (k, v)))
    assert cache.nbytes() == 2 * 2 * 3 * 5 * 4 * 4
    cache.reset()
    assert cache.length == 0 and cache.get()[0].shape[2] == 0


def test_preallocated_cache_refuses_overflow_and_never_reallocates():
    cache = KVCache(2, 3, 4, max_len=6)
    buffer = cache.k.data_ptr()
    for _ in range(6):
        cache.update(*_kv(1))
    assert cache.k.data_ptr() == buffer and cache.allocated_nbytes() == 2 * 2 * 3 * 6 * 4 * 4
    with pytest.raises(ValueError, match=r"KVCache is full: 6 \+ 1 positions exceed max_len=6"):
        cache.update(*_kv(1))


def test_growing_cache_doubles_capacity():
    cache = KVCache(2, 3, 4)
    capacities = []
    for _ in range(9):
        cache.update(*_kv(1))
        capacities.append(cache.capacity)
    assert capacities == [1, 2, 4, 4, 8, 8, 8, 8, 16]


def test_update_refuses_wrong_shapes():
    cache = KVCache(2, 3, 4)
    with pytest.raises(ValueError, match="KVCache holds"):
        cache.update(torch.randn(2, 2, 1, 4), torch.randn(2, 2, 1, 4))


def test_hybrid_cache_sums_layers_and_resets(make_model):
    model = make_model(n_kv_heads=2)
    cache = model.new_cache(3)
    assert isinstance(cache, HybridCache) and len(cache) == 2
    with torch.no_grad():
        model(torch.randint(0, 61, (3, 5)), cache=cache)
    assert cache.length == 5 and all(layer.length == 5 for layer in cache.layers)
    assert cache.nbytes() == sum(layer.nbytes() for layer in cache.layers) == 2 * 3 * 2 * 2 * 5 * 8 * 4
    cache.reset()
    assert cache.length == 0 and cache.nbytes() == 0


def test_model_reads_its_cache(make_model):
    """Corrupting the cached keys must change the next-step logits (a cache that is never read would not)."""
    model = make_model()
    x = torch.randint(0, 61, (1, 6))
    with torch.no_grad():
        cache = model.new_cache(1)
        model(x[:, :5], cache=cache)
        snapshot = [layer.k.clone() for layer in cache.layers]
        honest = model(x[:, 5:], cache=cache)
        cache.reset()
        model(x[:, :5], cache=cache)
        cache.layers[0].k[:, :, :5] = torch.randn_like(snapshot[0][:, :, :5])
        corrupted = model(x[:, 5:], cache=cache)
    assert not torch.allclose(honest, corrupted)


def test_cache_follows_model_dtype(make_model):
    model = make_model(dtype=torch.bfloat16)
    cache = model.new_cache(1, max_len=4)
    assert cache.layers[0].k.dtype == torch.bfloat16
