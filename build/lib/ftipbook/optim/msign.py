"""Matrix functions of the matrix optimizers: ``msign`` (exact and Newton–Schulz) and PSD powers.

For ``M = A Sigma B^T`` (compact SVD), ``msign(M) = A B^T`` over the nonzero singular values
(ftip-00BA). :func:`msign_svd` computes it exactly; :func:`newton_schulz` approximates it with
the odd matrix polynomial Muon uses, in exactly ``torch.optim.Muon``'s order of operations, so
that the two agree bit for bit when run in the same dtype. :func:`psd_power` gives the
inverse roots Shampoo needs.
"""
from __future__ import annotations

from collections.abc import Iterator

import torch

from ftipbook.optim.hyperparams import MUON_NS_COEFFICIENTS

DTYPES = {"float64": torch.float64, "float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _matrix(name: str, x: object) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got shape {tuple(x.shape)}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must have a floating dtype, got {x.dtype}")
    return x


def msign_svd(m: torch.Tensor, rtol: float | None = None) -> torch.Tensor:
    """Exact matrix sign ``A B^T`` of ``m = A Sigma B^T`` (ftip-00BA, ftip-00BH).

    Singular values at or below ``rtol * sigma_max`` count as zero (default
    ``max(rows, cols) * machine epsilon``, the rule of ``torch.linalg.matrix_rank``), so a
    rank-deficient ``m`` gives the partial isometry on its range and ``msign(0) = 0``.
    """
    m = _matrix("m", m)
    a, s, bh = torch.linalg.svd(m, full_matrices=False)
    if rtol is None:
        rtol = max(m.shape) * torch.finfo(m.dtype).eps
    keep = (s > rtol * s.max()).to(m.dtype) if s.numel() else s
    return (a * keep) @ bh


def newton_schulz_iterates(
    m: torch.Tensor,
    steps: int = 5,
    coefficients: tuple[float, float, float] = MUON_NS_COEFFICIENTS,
    eps: float = 1e-7,
    dtype: str | None = None,
) -> Iterator[torch.Tensor]:
    """Yield ``X_0, X_1, ..., X_steps`` of the Newton–Schulz iteration for ``msign(m)`` (ftip-00BA).

    ``X_0 = m / max(||m||_F, eps)`` and ``X_{j+1} = a X_j + (b A_j + c A_j^2) X_j`` with
    ``A_j = X_j X_j^T``, computed on the wide orientation (a tall ``m`` is transposed first and
    each iterate transposed back). ``dtype`` names the compute dtype (``None``: ``m``'s own).
    Every iterate is right-equivariant: ``X_j(m Q) = X_j(m) Q`` for orthogonal ``Q``.
    """
    m = _matrix("m", m)
    if dtype is not None and dtype not in DTYPES:
        raise ValueError(f"dtype={dtype!r} is not supported; allowed: None, {', '.join(map(repr, DTYPES))}")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps < 100:
        raise ValueError(f"steps must be an int in [0, 99], got {steps!r}")
    if len(coefficients) != 3:
        raise ValueError(f"coefficients must be three numbers (a, b, c), got {coefficients!r}")
    if not eps > 0:
        raise ValueError(f"eps must be > 0, got {eps!r}")
    a, b, c = coefficients
    x = m.to(DTYPES[dtype]) if dtype is not None else m
    tall = m.size(0) > m.size(1)
    if tall:
        x = x.T
    x = x / x.norm().clamp(min=eps)
    yield x.T if tall else x
    for _ in range(steps):
        gram = x @ x.T
        poly = torch.addmm(gram, gram, gram, beta=b, alpha=c)
        x = torch.addmm(x, poly, x, beta=a)
        yield x.T if tall else x


def newton_schulz(
    m: torch.Tensor,
    steps: int = 5,
    coefficients: tuple[float, float, float] = MUON_NS_COEFFICIENTS,
    eps: float = 1e-7,
    dtype: str | None = None,
) -> torch.Tensor:
    """The last iterate ``X_steps`` of :func:`newton_schulz_iterates`: Muon's approximate ``msign``.

    With Muon's default quintic coefficients the singular values land near, not at, one
    (about 0.7 to 1.15 on random matrices); :data:`~ftipbook.optim.hyperparams.CUBIC_NS_COEFFICIENTS`
    converges to :func:`msign_svd` for full-rank input.
    """
    for x in newton_schulz_iterates(m, steps, coefficients, eps, dtype):
        pass
    return x


def psd_power(p: torch.Tensor, power: float, damping: float = 0.0) -> torch.Tensor:
    """``(p + damping I)^power`` for a symmetric positive semidefinite ``p``, by eigendecomposition.

    Eigenvalues are clamped at zero (round-off) before the damping is added; a negative
    ``power`` needs every damped eigenvalue to be positive (otherwise a ``ValueError``).
    Used for Shampoo's inverse fourth roots and the square roots of ftip-00BI.
    """
    p = _matrix("p", p)
    if p.shape[0] != p.shape[1]:
        raise ValueError(f"p must be square, got shape {tuple(p.shape)}")
    if damping < 0:
        raise ValueError(f"damping must be >= 0, got {damping!r}")
    evals, evecs = torch.linalg.eigh(p)
    evals = evals.clamp(min=0) + damping
    if power < 0 and not bool((evals > 0).all()):
        raise ValueError(f"p + damping I is singular, so its power {power} does not exist; use damping > 0")
    return (evecs * evals.pow(power)) @ evecs.T


__all__ = ["msign_svd", "newton_schulz", "newton_schulz_iterates", "psd_power"]
