import dataclasses
import math

import pytest

from ftipbook.optim.schedules import Constant, WarmupCosine
from ftipbook.train import RunRandomness, TrainConfig, build_schedule


@pytest.mark.parametrize("field,value", [
    ("steps", 0), ("steps", 2.0), ("lr", 0.0), ("lr", math.nan), ("optimizer", "lbfgs"), ("schedule", "step"),
    ("precision", "fp16"), ("betas", (0.9,)), ("betas", (0.9, 1.0)), ("grad_clip", 0.0),
    ("eval_every", -1), ("progress", "yes"), ("min_lr_ratio", 1.5),
])
def test_train_config_rejects(field, value):
    with pytest.raises(ValueError, match=field.split("[")[0]):
        TrainConfig(**{"steps": 100, field: value})


def test_train_config_round_trip():
    cfg = TrainConfig(steps=7, betas=(0.8, 0.9), grad_clip=None, schedule="warmup_cosine", warmup_steps=2)
    assert TrainConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match="unknown"):
        TrainConfig.from_dict({**cfg.to_dict(), "dropout": 0.1})
    with pytest.raises(ValueError, match="steps"):
        dataclasses.replace(cfg, steps=-3)


def test_run_randomness():
    r = RunRandomness.from_seed(5)
    assert len({r.init, r.data_order, r.window_offset, r.optimizer}) == 4  # separate streams
    assert r == RunRandomness.from_seed(5) != RunRandomness.from_seed(6)
    assert RunRandomness.from_dict(r.to_dict()) == r
    with pytest.raises(ValueError, match="init"):
        RunRandomness(init=-1)
    with pytest.raises(ValueError, match="keys"):
        RunRandomness.from_dict({"init": 1})


def test_build_schedule():
    assert build_schedule(TrainConfig(steps=10)) == Constant()
    s = build_schedule(TrainConfig(steps=14, schedule="warmup_cosine", warmup_steps=4, min_lr_ratio=0.1))
    assert s == WarmupCosine(4, 14, 0.1)
    assert [s(k) for k in range(4)] == [0.25, 0.5, 0.75, 1.0]
    assert s(14) == pytest.approx(0.1) and s(9) == pytest.approx(0.1 + 0.9 * 0.5)  # halfway through the cosine
    c = build_schedule(TrainConfig(steps=10, schedule="cosine", min_lr_ratio=0.0))
    assert [c(k) for k in (0, 5, 10)] == pytest.approx([1.0, 0.5, 0.0])
    with pytest.raises(ValueError, match="warmup_steps"):
        TrainConfig(steps=4, schedule="warmup_cosine", warmup_steps=4)
