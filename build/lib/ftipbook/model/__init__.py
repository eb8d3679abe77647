"""The decoder-only Transformer of section ftip-000K: configuration, layers, model, decoding, accounting.

Typical use::

    from ftipbook import model
    cfg = model.ModelConfig(n_layers=2, pos="rope", ffn="swiglu")
    lm = model.build_model(cfg, seed=0)
    out = model.generate(lm, [1, 2, 3], max_new_tokens=5)
"""
from ftipbook.model.accounting import (
    active_param_count,
    cache_bytes,
    flops_per_token,
    kv_bytes_per_token,
    measured_param_count,
    param_count,
)
from ftipbook.model.attention import MultiHeadAttention, sdpa_reference
from ftipbook.model.block import DecoderBlock, mixer_class
from ftipbook.model.cache import HybridCache, KVCache
from ftipbook.model.candidates import candidate_seed, sample_candidates
from ftipbook.model.config import ModelConfig, parse_pattern
from ftipbook.model.ffn import (
    FeedForward, MoEFeedForward, Routing, SigmoidTopKRouter, TopKRouter, load_balancing_loss, make_router,
    top_k_experts,
)
from ftipbook.model.generate import (
    Generation,
    StopReason,
    continuation_logprobs,
    generate,
    sampling_law,
    sequence_logprob,
    stream_generate,
)
from ftipbook.model.hf import load_hf, save_hf
from ftipbook.model.hf_hybrid import load_hf_hybrid, save_hf_hybrid
from ftipbook.model.masks import NEG_INF, causal_mask, document_mask, segment_positions
from ftipbook.model.norm import LayerNorm, Placement, Residual, RMSNorm
from ftipbook.model.positional import (
    LearnedPositions,
    NoPositions,
    RotaryEmbedding,
    SinusoidalPositions,
    TokenEmbedding,
    alibi_bias,
    alibi_slopes,
    apply_rotary,
)
from ftipbook.model.loss import linear_cross_entropy
from ftipbook.model.transformer import DecoderLM, build_model, compile_model

__all__ = [
    "ModelConfig", "parse_pattern",
    "TokenEmbedding", "NoPositions", "SinusoidalPositions", "LearnedPositions", "RotaryEmbedding",
    "apply_rotary", "alibi_slopes", "alibi_bias",
    "NEG_INF", "causal_mask", "document_mask", "segment_positions",
    "sdpa_reference", "MultiHeadAttention",
    "FeedForward", "TopKRouter", "SigmoidTopKRouter", "make_router", "Routing", "MoEFeedForward", "top_k_experts",
    "load_balancing_loss",
    "LayerNorm", "RMSNorm", "Residual", "Placement",
    "KVCache", "HybridCache",
    "DecoderBlock", "mixer_class", "DecoderLM", "build_model", "compile_model", "linear_cross_entropy",
    "generate", "stream_generate", "Generation", "StopReason", "sampling_law",
    "sample_candidates", "candidate_seed",
    "sequence_logprob", "continuation_logprobs",
    "param_count", "active_param_count", "measured_param_count", "flops_per_token", "cache_bytes",
    "kv_bytes_per_token",
    "load_hf", "save_hf", "load_hf_hybrid", "save_hf_hybrid",
]
