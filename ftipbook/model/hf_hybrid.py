"""Read and write the Hugging Face Kimi Linear and DeepSeek-V3 checkpoint layouts (ftip-00KV, ftip-000V, ftip-000Z).

The two hybrid families of the note, as ``transformers`` implements them
(``KimiLinearForCausalLM``, ``DeepseekV3ForCausalLM``), mapped onto :class:`~ftipbook.model.transformer.DecoderLM`.
The first ``first_k_dense_replace`` layers (Kimi: the ``"dense"`` ``mlp_layer_types``) keep a dense
SwiGLU of width ``intermediate_size`` (``moe_dense_layers``).


* Kimi Linear (``model_type="kimi_linear"``): KDA layers (letter ``K``) and MLA layers without
  positions (``M``). The transformers MLA layer keeps a shared key part of width
  ``qk_rope_head_dim`` that it never rotates (``mla_rotate_decoupled=False``; width 0 is
  ``mla_nope=True``). KDA maps one to one: the stored per-stream convolutions
  ``{q,k,v}_conv1d`` (no bias, SiLU), the low-rank decay gate ``f_a_proj, f_b_proj`` with
  ``A_log`` and ``dt_bias``, ``beta = sigmoid(b_proj x)``, and the sigmoid-gated RMSNorm with
  ``g_a_proj, g_b_proj``; ``g_b_proj`` has no bias, so ours is loaded as zeros and must be zero
  to export.
* DeepSeek-V3 (``model_type="deepseek_v3"``): MLA with decoupled RoPE in every layer. Interleaved
  RoPE (``rope_interleave=True``) rotates the pairs ``(x_0, x_1), (x_2, x_3), ...`` and returns
  them de-interleaved; it equals our half-rotation RoPE on the rope rows of the projections
  reordered evens first, which is how it is loaded. We write ``rope_interleave=False``.

Both: latent RMSNorms of ``c_KV`` and ``c_Q`` with epsilon ``1e-6`` whatever ``rms_norm_eps`` is
(``mla_latent_norm_eps``), and DeepSeek-V3's MoE: sigmoid router with selection bias
``e_score_correction_bias``, expert groups, normalized top-k weights times
``routed_scaling_factor`` (``moe_router="sigmoid"``), routed SwiGLU experts and one shared SwiGLU
of width ``n_shared_experts * moe_intermediate_size``, which is our ``n_shared_experts`` experts
side by side. A ``config.json`` field whose value we cannot compute is refused by name
(``ValueError``): YaRN or other RoPE scaling, attention biases, tied embeddings, grouped key/value
heads, activations other than SiLU, and dense layers that do not all precede the MoE layers.
Multi-token-prediction
modules (``num_nextn_predict_layers``) are not part of the logits and are not read.

Export (:func:`save_hf_hybrid`) refuses a model whose function the layout cannot hold, naming the
field or tensor. One reparametrization is used and is exact in real arithmetic: transformers fixes
the latent norms' epsilon at ``1e-6``, and ``RMSNorm_{e'}(s y) = RMSNorm_e(y)`` for
``s = sqrt(e'/e)``, so a model with latent epsilon ``e`` is written with its latent down-projection
rows scaled by ``s``. Only safetensors files are read or written.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import torch
from safetensors.torch import save

from ftipbook.atomic import write_file_set
from ftipbook.file_records import tensors_digest
from ftipbook.model.config import ModelConfig
from ftipbook.model.hf import DIGEST_KEY, FORMAT, FORMAT_KEY, _checkpoint_dtype, _config_text, _read_checkpoint
from ftipbook.model.transformer import DecoderLM

HYBRID_ARCHITECTURES = {"kimi_linear": "KimiLinearForCausalLM", "deepseek_v3": "DeepseekV3ForCausalLM"}
#: The epsilon ``transformers`` gives the RMSNorms of the MLA latents ``c_KV`` and ``c_Q`` in both families.
HF_LATENT_NORM_EPS = 1e-6
_MISSING = object()


def _get(hf: dict, *names: str, default: object = _MISSING) -> object:
    """The first of ``names`` present in ``hf`` (transformers writes some fields under other names)."""
    for name in names:
        if name in hf:
            return hf[name]
    if default is _MISSING:
        raise KeyError(f"config.json has no {' / '.join(names)}")
    return default


def _refuse(field: str, value: object, why: str) -> None:
    raise ValueError(f"{field}={value!r} in config.json is not supported by DecoderLM: {why}")


def _layer_kinds_from_hf(hf: dict, model_type: str, n_layers: int) -> tuple[str, list[str]]:
    """``(pattern, mlp kinds)``: one mixer letter and one ``"dense"``/``"sparse"`` per layer."""
    if model_type == "deepseek_v3":
        first_dense = _get(hf, "first_k_dense_replace", default=3)
        mlp = ["dense" if i < first_dense else "sparse" for i in range(n_layers)]
        return "M" * n_layers, mlp
    linear = hf.get("linear_attn_config") or {}
    types = hf.get("layer_types")
    if types is None and "kda_layers" in linear and "full_attn_layers" in linear:
        types = [None] * n_layers
        for key, kind in (("full_attn_layers", "full_attention"), ("kda_layers", "linear_attention")):
            layers = linear[key]
            if not isinstance(layers, list) or any(type(i) is not int or not 1 <= i <= n_layers for i in layers):
                _refuse(f"linear_attn_config.{key}", layers, f"need a list of 1-based layer numbers in [1, {n_layers}]")
            for i in layers:
                if types[i - 1] is not None:
                    _refuse(f"linear_attn_config.{key}", layers, f"layer {i} is listed twice")
                types[i - 1] = kind  # 1-based in Moonshot's configs
        if None in types:
            _refuse("linear_attn_config", linear, f"layer {types.index(None) + 1} is in neither kda_layers nor "
                    "full_attn_layers")
    if types is None:
        types = ["full_attention" if i and i % 4 == 0 else "linear_attention" for i in range(n_layers)]
    letters = {"linear_attention": "K", "full_attention": "M"}
    if len(types) != n_layers or any(t not in letters for t in types):
        _refuse("layer_types", types, f"need {n_layers} entries from {sorted(letters)}")
    mlp = hf.get("mlp_layer_types")
    if mlp is None:
        first_dense = hf.get("first_k_dense_replace", 1)
        mlp = ["dense" if i < first_dense else "sparse" for i in range(n_layers)]
    return "".join(letters[t] for t in types), list(mlp)


def _rope_theta(hf: dict) -> float:
    rope = hf.get("rope_parameters") or hf.get("rope_scaling") or {}
    kind = rope.get("rope_type", rope.get("type", "default"))
    if kind != "default":
        _refuse("rope_parameters.rope_type", kind, "only unscaled RoPE ('default'); YaRN changes the frequencies "
                "and the softmax scale")
    return float(rope.get("rope_theta", hf.get("rope_theta", 10000.0)))


def hybrid_config_from_hf(hf: dict) -> ModelConfig:
    """``ModelConfig`` of a Kimi Linear or DeepSeek-V3 ``config.json`` dictionary (ftip-00KV, ftip-000Z).

    Refuses, naming the field and value, whatever :class:`~ftipbook.model.transformer.DecoderLM`
    cannot compute exactly.
    """
    model_type = hf.get("model_type")
    if model_type not in HYBRID_ARCHITECTURES:
        raise ValueError(f"model_type={model_type!r} is not supported; allowed: {sorted(HYBRID_ARCHITECTURES)}")
    n_layers, n_heads = hf["num_hidden_layers"], hf["num_attention_heads"]
    checks = {
        "hidden_act": (hf.get("hidden_act", "silu"), "silu", "SwiGLU experts and SiLU convolutions only"),
        "attention_bias": (hf.get("attention_bias", False), False, "MLA has no biases on q_a/kv_a/o here"),
        "tie_word_embeddings": (hf.get("tie_word_embeddings", False), False, "the layouts keep a separate lm_head"),
        "num_key_value_heads": (hf.get("num_key_value_heads") or n_heads, n_heads,
                                "MLA expands one latent to every head; grouped heads break transformers' repeat_kv"),
    }
    for field, (value, allowed, why) in checks.items():
        if value != allowed:
            _refuse(field, value, why)
    pattern, mlp = _layer_kinds_from_hf(hf, model_type, n_layers)
    if set(mlp) - {"dense", "sparse"} or len(mlp) != n_layers:
        _refuse("mlp_layer_types", mlp, f"need {n_layers} entries from ['dense', 'sparse']")
    n_dense = mlp.count("dense")
    if mlp != ["dense"] * n_dense + ["sparse"] * (n_layers - n_dense):
        _refuse("mlp_layer_types", mlp, "the dense layers must come first (moe_dense_layers)")
    rope_dim = hf["qk_rope_head_dim"]
    fields: dict = dict(
        vocab_size=hf["vocab_size"], d_model=hf["hidden_size"], n_layers=n_layers, n_heads=n_heads,
        head_dim=hf["qk_nope_head_dim"], d_ff=hf["intermediate_size"],
        max_seq_len=_get(hf, "max_position_embeddings", "model_max_length", default=2048), pos="none",
        norm="rmsnorm", norm_eps=hf.get("rms_norm_eps", 1e-6), layer_pattern=pattern,
        kv_lora_rank=hf["kv_lora_rank"], q_lora_rank=hf.get("q_lora_rank"), mla_v_head_dim=hf["v_head_dim"],
        mla_latent_norm_eps=HF_LATENT_NORM_EPS, ffn="swiglu" if n_dense == n_layers else "moe",
    )
    if model_type == "deepseek_v3":
        if rope_dim == 0:
            _refuse("qk_rope_head_dim", rope_dim, "DeepSeek-V3 rotates a decoupled part of width >= 2")
        fields.update(rope_head_dim=rope_dim, rope_theta=_rope_theta(hf))
    else:
        linear = hf.get("linear_attn_config") or {}
        fields.update(
            kda_n_heads=linear.get("num_heads", hf.get("linear_num_heads", 32)),
            kda_head_dim=linear.get("head_dim", hf.get("linear_head_dim", 128)),
            conv_kernel=linear.get("short_conv_kernel_size", hf.get("linear_conv_kernel_dim", 4)),
        )
        if rope_dim:  # a shared key part that transformers never rotates
            fields.update(rope_head_dim=rope_dim, mla_rotate_decoupled=False)
        else:
            fields.update(mla_nope=True)
    if fields["ffn"] == "moe":
        for key in ("scoring_func", "moe_router_activation_func"):
            if hf.get(key, "sigmoid") != "sigmoid":
                _refuse(key, hf[key], "transformers' router is sigmoid gating")
        shared = _get(hf, "n_shared_experts", "num_shared_experts", default=1)
        if not shared:
            _refuse("n_shared_experts", shared, "transformers always builds the shared expert; need >= 1")
        fields.update(
            n_experts=_get(hf, "n_routed_experts", "num_local_experts", "num_experts"),
            top_k=_get(hf, "num_experts_per_tok", "num_experts_per_token"), n_shared_experts=shared,
            d_expert=hf["moe_intermediate_size"], expert_ffn="swiglu", moe_router="sigmoid",
            moe_routed_scale=float(_get(hf, "routed_scaling_factor", default=1.0)),
            moe_norm_topk=bool(_get(hf, "norm_topk_prob", "moe_renormalize", default=True)),
            moe_n_groups=_get(hf, "n_group", "num_expert_group", default=1) or 1,
            moe_topk_groups=_get(hf, "topk_group", default=1) or 1, moe_dense_layers=n_dense,
        )
    return ModelConfig(**fields)


def _latent_eps(cfg: ModelConfig) -> float:
    return cfg.norm_eps if cfg.mla_latent_norm_eps is None else cfg.mla_latent_norm_eps


def _check_exportable(cfg: ModelConfig, model_type: str) -> None:
    """Refuse, naming the field, a configuration whose function the ``model_type`` layout cannot hold."""
    name = HYBRID_ARCHITECTURES[model_type]
    required = {"norm": "rmsnorm", "mixer_placement": "pre", "ffn_placement": "pre", "final_norm": True,
                "n_loops": 1, "unembed_bias": False, "tie_embeddings": False, "ffn_bias": False, "out_bias": False}
    if cfg.ffn == "moe":
        required.update(expert_ffn="swiglu", moe_router="sigmoid")
    else:
        required.update(ffn="swiglu")
    kinds = set(cfg.layer_kinds)
    if model_type == "deepseek_v3":
        required.update(mla_nope=False, mla_rotate_decoupled=True)
    elif "M" in kinds and not cfg.mla_nope:
        required.update(mla_rotate_decoupled=False)  # transformers' Kimi MLA never rotates
    if "K" in kinds:
        required.update(kda_gate_activation="sigmoid")
    for key, value in required.items():
        if getattr(cfg, key) != value:
            raise ValueError(f"{name} layout needs {key}={value!r}, got {getattr(cfg, key)!r}")
    allowed = "M" if model_type == "deepseek_v3" else "KM"
    if kinds - set(allowed):
        raise ValueError(f"{name} layout has layers {sorted(allowed)} only; layer_pattern={cfg.layer_pattern!r}")
    if cfg.position_stage == "embedding":
        raise ValueError(f"{name} layout has no embedding-stage positions; pos={cfg.pos!r}")
    kda_head = cfg.kda_head_dim if cfg.kda_head_dim is not None else cfg.d_head
    if "K" in kinds and cfg.kda_gate_rank not in (None, kda_head):
        raise ValueError(f"{name} layout's decay gate has rank linear_head_dim={kda_head}; "
                         f"kda_gate_rank={cfg.kda_gate_rank!r}")
    if cfg.ffn == "moe" and cfg.n_shared_experts < 1:
        raise ValueError(f"{name} layout always has a shared expert; n_shared_experts={cfg.n_shared_experts}")


def hybrid_config_to_hf(cfg: ModelConfig, model_type: str) -> dict:
    """The ``config.json`` dictionary of ``cfg`` as a ``model_type`` checkpoint (``"kimi_linear"`` or
    ``"deepseek_v3"``); refuses a configuration the layout cannot hold, naming the field."""
    if model_type not in HYBRID_ARCHITECTURES:
        raise ValueError(f"model_type={model_type!r} is not supported; allowed: {sorted(HYBRID_ARCHITECTURES)}")
    _check_exportable(cfg, model_type)
    kinds, moe = cfg.layer_kinds, cfg.ffn == "moe"
    rope_dim = 0 if cfg.mla_nope else cfg.rope_head_dim
    hf = {
        "architectures": [HYBRID_ARCHITECTURES[model_type]], "model_type": model_type,
        "vocab_size": cfg.vocab_size, "hidden_size": cfg.d_model, "num_hidden_layers": cfg.n_layers,
        "num_attention_heads": cfg.n_heads, "num_key_value_heads": cfg.n_heads, "intermediate_size": cfg.d_ff,
        "hidden_act": "silu", "rms_norm_eps": cfg.norm_eps, "attention_bias": False, "tie_word_embeddings": False,
        "kv_lora_rank": cfg.kv_lora_rank, "q_lora_rank": cfg.q_lora_rank, "qk_nope_head_dim": cfg.d_head,
        "qk_rope_head_dim": rope_dim, "v_head_dim": cfg.mla_v_head_dim or cfg.d_head,
        "moe_intermediate_size": cfg.expert_width, "routed_scaling_factor": cfg.moe_routed_scale,
        "topk_group": cfg.moe_topk_groups, "pad_token_id": None, "bos_token_id": None, "eos_token_id": None,
    }
    if model_type == "deepseek_v3":
        hf.update({
            "max_position_embeddings": cfg.max_seq_len, "n_routed_experts": cfg.n_experts,
            "num_experts_per_tok": cfg.top_k, "n_shared_experts": cfg.n_shared_experts, "n_group": cfg.moe_n_groups,
            "norm_topk_prob": cfg.moe_norm_topk, "first_k_dense_replace": cfg.moe_dense_layers if moe else cfg.n_layers,
            # transformers 5 reads rope_parameters, 4.x the top-level rope_theta (else 10000)
            "rope_theta": cfg.rope_theta, "rope_parameters": {"rope_type": "default", "rope_theta": cfg.rope_theta},
            "rope_interleave": False, "num_nextn_predict_layers": 0,
        })
    else:
        hf.update({
            "model_max_length": cfg.max_seq_len, "num_experts": cfg.n_experts, "num_experts_per_token": cfg.top_k,
            "num_shared_experts": cfg.n_shared_experts, "num_expert_group": cfg.moe_n_groups,
            "moe_renormalize": cfg.moe_norm_topk,
            "linear_num_heads": cfg.kda_n_heads if cfg.kda_n_heads is not None else cfg.n_heads,
            "linear_head_dim": cfg.kda_head_dim if cfg.kda_head_dim is not None else cfg.d_head,
            "linear_conv_kernel_dim": cfg.conv_kernel,
            "layer_types": ["linear_attention" if k == "K" else "full_attention" for k in kinds],
            "mlp_layer_types": ["sparse" if cfg.ffn_config(i).ffn == "moe" else "dense" for i in range(cfg.n_layers)],
        })
    return hf


# ------------------------------------------------------------------------------------------------
# tensors
# ------------------------------------------------------------------------------------------------
def _deinterleave(rope_dim: int) -> torch.Tensor:
    """Row order that turns interleaved rotary pairs into the half-rotation layout: evens, then odds."""
    return torch.cat([torch.arange(0, rope_dim, 2), torch.arange(1, rope_dim, 2)])


def _reorder_query_rope(w: torch.Tensor, n_heads: int, nope: int, order: torch.Tensor) -> torch.Tensor:
    """Reorder the rope rows of each head of a query projection ``[H (d_n + d_R), in]``."""
    heads = w.reshape(n_heads, -1, w.shape[-1])
    return torch.cat([heads[:, :nope], heads[:, nope:][:, order]], dim=1).reshape(w.shape)


def _ffn_prefix(model_type: str, moe: bool) -> str:
    return "block_sparse_moe." if model_type == "kimi_linear" and moe else "mlp."


def _expert_names(model_type: str) -> tuple[str, str, str]:
    return ("w1", "w3", "w2") if model_type == "kimi_linear" else ("gate_proj", "up_proj", "down_proj")


def _kda_names(i: int) -> dict[str, str]:
    hf, ours = f"model.layers.{i}.self_attn.", f"blocks.{i}.mixer.fn."
    names = {f"{p}_proj.weight": f"{p}_proj.weight" for p in "qkvbo"}
    names.update({f"{p}_conv1d.weight": f"{p}_conv.weight" for p in "qkv"})
    names.update({"f_a_proj.weight": "f_proj.0.weight", "f_b_proj.weight": "f_proj.1.weight",
                  "g_a_proj.weight": "g_proj.0.weight", "g_b_proj.weight": "g_proj.1.weight",
                  "dt_bias": "dt_bias", "o_norm.weight": "o_norm_weight"})
    return {hf + k: ours + v for k, v in names.items()}


def _mla_names(i: int, q_lora: bool) -> dict[str, str]:
    hf, ours = f"model.layers.{i}.self_attn.", f"blocks.{i}.mixer.fn."
    names = {"kv_a_proj_with_mqa.weight": "kv_a_proj.weight", "kv_a_layernorm.weight": "kv_a_norm.weight",
             "kv_b_proj.weight": "kv_b_proj.weight", "o_proj.weight": "o_proj.weight"}
    names.update({"q_a_proj.weight": "q_a_proj.weight", "q_a_layernorm.weight": "q_a_norm.weight",
                  "q_b_proj.weight": "q_b_proj.weight"} if q_lora else {"q_proj.weight": "q_proj.weight"})
    return {hf + k: ours + v for k, v in names.items()}


def _ffn_names(i: int, cfg: ModelConfig, model_type: str) -> dict[str, str]:
    moe = cfg.ffn_config(i).ffn == "moe"
    hf, ours = f"model.layers.{i}." + _ffn_prefix(model_type, moe), f"blocks.{i}.ffn.fn."
    if not moe:
        return {hf + f"{p}_proj.weight": ours + f"{p}.weight" for p in ("gate", "up", "down")}
    names = {hf + "gate.weight": ours + "router.gate.weight",
             hf + "gate.e_score_correction_bias": ours + "router.score_bias"}
    for j in range(cfg.n_experts):
        for theirs, mine in zip(_expert_names(model_type), ("gate", "up", "down")):
            names[hf + f"experts.{j}.{theirs}.weight"] = ours + f"experts.{j}.{mine}.weight"
    return names


def _names(cfg: ModelConfig, model_type: str) -> dict[str, str]:
    """HF tensor name -> our name for every tensor that maps one to one (shared experts excluded)."""
    names = {"model.embed_tokens.weight": "embed.weight", "model.norm.weight": "norm.weight",
             "lm_head.weight": "unembed.weight"}
    for i, kind in enumerate(cfg.layer_kinds):
        names[f"model.layers.{i}.input_layernorm.weight"] = f"blocks.{i}.mixer.norm.weight"
        names[f"model.layers.{i}.post_attention_layernorm.weight"] = f"blocks.{i}.ffn.norm.weight"
        names.update(_kda_names(i) if kind == "K" else _mla_names(i, cfg.q_lora_rank is not None))
        names.update(_ffn_names(i, cfg, model_type))
    return names


def _tensor(tensors: dict[str, torch.Tensor], name: str) -> torch.Tensor:
    """``tensors[name]``; a dense Kimi Linear layer is also found under ``block_sparse_moe.``, where
    ``transformers`` writes it (Moonshot's checkpoints use ``mlp.``)."""
    other = name.replace(".mlp.", ".block_sparse_moe.")
    return tensors[other if name not in tensors and other in tensors else name]


def hybrid_state_dict_from_hf(tensors: dict[str, torch.Tensor], cfg: ModelConfig, hf: dict) -> dict[str, torch.Tensor]:
    """Rename the tensors of a Kimi Linear / DeepSeek-V3 checkpoint into a ``DecoderLM`` state dict.

    Reshapes ``A_log`` to ``[H]``, zero-fills the KDA output-gate bias the layout lacks, splits the
    shared expert into ``n_shared_experts`` experts and, for ``rope_interleave``, reorders the rope
    rows of the query and key projections (module docstring). A missing tensor raises ``KeyError``.
    """
    model_type = hf["model_type"]
    out = {ours: _tensor(tensors, name) for name, ours in _names(cfg, model_type).items()}
    rope = 0 if cfg.mla_nope else cfg.rope_head_dim
    interleaved = model_type == "deepseek_v3" and hf.get("rope_interleave", True)
    for i, kind in enumerate(cfg.layer_kinds):
        fn = f"blocks.{i}.mixer.fn."
        if kind == "K":
            out[fn + "A_log"] = tensors[f"model.layers.{i}.self_attn.A_log"].reshape(-1)
            out[fn + "g_proj.1.bias"] = torch.zeros(out[fn + "g_proj.1.weight"].shape[0],
                                                     dtype=out[fn + "g_proj.1.weight"].dtype)
        elif interleaved:
            order = _deinterleave(rope)
            q = fn + ("q_proj.weight" if cfg.q_lora_rank is None else "q_b_proj.weight")
            out[q] = _reorder_query_rope(out[q], cfg.n_heads, cfg.d_head, order)
            kv = out[fn + "kv_a_proj.weight"]
            out[fn + "kv_a_proj.weight"] = torch.cat([kv[: cfg.kv_lora_rank], kv[cfg.kv_lora_rank :][order]])
        if cfg.ffn_config(i).ffn == "moe":
            shared = f"model.layers.{i}." + _ffn_prefix(model_type, True) + "shared_experts."
            parts = {p: tensors[shared + f"{p}_proj.weight"] for p in ("gate", "up", "down")}
            for s in range(cfg.n_shared_experts):
                rows = slice(s * cfg.expert_width, (s + 1) * cfg.expert_width)
                ours = f"blocks.{i}.ffn.fn.shared.{s}."
                out[ours + "gate.weight"], out[ours + "up.weight"] = parts["gate"][rows], parts["up"][rows]
                out[ours + "down.weight"] = parts["down"][:, rows]
    return out


def hybrid_state_dict_to_hf(model: DecoderLM, model_type: str) -> dict[str, torch.Tensor]:
    """The checkpoint tensors of ``model`` in the ``model_type`` layout (contiguous copies).

    Refuses a nonzero KDA output-gate bias (``g_b_proj`` has none), naming the tensor; scales the
    latent down-projections when the latent epsilon is not ``1e-6`` (module docstring).
    """
    cfg, ours = model.cfg, model.state_dict()
    _check_exportable(cfg, model_type)
    out = {name: ours[mine] for name, mine in _names(cfg, model_type).items()}
    scale = math.sqrt(HF_LATENT_NORM_EPS / _latent_eps(cfg))
    for i, kind in enumerate(cfg.layer_kinds):
        fn, hf = f"blocks.{i}.mixer.fn.", f"model.layers.{i}.self_attn."
        if kind == "K":
            bias = ours[fn + "g_proj.1.bias"]
            if bool(bias.ne(0).any()):
                raise ValueError(f"{fn}g_proj.1.bias is nonzero (max |b| = {float(bias.abs().max()):.3g}): the KDA "
                                 f"output gate of {HYBRID_ARCHITECTURES[model_type]} (g_b_proj) has no bias")
            out[hf + "A_log"] = ours[fn + "A_log"].reshape(1, 1, -1, 1)
        elif scale != 1.0:
            kv = out[hf + "kv_a_proj_with_mqa.weight"]
            out[hf + "kv_a_proj_with_mqa.weight"] = torch.cat([kv[: cfg.kv_lora_rank] * scale, kv[cfg.kv_lora_rank :]])
            if cfg.q_lora_rank is not None:
                out[hf + "q_a_proj.weight"] = out[hf + "q_a_proj.weight"] * scale
        if cfg.ffn_config(i).ffn == "moe":
            shared = f"model.layers.{i}." + _ffn_prefix(model_type, True) + "shared_experts."
            experts = [f"blocks.{i}.ffn.fn.shared.{s}." for s in range(cfg.n_shared_experts)]
            out[shared + "gate_proj.weight"] = torch.cat([ours[e + "gate.weight"] for e in experts])
            out[shared + "up_proj.weight"] = torch.cat([ours[e + "up.weight"] for e in experts])
            out[shared + "down_proj.weight"] = torch.cat([ours[e + "down.weight"] for e in experts], dim=1)
    return {name: t.detach().contiguous().clone() for name, t in out.items()}


# ------------------------------------------------------------------------------------------------
# files
# ------------------------------------------------------------------------------------------------
def load_hf_hybrid(
    path: str | Path, *, device: torch.device | str | None = None, dtype: torch.dtype | None = None
) -> DecoderLM:
    """A ``DecoderLM`` holding a Kimi Linear or DeepSeek-V3 checkpoint directory (``config.json`` +
    safetensors), in the checkpoint's declared dtype unless ``dtype`` asks for another one.

    A weights file written by :func:`save_hf_hybrid` is checked against its SHA-256 record
    (:data:`ftipbook.model.hf.DIGEST_KEY`).
    """
    path = Path(path)
    hf, cfg, tensors = _read_checkpoint(path, hybrid_config_from_hf)
    try:
        state = hybrid_state_dict_from_hf(tensors, cfg, hf)
    except KeyError as err:
        raise ValueError(f"{path}: tensor {err} is missing from the checkpoint") from None
    model = DecoderLM(cfg)
    model.load_state_dict(state, strict=True)
    return model.to(device=device, dtype=dtype or _checkpoint_dtype(hf, tensors, path / "config.json"))


def save_hf_hybrid(model: DecoderLM, path: str | Path, model_type: str) -> None:
    """Write ``model`` as a ``model_type`` checkpoint (``"kimi_linear"`` or ``"deepseek_v3"``):
    ``config.json`` and ``model.safetensors``, replaced together (``config.json`` last), the weights
    file's metadata holding the SHA-256 of both. Refuses, naming the field or tensor, a model the
    layout cannot hold exactly; nothing is written then."""
    path = Path(path)
    hf = hybrid_config_to_hf(model.cfg, model_type)
    hf["torch_dtype"] = str(next(model.parameters()).dtype).removeprefix("torch.")
    hf[FORMAT_KEY] = FORMAT
    tensors = hybrid_state_dict_to_hf(model, model_type)
    meta = {"format": "pt", DIGEST_KEY: tensors_digest(tensors, _config_text(hf))}
    write_file_set(path, {"model.safetensors": save(tensors, metadata=meta),
                          "config.json": (json.dumps(hf, indent=2) + "\n").encode()})
