"""Feed-forward sublayers: dense (ftip-000W) and sparse mixture-of-experts (ftip-000X, 000Y, 000Z)."""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from ftipbook.model.config import ModelConfig

ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class FeedForward(nn.Module):
    """Positionwise feed-forward sublayer ``F(z) = phi(z W1 + b1) W2 + b2`` (ftip-000W).

    ``kind`` is ``"relu"``, ``"gelu"`` (exact erf form) or ``"swiglu"``, the gated form
    ``(SiLU(z W_gate) * (z W_up)) W2``. ``up`` is ``W1`` (``W_up``), ``down`` is ``W2``, and ``gate``
    is ``W_gate`` (``None`` unless SwiGLU). Gate and up stay two maps: fusing them into one
    projection measured slower on CPU (the halves are strided and the backward concatenates).
    """

    def __init__(self, d_model: int, d_ff: int, kind: str, bias: bool = False) -> None:
        super().__init__()
        self.kind = kind
        self.gate = nn.Linear(d_model, d_ff, bias=bias) if kind == "swiglu" else None
        self.up = nn.Linear(d_model, d_ff, bias=bias)
        self.down = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        if self.gate is not None:
            return self.down(F.silu(self.gate(z)) * self.up(z))
        return self.down(ACTIVATIONS[self.kind](self.up(z)))


def top_k_experts(scores: torch.Tensor, k: int) -> torch.Tensor:
    """``S_k(z)``: indices of the ``k`` largest scores, best first, equal scores by lower index.

    ``torch.topk`` does not promise an order among ties, so this uses a stable descending sort:
    equal scores keep their index order, which is the fixed total order of ftip-000X.
    """
    return torch.sort(scores, dim=-1, descending=True, stable=True).indices[..., :k]


@dataclass
class Routing:
    """One router decision for ``N`` tokens."""

    scores: torch.Tensor  # g(z), router scores [N, J]
    experts: torch.Tensor  # S_k(z), selected expert indices [N, k], best first
    weights: torch.Tensor  # alpha_j(z), softmax over the selected scores [N, k]


def _wide(scores: torch.Tensor) -> torch.Tensor:
    """``scores`` in float32 at least: half-precision scores are softmaxed in float32, float64 in float64."""
    return scores.to(torch.promote_types(scores.dtype, torch.float32))


class TopKRouter(nn.Module):
    """Router ``g(z) = z W_g`` with top-k selection and softmax over the selected scores (ftip-000X)."""

    def __init__(self, d_model: int, n_experts: int, top_k: int) -> None:
        super().__init__()
        self.top_k = top_k
        self.gate = nn.Linear(d_model, n_experts, bias=False)

    def forward(self, z: torch.Tensor) -> Routing:
        scores = self.gate(z)
        experts = top_k_experts(scores, self.top_k)
        weights = torch.softmax(_wide(scores.gather(-1, experts)), dim=-1).to(z.dtype)
        return Routing(scores, experts, weights)


class SigmoidTopKRouter(nn.Module):
    """DeepSeek-V3's router (ftip-000Z; DeepSeek-V3 report, Sec. 2.1.2), as ``transformers`` computes it.

    Affinities ``s = sigmoid(z W_g)``, computed in float32 at least (a bfloat16 model routes on
    float32 logits, as ``transformers`` does). Experts are chosen by the top-k of
    ``s + b``, where ``b`` (``score_bias``, a buffer: DeepSeek's auxiliary-loss-free balancing bias)
    only steers the choice. With ``n_groups > topk_groups`` the experts form ``n_groups`` equal
    groups, each scored by the sum of its two best ``s + b``, and only the ``topk_groups`` best
    groups may be chosen. The weights are the chosen ``s``, divided by their sum when ``normalize``
    (plus ``1e-20``), times ``scale``. ``Routing.scores`` holds the logits ``z W_g``.
    """

    def __init__(self, d_model: int, n_experts: int, top_k: int, *, n_groups: int = 1, topk_groups: int = 1,
                 normalize: bool = True, scale: float = 1.0) -> None:
        super().__init__()
        self.top_k, self.n_groups, self.topk_groups = top_k, n_groups, topk_groups
        self.normalize, self.scale = normalize, scale
        self.gate = nn.Linear(d_model, n_experts, bias=False)
        self.register_buffer("score_bias", torch.zeros(n_experts))

    def forward(self, z: torch.Tensor) -> Routing:
        wide = _wide(z)  # the logits in float32 at least, as transformers computes them
        logits = F.linear(wide, self.gate.weight.to(wide.dtype))
        affinity = torch.sigmoid(logits)
        choice = affinity + self.score_bias.to(affinity.dtype)
        if self.topk_groups < self.n_groups:
            grouped = choice.view(*choice.shape[:-1], self.n_groups, -1)
            best_groups = top_k_experts(grouped.topk(2, dim=-1).values.sum(-1), self.topk_groups)
            allowed = torch.zeros_like(grouped[..., 0], dtype=torch.bool).scatter_(-1, best_groups, True)
            choice = choice.masked_fill(~allowed.repeat_interleave(grouped.shape[-1], dim=-1), float("-inf"))
        experts = top_k_experts(choice, self.top_k)
        weights = affinity.gather(-1, experts)
        if self.normalize:
            weights = weights / (weights.sum(-1, keepdim=True) + 1e-20)
        return Routing(logits, experts, (weights * self.scale).to(z.dtype))


