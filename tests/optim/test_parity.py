"""Parity with torch.optim: identical hyperparameters give the identical float64 trajectory.

Each case runs 25 steps on a vector, a square and two rectangular matrices, with fixed random
gradients, through ftipbook's optimizer and PyTorch's, and requires agreement to 1e-13
(in practice the kernels follow PyTorch's CPU operation order and agree bit for bit).
"""
from __future__ import annotations

import pytest
import torch

from ftipbook.optim import torch_optim as ours
from ftipbook.optim.functional import OPTIMIZERS

SHAPES = [(6, 4), (7,), (3, 9), (5, 5)]
MATRIX_SHAPES = [(6, 4), (3, 9), (5, 5)]
STEPS = 25

CASES = [
    ("SGD", ours.SGD, torch.optim.SGD, dict(lr=0.05), SHAPES),
    ("SGD+decay", ours.SGD, torch.optim.SGD, dict(lr=0.05, weight_decay=0.03), SHAPES),
    ("SGD+momentum", ours.SGD, torch.optim.SGD, dict(lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.01), SHAPES),
    ("SGD+nesterov", ours.SGD, torch.optim.SGD, dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.01), SHAPES),
    ("Adam", ours.Adam, torch.optim.Adam, dict(lr=0.01, betas=(0.8, 0.95), eps=1e-6), SHAPES),
    ("Adam+L2", ours.Adam, torch.optim.Adam, dict(lr=0.01, weight_decay=0.1), SHAPES),
    ("AdamW", ours.AdamW, torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1, betas=(0.9, 0.99)), SHAPES),
    ("RMSprop", ours.RMSprop, torch.optim.RMSprop, dict(lr=0.01, alpha=0.9), SHAPES),
    ("RMSprop+all", ours.RMSprop, torch.optim.RMSprop,
     dict(lr=0.01, alpha=0.95, weight_decay=0.05, momentum=0.5, centered=True), SHAPES),
    ("Adafactor", ours.Adafactor, torch.optim.Adafactor, dict(lr=0.02), SHAPES),
    ("Adafactor+decay", ours.Adafactor, torch.optim.Adafactor,
     dict(lr=0.5, weight_decay=0.1, eps=(1e-20, 1e-3), d=1.5, beta2_decay=-0.5), SHAPES),
]


def _trajectory(make, shapes, steps=STEPS, seed=0, none_grad_at=None):
    gen = torch.Generator().manual_seed(seed)
    params = [torch.randn(*s, generator=gen, dtype=torch.float64).requires_grad_() for s in shapes]
    grads = [[torch.randn(*s, generator=gen, dtype=torch.float64) for s in shapes] for _ in range(steps)]
    opt = make(params)
    for t, gs in enumerate(grads):
        for i, (p, g) in enumerate(zip(params, gs)):
            p.grad = None if none_grad_at is not None and (t, i) in none_grad_at else g.clone()
        opt.step()
    return [p.detach() for p in params]


def _assert_same(a, b, tol=1e-13):
    for x, y in zip(a, b):
        assert torch.allclose(x, y, rtol=0, atol=tol), float((x - y).abs().max())


@pytest.mark.parametrize("name,cls,ref,kw,shapes", CASES, ids=[c[0] for c in CASES])
def test_same_trajectory_as_torch(name, cls, ref, kw, shapes):
    _assert_same(_trajectory(lambda ps: cls(ps, **kw), shapes), _trajectory(lambda ps: ref(ps, **kw), shapes))


@pytest.mark.parametrize("nesterov", [True, False])
@pytest.mark.parametrize("adjust", [None, "match_rms_adamw"])
def test_muon_matches_torch_in_bfloat16(nesterov, adjust):
    """torch.optim.Muon orthogonalises in bfloat16; with ns_dtype="bfloat16" the updates coincide."""
    kw = dict(lr=0.02, momentum=0.9, nesterov=nesterov, weight_decay=0.05, adjust_lr_fn=adjust)
    mine = _trajectory(lambda ps: ours.Muon(ps, ns_dtype="bfloat16", **kw), MATRIX_SHAPES)
    _assert_same(mine, _trajectory(lambda ps: torch.optim.Muon(ps, **kw), MATRIX_SHAPES))


