"""Analytic counts of model/accounting.py equal what the live model holds and executes."""
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from ftipbook.model import accounting
from ftipbook.model.ffn import MoEFeedForward

CONFIGS = {
    "rope-swiglu": dict(),
    "gqa-bias-tied": dict(n_kv_heads=2, qkv_bias=True, out_bias=True, tie_embeddings=True, unembed_bias=True),
    "mqa-learned-layernorm": dict(n_kv_heads=1, pos="learned", norm="layernorm", ffn="gelu", ffn_bias=True),
    "post-nofinal-relu": dict(mixer_placement="post", ffn_placement="post", final_norm=False, ffn="relu"),
    "moe-shared": dict(ffn="moe", n_experts=6, top_k=2, n_shared_experts=1, d_expert=16, ffn_bias=True),
    "moe-first-dense-sigmoid": dict(ffn="moe", n_layers=3, moe_dense_layers=2, n_experts=4, top_k=2, d_expert=8,
                                    moe_router="sigmoid", moe_n_groups=2, moe_topk_groups=1),
    "looped": dict(n_layers=1, n_loops=3, head_dim=16),
    "hybrid-KKKA": dict(layer_pattern="KKKA", n_layers=4),
    "hybrid-MA": dict(layer_pattern="MA"),
}
ids, configs = list(CONFIGS), list(CONFIGS.values())


@pytest.mark.parametrize("overrides", configs, ids=ids)
def test_param_count_matches_live_model(make_model, overrides):
    model = make_model(**overrides)
    assert accounting.param_count(model.cfg) == accounting.measured_param_count(model)


def test_active_params_match_what_one_token_reads(make_model):
    model = make_model(**CONFIGS["moe-shared"])
    called = set()
    for moe in (m for m in model.modules() if isinstance(m, MoEFeedForward)):
        for expert in moe.experts:
            expert.register_forward_hook(lambda mod, *_: called.add(mod))
    model(torch.tensor([[7]]))
    routed = {p for m in model.modules() if isinstance(m, MoEFeedForward) for e in m.experts for p in e.parameters()}
    read = [p for p in model.parameters() if p not in routed] + [p for e in called for p in e.parameters()]
    assert accounting.active_param_count(model.cfg) == sum(p.numel() for p in read)
    assert accounting.active_param_count(model.cfg) < accounting.param_count(model.cfg)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("overrides", configs, ids=ids)
def test_cache_bytes_match_live_cache(make_model, overrides, dtype):
    model = make_model(dtype=dtype, **overrides)
    cache = model.new_cache(3)
    with torch.no_grad():
        model(torch.randint(0, 61, (3, 11)), cache=cache)
    assert cache.nbytes() == accounting.cache_bytes(model.cfg, 11, batch=3, dtype=dtype)


def test_kv_bytes_per_token(make_cfg):
    cfg = make_cfg(n_kv_heads=2, n_layers=3)
    assert accounting.kv_bytes_per_token(cfg) == 3 * 2 * 2 * cfg.d_head * 4
    assert accounting.kv_bytes_per_token(cfg, torch.bfloat16) == 3 * 2 * 2 * cfg.d_head * 2


def _math_sdpa(q, k, v, attn_mask=None, is_causal=False, enable_gqa=False, scale=None, dropout_p=0.0):
    """SDPA as explicit matmuls, so FlopCounterMode sees the score and value products on CPU."""
    if enable_gqa:
        k = k.repeat_interleave(q.shape[-3] // k.shape[-3], dim=-3)
        v = v.repeat_interleave(q.shape[-3] // v.shape[-3], dim=-3)
    scores = (q @ k.transpose(-2, -1)) * (scale if scale is not None else q.shape[-1] ** -0.5)
    if is_causal:
        scores = scores.masked_fill(~torch.ones(scores.shape[-2:], dtype=torch.bool).tril(), float("-inf"))
    if attn_mask is not None:
        scores = scores.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else scores + attn_mask
    return torch.softmax(scores, dim=-1) @ v


def _flops(fn):
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


@pytest.mark.parametrize("overrides", configs, ids=ids)
def test_decode_flops_match_flop_counter(make_model, overrides, monkeypatch):
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", _math_sdpa)
    model = make_model(**overrides)
    tokens = torch.randint(0, 61, (1, 12))
    with torch.no_grad():
        cache = model.new_cache(1)
        model(tokens[:, :11], cache=cache)
        measured = _flops(lambda: model(tokens[:, 11:], cache=cache))
    assert measured == accounting.flops_per_token(model.cfg, 12, "decode")


@pytest.mark.parametrize("overrides", [c for k, c in CONFIGS.items() if "hybrid" not in k],
                         ids=[k for k in CONFIGS if "hybrid" not in k])
def test_prefill_flops_match_flop_counter_up_to_the_masked_half(make_model, overrides, monkeypatch):
    """A dense-mask kernel computes all T^2 scores; the convention counts the causal T(T+1)/2."""
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", _math_sdpa)
    model = make_model(**overrides)
    cfg, t = model.cfg, 10
    with torch.no_grad():
        measured = _flops(lambda: model(torch.randint(0, 61, (1, t))))
    masked = cfg.n_loops * cfg.n_layers * 4 * cfg.n_heads * cfg.d_head * (t * t - t * (t + 1) // 2)
    assert measured == accounting.flops_per_token(cfg, t, "prefill") * t + masked


def test_flops_argument_checks(make_cfg):
    with pytest.raises(ValueError, match="mode='train' is not one of"):
        accounting.flops_per_token(make_cfg(), 4, "train")
    with pytest.raises(ValueError, match="context=0 must be >= 1"):
        accounting.flops_per_token(make_cfg(), 0)
