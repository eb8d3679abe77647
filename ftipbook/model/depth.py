"""Depth reuse beyond a fixed loop count (section ftip-00KG): three declared interventions.

``DecoderLM`` with ``cfg.n_loops = r`` already applies its stack of blocks ``r`` times with shared
weights (looped blocks). This module adds the three interventions the section names; each keeps
the token interface of ftip-0012 (token ids in, a next-token law out, the same
:func:`~ftipbook.model.generate.generate`):

* :func:`with_passes` (recirculation, ftip-00KL): the same weights run with another pass count at
  inference, e.g. more passes than the model was trained with. The residual stream that leaves the
  last block is fed through the stack again before the final norm; nothing is trained.
* :class:`LatentFeedbackLM` (latent feedback, ftip-00KM): ``K`` passes of the shared decoder per
  token step, where pass ``k > 0`` at position ``t`` adds ``W_f h^(k-1)_{t-1}`` (the previous
  position's final hidden state of the previous pass) to the token embedding. ``W_f`` starts at
  zero, so the untrained intervention is the plain model. It is the recurrence
  ``h_t = F(e_t, h_{t-1})`` truncated at ``K - 1`` feedback hops, which is what scheduled
  multi-pass training computes in parallel; the carried states are the recurrent state a cached
  decoder keeps between token steps.
* :class:`NextLatentLM` (next-latent prediction, ftip-00KN): a :class:`NextLatentHead` predicts the
  next position's final hidden state from the current one and the next token; its squared error
  against the stop-gradient target, times ``latent_weight``, joins the training loss through
  :meth:`~ftipbook.model.transformer.DecoderLM.auxiliary_loss`. Inference never reads the head.
"""
from __future__ import annotations

import copy
import dataclasses

import torch
import torch.nn.functional as F
from torch import nn

from ftipbook import _validate
from ftipbook.model.cache import HybridCache, LayerCache, tensor_bytes
from ftipbook.model.config import ModelConfig
from ftipbook.model.transformer import DecoderLM

NEXT_TOKEN_OBJECTIVE = "next-token cross-entropy"


#: The most passes through the stack a model may be given (``with_passes``, ``FeedbackCache`` and
#: the latent-feedback models): each pass is a full stack application per token, so this bounds
#: the work of one forward before it starts. The note's models use at most 8.
MAX_PASSES = 1024


def _count(name: str, value: object, low: int, high: int | None = None) -> int:
    return _validate.integer(name, value, low=low, high=high)


def with_passes(model: DecoderLM, passes: int) -> DecoderLM:
    """``model`` run with ``passes`` passes through its stack (recirculation, ftip-00KL).

    Returns a view that shares every parameter with ``model`` (training one trains the other) and
    differs only in ``cfg.n_loops = passes``: the weights and their hash are unchanged, the
    computation is not (``1 <= passes <= MAX_PASSES``). Its caches hold one layer cache per application, so cached decoding of the
    view equals its full forward as for any looped model.
    """
    if not isinstance(model, DecoderLM):
        raise TypeError(f"model must be a DecoderLM, got {type(model).__name__}")
    passes = _count("passes", passes, 1, MAX_PASSES)
    view = copy.copy(model)  # a new module object over the same parameter and submodule dicts
    view.cfg = dataclasses.replace(model.cfg, n_loops=passes)
    return view


def objective_of(model: nn.Module) -> str:
    """The training objective ``model`` declares (ftip-00KP): ``model.objective`` if it has one,
    else the plain next-token cross-entropy of ftip-0012."""
    return getattr(model, "objective", NEXT_TOKEN_OBJECTIVE)


# --- latent feedback (ftip-00KM) -----------------------------------------------------------------
class FeedbackCache(HybridCache):
    """The layer caches of every feedback pass (``K * n_layers * n_loops``) and the carried states.

    ``carried[k]`` is the last position's final hidden state ``h^(k)`` of the previous call,
    ``[B, d]`` (``None`` before the first call): pass ``k + 1`` of the next token step reads it.
    """

    def __init__(self, layers: list[LayerCache], feedback_passes: int) -> None:
        feedback_passes = _count("feedback_passes", feedback_passes, 1, MAX_PASSES)
        super().__init__(layers)
        self.carried: list[torch.Tensor | None] = [None] * (feedback_passes - 1)

    def reset(self) -> None:
        super().reset()
        self.carried = [None] * len(self.carried)

    def carried_nbytes(self) -> int:
        """Bytes of the latent states carried between token steps (the recurrent state)."""
        return tensor_bytes(*(c for c in self.carried if c is not None))

    def nbytes(self) -> int:
        return super().nbytes() + self.carried_nbytes()


