"""Token embedding and the three places positional information can enter (ftip-000M, 000N, 000O).

Positions are absolute, zero-based ``LongTensor[B, T]`` indices (the one-based ``t`` of the text
minus one). Embedding-stage schemes (``NoPositions``, ``SinusoidalPositions``, ``LearnedPositions``)
map ``x -> r_t(x)``; RoPE rotates queries and keys; ALiBi biases attention scores.
"""
from __future__ import annotations

import functools
import math

import torch
from torch import nn

from ftipbook.model.config import ModelConfig


class TokenEmbedding(nn.Module):
    """Token embedding of ftip-000M: token ``a`` maps to row ``E_a`` of ``E in R^{|V| x d}``."""

    def __init__(self, vocab_size: int, d_model: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(vocab_size, d_model))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return nn.functional.embedding(tokens, self.weight)


class NoPositions(nn.Module):
    """NoPE: the identity family ``r_t(z) = z`` of ftip-000N."""

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return x


def sinusoidal_table(positions: torch.Tensor, d_model: int) -> torch.Tensor:
    """Vaswani et al. (sec. 3.5): ``p[t, 2i] = sin(t / 10000^(2i/d))``, ``p[t, 2i+1] = cos(...)``.

    Returns ``float32 [*positions.shape, d_model]``; an odd ``d_model`` drops the last cosine.
    """
    i = torch.arange(0, d_model, 2, device=positions.device, dtype=torch.float32)
    angle = positions.unsqueeze(-1).float() * torch.exp(i * (-math.log(10000.0) / d_model))
    table = torch.stack((angle.sin(), angle.cos()), dim=-1).flatten(-2)
    return table[..., :d_model]


class SinusoidalPositions(nn.Module):
    """Additive fixed positions ``r_t(z) = z + p_t`` of ftip-000N (no parameters)."""

    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.d_model = d_model

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return x + sinusoidal_table(positions, self.d_model).to(x.dtype)


class LearnedPositions(nn.Module):
    """Additive learned positions ``r_t(z) = z + P_t`` of ftip-000N, ``P in R^{T x d}``."""

    def __init__(self, max_seq_len: int, d_model: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(max_seq_len, d_model))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        table = self.weight.shape[0]
        if positions.numel() and not 0 <= int(positions.min()) <= int(positions.max()) < table:
            raise ValueError(
                f"position indices {int(positions.min())}..{int(positions.max())} fall outside the learned "
                f"table of max_seq_len={table} rows (positions 0..{table - 1})"
            )
        return x + nn.functional.embedding(positions, self.weight)


