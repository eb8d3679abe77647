"""Learning-rate multipliers."""
from __future__ import annotations

import math

import pytest
import torch
from torch.optim.lr_scheduler import LambdaLR

from ftipbook.optim import schedules as sc


def test_values():
    assert [sc.Constant()(t) for t in (0, 5)] == [1.0, 1.0]
    cos = sc.Cosine(10, final=0.1)
    assert cos(0) == 1.0 and math.isclose(cos(5), 0.55) and math.isclose(cos(10), 0.1) and cos(99) == cos(10)
    wc = sc.WarmupCosine(4, 14)
    assert [wc(t) for t in range(4)] == [0.25, 0.5, 0.75, 1.0] and wc(4) == 1.0 and math.isclose(wc(14), 0.0,
                                                                                                 abs_tol=1e-15)
    la = sc.LongAnneal(100, final=1e-4, hold_steps=20)
    assert la(20) == 1.0 and math.isclose(la(60), 1e-2) and math.isclose(la(100), 1e-4) and la(500) == la(100)
    ratios = [la(t + 1) / la(t) for t in range(20, 99)]
    assert max(ratios) - min(ratios) < 1e-12  # geometric: the same factor every step


def test_lambda_lr_uses_the_schedule_and_saves_it():
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=2.0)
    sched = LambdaLR(opt, sc.Cosine(4))
    lrs = []
    for _ in range(5):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert [round(x, 12) for x in lrs] == [2.0, round(1 + math.sqrt(0.5), 12), 1.0, round(1 - math.sqrt(0.5), 12), 0.0]
    assert sched.state_dict()["lr_lambdas"] == [{"total_steps": 4, "final": 0.0}]


@pytest.mark.parametrize("make,msg", [
    (lambda: sc.Cosine(0), "total_steps must be an int >= 1"),
    (lambda: sc.Cosine(10, final=1.5), r"final must be a number in \[0, 1\]"),
    (lambda: sc.WarmupCosine(10, 10), "warmup_steps=10 must be below total_steps=10"),
    (lambda: sc.LongAnneal(10, final=0.0), "geometric decay never reaches 0"),
    (lambda: sc.LongAnneal(10, hold_steps=10), "hold_steps=10 must be below"),
    (lambda: sc.LongAnneal(10, hold_steps=12), "hold_steps=12 must be below total_steps=10"),
    (lambda: sc.LongAnneal(10, hold_steps=-1), "hold_steps must be an int >= 0"),
    (lambda: sc.WarmupCosine(2.5, 10), "warmup_steps must be an int >= 0"),
    (lambda: sc.WarmupCosine(3, 0), "total_steps must be an int >= 1"),
    (lambda: sc.Cosine(10)(-1), "step index t >= 0"),
    (lambda: sc.Constant()(1.5), "step index t >= 0"),
])
def test_bad_schedules(make, msg):
    with pytest.raises(ValueError, match=msg):
        make()
