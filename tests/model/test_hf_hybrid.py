"""Kimi Linear and DeepSeek-V3 checkpoint interop, with ``transformers`` as the peer (ftipbook.model.hf_hybrid)."""
from __future__ import annotations

import dataclasses
import json

import pytest
import torch

transformers = pytest.importorskip("transformers")

from ftipbook import zoo  # noqa: E402
from ftipbook.model import build_model  # noqa: E402
from ftipbook.model.hf_hybrid import (  # noqa: E402
    hybrid_config_from_hf, hybrid_config_to_hf, load_hf_hybrid, save_hf_hybrid,
)

ATOL = 2e-5  # float32; the two sides order their sums differently (chunked vs loop KDA, expert order)
_COMMON = dict(vocab_size=61, hidden_size=32, intermediate_size=40, moe_intermediate_size=12, num_attention_heads=4,
               num_key_value_heads=4, kv_lora_rank=16, qk_nope_head_dim=8, v_head_dim=6, rms_norm_eps=1e-5,
               n_shared_experts=2, num_experts_per_tok=2, routed_scaling_factor=2.5, pad_token_id=None,
               bos_token_id=None, eos_token_id=None, attn_implementation="eager")


#: The first transformers release with a KimiLinear model; Kimi peer tests skip before it.
KIMI_RELEASE = "5.17.0"


def _need_kimi() -> None:
    if not hasattr(transformers, "KimiLinearConfig"):
        pytest.skip(f"needs transformers >= {KIMI_RELEASE} (its first KimiLinear release); "
                    f"installed {transformers.__version__}")


def _kimi(**over):
    _need_kimi()
    kw = dict(_COMMON, num_hidden_layers=4, qk_rope_head_dim=4, q_lora_rank=None, linear_head_dim=8, linear_num_heads=3,
              linear_conv_kernel_dim=4, num_local_experts=6, n_group=1, topk_group=1,
              layer_types=["linear_attention", "linear_attention", "full_attention", "linear_attention"],
              mlp_layer_types=["dense", "sparse", "sparse", "sparse"])
    kw.update(over)
    return transformers.KimiLinearConfig(**kw)


#: RoPE base 500 as the installed transformers reads it: rope_parameters from 5.0 on, rope_theta before
ROPE_500 = ({"rope_parameters": {"rope_type": "default", "rope_theta": 500.0}}
            if int(transformers.__version__.split(".")[0]) >= 5 else {"rope_theta": 500.0})


def _deepseek(**over):
    kw = dict(_COMMON, qk_rope_head_dim=4, q_lora_rank=12, n_routed_experts=8, n_group=4,
              topk_group=2, first_k_dense_replace=1, num_hidden_layers=3, rope_interleave=True, **ROPE_500)
    kw.update(over)
    return transformers.DeepseekV3Config(**kw)


