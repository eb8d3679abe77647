"""The attention probes used by the chapters: AttentionRecorder and no_causal_mask (ftip-000N, 000P, 000U)."""
import pytest
import torch

from ftipbook.model import MultiHeadAttention, build_model, sdpa_reference
from ftipbook.model.attention import AttentionRecorder, no_causal_mask


def _positions(b, t):
    return torch.arange(t).expand(b, t)


@pytest.mark.parametrize("n_kv_heads", [4, 2])
def test_recorder_sees_the_per_head_projections(make_cfg, n_kv_heads):
    attn = MultiHeadAttention(make_cfg(pos="none", n_kv_heads=n_kv_heads)).double()
    x = torch.randn(2, 5, 32, dtype=torch.float64)
    with AttentionRecorder() as rec:
        y = attn(x, positions=_positions(2, 5))
    (call,) = rec.calls
    dh = attn.head_dim
    wq, wk, wv = attn.qkv.weight.split([4 * dh, n_kv_heads * dh, n_kv_heads * dh])
    torch.testing.assert_close(call.q[:, 1], x @ wq[dh:2 * dh].T)
    torch.testing.assert_close(call.k[:, -1], x @ wk[-dh:].T)
    torch.testing.assert_close(call.v[:, 0], x @ wv[:dh].T)
    assert call.is_causal and call.attn_mask is None and call.enable_gqa == (n_kv_heads != 4)
    # the recorded output is the per-head context that W^O maps back to width d
    torch.testing.assert_close(attn.out(call.output.transpose(1, 2).reshape(2, 5, -1)), y)


def test_recorder_records_nothing_outside_attention():
    with AttentionRecorder() as rec:
        torch.ones(3) @ torch.ones(3)
    assert rec.calls == []


def test_no_causal_mask_gives_bidirectional_attention_and_restores(make_cfg):
    attn = MultiHeadAttention(make_cfg(pos="none")).double()
    x, pos = torch.randn(1, 6, 32, dtype=torch.float64), _positions(1, 6)
    causal = attn(x, positions=pos)
    with no_causal_mask(attn), AttentionRecorder() as rec:
        full = attn(x, positions=pos)
    assert rec.calls[0].attn_mask is None and not rec.calls[0].is_causal
    q, k, v = rec.calls[0].q, rec.calls[0].k, rec.calls[0].v
    torch.testing.assert_close(full, attn.out(sdpa_reference(q, k, v)[0].transpose(1, 2).reshape(1, 6, -1)))
    assert not torch.allclose(full[:, :-1], causal[:, :-1])
    torch.testing.assert_close(full[:, -1], causal[:, -1])  # the last position sees everything anyway
    torch.testing.assert_close(attn(x, positions=pos), causal, rtol=0, atol=0)  # restored
    assert "score_mask" not in vars(attn)


def test_no_causal_mask_makes_a_nope_stack_permutation_equivariant(make_cfg):
    model = build_model(make_cfg(pos="none"), dtype=torch.float64).eval()
    x = torch.tensor([[5, 1, 9, 30, 2, 7]])
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    with torch.no_grad(), no_causal_mask(model):
        torch.testing.assert_close(model(x[:, perm]), model(x)[:, perm])
    with torch.no_grad():
        assert not torch.allclose(model(x[:, perm]), model(x)[:, perm])


@pytest.mark.parametrize("overrides, match", [
    (dict(pos="alibi"), "alibi"),
    (dict(layer_pattern="M"), "MultiHeadLatentAttention"),
    (dict(layer_pattern="K"), "KimiDeltaAttention"),
])
def test_no_causal_mask_refuses_what_it_cannot_unmask(make_cfg, overrides, match):
    model = build_model(make_cfg(**overrides))
    with pytest.raises(ValueError, match=match):
        with no_causal_mask(model):
            pass


def test_no_causal_mask_refuses_modules_without_attention_and_packed_input(make_cfg):
    with pytest.raises(ValueError, match="no MultiHeadAttention"):
        with no_causal_mask(torch.nn.Linear(2, 2)):
            pass
    model = build_model(make_cfg(pos="none"))
    tokens = torch.tensor([[1, 2, 3, 4]])
    with no_causal_mask(model), pytest.raises(ValueError, match="seg_ids=None"):
        model(tokens, seg_ids=torch.tensor([[1, 1, 2, 2]]))
