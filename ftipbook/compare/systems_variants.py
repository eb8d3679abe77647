"""Systems variants of one attention model and their measured numerical effect (ftip-00JK, ftip-00JZ).

A systems choice (kernel, cache layout, storage precision, cache truncation) is part of the
record ``S`` of ftip-00JI. Whether it changes the computed model/interface map is a measurement,
not an assumption. This module holds the variants the chapters measure:

* :class:`ReferenceAttention`: a context manager that routes every
  ``torch.nn.functional.scaled_dot_product_attention`` call through the explicit
  :func:`~ftipbook.model.attention.sdpa_reference` (the formula of ftip-000Q), so a model
  runs the same weights with another kernel;
* :class:`LowPrecisionKVCache`: keys and values stored in a narrower dtype (e.g. ``bfloat16``)
  and read back in the compute dtype;
* :class:`WindowKVCache`: a cache that keeps only the last ``window`` positions (sliding-window
  truncation), so attention no longer sees the whole prefix;
* :func:`variant_cache` and :func:`decode_logits`: a whole-model cache built from those layers and
  a token-by-token decode that reads it;
* :func:`classify_deviation`: the measured maximum output deviation from a baseline, read as
  ``"exact"`` (bitwise equal), ``"numerically different"`` (within a declared rounding tolerance)
  or ``"approximation"`` (beyond it). The last two must be recorded as systems interventions
  (:func:`ftipbook.compare.records.systems_intervention`), not as architecture effects.
"""
from __future__ import annotations

import math
from numbers import Real

import torch
from torch.nn import functional as F
from torch.overrides import TorchFunctionMode

from ftipbook.model.attention import sdpa_reference
from ftipbook.model.cache import HybridCache, KVCache, tensor_bytes

#: Positional parameter names of ``torch.nn.functional.scaled_dot_product_attention``.
_SDPA_ARGS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")

EXACT = "exact"
NUMERIC = "numerically different"
APPROXIMATION = "approximation"


class ReferenceAttention(TorchFunctionMode):
    """Run every ``scaled_dot_product_attention`` call inside a ``with`` block as ``sdpa_reference``.

    The explicit formula ``softmax(Q K^T * scale + M) V`` of ftip-000Q replaces the fused kernel;
    boolean masks become additive ``0 / -inf`` masks, ``is_causal`` the lower-triangular mask, and
    grouped key/value heads (``enable_gqa``) are repeated so query head ``h`` reads key/value head
    ``h // (H / G)``. ``calls`` counts the calls routed, so a check can confirm the kernel was used.
    ``kernel`` is the name to record in a :class:`~ftipbook.compare.records.SystemsRecord`.
    """

    kernel = "A: sdpa_reference (explicit softmax(QK^T/sqrt(d))V)"

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is not F.scaled_dot_product_attention:
            return func(*args, **kwargs)
        given = {**dict(zip(_SDPA_ARGS, args)), **kwargs}
        if given.get("dropout_p", 0.0):
            raise ValueError(f"ReferenceAttention computes without dropout; got dropout_p={given['dropout_p']!r}")
        q, k, v = given["query"], given["key"], given["value"]
        if given.get("enable_gqa", False) and k.shape[-3] != q.shape[-3]:
            group = q.shape[-3] // k.shape[-3]
            k, v = k.repeat_interleave(group, dim=-3), v.repeat_interleave(group, dim=-3)
        t_q, t_k = q.shape[-2], k.shape[-2]
        mask = given.get("attn_mask")
        if mask is not None and mask.dtype == torch.bool:
            mask = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(~mask, -math.inf)
        if given.get("is_causal", False):
            if mask is not None:
                raise ValueError("scaled_dot_product_attention takes attn_mask or is_causal, not both")
            keep = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device).tril()
            mask = torch.zeros(t_q, t_k, dtype=q.dtype, device=q.device).masked_fill(~keep, -math.inf)
        self.calls += 1
        return sdpa_reference(q, k, v, mask, scale=given.get("scale"))[0]


class LowPrecisionKVCache(KVCache):
    """A :class:`~ftipbook.model.cache.KVCache` that stores keys and values in ``storage_dtype``
    (rounded to nearest on write) and returns them in ``compute_dtype`` (ftip-00JZ).

    ``nbytes()`` measures the stored tensors, so a ``bfloat16`` store of a ``float32`` model
    holds half the bytes.
    """

    def __init__(self, batch: int, n_kv_heads: int, head_dim: int, *, storage_dtype: torch.dtype,
                 compute_dtype: torch.dtype, max_len: int | None = None,
                 device: torch.device | str | None = None) -> None:
        for name, dtype in (("storage_dtype", storage_dtype), ("compute_dtype", compute_dtype)):
            if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
                raise TypeError(f"{name} must be a floating torch.dtype, got {dtype!r}")
        super().__init__(batch, n_kv_heads, head_dim, max_len=max_len, device=device, dtype=storage_dtype)
        self.compute_dtype = compute_dtype

    def get(self) -> tuple[torch.Tensor, torch.Tensor]:
        k, v = super().get()
        return k.to(self.compute_dtype), v.to(self.compute_dtype)

    def nbytes(self) -> int:
        """Bytes of the stored (narrow) keys and values."""
        return tensor_bytes(self.k.narrow(2, 0, self.length), self.v.narrow(2, 0, self.length))

    @property
    def policy(self) -> str:
        """The cache policy, for a systems record."""
        return f"KV cache stored in {str(self.k.dtype).removeprefix('torch.')}, read as " \
               f"{str(self.compute_dtype).removeprefix('torch.')}"


