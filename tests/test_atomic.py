"""Crash-safe saving (issue 11): a save killed at any moment leaves the previous artifact loadable; a
loaded artifact does not change with its files; every damaged artifact file is refused by name."""
import json
import multiprocessing
import os
import random
import signal
import time

import pytest
import torch

from ftipbook import atomic
from ftipbook.artifact import META_FILE, WEIGHTS_FILE, ModelArtifact, load_artifact, save_artifact
from ftipbook.model import ModelConfig, build_model

CFG = ModelConfig(vocab_size=29, d_model=32, n_layers=2, n_heads=4, d_ff=64, max_seq_len=32)


def artifact(seed: int) -> ModelArtifact:
    return ModelArtifact.from_model(build_model(CFG, seed=seed))


def forkserver():
    """A fork server with torch and ftipbook loaded, so that each killed child starts in milliseconds."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["torch", "torch._dynamo", "ftipbook.artifact", "ftipbook.train",
                                "tests.test_atomic", "tests.train.test_checkpoint_integrity",
                                "tests.test_file_sets"])
    return ctx


def kill_at_random(ctx, target, args, rng: random.Random, max_delay: float) -> None:
    """Start ``target(ready, *args)``, wait until it is ready, let it run a random time, SIGKILL it."""
    ready = ctx.Event()
    child = ctx.Process(target=target, args=(ready, *args), daemon=True)
    child.start()
    assert ready.wait(60), "the child did not start"
    if rng.random() < 0.9:
        ready.clear()
        while not ready.wait(0.5):  # the loop has saved at least once more: the kill may land anywhere
            assert child.is_alive()
    time.sleep(rng.uniform(0, max_delay))
    os.kill(child.pid, signal.SIGKILL)
    child.join(10)
    assert child.exitcode == -signal.SIGKILL


def save_forever(ready, directory, seeds) -> None:
    """Save the artifacts of ``seeds`` over ``directory``, in turn, until killed."""
    versions = [artifact(s) for s in seeds]
    ready.set()
    for i in range(10**9):
        save_artifact(versions[i % len(versions)], directory)
        ready.set()


def test_killed_saves_never_leave_an_unloadable_artifact(tmp_path):
    hashes = {artifact(s).runtime_hash() for s in (1, 2)}
    save_artifact(artifact(1), tmp_path / "a")
    (tmp_path / "a" / "notes.txt").write_text("mine")  # another file in the directory survives every save
    ctx, rng = forkserver(), random.Random(0)
    interrupted = 0
    for _ in range(20):
        kill_at_random(ctx, save_forever, (tmp_path / "a", (2, 1)), rng, 0.05)
        interrupted += any(p.name.startswith(".") for p in (tmp_path / "a").iterdir())
        assert load_artifact(tmp_path / "a").runtime_hash() in hashes
        assert (tmp_path / "a" / "notes.txt").read_text() == "mine"
    assert interrupted >= 1  # some kills did land in the middle of a save
    save_artifact(artifact(2), tmp_path / "a")  # the next save completes and cleans up
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [META_FILE, "notes.txt", WEIGHTS_FILE]
    assert load_artifact(tmp_path / "a").runtime_hash() == artifact(2).runtime_hash()


@pytest.mark.parametrize("renamed", [0, 1])
def test_a_save_stopped_between_renames_loads_the_previous_artifact(tmp_path, monkeypatch, renamed):
    old, new = artifact(1), artifact(2)
    save_artifact(old, tmp_path / "a")
    real, calls = os.replace, []

    def replace_then_die(src, dst):
        if len(calls) == renamed:
            raise KeyboardInterrupt("killed")
        calls.append(dst)
        real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace_then_die)
    with pytest.raises(KeyboardInterrupt):
        save_artifact(new, tmp_path / "a")
    monkeypatch.setattr(atomic.os, "replace", real)
    assert load_artifact(tmp_path / "a").runtime_hash() == old.runtime_hash()
    # a second save interrupted the same way still has the first, complete artifact to fall back on
    monkeypatch.setattr(atomic.os, "replace", replace_then_die)
    calls.clear()
    with pytest.raises(KeyboardInterrupt):
        save_artifact(artifact(3), tmp_path / "a")
    monkeypatch.setattr(atomic.os, "replace", real)
    assert load_artifact(tmp_path / "a").runtime_hash() == old.runtime_hash()
    save_artifact(new, tmp_path / "a")
    assert load_artifact(tmp_path / "a").runtime_hash() == new.runtime_hash()
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [META_FILE, WEIGHTS_FILE]


def test_write_bytes_replaces_whole_files(tmp_path):
    atomic.write_text(tmp_path / "m.json", "old")
    atomic.write_bytes(tmp_path / "m.json", b"new")
    assert (tmp_path / "m.json").read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == ["m.json"]


def test_a_loaded_artifact_does_not_change_with_its_files(tmp_path):
    save_artifact(artifact(1), tmp_path / "a")
    save_artifact(artifact(2), tmp_path / "b")
    loaded = load_artifact(tmp_path / "a")
    law = loaded.model().next_token_law([1, 2, 3])
    weights = tmp_path / "a" / WEIGHTS_FILE
    with open(weights, "r+b") as f:  # in place, as cp does: a mapped file would show the new bytes
        f.write((tmp_path / "b" / WEIGHTS_FILE).read_bytes())
    assert loaded.runtime_hash() == artifact(1).runtime_hash()
    os.truncate(weights, 10)  # a mapped file would raise SIGBUS on the next read
    assert loaded.runtime_hash() == artifact(1).runtime_hash()
    assert torch.equal(loaded.model().next_token_law([1, 2, 3]), law)


def flip(path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.fixture
def saved(tmp_path):
    save_artifact(artifact(1), tmp_path / "a")
    return tmp_path / "a"


def test_every_flipped_weights_byte_is_refused(saved):
    good = (saved / WEIGHTS_FILE).read_bytes()
    positions = sorted({*range(0, 600, 7), *range(0, len(good), max(1, len(good) // 150)), len(good) - 1})
    for position in positions:
        flip(saved / WEIGHTS_FILE, position)
        with pytest.raises(ValueError, match="weights.safetensors|runtime hash mismatch"):
            load_artifact(saved)
        (saved / WEIGHTS_FILE).write_bytes(good)
    assert load_artifact(saved).runtime_hash() == artifact(1).runtime_hash()


def test_flipped_runtime_bytes_of_artifact_json_are_refused(saved):
    text = (saved / META_FILE).read_text()
    start = text.index('"runtime"')
    for position in range(0, start, 3):  # format, runtime hash and the start of the runtime record
        flip(saved / META_FILE, position)
        with pytest.raises(ValueError, match="artifact.json|runtime hash mismatch"):
            load_artifact(saved)
        (saved / META_FILE).write_text(text)


@pytest.mark.parametrize("name", [WEIGHTS_FILE, META_FILE])
def test_truncated_or_missing_files_are_named(saved, name):
    good = (saved / name).read_bytes()
    for size in (0, 7, 8, 100, len(good) // 2, len(good) - 2):  # artifact.json ends "}\n"
        (saved / name).write_bytes(good[:size])
        with pytest.raises(ValueError, match=name):
            load_artifact(saved)
    (saved / name).unlink()
    with pytest.raises(FileNotFoundError, match=f"{name} is missing"):
        load_artifact(saved)


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "", '{"format": "ftipbook.artifact/1"}', "\xff"])
def test_malformed_artifact_json_is_named(saved, text):
    (saved / META_FILE).write_text(text, encoding="latin-1")
    with pytest.raises(ValueError, match="artifact.json"):
        load_artifact(saved)


def test_weights_from_another_artifact_are_refused(saved, tmp_path):
    save_artifact(artifact(2), tmp_path / "b")
    (saved / WEIGHTS_FILE).write_bytes((tmp_path / "b" / WEIGHTS_FILE).read_bytes())
    with pytest.raises(ValueError, match="runtime hash mismatch"):
        load_artifact(saved)
    meta = json.loads((saved / META_FILE).read_text())
    assert meta["runtime_hash"] == artifact(1).runtime_hash()


def test_a_save_killed_after_its_commit_is_the_one_to_fall_back_on(tmp_path, monkeypatch):
    a, b = artifact(1), artifact(2)
    save_artifact(a, tmp_path / "a")
    drop, calls = atomic._drop_previous, []

    def killed_before_cleanup(directory, names):
        calls.append(directory)
        if len(calls) == 2:  # the clean-up after the renames: the links to `a` stay behind
            raise KeyboardInterrupt("killed")
        drop(directory, names)

    monkeypatch.setattr(atomic, "_drop_previous", killed_before_cleanup)
    with pytest.raises(KeyboardInterrupt):
        save_artifact(b, tmp_path / "a")
    monkeypatch.setattr(atomic, "_drop_previous", drop)
    assert load_artifact(tmp_path / "a").runtime_hash() == b.runtime_hash()
    real = os.replace

    def one_rename_then_die(src, dst):
        monkeypatch.setattr(atomic.os, "replace", lambda *_: (_ for _ in ()).throw(KeyboardInterrupt("killed")))
        real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", one_rename_then_die)
    with pytest.raises(KeyboardInterrupt):
        save_artifact(artifact(3), tmp_path / "a")
    monkeypatch.setattr(atomic.os, "replace", real)
    assert load_artifact(tmp_path / "a").runtime_hash() == b.runtime_hash()  # not the older `a`
