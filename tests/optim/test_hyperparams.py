"""Every bad hyperparameter raises a clear error naming the field and what is allowed."""
from __future__ import annotations

import math

import pytest
import torch

from ftipbook.optim import hyperparams as hp
from ftipbook.optim import torch_optim

BAD = [
    (hp.SGDConfig, dict(lr=-0.1), ValueError, "lr must be >= 0"),
    (hp.SGDConfig, dict(lr=math.nan), ValueError, "lr must be finite"),
    (hp.SGDConfig, dict(lr=math.inf), ValueError, "lr must be finite"),
    (hp.SGDConfig, dict(lr="0.1"), TypeError, "lr must be a real number"),
    (hp.SGDConfig, dict(lr=True), TypeError, "lr must be a real number"),
    (hp.SGDConfig, dict(momentum=1.0), ValueError, r"momentum must lie in \[0, 1\)"),
    (hp.SGDConfig, dict(momentum=-0.5), ValueError, r"momentum must lie in \[0, 1\)"),
    (hp.SGDConfig, dict(nesterov=True), ValueError, "nesterov=True needs momentum > 0"),
    (hp.SGDConfig, dict(momentum=0.9, nesterov=True, dampening=0.1), ValueError, "dampening = 0"),
    (hp.SGDConfig, dict(nesterov=1), TypeError, "nesterov must be True or False"),
    (hp.SGDConfig, dict(weight_decay=-1e-3), ValueError, "weight_decay must be >= 0"),
    (hp.MomentumConfig, dict(momentum=0.0), ValueError, "Polyak momentum needs momentum > 0"),
    (hp.NesterovConfig, dict(nesterov=False), ValueError, "NesterovConfig needs nesterov=True"),
    (hp.AdamConfig, dict(betas=(0.9, 1.0)), ValueError, r"betas\[1\] must lie in \[0, 1\)"),
    (hp.AdamConfig, dict(betas=(-0.1, 0.99)), ValueError, r"betas\[0\] must lie in \[0, 1\)"),
    (hp.AdamConfig, dict(betas=0.9), TypeError, "betas must be a tuple"),
    (hp.AdamConfig, dict(betas=(0.9, 0.99, 0.5)), TypeError, "betas must be a tuple"),
    (hp.AdamConfig, dict(eps=0.0), ValueError, "eps must be > 0"),
    (hp.AdamConfig, dict(eps=-1e-8), ValueError, "eps must be > 0"),
    (hp.AdamWConfig, dict(weight_decay=-0.1), ValueError, "weight_decay must be >= 0"),
    (hp.ScalarAdamConfig, dict(eps=0), ValueError, "eps must be > 0"),
    (hp.RMSpropConfig, dict(alpha=1.5), ValueError, r"alpha must lie in \[0, 1\)"),
    (hp.RMSpropConfig, dict(eps=0.0), ValueError, "eps must be > 0"),
    (hp.RMSpropConfig, dict(centered="yes"), TypeError, "centered must be True or False"),
    (hp.SignSGDConfig, dict(lr=-1), ValueError, "lr must be >= 0"),
    (hp.LionConfig, dict(betas=(1.0, 0.99)), ValueError, r"betas\[0\] must lie in \[0, 1\)"),
    (hp.AdafactorConfig, dict(beta2_decay=0.5), ValueError, "beta2_decay must be <= 0"),
    (hp.AdafactorConfig, dict(eps=(0.0, 1e-3)), ValueError, r"eps\[0\] must be > 0"),
    (hp.AdafactorConfig, dict(eps=(None, -1.0)), ValueError, r"eps\[1\] must be >= 0"),
    (hp.AdafactorConfig, dict(eps=1e-3), TypeError, "eps must be a tuple"),
    (hp.AdafactorConfig, dict(d=0.5), ValueError, "d .* must be >= 1"),
    (hp.MuonConfig, dict(ns_steps=0), ValueError, r"ns_steps must be an int in \[1, 99\]"),
    (hp.MuonConfig, dict(ns_steps=100), ValueError, r"ns_steps must be an int in \[1, 99\]"),
    (hp.MuonConfig, dict(ns_steps=2.0), ValueError, r"ns_steps must be an int"),
    (hp.MuonConfig, dict(ns_coefficients=(1.0, 2.0)), TypeError, "ns_coefficients must be a tuple of three"),
    (hp.MuonConfig, dict(ns_coefficients=(1.0, math.nan, 0.0)), ValueError, r"ns_coefficients\[1\] must be finite"),
    (hp.MuonConfig, dict(eps=0.0), ValueError, "eps must be > 0"),
    (hp.MuonConfig, dict(momentum=1.0), ValueError, r"momentum must lie in \[0, 1\)"),
    (hp.MuonConfig, dict(adjust_lr_fn="spectral"), ValueError, "adjust_lr_fn='spectral' is not supported"),
    (hp.MuonConfig, dict(momentum_form="heavy"), ValueError, "momentum_form='heavy' is not supported"),
    (hp.MuonConfig, dict(orthogonalizer="qr"), ValueError, "orthogonalizer='qr' is not supported"),
    (hp.MuonConfig, dict(ns_dtype="int8"), ValueError, "ns_dtype='int8' is not supported"),
    (hp.ShampooConfig, dict(damping=0.0), ValueError, "damping must be > 0"),
    (hp.ShampooConfig, dict(damping=-1e-6), ValueError, "damping must be > 0"),
    (hp.ShampooConfig, dict(beta2=0.0), ValueError, r"beta2 must lie in \(0, 1\]"),
    (hp.ScaledGDConfig, dict(damping=-0.1), ValueError, "damping must be >= 0"),
]


