"""One decoder layer: a token mixer and a feed-forward sublayer, each on a residual branch (ftip-0012)."""
from __future__ import annotations

import importlib

import torch
from torch import nn

from ftipbook.model.attention import MultiHeadAttention
from ftipbook.model.cache import LayerCache
from ftipbook.model.config import MIXERS, ModelConfig
from ftipbook.model.ffn import make_ffn
from ftipbook.model.norm import Residual, make_norm

#: Mixers that live in modules written separately; imported on first use so that the rest of the
#: model works before (or without) them.
_LAZY_MIXERS = {
    "M": ("ftipbook.model.mla", "MultiHeadLatentAttention"),
    "K": ("ftipbook.model.kda", "KimiDeltaAttention"),
}


def mixer_class(letter: str) -> type[nn.Module]:
    """The mixer class of a layer-pattern letter: ``A`` attention, ``M`` MLA, ``K`` KDA."""
    if letter == "A":
        return MultiHeadAttention
    if letter not in _LAZY_MIXERS:
        raise ValueError(f"unknown layer-pattern letter {letter!r}; allowed: {sorted(MIXERS)}")
    module_name, class_name = _LAZY_MIXERS[letter]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name != module_name:
            raise
        raise NotImplementedError(
            f"layer-pattern letter {letter!r} ({MIXERS[letter]}) requires {module_name}, which is not available"
        ) from err
    return getattr(module, class_name)


class DecoderBlock(nn.Module):
    """Decoder layer ``l``: ``X -> R_ffn(R_mixer(X))`` with the declared norms and placements (ftip-006E).

    The mixer is chosen by the layer's pattern letter and reached as ``block.mixer.fn``; the
    feed-forward sublayer (dense or MoE) as ``block.ffn.fn``.
    """

    def __init__(self, cfg: ModelConfig, layer_idx: int) -> None:
        super().__init__()
        self.kind = cfg.layer_kinds[layer_idx]
        self.mixer = Residual(mixer_class(self.kind)(cfg, layer_idx), make_norm(cfg), cfg.mixer_placement)
        cfg = cfg.ffn_config(layer_idx)  # dense in the first moe_dense_layers layers of a MoE model
        self.ffn = Residual(make_ffn(cfg), make_norm(cfg), cfg.ffn_placement)

    def new_cache(
        self, batch: int, device: torch.device, dtype: torch.dtype, max_len: int | None = None
    ) -> LayerCache:
        """A fresh layer cache from the mixer (``KVCache``, ``LatentKVCache`` or ``KDAState``)."""
        return self.mixer.fn.new_cache(batch, device, dtype, max_len=max_len)

    def forward(
        self,
        x: torch.Tensor,
        *,
        positions: torch.Tensor,
        seg_ids: torch.Tensor | None = None,
        cache: LayerCache | None = None,
    ) -> torch.Tensor:
        return self.ffn(self.mixer(x, positions=positions, seg_ids=seg_ids, cache=cache))
