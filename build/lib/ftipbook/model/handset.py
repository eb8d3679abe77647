"""A looped decoder whose weights are written by hand to run a program (ftip-00KI).

:func:`shift_register_model` builds a one-block :class:`~ftipbook.model.transformer.DecoderLM`
(``n_layers = 1``, ``n_loops = passes``) whose block executes one step of the program

.. code-block:: text

    for step in range(passes):          # the loop count is the iteration bound
        for t in reversed(range(T)):
            s[t] = s[t - 1] if t >= 1 else s[t]   # the branch: position 0 keeps its value

on the token sequence ``s``, so that after the loop position ``t`` holds token ``s[max(t - passes, 0)]``
and the model's greedy next-token prediction at ``t`` is that token. The residual stream has a
content slot (one-hot token, ``vocab_size`` coordinates), a position slot (one-hot position,
``max_len`` coordinates) and zero padding up to ``d_model = 8 * 4^k`` coordinates, so that the
RMS norms (gain ``sqrt(2 / d_model)``, a power of two) map every program state to itself exactly.
Two attention heads do the step:

* head 0 attends to the previous position (score ``gap`` above every other key; position 0 has
  only itself) and writes that position's content;
* head 1 attends to the position itself and subtracts its content.

The feed-forward sublayer is zero. The softmax is never an exact hard max, but the two heads leave
the same weight on every key they do not select, so one pass maps the content ``C_t`` of a program
state to ``C_t + lambda_t (C_{t-1} - C_t)`` with ``lambda_t = (e^gap - 1) / (e^gap + t)``. The
step is exact once ``1 - lambda_t = (t + 1) / (e^gap + t)`` rounds away in the dtype (``gap``
above about ``17 + ln(t + 1)`` in float32, ``37 + ln(t + 1)`` in float64); below that the leak
stays in the state and accumulates over the passes, and for ``e^gap <= t + 2`` a single pass
already decodes the wrong token wherever ``s[t - 1] != s[t]``.
"""
from __future__ import annotations

import math

import torch

from ftipbook.model.config import ModelConfig
from ftipbook.model.transformer import DecoderLM

#: The norms' declared epsilon, far below the ulp of the state's mean square, so it is lost in rounding.
NORM_EPS = 1e-30


def _padded_width(needed: int) -> int:
    """The smallest ``8 * 4^k >= needed``: the mean square ``2 / d`` of a program state is then ``1 / (2^j)^2``
    and its reciprocal square root ``2^j`` is exact."""
    width = 8
    while width < needed:
        width *= 4
    return width


def shift_register_config(vocab_size: int, max_len: int, passes: int = 1) -> ModelConfig:
    """The configuration of :func:`shift_register_model`: one block, two heads of width ``d_model``,
    learned positions, a ReLU feed-forward of width 1 (set to zero), ``n_loops = passes``."""
    for name, value, low in (("vocab_size", vocab_size, 2), ("max_len", max_len, 2), ("passes", passes, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name}={value!r} must be an int >= {low}")
    d = _padded_width(vocab_size + max_len)
    return ModelConfig(vocab_size=vocab_size, d_model=d, n_layers=1, n_heads=2, head_dim=d, d_ff=1,
                       max_seq_len=max_len, pos="learned", norm="rmsnorm", norm_eps=NORM_EPS, ffn="relu",
                       n_loops=passes)


@torch.no_grad()
def shift_register_model(vocab_size: int, max_len: int, *, passes: int = 1, gap: float = 120.0,
                         dtype: torch.dtype = torch.float32) -> DecoderLM:
    """The hand-set looped decoder of the module docstring, in ``dtype`` (float32 or float64).

    ``gap`` is the attention score margin of the selected key over every other key.
    """
    cfg = shift_register_config(vocab_size, max_len, passes)
    if isinstance(gap, bool) or not isinstance(gap, (int, float)) or not 0 < gap < float("inf"):
        raise ValueError(f"gap={gap!r} must be a finite real > 0")
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype={dtype} must be torch.float32 or torch.float64")
    model = DecoderLM(cfg).to(dtype).eval()
    for p in model.parameters():
        p.zero_()
    v, t, d = vocab_size, max_len, cfg.d_model
    content, position = torch.arange(v), v + torch.arange(t)
    model.embed.weight[content, content] = 1.0
    model.positions.weight[torch.arange(t), position] = 1.0
    scale = math.sqrt(2 / d)  # an exact power of two: RMS of a state with two unit coordinates
    block = model.blocks[0]
    for norm in (block.mixer.norm, block.ffn.norm, model.norm):
        norm.weight.fill_(scale)
    w = block.mixer.fn.qkv.weight.view(6, d, d)  # rows: q0, q1, k0, k1, v0, v1 (head width d)
    for head in (0, 1):
        w[head, position, position] = gap * math.sqrt(d)  # q . k / sqrt(d) = gap for the selected key
        w[4 + head, content, content] = 1.0
    w[2, position[1:], position[:-1]] = 1.0  # head 0's key at t' sits where queries at t' + 1 look
    w[3, position, position] = 1.0  # head 1's key at t sits where the query at t looks
    out = block.mixer.fn.out.weight.view(d, 2, d)
    out[content, 0, content] = 1.0
    out[content, 1, content] = -1.0
    model.unembed.weight[content, content] = 1.0
    return model

