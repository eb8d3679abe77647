"""MultiHeadAttention: MHA/GQA/MQA, masks, RoPE/ALiBi, against sdpa_reference and torch.nn (ftip-000P..000V)."""
import pytest
import torch
from torch import nn

from ftipbook.model import MultiHeadAttention, alibi_bias, alibi_slopes, causal_mask, document_mask, sdpa_reference
from ftipbook.model.masks import document_allowed, segment_positions


def _positions(b, t):
    return torch.arange(t).expand(b, t)


def _manual(attn, x, mask_for_head):
    """Concat_h softmax(Q_h K_h^T / sqrt(d_h) + M) V_h, then W^O, head by head."""
    h, g, dh = attn.n_heads, attn.n_kv_heads, attn.head_dim
    wq, wk, wv = attn.qkv.weight.split([h * dh, g * dh, g * dh])
    heads = []
    for i in range(h):
        j = i // (h // g)  # key/value head serving query head i
        q = x @ wq[i * dh:(i + 1) * dh].T
        k = x @ wk[j * dh:(j + 1) * dh].T
        v = x @ wv[j * dh:(j + 1) * dh].T
        heads.append(sdpa_reference(q, k, v, mask_for_head(i))[0])
    return attn.out(torch.cat(heads, dim=-1))


@pytest.mark.parametrize("n_kv_heads", [4, 2, 1])
def test_attention_equals_manual_heads(make_cfg, n_kv_heads):
    attn = MultiHeadAttention(make_cfg(pos="none", n_kv_heads=n_kv_heads))
    x = torch.randn(2, 7, 32)
    expected = _manual(attn, x, lambda i: causal_mask(7))
    torch.testing.assert_close(attn(x, positions=_positions(2, 7)), expected, rtol=1e-5, atol=1e-6)


def test_attention_matches_torch_multihead_attention(make_cfg):
    attn = MultiHeadAttention(make_cfg(pos="none"))
    ref = nn.MultiheadAttention(32, 4, bias=False, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(attn.qkv.weight)
        ref.out_proj.weight.copy_(attn.out.weight)
    x = torch.randn(2, 6, 32)
    future = ~torch.ones(6, 6, dtype=torch.bool).tril()
    expected, _ = ref(x, x, x, attn_mask=future, need_weights=False)
    torch.testing.assert_close(attn(x, positions=_positions(2, 6)), expected, rtol=1e-5, atol=1e-6)


def test_gqa_equals_mha_with_repeated_kv_weights(make_cfg):
    gqa = MultiHeadAttention(make_cfg(n_kv_heads=2))
    mha = MultiHeadAttention(make_cfg())
    dh = gqa.head_dim
    wq, wk, wv = gqa.qkv.weight.split([4 * dh, 2 * dh, 2 * dh])
    repeat = lambda w: w.view(2, dh, 32).repeat_interleave(2, dim=0).reshape(-1, 32)  # noqa: E731
    with torch.no_grad():
        mha.qkv.weight.copy_(torch.cat([wq, repeat(wk), repeat(wv)]))
        mha.out.weight.copy_(gqa.out.weight)
    x = torch.randn(2, 9, 32)
    torch.testing.assert_close(gqa(x, positions=_positions(2, 9)), mha(x, positions=_positions(2, 9)), rtol=1e-5, atol=1e-6)


def test_alibi_attention_equals_reference_with_bias(make_cfg):
    attn = MultiHeadAttention(make_cfg(pos="alibi"))
    x, pos = torch.randn(1, 6, 32), _positions(1, 6)
    bias = alibi_bias(alibi_slopes(4), pos, pos)[0]
    expected = _manual(attn, x[0], lambda i: causal_mask(6) + bias[i])
    torch.testing.assert_close(attn(x, positions=pos)[0], expected, rtol=1e-5, atol=1e-6)


def test_qkv_biases_are_used(make_cfg):
    attn = MultiHeadAttention(make_cfg(qkv_bias=True, out_bias=True))
    assert attn.qkv.bias is not None and attn.out.bias is not None


def test_document_mask_definition():
    seg = torch.tensor([[1, 1, 2, 2, 2, 0]])
    m = document_mask(seg)[0]
    keep = m == 0
    expected = torch.tensor([
        [1, 0, 0, 0, 0, 0],
        [1, 1, 0, 0, 0, 0],
        [0, 0, 1, 0, 0, 0],
        [0, 0, 1, 1, 0, 0],
        [0, 0, 1, 1, 1, 0],
        [0, 0, 0, 0, 0, 0],
    ], dtype=torch.bool)
    assert torch.equal(keep, expected)
    assert document_allowed(seg, pad_self=True)[0, 5].tolist() == [False] * 5 + [True]
    assert segment_positions(seg).tolist() == [[0, 1, 0, 1, 2, 0]]


def test_segment_ids_block_cross_document_attention(make_cfg):
    attn = MultiHeadAttention(make_cfg(pos="rope"))
    seg = torch.tensor([[1, 1, 1, 2, 2, 2, 2]])
    x = torch.randn(1, 7, 32)
    pos = segment_positions(seg)
    packed = attn(x, positions=pos, seg_ids=seg)
    first = attn(x[:, :3], positions=_positions(1, 3))
    second = attn(x[:, 3:], positions=_positions(1, 4))
    torch.testing.assert_close(packed, torch.cat([first, second], dim=1), rtol=1e-5, atol=1e-6)
