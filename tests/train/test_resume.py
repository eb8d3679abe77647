"""A run killed after a checkpoint and resumed continues with exactly the uninterrupted losses."""
import gc
import json
import random

import numpy as np
import pytest
import torch

from ftipbook.artifact import load_artifact
from ftipbook.data.mixture import toy_mixture
from ftipbook.model import ModelConfig, build_model
from ftipbook.train import RunRandomness, TrainConfig, Trainer, batch_stream, build_optimizer, train_tokenizer
from tests.train.helpers import CountingStream, tiny_model

SEEDS = RunRandomness(init=3, data_order=4, window_offset=5, optimizer=6)


def fresh(cfg, tmp_path=None):
    model = tiny_model(SEEDS.init)
    return Trainer(model, build_optimizer(model, cfg), CountingStream(seed=SEEDS.data_order), cfg,
                   randomness=SEEDS, checkpoint_dir=tmp_path, data={"source": "counting stand-in"})


@pytest.mark.parametrize("optimizer", ["adamw", "sgd", "muon_adamw"])
def test_kill_and_resume_reproduces_the_losses(tmp_path, optimizer):
    cfg = TrainConfig(steps=12, lr=5e-3, optimizer=optimizer, momentum=0.9, weight_decay=0.1,
                      schedule="warmup_cosine", warmup_steps=3, progress=False)
    uninterrupted = fresh(cfg)
    straight = uninterrupted.run()

    first = fresh(cfg)
    first.run(until=5)
    first.save_checkpoint(tmp_path / "ckpt")
    draws = (torch.rand(3), random.random(), np.random.rand())  # what the generators give next
    del first  # the "kill": drop every object of the first run
    gc.collect()
    torch.manual_seed(12345)  # disturb every global generator the resumed run could read
    random.seed(1)
    np.random.seed(1)

    resumed = fresh(cfg)
    resumed.restore(tmp_path / "ckpt")
    assert resumed.step == 5
    assert torch.equal(torch.rand(3), draws[0]) and (random.random(), np.random.rand()) == draws[1:]  # RNGs restored
    log = resumed.run()
    assert log.losses == straight.losses  # bitwise, every step
    assert log.lrs == straight.lrs and log.tokens == straight.tokens
    for p, q in zip(uninterrupted.model.parameters(), resumed.model.parameters()):
        assert torch.equal(p, q)
        a, b = uninterrupted.optimizer.state[p], resumed.optimizer.state[q]
        assert a.keys() == b.keys() and all(torch.equal(torch.as_tensor(a[k]), torch.as_tensor(b[k])) for k in a)


def test_checkpoint_contents(tmp_path):
    cfg = TrainConfig(steps=4, checkpoint_every=2, progress=False)
    trainer = fresh(cfg, tmp_path)
    trainer.run()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step-000002", "step-000004"]
    ckpt = tmp_path / "step-000004"
    assert sorted(p.name for p in ckpt.iterdir()) == [
        "MANIFEST.json", "artifact.json", "optimizer.safetensors", "rng.safetensors", "trainer.json",
        "weights.safetensors"]
    meta = json.loads((ckpt / "trainer.json").read_text())
    assert meta["step"] == 4 and meta["data_state"] == {"n": 4, "seed": SEEDS.data_order}
    assert meta["randomness"] == SEEDS.to_dict()
    art = load_artifact(ckpt)
    assert art.provenance.steps == 4 and art.provenance.seeds == SEEDS.to_dict()
    assert art.provenance.optimizer["class"] == "AdamW" and art.provenance.data == {"source": "counting stand-in"}
    assert art.provenance.log["losses"] == trainer.log.losses
    for name, t in trainer.model.state_dict().items():
        assert torch.equal(art.state_dict[name], t)


def test_restore_refuses_a_different_run(tmp_path):
    cfg = TrainConfig(steps=4, progress=False)
    t = fresh(cfg)
    t.run(until=2)
    t.save_checkpoint(tmp_path / "c")
    other = fresh(TrainConfig(steps=5, progress=False))
    with pytest.raises(ValueError, match="train_config differs.*steps"):
        other.restore(tmp_path / "c")
    model = tiny_model(SEEDS.init)
    sgd = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), CountingStream(seed=SEEDS.data_order), cfg,
                  randomness=SEEDS)
    with pytest.raises(ValueError, match="AdamW"):
        sgd.restore(tmp_path / "c")
    with pytest.raises(FileNotFoundError, match="trainer.json"):
        fresh(cfg).restore(tmp_path)


def test_checkpoint_needs_a_resumable_iterator(tmp_path):
    cfg = TrainConfig(steps=2, progress=False)
    model = tiny_model()
    t = Trainer(model, build_optimizer(model, cfg), iter([next(CountingStream())] * 2), cfg)
    t.run()
    with pytest.raises(TypeError, match="state_dict"):
        t.save_checkpoint(tmp_path / "c")


def test_resume_with_the_packed_corpus_stream(tmp_path):
    docs = toy_mixture().documents(120, seed=0)
    tok = train_tokenizer(docs, vocab_size=280)
    cfg = TrainConfig(steps=6, batch_size=4, seq_len=24, lr=3e-3, progress=False)

    def trainer():
        model = build_model(ModelConfig(vocab_size=tok.vocab_size, d_model=32, n_layers=1, n_heads=2, d_ff=64,
                                        max_seq_len=24), seed=SEEDS.init)
        return Trainer(model, build_optimizer(model, cfg), batch_stream(docs, tok, cfg, SEEDS), cfg,
                       randomness=SEEDS, tokenizer=tok)

    straight = trainer().run().losses
    first = trainer()
    first.run(until=4)
    first.save_checkpoint(tmp_path / "c")
    del first
    resumed = trainer()
    resumed.restore(tmp_path / "c")
    assert resumed.run().losses == straight
    assert load_artifact(tmp_path / "c").tokenizer == tok  # the checkpoint is a complete artifact
