"""The JEPA-like model, its EMA update, latent loss and declared decoders (ftip-00KA, 00KB)."""
import copy

import pytest
import torch

from ftipbook.model import ModelConfig, build_model
from ftipbook.model.jepa import (JEPA, DecodedJEPA, JEPAConfig, LinearReadout, TiedEmbeddingReadout, ema_update,
                                 fit_linear_readout, latent_loss, next_position_mask)

ENC = ModelConfig(vocab_size=20, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=16, tie_embeddings=True)


def small(**kw):
    return JEPA(JEPAConfig(ENC, predictor_hidden=8, **kw), seed=0)


def test_config_validation():
    with pytest.raises(TypeError, match="encoder"):
        JEPAConfig({"d_model": 16})
    with pytest.raises(ValueError, match="tie_embeddings"):
        JEPAConfig(ModelConfig(vocab_size=20, d_model=16, n_layers=1, n_heads=2, d_ff=32))
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="predictor_hidden"):
            JEPAConfig(ENC, predictor_hidden=bad)
    for bad in (1.0, -0.1, float("nan"), "0.9"):
        with pytest.raises(ValueError, match="ema_decay"):
            JEPAConfig(ENC, ema_decay=bad)
    with pytest.raises(ValueError, match="loss='l1'"):
        JEPAConfig(ENC, loss="l1")
    cfg = JEPAConfig(ENC, predictor_hidden=8, ema_decay=0.5, loss="mse")
    assert JEPAConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="exactly the keys"):
        JEPAConfig.from_dict({"encoder": {}})


def test_target_starts_as_copy_and_has_no_gradient():
    m = small()
    for (n1, a), (n2, b) in zip(m.context.named_parameters(), m.target.named_parameters()):
        assert n1 == n2 and torch.equal(a, b)
    assert not any(p.requires_grad for p in m.target.parameters())
    tokens = torch.randint(0, 20, (2, 8), generator=torch.Generator().manual_seed(0))
    m.loss(tokens).backward()
    assert all(p.grad is None for p in m.target.parameters())
    assert m.context.embed.weight.grad is not None and m.predictor[0].weight.grad is not None
    assert m.trained_parameters() == sum(p.numel() for p in m.context.parameters()) + \
        sum(p.numel() for p in m.predictor.parameters())


def test_ema_update_matches_formula():
    a, b = build_model(ENC, seed=1), build_model(ENC, seed=2)
    before = copy.deepcopy(a)
    ema_update(a, b, 0.75)
    for (n, x), y, z in zip(a.named_parameters(), before.parameters(), b.parameters()):
        torch.testing.assert_close(x, 0.75 * y + 0.25 * z, rtol=0, atol=1e-7)
    ema_update(a, b, 0.0)
    assert all(torch.equal(x, z) for x, z in zip(a.parameters(), b.parameters()))
    c = copy.deepcopy(a)
    ema_update(a, build_model(ENC, seed=3), 1.0)
    assert all(torch.equal(x, z) for x, z in zip(a.parameters(), c.parameters()))


def test_ema_update_bad_input():
    a = build_model(ENC)
    for bad in (1.5, -0.1, float("nan"), None):
        with pytest.raises(ValueError, match="decay"):
            ema_update(a, a, bad)
    other = build_model(ModelConfig(vocab_size=20, d_model=16, n_layers=2, n_heads=2, d_ff=32, tie_embeddings=True))
    with pytest.raises(ValueError, match="different parameters"):
        ema_update(a, other, 0.5)
    wide = build_model(ModelConfig(vocab_size=21, d_model=16, n_layers=1, n_heads=2, d_ff=32, tie_embeddings=True))
    with pytest.raises(ValueError, match="shape"):
        ema_update(a, wide, 0.5)


def test_update_target_moves_towards_context():
    m = small(ema_decay=0.5)
    with torch.no_grad():
        m.context.embed.weight.add_(1.0)
    old = m.target.embed.weight.clone()
    m.update_target()
    torch.testing.assert_close(m.target.embed.weight, 0.5 * old + 0.5 * m.context.embed.weight)


