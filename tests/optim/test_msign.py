"""msign by SVD, Newton–Schulz iterations and PSD powers (ftip-00BA, 00BH, 00BI, 00BJ)."""
from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ftipbook.optim.gauge import random_orthogonal
from ftipbook.optim.hyperparams import CUBIC_NS_COEFFICIENTS
from ftipbook.optim.msign import msign_svd, newton_schulz, newton_schulz_iterates, psd_power

D = torch.float64


def _randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=D)


@given(n=st.integers(1, 9), k=st.integers(1, 9), seed=st.integers(0, 10_000))
@settings(max_examples=40, deadline=None)
def test_msign_is_the_polar_factor(n, k, seed):
    """msign(M) has orthonormal columns or rows, and M = msign(M) (M^T M)^{1/2}."""
    m = _randn(n, k, seed=seed)
    s = msign_svd(m)
    small = min(n, k)
    gram = s.T @ s if n >= k else s @ s.T
    assert torch.allclose(gram, torch.eye(small, dtype=D), atol=1e-12)
    assert torch.allclose(s @ psd_power(m.T @ m, 0.5), m, atol=1e-10)


def test_msign_of_rank_deficient_and_zero():
    """On rank r < k msign is a partial isometry of rank r (ftip-00BJ), and msign(0) = 0."""
    m = _randn(6, 2, seed=1) @ _randn(2, 5, seed=2)
    s = msign_svd(m)
    assert int(torch.linalg.matrix_rank(s)) == 2
    assert torch.allclose(torch.linalg.svdvals(s)[:2], torch.ones(2, dtype=D), atol=1e-12)
    assert torch.equal(msign_svd(torch.zeros(3, 4, dtype=D)), torch.zeros(3, 4, dtype=D))


def test_cubic_newton_schulz_converges_to_msign():
    m = _randn(12, 5, seed=3)
    errors = [float((newton_schulz(m, steps, CUBIC_NS_COEFFICIENTS) - msign_svd(m)).abs().max())
              for steps in (2, 4, 6, 40)]
    assert errors[0] > errors[1] > errors[2] > 1e-6 and errors[3] < 1e-13


def test_muon_quintic_lands_near_but_not_at_one():
    """The default quintic pushes every singular value into a band around one without converging."""
    svals = torch.cat([torch.linalg.svdvals(newton_schulz(_randn(20, 8, seed=s))) for s in range(20)])
    assert 0.6 < float(svals.min()) and float(svals.max()) < 1.25
    assert float((svals - 1).abs().max()) > 0.05


@pytest.mark.parametrize("shape", [(7, 3), (3, 7), (4, 4)])
def test_every_newton_schulz_iterate_is_right_equivariant(shape):
    """ftip-00BA: X_j(M Q) = X_j(M) Q for the normalisation and for every polynomial iterate."""
    m = _randn(*shape, seed=4)
    q = random_orthogonal(shape[1], seed=5)
    pairs = zip(newton_schulz_iterates(m @ q, 6), newton_schulz_iterates(m, 6))
    for j, (rotated, plain) in enumerate(pairs):
        assert torch.allclose(rotated, plain @ q, atol=1e-13), j


def test_newton_schulz_input_errors_and_dtype():
    m = _randn(3, 4)
    assert newton_schulz(m, dtype="float32").dtype == torch.float32
    assert torch.equal(m, _randn(3, 4))  # the input is not normalised in place
    with pytest.raises(ValueError, match="2-D matrix"):
        newton_schulz(torch.zeros(2, 3, 4))
    with pytest.raises(ValueError, match=r"steps must be an int in \[0, 99\]"):
        newton_schulz(m, steps=100)
    with pytest.raises(ValueError, match="dtype='int32' is not supported"):
        newton_schulz(m, dtype="int32")
    with pytest.raises(TypeError, match="floating dtype"):
        msign_svd(torch.zeros(2, 2, dtype=torch.int64))


def test_psd_power_inverse_roots():
    a = _randn(5, 5, seed=6)
    p = a @ a.T
    r = psd_power(p, -0.25, damping=1e-3)
    assert torch.allclose(torch.linalg.matrix_power(r, 4) @ (p + 1e-3 * torch.eye(5, dtype=D)), torch.eye(5, dtype=D),
                          atol=1e-9)
    with pytest.raises(ValueError, match="singular"):
        psd_power(torch.zeros(3, 3, dtype=D), -0.5)
    with pytest.raises(ValueError, match="square"):
        psd_power(torch.zeros(3, 2, dtype=D), 0.5)
