"""Kimi Delta Attention (KDA), the recurrent mixer of Kimi Linear (items ftip-00K3, ftip-00KY, ftip-00KV).

Kimi Linear [kimi2025linear] (arXiv 2510.26692) interleaves KDA layers with full MLA layers (3:1,
Example ftip-00KV). Definition ftip-00K3 asks for the executable core checked here: the recurrent
(decode) form and the chunked (training) form of KDA compute the same function, and the state is a
fixed-size object independent of the context length, which is the ``sigma`` of the cache-memory
estimate in Example ftip-00KY. The layer follows the public flash-linear-attention (FLA)
``KimiDeltaAttention``.

Conventions (shared by every function in this module)
-----------------------------------------------------
Per head the state ``S`` is a ``[K, V]`` matrix (key width ``K``, value width ``V``); tensors use the
FLA layout ``q, k: [B, T, H, K]``, ``v: [B, T, H, V]``, ``log_alpha: [B, T, H, K]``,
``beta: [B, T, H]``, state ``[B, H, K, V]``. With ``alpha_t = exp(log_alpha_t) in (0, 1]^K`` the
gated delta rule is

    S_t = (I - beta_t k_t k_t^T) Diag(alpha_t) S_{t-1} + beta_t k_t v_t^T,
    o_t = scale * S_t^T q_t,                       scale = K ** -0.5 by default,

that is: decay each key channel, then write ``beta_t k_t (v_t - (Diag(alpha_t) S_{t-1})^T k_t)^T``
(the delta-rule correction of the decayed state's prediction), then read with the query. This is
the ordering of FLA's ``naive_recurrent_kda``. The output reads the state *after* the token's own
write. ``reset[b, t] = True`` zeroes the state before token ``t`` (a new packed document).

Three forms of the same map:

* :func:`kda_step` - one token from a recurrent state (decoding);
* :func:`kda_recurrent` (alias :func:`kda_recurrent_reference`) - a Python loop of ``kda_step``;
* :func:`kda_chunked` - the WY/UT-transform chunked form: within a chunk the corrected values
  solve a unit lower-triangular system, between chunks only a ``[K, V]`` state is passed.

Numerics: inputs in float64 are computed in float64, everything else in float32 (FLA computes in
float32 too); the recurrent state is kept in that compute dtype and outputs are cast back to the
dtype of ``v``. The chunked form never forms ``exp(+cumulative decay)``: for ``log_alpha <= 0``
every exponential it takes has a non-positive argument, so strong decay underflows harmlessly
instead of overflowing. ``log_alpha`` must be finite (use a large negative value, not ``-inf``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "KDAState",
    "KimiDeltaAttention",
    "ShortConv1d",
    "kda_chunked",
    "kda_gate",
    "kda_recurrent",
    "kda_recurrent_reference",
    "kda_step",
    "l2_normalize",
    "fla_available",
]

#: Defaults for fields the configuration does not (yet) name.
DEFAULT_GATE_ACTIVATION = "sigmoid"  # output gate of the gated RMSNorm (FLA: sigmoid)
DEFAULT_L2_EPS = 1e-6  # epsilon of the q/k L2 normalisation (FLA l2norm)
#: ``mode="auto"`` runs the plain recurrence up to this many tokens, the chunked form above it.
#: Measured on 2 CPU cores (torch 2.13, H=4, K=16): the chunked form is faster from T ~ 8 on,
#: forward and forward+backward (e.g. 17 ms vs 59 ms fwd+bwd at B=16, T=64).
AUTO_RECURRENT_MAX_T = 6
_MODES = ("auto", "recurrent", "chunked", "fla")
_GATE_ACTIVATIONS = ("sigmoid", "swish")


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


def l2_normalize(x: torch.Tensor, eps: float = DEFAULT_L2_EPS) -> torch.Tensor:
    """``x / sqrt(||x||^2 + eps)`` over the last axis (FLA's ``l2norm``)."""
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)


def kda_gate(raw: torch.Tensor, A_log: torch.Tensor, dt_bias: torch.Tensor | None = None) -> torch.Tensor:
    """Channel-wise log-decay ``log alpha = -exp(A_log_h) * softplus(raw + dt_bias)`` (FLA ``kda_gate``).

    ``raw`` is ``[..., H, K]``, ``A_log`` is ``[H]``, ``dt_bias`` is ``[H * K]`` or ``[H, K]``.
    The result is ``<= 0``, so ``alpha = exp(log alpha) in (0, 1]``; it is computed in float32 (or
    float64 for float64 inputs).
    """
    if raw.dim() < 2:
        raise ValueError(f"kda_gate expects raw of shape [..., H, K], got {tuple(raw.shape)}")
    h, kd = raw.shape[-2:]
    if A_log.shape != (h,):
        raise ValueError(f"A_log must have shape (H,) = ({h},), got {tuple(A_log.shape)}")
    cd = _compute_dtype(raw.dtype)
    z = raw.to(cd)
    if dt_bias is not None:
        if dt_bias.numel() != h * kd:
            raise ValueError(f"dt_bias must have H*K = {h * kd} entries, got shape {tuple(dt_bias.shape)}")
        z = z + dt_bias.to(cd).view(h, kd)
    return -A_log.to(cd).exp().view(h, 1) * F.softplus(z)


