"""Read and write the Hugging Face Llama / Qwen2 checkpoint layout (``config.json`` + safetensors).

Only safetensors files are read or written (never pickle). ``transformers`` is not needed here;
the tests use it to check that logits agree. Qwen2 is Llama with biases on the q/k/v
projections; our fused ``qkv`` tensor is the concatenation ``[q_proj; k_proj; v_proj]``.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors.torch import save

from ftipbook.atomic import FileSet, check_name, read_file_set, write_file_set
from ftipbook.file_records import json_record, safetensors_metadata, safetensors_record, tensors_digest

from ftipbook.model.config import ModelConfig
from ftipbook.model.transformer import DecoderLM

ARCHITECTURES = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM"}
#: Metadata key of the weights file written by :func:`save_hf`: the SHA-256 of the tensors and of
#: ``config.json``, checked by :func:`load_hf` (checkpoints from elsewhere have none and load unchecked).
DIGEST_KEY = "ftipbook.sha256"
#: Key and value :func:`save_hf` puts in ``config.json`` (``transformers`` keeps unknown keys as
#: attributes): a checkpoint that carries it was written by ftipbook, so its weights file must carry
#: :data:`DIGEST_KEY`, and it must be one ``model.safetensors`` (an added index is refused).
FORMAT_KEY, FORMAT = "ftipbook_format", "ftipbook.hf/1"
WEIGHTS, INDEX, CONFIG = "model.safetensors", "model.safetensors.index.json", "config.json"
#: The suffixes of the scale tensors of quantized checkpoints (fp8 block scales, GPTQ/AWQ, bitsandbytes).
_QUANT_SUFFIXES = ("weight_scale_inv", "weight_scale", "scales", "qweight", "qzeros", "absmax", "quant_map")


def config_from_hf(hf: dict) -> ModelConfig:
    """``ModelConfig`` of a Llama or Qwen2 ``config.json`` dictionary; refuses features we do not model."""
    model_type = hf.get("model_type")
    if model_type not in ARCHITECTURES:
        raise ValueError(f"model_type={model_type!r} is not supported; allowed: {sorted(ARCHITECTURES)}")
    rope = hf.get("rope_parameters") or hf.get("rope_scaling") or {}
    if rope.get("rope_type", rope.get("type", "default")) != "default":
        raise ValueError(f"rope type {rope.get('rope_type', rope.get('type'))!r} is not supported; only 'default' RoPE")
    unsupported = {
        "hidden_act": hf.get("hidden_act", "silu") != "silu",
        "use_sliding_window": bool(hf.get("use_sliding_window", False)),
        "mlp_bias": bool(hf.get("mlp_bias", False)),
        "partial_rotary_factor": hf.get("partial_rotary_factor", 1.0) != 1.0,
    }
    for key, bad in unsupported.items():
        if bad:
            raise ValueError(f"{key}={hf[key]!r} in config.json is not supported by DecoderLM")
    attention_bias = bool(hf.get("attention_bias", False))
    return ModelConfig(
        vocab_size=hf["vocab_size"],
        d_model=hf["hidden_size"],
        n_layers=hf["num_hidden_layers"],
        n_heads=hf["num_attention_heads"],
        n_kv_heads=hf.get("num_key_value_heads") or hf["num_attention_heads"],
        head_dim=hf.get("head_dim") or hf["hidden_size"] // hf["num_attention_heads"],
        d_ff=hf["intermediate_size"],
        max_seq_len=hf.get("max_position_embeddings", 2048),
        pos="rope",
        rope_theta=float(rope.get("rope_theta", hf.get("rope_theta", 10000.0))),
        norm="rmsnorm",
        norm_eps=hf.get("rms_norm_eps", 1e-6),
        ffn="swiglu",
        qkv_bias=model_type == "qwen2" or attention_bias,
        out_bias=attention_bias,
        tie_embeddings=bool(hf.get("tie_word_embeddings", False)),
    )


def config_to_hf(cfg: ModelConfig, model_type: str) -> dict:
    """The ``config.json`` dictionary of ``cfg`` as a ``model_type`` ("llama" or "qwen2") checkpoint."""
    if model_type not in ARCHITECTURES:
        raise ValueError(f"model_type={model_type!r} is not supported; allowed: {sorted(ARCHITECTURES)}")
    required = {
        "pos": "rope", "norm": "rmsnorm", "ffn": "swiglu", "mixer_placement": "pre", "ffn_placement": "pre",
        "final_norm": True, "layer_pattern": "A", "n_loops": 1, "unembed_bias": False, "ffn_bias": False,
    }
    if model_type == "qwen2":
        required.update(qkv_bias=True, out_bias=False)
    else:
        required.update(out_bias=cfg.qkv_bias)  # Llama's attention_bias covers q, k, v and o together
    for key, value in required.items():
        if getattr(cfg, key) != value:
            raise ValueError(f"{ARCHITECTURES[model_type]} layout needs {key}={value!r}, got {getattr(cfg, key)!r}")
    hf = {
        "architectures": [ARCHITECTURES[model_type]],
        "model_type": model_type,
        "vocab_size": cfg.vocab_size,
        "hidden_size": cfg.d_model,
        "num_hidden_layers": cfg.n_layers,
        "num_attention_heads": cfg.n_heads,
        "num_key_value_heads": cfg.kv_heads,
        "head_dim": cfg.d_head,
        "intermediate_size": cfg.d_ff,
        "max_position_embeddings": cfg.max_seq_len,
        "hidden_act": "silu",
        "rms_norm_eps": cfg.norm_eps,
        "rope_theta": cfg.rope_theta,
        "rope_parameters": {"rope_type": "default", "rope_theta": cfg.rope_theta},
        "tie_word_embeddings": cfg.tie_embeddings,
    }
    if model_type == "llama":
        hf["attention_bias"] = cfg.qkv_bias
    return hf


def _layer_names(i: int) -> dict[str, str]:
    """HF tensor name -> our name, for the tensors of layer ``i`` that map one to one."""
    hf, ours = f"model.layers.{i}.", f"blocks.{i}."
    return {
        hf + "input_layernorm.weight": ours + "mixer.norm.weight",
        hf + "self_attn.o_proj.weight": ours + "mixer.fn.out.weight",
        hf + "self_attn.o_proj.bias": ours + "mixer.fn.out.bias",
        hf + "post_attention_layernorm.weight": ours + "ffn.norm.weight",
        hf + "mlp.gate_proj.weight": ours + "ffn.fn.gate.weight",
        hf + "mlp.up_proj.weight": ours + "ffn.fn.up.weight",
        hf + "mlp.down_proj.weight": ours + "ffn.fn.down.weight",
    }


def state_dict_from_hf(tensors: dict[str, torch.Tensor], cfg: ModelConfig) -> dict[str, torch.Tensor]:
    """Rename HF tensors into a ``DecoderLM`` state dict (fusing q/k/v)."""
    out = {"embed.weight": tensors["model.embed_tokens.weight"], "norm.weight": tensors["model.norm.weight"]}
    out["unembed.weight"] = tensors["model.embed_tokens.weight" if cfg.tie_embeddings else "lm_head.weight"]
    for i in range(cfg.n_layers):
        hf = f"model.layers.{i}."
        out.update({ours: tensors[name] for name, ours in _layer_names(i).items() if name in tensors})
        attn = hf + "self_attn."
        for kind in ("weight", "bias"):
            if attn + f"q_proj.{kind}" in tensors:
                out[f"blocks.{i}.mixer.fn.qkv.{kind}"] = torch.cat([tensors[attn + f"{p}_proj.{kind}"] for p in "qkv"])
    return out


def state_dict_to_hf(model: DecoderLM) -> dict[str, torch.Tensor]:
    """Rename a ``DecoderLM`` state dict into HF tensor names, splitting ``qkv`` (contiguous copies)."""
    cfg, ours = model.cfg, model.state_dict()
    out = {"model.embed_tokens.weight": ours["embed.weight"], "model.norm.weight": ours["norm.weight"]}
    if not cfg.tie_embeddings:
        out["lm_head.weight"] = ours["unembed.weight"]
    q, kv = cfg.n_heads * cfg.d_head, cfg.kv_heads * cfg.d_head
    for i in range(cfg.n_layers):
        hf = f"model.layers.{i}."
        out.update({name: ours[mine] for name, mine in _layer_names(i).items() if mine in ours})
        for kind in ("weight", "bias"):
            fused = ours.get(f"blocks.{i}.mixer.fn.qkv.{kind}")
            if fused is not None:
                for p, part in zip("qkv", fused.split([q, kv, kv])):
                    out[hf + f"self_attn.{p}_proj.{kind}"] = part
    return {name: t.detach().contiguous().clone() for name, t in out.items()}


def _shards(files: FileSet, path: Path) -> list[str]:
    """The shard names of the index of a sharded checkpoint, each checked to stay inside ``path``."""
    index = json_record(files[INDEX], path / INDEX)
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in weight_map.items()):
        raise ValueError(f"{path / INDEX} has no 'weight_map' of tensor names to shard file names")
    shards = sorted(set(weight_map.values()))
    for shard in shards:
        check_name(path, shard, root=files.root)
    return shards


def _read_tensors(files: FileSet, path: Path, ours: bool) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """The tensors of the checkpoint in ``files`` (of ``path``) and the metadata of its single weights
    file (``{}`` for a sharded checkpoint). A checkpoint written by ftipbook (``ours``, or a weights
    file carrying :data:`DIGEST_KEY`) must be a single file: an index beside it is refused."""
    single = files[WEIGHTS]
    meta = safetensors_metadata(single, path / WEIGHTS) if isinstance(single, bytes) else {}
    if isinstance(files[INDEX], bytes):
        if ours or DIGEST_KEY in meta:
            raise ValueError(f"{path / INDEX} sits beside a checkpoint ftipbook wrote as one {WEIGHTS}; a foreign "
                             f"index cannot replace its digest-checked weights (remove {INDEX})")
        tensors = {}
        for shard in _shards(files, path):
            data = files[shard]
            if isinstance(data, Path):
                raise FileNotFoundError(f"{data}, named in {path / INDEX}, is missing")
            tensors.update(safetensors_record(data, path / shard))
        return tensors, {}
    if isinstance(single, Path):
        raise FileNotFoundError(f"{path} has neither {WEIGHTS} nor {INDEX}")
    return safetensors_record(single, path / WEIGHTS), meta


def _refuse_quantized(hf: dict, tensors: dict[str, torch.Tensor], path: Path) -> None:
    """Refuse, by name, a quantized checkpoint: its raw values without their scales would be a silently
    different model (an fp8 DeepSeek-V3 checkpoint's logits are 1.25 relative off)."""
    if hf.get("quantization_config"):
        raise ValueError(f"{path / CONFIG}: quantization_config={hf['quantization_config']!r} is not supported: "
                         f"DecoderLM loads unquantized weights only; dequantize the checkpoint first")
    scales = sorted(n for n in tensors if n.rsplit(".", 1)[-1] in _QUANT_SUFFIXES)
    float8 = sorted(n for n, t in tensors.items() if str(t.dtype).startswith("torch.float8"))
    if scales or float8:
        raise ValueError(f"{path}: tensor {(scales or float8)[0]!r} is part of a quantized checkpoint (scales or "
                         f"8-bit floats); DecoderLM loads unquantized weights only")


def _config_text(hf: dict) -> str:
    return json.dumps(hf, sort_keys=True, separators=(",", ":"))


def _checkpoint_dtype(hf: dict, tensors: dict[str, torch.Tensor], source: Path) -> torch.dtype:
    """The dtype a checkpoint declares (``torch_dtype``, or ``dtype`` in newer configs), else the
    one its floating tensors share, else float32."""
    name = hf.get("torch_dtype", hf.get("dtype"))
    if name is None:
        stored = {t.dtype for t in tensors.values() if t.is_floating_point()}
        return stored.pop() if len(stored) == 1 else torch.float32
    dtype = getattr(torch, str(name).removeprefix("torch."), None)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"{source}: torch_dtype={name!r} is not a floating-point torch dtype")
    return dtype