@pytest.mark.parametrize("cls,kw,err,msg", BAD, ids=[f"{c.__name__}-{sorted(k)[0]}-{i}" for i, (c, k, _, _) in
                                                     enumerate(BAD)])
def test_bad_hyperparameter_raises_named_error(cls, kw, err, msg):
    with pytest.raises(err, match=msg):
        cls(**kw)


def test_defaults_are_valid_and_follow_torch():
    """Defaults equal torch.optim's, so unconfigured optimizers coincide (parity tests cover the maths)."""
    assert hp.SGDConfig().lr == torch.optim.SGD([torch.zeros(1, requires_grad=True)]).defaults["lr"]
    adam = torch.optim.Adam([torch.zeros(1, requires_grad=True)]).defaults
    assert (hp.AdamConfig().lr, hp.AdamConfig().betas, hp.AdamConfig().eps) == (adam["lr"], adam["betas"], adam["eps"])
    adamw = torch.optim.AdamW([torch.zeros(1, requires_grad=True)]).defaults
    assert hp.AdamWConfig().weight_decay == adamw["weight_decay"]
    muon = torch.optim.Muon([torch.zeros(2, 2, requires_grad=True)]).defaults
    mine = hp.MuonConfig()
    assert (mine.lr, mine.weight_decay, mine.momentum, mine.nesterov, mine.ns_coefficients, mine.eps,
            mine.ns_steps) == (
        muon["lr"], muon["weight_decay"], muon["momentum"], muon["nesterov"], muon["ns_coefficients"], muon["eps"],
        muon["ns_steps"])
    fact = torch.optim.Adafactor([torch.zeros(2, 2, requires_grad=True)]).defaults
    assert (hp.AdafactorConfig().lr, hp.AdafactorConfig().beta2_decay, hp.AdafactorConfig().eps) == (
        fact["lr"], fact["beta2_decay"], fact["eps"])


def test_configs_are_frozen_and_round_trip_through_dicts():
    cfg = hp.AdamConfig(lr=0.3, betas=(0.5, 0.6))
    with pytest.raises(AttributeError):
        cfg.lr = 1.0  # type: ignore[misc]
    assert hp.AdamConfig.from_dict({**cfg.to_dict(), "params": [], "betas": [0.5, 0.6]}) == cfg


def test_torch_optimizers_validate_groups_when_added():
    p = torch.zeros(3, 2, requires_grad=True)
    with pytest.raises(ValueError, match="lr must be >= 0"):
        torch_optim.Adam([p], lr=-1.0)
    with pytest.raises(ValueError, match=r"betas\[1\] must lie in"):
        torch_optim.Adam([{"params": [p], "betas": (0.9, 1.5)}])
    with pytest.raises(TypeError, match=r"unknown param-group key\(s\) \['beta1'\]"):
        torch_optim.Adam([{"params": [p], "beta1": 0.9}])
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        torch_optim.SGD([p], betas=(0.9, 0.99))
    with pytest.raises(ValueError, match="needs an 'algorithm' key"):
        torch_optim.GroupedOptimizer([{"params": [p], "lr": 0.1}])
    with pytest.raises(ValueError, match="unknown optimizer 'adamax'"):
        torch_optim.GroupedOptimizer([{"params": [p], "algorithm": "adamax"}])
    with pytest.raises(ValueError, match="Adam runs 'adam'; a group asked for 'sgd'"):
        torch_optim.Adam([{"params": [p], "algorithm": "sgd"}])
    with pytest.raises(ValueError, match="ns_steps must be an int"):
        torch_optim.Muon([p], ns_steps=0)
    with pytest.raises(ValueError, match="damping must be > 0"):
        torch_optim.Shampoo([p], damping=0.0)
