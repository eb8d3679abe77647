"""Tests of ftipbook.compare.measure: counted FLOPs and live tensor bytes against hand counts."""
from __future__ import annotations

import pytest
import torch

from ftipbook.compare import measure
from ftipbook.data.windows import BatchIterator
from ftipbook.model import ModelConfig, accounting, build_model

TINY = dict(vocab_size=61, d_model=32, n_layers=2, n_heads=4, d_ff=64, max_seq_len=48)


def tiny(**overrides):
    return build_model(ModelConfig(**{**TINY, **overrides}), seed=0)


def tiny_batch(b=2, t=16):
    docs = [list(range(1 + i, 40 + i)) for i in range(6)]
    return BatchIterator(docs, t, b, pad_id=0, seed=0).batch(0)


def test_linear_flops_by_hand():
    lin = torch.nn.Linear(6, 4)
    x = torch.randn(5, 6)
    _, fwd = measure.count_flops(lambda: lin(x))
    assert fwd.total == 2 * 5 * 6 * 4 and fwd.by_op == {"addmm": 240}
    x.requires_grad_(True)
    _, both = measure.count_flops(lambda: lin(x).sum().backward())
    # forward, input gradient and weight gradient: three 5x6x4 products
    assert both.total == 3 * 240


def test_cpu_attention_is_counted_with_the_sdpa_formula():
    b, h, t, d = 2, 4, 16, 8
    q = torch.randn(b, h, t, d)
    _, count = measure.count_flops(lambda: torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True))
    assert count.total == 2 * (2 * b * h * t * t * d)  # QK^T and AV over the full T x T square
    with torch.utils.flop_counter.FlopCounterMode(display=False) as plain:
        torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    # PyTorch's registry alone: no CPU attention formula before 2.15, the same formula from 2.15 on
    assert plain.get_total_flops() in (0, count.total)


def test_grouped_query_attention_costs_what_its_repeated_heads_cost():
    """GQA hands the CPU kernel 2 key/value heads for 4 query heads; each query head still computes
    its own products, so the count equals that of the same attention with the heads repeated."""
    b, h, g, t, d = 2, 4, 2, 16, 8
    q, k = torch.randn(b, h, t, d), torch.randn(b, g, t, d)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    _, grouped = measure.count_flops(lambda: sdpa(q, k, k, is_causal=True, enable_gqa=True))
    full = k.repeat_interleave(h // g, dim=1)
    _, repeated = measure.count_flops(lambda: sdpa(q, full, full, is_causal=True))
    assert grouped.total == repeated.total == 2 * (2 * b * h * t * t * d)
    q.requires_grad_(True)
    _, both = measure.count_flops(lambda: sdpa(q, k, k, is_causal=True, enable_gqa=True).sum().backward())
    # backward: the recomputed scores, dV, dP, dQ and dK, five products where the forward has two
    assert both.by_op["_scaled_dot_product_flash_attention_for_cpu_backward"] == 5 * grouped.total // 2


@pytest.mark.parametrize("pattern", ["A", "KKKA"])
def test_decode_flops_match_the_declared_count(pattern):
    model = tiny(layer_pattern=pattern, n_layers=4, pos="none")
    assert measure.decode_flops_per_token(model, 12).total == accounting.flops_per_token(model.cfg, 12, "decode")


def test_training_step_flops_includes_attention_and_leaves_model_untouched():
    model = tiny(layer_pattern="A")
    batch = tiny_batch()
    count = measure.training_step_flops(model, batch)
    fwd = accounting.flops_per_token(model.cfg, 16, "prefill") * 2 * 16
    assert 3 * fwd < count.total < 4 * fwd  # backward ~ twice forward, plus the masked half of the scores
    layers, products, b, h, t, d = 2, 2, 2, 4, 16, 8
    assert count.by_op["_scaled_dot_product_flash_attention_for_cpu"] == layers * products * (2 * b * h * t * t * d)
    assert all(p.grad is None for p in model.parameters())


def test_live_bytes_by_hand():
    w, b, x = torch.randn(4, 6), torch.randn(4), torch.randn(5, 6)
    with measure.LiveTensorBytes([w, b, x]) as live:
        assert live.current == (24 + 4 + 30) * 4
        y = torch.nn.functional.linear(x, w, b)
        assert live.current == (24 + 4 + 30 + 20) * 4
        del y
        assert live.current == (24 + 4 + 30) * 4
    with measure.LiveTensorBytes() as live:
        a = torch.ones(10)
        c = a * 2
        view = c.view(2, 5)  # shares c's storage: not counted again
        assert live.current == 80
        del a
        d = torch.ones(100)
        assert live.current == 440
        del d
    assert (live.current, live.peak) == (40, 440) and view.shape == (2, 5)
    with pytest.raises(TypeError, match="roots"):
        measure.LiveTensorBytes([1.0])


def test_training_step_peak_bytes_lower_bound():
    model = tiny(layer_pattern="A")
    params = sum(p.numel() * 4 for p in model.parameters())
    peak = measure.training_step_peak_bytes(model, tiny_batch(), lambda m: torch.optim.AdamW(m.parameters()))
    assert peak >= 4 * params  # parameters, gradients, two Adam moments
    assert all(p.grad is None for p in model.parameters())


def test_optimizer_state_rule():
    lin = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(lin.parameters(), lr=0.1)
    lin(torch.ones(1, 3)).sum().backward()
    opt.step()
    rule = measure.optimizer_state_rule(opt)
    assert rule["state_tensors"] == ["exp_avg", "exp_avg_sq"] and rule["state_bytes"] == 2 * 8 * 4
    assert rule["bytes_per_parameter"] == {"exp_avg": 4.0, "exp_avg_sq": 4.0} and rule["class"] == "AdamW"


def test_bad_input():
    model = tiny()
    with pytest.raises(TypeError, match="fn must be callable"):
        measure.count_flops(3)
    with pytest.raises(ValueError, match="context=1"):
        measure.decode_flops_per_token(model, 1)
    with pytest.raises(TypeError, match="batch must be"):
        measure.training_step_flops(model, torch.zeros(2, 3))
    with pytest.raises(TypeError, match="model must be"):
        measure.training_step_flops("model", tiny_batch())
    with pytest.raises(TypeError, match="make_optimizer"):
        measure.training_step_peak_bytes(model, tiny_batch(), None)
    with pytest.raises(TypeError, match="optimizer must be"):
        measure.optimizer_state_rule(model)
