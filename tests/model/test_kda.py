"""Kimi Delta Attention (ftip-00K3, ftip-00KY): the three forms agree, decoding, packing, state size."""
from __future__ import annotations


import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ftipbook.model.kda import (
    KDAState,
    KimiDeltaAttention,
    ShortConv1d,
    fla_available,
    kda_chunked,
    kda_gate,
    kda_recurrent,
    kda_recurrent_reference,
    kda_step,
    l2_normalize,
)

F64 = torch.float64


def _inputs(b=2, t=37, h=3, kd=8, vd=6, *, dtype=F64, seed=0, decay=1.0, grad=False):
    g = torch.Generator().manual_seed(seed)
    q = l2_normalize(torch.randn(b, t, h, kd, generator=g, dtype=dtype))
    k = l2_normalize(torch.randn(b, t, h, kd, generator=g, dtype=dtype))
    v = torch.randn(b, t, h, vd, generator=g, dtype=dtype)
    la = -decay * torch.rand(b, t, h, kd, generator=g, dtype=dtype)
    beta = torch.rand(b, t, h, generator=g, dtype=dtype)
    s0 = torch.randn(b, h, kd, vd, generator=g, dtype=dtype)
    xs = [q, k, v, la, beta, s0]
    if grad:
        xs = [x.clone().requires_grad_() for x in xs]
    return xs


def _layer(dtype=F64, seed=0, **kw):
    torch.manual_seed(seed)
    dims = dict(d_model=16, n_heads=2, head_dim=8, conv_kernel=4, chunk_size=8)
    dims.update(kw)
    return KimiDeltaAttention.from_dims(**dims).to(dtype)


# ---------------------------------------------------------------------------------------------
# the pure functions
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("t,chunk", [(1, 16), (7, 4), (37, 16), (70, 32), (100, 64), (29, 12)])
def test_recurrent_equals_chunked_float64_outputs_and_gradients(t, chunk):
    q, k, v, la, beta, s0 = xs = _inputs(t=t, grad=True)
    o1, s1 = kda_recurrent(q, k, v, la, beta, s0)
    o2, s2 = kda_chunked(q, k, v, la, beta, s0, chunk_size=chunk)
    assert o1.shape == o2.shape == v.shape and s1.shape == s2.shape == s0.shape
    torch.testing.assert_close(o2, o1, rtol=0, atol=1e-10)
    torch.testing.assert_close(s2, s1, rtol=0, atol=1e-10)
    w_o, w_s = torch.randn_like(o1), torch.randn_like(s1)
    g1 = torch.autograd.grad((o1 * w_o).sum() + (s1 * w_s).sum(), xs)
    g2 = torch.autograd.grad((o2 * w_o).sum() + (s2 * w_s).sum(), xs)
    for a, b in zip(g1, g2):
        torch.testing.assert_close(b, a, rtol=0, atol=1e-10)


