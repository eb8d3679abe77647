"""The committed checkpoint zoo: hashes, loading, tamper refusal, reproduction of logged losses and scores."""
import shutil

import pytest
import torch

from ftipbook import zoo
from ftipbook.data.corpus import Document
from ftipbook.model import ModelConfig, build_model
from ftipbook.train import answer_accuracy
from tests.local_runs import one_thread  # noqa: F401 (autouse fixture)


@pytest.fixture(scope="module")
def manifest():
    return zoo.manifest()


def test_manifest_lists_every_entry_and_the_files_match(manifest):
    assert sorted(manifest["entries"]) == sorted(zoo.names())
    assert len(zoo.names()) == 17 and "hybrid-kda@400" in zoo.names() and "modadd-twin-rotated" in zoo.names()
    for name in zoo.names():
        record = zoo.verify(name)  # recomputes the SHA-256 of both files
        assert record["losses"] and len(record["losses"]) == record["step"]
    total = sum(e["bytes"] for e in manifest["entries"].values())
    assert 5e6 < total < 20e6
    assert manifest["tokenizer_sha256"] == zoo.tokenizer().sha256()  # the tokenizer rebuilds identically


def test_load_gives_the_recorded_artifact(manifest):
    art = zoo.load("base-mha")
    assert art.runtime_hash() == manifest["entries"]["base-mha"]["runtime_hash"]
    assert art.tokenizer.sha256() == manifest["tokenizer_sha256"] and art.cfg.vocab_size == 512
    assert art.provenance.optimizer["class"] == "GroupedOptimizer"
    assert [g["algorithm"] for g in art.provenance.optimizer["param_groups"]] == ["muon", "adamw"]
    child = zoo.load("sft-acquire")
    assert child.provenance.parent == art.runtime_hash()
    assert zoo.load("hybrid-kda@400").cfg.layer_kinds == "KKKM" and zoo.load("full-mla@50").cfg.layer_kinds == "MMMM"
    assert [zoo.load(f"looped-r{r}").cfg.n_loops for r in (1, 2, 3)] == [1, 2, 3]
    with pytest.raises(ValueError, match="unknown zoo entry"):
        zoo.load("base-gpt")


def test_a_damaged_file_is_refused(tmp_path):
    shutil.copy(zoo.ZOO_DIR / zoo.MANIFEST_FILE, tmp_path)
    shutil.copytree(zoo.ZOO_DIR / "looped-r1", tmp_path / "looped-r1")
    assert zoo.load("looped-r1", tmp_path).runtime_hash() == zoo.load("looped-r1").runtime_hash()
    weights = tmp_path / "looped-r1" / "weights.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="SHA-256"):
        zoo.load("looped-r1", tmp_path)
    with pytest.raises(FileNotFoundError, match="is missing"):
        zoo.load("looped-r2", tmp_path)


@pytest.mark.parametrize("name,steps", [("looped-r1", 3), ("modadd-twin-rotated", 4), ("sft-elicit", 3)])
def test_rebuilding_reproduces_the_logged_losses(manifest, name, steps):
    logged = manifest["entries"][name]["losses"][:steps]
    # tolerance, not equality: another CPU (AVX2 vs AVX-512) may reduce in another order
    assert zoo.replay(name, steps) == pytest.approx(logged, abs=1e-4)


def test_the_sft_contrast_recomputes(manifest):
    held, fresh = zoo.benchmark("add3-heldout").items, zoo.benchmark("add3-fresh").items
    scores = {}
    for name in ("base-mha", "sft-acquire", "sft-memorize"):
        model, tok = zoo.load_model(name), zoo.load(name).tokenizer
        scores[name] = (answer_accuracy(model, tok, held), answer_accuracy(model, tok, fresh))
        recorded = manifest["entries"][name]["evals"]
        assert scores[name] == pytest.approx((recorded["accuracy_add3-heldout"], recorded["accuracy_add3-fresh"]),
                                             abs=0.01)
    assert scores["base-mha"][0] < 0.05 and scores["sft-acquire"][0] > 0.9  # acquisition on E+
    assert scores["sft-memorize"][0] > 0.95 and scores["sft-memorize"][1] < 0.05  # memorized, does not transfer
    assert scores["sft-acquire"][1] > 0.9
    add2 = manifest["entries"]
    assert add2["sft-elicit"]["evals"]["accuracy_add2-eval"] > add2["base-mha"]["evals"]["accuracy_add2-eval"] > 0


