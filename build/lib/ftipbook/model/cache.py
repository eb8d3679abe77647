"""Decoding caches: ``KVCache`` for one attention layer and ``HybridCache`` for a whole model.

Contract of a layer cache (``KVCache`` here; ``LatentKVCache`` of ``model/mla.py`` and
``KDAState`` of ``model/kda.py`` follow it too): the mixer that owns it updates it in place
during ``forward``; ``reset()`` empties it for reuse; ``nbytes()`` is measured from the live
tensors that hold the state. Use caches under ``torch.no_grad()``: they are inference state.
"""
from __future__ import annotations

from typing import Protocol

import torch


class LayerCache(Protocol):
    """What ``HybridCache`` needs from one layer's cache."""

    def reset(self) -> None: ...

    def nbytes(self) -> int: ...


def tensor_bytes(*tensors: torch.Tensor) -> int:
    """Bytes held by the elements of ``tensors`` (``numel * element_size``)."""
    return sum(t.numel() * t.element_size() for t in tensors)


class KVCache:
    """Keys and values of one attention layer, ``[B, n_kv_heads, length, head_dim]``.

    ``update(k, v)`` appends the new positions and returns the keys and values of every
    position so far; ``get()`` returns them without appending; ``reset()`` sets the length to 0
    and keeps the buffers. With ``max_len`` the buffers are preallocated and exceeding it is an
    error; without it they grow by doubling, so decoding does not reallocate at every step.
    """

    def __init__(
        self,
        batch: int,
        n_kv_heads: int,
        head_dim: int,
        *,
        max_len: int | None = None,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        if max_len is not None and max_len < 1:
            raise ValueError(f"max_len={max_len} must be >= 1 (or None for a growing cache)")
        self.max_len = max_len
        self.length = 0
        shape = (batch, n_kv_heads, max_len or 0, head_dim)
        self.k = torch.empty(shape, device=device, dtype=dtype)
        self.v = torch.empty(shape, device=device, dtype=dtype)

    @property
    def capacity(self) -> int:
        """Positions the buffers hold before they must grow."""
        return self.k.shape[2]

    def get(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys and values of the ``length`` cached positions (views into the buffers)."""
        return self.k.narrow(2, 0, self.length), self.v.narrow(2, 0, self.length)

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append ``k, v [B, n_kv_heads, T_new, head_dim]``; return all cached keys and values."""
        if k.shape != v.shape or k.shape[:2] + k.shape[3:] != self.k.shape[:2] + self.k.shape[3:]:
            raise ValueError(
                f"KVCache holds [B, heads, *, head_dim] = {tuple(self.k.shape[:2])} + (*, {self.k.shape[3]}); "
                f"got keys {tuple(k.shape)} and values {tuple(v.shape)}"
            )
        end = self.length + k.shape[2]
        if end > self.capacity:
            if self.max_len is not None:
                raise ValueError(
                    f"KVCache is full: {self.length} + {k.shape[2]} positions exceed max_len={self.max_len}"
                )
            self._grow(max(end, 2 * self.capacity))
        self.k.narrow(2, self.length, k.shape[2]).copy_(k)
        self.v.narrow(2, self.length, v.shape[2]).copy_(v)
        self.length = end
        return self.get()

    def _grow(self, capacity: int) -> None:
        for name in ("k", "v"):
            old = getattr(self, name)
            new = old.new_empty(old.shape[:2] + (capacity,) + old.shape[3:])
            new[:, :, : self.length] = old[:, :, : self.length]
            setattr(self, name, new)

    def reset(self) -> None:
        self.length = 0

    def nbytes(self) -> int:
        """Bytes of the cached keys and values (the filled part of the buffers)."""
        return tensor_bytes(*self.get())

    def allocated_nbytes(self) -> int:
        """Bytes of the buffers, including preallocated or grown room not yet filled."""
        return tensor_bytes(self.k, self.v)


class HybridCache:
    """One layer cache per decoder layer application, in order (``n_loops * n_layers`` of them).

    Built by ``DecoderLM.new_cache``, which asks each mixer for
    ``mixer.new_cache(batch, device, dtype, max_len=...)``, so attention, MLA and KDA layers can
    mix in one model. ``length`` counts the tokens the model has consumed through this cache.
    """

    def __init__(self, layers: list[LayerCache]) -> None:
        self.layers = layers
        self.length = 0

    def __len__(self) -> int:
        return len(self.layers)

    def __getitem__(self, i: int) -> LayerCache:
        return self.layers[i]

    def advance(self, n_tokens: int) -> None:
        """Record that the model consumed ``n_tokens`` more positions (called by ``DecoderLM``)."""
        self.length += n_tokens

    def reset(self) -> None:
        for layer in self.layers:
            layer.reset()
        self.length = 0

    def nbytes(self) -> int:
        """Bytes of the live state of every layer cache."""
        return sum(layer.nbytes() for layer in self.layers)
