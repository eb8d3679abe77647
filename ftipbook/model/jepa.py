"""A tiny JEPA-like model and the declared decoders that map its latents to next-token laws (ftip-00KA, 00KB).

The model has three parts:

* a **context encoder**: a causal :class:`~ftipbook.model.transformer.DecoderLM` of
  ``JEPAConfig.encoder`` (tied embeddings, so its unused unembedding adds no parameter), read
  through :meth:`~ftipbook.model.transformer.DecoderLM.hidden_states`: ``c_t`` summarizes
  ``x_<=t``;
* a **predictor** in latent space, a two-layer GELU MLP ``g``: ``p_t = g(c_t)``;
* an **EMA target encoder**: a copy of the context encoder that receives no gradient and follows
  it by :func:`ema_update`. Its latent ``s_{t+1}`` summarizes ``x_<=t+1``.

The training objective stays in latent space: ``p_t`` is pulled towards the stop-gradient
``s_{t+1}`` (cosine or mean-squared distance, :func:`latent_loss`) over the positions whose
successor lies in the same document. No token law is trained: a next-token law comes only
through a declared decoder applied to ``p_t``, such as :class:`LinearReadout` (fitted on frozen
predicted latents by :func:`fit_linear_readout`) or :class:`TiedEmbeddingReadout` (the
autoregressive convention ``logits = E p_t``, which assumes the latent lives in the basis of the
token embedding). :class:`DecodedJEPA` is the composed map from token ids to next-token logits.
"""
from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass
from numbers import Real

import torch
import torch.nn.functional as F
from torch import nn

from ftipbook.model.config import ModelConfig
from ftipbook.model.transformer import build_model

#: The latent losses :class:`JEPAConfig` accepts.
LATENT_LOSSES = ("cosine", "mse")


@dataclass(frozen=True)
class JEPAConfig:
    """The JEPA-like model's coordinates (ftip-00KA).

    ``encoder``: the context encoder's :class:`~ftipbook.model.config.ModelConfig` (must tie its
    embeddings); ``predictor_hidden``: the predictor MLP's hidden width; ``ema_decay``: the target
    encoder's decay ``tau`` in ``s <- tau s + (1 - tau) c``, in ``[0, 1)``; ``loss``: ``"cosine"``
    (``1 - cos(p_t, s_{t+1})``) or ``"mse"`` (``|p_t - s_{t+1}|^2 / d``).
    """

    encoder: ModelConfig
    predictor_hidden: int = 128
    ema_decay: float = 0.99
    loss: str = "cosine"

    def __post_init__(self) -> None:
        if not isinstance(self.encoder, ModelConfig):
            raise TypeError(f"JEPAConfig.encoder must be a ModelConfig, got {type(self.encoder).__name__}")
        if not self.encoder.tie_embeddings:
            raise ValueError("JEPAConfig.encoder must have tie_embeddings=True: the context encoder's unembedding "
                             "is never used, and tying it keeps it from adding parameters")
        if isinstance(self.predictor_hidden, bool) or not isinstance(self.predictor_hidden, int) \
                or self.predictor_hidden < 1:
            raise ValueError(f"JEPAConfig.predictor_hidden={self.predictor_hidden!r} must be an int >= 1")
        _decay("JEPAConfig.ema_decay", self.ema_decay, closed=False)
        if self.loss not in LATENT_LOSSES:
            raise ValueError(f"JEPAConfig.loss={self.loss!r} is not supported; allowed: "
                             f"{', '.join(map(repr, LATENT_LOSSES))}")

    def to_dict(self) -> dict:
        """Plain dict (the encoder config as a dict of its fields), inverse of :meth:`from_dict`."""
        return {"encoder": dataclasses.asdict(self.encoder), "predictor_hidden": self.predictor_hidden,
                "ema_decay": self.ema_decay, "loss": self.loss}

    @classmethod
    def from_dict(cls, d: dict) -> JEPAConfig:
        """Inverse of :meth:`to_dict`."""
        if not isinstance(d, dict) or set(d) != {"encoder", "predictor_hidden", "ema_decay", "loss"}:
            raise ValueError(f"a JEPAConfig dict needs exactly the keys encoder, predictor_hidden, ema_decay, loss; "
                             f"got {sorted(d) if isinstance(d, dict) else type(d).__name__}")
        return cls(ModelConfig(**d["encoder"]), d["predictor_hidden"], d["ema_decay"], d["loss"])


