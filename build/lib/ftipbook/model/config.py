"""The decoder's configuration: one dataclass naming every architecture coordinate.

The symbols of Notation ftip-000L map to fields as ``T = max_seq_len``, ``d = d_model``,
``d_ff = d_ff``, ``H = n_heads``, ``d_h = head_dim`` and ``L = n_layers``. The defaults describe
a tiny model that runs in milliseconds on a CPU. Floating-point precision is not a field: the
model follows the dtype of its parameters (``model.to(torch.bfloat16)``).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, fields

POSITIONS = ("none", "sinusoidal", "learned", "rope", "alibi")
NORMS = ("layernorm", "rmsnorm")
PLACEMENTS = ("pre", "post")
DENSE_FFNS = ("relu", "gelu", "swiglu")
FFNS = DENSE_FFNS + ("moe",)
KDA_GATE_ACTIVATIONS = ("sigmoid", "swish")
#: MoE routers, softmax over the selected scores (ftip-000X) or DeepSeek-V3's sigmoid gating (ftip-000Z).
MOE_ROUTERS = ("softmax", "sigmoid")
#: Layer-pattern letters, for full softmax attention, multi-head latent attention and Kimi Delta Attention.
MIXERS = {"A": "attention", "M": "mla", "K": "kda"}

#: Where each positional scheme acts (Remark ftip-000O), on the hidden vector at the embedding
#: stage, on queries and keys, on the attention scores, or nowhere.
POSITION_STAGE = {
    "none": "none",
    "sinusoidal": "embedding",
    "learned": "embedding",
    "rope": "qk",
    "alibi": "scores",
}


def parse_pattern(pattern: str, n_layers: int) -> str:
    """Expand ``layer_pattern`` to one letter per layer, e.g. ``("KKKA", 8) -> "KKKAKKKA"``.

    The pattern is repeated, so its length must divide ``n_layers``.
    """
    if not isinstance(pattern, str) or not pattern:
        raise ValueError(f"layer_pattern must be a non-empty string over {sorted(MIXERS)}, got {pattern!r}")
    unknown = sorted(set(pattern) - set(MIXERS))
    if unknown:
        raise ValueError(
            f"layer_pattern {pattern!r} has unknown letter(s) {unknown}; allowed: "
            + ", ".join(f"{k!r} ({v})" for k, v in MIXERS.items())
        )
    if n_layers % len(pattern):
        raise ValueError(
            f"layer_pattern {pattern!r} has length {len(pattern)}, which does not divide n_layers={n_layers}; "
            f"the pattern is repeated, so n_layers must be a multiple of its length"
        )
    return pattern * (n_layers // len(pattern))


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not supported; allowed: {', '.join(map(repr, allowed))}")


def _finite_real(name: str, value: object) -> None:
    """Refuse a float field that is not a real number (``TypeError``) or not finite (``ValueError``)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"{name}={value!r} must be a finite real number (int or float), got {type(value).__name__}")
    if not math.isfinite(value):
        raise ValueError(f"{name}={value!r} must be a finite real number")


#: The largest declared initialization scale (the note's models use 0.02; a std of 1e12 gives NaN logits).
MAX_INIT_STD = 10.0

#: What each annotation of :class:`ModelConfig` admits, for the type check every field gets.
_FIELD_KINDS: dict[str, tuple[str, tuple[type, ...]]] = {
    "int": ("an int", (int,)), "int | None": ("an int or None", (int, type(None))),
    "float": ("a real number (int or float)", (int, float)), "bool": ("True or False", (bool,)),
    "float | None": ("a real number (int or float) or None", (int, float, type(None))),
    "str": ("a string", (str,)),
}


def _check_field_types(cfg: object) -> None:
    """``TypeError`` naming the first field whose value is not of its declared kind (a ``bool`` is
    not an int or a float here, though Python lets it pass as one)."""
    for f in fields(cfg):
        kind = _FIELD_KINDS.get(f.type if isinstance(f.type, str) else getattr(f.type, "__name__", ""))
        if kind is None:  # a field of a subclass, of a kind this check does not know
            continue
        value, (what, types) = getattr(cfg, f.name), kind
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise TypeError(f"{f.name}={value!r} must be {what}, got {type(value).__name__}")


def _at_least(name: str, value: object, low: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name}={value!r} must be an int >= {low}")