def _randomize(model: torch.nn.Module, seed: int) -> None:
    """Non-trivial values everywhere (norm weights, biases, gates), so that every tensor mapping matters."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        tensors = list(model.named_parameters()) + [(n, b) for n, b in model.named_buffers() if "correction" in n]
        for name, t in tensors:
            if "norm" in name or name.endswith("layernorm.weight"):
                t.copy_(1 + 0.3 * torch.randn(t.shape, generator=g))
            elif "A_log" in name:
                t.copy_(torch.empty(t.shape).uniform_(0.0, 1.5, generator=g))
            elif "correction_bias" in name:
                t.copy_(0.1 * torch.randn(t.shape, generator=g))
            else:
                t.copy_(0.2 * torch.randn(t.shape, generator=g))


def _hf_model(config, seed):
    kimi = config.model_type == "kimi_linear"
    cls = transformers.KimiLinearForCausalLM if kimi else transformers.DeepseekV3ForCausalLM
    torch.manual_seed(seed)
    model = cls(config).eval()
    _randomize(model, seed)
    return model


TOKENS = torch.tensor([[3, 17, 5, 60, 2, 9, 33, 7, 41, 0, 12], [8, 8, 1, 59, 30, 4, 4, 22, 15, 6, 50]])


@pytest.fixture(params=["kimi_linear", "deepseek_v3"])
def hf_checkpoint(request, tmp_path):
    config = _kimi() if request.param == "kimi_linear" else _deepseek()
    peer = _hf_model(config, seed=3)
    peer.save_pretrained(tmp_path / "hf")
    return peer, tmp_path / "hf"


def test_loaded_logits_equal_transformers(hf_checkpoint):
    peer, path = hf_checkpoint
    ours = load_hf_hybrid(path).eval()
    with torch.no_grad():
        want = peer(TOKENS).logits
        got = ours(TOKENS)
    assert want.abs().max() > 0.5  # the logits are not trivially small
    torch.testing.assert_close(got, want, atol=ATOL, rtol=0)


def test_cached_decode_equals_full_forward_and_transformers(hf_checkpoint):
    peer, path = hf_checkpoint
    ours = load_hf_hybrid(path).eval()
    prefix = 6
    with torch.no_grad():
        full = ours(TOKENS)
        cache = ours.new_cache(TOKENS.shape[0])
        steps = [ours(TOKENS[:, :prefix], cache=cache)]
        steps += [ours(TOKENS[:, t : t + 1], cache=cache) for t in range(prefix, TOKENS.shape[1])]
        out = peer(TOKENS[:, :prefix], use_cache=True)
        theirs = [out.logits]
        for t in range(prefix, TOKENS.shape[1]):
            past = out.cache if hasattr(out, "cache") else out.past_key_values  # named so before 5.0
            out = peer(TOKENS[:, t : t + 1], past_key_values=past, use_cache=True)
            theirs.append(out.logits)
    torch.testing.assert_close(torch.cat(steps, 1), full, atol=ATOL, rtol=0)
    torch.testing.assert_close(torch.cat(theirs, 1), full, atol=ATOL, rtol=0)


def _from_pretrained(path):
    if json.loads((path / "config.json").read_text())["model_type"] == "kimi_linear":
        _need_kimi()
    # transformers 5 chooses an expert kernel; 4.x has one (and no such argument)
    experts = {"experts_implementation": "eager"} if int(transformers.__version__.split(".")[0]) >= 5 else {}
    return transformers.AutoModelForCausalLM.from_pretrained(path, attn_implementation="eager", **experts).eval()


def test_round_trip_save_then_transformers_load(hf_checkpoint, tmp_path):
    peer, path = hf_checkpoint
    ours = load_hf_hybrid(path).eval()
    save_hf_hybrid(ours, tmp_path / "out", peer.config.model_type)
    again = _from_pretrained(tmp_path / "out")
    reloaded = load_hf_hybrid(tmp_path / "out").eval()
    with torch.no_grad():
        want = peer(TOKENS).logits
        torch.testing.assert_close(again(TOKENS).logits, want, atol=ATOL, rtol=0)
        torch.testing.assert_close(reloaded(TOKENS), want, atol=ATOL, rtol=0)


def test_interleaved_rope_and_expert_groups_matter(tmp_path):
    """Negative controls: reading the same DeepSeek-V3 weights without the interleave, or with every
    expert group allowed, changes the logits well beyond the tolerance."""
    peer = _hf_model(_deepseek(), seed=5)
    peer.save_pretrained(tmp_path / "hf")
    with torch.no_grad():
        want = peer(TOKENS).logits
        for change in ({"rope_interleave": False}, {"topk_group": 4}):
            hf = json.loads((tmp_path / "hf" / "config.json").read_text())
            (tmp_path / "hf" / "config.json").write_text(json.dumps({**hf, **change}))
            assert (load_hf_hybrid(tmp_path / "hf")(TOKENS) - want).abs().max() > 1e-2, change
            (tmp_path / "hf" / "config.json").write_text(json.dumps(hf))
        torch.testing.assert_close(load_hf_hybrid(tmp_path / "hf")(TOKENS), want, atol=ATOL, rtol=0)


def _library_model(**fields):
    from ftipbook.model import ModelConfig

    cfg = ModelConfig(**{**dict(vocab_size=50, d_model=24, n_layers=4, n_heads=3, head_dim=6, d_ff=40, pos="none",
                               kv_lora_rank=10, mla_v_head_dim=5), **fields})
    model = build_model(cfg, seed=1)
    _randomize(model, seed=2)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("g_proj.1.bias"):
                p.zero_()
    return model.eval()


@pytest.mark.parametrize("model_type, fields", [
    ("kimi_linear", dict(layer_pattern="KKMK", mla_nope=True, kda_n_heads=2, kda_head_dim=8, conv_kernel=3)),
    ("kimi_linear", dict(layer_pattern="KM", rope_head_dim=4, mla_rotate_decoupled=False, ffn="moe", n_experts=4,
                         top_k=2, n_shared_experts=1, d_expert=7, moe_router="sigmoid", moe_routed_scale=1.5)),
    ("deepseek_v3", dict(layer_pattern="M", rope_head_dim=4, q_lora_rank=9, rope_theta=300.0, norm_eps=1e-4,
                         ffn="moe", moe_dense_layers=1, n_experts=6, top_k=2, n_shared_experts=2, d_expert=5,
                         moe_router="sigmoid", moe_n_groups=3, moe_topk_groups=2, moe_norm_topk=False,
                         moe_routed_scale=0.7)),
])
def test_library_model_exports_exactly(tmp_path, model_type, fields):
    """A DecoderLM built here (latent epsilon = norm_eps, not transformers' 1e-6) is written and
    transformers reproduces its logits, with and without a cache on our side."""
    ours = _library_model(**fields)
    save_hf_hybrid(ours, tmp_path / "out", model_type)
    peer = _from_pretrained(tmp_path / "out")
    assert type(peer).__name__ == hybrid_config_to_hf(ours.cfg, model_type)["architectures"][0]
    with torch.no_grad():
        want = ours(TOKENS % 50)
        torch.testing.assert_close(peer(TOKENS % 50).logits, want, atol=ATOL, rtol=0)
        cache = ours.new_cache(2)
        stepped = torch.cat([ours(TOKENS[:, :3] % 50, cache=cache)]
                            + [ours(TOKENS[:, t : t + 1] % 50, cache=cache) for t in range(3, TOKENS.shape[1])], 1)
    torch.testing.assert_close(stepped, want, atol=ATOL, rtol=0)


def test_latent_epsilon_rescaling_is_needed(tmp_path):
    """Negative control: written without the rescaling of the latent down-projections, a model whose
    latent epsilon is 1e-2 is no longer reproduced."""
    ours = _library_model(layer_pattern="M", rope_head_dim=4, q_lora_rank=9, norm_eps=1e-2)
    save_hf_hybrid(ours, tmp_path / "ok", "deepseek_v3")
    exact = dataclasses.replace(ours.cfg, mla_latent_norm_eps=1e-6)
    plain = build_model(exact)
    plain.load_state_dict(ours.state_dict())
    save_hf_hybrid(plain.eval(), tmp_path / "plain", "deepseek_v3")
    with torch.no_grad():
        want = ours(TOKENS % 50)
        torch.testing.assert_close(_from_pretrained(tmp_path / "ok")(TOKENS % 50).logits, want, atol=ATOL, rtol=0)
        assert (_from_pretrained(tmp_path / "plain")(TOKENS % 50).logits - want).abs().max() > 1e-3


@pytest.mark.parametrize("config, field", [
    (lambda: _deepseek(rope_parameters={"rope_type": "yarn", "rope_theta": 1e4, "factor": 4.0,
                                        "original_max_position_embeddings": 64}), "rope_parameters.rope_type='yarn'"),
    (lambda: _deepseek(attention_bias=True), "attention_bias=True"),
    (lambda: _deepseek(rope_parameters={"rope_type": "linear", "rope_theta": 1e4, "factor": 2.0}),
     "rope_parameters.rope_type='linear'"),
    (lambda: _deepseek(num_key_value_heads=2), "num_key_value_heads=2"),
    (lambda: _deepseek(hidden_act="gelu"), "hidden_act='gelu'"),
    (lambda: _kimi(mlp_layer_types=["sparse", "dense", "sparse", "sparse"]), "mlp_layer_types="),
    (lambda: _kimi(tie_word_embeddings=True), "tie_word_embeddings=True"),
])
def test_unsupported_config_is_refused_by_name(tmp_path, config, field):
    hf = config().to_dict()
    with pytest.raises(ValueError, match="not supported") as err:
        hybrid_config_from_hf(hf)
    assert field in str(err.value)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "config.json").write_text(json.dumps(hf))
    with pytest.raises(ValueError, match="config.json"):
        load_hf_hybrid(tmp_path / "c")


def test_scoring_function_and_model_type_refused():
    hf = _deepseek().to_dict()
    with pytest.raises(ValueError, match="scoring_func='softmax'"):
        hybrid_config_from_hf({**hf, "scoring_func": "softmax"})
    with pytest.raises(ValueError, match="model_type='llama'"):
        hybrid_config_from_hf({**hf, "model_type": "llama"})


@pytest.mark.parametrize("fields, model_type, message", [
    (dict(layer_pattern="M", rope_head_dim=4, ffn="moe", n_experts=4, n_shared_experts=1), "deepseek_v3",
     "moe_router='sigmoid'"),
    (dict(layer_pattern="MA", rope_head_dim=4), "deepseek_v3", "layer_pattern='MA'"),
    (dict(layer_pattern="M", rope_head_dim=4, pos="learned"), "deepseek_v3", "pos='learned'"),
    (dict(layer_pattern="KM", rope_head_dim=4), "kimi_linear", "mla_rotate_decoupled=False"),
    (dict(layer_pattern="M", mla_nope=True), "deepseek_v3", "mla_nope=False"),
    (dict(layer_pattern="KM", mla_nope=True, kda_gate_activation="swish"), "kimi_linear", "kda_gate_activation"),
    (dict(layer_pattern="KM", mla_nope=True, tie_embeddings=True), "kimi_linear", "tie_embeddings=False"),
    (dict(layer_pattern="M", rope_head_dim=4), "qwen2", "model_type='qwen2'"),
])
def test_export_refuses_what_the_layout_cannot_hold(tmp_path, fields, model_type, message):
    model = build_model(dataclasses.replace(_library_model().cfg, **fields))
    with pytest.raises(ValueError, match=message):
        save_hf_hybrid(model, tmp_path / "out", model_type)
    assert not (tmp_path / "out").exists()


def test_damaged_file_is_refused(tmp_path):
    save_hf_hybrid(_library_model(layer_pattern="KM", mla_nope=True), tmp_path / "out", "kimi_linear")
    hf = json.loads((tmp_path / "out" / "config.json").read_text())
    (tmp_path / "out" / "config.json").write_text(json.dumps({**hf, "rms_norm_eps": 1e-3}))
    with pytest.raises(ValueError, match="SHA-256 mismatch"):
        load_hf_hybrid(tmp_path / "out")


# ------------------------------------------------------------------------------------------------
# the zoo's hybrid models
# ------------------------------------------------------------------------------------------------
def test_zoo_full_mla_exports_to_deepseek_v3(tmp_path):
    ours = zoo.load_model("full-mla@400")
    save_hf_hybrid(ours, tmp_path / "out", "deepseek_v3")
    tokens = torch.tensor([[5, 100, 37, 260, 7, 411, 2, 64, 300, 12, 9, 480]])
    with torch.no_grad():
        torch.testing.assert_close(_from_pretrained(tmp_path / "out")(tokens).logits, ours(tokens), atol=ATOL, rtol=0)


def test_zoo_hybrid_kda_export_refuses_the_output_gate_bias(tmp_path):
    """The zoo's KDA layers learned a bias on the output gate, which Kimi Linear's g_b_proj lacks:
    refused by name. Every other component is exact: with that bias set to zero (another model),
    transformers reproduces the logits."""
    ours = zoo.load_model("hybrid-kda@400")
    with pytest.raises(ValueError, match=r"blocks\.0\.mixer\.fn\.g_proj\.1\.bias is nonzero"):
        save_hf_hybrid(ours, tmp_path / "out", "kimi_linear")
    assert not (tmp_path / "out").exists()
    with torch.no_grad():
        for name, p in ours.named_parameters():
            if name.endswith("g_proj.1.bias"):
                p.zero_()
    save_hf_hybrid(ours, tmp_path / "out", "kimi_linear")
    tokens = torch.tensor([[5, 100, 37, 260, 7, 411, 2, 64, 300, 12, 9, 480]])
    with torch.no_grad():
        torch.testing.assert_close(_from_pretrained(tmp_path / "out")(tokens).logits, ours(tokens), atol=ATOL, rtol=0)


def test_moonshot_style_kimi_config():
    """Moonshot's own config.json names the KDA sizes and layers in ``linear_attn_config`` (1-based)."""
    hf = {k: v for k, v in _kimi().to_dict().items() if k not in ("layer_types", "mlp_layer_types", "linear_num_heads")}
    hf.update(linear_attn_config={"kda_layers": [1, 2, 4], "full_attn_layers": [3], "num_heads": 2, "head_dim": 8,
                                  "short_conv_kernel_size": 3}, first_k_dense_replace=0)
    cfg = hybrid_config_from_hf(hf)
    assert (cfg.layer_pattern, cfg.kda_n_heads, cfg.kda_head_dim, cfg.conv_kernel, cfg.ffn) == ("KKMK", 2, 8, 3, "moe")
    cfg = hybrid_config_from_hf({**hf, "first_k_dense_replace": 1})
    assert (cfg.ffn, cfg.moe_dense_layers, [cfg.ffn_config(i).ffn for i in range(4)]) == ("moe", 1, [
        "swiglu", "moe", "moe", "moe"])
