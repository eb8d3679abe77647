"""Tiny configurations shared by the model tests (each test builds in milliseconds)."""
from __future__ import annotations

import pytest

from ftipbook.model import ModelConfig, build_model

TINY = dict(vocab_size=61, d_model=32, n_layers=2, n_heads=4, d_ff=64, max_seq_len=48)
#: Mixers written in their own modules; patterns using them are skipped until those modules exist.
LAZY_MIXER_MODULES = {"M": "ftipbook.model.mla", "K": "ftipbook.model.kda"}


def tiny_config(**overrides) -> ModelConfig:
    cfg = ModelConfig(**{**TINY, **overrides})
    for letter, module in LAZY_MIXER_MODULES.items():
        if letter in cfg.layer_pattern:
            pytest.importorskip(module)
    return cfg


@pytest.fixture
def make_cfg():
    return tiny_config


@pytest.fixture
def make_model():
    def make(*, seed: int = 0, dtype=None, **overrides):
        return build_model(tiny_config(**overrides), seed=seed, dtype=dtype).eval()

    return make
