"""Helpers of the training tests: tiny models and a small synthetic, resumable ``PackedBatch`` stream
whose loss a tiny model can learn."""
from __future__ import annotations

import torch

from ftipbook.data.windows import PackedBatch
from ftipbook.model import ModelConfig, build_model

TINY = dict(vocab_size=29, d_model=32, n_layers=2, n_heads=4, d_ff=64, max_seq_len=32)


class CountingStream:
    """Batch ``n`` is a function of ``(seed, n)``: rows of two packed "documents" that count upwards
    modulo the vocabulary from random starts, with a padded tail; rows differ in how many tokens
    they predict. Resumable through ``state_dict``."""

    def __init__(self, batch_size: int = 8, seq_len: int = 16, vocab: int = 29, seed: int = 0) -> None:
        self.b, self.t, self.v, self.seed, self.n = batch_size, seq_len, vocab, seed, 0

    def __iter__(self):
        return self

    def __next__(self) -> PackedBatch:
        g = torch.Generator().manual_seed(self.seed * 100_003 + self.n)
        self.n += 1
        start = torch.randint(0, self.v, (self.b, 1), generator=g)
        seq = (start + torch.arange(self.t + 1)) % self.v
        pos = torch.arange(self.t + 1)
        cut = torch.randint(3, self.t - 3, (self.b, 1), generator=g)  # each row has its own boundary
        pad = torch.randint(0, 4, (self.b, 1), generator=g)  # and its own padding tail
        seg = torch.where(pos < cut, 1, 2).masked_fill(pos >= self.t + 1 - pad, 0)
        tokens, targets = seq[:, :-1].clone(), seq[:, 1:].clone()
        seg_ids = seg[:, :-1].clone()
        loss_mask = (seg[:, :-1] == seg[:, 1:]) & (seg[:, :-1] != 0)
        return PackedBatch(tokens, targets, loss_mask, seg_ids)

    def state_dict(self) -> dict:
        return {"n": self.n, "seed": self.seed}

    def load_state_dict(self, state: dict) -> None:
        if state["seed"] != self.seed:
            raise ValueError("seed differs")
        self.n = state["n"]


def tiny_model(seed: int = 0, **overrides):
    return build_model(ModelConfig(**{**TINY, **overrides}), seed=seed)