def make_router(cfg: ModelConfig) -> nn.Module:
    """The router ``cfg.moe_router`` declares: :class:`TopKRouter` or :class:`SigmoidTopKRouter`."""
    if cfg.moe_router == "sigmoid":
        return SigmoidTopKRouter(cfg.d_model, cfg.n_experts, cfg.top_k, n_groups=cfg.moe_n_groups,
                                 topk_groups=cfg.moe_topk_groups, normalize=cfg.moe_norm_topk,
                                 scale=cfg.moe_routed_scale)
    return TopKRouter(cfg.d_model, cfg.n_experts, cfg.top_k)


def load_balancing_loss(routing: Routing) -> torch.Tensor:
    """Switch-Transformer auxiliary loss ``J * sum_j f_j P_j`` (Fedus et al. eq. 4), for top-k.

    ``f_j`` is the fraction of the ``N k`` routing slots sent to expert ``j`` and ``P_j`` the mean
    softmax probability over all ``J`` experts; it equals 1 under perfectly uniform routing.
    """
    n_experts = routing.scores.shape[-1]
    p = torch.softmax(_wide(routing.scores), dim=-1).mean(dim=0)
    slots = F.one_hot(routing.experts, n_experts).to(p.dtype).sum(dim=-2)
    f = slots.mean(dim=0) / routing.experts.shape[-1]
    return n_experts * (f * p).sum()


class MoEFeedForward(nn.Module):
    """Sparse mixture of experts ``sum_{j in S_k(z)} alpha_j(z) F_j(z)`` plus shared experts (ftip-000X).

    Tokens are grouped by selected expert and each selected expert runs once on its tokens
    (gather, then ``index_add_`` back), so an expert that no token selects is never called.
    After each forward, ``aux_loss`` holds ``moe_aux_loss_coef * load_balancing_loss`` (``None``
    when the coefficient is 0) and ``last_routing`` the router decision.
    """

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        d, width = cfg.d_model, cfg.expert_width
        self.router = make_router(cfg)
        self.experts = nn.ModuleList(FeedForward(d, width, cfg.expert_ffn, cfg.ffn_bias) for _ in range(cfg.n_experts))
        self.shared = nn.ModuleList(
            FeedForward(d, width, cfg.expert_ffn, cfg.ffn_bias) for _ in range(cfg.n_shared_experts)
        )
        self.aux_loss_coef = cfg.moe_aux_loss_coef
        self.aux_loss: torch.Tensor | None = None
        self.last_routing: Routing | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = x.reshape(-1, x.shape[-1])
        routing = self.router(z)
        out = torch.zeros_like(z)
        for expert in self.shared:
            out = out + expert(z)
        k = routing.experts.shape[-1]
        slot_expert = routing.experts.flatten()  # slot n*k + i is token n's i-th choice
        order = torch.argsort(slot_expert, stable=True)
        counts = torch.bincount(slot_expert, minlength=len(self.experts)).tolist()
        tokens = (order // k).split(counts)
        weights = routing.weights.flatten()[order].split(counts)
        for expert, tok, w in zip(self.experts, tokens, weights):
            if tok.numel():
                out.index_add_(0, tok, expert(z[tok]) * w.unsqueeze(-1))
        self.last_routing = routing
        self.aux_loss = self.aux_loss_coef * load_balancing_loss(routing) if self.aux_loss_coef > 0 else None
        return out.view_as(x)


def make_ffn(cfg: ModelConfig) -> nn.Module:
    """The feed-forward sublayer ``cfg.ffn`` declares."""
    if cfg.ffn == "moe":
        return MoEFeedForward(cfg)
    return FeedForward(cfg.d_model, cfg.d_ff, cfg.ffn, cfg.ffn_bias)
