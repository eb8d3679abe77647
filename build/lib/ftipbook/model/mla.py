"""Multi-head latent attention (MLA) of DeepSeek-V2, Section 2.1 (items ftip-000V, ftip-00KV, ftip-00KY).

Remark ftip-000V contrasts MHA/GQA with MLA, which compresses keys and values into a per-token
latent; Example ftip-00KV records that Kimi Linear's full-attention layers are MLA with no
positional encoding (NoPE); Example ftip-00KY uses the MLA cache bytes per token (``kappa``).

Per token ``x`` (width ``d``), with ``H`` heads, NoPE head width ``d_n``, value head width ``d_v``,
latent rank ``d_c`` and decoupled-RoPE width ``d_R`` (``d_R = 0`` for NoPE):

    c_KV = RMSNorm(W_DKV x)                  [d_c]   (cached)
    k_R  = RoPE(W_KR x)                      [d_R]   (cached; one key shared by all heads)
    k_h  = [W_UK_h c_KV ; k_R],  v_h = W_UV_h c_KV
    c_Q  = RMSNorm(W_DQ x)                   [d_q]   (optional low-rank query)
    q_h  = [W_UQ_h c_Q ; RoPE(W_QR_h c_Q)]   (or from a full-rank W_Q x)
    o    = W_O [softmax(q_h^T k_h / sqrt(d_n + d_R) + mask) v_h]_h

``W_DKV`` and ``W_KR`` are one projection ``kv_a_proj`` of width ``d_c + d_R`` and ``[W_UK; W_UV]``
is ``kv_b_proj``, as in the DeepSeek-V2 ``transformers`` code.

Two paths compute the same function:

* explicit: materialise the per-head ``K, V`` from the cached latent and call
  ``torch.nn.functional.scaled_dot_product_attention``;
* absorbed: fold ``W_UK_h`` into the query (``q~_h = W_UK_h^T q_h^nope``, width ``d_c``) and ``W_UV_h``
  into the output, so attention runs directly over the cached ``[c_KV ; k_R]`` (width
  ``d_c + d_R``, shared by all heads, like multi-query attention).

Only ``c_KV`` and ``k_R`` are cached: ``(d_c + d_R) * bytes_per_element`` per token and layer.
RoPE uses the half-rotation layout of :mod:`ftipbook.model.positional`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from ftipbook.model.attention import scaled_dot_product_attention
from ftipbook.model.masks import allowed, causal_mask
from ftipbook.model.norm import RMSNorm
from ftipbook.model.positional import RotaryEmbedding

__all__ = ["LatentKVCache", "MultiHeadLatentAttention", "mla_attention_mask"]


@dataclass
class LatentKVCache:
    """MLA decode cache: the latent ``c_kv [B, S, d_c]`` and the RoPE key ``k_rope [B, S, d_R]``.

    ``k_rope`` has width 0 for NoPE layers. ``seg_ids [B, S]`` is kept only when segment ids are
    passed (book-keeping for block-causal masks across calls; not counted by :meth:`nbytes`).
    Grows by concatenation, so :meth:`nbytes` measures exactly ``B * S * (d_c + d_R) * elt``.
    """

    c_kv: torch.Tensor
    k_rope: torch.Tensor
    seg_ids: torch.Tensor | None = None
    max_len: int | None = None

    @property
    def length(self) -> int:
        return self.c_kv.shape[1]

    def nbytes(self) -> int:
        """Bytes of the live cached tensors ``c_kv`` and ``k_rope``."""
        return sum(x.numel() * x.element_size() for x in (self.c_kv, self.k_rope))

    def reset(self) -> None:
        """Drop every cached token (keeps batch, widths, device and dtype)."""
        self.c_kv = self.c_kv[:, :0]
        self.k_rope = self.k_rope[:, :0]
        self.seg_ids = None

    def append(
        self, c_kv: torch.Tensor, k_rope: torch.Tensor, seg_ids: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Append one call's tokens; return the full ``(c_kv, k_rope, seg_ids)``."""
        b, t = c_kv.shape[:2]
        if self.c_kv.shape[0] != b or self.c_kv.shape[2] != c_kv.shape[2] or self.k_rope.shape[2] != k_rope.shape[2]:
            raise ValueError(
                f"cache holds [B={self.c_kv.shape[0]}, d_c={self.c_kv.shape[2]}, d_R={self.k_rope.shape[2]}], "
                f"got B={b}, d_c={c_kv.shape[2]}, d_R={k_rope.shape[2]}"
            )
        past = self.length
        if self.max_len is not None and past + t > self.max_len:
            raise ValueError(f"LatentKVCache is full: {past} + {t} positions exceed max_len={self.max_len}")
        if seg_ids is not None and self.seg_ids is None and past > 0:
            raise ValueError(
                f"seg_ids given, but the cache already holds {past} tokens cached without segment ids"
            )
        if seg_ids is None and self.seg_ids is not None:
            seg_ids = self.seg_ids[:, -1:].expand(b, t)  # continue the last cached document
        self.c_kv = torch.cat([self.c_kv, c_kv.detach().to(self.c_kv.dtype)], dim=1)
        self.k_rope = torch.cat([self.k_rope, k_rope.detach().to(self.k_rope.dtype)], dim=1)
        if seg_ids is not None:
            self.seg_ids = seg_ids.clone() if self.seg_ids is None else torch.cat([self.seg_ids, seg_ids], dim=1)
        return self.c_kv, self.k_rope, self.seg_ids