def test_benchmarks_are_protected():
    held, fresh, add2 = (set(d.text for d in zoo.benchmark(n).items) for n in ("add3-heldout", "add3-fresh", "add2-eval"))
    assert len(held) == len(fresh) == len(add2) == 500 and not held & fresh
    corpus = {d.text for d in zoo.pretraining_documents()}
    assert not corpus & (held | fresh | add2)
    for recipe in ("sft-elicit", "sft-acquire"):
        assert not {d.text for d in zoo.sft_documents(recipe)} & (held | fresh | add2)
    with pytest.raises(ValueError, match="unknown benchmark"):
        zoo.benchmark("mmlu")


def test_rotated_twin_is_function_equivalent_with_equal_head_invariants():
    model = build_model(ModelConfig(vocab_size=40, d_model=32, n_layers=2, n_heads=4, d_ff=64, max_seq_len=16,
                                    pos="learned"), seed=0)
    twin = zoo.rotated_twin(model, seed=1)
    x = torch.randint(0, 40, (2, 10))
    with torch.no_grad():
        assert torch.allclose(model(x), twin(x), atol=1e-5)
    assert zoo.invariant_distance(model, twin) < 1e-6
    q_rows = model.blocks[0].mixer.fn.qkv.weight[:8]
    assert not torch.allclose(q_rows, twin.blocks[0].mixer.fn.qkv.weight[:8])  # the parameters did move
    log = zoo.manifest()["entries"]["modadd-twin"]["log"]
    assert log["head_invariant_distance"][0] < 1e-5 < log["head_invariant_distance"][-1]


def test_entries_recorded_with_their_run():
    run, step = zoo._run_of("hybrid-kda@200")
    assert run.name == "hybrid-kda" and step == 200
    a, b = zoo.runs()["hybrid-kda"], zoo.runs()["full-mla"]
    assert a.train == b.train and a.randomness == b.randomness and a.data == b.data  # the common recipe
    assert isinstance(zoo.benchmark("add2-eval").items[0], Document)


def test_rebuild_distance_measures_weights_and_evaluations(tmp_path):
    import json

    from safetensors.torch import load_file, save_file

    rebuilt = tmp_path / "zoo"
    shutil.copytree(zoo.ZOO_DIR, rebuilt)
    same = zoo.rebuild_distance("looped-r1", rebuilt)
    assert same.identical and same.max_weight_diff == 0.0 and same.valid_nll_diff == 0.0
    # a rebuild on another CPU kind: one weight moved by 3e-4, the NLL by -0.01
    path = rebuilt / "looped-r1" / "weights.safetensors"
    tensors = load_file(str(path))
    name = sorted(tensors)[0]
    tensors[name].view(-1)[5] += 3e-4
    save_file(tensors, str(path))
    data = json.loads((rebuilt / "MANIFEST.json").read_text())
    entry = data["entries"]["looped-r1"]
    entry["evals"]["valid_nll"] -= 0.01
    entry["files"]["weights.safetensors"] = "0" * 64
    (rebuilt / "MANIFEST.json").write_text(json.dumps(data))
    moved = zoo.rebuild_distance("looped-r1", rebuilt)
    assert not moved.identical and moved.max_accuracy_diff is None
    assert moved.max_weight_diff == pytest.approx(3e-4, rel=1e-3)
    assert moved.valid_nll_diff == pytest.approx(-0.01, abs=1e-12)
    twin = zoo.rebuild_distance("modadd-twin", rebuilt)   # accuracies, no NLL
    assert twin.valid_nll_diff is None and twin.max_accuracy_diff == 0.0
    with pytest.raises(ValueError, match="unknown zoo entry"):
        zoo.rebuild_distance("no-such-entry", rebuilt)
