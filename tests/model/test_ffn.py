"""Dense feed-forward sublayers and top-k mixture of experts (ftip-000W, 000X, 000Y)."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ftipbook.model import FeedForward, MoEFeedForward, TopKRouter, load_balancing_loss, top_k_experts


@pytest.mark.parametrize("kind", ["relu", "gelu", "swiglu"])
def test_dense_ffn_is_positionwise(kind):
    f = FeedForward(8, 16, kind, bias=True)
    x = torch.randn(3, 5, 8)
    rows = torch.stack([torch.stack([f(x[b, t]) for t in range(5)]) for b in range(3)])
    torch.testing.assert_close(f(x), rows)


def test_dense_ffn_formulas():
    x = torch.randn(4, 8)
    relu = FeedForward(8, 16, "relu", bias=True)
    torch.testing.assert_close(relu(x), torch.relu(x @ relu.up.weight.T + relu.up.bias) @ relu.down.weight.T + relu.down.bias)
    glu = FeedForward(8, 16, "swiglu")
    silu = torch.nn.functional.silu
    torch.testing.assert_close(glu(x), (silu(x @ glu.gate.weight.T) * (x @ glu.up.weight.T)) @ glu.down.weight.T)
    assert relu.gate is None


def test_router_breaks_ties_by_lower_index():
    scores = torch.tensor([[1.0, 3.0, 3.0, 0.0, 3.0], [2.0, 2.0, 2.0, 2.0, 2.0], [0.0, 0.0, 5.0, 0.0, 0.0]])
    assert top_k_experts(scores, 2).tolist() == [[1, 2], [0, 1], [2, 0]]
    assert top_k_experts(scores, 4).tolist() == [[1, 2, 4, 0], [0, 1, 2, 3], [2, 0, 1, 3]]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=6, max_size=6), st.integers(1, 6))
def test_selection_is_the_k_best_in_the_total_order(values, k):
    scores = torch.tensor([values], dtype=torch.float32)
    expected = sorted(range(6), key=lambda j: (-values[j], j))[:k]
    assert top_k_experts(scores, k)[0].tolist() == expected


def test_router_weights_are_softmax_over_selected():
    router = TopKRouter(8, 6, 3)
    z = torch.randn(10, 8)
    r = router(z)
    torch.testing.assert_close(r.weights.sum(-1), torch.ones(10))
    torch.testing.assert_close(r.weights, torch.softmax(r.scores.gather(-1, r.experts), -1))


def _moe(make_cfg, **kw):
    torch.manual_seed(0)
    return MoEFeedForward(make_cfg(ffn="moe", n_experts=6, top_k=2, d_expert=16, **kw))


@pytest.mark.parametrize("shared", [0, 1])
def test_moe_equals_explicit_sum_over_selected_experts(make_cfg, shared):
    moe = _moe(make_cfg, n_shared_experts=shared)
    x = torch.randn(2, 5, 32)
    out = moe(x)
    r = moe.last_routing
    z = x.reshape(-1, 32)
    expected = torch.stack([
        sum(r.weights[n, i] * moe.experts[int(j)](z[n]) for i, j in enumerate(r.experts[n]))
        + sum((e(z[n]) for e in moe.shared), torch.zeros(32))
        for n in range(len(z))
    ])
    torch.testing.assert_close(out.reshape(-1, 32), expected, rtol=1e-5, atol=1e-6)


def test_unselected_experts_are_never_called(make_cfg):
    moe = _moe(make_cfg, n_shared_experts=1)
    with torch.no_grad():  # route every token to experts 4 and 1
        moe.router.gate.weight.zero_()
        moe.router.gate.weight[4, 0], moe.router.gate.weight[1, 0] = 2.0, 1.0
    calls = [0] * len(moe.experts)
    for j, expert in enumerate(moe.experts):
        expert.register_forward_hook(lambda *_, j=j: calls.__setitem__(j, calls[j] + 1))
    shared_calls = []
    moe.shared[0].register_forward_hook(lambda *_: shared_calls.append(1))
    x = torch.randn(3, 4, 32)
    x[..., 0] = x[..., 0].abs() + 0.1
    moe(x)
    assert calls == [0, 1, 0, 0, 1, 0]  # each selected expert runs once, on all its tokens
    assert shared_calls == [1]


def test_load_balancing_loss(make_cfg):
    moe = _moe(make_cfg, moe_aux_loss_coef=0.01)
    moe(torch.randn(4, 8, 32))
    r = moe.last_routing
    f = torch.stack([(r.experts == j).float().sum() for j in range(6)]) / r.experts.numel()
    p = torch.softmax(r.scores, -1).mean(0)
    torch.testing.assert_close(moe.aux_loss, 0.01 * 6 * (f * p).sum())
    uniform = type(r)(torch.zeros(6, 6), torch.tensor([[j, (j + 1) % 6] for j in range(6)]), torch.full((6, 2), 0.5))
    torch.testing.assert_close(load_balancing_loss(uniform), torch.tensor(1.0))
    plain = _moe(make_cfg)  # coefficient 0: not computed
    plain(torch.randn(1, 2, 32))
    assert plain.aux_loss is None


def test_moe_backward_reaches_selected_experts_only(make_cfg):
    moe = _moe(make_cfg)
    moe(torch.randn(1, 1, 32)).sum().backward()
    chosen = set(moe.last_routing.experts[0].tolist())
    for j, expert in enumerate(moe.experts):
        assert (expert.up.weight.grad is not None) == (j in chosen)


def test_routing_computes_in_float64_for_float64_inputs_and_float32_for_bfloat16():
    """Issue 11: float64 routing used to round its weights through float32 (errors near 6e-8)."""
    router = TopKRouter(8, 5, 3).double()
    z = torch.randn(40, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(3)) * 4
    r = router(z)
    chosen = r.scores.gather(-1, r.experts)
    by_hand = torch.exp(chosen - chosen.amax(-1, keepdim=True))
    by_hand = by_hand / by_hand.sum(-1, keepdim=True)
    assert r.weights.dtype == torch.float64 and (r.weights - by_hand).abs().max() < 1e-15
    p = torch.softmax(r.scores, -1).mean(0)
    f = torch.stack([(r.experts == j).double().sum() for j in range(5)]) / (40 * 3)
    loss = load_balancing_loss(r)
    assert loss.dtype == torch.float64 and abs(loss.item() - 5 * (f * p).sum().item()) < 1e-14
    low = TopKRouter(8, 5, 3).to(torch.bfloat16)
    zb = z.to(torch.bfloat16)
    rb = low(zb)
    wide = torch.softmax(rb.scores.gather(-1, rb.experts).float(), -1).to(torch.bfloat16)
    assert rb.weights.dtype == torch.bfloat16 and torch.equal(rb.weights, wide)
