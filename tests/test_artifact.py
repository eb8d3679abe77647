"""The base-model artifact (ftip-001K, 006M): round trip, runtime hash, what each ingredient changes."""
import dataclasses
import json

import pytest
import torch
from safetensors.torch import load_file, save_file

from ftipbook.artifact import ModelArtifact, NumericsSpec, Provenance, load_artifact, runtime_hash, save_artifact
from ftipbook.model import ModelConfig, build_model
from ftipbook.tokenizer import ByteLevelBPE

TEXTS = ["12+34=46", "the cat sat on the mat", "7+8=15", "the dog sat on the log"] * 3


@pytest.fixture(scope="module")
def tokenizer():
    return ByteLevelBPE.train(TEXTS, 20)


@pytest.fixture(scope="module")
def artifact(tokenizer):
    cfg = ModelConfig(vocab_size=tokenizer.vocab_size, d_model=32, n_layers=2, n_heads=4, d_ff=64, max_seq_len=32)
    return ModelArtifact.from_model(build_model(cfg, seed=1), tokenizer,
                                    provenance=Provenance(optimizer={"class": "AdamW"}, steps=0))


def test_round_trip_reproduces_the_law_exactly(artifact, tmp_path):
    save_artifact(artifact, tmp_path / "a")
    back = load_artifact(tmp_path / "a")
    assert back.runtime_hash() == artifact.runtime_hash()
    assert back.tokenizer.sha256() == artifact.tokenizer.sha256() and back.cfg == artifact.cfg
    assert back.numerics == artifact.numerics and back.provenance == artifact.provenance
    for text in ("12+3", "the cat"):
        assert torch.equal(back.next_token_law(text), artifact.next_token_law(text))
    assert back.numerics.eos_id == artifact.tokenizer.eos_id and back.numerics.max_context == 32


def test_provenance_is_excluded_from_the_runtime_hash(artifact):
    other = artifact.with_provenance(steps=999, seeds={"init": 5}, undisclosed=("data mixture",))
    assert other.runtime_hash() == artifact.runtime_hash()
    assert other.provenance != artifact.provenance


def test_every_runtime_ingredient_changes_the_hash(artifact, tokenizer):
    h = artifact.runtime_hash()
    changed = [
        dataclasses.replace(artifact, cfg=dataclasses.replace(artifact.cfg, norm_eps=1e-3)),
        dataclasses.replace(artifact, cfg=dataclasses.replace(artifact.cfg, rope_theta=500.0)),
        dataclasses.replace(artifact, numerics=dataclasses.replace(artifact.numerics, dtype="bfloat16")),
        dataclasses.replace(artifact, numerics=dataclasses.replace(artifact.numerics, eos_id=0)),
        dataclasses.replace(artifact, tokenizer=ByteLevelBPE(tokenizer.merges[:-1] + ((97, 98),))),
        dataclasses.replace(artifact, tokenizer=None),
    ]
    weights = dict(artifact.state_dict)
    weights["norm.weight"] = weights["norm.weight"] + 1e-6
    changed.append(dataclasses.replace(artifact, state_dict=weights))
    hashes = {a.runtime_hash() for a in changed}
    assert h not in hashes and len(hashes) == len(changed)


def test_config_and_numerics_change_the_law(artifact):
    base = artifact.next_token_law("12+3")
    for variant in (dataclasses.replace(artifact, cfg=dataclasses.replace(artifact.cfg, rope_theta=50.0)),
                    dataclasses.replace(artifact, numerics=dataclasses.replace(artifact.numerics, dtype="bfloat16"))):
        law = variant.next_token_law("12+3")
        assert law.sum().item() == pytest.approx(1.0) and not torch.equal(law, base)


def test_without_tokenizer_there_is_no_text_law(artifact):
    bare = dataclasses.replace(artifact, tokenizer=None)
    with pytest.raises(ValueError, match="tokenizer"):
        bare.next_token_law("12+3")
    ids = artifact.encode("12+3")
    assert torch.equal(bare.model().next_token_law(ids), artifact.next_token_law("12+3"))  # ids still work


def test_tampering_is_refused(artifact, tmp_path):
    save_artifact(artifact, tmp_path / "a")
    weights = load_file(str(tmp_path / "a" / "weights.safetensors"))
    weights["unembed.weight"][0, 0] += 1.0
    save_file(weights, str(tmp_path / "a" / "weights.safetensors"))
    with pytest.raises(ValueError, match="runtime hash mismatch"):
        load_artifact(tmp_path / "a")
    save_artifact(artifact, tmp_path / "b")
    meta = json.loads((tmp_path / "b" / "artifact.json").read_text())
    meta["runtime"]["cfg"]["norm_eps"] = 1e-6
    (tmp_path / "b" / "artifact.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="runtime hash mismatch"):
        load_artifact(tmp_path / "b")
    meta["runtime"]["tokenizer"]["module"] = "os"
    (tmp_path / "b" / "artifact.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="not allowed"):
        load_artifact(tmp_path / "b")
    with pytest.raises(FileNotFoundError, match="artifact.json is missing"):
        load_artifact(tmp_path)


def test_bad_inputs(artifact, tokenizer):
    with pytest.raises(ValueError, match="dtype"):
        NumericsSpec(dtype="int8")
    with pytest.raises(ValueError, match="eos_id"):
        dataclasses.replace(artifact, numerics=NumericsSpec(eos_id=10_000))
    with pytest.raises(ValueError, match="vocab_size"):
        dataclasses.replace(artifact, cfg=dataclasses.replace(artifact.cfg, vocab_size=300))
    with pytest.raises(TypeError, match="DecoderLM"):
        ModelArtifact.from_model(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="unknown Provenance"):
        Provenance.from_dict({"owner": "me"})
    assert runtime_hash(artifact.cfg, artifact.state_dict, artifact.numerics, tokenizer) == artifact.runtime_hash()


def test_a_new_config_field_at_its_default_keeps_the_hash(artifact):
    @dataclasses.dataclass(frozen=True)
    class Extended(ModelConfig):  # a later version's config with one more field
        logit_softcap: float = 0.0

    base = dataclasses.asdict(artifact.cfg)
    same = runtime_hash(Extended(**base), artifact.state_dict, artifact.numerics, artifact.tokenizer)
    other = runtime_hash(Extended(**base, logit_softcap=30.0), artifact.state_dict, artifact.numerics,
                         artifact.tokenizer)
    assert same == artifact.runtime_hash() != other


def test_saving_twice_writes_identical_bytes(artifact, tmp_path):
    """The weights file is a pure function of the artifact (the zoo pins it by sha256)."""
    saved = {save_artifact(artifact, tmp_path / str(i)).joinpath("weights.safetensors").read_bytes() for i in range(8)}
    assert len(saved) == 1
