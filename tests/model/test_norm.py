"""LayerNorm / RMSNorm parity with torch.nn, residual shape rule, placement formulas."""
import pytest
import torch
from torch import nn

from ftipbook.model import LayerNorm, Placement, Residual, RMSNorm


@pytest.mark.parametrize("eps", [1e-5, 1e-2])
def test_layernorm_matches_torch(eps):
    ours, ref = LayerNorm(16, eps), nn.LayerNorm(16, eps=eps)
    with torch.no_grad():
        w, b = torch.randn(16), torch.randn(16)
        ours.weight.copy_(w), ref.weight.copy_(w), ours.bias.copy_(b), ref.bias.copy_(b)
    z = torch.randn(3, 7, 16) * 4 + 2
    torch.testing.assert_close(ours(z), ref(z), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("eps", [1e-6, 1e-2])
def test_rmsnorm_matches_torch(eps):
    ours, ref = RMSNorm(16, eps), nn.RMSNorm(16, eps=eps)
    w = torch.randn(16)
    with torch.no_grad():
        ours.weight.copy_(w), ref.weight.copy_(w)
    z = torch.randn(3, 7, 16)
    torch.testing.assert_close(ours(z), ref(z), rtol=1e-5, atol=1e-5)


def test_norms_follow_their_formulas():
    z = torch.randn(5, 16, dtype=torch.float64) * 3 + 1
    ln, rms = LayerNorm(16, 1e-3).double(), RMSNorm(16, 1e-3).double()
    with torch.no_grad():
        for p in (ln.weight, ln.bias, rms.weight):
            p.normal_()
    mu, var = z.mean(-1, keepdim=True), z.var(-1, unbiased=False, keepdim=True)
    torch.testing.assert_close(ln(z), ln.weight * (z - mu) / torch.sqrt(var + 1e-3) + ln.bias)
    torch.testing.assert_close(rms(z), rms.weight * z / torch.sqrt(z.pow(2).mean(-1, keepdim=True) + 1e-3))


def test_norms_are_total_at_constant_and_zero_vectors():
    assert torch.isfinite(LayerNorm(8, 1e-5)(torch.full((8,), 3.0))).all()
    assert torch.equal(RMSNorm(8, 1e-5)(torch.zeros(8)), torch.zeros(8))


def test_rmsnorm_does_not_subtract_mean_but_layernorm_does():
    z, c = torch.randn(8), 5.0
    ln, rms = LayerNorm(8, 1e-5), RMSNorm(8, 1e-5)
    torch.testing.assert_close(ln(z + c), ln(z), rtol=1e-4, atol=1e-4)
    assert not torch.allclose(rms(z + c), rms(z), atol=1e-3)


def test_bf16_rmsnorm_rounds_like_transformers():
    """Normalize in float32, cast to bfloat16, then scale (the LlamaRMSNorm order)."""
    norm = RMSNorm(8, 1e-6).to(torch.bfloat16)
    with torch.no_grad():
        norm.weight.normal_()
    z = torch.randn(4, 8).to(torch.bfloat16)
    x = z.float()
    expected = norm.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)).to(torch.bfloat16)
    assert torch.equal(norm(z), expected)


def test_bf16_norms_keep_dtype():
    z = torch.randn(4, 8, dtype=torch.bfloat16)
    assert LayerNorm(8, 1e-5).to(torch.bfloat16)(z).dtype == torch.bfloat16
    assert RMSNorm(8, 1e-5).to(torch.bfloat16)(z).dtype == torch.bfloat16


def test_residual_refuses_shape_change():
    res = Residual(nn.Linear(8, 4))
    with pytest.raises(ValueError, match=r"X has \(2, 8\), F\(X\) from Linear has \(2, 4\)"):
        res(torch.randn(2, 8))


def test_residual_of_zero_sublayer_is_identity_and_jacobian_is_i_plus_jf():
    zero = nn.Linear(4, 4)
    nn.init.zeros_(zero.weight), nn.init.zeros_(zero.bias)
    x = torch.randn(3, 4)
    assert torch.equal(Residual(zero)(x), x)
    f = nn.Linear(4, 4)
    jac = torch.autograd.functional.jacobian(Residual(f), torch.randn(4))
    torch.testing.assert_close(jac, torch.eye(4) + f.weight.detach())


def test_pre_and_post_placement_formulas():
    f, norm = nn.Linear(8, 8), RMSNorm(8, 1e-5)
    x = torch.randn(5, 8)
    pre, post = Residual(f, norm, Placement.PRE), Residual(f, norm, "post")
    torch.testing.assert_close(pre(x), x + f(norm(x)))
    torch.testing.assert_close(post(x), norm(x + f(x)))
    assert not torch.allclose(pre(x), post(x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("need", ["both", "input", "weight"])
def test_rmsnorm_training_path_equals_torch_rms_norm(dtype, need):
    """Under autograd on the CPU, RMSNorm runs its closed-form backward: same outputs bit for bit, same gradients."""
    g = torch.Generator().manual_seed(0)
    norm = RMSNorm(24, 1e-5).to(dtype)
    with torch.no_grad():
        norm.weight.copy_(torch.randn(24, generator=g, dtype=dtype))
    norm.weight.requires_grad_(need != "input")
    z = (torch.randn(3, 5, 24, generator=g, dtype=dtype) * 3).requires_grad_(need != "weight")
    upstream = torch.randn(3, 5, 24, generator=g, dtype=dtype)
    ref_w = norm.weight.detach().clone().requires_grad_(norm.weight.requires_grad)
    ref_z = z.detach().clone().requires_grad_(z.requires_grad)
    out = norm(z)
    ref = nn.functional.rms_norm(ref_z, (24,), ref_w, 1e-5)
    assert torch.equal(out, ref)
    inputs = [t for t in (z, norm.weight) if t.requires_grad]
    ref_inputs = [t for t in (ref_z, ref_w) if t.requires_grad]
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    for got, want in zip(torch.autograd.grad(out, inputs, upstream), torch.autograd.grad(ref, ref_inputs, upstream)):
        torch.testing.assert_close(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape", [(1, 1, 256), (3, 17, 64), (2, 5, 7, 33)])
def test_rmsnorm_inference_path_equals_torch_bit_for_bit(dtype, shape):
    g = torch.Generator().manual_seed(1)
    norm = RMSNorm(shape[-1], 1e-6).to(dtype)
    with torch.no_grad():
        norm.weight.copy_(torch.randn(shape[-1], generator=g, dtype=dtype))
    z = torch.randn(shape, generator=g, dtype=dtype) * 5
    for context in (torch.no_grad, torch.inference_mode):
        with context():
            assert torch.equal(norm(z), nn.functional.rms_norm(z, shape[-1:], norm.weight, 1e-6))