class LatentFeedbackLM(DecoderLM):
    """A decoder whose ``K`` passes feed each position the previous position's latent (ftip-00KM).

    Pass 0 is the plain decoder on the token embeddings ``e``. Pass ``k`` runs the same blocks on
    ``e_t + W_f h^(k-1)_{t-1}``, where ``h^(k-1)`` is pass ``k-1``'s final (normed) hidden state;
    the feedback is zero at the first position of a sequence and of every packed document. The
    logits read the last pass. With ``feedback_passes = 1`` or ``W_f = 0`` it is ``DecoderLM``.
    """

    extra_roles = {"feedback": "latent feedback"}

    def __init__(self, cfg: ModelConfig, feedback_passes: int = 2) -> None:
        super().__init__(cfg)
        self.feedback_passes = _count("feedback_passes", feedback_passes, 1, MAX_PASSES)
        self.feedback = nn.Linear(cfg.d_model, cfg.d_model, bias=False)
        nn.init.zeros_(self.feedback.weight)

    @property
    def layer_applications(self) -> int:
        return self.feedback_passes * self.cfg.n_layers * self.cfg.n_loops

    def new_cache(self, batch: int, max_len: int | None = None) -> FeedbackCache:
        return FeedbackCache(super().new_cache(batch, max_len).layers, self.feedback_passes)

    def check_inputs(self, tokens, seg_ids=None, cache=None, positions=None) -> None:
        super().check_inputs(tokens, seg_ids, cache, positions)
        if cache is not None and not isinstance(cache, FeedbackCache):
            raise TypeError(f"cache must come from LatentFeedbackLM.new_cache (a FeedbackCache), "
                            f"got {type(cache).__name__}")

    def _shifted(self, h: torch.Tensor, seg_ids: torch.Tensor | None, carried: torch.Tensor | None) -> torch.Tensor:
        """``h`` moved one position later: position ``t`` gets ``h_{t-1}``, the first position the
        carried state (or zero), and a document's first position zero."""
        first = torch.zeros_like(h[:, :1]) if carried is None else carried.unsqueeze(1)
        out = torch.cat([first, h[:, :-1]], dim=1)
        if seg_ids is not None:
            same = torch.ones_like(seg_ids, dtype=torch.bool)
            same[:, 1:] = seg_ids[:, 1:] == seg_ids[:, :-1]
            out = out * same.unsqueeze(-1)
        return out

    def _hidden(self, tokens, seg_ids, cache, positions) -> torch.Tensor:
        positions = self._default_positions(tokens, seg_ids, cache, positions)
        e = self.positions(self.embed(tokens), positions)
        per_pass = self.cfg.n_layers * self.cfg.n_loops
        h = None
        for k in range(self.feedback_passes):
            x = e
            if k > 0:
                x = e + self.feedback(self._shifted(h, seg_ids, None if cache is None else cache.carried[k - 1]))
                if cache is not None:
                    cache.carried[k - 1] = h[:, -1].detach()
            h = self.norm(self._stack(x, positions, seg_ids, cache, first=k * per_pass))
        if cache is not None:
            cache.advance(tokens.shape[1])
        return h


