"""Every saved file kind outside artifacts and checkpoints (issue 11): Hugging Face checkpoints,
standalone optimizer files and tokenizer descriptions are written atomically and read into memory,
and a damaged file is refused with a ``ValueError`` that names it."""
import json

import pytest
import torch

from ftipbook.model import ModelConfig, build_model
from ftipbook.model.hf import load_hf, save_hf
from ftipbook.optim.checkpoint import load_optimizer, save_optimizer
from ftipbook.tokenizer import ByteLevelBPE

CFG = ModelConfig(vocab_size=40, d_model=16, n_layers=1, n_heads=2, d_ff=32, max_seq_len=16)


def damage(path, kind: str) -> None:
    data = path.read_bytes()
    if kind == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif kind == "flip-header":
        path.write_bytes(data[:9] + bytes([data[9] ^ 0xFF]) + data[10:])
    elif kind == "empty":
        path.write_bytes(b"")
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["truncate", "flip-header", "empty"])
def test_damaged_hf_weights_are_refused_by_name(tmp_path, kind):
    save_hf(build_model(CFG, seed=0), tmp_path)
    damage(tmp_path / "model.safetensors", kind)
    with pytest.raises(ValueError, match="model.safetensors"):
        load_hf(tmp_path)


@pytest.mark.parametrize("text", ["{bad", "[1, 2]", "\xff"])
def test_damaged_hf_config_is_refused_by_name(tmp_path, text):
    save_hf(build_model(CFG, seed=0), tmp_path)
    (tmp_path / "config.json").write_text(text, encoding="latin-1")
    with pytest.raises(ValueError, match="config.json"):
        load_hf(tmp_path)


def test_save_hf_over_a_checkpoint_replaces_both_files(tmp_path):
    save_hf(build_model(CFG, seed=0), tmp_path)
    new = build_model(CFG, seed=1)
    save_hf(new, tmp_path)
    back = load_hf(tmp_path)
    assert all(torch.equal(a, b) for a, b in zip(back.state_dict().values(), new.state_dict().values()))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "model.safetensors"]


def adam_after_one_step():
    model = build_model(CFG, seed=0)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    tokens = torch.arange(9).view(1, 9) * 7 % CFG.vocab_size
    model.loss(tokens[:, :-1], tokens[:, 1:]).backward()
    opt.step()
    return model, opt


@pytest.mark.parametrize("kind", ["truncate", "flip-header", "empty"])
def test_damaged_optimizer_file_is_refused_by_name(tmp_path, kind):
    model, opt = adam_after_one_step()
    save_optimizer(opt, tmp_path / "opt.safetensors")
    damage(tmp_path / "opt.safetensors", kind)
    fresh = torch.optim.Adam(model.parameters(), lr=1e-2)
    with pytest.raises(ValueError, match="opt.safetensors"):
        load_optimizer(fresh, tmp_path / "opt.safetensors")
    assert fresh.state_dict()["state"] == {}


def test_saved_optimizer_leaves_no_temporary_files(tmp_path):
    _, opt = adam_after_one_step()
    save_optimizer(opt, tmp_path / "opt.safetensors")
    save_optimizer(opt, tmp_path / "opt.safetensors")
    assert [p.name for p in tmp_path.iterdir()] == ["opt.safetensors"]


@pytest.fixture(scope="module")
def tokenizer():
    return ByteLevelBPE.train(["Mixed Case text, 12 digits and   spaces.", "the cat sat"], 12)


@pytest.mark.parametrize("edit, field", [
    (lambda d: d.pop("merges"), "fields"),
    (lambda d: d.update(merges=[["a", "b"]]), "merges"),
    (lambda d: d.update(merges=[[1, 2, 3]]), "merges"),
    (lambda d: d.update(specials="eos"), "specials"),
    (lambda d: d.update(normalizer={"lowercase": "yes"}), "normalizer"),
    (lambda d: d.update(pattern=7), "pattern"),
    (lambda d: d.update(extra=1), "fields"),
])
def test_malformed_tokenizer_description_is_refused_naming_field_and_file(tmp_path, tokenizer, edit, field):
    data = tokenizer.to_dict()
    edit(data)
    (tmp_path / "tok.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=f"tok.json.*{field}"):
        ByteLevelBPE.load(tmp_path / "tok.json")


@pytest.mark.parametrize("text", ["{bad", "[1, 2]", ""])
def test_unreadable_tokenizer_file_is_refused_by_name(tmp_path, text):
    (tmp_path / "tok.json").write_text(text)
    with pytest.raises(ValueError, match="tok.json"):
        ByteLevelBPE.load(tmp_path / "tok.json")


def test_tokenizer_round_trip_through_its_file(tmp_path, tokenizer):
    tokenizer.save(tmp_path / "tok.json")
    back = ByteLevelBPE.load(tmp_path / "tok.json")
    text = "Mixed CASE,   new 345 words"
    assert back.encode(text) == tokenizer.encode(text) and back.sha256() == tokenizer.sha256()


def test_a_flipped_weight_byte_or_edited_config_of_a_saved_hf_checkpoint_is_refused(tmp_path):
    save_hf(build_model(CFG, seed=0), tmp_path)
    weights, config = tmp_path / "model.safetensors", tmp_path / "config.json"
    good, text = weights.read_bytes(), config.read_text()
    weights.write_bytes(good[:-5] + bytes([good[-5] ^ 0x01]) + good[-4:])  # inside the last tensor
    with pytest.raises(ValueError, match="SHA-256 mismatch"):
        load_hf(tmp_path)
    weights.write_bytes(good)
    config.write_text(text.replace('"rms_norm_eps": 1e-05', '"rms_norm_eps": 1e-06'))
    with pytest.raises(ValueError, match="SHA-256 mismatch"):
        load_hf(tmp_path)


def test_a_flipped_state_byte_of_an_optimizer_file_is_refused(tmp_path):
    model, opt = adam_after_one_step()
    save_optimizer(opt, tmp_path / "opt.safetensors")
    good = (tmp_path / "opt.safetensors").read_bytes()
    (tmp_path / "opt.safetensors").write_bytes(good[:-3] + bytes([good[-3] ^ 0x01]) + good[-2:])
    with pytest.raises(ValueError, match="opt.safetensors differs from what was saved"):
        load_optimizer(torch.optim.Adam(model.parameters(), lr=1e-2), tmp_path / "opt.safetensors")