def test_muon_float64_differs_from_torch_only_by_bfloat16_rounding():
    """The documented convention difference is the compute dtype, and it matters at bfloat16 precision."""
    kw = dict(lr=0.02)
    mine = _trajectory(lambda ps: ours.Muon(ps, **kw), MATRIX_SHAPES)
    theirs = _trajectory(lambda ps: torch.optim.Muon(ps, **kw), MATRIX_SHAPES)
    gap = max(float((a - b).abs().max()) for a, b in zip(mine, theirs))
    assert 1e-6 < gap < 0.02 * STEPS * 0.1


def test_param_groups_and_missing_grads_match_torch():
    """Per-group hyperparameters and parameters without a gradient at some steps behave as in PyTorch."""
    skip = {(3, 0), (4, 0), (10, 2)}

    def groups(ps):
        return [{"params": ps[:2], "lr": 0.02}, {"params": ps[2:], "lr": 0.005, "betas": (0.5, 0.9)}]

    mine = _trajectory(lambda ps: ours.Adam(groups(ps)), SHAPES, none_grad_at=skip)
    _assert_same(mine, _trajectory(lambda ps: torch.optim.Adam(groups(ps)), SHAPES, none_grad_at=skip))


def test_lambda_lr_schedule_matches_torch():
    from torch.optim.lr_scheduler import LambdaLR

    from ftipbook.optim.schedules import WarmupCosine

    def run(cls):
        gen = torch.Generator().manual_seed(3)
        p = torch.randn(5, 3, generator=gen, dtype=torch.float64).requires_grad_()
        opt = cls([p], lr=0.1, momentum=0.9)
        sched = LambdaLR(opt, WarmupCosine(3, 20))
        for _ in range(STEPS):
            p.grad = torch.randn(5, 3, generator=gen, dtype=torch.float64)
            opt.step()
            sched.step()
        return [p.detach()]

    _assert_same(run(ours.SGD), run(torch.optim.SGD))


def test_torch_class_and_pure_map_run_the_same_kernel():
    """The pure map and the optimizer class agree step by step (no second copy of the rule)."""
    gen = torch.Generator().manual_seed(1)
    start = [torch.randn(4, 3, generator=gen, dtype=torch.float64) for _ in range(2)]
    grads = [[torch.randn(4, 3, generator=gen, dtype=torch.float64) for _ in range(2)] for _ in range(10)]
    for name in OPTIMIZERS:
        params = [p.clone().requires_grad_() for p in start]
        opt = ours.FunctionalOptimizer(params, algorithm=name)
        pure, state = [p.clone() for p in start], None
        for gs in grads:
            for p, g in zip(params, gs):
                p.grad = g.clone()
            opt.step()
            pure, state = OPTIMIZERS[name](pure, state, gs)
        _assert_same([p.detach() for p in params], pure, tol=0)


@pytest.mark.parametrize("name,cls,ref,kw,shapes", [c for c in CASES if c[1] is not ours.Adafactor],
                         ids=[c[0] for c in CASES if c[1] is not ours.Adafactor])
def test_cpu_chunking_changes_nothing(monkeypatch, name, cls, ref, kw, shapes):
    """With tiny chunks (each parameter, or pairs of small ones, processed apart) the trajectory is unchanged."""
    from ftipbook.optim import functional

    monkeypatch.setattr(functional, "CPU_CHUNK_ELEMENTS", 20)
    assert len(functional._chunks([torch.zeros(s) for s in shapes])) > 1
    _assert_same(_trajectory(lambda ps: cls(ps, **kw), shapes), _trajectory(lambda ps: ref(ps, **kw), shapes))
