"""Verified checkpoints (issue 11): every file is hashed in MANIFEST.json and checked before anything is
restored; a damaged file is refused by name; ``restore("latest")`` skips incomplete checkpoints and
says so; a checkpoint write killed at any moment leaves a checkpoint that resumes exactly."""
import dataclasses
import random
import warnings

import pytest
import torch

from ftipbook.train import RunRandomness, TrainConfig, Trainer, build_optimizer, latest_checkpoint
from ftipbook.train.checkpoint import FILES, MANIFEST_FILE, TRAINER_FILE
from tests.test_atomic import forkserver, kill_at_random
from tests.train.helpers import CountingStream, tiny_model

SEEDS = RunRandomness(init=3, data_order=4, window_offset=5, optimizer=6)
CFG = TrainConfig(steps=400, lr=5e-3, momentum=0.9, weight_decay=0.1, progress=False)


def fresh(checkpoint_dir=None, cfg=CFG):
    model = tiny_model(SEEDS.init)
    return Trainer(model, build_optimizer(model, cfg), CountingStream(seed=SEEDS.data_order), cfg,
                   randomness=SEEDS, checkpoint_dir=checkpoint_dir)


@pytest.fixture(scope="module")
def straight():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as in the tests and the killed children
    try:
        return fresh().run(until=60).losses
    finally:
        torch.set_num_threads(threads)


@pytest.fixture
def ckpt(tmp_path):
    trainer = fresh()
    trainer.run(until=3)
    return trainer.save_checkpoint(tmp_path / "c")


def assert_resumes_exactly(trainer: Trainer, path, straight) -> None:
    restored = trainer.restore(path)
    k = trainer.step
    assert restored.is_dir() and 1 <= k <= len(straight) - 2
    assert trainer.run(until=min(k + 2, CFG.steps)).losses == straight[:k + 2]


def assert_refused_untouched(ckpt, error, match) -> None:
    trainer = fresh()
    before = [p.clone() for p in trainer.model.parameters()]
    with pytest.raises(error, match=match):
        trainer.restore(ckpt)
    assert trainer.step == 0 and all(torch.equal(p, q) for p, q in zip(before, trainer.model.parameters()))
    assert not trainer.optimizer.state  # nothing was loaded before the refusal


def flip(path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", [*FILES, MANIFEST_FILE])
def test_a_flipped_byte_in_any_file_is_refused_by_name(ckpt, name):
    good = (ckpt / name).read_bytes()
    for position in (0, 9, len(good) // 3, len(good) // 2, len(good) - 2):
        flip(ckpt / name, position)
        assert_refused_untouched(ckpt, ValueError, f"{name}|{MANIFEST_FILE}")
        (ckpt / name).write_bytes(good)


@pytest.mark.parametrize("name", [*FILES, MANIFEST_FILE])
def test_truncated_and_missing_files_are_refused_by_name(ckpt, name):
    good = (ckpt / name).read_bytes()
    for size in (0, 8, len(good) // 2, len(good) - 2):
        (ckpt / name).write_bytes(good[:size])
        assert_refused_untouched(ckpt, ValueError, name)
    (ckpt / name).unlink()
    assert_refused_untouched(ckpt, FileNotFoundError, name)


@pytest.mark.parametrize("name", ["artifact.json", TRAINER_FILE, MANIFEST_FILE])
@pytest.mark.parametrize("text", ["{not json", "[]", ""])
def test_malformed_json_is_refused_by_name(ckpt, name, text):
    (ckpt / name).write_text(text)
    assert_refused_untouched(ckpt, ValueError, name)


def test_a_checkpoint_without_manifest_is_incomplete(ckpt):
    (ckpt / MANIFEST_FILE).unlink()
    assert_refused_untouched(ckpt, FileNotFoundError, "incomplete training checkpoint: MANIFEST.json is missing")


def test_latest_picks_the_newest_complete_checkpoint_and_reports_the_rest(tmp_path, straight):
    every_step = dataclasses.replace(CFG, checkpoint_every=1)
    fresh(tmp_path, every_step).run(until=4)
    (tmp_path / "step-000004" / MANIFEST_FILE).unlink()  # a write killed before its manifest
    (tmp_path / "step-000009").mkdir()  # and one that had barely started
    (tmp_path / "step-000009" / "weights.safetensors").write_bytes(b"partial")
    (tmp_path / "notes").write_text("not a checkpoint")
    latest = latest_checkpoint(tmp_path)
    assert latest.path == tmp_path / "step-000003"
    assert [(p.name, "MANIFEST.json is missing" in why) for p, why in latest.skipped] == [
        ("step-000004", True), ("step-000009", True)]
    trainer = fresh(tmp_path, every_step)
    with pytest.warns(UserWarning) as reports:
        assert trainer.restore("latest") == tmp_path / "step-000003"
    assert [str(r.message).split("/")[-1] for r in reports] == [
        "step-000004: incomplete: MANIFEST.json is missing", "step-000009: incomplete: MANIFEST.json is missing"]
    assert trainer.step == 3
    assert trainer.run(until=6).losses == straight[:6]


def test_latest_needs_a_complete_checkpoint(tmp_path):
    with pytest.raises(ValueError, match="checkpoint_dir"):
        fresh().restore("latest")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        latest_checkpoint(tmp_path / "none")
    (tmp_path / "step-000001").mkdir()
    with pytest.raises(FileNotFoundError, match="no complete training checkpoint; skipped step-000001"):
        latest_checkpoint(tmp_path)


def checkpoint_forever(ready, path, overwrite: bool) -> None:
    """Train one step and checkpoint, until killed: over ``path`` itself, or into ``path/step-K``."""
    torch.set_num_threads(1)
    trainer = fresh(path)
    trainer.run(until=1)
    trainer.save_checkpoint(path / "step-000001" if not overwrite else path)
    ready.set()
    while trainer.step < CFG.steps:
        trainer.run(until=trainer.step + 1)
        trainer.save_checkpoint(path if overwrite else path / f"step-{trainer.step:06d}")
        ready.set()


@pytest.mark.parametrize("overwrite", [True, False])
def test_killed_checkpoint_writes_always_leave_a_resumable_checkpoint(tmp_path, straight, overwrite):
    ctx, rng = forkserver(), random.Random(int(overwrite))
    for i in range(10):
        path = tmp_path / f"run{i}"
        kill_at_random(ctx, checkpoint_forever, (path, overwrite), rng, 0.03)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # skipped incomplete checkpoints are reported, not errors
            assert_resumes_exactly(fresh(path), path if overwrite else "latest", straight)