def _parse_checkpoint(
    files: FileSet, path: Path, parse: Callable[[dict], ModelConfig]
) -> tuple[dict, ModelConfig, dict[str, torch.Tensor]]:
    if isinstance(files[CONFIG], Path):
        raise FileNotFoundError(f"{path} is not a checkpoint directory: {CONFIG} is missing")
    hf = json_record(files[CONFIG], path / CONFIG)
    try:
        cfg = parse(hf)
    except (KeyError, TypeError, ValueError, OverflowError) as err:
        raise ValueError(f"{path / CONFIG}: {err}") from None
    ours = FORMAT_KEY in hf
    if ours and hf[FORMAT_KEY] != FORMAT:
        raise ValueError(f"{path / CONFIG}: {FORMAT_KEY}={hf[FORMAT_KEY]!r}; this ftipbook reads {FORMAT!r}")
    tensors, meta = _read_tensors(files, path, ours)
    if ours and DIGEST_KEY not in meta:
        raise ValueError(f"{path / WEIGHTS} has no {DIGEST_KEY!r} record, but {CONFIG} says ftipbook wrote it "
                         f"({FORMAT_KEY}={FORMAT!r}); the file was replaced or damaged")
    if DIGEST_KEY in meta and meta[DIGEST_KEY] != tensors_digest(tensors, _config_text(hf)):
        raise ValueError(f"{path / WEIGHTS} or {path / CONFIG} differs from what was saved "
                         f"(SHA-256 mismatch against the weights file's {DIGEST_KEY!r} record); a file is damaged")
    _refuse_quantized(hf, tensors, path)
    return hf, cfg, tensors


