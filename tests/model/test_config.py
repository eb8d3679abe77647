"""ModelConfig validation: every bad value is refused with a message naming field, value and rule."""
import dataclasses

import pytest

from ftipbook.model import ModelConfig, parse_pattern

BAD = [
    (dict(d_model=30, n_heads=4), r"n_heads=4 does not divide d_model=30"),
    (dict(n_heads=4, n_kv_heads=3), r"n_kv_heads=3 does not divide n_heads=4"),
    (dict(n_kv_heads=0), r"n_kv_heads=0 must be an int >= 1"),
    (dict(ffn="moe", n_experts=4, top_k=5), r"top_k=5 exceeds n_experts=4"),
    (dict(ffn="moe", top_k=0), r"top_k=0 must be an int >= 1"),
    (dict(ffn="moe", n_shared_experts=-1), r"n_shared_experts=-1 must be an int >= 0"),
    (dict(ffn="moe", expert_ffn="moe"), r"expert_ffn='moe' is not supported; allowed: 'relu', 'gelu', 'swiglu'"),
    (dict(ffn="moe", moe_aux_loss_coef=-0.1), r"moe_aux_loss_coef=-0.1 must be >= 0"),
    (dict(layer_pattern="AX"), r"layer_pattern 'AX' has unknown letter\(s\) \['X'\]"),
    (dict(layer_pattern=""), r"layer_pattern must be a non-empty string"),
    (dict(layer_pattern="KKKA", n_layers=6), r"layer_pattern 'KKKA' has length 4, which does not divide n_layers=6"),
    (dict(pos="relative"), r"pos='relative' is not supported; allowed: 'none', 'sinusoidal', 'learned', 'rope', 'alibi'"),
    (dict(norm="batchnorm"), r"norm='batchnorm' is not supported; allowed: 'layernorm', 'rmsnorm'"),
    (dict(mixer_placement="sandwich"), r"mixer_placement='sandwich' is not supported; allowed: 'pre', 'post'"),
    (dict(ffn_placement="mid"), r"ffn_placement='mid' is not supported"),
    (dict(ffn="tanh"), r"ffn='tanh' is not supported; allowed: 'relu', 'gelu', 'swiglu', 'moe'"),
    (dict(norm_eps=0.0), r"norm_eps=0.0 must be > 0"),
    (dict(rope_theta=-1.0), r"rope_theta=-1.0 must be >= 1"),
    (dict(rope_theta=1e-30), r"rope_theta=1e-30 must be >= 1"),
    (dict(init_std=1e12), r"init_std=1000000000000.0 must lie in \(0, 10.0\]"),
    (dict(init_std=0.0), r"init_std=0.0 must lie in \(0, 10.0\]"),
    (dict(pos="rope", d_model=12, n_heads=4), r"head_dim=3 must be even"),
    (dict(head_dim=0), r"head_dim=0 must be an int >= 1"),
    (dict(n_layers=0), r"n_layers=0 must be an int >= 1"),
    (dict(vocab_size=0), r"vocab_size=0 must be an int >= 1"),
    (dict(n_loops=0), r"n_loops=0 must be an int >= 1"),
    (dict(n_experts=0), r"n_experts=0 must be an int >= 1"),  # checked although ffn is not "moe"
    (dict(conv_kernel=-1), r"conv_kernel=-1 must be an int >= 1"),  # and although no layer is "K"
    (dict(layer_pattern="M", kv_lora_rank=0), r"kv_lora_rank=0 must be an int >= 1"),
    (dict(layer_pattern="M", rope_head_dim=3), r"rope_head_dim=3 must be even"),
    (dict(layer_pattern="M", q_lora_rank=0), r"q_lora_rank=0 must be an int >= 1"),
    (dict(layer_pattern="K", conv_kernel=0), r"conv_kernel=0 must be an int >= 1"),
    (dict(layer_pattern="K", kda_head_dim=0), r"kda_head_dim=0 must be an int >= 1"),
    (dict(layer_pattern="K", kda_chunk_size=0), r"kda_chunk_size=0 must be an int >= 1"),
    (dict(layer_pattern="K", kda_gate_activation="relu"), r"kda_gate_activation='relu' is not supported"),
    (dict(layer_pattern="M", mla_v_head_dim=0), r"mla_v_head_dim=0 must be an int >= 1"),
]


@pytest.mark.parametrize("overrides, message", BAD, ids=[m[:40] for _, m in BAD])
def test_bad_config_raises_its_message(overrides, message):
    with pytest.raises(ValueError, match=message):
        ModelConfig(**overrides)


WRONG_KIND = [
    (dict(max_seq_len=2.5), r"max_seq_len=2.5 must be an int, got float"),
    (dict(d_model=True), r"d_model=True must be an int, got bool"),
    (dict(norm_eps="1e-5"), r"norm_eps='1e-5' must be a real number"),
    (dict(rope_theta=False), r"rope_theta=False must be a real number"),
    (dict(tie_embeddings="yes"), r"tie_embeddings='yes' must be True or False, got str"),
    (dict(mla_nope=1), r"mla_nope=1 must be True or False, got int"),
    (dict(head_dim="8"), r"head_dim='8' must be an int or None, got str"),
    (dict(ffn=None), r"ffn=None must be a string, got NoneType"),
    (dict(kda_chunk_size=None), r"kda_chunk_size=None must be an int, got NoneType"),
]


@pytest.mark.parametrize("overrides, message", WRONG_KIND, ids=[m[:40] for _, m in WRONG_KIND])
def test_value_of_the_wrong_kind_raises_type_error_naming_the_field(overrides, message):
    with pytest.raises(TypeError, match=message):
        ModelConfig(**overrides)


def test_replace_revalidates():
    cfg = ModelConfig()
    with pytest.raises(ValueError, match="n_kv_heads=3 does not divide n_heads=4"):
        dataclasses.replace(cfg, n_kv_heads=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.n_heads = 3


def test_derived_sizes():
    cfg = ModelConfig(d_model=64, n_heads=8, n_kv_heads=2)
    assert (cfg.d_head, cfg.kv_heads, cfg.expert_width) == (8, 2, cfg.d_ff)
    assert ModelConfig(d_model=64, n_heads=8, head_dim=16).d_head == 16
    assert ModelConfig().kv_heads == ModelConfig().n_heads


def test_pattern_repeats_to_n_layers():
    assert parse_pattern("KKKA", 8) == "KKKAKKKA"
    assert ModelConfig(layer_pattern="A", n_layers=3).layer_kinds == "AAA"
    assert ModelConfig(layer_pattern="KKKA", n_layers=8).layer_kinds == "KKKA" * 2


@pytest.mark.parametrize(
    "pos, stage",
    [("none", "none"), ("sinusoidal", "embedding"), ("learned", "embedding"), ("rope", "qk"), ("alibi", "scores")],
)
def test_position_stage(pos, stage):
    assert ModelConfig(pos=pos).position_stage == stage


def test_moe_fields_checked_only_for_moe():
    ModelConfig(ffn="swiglu", n_experts=2, top_k=4)  # unused fields are not an error