def test_recurrent_equals_chunked_float32_loose():
    q, k, v, la, beta, s0 = _inputs(t=150, dtype=torch.float32)
    o1, s1 = kda_recurrent(q, k, v, la, beta, s0)
    o2, s2 = kda_chunked(q, k, v, la, beta, s0, chunk_size=64)
    assert o2.dtype == torch.float32 and s2.dtype == torch.float32
    torch.testing.assert_close(o2, o1, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(s2, s1, rtol=1e-4, atol=1e-4)


def test_low_precision_inputs_compute_in_float32():
    q, k, v, la, beta, s0 = _inputs(t=20, dtype=torch.float32)
    o_ref, s_ref = kda_recurrent(q, k, v, la, beta, s0)
    bf = [x.to(torch.bfloat16) for x in (q, k, v)]
    o, s = kda_chunked(*bf, la, beta.to(torch.bfloat16), s0, chunk_size=8)
    assert o.dtype == torch.bfloat16 and s.dtype == torch.float32
    torch.testing.assert_close(o.float(), o_ref, rtol=0.05, atol=0.05)


def test_chunked_is_stable_under_strong_decay():
    # cumulative log-decay reaches about -5000 within a chunk: exp(+G) would overflow
    q, k, v, la, beta, s0 = _inputs(t=130, decay=150.0)
    o1, s1 = kda_recurrent(q, k, v, la, beta, s0)
    for dtype in (F64, torch.float32):
        args = [x.to(dtype) for x in (q, k, v, la, beta, s0)]
        o2, s2 = kda_chunked(*args[:5], args[5], chunk_size=64)
        assert torch.isfinite(o2).all() and torch.isfinite(s2).all()
        tol = 1e-10 if dtype == F64 else 1e-4
        torch.testing.assert_close(o2.double(), o1, rtol=0, atol=tol)


def test_reset_zeroes_state_and_chunked_agrees():
    q, k, v, la, beta, s0 = _inputs(t=45)
    reset = torch.zeros(2, 45, dtype=torch.bool)
    reset[0, [0, 9, 10, 31]] = True
    reset[1, 16] = True  # exactly on a chunk boundary for chunk_size 16
    o1, s1 = kda_recurrent(q, k, v, la, beta, s0, reset=reset)
    for chunk in (4, 16, 64):
        o2, s2 = kda_chunked(q, k, v, la, beta, s0, reset=reset, chunk_size=chunk)
        torch.testing.assert_close(o2, o1, rtol=0, atol=1e-10)
        torch.testing.assert_close(s2, s1, rtol=0, atol=1e-10)
    # a reset is a fresh run from a zero state
    o_tail, s_tail = kda_recurrent(q[1:, 16:], k[1:, 16:], v[1:, 16:], la[1:, 16:], beta[1:, 16:])
    torch.testing.assert_close(o1[1:, 16:], o_tail, rtol=0, atol=1e-12)
    torch.testing.assert_close(s1[1:], s_tail, rtol=0, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(
    t=st.integers(1, 40),
    chunk=st.sampled_from([1, 3, 8, 16, 24, 64]),
    n_resets=st.integers(0, 4),
    seed=st.integers(0, 2**16),
    decay=st.sampled_from([0.01, 1.0, 30.0]),
)
def test_chunked_equals_recurrent_property(t, chunk, n_resets, seed, decay):
    q, k, v, la, beta, s0 = _inputs(b=1, t=t, h=2, kd=4, vd=3, seed=seed, decay=decay)
    g = torch.Generator().manual_seed(seed)
    reset = torch.zeros(1, t, dtype=torch.bool)
    reset[0, torch.randint(0, t, (n_resets,), generator=g)] = True
    o1, s1 = kda_recurrent(q, k, v, la, beta, s0, reset=reset)
    o2, s2 = kda_chunked(q, k, v, la, beta, s0, reset=reset, chunk_size=chunk)
    torch.testing.assert_close(o2, o1, rtol=0, atol=1e-10)
    torch.testing.assert_close(s2, s1, rtol=0, atol=1e-10)


def test_step_matches_the_written_update_rule():
    """S_t = (I - beta k k^T) Diag(alpha) S_{t-1} + beta k v^T and o_t = scale S_t^T q_t."""
    b, h, kd, vd = 1, 1, 5, 3
    g = torch.Generator().manual_seed(3)
    q, k = (l2_normalize(torch.randn(b, h, kd, generator=g, dtype=F64)) for _ in range(2))
    v = torch.randn(b, h, vd, generator=g, dtype=F64)
    la = -torch.rand(b, h, kd, generator=g, dtype=F64)
    beta = torch.rand(b, h, generator=g, dtype=F64)
    s = torch.randn(b, h, kd, vd, generator=g, dtype=F64)
    o, s_new = kda_step(q, k, v, la, beta, s)
    kk, bb = k[0, 0], beta[0, 0]
    expected = (torch.eye(kd, dtype=F64) - bb * torch.outer(kk, kk)) @ torch.diag(la[0, 0].exp()) @ s[0, 0] + bb * torch.outer(kk, v[0, 0])
    torch.testing.assert_close(s_new[0, 0], expected, rtol=0, atol=1e-14)
    torch.testing.assert_close(o[0, 0], kd**-0.5 * expected.T @ q[0, 0], rtol=0, atol=1e-14)
    assert kda_recurrent_reference is kda_recurrent


def test_state_stays_bounded():
    """With ||k|| = 1 and beta in (0, 1), I - beta k k^T has eigenvalues 1 - beta and 1, so
    ||S_t||_2 <= a ||S_{t-1}||_2 + beta_t ||v_t|| when every alpha <= a; no growth for v = 0."""
    b, t, h, kd, vd = 1, 400, 2, 6, 4
    g = torch.Generator().manual_seed(1)
    q = l2_normalize(torch.randn(b, t, h, kd, generator=g, dtype=F64))
    k = l2_normalize(torch.randn(b, t, h, kd, generator=g, dtype=F64))
    v = 3 * torch.randn(b, t, h, vd, generator=g, dtype=F64)
    a = 0.9
    la = torch.log(a * torch.rand(b, t, h, kd, generator=g, dtype=F64).clamp_min(1e-3))
    beta = torch.rand(b, t, h, generator=g, dtype=F64)
    s = 10 * torch.randn(b, h, kd, vd, generator=g, dtype=F64)
    bound = max(float(torch.linalg.matrix_norm(s, ord=2).max()), float((beta.unsqueeze(-1) * v).norm(dim=-1).max()) / (1 - a))
    for i in range(t):
        prev = torch.linalg.matrix_norm(s, ord=2)
        _, s = kda_step(q[:, i], k[:, i], v[:, i], la[:, i], beta[:, i], s)
        now = torch.linalg.matrix_norm(s, ord=2)
        assert (now <= a * prev + beta[:, i] * v[:, i].norm(dim=-1) + 1e-12).all()
        assert (now <= bound + 1e-9).all()
    # no decay, no values: the delta-rule part alone never increases the norm
    s = torch.randn(b, h, kd, vd, generator=g, dtype=F64)
    for i in range(50):
        prev = torch.linalg.matrix_norm(s, ord=2)
        _, s = kda_step(q[:, i], k[:, i], torch.zeros_like(v[:, i]), torch.zeros_like(la[:, i]), beta[:, i], s)
        assert (torch.linalg.matrix_norm(s, ord=2) <= prev + 1e-12).all()


def test_gate_gives_alpha_in_unit_interval():
    layer = _layer(torch.float32)
    x = torch.randn(3, 50, 16) * torch.tensor([1e-3, 1.0, 30.0]).view(3, 1, 1)
    la = kda_gate(layer.f_proj(x).view(3, 50, 2, 8), layer.A_log, layer.dt_bias)
    alpha = la.exp()
    assert torch.isfinite(la).all() and (la <= 0).all()
    assert (alpha >= 0).all() and (alpha <= 1).all()  # extreme inputs may round to 0 or 1
    assert (alpha[:2] > 0).all() and (alpha[:2] < 1).all()  # strictly inside (0, 1) for moderate inputs
    with pytest.raises(ValueError, match="A_log"):
        kda_gate(torch.zeros(2, 3, 4), torch.zeros(2))


def test_pure_function_shape_errors():
    q, k, v, la, beta, s0 = _inputs(t=5)
    with pytest.raises(ValueError, match="q must be"):
        kda_recurrent(q[0], k, v, la, beta)
    with pytest.raises(ValueError, match="k must"):
        kda_chunked(q, k[:, :4], v, la, beta)
    with pytest.raises(ValueError, match="log_alpha"):
        kda_chunked(q, k, v, la[..., :3], beta)
    with pytest.raises(ValueError, match="v must"):
        kda_chunked(q, k, v[:, :3], la, beta)
    with pytest.raises(ValueError, match="beta must"):
        kda_chunked(q, k, v, la, beta[..., :1])
    with pytest.raises(ValueError, match="initial_state"):
        kda_chunked(q, k, v, la, beta, s0[:, :, :2])
    with pytest.raises(ValueError, match="chunk_size"):
        kda_chunked(q, k, v, la, beta, chunk_size=0)
    with pytest.raises(ValueError, match="reset"):
        kda_chunked(q, k, v, la, beta, reset=torch.zeros(2, 5))
    with pytest.raises(ValueError, match="state must"):
        kda_step(q[:, 0], k[:, 0], v[:, 0], la[:, 0], beta[:, 0], s0[:1])


# ---------------------------------------------------------------------------------------------
# short convolution
# ---------------------------------------------------------------------------------------------
def test_short_conv_matches_conv1d_and_streams():
    torch.manual_seed(0)
    conv = ShortConv1d(6, 4, activation=None).double()
    x = torch.randn(2, 11, 6, dtype=F64)
    ref = torch.nn.functional.conv1d(x.transpose(1, 2), conv.weight, padding=3, groups=6)[..., :11].transpose(1, 2)
    y, state = conv(x)
    torch.testing.assert_close(y, ref)
    # streaming: one token at a time through the state, and the masked path without resets
    st = None
    ys = []
    for i in range(11):
        yi, st = conv(x[:, i : i + 1], conv_state=st)
        ys.append(yi)
    torch.testing.assert_close(torch.cat(ys, 1), ref)
    y_masked, state_masked = conv(x, reset=torch.zeros(2, 11, dtype=torch.bool))
    torch.testing.assert_close(y_masked, ref)
    torch.testing.assert_close(state_masked, state)


# ---------------------------------------------------------------------------------------------
# the layer
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["recurrent", "chunked"])
def test_modes_agree_and_step_decode_equals_full_forward(mode):
    layer = _layer()
    x = torch.randn(2, 21, 16, dtype=F64)
    pos = torch.arange(21).expand(2, 21)
    layer.mode = mode
    full = layer(x, positions=pos, seg_ids=None, cache=None)
    layer.mode = "chunked" if mode == "recurrent" else "recurrent"
    torch.testing.assert_close(layer(x, positions=pos, seg_ids=None, cache=None), full, rtol=0, atol=1e-12)
    layer.mode = mode
    with torch.no_grad():
        cache = layer.new_cache(2, x.device, x.dtype)
        steps = [layer(x[:, i : i + 1], positions=pos[:, i : i + 1], seg_ids=None, cache=cache) for i in range(21)]
        torch.testing.assert_close(torch.cat(steps, 1), full, rtol=0, atol=1e-12)
        # prefill a prefix, then decode the rest
        cache.reset()
        assert cache.n_tokens == 0 and cache.state.abs().max() == 0
        pre = layer(x[:, :13], positions=pos[:, :13], seg_ids=None, cache=cache)
        rest = [layer(x[:, i : i + 1], positions=pos[:, i : i + 1], seg_ids=None, cache=cache) for i in range(13, 21)]
        torch.testing.assert_close(torch.cat([pre, *rest], 1), full, rtol=0, atol=1e-12)
        assert cache.n_tokens == 21


@pytest.mark.parametrize("mode", ["recurrent", "chunked"])
def test_causality(mode):
    layer = _layer(mode=mode)
    x = torch.randn(1, 30, 16, dtype=F64)
    pos = torch.arange(30).expand(1, 30)
    y = layer(x, positions=pos, seg_ids=None, cache=None)
    x2 = x.clone()
    x2[:, 17] += torch.randn(16, dtype=F64)
    y2 = layer(x2, positions=pos, seg_ids=None, cache=None)
    torch.testing.assert_close(y2[:, :17], y[:, :17], rtol=0, atol=0)
    assert (y2[:, 17] - y[:, 17]).abs().max() > 1e-6


@pytest.mark.parametrize("mode", ["recurrent", "chunked"])
def test_packed_equals_separate(mode):
    layer = _layer(mode=mode)
    lengths = [[5, 9, 6], [12, 8]]  # 20 tokens per row; row 0 has a boundary at 5 and 14
    docs = [[torch.randn(1, n, 16, dtype=F64) for n in row] for row in lengths]
    x = torch.cat([torch.cat(row, 1) for row in docs], 0)
    seg = torch.stack([torch.cat([torch.full((n,), i) for i, n in enumerate(row)]) for row in lengths])
    pos = torch.stack([torch.cat([torch.arange(n) for n in row]) for row in lengths])
    packed = layer(x, positions=pos, seg_ids=seg, cache=None)
    for r, row in enumerate(docs):
        start = 0
        for d in row:
            n = d.shape[1]
            alone = layer(d, positions=torch.arange(n).view(1, n), seg_ids=None, cache=None)
            torch.testing.assert_close(packed[r : r + 1, start : start + n], alone, rtol=0, atol=1e-12)
            start += n
    # a constant segment id is the same as none
    torch.testing.assert_close(
        layer(x, positions=pos, seg_ids=torch.zeros_like(seg), cache=None), layer(x, positions=pos, seg_ids=None, cache=None)
    )


def test_packed_decoding_resets_across_calls():
    layer = _layer()
    a, b_doc = torch.randn(1, 7, 16, dtype=F64), torch.randn(1, 5, 16, dtype=F64)
    with torch.no_grad():
        cache = layer.new_cache(1, None, F64)
        layer(a, positions=torch.arange(7).view(1, 7), seg_ids=torch.zeros(1, 7, dtype=torch.long), cache=cache)
        out = [layer(b_doc[:, i : i + 1], positions=torch.tensor([[i]]), seg_ids=torch.ones(1, 1, dtype=torch.long), cache=cache)
               for i in range(5)]
        alone = layer(b_doc, positions=torch.arange(5).view(1, 5), seg_ids=None, cache=None)
    torch.testing.assert_close(torch.cat(out, 1), alone, rtol=0, atol=1e-12)


def test_gradients_flow_through_both_modes_equally():
    layer = _layer()
    x = torch.randn(2, 19, 16, dtype=F64)
    pos = torch.arange(19).expand(2, 19)
    grads = []
    for mode in ("recurrent", "chunked"):
        layer.zero_grad()
        layer.mode = mode
        layer(x, positions=pos, seg_ids=None, cache=None).square().sum().backward()
        grads.append({n: p.grad.clone() for n, p in layer.named_parameters()})
    for name in grads[0]:
        torch.testing.assert_close(grads[1][name], grads[0][name], rtol=0, atol=1e-10, msg=name)
    assert all(g.abs().sum() > 0 for g in grads[0].values())


def test_state_nbytes_analytic_equals_measured_and_is_fixed_in_T():
    layer = _layer(torch.float32, d_model=16, n_heads=2, head_dim=8, conv_kernel=4)
    b = 3
    analytic = b * 2 * 8 * 8 * 4 + 3 * b * 3 * 16 * 4
    cache = layer.new_cache(b, None, torch.float32)
    assert isinstance(cache, KDAState)
    assert cache.nbytes() == analytic == layer.state_nbytes(b)
    with torch.no_grad():
        for t in (1, 9, 40):
            layer(torch.randn(b, t, 16), positions=torch.arange(t).expand(b, t), seg_ids=None, cache=cache)
            assert cache.nbytes() == analytic
    assert cache.state.dtype == torch.float32
    c16 = layer.new_cache(1, None, torch.bfloat16)
    assert c16.state.dtype == torch.float32 and c16.conv_q.dtype == torch.bfloat16
    assert c16.nbytes() == layer.state_nbytes(1, torch.bfloat16) == 2 * 64 * 4 + 3 * 3 * 16 * 2


def test_config_construction_and_accounting_hooks():
    from torch.utils.flop_counter import FlopCounterMode

    from ftipbook.model.config import ModelConfig

    cfg = ModelConfig(d_model=32, n_heads=4, layer_pattern="K", n_layers=1, kda_n_heads=2, kda_head_dim=12,
                      kda_gate_rank=5, conv_kernel=3, kda_chunk_size=8)
    layer = KimiDeltaAttention(cfg, 0)
    assert (layer.n_heads, layer.head_dim, layer.gate_rank, layer.conv_kernel, layer.chunk_size) == (2, 12, 5, 3, 8)
    assert KimiDeltaAttention.param_count(cfg) == sum(p.numel() for p in layer.parameters())
    cache = layer.new_cache(2, None, torch.float32, max_len=100)
    assert 2 * KimiDeltaAttention.cache_bytes(cfg, 17, torch.float32) == cache.nbytes()
    with torch.no_grad():
        layer(torch.randn(2, 5, 32), positions=torch.arange(5).expand(2, 5), seg_ids=None, cache=cache)
        with FlopCounterMode(display=False) as counter:
            layer(torch.randn(1, 1, 32), positions=torch.zeros(1, 1, dtype=torch.long), seg_ids=None,
                  cache=layer.new_cache(1, None, torch.float32))
    assert counter.get_total_flops() == KimiDeltaAttention.flops_per_token(cfg, 6, "decode")
    default = KimiDeltaAttention(ModelConfig(layer_pattern="K"), 0)
    assert (default.n_heads, default.head_dim, default.gate_rank) == (4, 16, 16)


def test_layer_argument_errors():
    with pytest.raises(ValueError, match="mode"):
        _layer(mode="fast")
    with pytest.raises(ValueError, match="gate_activation"):
        _layer(gate_activation="tanh")
    with pytest.raises(ValueError, match="head_dim"):
        _layer(head_dim=0)
    layer = _layer()
    with pytest.raises(ValueError, match="x must be"):
        layer(torch.randn(2, 3, 15, dtype=F64), positions=None, seg_ids=None, cache=None)
    with pytest.raises(ValueError, match="seg_ids"):
        layer(torch.randn(2, 3, 16, dtype=F64), positions=None, seg_ids=torch.zeros(2, 4, dtype=torch.long), cache=None)
    with pytest.raises(ValueError, match="batch"):
        layer(torch.randn(2, 3, 16, dtype=F64), positions=None, seg_ids=None, cache=layer.new_cache(1, None, F64))


def test_swish_gate_and_decoder_integration():
    layer = _layer(gate_activation="swish")
    x = torch.randn(1, 6, 16, dtype=F64)
    assert torch.isfinite(layer(x, positions=None, seg_ids=None, cache=None)).all()
    transformer = pytest.importorskip("ftipbook.model.transformer")
    from ftipbook.model.config import ModelConfig

    cfg = ModelConfig(layer_pattern="KKKM", n_layers=4, mla_nope=True, pos="none")
    model = transformer.DecoderLM(cfg)
    tokens = torch.randint(0, cfg.vocab_size, (2, 9))
    with torch.no_grad():
        full = model(tokens)
        cache = model.new_cache(2)
        steps = torch.cat([model(tokens[:, i : i + 1], cache=cache) for i in range(9)], 1)
    torch.testing.assert_close(steps, full, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(not (torch.cuda.is_available() and fla_available()), reason="needs CUDA and flash-linear-attention")
def test_fla_chunk_kda_matches_reference():  # pragma: no cover - CUDA only
    q, k, v, la, beta, s0 = (x.float().cuda() for x in _inputs(b=1, t=200, h=2, kd=64, vd=64))
    o_ref, s_ref = kda_recurrent(q, k, v, la, beta, s0)
    from ftipbook.model.kda import _fla_chunk_kda

    o, s = _fla_chunk_kda(q, k, v, la, beta, s0, 64**-0.5)
    torch.testing.assert_close(o.float(), o_ref, rtol=2e-3, atol=2e-3)
    torch.testing.assert_close(s.float(), s_ref, rtol=2e-3, atol=2e-3)


def test_auto_mode_dispatch_on_cpu():
    from ftipbook.model.kda import AUTO_RECURRENT_MAX_T

    layer = _layer()
    assert layer.mode == "auto"
    assert layer._resolve_mode(1, fla_ok=False) == "step"
    assert layer._resolve_mode(AUTO_RECURRENT_MAX_T, fla_ok=False) == "recurrent"
    assert layer._resolve_mode(AUTO_RECURRENT_MAX_T + 1, fla_ok=False) == "chunked"
    layer.mode = "fla"  # without CUDA + FLA this falls back to the chunked form
    assert layer._resolve_mode(100, fla_ok=False) == "chunked" and layer._resolve_mode(1, fla_ok=False) == "step"
    layer.mode = "chunked"
    assert layer._resolve_mode(1, fla_ok=True) == "chunked"
