"""Token embedding, embedding-stage positions, RoPE and ALiBi (ftip-000M, 000N, 000O)."""
import math

import pytest
import torch

from ftipbook.model import (
    LearnedPositions,
    RotaryEmbedding,
    SinusoidalPositions,
    TokenEmbedding,
    alibi_bias,
    alibi_slopes,
    apply_rotary,
)


def test_embedding_is_one_hot_product_and_permutation_equivariant():
    emb = TokenEmbedding(11, 5)
    x = torch.tensor([[3, 0, 10, 3]])
    one_hot = torch.nn.functional.one_hot(x, 11).float()
    torch.testing.assert_close(emb(x), one_hot @ emb.weight)
    perm = torch.tensor([2, 0, 3, 1])
    torch.testing.assert_close(emb(x[:, perm]), emb(x)[:, perm])


def test_sinusoidal_formula():
    pe = SinusoidalPositions(6)
    pos = torch.arange(5).unsqueeze(0)
    out = pe(torch.zeros(1, 5, 6), pos)[0]
    for t in range(5):
        for i in range(3):
            angle = t / 10000 ** (2 * i / 6)
            assert out[t, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert out[t, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


def test_learned_positions_refuse_long_sequences():
    pe = LearnedPositions(8, 4)
    x = torch.zeros(1, 9, 4)
    with pytest.raises(ValueError, match=r"position indices 0\.\.8 fall outside .* max_seq_len=8 rows \(positions 0\.\.7\)"):
        pe(x, torch.arange(9).unsqueeze(0))
    assert pe(x[:, :8], torch.arange(8).unsqueeze(0)).shape == (1, 8, 4)
    with pytest.raises(ValueError, match=r"position indices -1\.\.0"):
        pe(x[:, :2], torch.tensor([[-1, 0]]))


def test_decoder_refuses_bad_explicit_positions():
    """Offset positions are judged by their indices, not the sequence length; negative ones are refused."""
    from ftipbook.model import ModelConfig, build_model

    model = build_model(ModelConfig(vocab_size=10, d_model=8, n_heads=2, d_ff=16, max_seq_len=4, pos="learned"))
    x = torch.zeros(1, 2, dtype=torch.long)
    assert model(x, positions=torch.tensor([[2, 3]])).shape == (1, 2, 10)
    with pytest.raises(ValueError, match=r"position indices 3\.\.4 fall outside"):
        model(x, positions=torch.tensor([[3, 4]]))
    with pytest.raises(ValueError, match=r"0-based indices, got -1"):
        model(x, positions=torch.tensor([[-1, 0]]))
    with pytest.raises(ValueError, match=r"integer tensor of the tokens' shape \(1, 2\)"):
        model(x, positions=torch.tensor([[0.0, 1.0]]))


def test_rope_scores_depend_only_on_displacement():
    rope = RotaryEmbedding(8, 10000.0)
    q, k = torch.randn(1, 1, 1, 8), torch.randn(1, 1, 1, 8)

    def score(t, s):
        cq, sq = rope(torch.tensor([[t]]), torch.float32)
        ck, sk = rope(torch.tensor([[s]]), torch.float32)
        return (apply_rotary(q, cq, sq) * apply_rotary(k, ck, sk)).sum().item()

    for c in (1, 7, 100):
        assert score(5 + c, 2 + c) == pytest.approx(score(5, 2), abs=1e-4)


def test_rope_matches_transformers():
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    from transformers import LlamaConfig

    cfg = LlamaConfig(hidden_size=64, num_attention_heads=4, head_dim=16, rope_theta=5000.0)
    hf_rope = llama.LlamaRotaryEmbedding(cfg)
    ours = RotaryEmbedding(16, 5000.0)
    positions = torch.tensor([[0, 1, 2, 7, 33], [3, 4, 5, 6, 1000]])
    q, k = torch.randn(2, 4, 5, 16), torch.randn(2, 2, 5, 16)
    cos, sin = ours(positions, torch.float32)
    hf_cos, hf_sin = hf_rope(q, positions)
    torch.testing.assert_close(cos, hf_cos, rtol=0, atol=0)
    torch.testing.assert_close(sin, hf_sin, rtol=0, atol=0)
    hf_q, hf_k = llama.apply_rotary_pos_emb(q, k, hf_cos, hf_sin)
    torch.testing.assert_close(apply_rotary(q, cos, sin), hf_q, rtol=0, atol=0)
    torch.testing.assert_close(apply_rotary(k, cos, sin), hf_k, rtol=0, atol=0)


def test_rope_frequencies_survive_bf16_cast():
    rope = RotaryEmbedding(8, 10000.0).to(torch.bfloat16)
    assert rope.inv_freq.dtype == torch.float32


def test_alibi_slopes_press():
    torch.testing.assert_close(alibi_slopes(8), torch.tensor([2.0 ** -i for i in range(1, 9)]))
    # non-power of two: slopes of 4 heads, then every other slope of 8 heads
    expected = [2.0 ** -2, 2.0 ** -4, 2.0 ** -6, 2.0 ** -8, 2.0 ** -1, 2.0 ** -3]
    torch.testing.assert_close(alibi_slopes(6), torch.tensor(expected))


def test_alibi_bias_is_shift_invariant_and_penalizes_distance():
    slopes = alibi_slopes(4)
    q = torch.arange(5).unsqueeze(0)
    b0 = alibi_bias(slopes, q, q)
    b1 = alibi_bias(slopes, q + 11, q + 11)
    torch.testing.assert_close(b0, b1)
    assert b0[0, 0, 4, 0].item() == pytest.approx(-4 * 0.25)
    assert torch.all(b0.diagonal(dim1=-2, dim2=-1) == 0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_rotate_equals_apply_rotary_bit_for_bit(dtype):
    rope = RotaryEmbedding(16, 10000.0)
    positions = torch.randint(0, 5000, (2, 7), generator=torch.Generator().manual_seed(0))
    x = torch.randn(2, 7, 5, 16, dtype=dtype, requires_grad=True)  # [B, T, heads, d_h]
    got = rope.rotate(x, positions, head_axis=2)
    want = apply_rotary(x, *rope(positions, dtype), head_axis=2)
    assert torch.equal(got, want)
    upstream = torch.randn_like(got)
    assert torch.equal(torch.autograd.grad(got, x, upstream)[0], torch.autograd.grad(want, x, upstream)[0])
    heads_first = x.detach().transpose(1, 2)  # [B, heads, T, d_h], the layout of head_axis=1
    assert torch.equal(rope.rotate(heads_first, positions), apply_rotary(heads_first, *rope(positions, dtype)))


def test_rope_tables_follow_in_place_changes_of_positions():
    rope = RotaryEmbedding(8, 10000.0)
    positions = torch.tensor([[0, 1, 2]])
    first = rope(positions, torch.float32)[0].clone()
    positions += 10  # same tensor object, new values: the version counter moves
    assert torch.equal(rope(positions, torch.float32)[0], rope(positions.clone(), torch.float32)[0])
    assert not torch.equal(rope(positions, torch.float32)[0], first)
    with torch.inference_mode():  # inference tensors have no version counter: nothing may be reused
        inf_positions = torch.tensor([[0, 1, 2]])
        before = rope(inf_positions, torch.float32)[0]
        inf_positions += 10
        after = rope(inf_positions, torch.float32)[0]
        assert torch.equal(after, rope(torch.tensor([[10, 11, 12]]), torch.float32)[0])
        assert not torch.equal(before, after)
