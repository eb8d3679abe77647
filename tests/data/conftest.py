"""Shared tiny model and corpora for the data tests."""
from __future__ import annotations

import pytest

from ftipbook.model import ModelConfig, build_model


@pytest.fixture
def tiny_lm():
    def make(*, seed: int = 0, dtype=None, vocab_size: int = 40, **overrides):
        cfg = ModelConfig(**{**dict(vocab_size=vocab_size, d_model=16, n_layers=1, n_heads=2, d_ff=32,
                                    max_seq_len=32), **overrides})
        return build_model(cfg, seed=seed, dtype=dtype).eval()

    return make