def mla_attention_mask(
    t_q: int,
    t_k: int,
    *,
    seg_q: torch.Tensor | None = None,
    seg_k: torch.Tensor | None = None,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Boolean admission mask ``[B or 1, 1, T_q, T_k]``: causal (queries are the last ``t_q`` of
    ``t_k`` positions, :func:`ftipbook.model.masks.causal_mask`) and, with segment ids, block-causal
    (a query sees only keys of its own document)."""
    keep = allowed(causal_mask(t_q, t_k, device=device)).view(1, 1, t_q, t_k)
    if seg_q is not None:
        if seg_k is None or seg_k.shape[1] != t_k or seg_q.shape[1] != t_q:
            raise ValueError(f"seg_q must be [B, {t_q}] and seg_k [B, {t_k}]")
        keep = keep & (seg_q.unsqueeze(-1) == seg_k.unsqueeze(-2)).unsqueeze(1)
    return keep


class MultiHeadLatentAttention(nn.Module):
    """MLA mixer (DeepSeek-V2 Sec. 2.1; ftip-000V), NoPE when ``rope_head_dim == 0`` (Kimi Linear, ftip-00KV).

    With ``rotate=False`` (``ModelConfig.mla_rotate_decoupled``) the ``d_R`` part is kept, cached and
    scored but never rotated: NoPE with a key part shared by all heads, as ``transformers``
    implements Kimi Linear's MLA layers.

    ``absorb`` selects the absorbed path (attention over the cached latent) instead of the explicit
    one; both give the same outputs and the same cache.
    """

    def __init__(self, cfg, layer_idx: int = 0) -> None:  # cfg: ftipbook.model.config.ModelConfig
        self._init(
            d_model=cfg.d_model,
            n_heads=cfg.n_heads,
            head_dim=cfg.d_head,
            v_head_dim=cfg.mla_v_head_dim,
            kv_lora_rank=cfg.kv_lora_rank,
            q_lora_rank=cfg.q_lora_rank,
            rope_head_dim=0 if cfg.mla_nope else cfg.rope_head_dim,
            rope_theta=cfg.rope_theta,
            norm_eps=cfg.norm_eps,
            out_bias=cfg.out_bias,
            absorb=cfg.mla_absorb,
            layer_idx=layer_idx,
            latent_norm_eps=cfg.mla_latent_norm_eps,
            rotate=cfg.mla_rotate_decoupled,
        )

    @classmethod
    def from_dims(
        cls,
        *,
        d_model: int,
        n_heads: int,
        head_dim: int,
        kv_lora_rank: int,
        q_lora_rank: int | None = None,
        rope_head_dim: int = 0,
        v_head_dim: int | None = None,
        rope_theta: float = 10000.0,
        norm_eps: float = 1e-5,
        out_bias: bool = False,
        absorb: bool = False,
        layer_idx: int = 0,
        latent_norm_eps: float | None = None,
        rotate: bool = True,
    ) -> "MultiHeadLatentAttention":
        """Build from explicit sizes: ``head_dim`` is the NoPE query/key head width ``d_n``,
        ``v_head_dim`` the value head width (default ``head_dim``), ``rope_head_dim`` is ``d_R``.
        ``latent_norm_eps`` is the epsilon of the RMSNorms of ``c_KV`` and ``c_Q`` (default
        ``norm_eps``); ``rotate=False`` keeps the ``d_R`` part unrotated: a key part shared by all
        heads, without positions (Kimi Linear's MLA layers in ``transformers``)."""
        self = cls.__new__(cls)
        self._init(
            d_model=d_model, n_heads=n_heads, head_dim=head_dim, v_head_dim=v_head_dim,
            kv_lora_rank=kv_lora_rank, q_lora_rank=q_lora_rank, rope_head_dim=rope_head_dim,
            rope_theta=rope_theta, norm_eps=norm_eps, out_bias=out_bias, absorb=absorb, layer_idx=layer_idx,
            latent_norm_eps=latent_norm_eps, rotate=rotate,
        )
        return self

    def _init(
        self, *, d_model: int, n_heads: int, head_dim: int, v_head_dim: int | None, kv_lora_rank: int,
        q_lora_rank: int | None, rope_head_dim: int, rope_theta: float, norm_eps: float, out_bias: bool,
        absorb: bool, layer_idx: int, latent_norm_eps: float | None = None, rotate: bool = True,
    ) -> None:
        nn.Module.__init__(self)
        v_head_dim = head_dim if v_head_dim is None else v_head_dim
        for name, val, low in (("d_model", d_model, 1), ("n_heads", n_heads, 1), ("head_dim", head_dim, 1),
                               ("v_head_dim", v_head_dim, 1), ("kv_lora_rank", kv_lora_rank, 1),
                               ("rope_head_dim", rope_head_dim, 0)):
            if not isinstance(val, int) or isinstance(val, bool) or val < low:
                raise ValueError(f"{name}={val!r} must be an int >= {low}")
        if q_lora_rank is not None and (not isinstance(q_lora_rank, int) or q_lora_rank < 1):
            raise ValueError(f"q_lora_rank={q_lora_rank!r} must be None (full-rank query) or an int >= 1")
        if rope_head_dim % 2:
            raise ValueError(f"rope_head_dim={rope_head_dim} must be even (RoPE rotates pairs); 0 means NoPE")
        if not norm_eps > 0:
            raise ValueError(f"norm_eps={norm_eps!r} must be > 0")
        latent_eps = norm_eps if latent_norm_eps is None else latent_norm_eps
        if not latent_eps > 0:
            raise ValueError(f"latent_norm_eps={latent_norm_eps!r} must be > 0 (or None = norm_eps)")
        self.d_model, self.n_heads, self.head_dim, self.v_head_dim = d_model, n_heads, head_dim, v_head_dim
        self.kv_lora_rank, self.q_lora_rank, self.rope_head_dim = kv_lora_rank, q_lora_rank, rope_head_dim
        self.norm_eps, self.absorb, self.layer_idx = norm_eps, bool(absorb), layer_idx
        qk = head_dim + rope_head_dim
        self.softmax_scale = 1.0 / math.sqrt(qk)
        if q_lora_rank is None:
            self.q_proj = nn.Linear(d_model, n_heads * qk, bias=False)
        else:
            self.q_a_proj = nn.Linear(d_model, q_lora_rank, bias=False)
            self.q_a_norm = RMSNorm(q_lora_rank, latent_eps)
            self.q_b_proj = nn.Linear(q_lora_rank, n_heads * qk, bias=False)
        self.kv_a_proj = nn.Linear(d_model, kv_lora_rank + rope_head_dim, bias=False)
        self.kv_a_norm = RMSNorm(kv_lora_rank, latent_eps)
        self.kv_b_proj = nn.Linear(kv_lora_rank, n_heads * (head_dim + v_head_dim), bias=False)
        self.o_proj = nn.Linear(n_heads * v_head_dim, d_model, bias=out_bias)
        self.rotary = RotaryEmbedding(rope_head_dim, rope_theta) if rope_head_dim and rotate else None

    @property
    def nope(self) -> bool:
        """True when the layer has no positional encoding (``rope_head_dim == 0``, or a decoupled part
        that is not rotated)."""
        return self.rotary is None

    # accounting hooks (read by ftipbook.model.accounting) -----------------------------------
    @staticmethod
    def dims(cfg) -> tuple[int, int, int, int, int, int | None, int]:
        """``(d, H, d_n, d_v, d_c, d_q, d_R)`` of the MLA layers of ``cfg`` (``d_R = 0`` under NoPE)."""
        d_v = cfg.mla_v_head_dim or cfg.d_head
        d_r = 0 if cfg.mla_nope else cfg.rope_head_dim
        return cfg.d_model, cfg.n_heads, cfg.d_head, d_v, cfg.kv_lora_rank, cfg.q_lora_rank, d_r

    @staticmethod
    def _weights(cfg) -> tuple[int, int]:
        """(weights applied once per token except ``kv_b_proj``, weights of ``kv_b_proj``)."""
        d, h, dn, dv, dc, dq, dr = MultiHeadLatentAttention.dims(cfg)
        q = d * h * (dn + dr) if dq is None else d * dq + dq * h * (dn + dr)
        return q + d * (dc + dr) + h * dv * d, dc * h * (dn + dv)

    @staticmethod
    def param_count(cfg) -> int:
        """Projection weights (``W_Q`` or ``W_DQ, W_UQ``; ``[W_DKV; W_KR]``; ``[W_UK; W_UV]``; ``W_O``),
        the RMSNorm weights of ``c_KV`` (and ``c_Q``) and the optional output bias."""
        d, _, _, _, dc, dq, _ = MultiHeadLatentAttention.dims(cfg)
        once, up = MultiHeadLatentAttention._weights(cfg)
        return once + up + dc + (dq or 0) + d * bool(cfg.out_bias)

    @staticmethod
    def cache_bytes(cfg, length: int, dtype: torch.dtype) -> int:
        """One sequence's cache after ``length`` positions: ``(d_c + d_R) length`` elements."""
        _, _, _, _, dc, _, dr = MultiHeadLatentAttention.dims(cfg)
        return (dc + dr) * length * dtype.itemsize

    @staticmethod
    def flops_per_token(cfg, context: int, mode: str) -> float:
        """Matrix-product FLOPs of the path ``cfg.mla_absorb`` selects (explicit when absent).

        ``keys = context`` (decode) or ``(context + 1) / 2`` (prefill). Explicit: ``2 x`` weights,
        ``2 H (d_n + d_R + d_v) keys``; when decoding, ``kv_b_proj`` re-expands all ``context``
        cached latents, ``2 d_c H (d_n + d_v) context``. Absorbed: ``2 x`` weights without
        ``kv_b_proj``, ``2 H d_c (d_n + d_v)`` for the folded ``W_UK, W_UV`` and
        ``2 H (2 d_c + d_R) keys`` for scores and context over the latent.
        """
        _, h, dn, dv, dc, _, dr = MultiHeadLatentAttention.dims(cfg)
        once, up = MultiHeadLatentAttention._weights(cfg)
        keys = context if mode == "decode" else (context + 1) / 2
        if cfg.mla_absorb:
            return 2 * once + 2 * h * dc * (dn + dv) + 2 * h * (2 * dc + dr) * keys
        expand = 2 * up * (context if mode == "decode" else 1)
        return 2 * once + expand + 2 * h * (dn + dr + dv) * keys

    # cache ----------------------------------------------------------------------------------
    def new_cache(
        self,
        batch: int,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float32,
        max_len: int | None = None,
    ) -> LatentKVCache:
        """Empty :class:`LatentKVCache` for ``batch`` sequences; ``max_len`` bounds its length."""
        if batch < 1:
            raise ValueError(f"batch={batch} must be >= 1")
        if max_len is not None and max_len < 1:
            raise ValueError(f"max_len={max_len} must be >= 1 (or None for an unbounded cache)")
        return LatentKVCache(
            c_kv=torch.zeros(batch, 0, self.kv_lora_rank, device=device, dtype=dtype),
            k_rope=torch.zeros(batch, 0, self.rope_head_dim, device=device, dtype=dtype),
            max_len=max_len,
        )

    def cache_bytes_per_token(self, dtype: torch.dtype = torch.float32) -> int:
        """Analytic cache bytes per token and sequence: ``(d_c + d_R) * element_size`` (``kappa``, ftip-00KY)."""
        return (self.kv_lora_rank + self.rope_head_dim) * torch.empty((), dtype=dtype).element_size()

    # pieces ---------------------------------------------------------------------------------
    def _rope(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Rotate ``x [B, heads, T, d_R]`` at ``positions [B, T]``."""
        return self.rotary.rotate(x, positions)

    def _queries(self, x: torch.Tensor, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, t, _ = x.shape
        if self.q_lora_rank is None:
            q = self.q_proj(x)
        else:
            q = self.q_b_proj(self.q_a_norm(self.q_a_proj(x)))
        q = q.view(b, t, self.n_heads, self.head_dim + self.rope_head_dim).transpose(1, 2)
        q_nope, q_rope = q.split([self.head_dim, self.rope_head_dim], dim=-1)
        if self.rotary is not None:
            q_rope = self._rope(q_rope, positions)
        return q_nope, q_rope  # [B, H, T, d_n], [B, H, T, d_R]

    def _latent(self, x: torch.Tensor, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        c_kv, k_rope = self.kv_a_proj(x).split([self.kv_lora_rank, self.rope_head_dim], dim=-1)
        c_kv = self.kv_a_norm(c_kv)
        if self.rotary is not None:
            k_rope = self._rope(k_rope.unsqueeze(1), positions).squeeze(1)
        return c_kv, k_rope  # [B, T, d_c], [B, T, d_R]

    def _up_weights(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``W_UK [H, d_n, d_c]`` and ``W_UV [H, d_v, d_c]`` from ``kv_b_proj``."""
        w = self.kv_b_proj.weight.view(self.n_heads, self.head_dim + self.v_head_dim, self.kv_lora_rank)
        return w[:, : self.head_dim], w[:, self.head_dim :]

    # forward --------------------------------------------------------------------------------
    def forward(
        self,
        x: torch.Tensor,
        *,
        positions: torch.Tensor | None = None,
        seg_ids: torch.Tensor | None = None,
        cache: LatentKVCache | None = None,
    ) -> torch.Tensor:
        """``[B, T, d] -> [B, T, d]``.

        ``positions [B, T]`` (absolute, zero-based) drive the decoupled RoPE; default
        ``past .. past + T - 1``. ``seg_ids [B, T]`` make the mask block-causal (packed documents).
        ``cache`` (from :meth:`new_cache`) receives this call's ``c_KV`` and ``k_R`` in place and the
        queries attend to every cached token.
        """
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must be [B, T, d_model={self.d_model}], got {tuple(x.shape)}")
        b, t, _ = x.shape
        past = 0 if cache is None else cache.length
        if positions is None:
            positions = torch.arange(past, past + t, device=x.device).expand(b, t)
        elif positions.shape != (b, t):
            raise ValueError(f"positions must be [B, T] = [{b}, {t}], got {tuple(positions.shape)}")
        if seg_ids is not None and seg_ids.shape != (b, t):
            raise ValueError(f"seg_ids must be [B, T] = [{b}, {t}], got {tuple(seg_ids.shape)}")

        q_nope, q_rope = self._queries(x, positions)
        c_kv, k_rope = self._latent(x, positions)
        seg_k = seg_ids
        if cache is not None:
            c_kv, k_rope, seg_k = cache.append(c_kv, k_rope, seg_ids)
            if seg_ids is None and seg_k is not None:
                seg_ids = seg_k[:, past:]
            c_kv, k_rope = c_kv.to(x.dtype), k_rope.to(x.dtype)
        s = c_kv.shape[1]
        mask = mla_attention_mask(t, s, seg_q=seg_ids, seg_k=seg_k if seg_ids is not None else None, device=x.device)

        if self.absorb:
            ctx = self._absorbed(q_nope, q_rope, c_kv, k_rope, mask)
        else:
            ctx = self._explicit(q_nope, q_rope, c_kv, k_rope, mask)
        return self.o_proj(ctx.transpose(1, 2).reshape(b, t, self.n_heads * self.v_head_dim))

    def _explicit(self, q_nope, q_rope, c_kv, k_rope, mask) -> torch.Tensor:
        b, s, _ = c_kv.shape
        kv = self.kv_b_proj(c_kv).view(b, s, self.n_heads, self.head_dim + self.v_head_dim).transpose(1, 2)
        k_nope, v = kv.split([self.head_dim, self.v_head_dim], dim=-1)
        k = torch.cat([k_nope, k_rope.unsqueeze(1).expand(b, self.n_heads, s, self.rope_head_dim)], dim=-1)
        q = torch.cat([q_nope, q_rope], dim=-1)
        return scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=self.softmax_scale)

    def _absorbed(self, q_nope, q_rope, c_kv, k_rope, mask) -> torch.Tensor:
        w_uk, w_uv = self._up_weights()
        q_lat = torch.einsum("bhtn,hnc->bhtc", q_nope, w_uk.to(q_nope.dtype))  # W_UK folded into q
        q = torch.cat([q_lat, q_rope], dim=-1)  # [B, H, T, d_c + d_R]
        k = torch.cat([c_kv, k_rope], dim=-1).unsqueeze(1)  # [B, 1, S, d_c + d_R], shared by heads
        scores = (q @ k.transpose(-1, -2)) * self.softmax_scale
        scores = scores.masked_fill(~mask, float("-inf"))
        ctx_lat = torch.softmax(scores, dim=-1) @ c_kv.unsqueeze(1)  # [B, H, T, d_c]
        return torch.einsum("bhtc,hvc->bhtv", ctx_lat, w_uv.to(ctx_lat.dtype))  # W_UV folded into the output

    def extra_repr(self) -> str:
        return (f"d_model={self.d_model}, n_heads={self.n_heads}, head_dim={self.head_dim}, "
                f"v_head_dim={self.v_head_dim}, kv_lora_rank={self.kv_lora_rank}, q_lora_rank={self.q_lora_rank}, "
                f"rope_head_dim={self.rope_head_dim}, rotate={self.rotary is not None}, absorb={self.absorb}")
