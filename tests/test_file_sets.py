"""Every saved directory is one crash-safe file set read through one bounded reader (issue 25): a write
stopped at any rename leaves the old or the new version, a planted link cannot redirect a write, a
second writer is refused by name, every loader reads each file once and parses those bytes, names
from manifests and indexes stay inside, and sizes and JSON nesting are bounded."""
import json
import os
import sys
import threading

import pytest
import safetensors.torch
import torch

from ftipbook import atomic, depth_study, jepa_study, manifest_set, study, zoo
from ftipbook.artifact import META_FILE, WEIGHTS_FILE, load_artifact, save_artifact
from ftipbook.model import ModelConfig, build_model, load_hf, save_hf
from ftipbook.model.hf_hybrid import hybrid_config_from_hf
from ftipbook.tokenizer import ByteLevelBPE
from tests.test_atomic import artifact

HF_CFG = ModelConfig(vocab_size=23, d_model=16, n_layers=1, n_heads=2, d_ff=32)


def _stop_after(monkeypatch, renames: int):
    """Make ``os.replace`` in :mod:`ftipbook.atomic` raise (as a kill would stop it) after ``renames`` calls."""
    real, calls = os.replace, []

    def replace(src, dst):
        if len(calls) == renames:
            raise KeyboardInterrupt("killed")
        calls.append(dst)
        real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace)
    return lambda: monkeypatch.setattr(atomic.os, "replace", real)


# --- one set: a stop at any rename leaves the old or the new version ---------------------------------
def _study_set(seed: int) -> tuple[dict, dict]:
    return {"format": study.FORMAT, "seed": seed}, {"full-mla": artifact(seed)}


@pytest.mark.parametrize("renames", range(4))
def test_a_stopped_build_write_leaves_the_old_build(tmp_path, monkeypatch, renames):
    """STUDY.json, the checkpoints and MANIFEST.json are one set: before, a kill after STUDY.json left a
    study whose manifest no longer matched (the old build was gone)."""
    study.write(tmp_path, *_study_set(1))
    restore = _stop_after(monkeypatch, renames)
    with pytest.raises(KeyboardInterrupt):
        study.write(tmp_path, *_study_set(2))
    restore()
    files = study.verified_files(tmp_path)
    assert json.loads(files["STUDY.json"])["seed"] == 1
    assert study.verified_artifact(files, tmp_path, "full-mla").runtime_hash() == artifact(1).runtime_hash()
    study.write(tmp_path, *_study_set(3))  # the next write completes and leaves no hidden file
    assert json.loads(study.verified_files(tmp_path)["STUDY.json"])["seed"] == 3
    assert not [p for p in tmp_path.rglob(".*")]


@pytest.mark.parametrize("renames", range(4))
def test_a_stopped_zoo_write_that_adds_an_entry_leaves_the_old_zoo(tmp_path, monkeypatch, renames):
    """An entry rewritten and a new one added with the manifest: the old entry and manifest survive."""
    def files_of(entry, art):
        from ftipbook.artifact import artifact_files
        return {f"{entry}/{k}": v for k, v in artifact_files(art).items()}

    def record(art, data):
        return {"runtime_hash": art.runtime_hash(), "files": {k.split("/")[1]: atomic.sha256(v) for k, v in data.items()}}

    old = files_of("looped-r1", artifact(1))
    zoo.write_entries(tmp_path, old, {"format": zoo.FORMAT, "entries": {"looped-r1": record(artifact(1), old)}})
    new = {**files_of("looped-r1", artifact(2)), **files_of("looped-r2", artifact(3))}
    manifest = {"format": zoo.FORMAT, "entries": {"looped-r1": record(artifact(2), files_of("looped-r1", artifact(2))),
                                                  "looped-r2": record(artifact(3), files_of("looped-r2", artifact(3)))}}
    restore = _stop_after(monkeypatch, renames)
    with pytest.raises(KeyboardInterrupt):
        zoo.write_entries(tmp_path, new, manifest)
    restore()
    assert zoo.load("looped-r1", tmp_path).runtime_hash() == artifact(1).runtime_hash()
    with pytest.raises((FileNotFoundError, ValueError), match="not built|does not list it"):
        zoo.load("looped-r2", tmp_path)
    zoo.write_entries(tmp_path, new, manifest)
    assert zoo.load("looped-r2", tmp_path).runtime_hash() == artifact(3).runtime_hash()


