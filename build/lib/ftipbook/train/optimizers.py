"""The optimizer and learning-rate schedule a ``TrainConfig`` names (ftip-001H, 001I).

Weight decay is chosen by tensor rank, as in nanoGPT's ``configure_optimizers``: matrices and
embeddings (``dim >= 2``) are decayed, vectors (norm gains, biases, gates) are not.
``"muon_adamw"`` is :class:`ftipbook.optim.torch_optim.GroupedOptimizer` over
:func:`~ftipbook.optim.torch_optim.muon_adamw_param_groups`: Muon on hidden matrices, AdamW on
embeddings, unembedding and vectors. Schedules are those of :mod:`ftipbook.optim.schedules`.
The trainer accepts any ``torch.optim.Optimizer`` and any ``step -> multiplier`` callable;
these helpers only make the common choices one line.
"""
from __future__ import annotations

import torch
from torch import nn

from ftipbook.optim.hyperparams import AdamWConfig, MuonConfig
from ftipbook.optim.schedules import Constant, Cosine, WarmupCosine
from ftipbook.optim.torch_optim import GroupedOptimizer, muon_adamw_param_groups
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
    """``cfg.optimizer`` with ``cfg.lr``, ``betas``, ``eps``, ``momentum``, ``weight_decay``.

    ``"muon_adamw"`` gives Muon the same ``lr`` through its ``"match_rms_adamw"`` scaling.
    """
    if cfg.optimizer == "muon_adamw":
        adamw = AdamWConfig(lr=cfg.lr, betas=cfg.betas, eps=cfg.eps, weight_decay=cfg.weight_decay)
        muon = MuonConfig(lr=cfg.lr, weight_decay=cfg.weight_decay, adjust_lr_fn="match_rms_adamw")
        return GroupedOptimizer(muon_adamw_param_groups(model, muon=muon, adamw=adamw))
    groups = decay_groups(model, cfg.weight_decay)
    if cfg.optimizer == "adamw":
        return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, eps=cfg.eps)
    if cfg.optimizer == "adam":
        return torch.optim.Adam(groups, lr=cfg.lr, betas=cfg.betas, eps=cfg.eps)
    return torch.optim.SGD(groups, lr=cfg.lr, momentum=cfg.momentum)


def build_schedule(cfg: TrainConfig) -> Constant | Cosine | WarmupCosine:
    """The ``step -> multiplier`` map that ``cfg.schedule`` names, over ``cfg.steps`` updates."""
    if cfg.schedule == "constant":
        return Constant()
    if cfg.schedule == "cosine":
        return Cosine(cfg.steps, cfg.min_lr_ratio)
    return WarmupCosine(cfg.warmup_steps, cfg.steps, cfg.min_lr_ratio)
