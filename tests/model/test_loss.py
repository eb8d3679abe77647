"""Chunked linear + cross-entropy equals the unchunked loss, with the same gradients (ftip-0012)."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn import functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from ftipbook.model import linear_cross_entropy
from tests.model.conftest import tiny_config


def reference(h, weight, targets, bias=None, ignore_index=-100):
    return F.cross_entropy(F.linear(h, weight, bias), targets, ignore_index=ignore_index)


def loss_and_grads(fn, inputs, *args, **kwargs):
    loss = fn(*inputs, *args, **kwargs)
    grads = torch.autograd.grad(3.0 * loss, [t for t in inputs if t is not None])
    return loss.detach(), grads


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 40), v=st.integers(2, 30), chunk=st.integers(1, 50), bias=st.booleans(), seed=st.integers(0, 99))
def test_equals_unchunked_loss_and_gradients_in_float64(n, v, chunk, bias, seed):
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(n, 6, dtype=torch.float64, generator=g, requires_grad=True)
    w = torch.randn(v, 6, dtype=torch.float64, generator=g, requires_grad=True)
    b = torch.randn(v, dtype=torch.float64, generator=g, requires_grad=True) if bias else None
    targets = torch.randint(0, v, (n,), generator=g)
    targets[torch.rand(n, generator=g) < 0.3] = -100
    targets[0] = 0  # at least one kept row
    ref_loss, ref_grads = loss_and_grads(lambda h, w, b: reference(h, w, targets, b), (h, w, b))
    loss, grads = loss_and_grads(lambda h, w, b: linear_cross_entropy(h, w, targets, b, chunk_rows=chunk), (h, w, b))
    assert loss.dtype == torch.float64
    torch.testing.assert_close(loss, ref_loss, rtol=0, atol=1e-12)
    for got, want in zip(grads, ref_grads):
        torch.testing.assert_close(got, want, rtol=0, atol=1e-12)


def test_float32_matches_and_custom_ignore_index():
    g = torch.Generator().manual_seed(1)
    h = torch.randn(300, 32, generator=g, requires_grad=True)
    w = torch.randn(500, 32, generator=g, requires_grad=True)
    targets = torch.randint(0, 500, (300,), generator=g)
    targets[::7] = 7  # 7 is the ignored id here
    ref_loss, ref_grads = loss_and_grads(lambda h, w: reference(h, w, targets, ignore_index=7), (h, w))
    loss, grads = loss_and_grads(lambda h, w: linear_cross_entropy(h, w, targets, ignore_index=7, chunk_rows=64), (h, w))
    torch.testing.assert_close(loss, ref_loss, rtol=1e-6, atol=1e-6)
    for got, want in zip(grads, ref_grads):
        torch.testing.assert_close(got, want, rtol=0, atol=1e-6)


def test_no_tensor_of_logits_size_is_ever_created():
    n, v = 256, 1000
    h = torch.randn(n, 16, requires_grad=True)
    w = torch.randn(v, 16, requires_grad=True)
    targets = torch.randint(0, v, (n,))

    class LargestOutput(TorchDispatchMode):
        largest = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in out if isinstance(out, (tuple, list)) else (out,):
                if isinstance(t, torch.Tensor):
                    self.largest = max(self.largest, t.numel())
            return out

    with LargestOutput() as chunked:
        linear_cross_entropy(h, w, targets, chunk_rows=32).backward()
    with LargestOutput() as full:
        reference(h, w, targets).backward()
    assert full.largest == n * v
    assert chunked.largest == 32 * v


def test_no_grad_gives_the_same_loss():
    h, w = torch.randn(20, 8), torch.randn(11, 8)
    targets = torch.randint(0, 11, (20,))
    with torch.no_grad():
        torch.testing.assert_close(linear_cross_entropy(h, w, targets, chunk_rows=3), reference(h, w, targets))


def test_bfloat16_loss_is_float32_and_close():
    g = torch.Generator().manual_seed(2)
    h, w = torch.randn(64, 16, generator=g), torch.randn(40, 16, generator=g)
    targets = torch.randint(0, 40, (64,), generator=g)
    hb, wb = h.bfloat16().requires_grad_(), w.bfloat16().requires_grad_()
    loss = linear_cross_entropy(hb, wb, targets, chunk_rows=16)
    loss.backward()
    assert loss.dtype == torch.float32 and hb.grad.dtype == torch.bfloat16 and wb.grad.dtype == torch.bfloat16
    # the logits are rounded to bfloat16 by the product, then upcast, as transformers does for its loss
    torch.testing.assert_close(loss, F.cross_entropy(F.linear(hb, wb).float(), targets), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "overrides",
    [dict(), dict(tie_embeddings=True, unembed_bias=True), dict(ffn="moe", n_experts=4, top_k=2), dict(layer_pattern="KA")],
    ids=["plain", "tied-bias", "moe", "hybrid-KA"],
)
def test_model_loss_equals_cross_entropy_of_logits(overrides):
    from ftipbook.model import build_model

    cfg = tiny_config(**overrides)
    tokens = torch.randint(0, cfg.vocab_size, (2, 12), generator=torch.Generator().manual_seed(0))
    targets = torch.roll(tokens, -1, dims=1)
    targets[:, -1] = -100
    model = build_model(cfg, seed=0, dtype=torch.float64)
    params = list(model.parameters())
    want = F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten())
    want_grads = torch.autograd.grad(want, params)
    got = model.loss(tokens, targets)
    got_grads = torch.autograd.grad(got, params)
    torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
    for a, b in zip(got_grads, want_grads):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


def test_bad_targets_are_refused():
    from ftipbook.model import build_model

    model = build_model(tiny_config())
    tokens = torch.zeros(1, 4, dtype=torch.long)
    with pytest.raises(ValueError, match="shape of tokens"):
        model.loss(tokens, torch.zeros(1, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="target 61 at row 2 is outside"):
        model.loss(tokens, torch.tensor([[0, 1, 61, 2]]))
    with pytest.raises(ValueError, match="every target equals ignore_index"):
        model.loss(tokens, torch.full((1, 4), -100))
    with pytest.raises(ValueError, match="LongTensor"):
        linear_cross_entropy(torch.randn(4, 32), model.unembed.weight, torch.zeros(4))
    with pytest.raises(ValueError, match="chunk_rows"):
        linear_cross_entropy(torch.randn(4, 32), model.unembed.weight, torch.zeros(4, dtype=torch.long), chunk_rows=0)