def _decay(name: str, value: object, *, closed: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ValueError(f"{name}={value!r} must be a real number in [0, 1{']' if closed else ')'}")
    if not (0.0 <= value <= 1.0 if closed else 0.0 <= value < 1.0):
        raise ValueError(f"{name}={value!r} must lie in [0, 1{']' if closed else ')'}")
    return float(value)


@torch.no_grad()
def ema_update(target: nn.Module, online: nn.Module, decay: float) -> None:
    """``target <- decay * target + (1 - decay) * online``, tensor by tensor, without gradients (ftip-00KA).

    Parameters and floating-point buffers must match by name and shape; ``decay`` lies in
    ``[0, 1]`` (``0`` copies ``online``, ``1`` leaves ``target`` unchanged).
    """
    decay = _decay("decay", decay, closed=True)
    for kind, t_items, o_items in (("parameter", target.named_parameters(), online.named_parameters()),
                                   ("buffer", target.named_buffers(), online.named_buffers())):
        t_map, o_map = dict(t_items), dict(o_items)
        if set(t_map) != set(o_map):
            raise ValueError(f"target and online have different {kind}s: "
                             f"{sorted(set(t_map) ^ set(o_map))[:4]}")
        for name, t in t_map.items():
            o = o_map[name]
            if t.shape != o.shape:
                raise ValueError(f"{kind} {name!r} has shape {tuple(t.shape)} in target and {tuple(o.shape)} in online")
            if t.dtype.is_floating_point:
                t.mul_(decay).add_(o.detach(), alpha=1.0 - decay)


def next_position_mask(seg_ids: torch.Tensor) -> torch.Tensor:
    """``[B, T-1]`` bool: position ``t`` has a successor ``t+1`` in the same document (``seg_ids`` > 0)."""
    return (seg_ids[:, :-1] == seg_ids[:, 1:]) & (seg_ids[:, :-1] > 0)


def latent_loss(predicted: torch.Tensor, target: torch.Tensor, mask: torch.Tensor,
                kind: str = "cosine") -> torch.Tensor:
    """Mean latent distance between ``predicted [B, T, d]`` and ``target [B, T, d]`` over the
    positions a bool ``mask [B, T]`` selects.

    ``"cosine"``: ``1 - cos``; ``"mse"``: squared distance divided by ``d``. The target is detached
    (stop-gradient).
    """
    if kind not in LATENT_LOSSES:
        raise ValueError(f"kind={kind!r} is not supported; allowed: {', '.join(map(repr, LATENT_LOSSES))}")
    for name, value in (("predicted", predicted), ("target", target), ("mask", mask)):
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must be a bool tensor [B, T] selecting positions, got dtype {mask.dtype} (an integer "
                        f"mask would index rows); use mask.bool() for a 0/1 mask")
    if not (predicted.is_floating_point() and target.is_floating_point()):
        raise TypeError(f"predicted and target must be floating-point tensors, got {predicted.dtype} and {target.dtype}")
    if predicted.shape != target.shape or mask.shape != predicted.shape[:-1]:
        raise ValueError(f"predicted {tuple(predicted.shape)}, target {tuple(target.shape)} and mask "
                         f"{tuple(mask.shape)} must be [B, T, d], [B, T, d] and [B, T]")
    if not bool(mask.any()):
        raise ValueError("mask selects no position: there is nothing to predict")
    target = target.detach()
    if kind == "cosine":
        per = 1.0 - F.cosine_similarity(predicted, target, dim=-1)
    else:
        per = (predicted - target).pow(2).mean(dim=-1)
    return per[mask].mean()


class JEPA(nn.Module):
    """Context encoder, latent predictor and EMA target encoder (see the module docstring; ftip-00KA).

    ``JEPA(cfg, seed=0)`` builds the context encoder with
    :func:`~ftipbook.model.transformer.build_model` from ``seed``, the predictor from ``seed + 1``,
    and the target encoder as an exact copy of the context encoder (no gradients).
    """

    def __init__(self, cfg: JEPAConfig, *, seed: int = 0) -> None:
        super().__init__()
        if not isinstance(cfg, JEPAConfig):
            raise TypeError(f"cfg must be a JEPAConfig, got {type(cfg).__name__}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed={seed!r} must be a non-negative int")
        self.cfg = cfg
        d = cfg.encoder.d_model
        self.context = build_model(cfg.encoder, seed=seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed + 1)
            self.predictor = nn.Sequential(nn.Linear(d, cfg.predictor_hidden), nn.GELU(),
                                           nn.Linear(cfg.predictor_hidden, d))
        self.target = copy.deepcopy(self.context)
        self.target.requires_grad_(False)

    def context_latents(self, tokens: torch.Tensor, seg_ids: torch.Tensor | None = None) -> torch.Tensor:
        """``c_t [B, T, d]``: the context encoder's final-norm states (inputs checked by the encoder)."""
        return self.context.hidden_states(tokens, seg_ids=seg_ids)

    def predicted_latents(self, tokens: torch.Tensor, seg_ids: torch.Tensor | None = None) -> torch.Tensor:
        """``p_t = g(c_t) [B, T, d]``: the prediction of the target latent of position ``t + 1``."""
        return self.predictor(self.context_latents(tokens, seg_ids))

    @torch.no_grad()
    def target_latents(self, tokens: torch.Tensor, seg_ids: torch.Tensor | None = None) -> torch.Tensor:
        """``s_t [B, T, d]``: the EMA target encoder's states (no gradient)."""
        return self.target.hidden_states(tokens, seg_ids=seg_ids)

    def loss(self, tokens: torch.Tensor, seg_ids: torch.Tensor | None = None) -> torch.Tensor:
        """The latent objective: ``p_t`` against the stop-gradient ``s_{t+1}`` where ``t + 1`` is in
        the same document (:func:`next_position_mask`), with ``cfg.loss``."""
        if seg_ids is None:
            if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2:
                raise ValueError("tokens must be a LongTensor [B, T]")
            seg_ids = torch.ones_like(tokens)
        if tokens.shape[1] < 2:
            raise ValueError(f"tokens needs at least 2 positions per row to predict a next latent, "
                             f"got shape {tuple(tokens.shape)}")
        predicted = self.predicted_latents(tokens, seg_ids)[:, :-1]
        target = self.target_latents(tokens, seg_ids)[:, 1:]
        return latent_loss(predicted, target, next_position_mask(seg_ids), self.cfg.loss)

    def update_target(self, decay: float | None = None) -> None:
        """One EMA step of the target encoder towards the context encoder (``cfg.ema_decay`` by default)."""
        ema_update(self.target, self.context, self.cfg.ema_decay if decay is None else decay)

    def trained_parameters(self) -> int:
        """Number of parameters trained by gradient (context encoder and predictor; the EMA copy is not)."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


# ----------------------------------------------------------------------------------------------
# Declared decoders: latent [.., d] -> next-token logits [.., V] (ftip-00KB)
# ----------------------------------------------------------------------------------------------
class LinearReadout(nn.Module):
    """``logits = W p + b``, ``W [V, d]``, ``b [V]``: a linear softmax readout of a latent (ftip-00KB)."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor) -> None:
        super().__init__()
        if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
            raise ValueError(f"weight must be a [V, d] tensor, got "
                             f"{tuple(weight.shape) if isinstance(weight, torch.Tensor) else type(weight).__name__}")
        if not isinstance(bias, torch.Tensor) or bias.shape != weight.shape[:1]:
            raise ValueError(f"bias must be a [V] tensor with V={weight.shape[0]}, got "
                             f"{tuple(bias.shape) if isinstance(bias, torch.Tensor) else type(bias).__name__}")
        self.weight = nn.Parameter(weight.detach().clone(), requires_grad=False)
        self.bias = nn.Parameter(bias.detach().clone(), requires_grad=False)

    def forward(self, latents: torch.Tensor) -> torch.Tensor:
        if latents.shape[-1] != self.weight.shape[1]:
            raise ValueError(f"latents have width {latents.shape[-1]}, the readout expects {self.weight.shape[1]}")
        return F.linear(latents, self.weight, self.bias)


class TiedEmbeddingReadout(nn.Module):
    """``logits = E p``: the autoregressive tied-unembedding convention applied to a latent (ftip-00KB).

    It assumes the latent is expressed in the basis of the token embedding ``E [V, d]``, which a
    JEPA's predicted latents are never trained to be.
    """

    def __init__(self, embedding: torch.Tensor) -> None:
        super().__init__()
        if not isinstance(embedding, torch.Tensor) or embedding.dim() != 2:
            raise ValueError("embedding must be a [V, d] tensor")
        self.weight = nn.Parameter(embedding.detach().clone(), requires_grad=False)

    def forward(self, latents: torch.Tensor) -> torch.Tensor:
        if latents.shape[-1] != self.weight.shape[1]:
            raise ValueError(f"latents have width {latents.shape[-1]}, the embedding has width {self.weight.shape[1]}")
        return F.linear(latents, self.weight)


#: The most full-batch optimizer steps :func:`fit_linear_readout` takes.
MAX_READOUT_STEPS = 100_000


def fit_linear_readout(latents: torch.Tensor, tokens: torch.Tensor, vocab_size: int, *, steps: int = 200,
                       lr: float = 0.05, seed: int = 0) -> tuple[LinearReadout, list[float]]:
    """Fit a :class:`LinearReadout` on frozen ``latents [N, d]`` to ``tokens [N]`` by full-batch Adam on
    the mean cross-entropy (ftip-00KB); returns the readout and the loss of each step."""
    if not isinstance(latents, torch.Tensor) or latents.dim() != 2:
        raise ValueError("latents must be an [N, d] tensor")
    if not isinstance(tokens, torch.Tensor) or tokens.shape != latents.shape[:1] or tokens.dtype != torch.long:
        raise ValueError(f"tokens must be a LongTensor [N] with N={latents.shape[0]}")
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 2:
        raise ValueError(f"vocab_size={vocab_size!r} must be an int >= 2")
    if tokens.numel() == 0 or int(tokens.min()) < 0 or int(tokens.max()) >= vocab_size:
        raise ValueError(f"tokens must be non-empty ids in [0, {vocab_size})")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_READOUT_STEPS:
        raise ValueError(f"steps={steps!r} must be an int in [1, {MAX_READOUT_STEPS}]")
    if isinstance(lr, bool) or not isinstance(lr, Real) or not 0 < lr < math.inf:
        raise ValueError(f"lr={lr!r} must be a positive finite number")
    x = latents.detach()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        weight = nn.Parameter(torch.randn(vocab_size, x.shape[1]) * 0.01)
    bias = nn.Parameter(torch.zeros(vocab_size))
    opt = torch.optim.Adam([weight, bias], lr=lr)
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(F.linear(x, weight, bias), tokens)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return LinearReadout(weight, bias), losses


class DecodedJEPA(nn.Module):
    """The model/interface map ``tokens [B, T] -> next-token logits [B, T, V]`` = ``decoder(p_t)`` (ftip-00KA).

    Only this composition has a next-token law; ``next_token_law`` mirrors
    :meth:`ftipbook.model.transformer.DecoderLM.next_token_law`.
    """

    def __init__(self, jepa: JEPA, decoder: nn.Module) -> None:
        super().__init__()
        if not isinstance(jepa, JEPA):
            raise TypeError(f"jepa must be a JEPA, got {type(jepa).__name__}")
        if not isinstance(decoder, nn.Module):
            raise TypeError(f"decoder must be an nn.Module mapping latents to logits, got {type(decoder).__name__}")
        self.jepa, self.decoder = jepa, decoder

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.jepa.predicted_latents(tokens))

    @torch.no_grad()
    def next_token_law(self, prefix: torch.Tensor) -> torch.Tensor:
        """``pi(. | prefix)`` as float64: ``[V]`` for a 1-D prefix, ``[B, V]`` for ``[B, T]``."""
        tokens = torch.as_tensor(prefix, dtype=torch.long)
        if tokens.shape[-1] == 0:
            raise ValueError("next_token_law needs a non-empty prefix")
        law = torch.softmax(self(tokens.reshape(-1, tokens.shape[-1]))[:, -1].double(), dim=-1)
        return law[0] if tokens.dim() == 1 else law


__all__ = ["LATENT_LOSSES", "JEPAConfig", "JEPA", "ema_update", "next_position_mask", "latent_loss",
           "LinearReadout", "TiedEmbeddingReadout", "fit_linear_readout", "DecodedJEPA", "MAX_READOUT_STEPS"]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
