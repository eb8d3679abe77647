"""parameter_roles: every learned tensor of a DecoderLM named by its construction (ftip-0012)."""
import pytest
import torch
from torch import nn

from ftipbook.model import param_count
from ftipbook.model.transformer import parameter_roles


@pytest.mark.parametrize("overrides, expected_roles", [
    (dict(), {"embedding", "attention", "ffn", "norm", "unembedding"}),
    (dict(pos="learned", unembed_bias=True, norm="layernorm", ffn="gelu", ffn_bias=True),
     {"embedding", "positions", "attention", "ffn", "norm", "unembedding"}),
    (dict(ffn="moe", n_experts=4, top_k=2, n_shared_experts=1, tie_embeddings=True),
     {"embedding", "attention", "router", "expert", "shared expert", "norm"}),
    (dict(layer_pattern="KM", n_layers=2), {"embedding", "kda", "mla", "ffn", "norm", "unembedding"}),
])
def test_roles_cover_every_parameter_once(make_model, make_cfg, overrides, expected_roles):
    model = make_model(**overrides)
    roles = parameter_roles(model)
    assert list(roles) == [name for name, _ in model.named_parameters()]
    assert set(roles.values()) == expected_roles
    params = dict(model.named_parameters())
    assert sum(params[n].numel() for n in roles) == param_count(make_cfg(**overrides))


def test_roles_follow_the_structure(make_model):
    roles = parameter_roles(make_model(ffn="moe", n_experts=4, top_k=1, n_shared_experts=1, pos="learned"))
    assert roles["embed.weight"] == "embedding" and roles["positions.weight"] == "positions"
    assert roles["blocks.1.mixer.fn.qkv.weight"] == "attention"
    assert roles["blocks.0.mixer.norm.weight"] == roles["blocks.0.ffn.norm.weight"] == roles["norm.weight"] == "norm"
    assert roles["blocks.0.ffn.fn.router.gate.weight"] == "router"
    assert roles["blocks.0.ffn.fn.experts.3.down.weight"] == "expert"
    assert roles["blocks.0.ffn.fn.shared.0.up.weight"] == "shared expert"
    assert roles["unembed.weight"] == "unembedding"


def test_mla_internal_norm_belongs_to_the_mixer(make_model):
    roles = parameter_roles(make_model(layer_pattern="M"))
    assert roles["blocks.0.mixer.fn.kv_a_norm.weight"] == "mla"


def test_an_unknown_tensor_is_refused(make_model):
    model = make_model()
    model.extra = nn.Parameter(torch.zeros(3))
    with pytest.raises(ValueError, match="parameter 'extra' belongs to none of the constructions of ftip-0012"):
        parameter_roles(model)