def test_latent_loss_by_hand():
    p = torch.tensor([[[1.0, 0.0], [1.0, 1.0], [3.0, 4.0]]])
    t = torch.tensor([[[0.0, 2.0], [2.0, 2.0], [0.0, 0.0]]])
    mask = torch.tensor([[True, True, False]])
    assert latent_loss(p, t, mask, "cosine").item() == pytest.approx(0.5)  # (1 - 0) and (1 - 1)
    assert latent_loss(p, t, mask, "mse").item() == pytest.approx(((1 + 4) / 2 + (1 + 1) / 2) / 2)
    with pytest.raises(ValueError, match="no position"):
        latent_loss(p, t, torch.zeros_like(mask), "cosine")
    with pytest.raises(ValueError, match="kind"):
        latent_loss(p, t, mask, "l2")
    with pytest.raises(ValueError, match="must be"):
        latent_loss(p, t[:, :2], mask, "cosine")


def test_next_position_mask():
    seg = torch.tensor([[1, 1, 2, 2, 0]])
    assert next_position_mask(seg).tolist() == [[True, False, True, False]]


def test_loss_predicts_next_target_latent():
    m = small(loss="mse")
    tokens = torch.randint(0, 20, (2, 6), generator=torch.Generator().manual_seed(1))
    p, s = m.predicted_latents(tokens), m.target_latents(tokens)
    expected = (p[:, :-1] - s[:, 1:]).pow(2).mean()
    torch.testing.assert_close(m.loss(tokens), expected)
    with pytest.raises(ValueError, match="at least 2"):
        m.loss(tokens[:, :1])
    with pytest.raises(ValueError, match="outside"):
        m.loss(tokens + 100)


def test_decoders_and_decoded_law():
    m = small()
    w, b = torch.randn(20, 16), torch.randn(20)
    r = LinearReadout(w, b)
    tokens = torch.randint(0, 20, (1, 5), generator=torch.Generator().manual_seed(2))
    logits = DecodedJEPA(m, r)(tokens)
    torch.testing.assert_close(logits, m.predicted_latents(tokens) @ w.T + b)
    law = DecodedJEPA(m, r).next_token_law(tokens[0])
    torch.testing.assert_close(law, torch.softmax(logits[0, -1].double(), -1))
    tied = TiedEmbeddingReadout(m.context.embed.weight)
    torch.testing.assert_close(tied(torch.eye(16)), m.context.embed.weight.T)
    with pytest.raises(ValueError, match="bias"):
        LinearReadout(w, torch.zeros(3))
    with pytest.raises(ValueError, match="width"):
        r(torch.zeros(2, 3))
    with pytest.raises(TypeError, match="JEPA"):
        DecodedJEPA(build_model(ENC), r)
    with pytest.raises(ValueError, match="non-empty"):
        DecodedJEPA(m, r).next_token_law([])


def test_fit_linear_readout_separable():
    gen = torch.Generator().manual_seed(0)
    y = torch.randint(0, 4, (200,), generator=gen)
    x = torch.nn.functional.one_hot(y, 4).float() * 3 + 0.1 * torch.randn(200, 4, generator=gen)
    r, losses = fit_linear_readout(x, y, 4, steps=100, lr=0.1)
    assert losses[-1] < 0.1 * losses[0]
    assert (r(x).argmax(-1) == y).all()
    with pytest.raises(ValueError, match="tokens"):
        fit_linear_readout(x, y + 4, 4)
    with pytest.raises(ValueError, match="steps"):
        fit_linear_readout(x, y, 4, steps=0)
    with pytest.raises(ValueError, match="vocab_size"):
        fit_linear_readout(x, y, 1)
    for bad in (0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="lr="):
            fit_linear_readout(x, y, 4, lr=bad)