@dataclass(frozen=True)
class ModelConfig:
    """Architecture of a decoder-only language model (ftip-0012), symbols as in ftip-000L.

    Frozen: derive variants with ``dataclasses.replace(cfg, field=value)``, which validates again.
    """

    # sizes (Notation ftip-000L)
    vocab_size: int = 256  # |V|; token ids are 0 .. vocab_size-1
    d_model: int = 64  # d, width of the residual stream
    n_layers: int = 2  # L, decoder blocks in the stack
    n_heads: int = 4  # H, query heads of an attention layer
    n_kv_heads: int | None = None  # key/value heads: None = n_heads (MHA), 1 < G < H (GQA), 1 (MQA)
    head_dim: int | None = None  # d_h, query/key/value width of one head; None = d_model // n_heads
    d_ff: int = 256  # d_ff, hidden width of the dense feed-forward sublayer
    max_seq_len: int = 128  # T, longest sequence declared; learned positions refuse longer ones
    # positions (Remark ftip-000O)
    pos: str = "rope"  # "none" | "sinusoidal" | "learned" | "rope" | "alibi"
    rope_theta: float = 10000.0  # RoPE base; frequencies are theta^(-2i/d_h)
    # normalization and its placement (Definitions ftip-0011, ftip-006F, ftip-006E)
    norm: str = "rmsnorm"  # "layernorm" | "rmsnorm"
    norm_eps: float = 1e-5  # declared stabilizer epsilon of every norm
    mixer_placement: str = "pre"  # "pre": X + F(N(X)), "post": N(X + F(X)) on the mixer branch
    ffn_placement: str = "pre"  # the same choice on the feed-forward branch
    final_norm: bool = True  # normalize the last hidden state before the unembedding
    # feed-forward sublayer (Definitions ftip-000W, ftip-000X)
    ffn: str = "swiglu"  # "relu" | "gelu" | "swiglu" | "moe"
    ffn_bias: bool = False  # biases b1, b2 in the feed-forward maps (dense and experts)
    n_experts: int = 8  # J, routed experts of a MoE layer
    top_k: int = 2  # k, routed experts selected per token
    n_shared_experts: int = 0  # experts applied to every token besides the routed ones
    d_expert: int | None = None  # hidden width of one expert; None = d_ff
    expert_ffn: str = "swiglu"  # dense form of each expert: "relu" | "gelu" | "swiglu"
    moe_aux_loss_coef: float = 0.0  # weight of the Switch load-balancing loss; 0 = not computed
    moe_router: str = "softmax"  # "softmax": softmax over the top-k scores; "sigmoid": DeepSeek-V3 gating
    moe_routed_scale: float = 1.0  # sigmoid router: factor on the routed weights (routed_scaling_factor)
    moe_norm_topk: bool = True  # sigmoid router: divide the selected affinities by their sum
    moe_n_groups: int = 1  # sigmoid router: expert groups (n_group); experts are split into equal groups
    moe_topk_groups: int = 1  # sigmoid router: groups a token may route to (topk_group), <= moe_n_groups
    moe_dense_layers: int = 0  # with ffn="moe": the first layers keep a dense expert_ffn of width d_ff
    # layer stack
    layer_pattern: str = "A"  # repeated to n_layers: "A" softmax attention, "M" MLA, "K" KDA
    n_loops: int = 1  # r, passes through the (weight-shared) stack: depth reuse
    # projections
    qkv_bias: bool = False  # bias on the query/key/value projections (Qwen2 uses one)
    out_bias: bool = False  # bias on the attention output projection W^O
    tie_embeddings: bool = False  # W_U = E (the unembedding reuses the token embedding)
    unembed_bias: bool = False  # logits z = W_U h + b_U with a learned b_U
    init_std: float = 0.02  # standard deviation of the normal weight initialization
    # multi-head latent attention, read by model/mla.py (layers "M")
    kv_lora_rank: int = 32  # d_c, width of the compressed key/value latent that is cached
    q_lora_rank: int | None = None  # width of the query latent; None = full-rank query projection
    rope_head_dim: int = 8  # width of the decoupled RoPE part of each query/key head
    mla_nope: bool = False  # MLA layers carry no positional encoding (as in Kimi Linear)
    mla_v_head_dim: int | None = None  # value width of one MLA head; None = head_dim
    mla_absorb: bool = False  # run MLA with W_UK, W_UV absorbed into query and output (same function)
    mla_latent_norm_eps: float | None = None  # epsilon of the RMSNorms of c_KV and c_Q; None = norm_eps
    mla_rotate_decoupled: bool = True  # rotate the decoupled rope_head_dim part; False: an unrotated shared key
    # Kimi Delta Attention, read by model/kda.py (layers "K")
    kda_n_heads: int | None = None  # heads of a KDA layer; None = n_heads
    kda_head_dim: int | None = None  # key/value width of one KDA head; None = head_dim
    kda_gate_rank: int | None = None  # rank of the low-rank channel-wise decay gate; None = KDA head width
    conv_kernel: int = 4  # width of the short causal depthwise convolution on q, k, v
    kda_chunk_size: int = 64  # chunk length of the chunked (training) form, as in FLA
    kda_gate_activation: str = "sigmoid"  # output gate of the gated RMSNorm: "sigmoid" | "swish"

    def __post_init__(self) -> None:
        self.validate()

    # derived sizes -------------------------------------------------------------------------
    @property
    def d_head(self) -> int:
        """The head width d_h, ``head_dim`` if declared, else ``d_model // n_heads``."""
        return self.head_dim if self.head_dim is not None else self.d_model // self.n_heads

    @property
    def kv_heads(self) -> int:
        """Number of key/value heads (``n_heads`` for MHA)."""
        return self.n_kv_heads if self.n_kv_heads is not None else self.n_heads

    @property
    def expert_width(self) -> int:
        """The hidden width of one expert, ``d_expert`` if declared, else ``d_ff``."""
        return self.d_expert if self.d_expert is not None else self.d_ff

    def ffn_config(self, layer: int) -> "ModelConfig":
        """The configuration whose ``ffn`` layer ``layer`` builds: ``self``, except that with
        ``ffn="moe"`` the first ``moe_dense_layers`` layers take the dense ``expert_ffn`` of width
        ``d_ff`` (DeepSeek-V3's ``first_k_dense_replace``)."""
        if self.ffn == "moe" and layer < self.moe_dense_layers:
            return dataclasses.replace(self, ffn=self.expert_ffn, moe_dense_layers=0)
        return self

    @property
    def layer_kinds(self) -> str:
        """One pattern letter per layer, e.g. ``"KKKAKKKA"``."""
        return parse_pattern(self.layer_pattern, self.n_layers)

    @property
    def position_stage(self) -> str:
        """Where ``pos`` acts: ``"embedding"``, ``"qk"``, ``"scores"`` or ``"none"``."""
        return POSITION_STAGE[self.pos]

    # validation ----------------------------------------------------------------------------
    def validate(self) -> None:
        """Raise ``TypeError`` or ``ValueError`` naming the field, its value and what is allowed.

        Every field is checked for its kind and range whether or not the layers read it; the
        relations between fields (``top_k <= n_experts``, even RoPE widths) are checked for the
        mixers and feed-forward sublayers the configuration uses.
        """
        _check_field_types(self)
        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "d_ff", "max_seq_len", "n_loops"):
            _at_least(name, getattr(self, name), 1)
        _choice("pos", self.pos, POSITIONS)
        _choice("norm", self.norm, NORMS)
        _choice("mixer_placement", self.mixer_placement, PLACEMENTS)
        _choice("ffn_placement", self.ffn_placement, PLACEMENTS)
        _choice("ffn", self.ffn, FFNS)
        for name in ("norm_eps", "rope_theta", "init_std", "moe_aux_loss_coef", "moe_routed_scale"):
            _finite_real(name, getattr(self, name))
        if not self.norm_eps > 0:
            raise ValueError(f"norm_eps={self.norm_eps!r} must be > 0 (the declared stabilizer)")
        if not self.rope_theta >= 1:
            raise ValueError(f"rope_theta={self.rope_theta!r} must be >= 1 (the frequencies theta^(-2i/d_h) must "
                             f"not exceed 1; a base near 0 overflows them)")
        if not 0 < self.init_std <= MAX_INIT_STD:
            raise ValueError(f"init_std={self.init_std!r} must lie in (0, {MAX_INIT_STD}]: larger weights overflow "
                             f"float32 activations within a layer or two")
        if self.head_dim is None:
            if self.d_model % self.n_heads:
                raise ValueError(
                    f"n_heads={self.n_heads} does not divide d_model={self.d_model}; "
                    f"choose n_heads dividing d_model or declare head_dim"
                )
        else:
            _at_least("head_dim", self.head_dim, 1)
        if self.n_kv_heads is not None:
            _at_least("n_kv_heads", self.n_kv_heads, 1)
            if self.n_heads % self.n_kv_heads:
                raise ValueError(
                    f"n_kv_heads={self.n_kv_heads} does not divide n_heads={self.n_heads}; "
                    f"each key/value head serves a whole group of query heads"
                )
        if self.pos == "rope" and self.d_head % 2:
            raise ValueError(f"pos='rope' rotates pairs of coordinates, so head_dim={self.d_head} must be even")
        kinds = parse_pattern(self.layer_pattern, self.n_layers)
        self._validate_ranges()
        if self.ffn == "moe":
            self._validate_moe()
        if "M" in kinds:
            self._validate_mla()

    def _validate_ranges(self) -> None:
        """The range of each MoE, MLA and KDA field taken on its own."""
        for name in ("n_experts", "top_k", "kv_lora_rank", "conv_kernel", "kda_chunk_size", "moe_n_groups",
                     "moe_topk_groups"):
            _at_least(name, getattr(self, name), 1)
        _at_least("n_shared_experts", self.n_shared_experts, 0)
        _at_least("moe_dense_layers", self.moe_dense_layers, 0)
        if self.moe_dense_layers and (self.ffn != "moe" or self.moe_dense_layers > self.n_layers):
            raise ValueError(f"moe_dense_layers={self.moe_dense_layers} needs ffn='moe' (got {self.ffn!r}) and at "
                             f"most n_layers={self.n_layers} layers")
        _at_least("rope_head_dim", self.rope_head_dim, 0)
        for name in ("d_expert", "q_lora_rank", "mla_v_head_dim", "kda_n_heads", "kda_head_dim", "kda_gate_rank"):
            if getattr(self, name) is not None:
                _at_least(name, getattr(self, name), 1)
        _choice("expert_ffn", self.expert_ffn, DENSE_FFNS)
        _choice("kda_gate_activation", self.kda_gate_activation, KDA_GATE_ACTIVATIONS)
        _choice("moe_router", self.moe_router, MOE_ROUTERS)
        if not self.moe_routed_scale > 0:
            raise ValueError(f"moe_routed_scale={self.moe_routed_scale!r} must be > 0")
        if self.mla_latent_norm_eps is not None:
            _finite_real("mla_latent_norm_eps", self.mla_latent_norm_eps)
            if not self.mla_latent_norm_eps > 0:
                raise ValueError(f"mla_latent_norm_eps={self.mla_latent_norm_eps!r} must be > 0 (or None = norm_eps)")
        if not self.moe_aux_loss_coef >= 0:
            raise ValueError(f"moe_aux_loss_coef={self.moe_aux_loss_coef!r} must be >= 0")

    def _validate_moe(self) -> None:
        if self.top_k > self.n_experts:
            raise ValueError(f"top_k={self.top_k} exceeds n_experts={self.n_experts}; need 1 <= top_k <= n_experts")
        if self.moe_router == "softmax" and (self.moe_n_groups, self.moe_topk_groups) != (1, 1):
            raise ValueError(f"moe_n_groups={self.moe_n_groups}, moe_topk_groups={self.moe_topk_groups}: expert "
                             f"groups need moe_router='sigmoid'; the softmax router takes 1 and 1")
        groups, chosen = self.moe_n_groups, self.moe_topk_groups
        if self.n_experts % groups:
            raise ValueError(f"moe_n_groups={groups} does not divide n_experts={self.n_experts}")
        if chosen > groups:
            raise ValueError(f"moe_topk_groups={chosen} exceeds moe_n_groups={groups}")
        if chosen < groups and self.n_experts // groups < 2:
            raise ValueError(f"moe_n_groups={groups} leaves {self.n_experts // groups} expert per group; a group "
                             f"is scored by its two best experts, so each group needs at least 2")
        if self.top_k > chosen * (self.n_experts // groups):
            raise ValueError(f"top_k={self.top_k} exceeds the {chosen * (self.n_experts // groups)} experts of "
                             f"moe_topk_groups={chosen} groups of {self.n_experts // groups}")

    def _validate_mla(self) -> None:
        if not self.mla_nope:
            _at_least("rope_head_dim", self.rope_head_dim, 2)
            if self.rope_head_dim % 2:
                raise ValueError(f"rope_head_dim={self.rope_head_dim} must be even (RoPE rotates pairs)")

