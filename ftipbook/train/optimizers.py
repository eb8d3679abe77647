"""The optimizer a ``TrainConfig`` names, with weight decay chosen by tensor rank (ftip-001H, 001I).

As in nanoGPT's ``configure_optimizers``: matrices and embeddings (``dim >= 2``) are decayed,
vectors (norm gains, biases, gates) are not. The trainer accepts any ``torch.optim.Optimizer``;
this helper only makes the common choices one line.
"""
from __future__ import annotations

import torch
from torch import nn

from ftipbook.train.config import TrainConfig


def decay_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """Two parameter groups: ``dim >= 2`` tensors with ``weight_decay``, the rest with none.

    Tied parameters appear once. Empty groups are dropped.
    """
    seen, decay, keep = set(), [], []
    for p in model.parameters():
        if p.requires_grad and id(p) not in seen:
            seen.add(id(p))
            (decay if p.dim() >= 2 else keep).append(p)
    groups = [{"params": decay, "weight_decay": weight_decay}, {"params": keep, "weight_decay": 0.0}]
    return [g for g in groups if g["params"]]


def build_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    """``cfg.optimizer`` over :func:`decay_groups` with ``cfg.lr``, ``betas``, ``eps``, ``momentum``."""
    groups = decay_groups(model, cfg.weight_decay)
    if cfg.optimizer == "adamw":
        return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, eps=cfg.eps)
    if cfg.optimizer == "adam":
        return torch.optim.Adam(groups, lr=cfg.lr, betas=cfg.betas, eps=cfg.eps)
    return torch.optim.SGD(groups, lr=cfg.lr, momentum=cfg.momentum)
