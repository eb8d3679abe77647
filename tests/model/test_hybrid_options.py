"""The options added for the Kimi Linear / DeepSeek-V3 layouts: sigmoid routing, latent-norm epsilon,
an unrotated decoupled key part (ftipbook.model.ffn, ftipbook.model.mla, ftipbook.model.config)."""
from __future__ import annotations

import itertools
import math

import pytest
import torch

from ftipbook.model import ModelConfig
from ftipbook.model.ffn import SigmoidTopKRouter, TopKRouter, make_router
from ftipbook.model.mla import MultiHeadLatentAttention


def _brute_force_route(logits, bias, k, n_groups, topk_groups, normalize, scale):
    """DeepSeek-V3 routing by enumeration, in float64 Python: every allowed expert set of size k,
    the best by the sum of biased affinities (equal affinities: the lexicographically first set)."""
    size = len(logits) // n_groups
    s = [1 / (1 + math.exp(-z)) for z in logits]
    c = [a + b for a, b in zip(s, bias)]
    group_score = [sum(sorted(c[g * size:(g + 1) * size], reverse=True)[:2]) for g in range(n_groups)]
    groups = sorted(range(n_groups), key=lambda g: (-group_score[g], g))[:topk_groups]
    allowed = [j for j in range(len(logits)) if j // size in groups]
    best = max(itertools.combinations(allowed, k), key=lambda e: sum(c[j] for j in e))
    w = {j: s[j] for j in best}
    total = sum(w.values())
    return {j: scale * (v / total if normalize else v) for j, v in w.items()}


@pytest.mark.parametrize("n_groups, topk_groups, normalize", [(1, 1, True), (4, 2, True), (4, 1, False), (2, 2, True)])
def test_sigmoid_router_matches_brute_force(n_groups, topk_groups, normalize):
    torch.manual_seed(0)
    router = SigmoidTopKRouter(6, 8, 2, n_groups=n_groups, topk_groups=topk_groups, normalize=normalize,
                               scale=2.5).double()
    with torch.no_grad():
        router.score_bias.copy_(torch.linspace(-0.3, 0.4, 8))
    z = torch.randn(20, 6, dtype=torch.float64)
    routing = router(z)
    for n in range(z.shape[0]):
        want = _brute_force_route(router.gate(z[n]).tolist(), router.score_bias.tolist(), 2, n_groups, topk_groups,
                                  normalize, 2.5)
        got = dict(zip(routing.experts[n].tolist(), routing.weights[n].tolist()))
        assert set(got) == set(want)
        for j in want:
            assert got[j] == pytest.approx(want[j], rel=1e-12)


def test_selection_bias_steers_choice_not_weights():
    """The bias only chooses: a large bias on expert 3 selects it, its weight is still its affinity."""
    router = SigmoidTopKRouter(4, 4, 1, normalize=False)
    z = torch.randn(5, 4)
    with torch.no_grad():
        router.score_bias[3] = 10.0
    routing = router(z)
    assert routing.experts.flatten().tolist() == [3] * 5
    torch.testing.assert_close(routing.weights.flatten(), torch.sigmoid(router.gate(z))[:, 3])


def test_make_router_keeps_the_softmax_default():
    assert type(make_router(ModelConfig(ffn="moe"))) is TopKRouter
    cfg = ModelConfig(ffn="moe", moe_router="sigmoid", moe_n_groups=4, moe_topk_groups=2, moe_routed_scale=2.0)
    router = make_router(cfg)
    assert isinstance(router, SigmoidTopKRouter) and (router.n_groups, router.topk_groups, router.scale) == (4, 2, 2.0)
    assert "score_bias" in dict(router.named_buffers()) and "score_bias" not in dict(router.named_parameters())


@pytest.mark.parametrize("fields, error, message", [
    (dict(ffn="moe", moe_router="topk"), ValueError, "moe_router='topk' is not supported"),
    (dict(ffn="moe", moe_n_groups=2), ValueError, "expert groups need moe_router='sigmoid'"),
    (dict(ffn="moe", moe_router="sigmoid", n_experts=6, moe_n_groups=4), ValueError, "moe_n_groups=4 does not divide"),
    (dict(ffn="moe", moe_router="sigmoid", moe_n_groups=2, moe_topk_groups=3), ValueError, "moe_topk_groups=3 exceeds"),
    (dict(ffn="moe", moe_router="sigmoid", n_experts=4, moe_n_groups=4, moe_topk_groups=2), ValueError,
     "each group needs at least 2"),
    (dict(ffn="moe", moe_router="sigmoid", top_k=5, moe_n_groups=4, moe_topk_groups=2), ValueError,
     "top_k=5 exceeds the 4 experts"),
    (dict(moe_routed_scale=0.0), ValueError, "moe_routed_scale=0.0 must be > 0"),
    (dict(moe_routed_scale=float("nan")), ValueError, "moe_routed_scale=nan"),
    (dict(moe_n_groups=0), ValueError, "moe_n_groups=0 must be an int >= 1"),
    (dict(mla_latent_norm_eps=0.0), ValueError, "mla_latent_norm_eps=0.0 must be > 0"),
    (dict(mla_latent_norm_eps="small"), TypeError, "mla_latent_norm_eps='small' must be a real number"),
    (dict(mla_rotate_decoupled=1), TypeError, "mla_rotate_decoupled=1 must be True or False"),
    (dict(moe_norm_topk=None), TypeError, "moe_norm_topk=None must be True or False"),
    (dict(moe_dense_layers=1), ValueError, "moe_dense_layers=1 needs ffn='moe'"),
    (dict(ffn="moe", n_layers=2, moe_dense_layers=3), ValueError, "at most n_layers=2"),
    (dict(moe_dense_layers=-1), ValueError, "moe_dense_layers=-1 must be an int >= 0"),
])
def test_new_fields_refuse_bad_values(fields, error, message):
    with pytest.raises(error, match=message):
        ModelConfig(**fields)


def test_latent_norm_epsilon():
    layer = MultiHeadLatentAttention(ModelConfig(layer_pattern="M", q_lora_rank=8, mla_latent_norm_eps=1e-3))
    assert layer.kv_a_norm.eps == layer.q_a_norm.eps == 1e-3
    default = MultiHeadLatentAttention(ModelConfig(layer_pattern="M", q_lora_rank=8, norm_eps=1e-4))
    assert default.kv_a_norm.eps == default.q_a_norm.eps == 1e-4
    with pytest.raises(ValueError, match="latent_norm_eps=-1"):
        MultiHeadLatentAttention.from_dims(d_model=8, n_heads=2, head_dim=4, kv_lora_rank=4, latent_norm_eps=-1)


def test_unrotated_decoupled_part_is_position_free():
    """rotate=False: spreading the positions apart leaves the outputs unchanged and the key part is
    still cached; with rotation the same change of relative positions changes them."""
    torch.manual_seed(0)
    x = torch.randn(2, 5, 16)
    positions = torch.arange(5).expand(2, 5)
    for rotate in (False, True):
        torch.manual_seed(1)
        layer = MultiHeadLatentAttention.from_dims(d_model=16, n_heads=2, head_dim=4, kv_lora_rank=6,
                                                   rope_head_dim=4, rotate=rotate)
        moved = (layer(x, positions=3 * positions) - layer(x, positions=positions)).abs().max()
        assert layer.nope is (not rotate)
        assert bool(moved < 1e-6) is (not rotate)
        cache = layer.new_cache(2)
        layer(x, cache=cache)
        assert cache.k_rope.shape == (2, 5, 4)


def test_first_dense_layers():
    """moe_dense_layers=2: layers 0 and 1 hold a dense expert_ffn of width d_ff, the rest a MoE."""
    from ftipbook.model import build_model
    from ftipbook.model.ffn import FeedForward, MoEFeedForward

    cfg = ModelConfig(ffn="moe", n_layers=4, moe_dense_layers=2, expert_ffn="gelu", d_ff=48, d_expert=16)
    model = build_model(cfg)
    kinds = [type(block.ffn.fn) for block in model.blocks]
    assert kinds == [FeedForward, FeedForward, MoEFeedForward, MoEFeedForward]
    assert [model.blocks[i].ffn.fn.kind for i in (0, 1)] == ["gelu", "gelu"]
    assert model.blocks[0].ffn.fn.up.out_features == 48
    assert cfg.ffn_config(3) is cfg and cfg.ffn_config(0).ffn == "gelu"
