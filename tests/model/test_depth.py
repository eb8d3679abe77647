"""Depth-reuse interventions (ftip-00KG): recirculation, latent feedback, next-latent prediction."""
import dataclasses

import pytest
import torch

from ftipbook.model import ModelConfig, build_model, generate
from ftipbook.model.depth import (NEXT_TOKEN_OBJECTIVE, FeedbackCache, LatentFeedbackLM, NextLatentLM,
                                  latent_feedback_model, next_latent_model, objective_of, with_passes)
from ftipbook.model.transformer import parameter_roles
from ftipbook.train import TrainConfig, Trainer, build_optimizer
from tests.train.helpers import TINY, CountingStream

CFG = ModelConfig(vocab_size=61, d_model=32, n_layers=2, n_heads=4, d_ff=64, max_seq_len=64)


def tokens(b=2, t=11, seed=0):
    return torch.randint(0, CFG.vocab_size, (b, t), generator=torch.Generator().manual_seed(seed))


def _cached_logits(model, x, split):
    cache = model.new_cache(x.shape[0])
    out = [model(x[:, :split], cache=cache)]
    for t in range(split, x.shape[1]):
        out.append(model(x[:, t:t + 1], cache=cache))
    return torch.cat(out, dim=1)


def _randomize_feedback(model, seed=1):
    with torch.no_grad():
        model.feedback.weight.copy_(0.3 * torch.randn(model.feedback.weight.shape,
                                                      generator=torch.Generator().manual_seed(seed)))


def test_with_passes_is_a_view_that_runs_more_passes():
    model = build_model(CFG, seed=0)
    view = with_passes(model, 3)
    assert view.cfg.n_loops == 3 and model.cfg.n_loops == 1
    assert all(a is b for a, b in zip(view.parameters(), model.parameters()))
    looped = build_model(dataclasses.replace(CFG, n_loops=3), seed=5)
    looped.load_state_dict(model.state_dict())
    x = tokens()
    torch.testing.assert_close(view(x), looped(x), rtol=0, atol=0)
    assert not torch.allclose(view(x), model(x))
    assert len(view.new_cache(1)) == 6 and len(model.new_cache(1)) == 2