@pytest.mark.parametrize("renames", range(2))
def test_a_stopped_hf_save_leaves_the_old_checkpoint(tmp_path, monkeypatch, renames):
    """load_hf reads through the file-set reader: before, it read the files directly and a stop between
    the two renames left a checkpoint that no longer loaded."""
    old, new = build_model(HF_CFG, seed=0), build_model(HF_CFG, seed=1).to(torch.bfloat16)  # configs differ
    save_hf(old, tmp_path)
    restore = _stop_after(monkeypatch, renames)
    with pytest.raises(KeyboardInterrupt):
        save_hf(new, tmp_path)
    restore()
    loaded = load_hf(tmp_path).state_dict()
    assert all(torch.equal(loaded[k], v) for k, v in old.state_dict().items())
    hf = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**hf, "rms_norm_eps": 1e-3}))  # a mixed set is refused
    with pytest.raises(ValueError, match="SHA-256 mismatch"):
        load_hf(tmp_path)


# --- links, concurrent writers ----------------------------------------------------------------------
def test_a_link_planted_at_a_partial_name_does_not_redirect_the_save(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "a").mkdir()
    for name in (WEIGHTS_FILE, META_FILE):
        (tmp_path / "a" / f".{name}.partial").symlink_to(victim)
    save_artifact(artifact(1), tmp_path / "a")
    assert victim.read_text() == "precious"
    assert load_artifact(tmp_path / "a").runtime_hash() == artifact(1).runtime_hash()


def test_a_second_writer_is_refused_by_name(tmp_path):
    save_artifact(artifact(1), tmp_path / "a")
    with atomic.writer_lock(tmp_path / "a"):  # another writer holds the directory
        with pytest.raises(atomic.ConcurrentWriteError, match="another process is writing into"):
            save_artifact(artifact(2), tmp_path / "a")
    assert load_artifact(tmp_path / "a").runtime_hash() == artifact(1).runtime_hash()
    save_artifact(artifact(2), tmp_path / "a")  # the lock is released with its holder
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [META_FILE, WEIGHTS_FILE]


