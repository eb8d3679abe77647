"""Scaled dot-product attention (item ftip-000Q, [vaswani2017attention] eq. 1) and the
multi-head causal self-attention layer built on it (ftip-000P, 000U, 000V)."""
from __future__ import annotations

import contextlib
import math
import platform
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.overrides import TorchFunctionMode

from ftipbook.model.cache import KVCache
from ftipbook.model.config import ModelConfig
from ftipbook.model.masks import NEG_INF, allowed, causal_mask, document_allowed
from ftipbook.model.positional import alibi_bias, alibi_slopes, shared_rotary


def sdpa_reference(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    scale: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Reference ``Att(Q, K, V) = softmax(Q K^T / sqrt(d_h) + M) V`` of ftip-000Q.

    Shapes: ``q`` is ``[..., T_q, d_h]``, ``k`` is ``[..., T_k, d_h]``, ``v`` is ``[..., T_k, d_v]``;
    ``mask`` is an additive ``[T_q, T_k]`` bias (see :mod:`ftipbook.model.masks`) or ``None``.
    Returns ``(output [..., T_q, d_v], weights [..., T_q, T_k])``; each row of ``weights`` is a
    probability vector, so each output row is a convex combination of the rows of ``v``.
    """
    if q.dim() < 2 or k.dim() != q.dim() or v.dim() != q.dim():
        raise ValueError(
            f"q, k, v must have the same rank >= 2 ([..., T, width]); got shapes "
            f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"query width {q.shape[-1]} != key width {k.shape[-1]}: both must be d_h")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"keys have T_k={k.shape[-2]} rows but values have {v.shape[-2]}: they must match")
    t_q, t_k = q.shape[-2], k.shape[-2]
    if mask is not None and mask.shape[-2:] != (t_q, t_k):
        raise ValueError(f"mask shape {tuple(mask.shape)} does not end in (T_q, T_k) = ({t_q}, {t_k})")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores + mask.to(scores.dtype)
    if torch.isinf(scores).all(dim=-1).any():
        raise ValueError("a query row has every key masked out: softmax over an empty set is undefined")
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


#: ATen CPU capabilities that compile the AVX-512 helpers of the fused CPU attention kernel.
_AVX512_CAPABILITIES = ("AVX512", "AVX512_VNNI", "AVX512_BF16", "AVX512_AMX")


def fused_cpu_attention_refused(q: torch.Tensor) -> bool:
    """True when the fused CPU attention kernel may refuse ``q``'s dtype, so the math backend runs.

    PyTorch's fused (flash) CPU attention packs bfloat16/float16 blocks for oneDNN's AMX
    micro-kernels with ``pack_vnni2``, which exists only in its AVX-512 build. On a CPU with AMX
    (Intel Sapphire Rapids and later) with ``ATEN_CPU_CAPABILITY`` forced to ``default`` or
    ``avx2``, the kernel therefore raises "pack_vnni2 is only supported when avx512 is supported".
    The same settings run the fused kernel on a CPU without AMX, so the rule is taken for every
    x86 CPU alike: reduced precision on the CPU below the AVX-512 capability uses the math backend
    everywhere, and the path an AMX machine takes is the path every x86 machine tests.
    """
    return (
        q.device.type == "cpu"
        and q.dtype in (torch.bfloat16, torch.float16)
        and platform.machine().lower() in ("x86_64", "amd64")
        and torch.backends.cpu.get_cpu_capability() not in _AVX512_CAPABILITIES
    )


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    attn_mask: torch.Tensor | None = None,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> torch.Tensor:
    """``torch.nn.functional.scaled_dot_product_attention`` (ftip-000Q) on every CPU kind.

    The call is PyTorch's; where :func:`fused_cpu_attention_refused` says the fused CPU kernel may
    refuse the inputs, it runs under the math backend, which computes the same
    ``softmax(Q K^T * scale + M) V`` with explicit products. Recorders and reference modes that
    intercept ``F.scaled_dot_product_attention`` see the call either way.
    """
    kwargs = dict(attn_mask=attn_mask, is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)
    if not fused_cpu_attention_refused(q):
        return F.scaled_dot_product_attention(q, k, v, **kwargs)
    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(q, k, v, **kwargs)


class MultiHeadAttention(nn.Module):
    """Causal multi-head self-attention (ftip-000U) with ``n_kv_heads`` key/value heads (ftip-000V).

    ``n_kv_heads = n_heads`` is MHA, a proper divisor is GQA (query head ``h`` reads key/value
    head ``h // (n_heads / n_kv_heads)``), ``1`` is MQA. One fused projection ``qkv`` holds
    ``[W^Q; W^K; W^V]`` (ftip-000P); ``out`` is ``W^O``. RoPE rotates queries and keys, ALiBi biases
    the scores. The product runs in ``torch.nn.functional.scaled_dot_product_attention`` with
    ``is_causal`` when the mask is plain causal and an explicit mask otherwise (packed documents,
    a chunk after a cached prefix, ALiBi); it equals :func:`sdpa_reference` with that mask.

    Mixer interface: ``MultiHeadAttention(cfg, layer_idx)``;
    ``forward(x [B, T, d], *, positions [B, T], seg_ids=None, cache=None) -> [B, T, d]``.
    """

    def __init__(self, cfg: ModelConfig, layer_idx: int = 0) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.n_heads, self.n_kv_heads, self.head_dim = cfg.n_heads, cfg.kv_heads, cfg.d_head
        q_width, kv_width = self.n_heads * self.head_dim, self.n_kv_heads * self.head_dim
        self.qkv = nn.Linear(cfg.d_model, q_width + 2 * kv_width, bias=cfg.qkv_bias)
        self.out = nn.Linear(q_width, cfg.d_model, bias=cfg.out_bias)
        self.rope = shared_rotary(self.head_dim, cfg.rope_theta) if cfg.pos == "rope" else None
        self.alibi_slopes = alibi_slopes(self.n_heads) if cfg.pos == "alibi" else None  # float32, not a buffer

    # analytic accounting (model/accounting.py sums these over layers) ------------------------
    @staticmethod
    def param_count(cfg: ModelConfig) -> int:
        """``d (H + 2G) d_h`` for ``[W^Q; W^K; W^V]``, ``H d_h d`` for ``W^O``, plus declared biases."""
        qkv = (cfg.n_heads + 2 * cfg.kv_heads) * cfg.d_head
        out = cfg.n_heads * cfg.d_head * cfg.d_model
        return cfg.d_model * qkv + qkv * cfg.qkv_bias + out + cfg.d_model * cfg.out_bias

    @staticmethod
    def cache_bytes(cfg: ModelConfig, length: int, dtype: torch.dtype) -> int:
        """Bytes of one sequence's keys and values after ``length`` positions: ``2 G d_h length``."""
        return 2 * cfg.kv_heads * cfg.d_head * length * dtype.itemsize

    @staticmethod
    def flops_per_token(cfg: ModelConfig, context: int, mode: str) -> float:
        """Projections ``2 (params without biases)`` plus ``4 H d_h n_keys`` for ``QK^T`` and ``AV``.

        ``n_keys = context`` when decoding at context ``T`` and ``(T + 1) / 2`` (the causal
        average) per token of a length-``T`` prefill.
        """
        keys = context if mode == "decode" else (context + 1) / 2
        weights = cfg.d_model * (cfg.n_heads + 2 * cfg.kv_heads) * cfg.d_head + cfg.n_heads * cfg.d_head * cfg.d_model
        return 2 * weights + 4 * cfg.n_heads * cfg.d_head * keys

    def new_cache(
        self, batch: int, device: torch.device | None, dtype: torch.dtype, max_len: int | None = None
    ) -> KVCache:
        return KVCache(batch, self.n_kv_heads, self.head_dim, max_len=max_len, device=device, dtype=dtype)

    def forward(
        self,
        x: torch.Tensor,
        *,
        positions: torch.Tensor,
        seg_ids: torch.Tensor | None = None,
        cache: KVCache | None = None,
    ) -> torch.Tensor:
        b, t, _ = x.shape
        heads = self.qkv(x).view(b, t, self.n_heads + 2 * self.n_kv_heads, self.head_dim)
        qk, v = heads.split([self.n_heads + self.n_kv_heads, self.n_kv_heads], dim=2)
        if self.rope is not None:  # queries and keys rotate together
            qk = self.rope.rotate(qk, positions, head_axis=2)
        q, k = qk.transpose(1, 2).split([self.n_heads, self.n_kv_heads], dim=1)
        v = v.transpose(1, 2)
        past = 0
        if cache is not None:
            past = cache.length
            k, v = cache.update(k, v)
        mask, is_causal = self.score_mask(t, past, seg_ids, x.device, x.dtype)
        y = scaled_dot_product_attention(
            q, k, v, attn_mask=mask, is_causal=is_causal, enable_gqa=self.n_kv_heads != self.n_heads
        )
        return self.out(y.transpose(1, 2).reshape(b, t, -1))

    def score_mask(
        self, t_q: int, past: int, seg_ids: torch.Tensor | None, device: torch.device, dtype: torch.dtype
    ) -> tuple[torch.Tensor | None, bool]:
        """``(attn_mask, is_causal)`` for ``t_q`` queries after ``past`` cached positions.

        The mask is boolean (``True`` = admitted) or, with ALiBi, additive with ``-inf`` at removed
        keys. ALiBi reads the displacement of row indices, which equals the position displacement
        inside a packed document (positions restart per document, rows stay contiguous).
        """
        t_k = past + t_q
        if seg_ids is not None:
            keep = document_allowed(seg_ids, pad_self=True).unsqueeze(1)
        elif self.alibi_slopes is None and (past == 0 or t_q == 1):
            return None, past == 0  # plain causal, or one query that sees every cached key
        else:
            keep = allowed(causal_mask(t_q, t_k, device=device))
        if self.alibi_slopes is None:
            return keep, False
        rows = torch.arange(t_k, device=device).unsqueeze(0)
        bias = alibi_bias(self.alibi_slopes.to(device), rows[:, past:], rows)
        return bias.masked_fill(~keep, NEG_INF).to(dtype), False


# probes used by the chapters of ftip-000N ... ftip-000V ---------------------------------------
@dataclass
class AttentionCall:
    """The arguments and result of one ``scaled_dot_product_attention`` call.

    ``q`` is ``[B, H, T_q, d_h]`` as the kernel received it (after RoPE), ``k`` and ``v`` are
    ``[B, G, T_k, d_h]`` (``G`` key/value heads, ``G < H`` under GQA/MQA with ``enable_gqa``).
    """

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    attn_mask: torch.Tensor | None
    is_causal: bool
    scale: float | None
    enable_gqa: bool
    output: torch.Tensor


#: Positional parameter names of ``torch.nn.functional.scaled_dot_product_attention``.
_SDPA_ARGS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")


class AttentionRecorder(TorchFunctionMode):
    """Record every ``scaled_dot_product_attention`` call made inside a ``with`` block (ftip-000P, 000U).

    The layers compute with the fused kernel, so their per-head queries, keys and values are
    never returned; this context manager lets a check read them where the kernel receives them::

        with AttentionRecorder() as rec:
            layer(x, positions=positions)
        q = rec.calls[0].q  # [B, H, T, d_h]

    Tensors are stored detached; nothing about the computation changes.
    """

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[AttentionCall] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func is F.scaled_dot_product_attention:
            given = {**dict(zip(_SDPA_ARGS, args)), **kwargs}
            mask = given.get("attn_mask")
            self.calls.append(AttentionCall(
                q=given["query"].detach(), k=given["key"].detach(), v=given["value"].detach(),
                attn_mask=None if mask is None else mask.detach(), is_causal=bool(given.get("is_causal", False)),
                scale=given.get("scale"), enable_gqa=bool(given.get("enable_gqa", False)), output=out.detach(),
            ))
        return out


@contextlib.contextmanager
def no_causal_mask(module: nn.Module) -> Iterator[nn.Module]:
    """Run every :class:`MultiHeadAttention` in ``module`` with ``M = 0`` inside a ``with`` block.

    The decoder always applies the causal mask of ftip-000S; the permutation-equivariance check of
    ftip-000N needs the same layers without it (every position attends to every position). Only
    the mask changes: weights, projections and RoPE are untouched, and the layers are restored on
    exit. Packed-document masks (``seg_ids``) and continuing from a cache are refused inside the
    block. ALiBi (its bias travels with the mask), MLA and KDA layers (their causality is built into
    their own computation) are refused with a ``ValueError``.
    """
    from ftipbook.model.kda import KimiDeltaAttention
    from ftipbook.model.mla import MultiHeadLatentAttention

    others = sorted({type(m).__name__ for m in module.modules()
                     if isinstance(m, (MultiHeadLatentAttention, KimiDeltaAttention))})
    if others:
        raise ValueError(f"no_causal_mask supports softmax attention layers ('A') only; found {', '.join(others)}")
    layers = [m for m in module.modules() if isinstance(m, MultiHeadAttention)]
    if not layers:
        raise ValueError(f"no_causal_mask found no MultiHeadAttention layer in {type(module).__name__}")
    if any(m.alibi_slopes is not None for m in layers):
        raise ValueError("no_causal_mask does not support pos='alibi' (the ALiBi bias is part of the score mask); "
                         "use pos in 'none', 'sinusoidal', 'learned', 'rope'")

    def unmasked(t_q: int, past: int, seg_ids: torch.Tensor | None, device, dtype):
        if seg_ids is not None or past:
            raise ValueError("no_causal_mask runs one unpacked sequence without a cache (seg_ids=None, cache=None)")
        return None, False

    for layer in layers:
        layer.score_mask = unmasked  # instance attribute shadows the method
    try:
        yield module
    finally:
        for layer in layers:
            del layer.score_mask