def test_with_passes_cached_decoding_equals_full_forward():
    view = with_passes(build_model(CFG, seed=0), 2)
    x = tokens()
    torch.testing.assert_close(_cached_logits(view, x, 4), view(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_with_passes_refuses_bad_counts(bad):
    with pytest.raises(ValueError, match="passes"):
        with_passes(build_model(CFG), bad)


def test_with_passes_refuses_non_decoders():
    with pytest.raises(TypeError, match="DecoderLM"):
        with_passes(torch.nn.Linear(2, 2), 2)


def test_latent_feedback_starts_as_the_plain_model():
    plain, fb = build_model(CFG, seed=3), latent_feedback_model(CFG, 3, seed=3)
    x = tokens()
    torch.testing.assert_close(fb(x), plain(x), rtol=0, atol=0)
    assert parameter_roles(fb)["feedback.weight"] == "latent feedback"


def test_latent_feedback_matches_a_hand_unrolled_recurrence():
    fb = latent_feedback_model(CFG, 3, seed=0)
    _randomize_feedback(fb)
    plain = build_model(CFG, seed=0)
    x = tokens(1, 7)
    e = plain.positions(plain.embed(x), torch.arange(7).unsqueeze(0))
    h = plain.hidden_states(x)
    for _ in range(2):  # pass k reads h^(k-1) one position earlier, zero at t = 0
        prev = torch.cat([torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1)
        z = e + prev @ fb.feedback.weight.T
        for block in plain.blocks:
            z = block(z, positions=torch.arange(7).unsqueeze(0))
        h = plain.norm(z)
    torch.testing.assert_close(fb.hidden_states(x), h, rtol=1e-5, atol=1e-6)


def test_latent_feedback_cached_decoding_equals_full_forward_and_carries_state():
    fb = latent_feedback_model(dataclasses.replace(CFG, n_loops=2), 3, seed=0)
    _randomize_feedback(fb)
    x = tokens()
    torch.testing.assert_close(_cached_logits(fb, x, 5), fb(x), rtol=1e-5, atol=1e-5)
    cache = fb.new_cache(2)
    assert isinstance(cache, FeedbackCache) and len(cache) == 3 * 2 * 2 and cache.carried_nbytes() == 0
    fb(x, cache=cache)
    assert cache.carried_nbytes() == 2 * 2 * CFG.d_model * 4
    cache.reset()
    assert cache.carried_nbytes() == 0 and cache.length == 0


def test_latent_feedback_generates_and_restarts_at_documents():
    fb = latent_feedback_model(CFG, 2, seed=0)
    _randomize_feedback(fb)
    out = generate(fb, [1, 2, 3], 5)
    assert len(out.new_tokens) == 5
    a, b = tokens(1, 4, seed=1), tokens(1, 5, seed=2)
    packed = fb(torch.cat([a, b], dim=1), seg_ids=torch.tensor([[0] * 4 + [1] * 5]))
    torch.testing.assert_close(packed[:, 4:], fb(b), rtol=1e-5, atol=1e-5)


def test_latent_feedback_refuses_foreign_cache_and_bad_passes():
    fb = latent_feedback_model(CFG, 2)
    plain_cache = build_model(dataclasses.replace(CFG, n_loops=2)).new_cache(1)
    with pytest.raises(TypeError, match="FeedbackCache"):
        fb(tokens(1, 3), cache=plain_cache)
    with pytest.raises(ValueError, match="feedback_passes"):
        LatentFeedbackLM(CFG, 0)


def test_next_latent_keeps_the_interface_and_adds_a_training_loss():
    plain, nl = build_model(CFG, seed=2), next_latent_model(CFG, 0.5, seed=2)
    x = tokens()
    nl.eval()
    torch.testing.assert_close(nl(x), plain(x), rtol=0, atol=0)
    assert nl.auxiliary_loss() is None
    nl.train()
    nl(x)
    h = nl.hidden_states(x)
    pred = nl.latent_head(h[:, :-1], nl.embed(x[:, 1:]))
    expected = ((pred - h[:, 1:]) ** 2).mean()
    torch.testing.assert_close(nl.auxiliary_loss(), 0.5 * expected)
    assert "next-latent" in objective_of(nl) and objective_of(plain) == NEXT_TOKEN_OBJECTIVE
    assert not any(k.startswith("latent_head") for k in nl.decoder_state_dict())
    assert parameter_roles(nl)["latent_head.up.weight"] == "next-latent head"


def test_next_latent_target_is_stop_gradient_and_masks_documents():
    nl = next_latent_model(CFG, 1.0, seed=0)
    x = tokens(1, 6)
    seg = torch.tensor([[0, 0, 0, 1, 1, 1]])
    nl.train()
    nl(x, seg_ids=seg)
    h = nl.hidden_states(x, seg_ids=seg).detach()
    pred = nl.latent_head(h[:, :-1], nl.embed(x[:, 1:]))
    err = ((pred - h[:, 1:]) ** 2).mean(-1)[0]
    torch.testing.assert_close(nl.latent_loss, err[[0, 1, 3, 4]].mean())
    nl.zero_grad()
    nl.latent_loss.backward()
    assert nl.latent_head.up.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), True, "1"])
def test_next_latent_refuses_bad_weights(bad):
    with pytest.raises(ValueError, match="latent_weight"):
        NextLatentLM(CFG, bad)


def test_trainer_adds_the_next_latent_loss():
    cfg = ModelConfig(**TINY)
    weights = {}
    for weight in (0.0, 1.0):
        model = next_latent_model(cfg, weight, seed=0)
        tc = TrainConfig(steps=2, batch_size=4, seq_len=16, lr=1e-2)
        Trainer(model, build_optimizer(model, tc), CountingStream(4, 16, TINY["vocab_size"]), tc).run()
        weights[weight] = model.unembed.weight.detach().clone(), model.latent_head.up.weight.detach().clone()
    assert not torch.equal(weights[0.0][1], weights[1.0][1])  # the head trains only when the loss is on
    assert not torch.equal(weights[0.0][0], weights[1.0][0])  # and the shared weights see its gradient
