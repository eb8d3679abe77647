"""Normalization operators, the residual connection and their placement (ftip-0010, 0011, 006E, 006F).

Both norms compute half-precision inputs in float32 and return the input dtype, as the Llama/Qwen2
``transformers`` implementations do, so bfloat16 models normalize without losing the statistics'
precision; float32 and float64 inputs are normalized in their own dtype.
"""
from __future__ import annotations

from enum import Enum

import torch
from torch import nn
from torch.autograd.function import once_differentiable
from torch.nn import functional as F

from ftipbook.model.config import ModelConfig

#: Inputs normalized in float32 and cast back, as the ``transformers`` Llama/Qwen2 norms do.
LOW_PRECISION = (torch.float16, torch.bfloat16)


class LayerNorm(nn.Module):
    """Layer normalization (ftip-0011): ``gamma * (z - mu) / sqrt(sigma^2 + eps) + beta``.

    Runs torch's ``layer_norm`` kernel; ``tests/model/test_norm.py`` checks it against the formula.
    """

    def __init__(self, d: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        if z.dtype in LOW_PRECISION:
            return F.layer_norm(z.float(), z.shape[-1:], eps=self.eps).to(z.dtype) * self.weight + self.bias
        return F.layer_norm(z, z.shape[-1:], self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, eps={self.eps}"


def _rms_norm_cpu(
    x: torch.Tensor, weight: torch.Tensor, width: torch.Tensor, eps: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(y, x_hat, rstd)`` by the operations torch's CPU ``rms_norm`` performs, in its order (equal bit for bit).

    ``mean`` is ``sum`` then ``div_`` by the width, as torch computes it on the CPU. The width and
    ``eps`` come as 0-dim tensors of ``x``'s dtype: a Python number is wrapped in a new tensor at
    every call, which for one decoded token costs more than the arithmetic.
    """
    rstd = torch.rsqrt(x.pow(2).sum(-1, keepdim=True).div_(width).add_(eps))
    x_hat = x * rstd
    return x_hat * weight, x_hat, rstd


class _CPURMSNorm(torch.autograd.Function):
    """``F.rms_norm`` as torch computes it on the CPU, with a hand-written backward (ftip-006F).

    On the CPU torch's ``rms_norm`` is a composite of elementwise operations and autograd
    differentiates it operation by operation (about fifteen passes over the input). The backward
    here uses the closed form, with ``x_hat = x * r``, ``r = 1/sqrt(mean(x^2) + eps)``:
    ``dx = r (g w - x_hat mean(g w x_hat))`` and ``dw = sum over rows of g x_hat``.
    """

    @staticmethod
    def forward(ctx, x, weight, width, eps):
        y, x_hat, rstd = _rms_norm_cpu(x, weight, width, eps)
        ctx.save_for_backward(x_hat, rstd, weight)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        x_hat, rstd, weight = ctx.saved_tensors
        gw = grad * weight
        mean_gw_xhat = torch.linalg.vecdot(gw, x_hat).unsqueeze(-1).div_(x_hat.shape[-1])
        grad_x = gw.sub_(x_hat * mean_gw_xhat).mul_(rstd)
        grad_weight = (grad * x_hat).flatten(0, -2).sum(0) if ctx.needs_input_grad[1] else None
        return grad_x, grad_weight, None, None


class RMSNorm(nn.Module):
    """Root mean square layer normalization (ftip-006F): ``gamma * z / sqrt(mean(z^2) + eps)``.

    Computes torch's ``rms_norm``; ``tests/model/test_norm.py`` checks it against the formula. On
    the CPU, where torch's ``rms_norm`` is a composite of elementwise operations, float32 and
    float64 inputs run those same operations directly (equal outputs bit for bit, without the
    wrapper's overhead, which dominates for one decoded token) and, under autograd, with a
    closed-form backward (``_CPURMSNorm``, about half the backward time). Other devices
    call ``F.rms_norm``, which is a fused kernel there.
    """

    def __init__(self, d: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))
        self._cpu_constants: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}  # plain attribute, not state

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        if z.dtype in LOW_PRECISION:
            return self.weight * F.rms_norm(z.float(), z.shape[-1:], eps=self.eps).to(z.dtype)
        if z.device.type != "cpu":
            return F.rms_norm(z, z.shape[-1:], self.weight, self.eps)
        key = (z.dtype, z.shape[-1])
        if key not in self._cpu_constants:
            self._cpu_constants[key] = torch.tensor(z.shape[-1], dtype=z.dtype), torch.tensor(self.eps, dtype=z.dtype)
        width, eps = self._cpu_constants[key]
        if torch.is_grad_enabled() and (z.requires_grad or self.weight.requires_grad):
            return _CPURMSNorm.apply(z, self.weight, width, eps)
        return _rms_norm_cpu(z, self.weight, width, eps)[0]

    def extra_repr(self) -> str:
        return f"{self.weight.shape[0]}, eps={self.eps}"


def make_norm(cfg: ModelConfig) -> nn.Module:
    """The normalization operator ``cfg.norm`` of width ``d_model`` with the declared ``norm_eps``."""
    return (LayerNorm if cfg.norm == "layernorm" else RMSNorm)(cfg.d_model, cfg.norm_eps)


class Placement(str, Enum):
    """Normalization placement on one residual branch (ftip-006E)."""

    PRE = "pre"  # X + F(N(X))
    POST = "post"  # N(X + F(X))


class Residual(nn.Module):
    """Residual connection ``R_F(X) = X + F(X)`` (ftip-0010) with an optional norm at a placement.

    Keyword arguments of ``forward`` are passed to the sublayer ``fn``. The addition is
    coordinatewise, so a sublayer that changes the shape is refused.
    """

    def __init__(self, fn: nn.Module, norm: nn.Module | None = None, placement: Placement | str = Placement.PRE):
        super().__init__()
        self.fn = fn
        self.norm = norm if norm is not None else nn.Identity()
        self.placement = Placement(placement)

    def forward(self, x: torch.Tensor, **kwargs) -> torch.Tensor:
        if self.placement is Placement.PRE:
            return self._add(x, self.fn(self.norm(x), **kwargs))
        return self.norm(self._add(x, self.fn(x, **kwargs)))

    def _add(self, x: torch.Tensor, fx: torch.Tensor) -> torch.Tensor:
        if fx.shape != x.shape:
            raise ValueError(
                f"residual connection needs F(X) with the shape of X: X has {tuple(x.shape)}, "
                f"F(X) from {type(self.fn).__name__} has {tuple(fx.shape)}"
            )
        return x + fx

    def extra_repr(self) -> str:
        return f"placement={self.placement.value}"