def embedding_positions(cfg: ModelConfig) -> nn.Module:
    """The embedding-stage family ``(r_t)`` that ``cfg.pos`` declares (identity unless it acts there)."""
    if cfg.pos == "sinusoidal":
        return SinusoidalPositions(cfg.d_model)
    if cfg.pos == "learned":
        return LearnedPositions(cfg.max_seq_len, cfg.d_model)
    return NoPositions()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """``(x1, x2) -> (-x2, x1)`` on the two halves of the last axis (Llama/Qwen2 layout)."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, head_axis: int = 1) -> torch.Tensor:
    """Rotate ``x [B, heads, T, d_h]`` by the angles of ``cos, sin [B, T, d_h]``.

    ``head_axis=2`` takes the ``[B, T, heads, d_h]`` layout instead.
    """
    cos, sin = cos.unsqueeze(head_axis), sin.unsqueeze(head_axis)
    return x * cos + rotate_half(x) * sin


class RotaryEmbedding(nn.Module):
    """Rotary position embedding (RoFormer sec. 3.2, eqs. 14-16) in the half-rotation layout.

    Coordinate ``i`` is paired with ``i + d_h/2`` and rotated by ``t * theta^(-2i/d_h)``, as in the
    Llama and Qwen2 implementations of ``transformers``. The frequencies are kept in float32 as a
    plain attribute, not a buffer, so ``model.to(torch.bfloat16)`` does not round them. The last
    ``(cos, sin)`` is reused when called again with the same, unmodified ``positions`` tensor, so
    layers sharing one instance (:func:`shared_rotary`) compute the angles once per forward. An
    inference tensor (made under ``torch.inference_mode``) has no version counter to tell whether
    it was modified, so for such positions the angles are computed at every call.
    """

    def __init__(self, head_dim: int, theta: float) -> None:
        super().__init__()
        self.inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        self._last: tuple | None = None

    def forward(self, positions: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """``(cos, sin)``, each ``[B, T, d_h]`` in ``dtype``, for absolute ``positions [B, T]``."""
        tables = self._tables(positions, dtype)
        return tables["cos"], tables["sin"]

    def rotate(self, x: torch.Tensor, positions: torch.Tensor, head_axis: int = 1) -> torch.Tensor:
        """``apply_rotary(x, *self(positions, x.dtype), head_axis)``, bit for bit, in four operations.

        ``rotate_half(x) * sin`` equals ``roll(x, d_h/2) * (-sin_1, sin_2)`` exactly (negation is
        exact in floating point), so with the signed table cached alongside ``cos`` the rotation
        is two products, a roll and a sum, instead of the eight operations of the formula.
        """
        tables = self._tables(positions, x.dtype)
        key = ("rotate", head_axis)
        if key not in tables:
            half = x.shape[-1] // 2
            signed = torch.cat((-tables["sin"][..., :half], tables["sin"][..., half:]), dim=-1)
            tables[key] = tables["cos"].unsqueeze(head_axis), signed.unsqueeze(head_axis)
        cos, signed_sin = tables[key]
        return x * cos + x.roll(x.shape[-1] // 2, dims=-1) * signed_sin

    def _tables(self, positions: torch.Tensor, dtype: torch.dtype) -> dict:
        """The tables of ``positions`` in ``dtype``, reused while ``positions`` is the same, unmodified tensor."""
        version = None if positions.is_inference() else positions._version  # inference tensors have none
        last = self._last
        if last is not None and last[0] is positions and version is not None and last[1:3] == (version, dtype):
            return last[3]
        if self.inv_freq.device != positions.device:
            self.inv_freq = self.inv_freq.to(positions.device)
        freqs = positions.unsqueeze(-1).float() * self.inv_freq
        angles = torch.cat((freqs, freqs), dim=-1)
        tables = {"cos": angles.cos().to(dtype), "sin": angles.sin().to(dtype)}
        self._last = None if version is None else (positions, version, dtype, tables)
        return tables


@functools.cache
def shared_rotary(head_dim: int, theta: float) -> RotaryEmbedding:
    """One parameter-free ``RotaryEmbedding`` per ``(head_dim, theta)``, shared by the layers that use it."""
    return RotaryEmbedding(head_dim, theta)


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """ALiBi head slopes of Press et al. (sec. 3): ``2^(-8h/H)`` for ``h = 1..H`` when H is a power of 2.

    Otherwise the slopes of the nearest lower power of two ``m`` are followed by every other slope
    of ``2m`` (the construction of the reference implementation).
    """

    def geometric(n: int) -> list[float]:
        return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]

    m = 2 ** math.floor(math.log2(n_heads))
    slopes = geometric(m) + geometric(2 * m)[0::2][: n_heads - m]
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(slopes: torch.Tensor, q_pos: torch.Tensor, k_pos: torch.Tensor) -> torch.Tensor:
    """Score bias ``-m_h (t - s)`` for query positions ``q_pos [B, T_q]``, keys ``k_pos [B, T_k]``.

    Returns ``float32 [B, H, T_q, T_k]``; it depends on positions only through ``t - s``.
    """
    distance = (q_pos.unsqueeze(-1) - k_pos.unsqueeze(-2)).float()
    return -slopes.view(1, -1, 1, 1) * distance.unsqueeze(1)