def _read_checkpoint(
    path: Path, parse: Callable[[dict], ModelConfig]
) -> tuple[dict, ModelConfig, dict[str, torch.Tensor]]:
    """``config.json`` of checkpoint directory ``path``, the config ``parse`` reads from it, and the
    weights, each file read once (:func:`ftipbook.atomic.read_file_set`: after an interrupted save,
    the previous checkpoint) and checked against the SHA-256 record (:data:`DIGEST_KEY`), which a
    checkpoint ftipbook wrote (:data:`FORMAT_KEY`) must carry. Shard names of an index must stay
    inside ``path``; in a Hugging Face hub snapshot (``.../snapshots/<rev>/``) files may link into
    the same repository's ``blobs/``. Errors name the file."""
    root = path.parent.parent if path.parent.name == "snapshots" else None
    return read_file_set(path, (WEIGHTS, INDEX, CONFIG), lambda files, p: _parse_checkpoint(files, p, parse),
                         root=root)


def load_hf(
    path: str | Path, *, device: torch.device | str | None = None, dtype: torch.dtype | None = None
) -> DecoderLM:
    """A ``DecoderLM`` holding the weights of a Llama/Qwen2 checkpoint directory.

    The parameters keep the checkpoint's declared dtype (a bfloat16 checkpoint loads as bfloat16)
    unless ``dtype`` asks for another one.
    """
    path = Path(path)
    hf, cfg, tensors = _read_checkpoint(path, config_from_hf)
    model = DecoderLM(cfg)
    model.load_state_dict(state_dict_from_hf(tensors, cfg), strict=True)
    return model.to(device=device, dtype=dtype or _checkpoint_dtype(hf, tensors, path / "config.json"))


def save_hf(model: DecoderLM, path: str | Path, model_type: str = "llama") -> None:
    """Write ``model`` as a ``model_type`` checkpoint: ``config.json`` and ``model.safetensors``,
    replaced together (:func:`ftipbook.atomic.write_file_set`, ``config.json`` last). The weights
    file's metadata records the SHA-256 of both (:data:`DIGEST_KEY`); ``transformers`` ignores it."""
    path = Path(path)
    hf = config_to_hf(model.cfg, model_type)
    hf["torch_dtype"] = str(next(model.parameters()).dtype).removeprefix("torch.")
    hf[FORMAT_KEY] = FORMAT
    tensors = state_dict_to_hf(model)
    meta = {"format": "pt", DIGEST_KEY: tensors_digest(tensors, _config_text(hf))}
    write_file_set(path, {WEIGHTS: save(tensors, metadata=meta), CONFIG: (json.dumps(hf, indent=2) + "\n").encode()})
