"""Rules PyTorch does not ship, checked against independent by-hand recomputations (float64)."""
from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ftipbook.optim import functional as fn
from ftipbook.optim import hyperparams as hp

D = torch.float64


def _data(seed, shapes=((5, 3), (4, 3)), steps=6):
    gen = torch.Generator().manual_seed(seed)
    start = [torch.randn(*s, generator=gen, dtype=D) for s in shapes]
    grads = [[torch.randn(*s, generator=gen, dtype=D) for s in shapes] for _ in range(steps)]
    return start, grads


def _run(update, start, grads, cfg):
    params, state = start, None
    for gs in grads:
        params, state = update(params, state, gs, cfg)
    return params, state


def test_lion_by_hand():
    start, grads = _data(0)
    cfg = hp.LionConfig(lr=0.03, betas=(0.8, 0.95), weight_decay=0.1)
    got, _ = _run(fn.lion, start, grads, cfg)
    for i in range(2):
        x, m = start[i].clone(), torch.zeros_like(start[i])
        for gs in grads:
            g = gs[i]
            x = x * (1 - 0.03 * 0.1) - 0.03 * torch.sign(0.8 * m + 0.2 * g)
            m = 0.95 * m + 0.05 * g
        assert torch.allclose(got[i], x, rtol=0, atol=1e-14)


def test_signsgd_by_hand():
    start, grads = _data(1)
    got, _ = _run(fn.signsgd, start, grads, hp.SignSGDConfig(lr=0.1))
    for i in range(2):
        assert torch.allclose(got[i], start[i] - 0.1 * sum(torch.sign(gs[i]) for gs in grads), atol=1e-14)


def test_scalar_adam_by_hand():
    """One scalar second moment from the pooled mean of squared entries of all tensors in the block."""
    start, grads = _data(2)
    b1, b2, lr, eps = 0.85, 0.97, 0.02, 1e-7
    got, state = _run(fn.scalar_adam, start, grads, hp.ScalarAdamConfig(lr=lr, betas=(b1, b2), eps=eps))
    x = [p.clone() for p in start]
    m = [torch.zeros_like(p) for p in start]
    v = 0.0
    for t, gs in enumerate(grads, start=1):
        pooled = sum(float((g**2).sum()) for g in gs) / sum(g.numel() for g in gs)
        v = b2 * v + (1 - b2) * pooled
        m = [b1 * mi + (1 - b1) * g for mi, g in zip(m, gs)]
        denom = math.sqrt(v / (1 - b2**t)) + eps
        x = [xi - lr * (mi / (1 - b1**t)) / denom for xi, mi in zip(x, m)]
    for a, b in zip(got, x):
        assert torch.allclose(a, b, rtol=0, atol=1e-14)
    assert math.isclose(float(state.block["exp_avg_sq"]), v, rel_tol=1e-13)
    assert state.block["step"] == len(grads)


def _inv_fourth_root(p):
    """Independent route: SVD of the symmetric positive definite matrix."""
    u, s, _ = torch.linalg.svd(p)
    return u @ torch.diag(s**-0.25) @ u.T


@pytest.mark.parametrize("beta2", [1.0, 0.9])
def test_shampoo_by_hand(beta2):
    start, grads = _data(3, shapes=((5, 3),))
    cfg = hp.ShampooConfig(lr=0.05, beta2=beta2, damping=1e-3)
    got, state = _run(fn.shampoo, start, grads, cfg)
    x, left, right = start[0].clone(), torch.zeros(5, 5, dtype=D), torch.zeros(3, 3, dtype=D)
    for (g,) in grads:
        left, right = beta2 * left + g @ g.T, beta2 * right + g.T @ g
        x = x - 0.05 * _inv_fourth_root(left + 1e-3 * torch.eye(5, dtype=D)) @ g @ _inv_fourth_root(
            right + 1e-3 * torch.eye(3, dtype=D))
    assert torch.allclose(got[0], x, rtol=0, atol=1e-12)
    assert torch.allclose(state.per_param[0]["right"], right, atol=1e-13)


