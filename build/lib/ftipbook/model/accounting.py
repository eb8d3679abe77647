"""Analytic parameter, FLOP and cache-byte counts of a ``ModelConfig`` (ftip-000V, 000Y, 00KY).

Each formula here is checked in ``tests/model/test_accounting.py`` against a live model:
parameters against the module's tensors, cache bytes against the tensors of a filled cache,
FLOPs against ``torch.utils.flop_counter.FlopCounterMode``.

Conventions:

- *Parameters* count each distinct tensor once (a tied unembedding is the embedding).
- *Active parameters* are those a token's forward reads: all of them except the routed experts
  it does not select (embedding and unembedding matrices are counted whole).
- *FLOPs per token* are forward-pass matrix-product FLOPs, 2 per multiply-add: every weight
  matrix, the router, ``QK^T`` and ``AV``. Norms, activations, softmax, RoPE, biases and the
  embedding lookup are not counted. ``mode="decode"`` is one new token at context ``T`` (it
  attends to ``T`` keys, itself included); ``mode="prefill"`` is the per-token average over a
  causal prefill of ``T`` tokens, ``(T + 1) / 2`` keys per query. Kernels that compute the full
  ``T x T`` score matrix under a causal mask execute more than this count.
- *Cache bytes* are those of the decoding state after ``T`` positions, per sequence, in ``dtype``.

Per-layer numbers come from the mixer classes (``param_count``, ``cache_bytes``,
``flops_per_token`` static methods), so MLA and KDA layers account for themselves.
"""
from __future__ import annotations

import torch
from torch import nn

from ftipbook.model.block import mixer_class
from ftipbook.model.config import ModelConfig

MODES = ("prefill", "decode")


def _mixer_stat(letter: str, stat: str):
    cls = mixer_class(letter)
    if not hasattr(cls, stat):
        raise NotImplementedError(f"{cls.__name__} (layer letter {letter!r}) does not define the static method {stat}")
    return getattr(cls, stat)


def dense_ffn_params(d_model: int, d_ff: int, kind: str, bias: bool) -> int:
    """``F(z) = phi(z W1 + b1) W2 + b2``: ``2 d d_ff`` weights (``3 d d_ff`` for SwiGLU) plus biases."""
    up = 2 * d_ff if kind == "swiglu" else d_ff
    return d_model * up + d_ff * d_model + (up + d_model) * bias


def ffn_params(cfg: ModelConfig, *, active: bool = False, bias: bool | None = None) -> int:
    """Parameters of one feed-forward sublayer; ``active=True`` keeps only ``top_k`` routed experts,
    ``bias=False`` counts weight matrices only."""
    bias = cfg.ffn_bias if bias is None else bias
    if cfg.ffn != "moe":
        return dense_ffn_params(cfg.d_model, cfg.d_ff, cfg.ffn, bias)
    expert = dense_ffn_params(cfg.d_model, cfg.expert_width, cfg.expert_ffn, bias)
    routed = cfg.top_k if active else cfg.n_experts
    return cfg.d_model * cfg.n_experts + (routed + cfg.n_shared_experts) * expert


def norm_params(cfg: ModelConfig) -> int:
    return cfg.d_model * (2 if cfg.norm == "layernorm" else 1)


def param_count(cfg: ModelConfig, *, active: bool = False) -> int:
    """Analytic number of parameters of ``DecoderLM(cfg)`` (``active=True``: see module docstring)."""
    total = cfg.vocab_size * cfg.d_model + (cfg.max_seq_len * cfg.d_model if cfg.pos == "learned" else 0)
    for i, letter in enumerate(cfg.layer_kinds):
        total += _mixer_stat(letter, "param_count")(cfg) + ffn_params(cfg.ffn_config(i), active=active)
        total += 2 * norm_params(cfg)
    total += norm_params(cfg) if cfg.final_norm else 0
    total += 0 if cfg.tie_embeddings else cfg.vocab_size * cfg.d_model
    return total + (cfg.vocab_size if cfg.unembed_bias else 0)


def active_param_count(cfg: ModelConfig) -> int:
    """Parameters one token's forward reads (all but its unselected routed experts)."""
    return param_count(cfg, active=True)


def measured_param_count(model: nn.Module) -> int:
    """Parameters of a live module, each distinct tensor once."""
    return sum(p.numel() for p in model.parameters())


def ffn_flops_per_token(cfg: ModelConfig) -> int:
    """``2 x`` the weight entries one token multiplies in a feed-forward sublayer (router included)."""
    return 2 * ffn_params(cfg, active=True, bias=False)


def flops_per_token(cfg: ModelConfig, context: int, mode: str = "prefill") -> float:
    """Forward matrix-product FLOPs per token at context ``T = context`` (convention above)."""
    if mode not in MODES:
        raise ValueError(f"mode={mode!r} is not one of {MODES}")
    if context < 1:
        raise ValueError(f"context={context} must be >= 1")
    mixer = {k: _mixer_stat(k, "flops_per_token")(cfg, context, mode) for k in set(cfg.layer_kinds)}
    per_pass = sum(mixer[k] + ffn_flops_per_token(cfg.ffn_config(i)) for i, k in enumerate(cfg.layer_kinds))
    return cfg.n_loops * per_pass + 2 * cfg.d_model * cfg.vocab_size


def cache_bytes(cfg: ModelConfig, length: int, *, batch: int = 1, dtype: torch.dtype = torch.float32) -> int:
    """Analytic bytes of a ``DecoderLM(cfg)`` decoding cache after ``length`` positions."""
    per_pass = sum(_mixer_stat(k, "cache_bytes")(cfg, length, dtype) for k in cfg.layer_kinds)
    return batch * cfg.n_loops * per_pass


def kv_bytes_per_token(cfg: ModelConfig, dtype: torch.dtype = torch.float32) -> int:
    """Growth of the cache per additional position and sequence (0 for pure constant-state layers)."""
    return cache_bytes(cfg, 2, dtype=dtype) - cache_bytes(cfg, 1, dtype=dtype)