class WindowKVCache(KVCache):
    """A :class:`~ftipbook.model.cache.KVCache` that keeps only the last ``window`` positions (ftip-00JZ).

    After each update older positions are dropped, so attention at position ``t`` reads keys
    ``t - window + 1 .. t``: a truncation of the computation, not a re-implementation of it. Only
    one token per update is accepted once the cache holds anything (a longer chunk would need a
    banded mask), and a first chunk may not exceed the window.
    """

    def __init__(self, batch: int, n_kv_heads: int, head_dim: int, *, window: int,
                 device: torch.device | str | None = None, dtype: torch.dtype = torch.float32) -> None:
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"window must be an int >= 1, got {window!r}")
        super().__init__(batch, n_kv_heads, head_dim, device=device, dtype=dtype)
        self.window = window

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        new = k.shape[2]
        if (self.length and new != 1) or new > self.window:
            raise ValueError(f"WindowKVCache(window={self.window}) takes a first chunk of at most {self.window} "
                             f"positions and then one position per update; got {new} after {self.length}")
        super().update(k, v)
        if self.length > self.window:
            drop = self.length - self.window
            for buf in (self.k, self.v):
                buf[:, :, :self.window] = buf[:, :, drop:self.length].clone()
            self.length = self.window
        return self.get()

    @property
    def policy(self) -> str:
        """The cache policy, for a systems record."""
        return f"sliding window: last {self.window} positions kept"


def variant_cache(model: torch.nn.Module, batch: int, *, storage_dtype: torch.dtype | None = None,
                  window: int | None = None, max_len: int | None = None) -> HybridCache:
    """A decoding cache for an all-attention ``DecoderLM`` with one systems variant per layer (ftip-00JZ).

    ``storage_dtype`` gives :class:`LowPrecisionKVCache` layers, ``window`` gives
    :class:`WindowKVCache` layers, neither gives plain ``KVCache`` layers (``max_len``
    preallocates them). At most one variant at a time.
    """
    cfg = getattr(model, "cfg", None)
    if cfg is None:
        raise TypeError(f"variant_cache needs an ftipbook DecoderLM, got {type(model).__name__}")
    if set(cfg.layer_kinds) != {"A"}:
        raise ValueError(f"variant_cache supports attention layers ('A') only; layer_kinds={cfg.layer_kinds!r}")
    if storage_dtype is not None and window is not None:
        raise ValueError("pass storage_dtype or window, not both: one systems variant at a time")
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch must be an int >= 1, got {batch!r}")
    p = next(model.parameters())
    layers = []
    for _ in range(cfg.n_loops):
        for block in model.blocks:
            attn = block.mixer.fn
            shape = (batch, attn.n_kv_heads, attn.head_dim)
            if storage_dtype is not None:
                layers.append(LowPrecisionKVCache(*shape, storage_dtype=storage_dtype, compute_dtype=p.dtype,
                                                  max_len=max_len, device=p.device))
            elif window is not None:
                layers.append(WindowKVCache(*shape, window=window, device=p.device, dtype=p.dtype))
            else:
                layers.append(KVCache(*shape, max_len=max_len, device=p.device, dtype=p.dtype))
    return HybridCache(layers)


@torch.no_grad()
def decode_logits(model: torch.nn.Module, tokens: torch.Tensor, cache: HybridCache) -> torch.Tensor:
    """Logits ``[B, T, V]`` of feeding ``tokens [B, T]`` to ``model`` one position at a time through ``cache``."""
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.shape[1] == 0:
        raise ValueError(f"tokens must be a [B, T] tensor with T >= 1, got {getattr(tokens, 'shape', tokens)!r}")
    if cache.length:
        raise ValueError(f"cache already holds {cache.length} positions; pass a fresh cache")
    return torch.cat([model(tokens[:, t:t + 1], cache=cache) for t in range(tokens.shape[1])], dim=1)


def classify_deviation(max_abs_diff: float, tolerance: float) -> str:
    """``"exact"`` when the deviation is 0, ``"numerically different"`` up to ``tolerance``,
    ``"approximation"`` beyond it (ftip-00JZ); ``+inf`` (a shape change or non-finite output) is an approximation.

    ``tolerance`` is a declared, finite, positive bound on rounding-level output differences.
    """
    for name, value in (("max_abs_diff", max_abs_diff), ("tolerance", tolerance)):
        if isinstance(value, bool) or not isinstance(value, Real) or math.isnan(value):
            raise ValueError(f"{name} must be a real number, got {value!r}")
    if not (0 < tolerance < math.inf):
        raise ValueError(f"tolerance={tolerance!r} must be finite and > 0")
    if max_abs_diff < 0:
        raise ValueError(f"max_abs_diff={max_abs_diff!r} must be >= 0")
    if max_abs_diff == 0:
        return EXACT
    return NUMERIC if max_abs_diff <= tolerance else APPROXIMATION


__all__ = [
    "EXACT", "NUMERIC", "APPROXIMATION", "ReferenceAttention", "LowPrecisionKVCache", "WindowKVCache",
    "variant_cache", "decode_logits", "classify_deviation",
]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
