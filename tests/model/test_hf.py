"""Hugging Face Llama / Qwen2 checkpoints: load into DecoderLM, save back, logits agree to 1e-5."""
import json

import pytest
import safetensors.torch
import torch

from ftipbook.model import build_model, load_hf, save_hf
from ftipbook.model.hf import config_from_hf

transformers = pytest.importorskip("transformers")

ARCHS = {
    "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
    "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM),
}
SIZES = dict(vocab_size=97, hidden_size=48, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-6)


def _hf_model(arch, **extra):
    config_cls, model_cls = ARCHS[arch]
    torch.manual_seed(0)
    model = model_cls(config_cls(**SIZES, **extra)).eval()
    with torch.no_grad():  # non-zero biases and norm weights, so a dropped tensor would show
        for name, p in model.named_parameters():
            if name.endswith("bias") or "norm" in name:
                p.add_(torch.randn_like(p) * 0.1)
    return model


@pytest.mark.parametrize("arch, extra", [("llama", {}), ("qwen2", {}), ("llama", dict(tie_word_embeddings=True)),
                                         ("llama", dict(rope_theta=500.0))])
def test_load_hf_checkpoint_matches_transformers(tmp_path, arch, extra):
    hf = _hf_model(arch, **extra)
    hf.save_pretrained(tmp_path, safe_serialization=True)
    ours = load_hf(tmp_path).eval()
    assert ours.cfg.qkv_bias == (arch == "qwen2") and ours.cfg.kv_heads == 2
    tokens = torch.randint(0, 97, (2, 19))
    with torch.no_grad():
        torch.testing.assert_close(ours(tokens), hf(tokens).logits, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
def test_save_hf_round_trips_through_transformers(tmp_path, make_cfg, arch):
    ours = build_model(make_cfg(n_kv_heads=2, qkv_bias=arch == "qwen2"), seed=1).eval()
    save_hf(ours, tmp_path, arch)
    hf = ARCHS[arch][1].from_pretrained(tmp_path).eval()
    tokens = torch.randint(0, 61, (2, 11))
    with torch.no_grad():
        torch.testing.assert_close(hf(tokens).logits, ours(tokens), rtol=1e-5, atol=1e-5)
    again = load_hf(tmp_path)
    assert all(torch.equal(a, b) for a, b in zip(ours.state_dict().values(), again.state_dict().values()))


def test_checkpoint_is_safetensors_only(tmp_path, make_cfg):
    save_hf(build_model(make_cfg()), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "model.safetensors"]


@pytest.mark.parametrize(
    "overrides, message",
    [(dict(pos="alibi"), r"needs pos='rope', got 'alibi'"), (dict(norm="layernorm"), r"needs norm='rmsnorm'"),
     (dict(n_loops=2), r"needs n_loops=1"), (dict(ffn="gelu"), r"needs ffn='swiglu'")],
)
def test_save_refuses_configs_the_layout_cannot_express(tmp_path, make_cfg, overrides, message):
    with pytest.raises(ValueError, match=message):
        save_hf(build_model(make_cfg(**overrides)), tmp_path)


def test_config_from_hf_refuses_unsupported_features():
    base = dict(model_type="llama", vocab_size=10, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                intermediate_size=16)
    with pytest.raises(ValueError, match="rope type 'linear' is not supported"):
        config_from_hf(base | dict(rope_scaling={"rope_type": "linear", "factor": 2.0}))
    with pytest.raises(ValueError, match="hidden_act='gelu' in config.json is not supported"):
        config_from_hf(base | dict(hidden_act="gelu"))
    with pytest.raises(ValueError, match="model_type='gpt2' is not supported"):
        config_from_hf(base | dict(model_type="gpt2"))
    assert config_from_hf(base).d_head == 4


def test_load_hf_keeps_the_checkpoint_dtype_unless_asked(tmp_path, make_cfg):
    ours = build_model(make_cfg(n_kv_heads=2), seed=2).to(torch.bfloat16)
    save_hf(ours, tmp_path)
    loaded = load_hf(tmp_path)
    assert {p.dtype for p in loaded.parameters()} == {torch.bfloat16}
    assert all(torch.equal(a, b) for a, b in zip(ours.state_dict().values(), loaded.state_dict().values()))
    assert {p.dtype for p in load_hf(tmp_path, dtype=torch.float32).parameters()} == {torch.float32}
    config = tmp_path / "config.json"
    config.write_text(config.read_text().replace('"bfloat16"', '"int8"'))
    with pytest.raises(ValueError, match=r"config.json differs from what was saved \(SHA-256 mismatch"):
        load_hf(tmp_path)  # the weights file records the hash of the config it was saved with
    weights = tmp_path / "model.safetensors"  # as a checkpoint from elsewhere, without that record
    weights.write_bytes(safetensors.torch.save(safetensors.torch.load(weights.read_bytes()), metadata={"format": "pt"}))
    with pytest.raises(ValueError, match=r"model.safetensors has no 'ftipbook.sha256' record, but config.json says"):
        load_hf(tmp_path)  # ... while config.json still says ftipbook wrote it: the record is mandatory
    hf = json.loads(config.read_text())
    del hf["ftipbook_format"]
    config.write_text(json.dumps(hf))
    with pytest.raises(ValueError, match=r"config.json: torch_dtype='int8' is not a floating-point"):
        load_hf(tmp_path)