@pytest.mark.parametrize("damping", [0.0, 0.1])
def test_scaledgd_by_hand(damping):
    start, grads = _data(4, steps=1)
    (u, v), (gu, gv) = start, grads[0]
    got, _ = fn.scaledgd(start, None, grads[0], hp.ScaledGDConfig(lr=0.2, damping=damping))
    eye = torch.eye(3, dtype=D)
    assert torch.allclose(got[0], u - 0.2 * gu @ torch.linalg.inv(v.T @ v + damping * eye), atol=1e-13)
    assert torch.allclose(got[1], v - 0.2 * gv @ torch.linalg.inv(u.T @ u + damping * eye), atol=1e-13)


def test_muon_note_form_with_exact_msign():
    """The note's Muon (ftip-00BA): M_t = beta M_{t-1} + G_t, Delta_t = msign(M_t), no Nesterov, no decay."""
    start, grads = _data(5, shapes=((6, 3),))
    cfg = hp.MuonConfig(lr=0.05, momentum=0.9, nesterov=False, weight_decay=0.0, momentum_form="sum",
                        orthogonalizer="svd")
    got, state = _run(fn.muon, start, grads, cfg)
    x, m = start[0].clone(), torch.zeros(6, 3, dtype=D)
    for (g,) in grads:
        m = 0.9 * m + g
        a, _, bh = torch.linalg.svd(m, full_matrices=False)
        x = x - 0.05 * math.sqrt(6 / 3) * a @ bh
    assert torch.allclose(got[0], x, atol=1e-13)
    assert torch.allclose(state.per_param[0]["momentum_buffer"], m, atol=1e-13)


def test_muon_ema_and_sum_forms_give_the_same_direction():
    """The EMA buffer is (1 - beta) times the summed one, and msign ignores positive scale."""
    start, grads = _data(6, shapes=((4, 7),))
    base = dict(lr=0.05, momentum=0.9, weight_decay=0.0, orthogonalizer="svd")
    ema, _ = _run(fn.muon, start, grads, hp.MuonConfig(momentum_form="ema", **base))
    summed, _ = _run(fn.muon, start, grads, hp.MuonConfig(momentum_form="sum", **base))
    assert torch.allclose(ema[0], summed[0], atol=1e-12)


@given(b1=st.floats(0.0, 0.999), b2=st.floats(0.0, 0.9999), eps=st.floats(1e-10, 1e-2), seed=st.integers(0, 50))
@settings(max_examples=40, deadline=None)
def test_adam_first_step_is_d_eps_for_any_betas(b1, b2, eps, seed):
    """ftip-00BD: bias correction makes the first direction G / (|G| + eps), independent of the betas."""
    start, grads = _data(seed, shapes=((4, 3),), steps=1)
    (new,), _ = fn.adam(start, None, grads[0], hp.AdamConfig(lr=0.1, betas=(b1, b2), eps=eps))
    g = grads[0][0]
    assert torch.allclose((start[0] - new) / 0.1, g / (g.abs() + eps), rtol=1e-12, atol=1e-13)


def test_momentum_and_nesterov_registry_entries():
    start, grads = _data(7)
    polyak, _ = _run(fn.momentum, start, grads, None)
    assert all(torch.equal(a, b) for a, b in zip(polyak, _run(fn.sgd, start, grads, hp.SGDConfig(momentum=0.9))[0]))
    nest, _ = _run(fn.nesterov, start, grads, None)
    ref, _ = _run(fn.sgd, start, grads, hp.SGDConfig(momentum=0.9, nesterov=True))
    assert all(torch.equal(a, b) for a, b in zip(nest, ref))
    assert not torch.equal(nest[0], polyak[0])


def test_registry_lookup_errors():
    assert fn.get("adam") is fn.OPTIMIZERS["adam"]
    with pytest.raises(ValueError, match="unknown optimizer 'adamax'; registered: sgd"):
        fn.get("adamax")