def test_concurrent_writers_never_leave_an_unloadable_directory(tmp_path):
    save_hf(build_model(HF_CFG, seed=0), tmp_path)
    outcomes, models = [], [build_model(HF_CFG, seed=s) for s in (1, 2)]

    def write(model):
        for _ in range(15):
            try:
                save_hf(model, tmp_path)
                outcomes.append("saved")
            except atomic.ConcurrentWriteError:
                outcomes.append("refused")

    threads = [threading.Thread(target=write, args=(m,)) for m in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(outcomes) <= {"saved", "refused"} and "saved" in outcomes
    load_hf(tmp_path)


# --- hash what you parse ----------------------------------------------------------------------------
class _Opens:
    """Counts the files opened under a directory (``sys.addaudithook``: every open of every kind)."""

    directory: str | None = None
    counts: dict = {}

    @classmethod
    def hook(cls, event, args):
        if event == "open" and cls.directory and isinstance(args[0], str) and args[0].startswith(cls.directory):
            cls.counts[args[0]] = cls.counts.get(args[0], 0) + 1


sys.addaudithook(_Opens.hook)


@pytest.mark.parametrize("source, prepare", [
    (study.STUDY_DIR, lambda d: lambda: study.load(d)),
    (study.STUDY_DIR, lambda d: lambda s=study.load(d): s.checkpoint("full-attention")),
    (jepa_study.JEPA_DIR, lambda d: lambda: jepa_study.load(d)),
    (depth_study.DEPTH_DIR, lambda d: lambda s=depth_study.load(d): s.checkpoint("latent-w1")),
], ids=["study", "study.checkpoint", "jepa", "depth.checkpoint"])
def test_loaders_read_each_file_once(tmp_path, source, prepare):
    """The bytes verified are the bytes parsed: no file is read twice (before, study.load, jepa_study.load
    and DepthStudy.checkpoint hashed each file, then read it again)."""
    import shutil
    shutil.copytree(source, tmp_path / "s")
    load = prepare(tmp_path / "s")
    _Opens.directory, _Opens.counts = str(tmp_path / "s"), {}
    try:
        load()
    finally:
        _Opens.directory = None
    assert _Opens.counts and max(_Opens.counts.values()) == 1, _Opens.counts


def test_zoo_load_reads_each_file_once():
    _Opens.directory, _Opens.counts = str(zoo.ZOO_DIR), {}
    try:
        zoo.load("looped-r1")
    finally:
        _Opens.directory = None
    assert len(_Opens.counts) == 3 and max(_Opens.counts.values()) == 1, _Opens.counts


def test_manifest_names_stay_inside(tmp_path):
    (tmp_path / "outside.txt").write_text("x")
    manifest_set.write_manifest_set(tmp_path / "s", {"a.json": b"{}"}, "f/1")
    listed = {"format": "f/1", "files": {"a.json": atomic.sha256(b"{}"), "../outside.txt": atomic.sha256(b"x")}}
    (tmp_path / "s" / "MANIFEST.json").write_text(json.dumps(listed))
    with pytest.raises(ValueError, match="leaves the directory"):
        manifest_set.read_manifest_set(tmp_path / "s", "f/1", "build")
    (tmp_path / "s" / "b.json").symlink_to(tmp_path / "outside.txt")
    listed["files"] = {"a.json": atomic.sha256(b"{}"), "b.json": atomic.sha256(b"x")}
    (tmp_path / "s" / "MANIFEST.json").write_text(json.dumps(listed))
    with pytest.raises(ValueError, match="outside"):
        manifest_set.read_manifest_set(tmp_path / "s", "f/1", "build")


# --- HF checkpoints -----------------------------------------------------------------------------------
def _foreign(path):
    """Make the ftipbook checkpoint at ``path`` look like one from elsewhere (no marker, no digest)."""
    hf = json.loads((path / "config.json").read_text())
    del hf["ftipbook_format"]
    (path / "config.json").write_text(json.dumps(hf))
    weights = path / "model.safetensors"
    tensors = safetensors.torch.load(weights.read_bytes())
    weights.write_bytes(safetensors.torch.save(tensors, metadata={"format": "pt"}))
    return hf, tensors


def test_shard_names_stay_inside_and_an_index_does_not_switch_the_digest_off(tmp_path):
    save_hf(build_model(HF_CFG, seed=0), tmp_path / "other")
    save_hf(build_model(HF_CFG, seed=1), tmp_path / "hf")
    tensors = safetensors.torch.load((tmp_path / "hf" / "model.safetensors").read_bytes())
    index = {"weight_map": {n: "../other/model.safetensors" for n in tensors}}
    (tmp_path / "hf" / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(ValueError, match="model.safetensors.index.json sits beside a checkpoint ftipbook wrote"):
        load_hf(tmp_path / "hf")
    _foreign(tmp_path / "hf")
    with pytest.raises(ValueError, match="'../other/model.safetensors' leaves the directory"):
        load_hf(tmp_path / "hf")
    (tmp_path / "hf" / "shard.safetensors").symlink_to(tmp_path / "other" / "model.safetensors")
    index["weight_map"] = {n: "shard.safetensors" for n in tensors}
    (tmp_path / "hf" / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(ValueError, match="outside"):
        load_hf(tmp_path / "hf")


def test_a_missing_digest_on_an_ftipbook_checkpoint_is_refused(tmp_path):
    save_hf(build_model(HF_CFG, seed=0), tmp_path)
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(safetensors.torch.save(safetensors.torch.load(weights.read_bytes()), metadata={"format": "pt"}))
    with pytest.raises(ValueError, match="has no 'ftipbook.sha256' record, but config.json says ftipbook wrote it"):
        load_hf(tmp_path)


def test_quantized_checkpoints_are_refused_by_name(tmp_path):
    save_hf(build_model(HF_CFG, seed=0), tmp_path)
    hf, tensors = _foreign(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({**hf, "quantization_config": {"quant_method": "fp8"}}))
    with pytest.raises(ValueError, match="quantization_config=.*fp8.* is not supported"):
        load_hf(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps(hf))
    name = "model.layers.0.mlp.up_proj.weight"
    tensors[name] = tensors[name].to(torch.float8_e4m3fn)
    tensors[name + "_scale_inv"] = torch.ones(1, 1)
    (tmp_path / "model.safetensors").write_bytes(safetensors.torch.save(tensors))
    with pytest.raises(ValueError, match="weight_scale_inv' is part of a quantized checkpoint"):
        load_hf(tmp_path)


@pytest.mark.parametrize("layers, why", [([[0, 1, 2, 3], [4]], r"\[1, 4\]"), ([[1, 2, 3], [3]], "listed twice"),
                                         ([[1, 2], [4]], "layer 3 is in neither"), ([[1, 2, 9], [4]], r"\[1, 4\]")])
def test_kimi_layer_lists_are_checked(layers, why):
    hf = {"model_type": "kimi_linear", "num_hidden_layers": 4, "num_attention_heads": 2,
          "linear_attn_config": {"kda_layers": layers[0], "full_attn_layers": layers[1]}}
    with pytest.raises(ValueError, match=f"linear_attn_config.*{why}"):
        hybrid_config_from_hf(hf)


# --- bounded size and work ------------------------------------------------------------------------------
def test_files_above_the_declared_size_are_refused_before_reading(tmp_path):
    save_artifact(artifact(1), tmp_path / "a")
    weights = tmp_path / "a" / WEIGHTS_FILE
    os.truncate(weights, 16 * 2**30)  # a sparse 16 GiB file: refused from its size, never read
    with pytest.raises(ValueError, match=f"{WEIGHTS_FILE} holds 17179869184 bytes, more than"):
        load_artifact(tmp_path / "a")


def test_deep_json_is_a_clear_error_naming_the_file(tmp_path):
    save_artifact(artifact(1), tmp_path / "a")
    (tmp_path / "a" / META_FILE).write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match=f"{META_FILE} nests JSON arrays/objects 100000 deep"):
        load_artifact(tmp_path / "a")
    (tmp_path / "t.json").write_text('{"a": "' + "[" * 500 + '"}')  # brackets inside strings do not count
    from ftipbook.file_records import read_json
    assert read_json(tmp_path / "t.json") == {"a": "[" * 500}


def test_tokenizer_files_carry_their_sha256(tmp_path):
    tok = ByteLevelBPE.train(["the cat sat on the mat", "12 + 34 = 46"], 10)
    tok.save(tmp_path / "tok.json")
    data = json.loads((tmp_path / "tok.json").read_text())
    data["merges"][-1][1] = (data["merges"][-1][1] + 1) % 256  # one digit of one merge changed
    (tmp_path / "tok.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="tok.json records SHA-256"):
        ByteLevelBPE.load(tmp_path / "tok.json")


def test_hostile_tokenizer_files_are_refused_quickly(tmp_path):
    tok = ByteLevelBPE.train(["the cat"], 2)
    data = {**tok.to_dict(), "pattern": "(a+)+$"}
    (tmp_path / "t.json").write_text(json.dumps({**data, "sha256": "0" * 64}))
    with pytest.raises(ValueError, match=r"t.json: pattern='\(a\+\)\+\$' nests a repeat"):
        ByteLevelBPE.load(tmp_path / "t.json")
    doubling = [[97, 97]] + [[256 + k, 256 + k] for k in range(40)]  # token 256 + k spells 2**(k+1) bytes
    (tmp_path / "t.json").write_text(json.dumps({**tok.to_dict(), "merges": doubling, "sha256": "0" * 64}))
    with pytest.raises(ValueError, match="builds a token of 8192 bytes, more than MAX_TOKEN_BYTES"):
        ByteLevelBPE.load(tmp_path / "t.json")
    with pytest.raises(ValueError, match="pattern='a\\(' is not a valid regular expression"):
        ByteLevelBPE(pattern="a(")


# --- children for the probe's kill and concurrency cases (tools/probe_inputs.py) --------------------
def _zoo_version(i: int) -> tuple[dict, dict]:
    from ftipbook.artifact import artifact_files
    art = artifact(i)
    files = {f"looped-r1/{k}": v for k, v in artifact_files(art).items()}
    record = {"runtime_hash": art.runtime_hash(), "files": {k.split("/")[1]: atomic.sha256(v) for k, v in files.items()}}
    return files, {"format": zoo.FORMAT, "entries": {"looped-r1": record}}


#: Savers the probe kills: name -> (write version i into path, load path and return a comparable value).
SAVERS = {
    "save_hf": (lambda path, i: save_hf(build_model(HF_CFG, seed=i).to(torch.float32 if i % 2 else torch.bfloat16),
                                        path),
                lambda path: float(sum(p.detach().double().sum() for p in load_hf(path).parameters()))),
    "study.write": (lambda path, i: study.write(path, *_study_set(i)),
                    lambda path: json.loads(study.verified_files(path)["STUDY.json"])["seed"]),
    "zoo.write_entries": (lambda path, i: zoo.write_entries(path, *_zoo_version(i)),
                          lambda path: zoo.load("looped-r1", path).runtime_hash()),
}


def save_forever(ready, saver: str, path, versions) -> None:
    """Write the ``versions`` of ``saver`` over ``path`` in turn until killed; a refused concurrent write
    is retried (the other writer holds the directory)."""
    write = SAVERS[saver][0]
    ready.set()
    for i in range(10**9):
        try:
            write(path, versions[i % len(versions)])
        except atomic.ConcurrentWriteError:
            continue
        ready.set()