def latent_feedback_model(cfg: ModelConfig, feedback_passes: int = 2, *, seed: int = 0) -> LatentFeedbackLM:
    """A :class:`LatentFeedbackLM` whose decoder weights equal ``build_model(cfg, seed=seed)``'s
    (the feedback map is created after them, at zero), so on/off runs pair exactly."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return LatentFeedbackLM(cfg, feedback_passes)


# --- next-latent prediction (ftip-00KN) ----------------------------------------------------------
class NextLatentHead(nn.Module):
    """``f(h_t, e_{t+1}) = W_2 GELU(W_1 [h_t; e_{t+1}])``: the next final hidden state predicted from
    the current one and the next token's embedding (ftip-00KN)."""

    def __init__(self, d_model: int, hidden: int) -> None:
        super().__init__()
        self.up = nn.Linear(2 * d_model, _count("hidden", hidden, 1))
        self.down = nn.Linear(hidden, d_model)

    def forward(self, h: torch.Tensor, e_next: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(torch.cat([h, e_next], dim=-1))))


class NextLatentLM(DecoderLM):
    """A decoder trained with next-token loss plus ``latent_weight`` times next-latent loss (ftip-00KN).

    In training mode, with gradients on and no cache, ``forward`` also computes
    ``mean_t ||f(h_t, e_{t+1}) - sg(h_{t+1})||^2 / d`` over the pairs of adjacent positions of one
    document (``sg`` = stop-gradient) and :meth:`auxiliary_loss` returns it times
    ``latent_weight``. Logits, caches and generation are those of ``DecoderLM``: the head is a
    training intervention, not part of the inference interface.
    """

    extra_roles = {"latent_head": "next-latent head"}

    def __init__(self, cfg: ModelConfig, latent_weight: float = 1.0, head_hidden: int | None = None) -> None:
        super().__init__(cfg)
        if isinstance(latent_weight, bool) or not isinstance(latent_weight, (int, float)) \
                or not 0 <= latent_weight < float("inf"):
            raise ValueError(f"latent_weight={latent_weight!r} must be a finite real >= 0")
        self.latent_weight = float(latent_weight)
        self.latent_head = NextLatentHead(cfg.d_model, head_hidden if head_hidden is not None else cfg.d_model)
        self.latent_loss: torch.Tensor | None = None

    @property
    def objective(self) -> str:
        if self.latent_weight == 0:
            return NEXT_TOKEN_OBJECTIVE
        return f"{NEXT_TOKEN_OBJECTIVE} + {self.latent_weight:g} x next-latent squared error (stop-gradient target)"

    def next_latent_loss(self, tokens: torch.Tensor, h: torch.Tensor, seg_ids: torch.Tensor | None) -> torch.Tensor:
        """The mean next-latent squared error of final hidden states ``h [B, T, d]`` (per coordinate)."""
        pred = self.latent_head(h[:, :-1], self.embed(tokens[:, 1:]))
        err = (pred - h[:, 1:].detach()).pow(2).mean(dim=-1)
        if seg_ids is None:
            return err.mean()
        same = seg_ids[:, 1:] == seg_ids[:, :-1]
        return (err * same).sum() / same.sum().clamp(min=1)

    def forward(self, tokens, *, seg_ids=None, cache=None, positions=None, last_only=False) -> torch.Tensor:
        self.latent_loss = None
        if not (self.training and torch.is_grad_enabled() and cache is None and self.latent_weight > 0):
            return super().forward(tokens, seg_ids=seg_ids, cache=cache, positions=positions, last_only=last_only)
        h = self.hidden_states(tokens, seg_ids=seg_ids, positions=positions)
        if tokens.shape[1] > 1:
            self.latent_loss = self.next_latent_loss(tokens, h, seg_ids)
        return self.unembed(h[:, -1:] if last_only else h)

    def auxiliary_loss(self) -> torch.Tensor | None:
        parts = [x for x in (super().auxiliary_loss(),
                             None if self.latent_loss is None else self.latent_weight * self.latent_loss)
                 if x is not None]
        return torch.stack(parts).sum() if parts else None

    def decoder_state_dict(self) -> dict[str, torch.Tensor]:
        return {k: v for k, v in self.state_dict().items() if not k.startswith("latent_head.")}


def next_latent_model(cfg: ModelConfig, latent_weight: float = 1.0, *, seed: int = 0,
                      head_hidden: int | None = None) -> NextLatentLM:
    """A :class:`NextLatentLM` whose decoder weights equal ``build_model(cfg, seed=seed)``'s (the
    head is created after them), so runs with the latent loss on and off start from one point."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return NextLatentLM(cfg, latent_weight, head_hidden)


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