def _check_qkv(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, log_alpha: torch.Tensor, beta: torch.Tensor
) -> tuple[int, int, int, int, int]:
    if q.dim() != 4:
        raise ValueError(f"q must be [B, T, H, K], got shape {tuple(q.shape)}")
    b, t, h, kd = q.shape
    if k.shape != q.shape:
        raise ValueError(f"k must have the shape of q {tuple(q.shape)}, got {tuple(k.shape)}")
    if log_alpha.shape != q.shape:
        raise ValueError(f"log_alpha must have the shape of q {tuple(q.shape)} (one decay per key channel), got {tuple(log_alpha.shape)}")
    if v.dim() != 4 or v.shape[:3] != (b, t, h):
        raise ValueError(f"v must be [B, T, H, V] = [{b}, {t}, {h}, V], got {tuple(v.shape)}")
    if beta.shape != (b, t, h):
        raise ValueError(f"beta must be [B, T, H] = [{b}, {t}, {h}], got {tuple(beta.shape)}")
    if t < 1:
        raise ValueError("KDA needs at least one token (T >= 1)")
    return b, t, h, kd, v.shape[-1]


def _check_state(state: torch.Tensor | None, b: int, h: int, kd: int, vd: int, name: str = "initial_state") -> None:
    if state is not None and state.shape != (b, h, kd, vd):
        raise ValueError(f"{name} must be [B, H, K, V] = [{b}, {h}, {kd}, {vd}], got {tuple(state.shape)}")


def _check_reset(reset: torch.Tensor | None, b: int, t: int) -> None:
    if reset is not None and (reset.shape != (b, t) or reset.dtype != torch.bool):
        raise ValueError(f"reset must be a bool tensor [B, T] = [{b}, {t}], got {reset.dtype} {tuple(reset.shape)}")


