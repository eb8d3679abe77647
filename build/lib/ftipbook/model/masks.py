"""Attention masks as additive score biases (items ftip-000S, ftip-000T, ftip-001A).

A mask is a float tensor ``M`` of shape ``[T_q, T_k]`` (or broadcastable to it) that is
added to the attention scores before the softmax: ``0`` keeps a key, ``-inf`` removes it,
so the removed key receives exactly zero weight.
"""
from __future__ import annotations

import torch

NEG_INF = float("-inf")


def causal_mask(
    t_q: int,
    t_k: int | None = None,
    *,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Causal mask of ftip-000S: query ``i`` may see key ``j`` iff ``j <= i + (t_k - t_q)``.

    With ``t_k > t_q`` the queries are the last ``t_q`` positions of a ``t_k``-long sequence
    (the situation of cached decoding), so every query sees the whole cached prefix.
    """
    t_k = t_q if t_k is None else t_k
    if t_q < 1 or t_k < 1:
        raise ValueError(f"causal_mask needs t_q >= 1 and t_k >= 1, got t_q={t_q}, t_k={t_k}")
    if t_k < t_q:
        raise ValueError(f"causal_mask needs t_k >= t_q (queries are the last positions), got t_q={t_q}, t_k={t_k}")
    q = torch.arange(t_q, device=device).unsqueeze(1) + (t_k - t_q)
    k = torch.arange(t_k, device=device).unsqueeze(0)
    mask = torch.zeros(t_q, t_k, dtype=dtype, device=device)
    return mask.masked_fill(k > q, NEG_INF)


def allowed(mask: torch.Tensor) -> torch.Tensor:
    """Boolean view of an additive mask: ``True`` where the key is admitted."""
    return mask != NEG_INF


def document_allowed(seg_ids: torch.Tensor, *, pad_self: bool = False) -> torch.Tensor:
    """Boolean document mask of ftip-001A for ``seg_ids [B, T]``: ``c_t = c_s != 0`` and ``s <= t``.

    Segment id ``0`` marks padding; its rows admit no key. With ``pad_self=True`` a padding
    query admits itself instead, which keeps its attention output finite (an all-masked row
    would produce NaN, and a NaN value row poisons every query even at zero weight).
    Returns ``[B, T, T]``.
    """
    if seg_ids.dim() != 2:
        raise ValueError(f"seg_ids must be [B, T], got shape {tuple(seg_ids.shape)}")
    t = seg_ids.shape[1]
    same = (seg_ids.unsqueeze(2) == seg_ids.unsqueeze(1)) & (seg_ids != 0).unsqueeze(2)
    keep = same & allowed(causal_mask(t, device=seg_ids.device))
    if pad_self:
        keep = keep | (torch.eye(t, dtype=torch.bool, device=seg_ids.device) & (seg_ids == 0).unsqueeze(2))
    return keep


def document_mask(seg_ids: torch.Tensor, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Additive document (block-causal) mask ``M^doc [B, T, T]`` of ftip-001A: ``0`` kept, ``-inf`` removed."""
    keep = document_allowed(seg_ids)
    return torch.zeros(keep.shape, dtype=dtype, device=seg_ids.device).masked_fill(~keep, NEG_INF)


def segment_positions(seg_ids: torch.Tensor) -> torch.Tensor:
    """Zero-based position of each token inside its run of equal segment ids, ``[B, T]``.

    Packed documents are contiguous runs, so each document counts its positions from 0 exactly
    as it would alone; this is what makes a packed forward equal the separate ones.
    """
    t = seg_ids.shape[1]
    idx = torch.arange(t, device=seg_ids.device).expand_as(seg_ids)
    starts = torch.ones_like(seg_ids, dtype=torch.bool)
    starts[:, 1:] = seg_ids[:, 1:] != seg_ids[:, :-1]
    run_start = torch.where(starts, idx, torch.zeros_like(idx)).cummax(dim=1).values
    return idx - run_start