# --------------------------------------------------------------------------------------------
# the three forms
# --------------------------------------------------------------------------------------------
def kda_step(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    log_alpha: torch.Tensor,
    beta: torch.Tensor,
    state: torch.Tensor,
    *,
    scale: float | None = None,
    reset: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One token of the gated delta rule (ftip-00K3): ``(o_t [B, H, V], S_t [B, H, K, V])``.

    ``q, k, log_alpha`` are ``[B, H, K]``, ``v`` is ``[B, H, V]``, ``beta`` is ``[B, H]``, ``state`` is
    ``S_{t-1}``, ``reset`` an optional ``[B]`` bool (zero the state first). ``q`` and ``k`` are used
    as given (the layer L2-normalises them). The state keeps its dtype (float32 / float64); the
    output has the dtype of ``v``. Pure: ``state`` is not modified.
    """
    if q.dim() != 3 or k.shape != q.shape or log_alpha.shape != q.shape:
        raise ValueError(
            f"kda_step expects q, k, log_alpha of one shape [B, H, K]; got {tuple(q.shape)}, "
            f"{tuple(k.shape)}, {tuple(log_alpha.shape)}"
        )
    b, h, kd = q.shape
    if v.dim() != 3 or v.shape[:2] != (b, h):
        raise ValueError(f"v must be [B, H, V] = [{b}, {h}, V], got {tuple(v.shape)}")
    if beta.shape != (b, h):
        raise ValueError(f"beta must be [B, H] = [{b}, {h}], got {tuple(beta.shape)}")
    _check_state(state, b, h, kd, v.shape[-1], "state")
    if reset is not None and (reset.shape != (b,) or reset.dtype != torch.bool):
        raise ValueError(f"reset must be a bool tensor [B] = [{b}], got {reset.dtype} {tuple(reset.shape)}")
    cd = state.dtype
    scale = kd**-0.5 if scale is None else scale
    qf, kf, vf = q.to(cd) * scale, k.to(cd), v.to(cd)
    s = state
    if reset is not None:
        s = s * (~reset).to(cd).view(b, 1, 1, 1)
    s = s * log_alpha.to(cd).exp().unsqueeze(-1)  # Diag(alpha_t) S_{t-1}
    pred = (kf.unsqueeze(-2) @ s).squeeze(-2)  # (Diag(alpha) S)^T k_t, [B, H, V]
    s = s + (beta.to(cd).unsqueeze(-1) * kf).unsqueeze(-1) * (vf - pred).unsqueeze(-2)  # rank-one update
    o = (qf.unsqueeze(-2) @ s).squeeze(-2)
    return o.to(v.dtype), s


def kda_recurrent(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    log_alpha: torch.Tensor,
    beta: torch.Tensor,
    initial_state: torch.Tensor | None = None,
    *,
    scale: float | None = None,
    reset: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Reference recurrence of ftip-00K3: a token-by-token loop of :func:`kda_step`.

    Shapes as in the module docstring; returns ``(o [B, T, H, V] in v.dtype, final_state [B, H, K, V])``
    with the state in float32 (float64 for float64 inputs). ``reset [B, T]`` (bool) zeroes the state
    before the marked tokens.
    """
    b, t, h, kd, vd = _check_qkv(q, k, v, log_alpha, beta)
    _check_state(initial_state, b, h, kd, vd)
    _check_reset(reset, b, t)
    cd = _compute_dtype(v.dtype)
    s = q.new_zeros(b, h, kd, vd, dtype=cd) if initial_state is None else initial_state.to(cd)
    outs = []
    for i in range(t):
        o, s = kda_step(
            q[:, i], k[:, i], v[:, i], log_alpha[:, i], beta[:, i], s,
            scale=scale, reset=None if reset is None else reset[:, i],
        )
        outs.append(o)
    return torch.stack(outs, dim=1), s


#: Name used by the chapter plan (ftip-00K3): the recurrent form is the reference.
kda_recurrent_reference = kda_recurrent


def _sub_size(c: int) -> int:
    """Diagonal-block size inside a chunk: 8 was fastest on CPU at C = 64 (4 and 16 are slower)."""
    for s in (8, 4):
        if c > s and c % s == 0:
            return s
    return c


def _decayed_grams(
    q: torch.Tensor, k: torch.Tensor, g: torch.Tensor, s: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Within-chunk decayed Gram matrices, stably.

    For ``x`` in ``{q, k}`` and cumulative log-decay ``g`` (non-increasing along the chunk axis):
    ``M[r, i] = sum_c x[r, c] k[i, c] exp(g[r, c] - g[i, c])``; returns ``(P, A)`` with ``P`` the
    inclusive (``i <= r``) query-key matrix and ``A`` the strict (``i < r``) key-key matrix,
    zero above. Shapes ``[..., C, K] -> [..., C, C]``.

    Diagonal ``s x s`` blocks use the pairwise exponent ``g_r - g_i <= 0``. Row block ``a`` against
    all earlier columns factors ``exp(g_r - g_e) exp(g_e - g_i)`` around the row ``e`` just before
    block ``a``: both factors are ``<= 1``, and the products are batched matmuls (the column factor
    is shared by ``P`` and ``A``).
    """
    *lead, c, kd = q.shape
    n = c // s
    dev = q.device
    qb, kb, gb = (x.reshape(*lead, n, s, kd) for x in (q, k, g))
    # diagonal blocks: e[r, i, :] = exp(g_r - g_i) for i <= r ------------------------------------
    incl = torch.ones(s, s, dtype=torch.bool, device=dev).tril()[:, :, None]  # [r, i, 1]
    diff = gb.unsqueeze(-2) - gb.unsqueeze(-3)  # [..., n, r, i, K]
    # masked entries get exponent 0 and are then zeroed: no overflow, no NaN in the gradient
    ek = diff.masked_fill(~incl, 0.0).exp() * (incl * kb.unsqueeze(-3))  # e_ri * k_i
    d2 = ek @ torch.stack([qb, kb], dim=-1)  # [..., n, r, i, 2]: sum_c e_ric k_ic {q_rc, k_rc}
    pd = d2[..., 0]
    ad = d2[..., 1] * torch.ones(s, s, dtype=q.dtype, device=dev).tril(-1)
    if n == 1:
        return pd.reshape(*lead, c, c), ad.reshape(*lead, c, c)
    eye_n = torch.eye(n, dtype=q.dtype, device=dev).view(n, 1, n, 1)
    p = (pd.unsqueeze(-2) * eye_n).reshape(*lead, c, c)
    a = (ad.unsqueeze(-2) * eye_n).reshape(*lead, c, c)
    # strictly earlier column blocks: anchor e_a = last row of block a-1 --------------------------
    ref = gb[..., :-1, -1, :]  # [..., n-1, K] anchors of row blocks 1..n-1
    rowf = (gb[..., 1:, :, :] - ref.unsqueeze(-2)).exp()  # [..., n-1, s, K], exponent <= 0
    col_block = torch.arange(c, device=dev) // s
    earlier = col_block.view(1, c) < torch.arange(1, n, device=dev).view(n - 1, 1)  # [n-1, C]
    expo = ref.unsqueeze(-2) - g.unsqueeze(-3)  # [..., n-1, C, K], <= 0 where `earlier`
    earlier = earlier[:, :, None]
    colf = expo.masked_fill(~earlier, 0.0).exp() * (earlier * k.unsqueeze(-3))
    rows = torch.cat([qb[..., 1:, :, :], kb[..., 1:, :, :]], dim=-2) * rowf.repeat(*(1,) * len(lead), 1, 2, 1)
    off = rows @ colf.transpose(-1, -2)  # [..., n-1, 2s, C]
    zero = off.new_zeros(*lead, 1, s, c)
    p = p + torch.cat([zero, off[..., :s, :]], dim=-3).reshape(*lead, c, c)
    a = a + torch.cat([zero, off[..., s:, :]], dim=-3).reshape(*lead, c, c)
    return p, a


def kda_chunked(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    log_alpha: torch.Tensor,
    beta: torch.Tensor,
    initial_state: torch.Tensor | None = None,
    *,
    scale: float | None = None,
    reset: torch.Tensor | None = None,
    chunk_size: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Chunked (WY/UT-transform) form of the gated delta rule (ftip-00K3), equal to :func:`kda_recurrent`.

    Split the sequence into chunks of ``C = chunk_size`` tokens (the tail is zero-padded with
    ``beta = 0``, ``log_alpha = 0``, which leaves the state untouched). In a chunk entered with state
    ``S_0`` let ``G_r = sum_{i <= r} log_alpha_i`` (per channel) and ``u_r`` the corrected value that
    token ``r`` writes, so ``S_r = Diag(e^{G_r}) (S_0 + sum_{i <= r} Diag(e^{-G_i}) k_i u_i^T)``. The
    delta rule gives the unit lower-triangular system

        u_r + beta_r sum_{i < r} (k_r^T Diag(e^{G_r - G_i}) k_i) u_i = beta_r (v_r - S_0^T Diag(e^{G_r}) k_r),

    solved once per chunk for all chunks at once (``torch.linalg.solve_triangular``): with
    ``L = I + Diag(beta) A`` it yields ``W = L^{-1} Diag(beta) K^+`` and ``U' = L^{-1} Diag(beta) V``,
    ``U = U' - W S_0``. Outputs are ``O = scale (P U' + (Q^+ - P W) S_0)`` with ``P`` the inclusive
    decayed query-key matrix, and the state passes as ``S_next = M S_0 + B`` with
    ``M = Diag(e^{G_C}) - K_dec^T W``, ``B = K_dec^T U'``: the only sequential work is one
    ``[K, K] x [K, V]`` product per chunk. Differentiable (autograd through the solve).

    ``reset [B, T]`` marks document starts: cross-document entries of ``P, A`` and the carried
    state of rows after a reset are masked, which equals zeroing the state there.
    Returns ``(o [B, T, H, V] in v.dtype, final_state [B, H, K, V] float32/float64)``.
    """
    b, t, h, kd, vd = _check_qkv(q, k, v, log_alpha, beta)
    _check_state(initial_state, b, h, kd, vd)
    _check_reset(reset, b, t)
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1:
        raise ValueError(f"chunk_size={chunk_size!r} must be an int >= 1")
    cd = _compute_dtype(v.dtype)
    scale = kd**-0.5 if scale is None else scale
    c = chunk_size
    pad = (-t) % c
    n = (t + pad) // c

    def chunks(x: torch.Tensor) -> torch.Tensor:  # [B, T, H, ...] -> [B, H, N, C, ...]
        x = x.to(cd)
        if pad:
            x = F.pad(x, (0, 0) * (x.dim() - 2) + (0, pad))
        x = x.reshape(b, n, c, h, *x.shape[3:])
        return x.movedim(3, 1)

    qc = chunks(q) * scale
    kc, vc, gc = chunks(k), chunks(v), chunks(log_alpha)
    bc = chunks(beta.unsqueeze(-1))  # [B, H, N, C, 1]
    g = gc.cumsum(-2)  # G_r within each chunk, non-increasing

    p, a = _decayed_grams(qc, kc, g, _sub_size(c))  # [B, H, N, C, C]
    eg = g.exp()
    kplus, qplus = kc * eg, qc * eg
    g_last = g[..., -1:, :]  # [B, H, N, 1, K]
    kdec = kc * (g_last - g).exp()
    decay_last = g_last.squeeze(-2).exp()  # [B, H, N, K]
    if reset is not None:
        r = F.pad(reset, (0, pad)).view(b, n, c)
        doc = r.long().flatten(1).cumsum(-1).view(b, n, c)  # document index of every token
        prev = torch.cat([doc.new_zeros(b, 1), doc[:, :-1, -1]], dim=1)  # doc of the token before the chunk
        same = (doc.unsqueeze(-1) == doc.unsqueeze(-2)).unsqueeze(1).to(cd)  # [B, 1, N, C, C]
        carry = (doc == prev.unsqueeze(-1)).unsqueeze(1).unsqueeze(-1).to(cd)  # [B, 1, N, C, 1]
        with_last = (doc == doc[..., -1:]).unsqueeze(1).unsqueeze(-1).to(cd)  # [B, 1, N, C, 1]
        p, a = p * same, a * same
        kplus, qplus = kplus * carry, qplus * carry
        kdec = kdec * with_last
        decay_last = decay_last * carry[..., -1, :]
    eye_c = torch.eye(c, dtype=cd, device=q.device)
    lower = eye_c + bc * a
    rhs = bc * torch.cat([kplus, vc], dim=-1)
    sol = torch.linalg.solve_triangular(lower, rhs, upper=False, unitriangular=True)
    w, u0 = sol[..., :kd], sol[..., kd:]  # [B, H, N, C, K], [B, H, N, C, V]
    kdec_t = kdec.transpose(-1, -2)
    m = torch.diag_embed(decay_last) - kdec_t @ w  # [B, H, N, K, K]
    bn = kdec_t @ u0  # [B, H, N, K, V]

    s = q.new_zeros(b, h, kd, vd, dtype=cd) if initial_state is None else initial_state.to(cd)
    entering = []
    for i in range(n):
        entering.append(s)
        s = m[:, :, i] @ s + bn[:, :, i]
    s0 = torch.stack(entering, dim=2)  # [B, H, N, K, V]
    o = p @ u0 + (qplus - p @ w) @ s0  # [B, H, N, C, V]
    o = o.movedim(1, 3).reshape(b, n * c, h, vd)[:, :t]
    return o.to(v.dtype), s


# --------------------------------------------------------------------------------------------
# optional FLA kernel
# --------------------------------------------------------------------------------------------
def fla_available() -> bool:
    """True when flash-linear-attention's ``chunk_kda`` can be imported (it needs CUDA + Triton)."""
    try:
        from fla.ops.kda import chunk_kda  # noqa: F401
    except Exception:  # ImportError, or a Triton/driver error raised on import
        return False
    return True


def _fla_chunk_kda(q, k, v, log_alpha, beta, initial_state, scale):  # pragma: no cover - needs CUDA
    from fla.ops.kda import chunk_kda

    o, final = chunk_kda(
        q=q, k=k, v=v, g=log_alpha, beta=beta, scale=scale,
        initial_state=initial_state, output_final_state=True,
    )
    return o, final


# --------------------------------------------------------------------------------------------
# cache and short convolution
# --------------------------------------------------------------------------------------------
@dataclass
class KDAState:
    """Decode state of one KDA layer (the ``sigma`` of ftip-00KY): fixed size, independent of T.

    ``state`` is ``[B, H, K, V]`` in float32 (float64 when the layer runs in float64); ``conv_q``,
    ``conv_k``, ``conv_v`` are ``[B, W - 1, channels]`` buffers with the last ``W - 1`` inputs of the
    three short convolutions. ``last_seg`` remembers the segment id of the last token seen (only
    when segment ids are used), so a new document arriving in a later call resets the state; it is
    book-keeping and not counted by :meth:`nbytes`. Updated in place by the layer.
    """

    state: torch.Tensor
    conv_q: torch.Tensor
    conv_k: torch.Tensor
    conv_v: torch.Tensor
    last_seg: torch.Tensor | None = None
    n_tokens: int = field(default=0)

    def nbytes(self) -> int:
        """Bytes of the live state tensors (recurrent state + convolution buffers)."""
        return sum(x.numel() * x.element_size() for x in (self.state, self.conv_q, self.conv_k, self.conv_v))

    def reset(self) -> None:
        """Zero the state and buffers in place (start a new sequence)."""
        for x in (self.state, self.conv_q, self.conv_k, self.conv_v):
            x.zero_()
        self.last_seg = None
        self.n_tokens = 0


class ShortConv1d(nn.Module):
    """Causal depthwise convolution of width ``W`` along time, followed by SiLU (FLA ``ShortConvolution``).

    ``y_t = silu(sum_{j=0}^{W-1} w[:, j] x_{t-W+1+j} (+ bias))``; ``weight`` has the ``nn.Conv1d``
    depthwise layout ``[channels, 1, W]``. Inputs before the sequence start come from
    ``conv_state [B, W-1, channels]`` (zeros when absent); with ``reset [B, T]`` inputs from an
    earlier document are treated as zeros, so packed documents convolve independently.
    """

    def __init__(self, channels: int, kernel_size: int = 4, *, bias: bool = False, activation: str | None = "silu") -> None:
        super().__init__()
        if kernel_size < 1:
            raise ValueError(f"kernel_size={kernel_size} must be >= 1")
        if activation not in (None, "silu"):
            raise ValueError(f"activation={activation!r} is not supported; allowed: None, 'silu'")
        self.channels, self.kernel_size, self.activation = channels, kernel_size, activation
        self.weight = nn.Parameter(torch.empty(channels, 1, kernel_size))
        self.bias = nn.Parameter(torch.zeros(channels)) if bias else None
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))  # nn.Conv1d's default

    def forward(
        self, x: torch.Tensor, *, conv_state: torch.Tensor | None = None, reset: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(y [B, T, channels], new_conv_state [B, W-1, channels])``."""
        if x.dim() != 3 or x.shape[-1] != self.channels:
            raise ValueError(f"ShortConv1d expects [B, T, {self.channels}], got {tuple(x.shape)}")
        b, t, d = x.shape
        w1 = self.kernel_size - 1
        if conv_state is None:
            conv_state = x.new_zeros(b, w1, d)
        elif conv_state.shape != (b, w1, d):
            raise ValueError(f"conv_state must be [B, W-1, C] = [{b}, {w1}, {d}], got {tuple(conv_state.shape)}")
        ext = torch.cat([conv_state.to(x.dtype), x], dim=1)  # [B, W-1+T, C]
        weight = self.weight.to(x.dtype)
        if reset is None and t == 1:  # one decoded token: a dot product per channel, [C, B, W] @ [C, W, 1]
            y = torch.matmul(ext.permute(2, 0, 1), weight.transpose(1, 2)).permute(1, 2, 0)  # (conv1d's setup costs more)
            new_state = ext[:, t:]
        elif reset is None:
            y = F.conv1d(ext.transpose(1, 2), weight, None, groups=d).transpose(1, 2)
            new_state = ext[:, t:]
        else:
            doc = reset.long().cumsum(-1)  # document index; the cached inputs are document 0
            doc_ext = torch.cat([doc.new_zeros(b, w1), doc], dim=1)
            y = x.new_zeros(b, t, d)
            for j in range(self.kernel_size):
                keep = (doc_ext[:, j : j + t] == doc).unsqueeze(-1).to(x.dtype)
                y = y + weight[:, 0, j] * ext[:, j : j + t] * keep
            new_state = ext[:, t:] * (doc_ext[:, t:] == doc[:, -1:]).unsqueeze(-1).to(x.dtype)
        if self.bias is not None:
            y = y + self.bias.to(x.dtype)
        if self.activation == "silu":
            y = F.silu(y)
        return y, new_state


# --------------------------------------------------------------------------------------------
# the layer
# --------------------------------------------------------------------------------------------
class KimiDeltaAttention(nn.Module):
    """KDA mixer of Kimi Linear (ftip-00K3, ftip-00KV), following FLA's ``KimiDeltaAttention``.

    ``x -> q, k, v = silu(conv(W_q x)), silu(conv(W_k x)), silu(conv(W_v x))`` (short causal depthwise
    convolutions), ``q, k`` L2-normalised per head, channel-wise decay
    ``log alpha = -exp(A_log) softplus(W_f2 W_f1 x + dt_bias)`` (low rank ``gate_rank``), per-head
    ``beta = sigmoid(W_b x)``, the gated delta rule (module docstring), a gated RMSNorm per head
    ``RMSNorm(o) * act(W_g2 W_g1 x)`` and the output projection. Value width equals key width.

    ``mode``: ``"recurrent"``, ``"chunked"``, ``"fla"`` (FLA's ``chunk_kda``; falls back to
    ``"chunked"`` off CUDA, without FLA, or with segment resets) or ``"auto"`` (one token:
    :func:`kda_step`; up to ``AUTO_RECURRENT_MAX_T`` tokens: recurrence; longer: chunked, or FLA on
    CUDA when importable). All modes compute the same function; one-token calls always use
    :func:`kda_step` except in ``"chunked"`` mode.
    """

    def __init__(self, cfg, layer_idx: int = 0) -> None:  # cfg: ftipbook.model.config.ModelConfig
        n_heads = cfg.kda_n_heads if cfg.kda_n_heads is not None else cfg.n_heads
        head_dim = cfg.kda_head_dim if cfg.kda_head_dim is not None else cfg.d_head
        self._init(
            d_model=cfg.d_model,
            n_heads=n_heads,
            head_dim=head_dim,
            conv_kernel=cfg.conv_kernel,
            gate_rank=cfg.kda_gate_rank,
            chunk_size=cfg.kda_chunk_size,
            norm_eps=cfg.norm_eps,
            gate_activation=cfg.kda_gate_activation,
            mode="auto",
            layer_idx=layer_idx,
        )

    @classmethod
    def from_dims(
        cls,
        *,
        d_model: int,
        n_heads: int,
        head_dim: int,
        conv_kernel: int = 4,
        gate_rank: int | None = None,
        chunk_size: int = 64,
        norm_eps: float = 1e-5,
        gate_activation: str = DEFAULT_GATE_ACTIVATION,
        mode: str = "auto",
        layer_idx: int = 0,
    ) -> "KimiDeltaAttention":
        """Build from explicit sizes (no configuration object)."""
        self = cls.__new__(cls)
        self._init(
            d_model=d_model, n_heads=n_heads, head_dim=head_dim, conv_kernel=conv_kernel,
            gate_rank=gate_rank, chunk_size=chunk_size, norm_eps=norm_eps,
            gate_activation=gate_activation, mode=mode, layer_idx=layer_idx,
        )
        return self

    def _init(
        self, *, d_model: int, n_heads: int, head_dim: int, conv_kernel: int, gate_rank: int | None,
        chunk_size: int, norm_eps: float, gate_activation: str, mode: str, layer_idx: int,
    ) -> None:
        nn.Module.__init__(self)
        for name, val in (("d_model", d_model), ("n_heads", n_heads), ("head_dim", head_dim),
                          ("conv_kernel", conv_kernel), ("chunk_size", chunk_size)):
            if not isinstance(val, int) or isinstance(val, bool) or val < 1:
                raise ValueError(f"{name}={val!r} must be an int >= 1")
        gate_rank = head_dim if gate_rank is None else gate_rank
        if not isinstance(gate_rank, int) or gate_rank < 1:
            raise ValueError(f"gate_rank={gate_rank!r} must be an int >= 1 (or None = head_dim)")
        if gate_activation not in _GATE_ACTIVATIONS:
            raise ValueError(f"gate_activation={gate_activation!r} is not supported; allowed: {_GATE_ACTIVATIONS}")
        if not norm_eps > 0:
            raise ValueError(f"norm_eps={norm_eps!r} must be > 0")
        self.d_model, self.n_heads, self.head_dim = d_model, n_heads, head_dim
        self.conv_kernel, self.gate_rank, self.chunk_size = conv_kernel, gate_rank, chunk_size
        self.norm_eps, self.gate_activation, self.layer_idx = norm_eps, gate_activation, layer_idx
        self.mode = mode  # validated by the property setter
        inner = n_heads * head_dim
        self.q_proj = nn.Linear(d_model, inner, bias=False)
        self.k_proj = nn.Linear(d_model, inner, bias=False)
        self.v_proj = nn.Linear(d_model, inner, bias=False)
        self.q_conv = ShortConv1d(inner, conv_kernel)
        self.k_conv = ShortConv1d(inner, conv_kernel)
        self.v_conv = ShortConv1d(inner, conv_kernel)
        self.f_proj = nn.Sequential(nn.Linear(d_model, gate_rank, bias=False), nn.Linear(gate_rank, inner, bias=False))
        self.b_proj = nn.Linear(d_model, n_heads, bias=False)
        self.A_log = nn.Parameter(torch.empty(n_heads).uniform_(1, 16).log())
        self.dt_bias = nn.Parameter(torch.zeros(inner))
        self.g_proj = nn.Sequential(nn.Linear(d_model, head_dim, bias=False), nn.Linear(head_dim, inner, bias=True))
        self.o_norm_weight = nn.Parameter(torch.ones(head_dim))
        self.o_proj = nn.Linear(inner, d_model, bias=False)

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        if value not in _MODES:
            raise ValueError(f"mode={value!r} is not supported; allowed: {_MODES}")
        self._mode = value

    # accounting hooks (read by ftipbook.model.accounting) -----------------------------------
    @staticmethod
    def dims(cfg) -> tuple[int, int, int, int, int]:
        """``(d, H, K, gate_rank, W)`` of the KDA layers of ``cfg``."""
        h = cfg.kda_n_heads if cfg.kda_n_heads is not None else cfg.n_heads
        kd = cfg.kda_head_dim if cfg.kda_head_dim is not None else cfg.d_head
        r = cfg.kda_gate_rank if cfg.kda_gate_rank is not None else kd
        return cfg.d_model, h, kd, r, cfg.conv_kernel

    @staticmethod
    def param_count(cfg) -> int:
        """``3 d HK`` (q, k, v) + ``3 HK W`` (convs) + ``d r + r HK`` (gate) + ``d H`` (beta) + ``H + HK``
        (A_log, dt_bias) + ``d K + K HK + HK`` (output gate) + ``K`` (norm) + ``HK d`` (output)."""
        d, h, kd, r, w = KimiDeltaAttention.dims(cfg)
        inner = h * kd
        return (3 * d * inner + 3 * inner * w + d * r + r * inner + d * h + h + inner
                + d * kd + kd * inner + inner + kd + inner * d)

    @staticmethod
    def cache_bytes(cfg, length: int, dtype: torch.dtype) -> int:
        """One sequence's state, independent of ``length``: ``H K K`` float32 (float64 for float64)
        plus ``3 (W - 1) H K`` convolution inputs in ``dtype`` (``sigma`` of ftip-00KY)."""
        _, h, kd, _, w = KimiDeltaAttention.dims(cfg)
        return h * kd * kd * _compute_dtype(dtype).itemsize + 3 * (w - 1) * h * kd * dtype.itemsize

    @staticmethod
    def flops_per_token(cfg, context: int, mode: str) -> float:
        """Recurrent-form count, the same for ``prefill`` and ``decode`` and independent of context:
        ``2 x`` projection weights, ``2 W HK x 3`` for the short convolutions and ``4 H K K`` for the
        two state products (prediction ``k^T S`` and read ``q^T S``). The rank-one write ``k u^T``
        (``H K K`` multiplies and adds) is elementwise, like the decay, and is not counted, matching
        ``torch.utils.flop_counter``. The chunked form executes more."""
        d, h, kd, r, w = KimiDeltaAttention.dims(cfg)
        inner = h * kd
        weights = 3 * d * inner + d * r + r * inner + d * h + d * kd + kd * inner + inner * d
        return 2 * weights + 3 * 2 * w * inner + 4 * h * kd * kd

    # cache ----------------------------------------------------------------------------------
    def new_cache(
        self,
        batch: int,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float32,
        max_len: int | None = None,
    ) -> KDAState:
        """Empty :class:`KDAState`; the recurrent state is float32 (float64 if ``dtype`` is float64).

        ``max_len`` is accepted for interface compatibility and ignored: the state has a fixed size.
        """
        if batch < 1:
            raise ValueError(f"batch={batch} must be >= 1")
        inner, w1 = self.n_heads * self.head_dim, self.conv_kernel - 1
        return KDAState(
            state=torch.zeros(batch, self.n_heads, self.head_dim, self.head_dim, device=device, dtype=_compute_dtype(dtype)),
            conv_q=torch.zeros(batch, w1, inner, device=device, dtype=dtype),
            conv_k=torch.zeros(batch, w1, inner, device=device, dtype=dtype),
            conv_v=torch.zeros(batch, w1, inner, device=device, dtype=dtype),
        )

    def state_nbytes(self, batch: int, dtype: torch.dtype = torch.float32) -> int:
        """Analytic bytes of :meth:`new_cache`: ``B H K V * 4 + 3 B (W-1) H K * elt`` (``sigma`` of ftip-00KY)."""
        inner = self.n_heads * self.head_dim
        state_elt = torch.empty((), dtype=_compute_dtype(dtype)).element_size()
        elt = torch.empty((), dtype=dtype).element_size()
        return batch * self.n_heads * self.head_dim * self.head_dim * state_elt + 3 * batch * (self.conv_kernel - 1) * inner * elt

    # forward --------------------------------------------------------------------------------
    def _resolve_mode(self, t: int, *, fla_ok: bool) -> str:
        """The kernel for a ``t``-token call: ``"step"``, ``"recurrent"``, ``"chunked"`` or ``"fla"``."""
        if self.mode == "chunked":
            return "chunked"
        if t == 1:
            return "step"
        if self.mode == "recurrent":
            return "recurrent"
        fla = fla_ok and fla_available()
        if self.mode == "fla":
            return "fla" if fla else "chunked"
        if t <= AUTO_RECURRENT_MAX_T:
            return "recurrent"
        return "fla" if fla else "chunked"

    def forward(
        self,
        x: torch.Tensor,
        *,
        positions: torch.Tensor | None = None,
        seg_ids: torch.Tensor | None = None,
        cache: KDAState | None = None,
    ) -> torch.Tensor:
        """``[B, T, d] -> [B, T, d]``; ``positions`` is accepted and unused (KDA is position-free).

        ``seg_ids [B, T]`` (packed documents) reset the state and the convolutions wherever the id
        changes, and, with a cache that saw segment ids, at the first token if it differs from the
        last cached one. ``cache`` (from :meth:`new_cache`) is read and updated in place.
        """
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must be [B, T, d_model={self.d_model}], got {tuple(x.shape)}")
        b, t, _ = x.shape
        h, kd = self.n_heads, self.head_dim
        reset = None
        if seg_ids is not None:
            if seg_ids.shape != (b, t):
                raise ValueError(f"seg_ids must be [B, T] = [{b}, {t}], got {tuple(seg_ids.shape)}")
            first = torch.zeros(b, 1, dtype=torch.bool, device=x.device)
            if cache is not None and cache.last_seg is not None:
                first = (seg_ids[:, :1] != cache.last_seg.view(b, 1))
            reset = torch.cat([first, seg_ids[:, 1:] != seg_ids[:, :-1]], dim=1)
            if not bool(reset.any()):
                reset = None
        if cache is not None and cache.state.shape[0] != b:
            raise ValueError(f"cache was built for batch {cache.state.shape[0]}, got input batch {b}")

        q, cq = self.q_conv(self.q_proj(x), conv_state=None if cache is None else cache.conv_q, reset=reset)
        k, ck = self.k_conv(self.k_proj(x), conv_state=None if cache is None else cache.conv_k, reset=reset)
        v, cv = self.v_conv(self.v_proj(x), conv_state=None if cache is None else cache.conv_v, reset=reset)
        q = l2_normalize(q.view(b, t, h, kd))
        k = l2_normalize(k.view(b, t, h, kd))
        v = v.view(b, t, h, kd)
        log_alpha = kda_gate(self.f_proj(x).view(b, t, h, kd), self.A_log, self.dt_bias)
        beta = torch.sigmoid(self.b_proj(x))
        cd = _compute_dtype(x.dtype)
        s0 = None if cache is None else cache.state

        mode = self._resolve_mode(t, fla_ok=x.is_cuda and reset is None)
        if mode == "step":
            st = s0 if s0 is not None else x.new_zeros(b, h, kd, kd, dtype=cd)
            o1, s_fin = kda_step(q[:, 0], k[:, 0], v[:, 0], log_alpha[:, 0], beta[:, 0], st,
                                 reset=None if reset is None else reset[:, 0])
            o = o1.unsqueeze(1)
        elif mode == "recurrent":
            o, s_fin = kda_recurrent(q, k, v, log_alpha, beta, s0, reset=reset)
        elif mode == "fla":  # pragma: no cover - needs CUDA and FLA
            o, s_fin = _fla_chunk_kda(q, k, v, log_alpha.to(q.dtype), beta, s0, kd**-0.5)
        else:
            o, s_fin = kda_chunked(q, k, v, log_alpha, beta, s0, reset=reset, chunk_size=self.chunk_size)

        # gated RMSNorm per head, then the output projection
        gate = self.g_proj(x).view(b, t, h, kd).to(cd)
        of = o.to(cd)
        of = of * torch.rsqrt(of.pow(2).mean(-1, keepdim=True) + self.norm_eps) * self.o_norm_weight.to(cd)
        of = of * (torch.sigmoid(gate) if self.gate_activation == "sigmoid" else F.silu(gate))
        out = self.o_proj(of.to(x.dtype).reshape(b, t, h * kd))

        if cache is not None:
            with torch.no_grad():
                cache.state.copy_(s_fin.detach().to(cache.state.dtype))
                cache.conv_q.copy_(cq.detach())
                cache.conv_k.copy_(ck.detach())
                cache.conv_v.copy_(cv.detach())
            cache.last_seg = None if seg_ids is None else seg_ids[:, -1].clone()
            cache.n_tokens += t
        return out

    def extra_repr(self) -> str:
        return (f"d_model={self.d_model}, n_heads={self.n_heads}, head_dim={self.head_dim}, "
                f"conv_kernel={self.conv_kernel}, gate_rank={self.gate_rank}, chunk_size={self.chunk_size}, mode={self.mode!r}")
