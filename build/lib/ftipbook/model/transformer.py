"""The decoder-only Transformer language model of ftip-0012, assembled top to bottom."""
from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from ftipbook.model.block import DecoderBlock
from ftipbook.model.cache import HybridCache
from ftipbook.model.config import MIXERS, ModelConfig
from ftipbook.model.ffn import MoEFeedForward
from ftipbook.model.loss import linear_cross_entropy
from ftipbook.model.masks import segment_positions
from ftipbook.model.norm import make_norm
from ftipbook.model.positional import LearnedPositions, TokenEmbedding, embedding_positions


def as_tokens(tokens: torch.Tensor | Sequence[int], device: torch.device | None = None, *,
              name: str = "tokens") -> torch.Tensor:
    """``tokens`` as a ``LongTensor`` on ``device`` (a list of ints or an integer tensor); errors name
    the argument ``name``."""
    if tokens is None or isinstance(tokens, (str, bytes)):
        raise TypeError(f"{name} must be token ids (a list of ints or an integer tensor), got {type(tokens).__name__}")
    if not isinstance(tokens, torch.Tensor) and len(tokens) == 0:
        return torch.zeros(0, dtype=torch.long, device=device)
    try:
        t = torch.as_tensor(tokens, device=device)
    except (TypeError, ValueError, RuntimeError) as err:
        raise TypeError(f"{name} must be token ids (a list of ints, a list of equal-length lists of ints, or an "
                        f"integer tensor); torch could not read it: {err}") from None
    if t.dtype.is_floating_point or t.dtype == torch.bool or t.is_complex():
        raise ValueError(f"{name} must hold integer token ids, got dtype {t.dtype}")
    return t.long()


class DecoderLM(nn.Module):
    """Decoder-only Transformer LM (ftip-0012): ids -> embedding -> r passes through the blocks -> norm -> logits.

    ``forward(tokens [B, T], *, seg_ids=None, cache=None, positions=None, last_only=False) -> logits [B, T, V]``:
    ``z_t = W_U h_t + b_U``. ``seg_ids`` packs documents in a row (block-causal mask, positions
    restarting per document); ``cache`` (from :meth:`new_cache`) makes the call continue the
    sequence it holds; ``positions`` overrides the default absolute positions; ``last_only``
    unembeds the last position only (logits ``[B, 1, V]``, what decoding needs). :meth:`loss` is
    the training loss without full logits. With
    ``cfg.n_loops = r`` the stack of ``n_layers`` blocks is applied ``r`` times with shared
    weights (depth reuse); each application keeps its own layer cache.
    """

    #: Roles (for :func:`~ftipbook.model.transformer.parameter_roles`) of submodules a subclass adds around the decoder.
    extra_roles: dict[str, str] = {}

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed = TokenEmbedding(cfg.vocab_size, cfg.d_model)
        self.positions = embedding_positions(cfg)
        self.blocks = nn.ModuleList(DecoderBlock(cfg, i) for i in range(cfg.n_layers))
        self.norm = make_norm(cfg) if cfg.final_norm else nn.Identity()
        self.unembed = nn.Linear(cfg.d_model, cfg.vocab_size, bias=cfg.unembed_bias)
        if cfg.tie_embeddings:
            self.unembed.weight = self.embed.weight
        self.apply(self._init_weights)
        depth = 2 * cfg.n_layers * cfg.n_loops
        for name, p in self.named_parameters():
            if name.endswith((".out.weight", ".down.weight")):
                nn.init.normal_(p, std=cfg.init_std / math.sqrt(depth))

    def _init_weights(self, module: nn.Module) -> None:
        """Normal(0, init_std) for linear maps and embeddings, zero biases (then, in ``__init__``,
        the output projections of residual branches, ``out`` and ``down``, get ``init_std/sqrt(2 L r)``
        as in GPT-2). Other parameters keep the initialization their module gives them."""
        if isinstance(module, (nn.Linear, TokenEmbedding, LearnedPositions)):
            nn.init.normal_(module.weight, std=self.cfg.init_std)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    # ------------------------------------------------------------------------------------------
    def new_cache(self, batch: int, max_len: int | None = None) -> HybridCache:
        """An empty cache for ``batch`` sequences on the parameters' device and dtype.

        ``max_len`` preallocates attention caches for that many positions; ``None`` lets them grow.
        """
        p = next(self.parameters())
        return HybridCache([self.blocks[i % self.cfg.n_layers].new_cache(batch, p.device, p.dtype, max_len=max_len)
                            for i in range(self.layer_applications)])

    @property
    def layer_applications(self) -> int:
        """Decoder-layer applications per position in one forward, ``n_layers * n_loops`` (one layer cache each)."""
        return self.cfg.n_layers * self.cfg.n_loops

    def check_tokens(self, tokens: torch.Tensor, name: str = "tokens") -> None:
        """Refuse token ids outside ``[0, vocab_size)``, naming the argument ``name``, the first bad
        id and where it is."""
        if tokens.numel() == 0:
            return
        low, high = torch.aminmax(tokens)
        if low < 0 or high >= self.cfg.vocab_size:
            bad = (tokens < 0) | (tokens >= self.cfg.vocab_size)
            where = tuple(int(i) for i in bad.nonzero()[0])
            raise ValueError(
                f"{name}: token id {int(tokens[where])} at index {where} is outside [0, {self.cfg.vocab_size}) "
                f"(vocab_size={self.cfg.vocab_size})"
            )

    def forward(
        self,
        tokens: torch.Tensor,
        *,
        seg_ids: torch.Tensor | None = None,
        cache: HybridCache | None = None,
        positions: torch.Tensor | None = None,
        last_only: bool = False,
    ) -> torch.Tensor:
        h = self.hidden_states(tokens, seg_ids=seg_ids, cache=cache, positions=positions)
        return self.unembed(h[:, -1:] if last_only else h)

    def hidden_states(
        self,
        tokens: torch.Tensor,
        *,
        seg_ids: torch.Tensor | None = None,
        cache: HybridCache | None = None,
        positions: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The states ``h_t [B, T, d]`` the unembedding reads (after the final norm), inputs checked."""
        self.check_inputs(tokens, seg_ids, cache, positions)
        return self._hidden(tokens, seg_ids, cache, positions)

    def loss(
        self,
        tokens: torch.Tensor,
        targets: torch.Tensor,
        *,
        seg_ids: torch.Tensor | None = None,
        positions: torch.Tensor | None = None,
        ignore_index: int = -100,
    ) -> torch.Tensor:
        """Mean next-token cross-entropy ``-mean_t log pi_theta(targets_t | tokens_<=t)`` (ftip-0012).

        Equals ``F.cross_entropy(self(tokens).flatten(0, 1), targets.flatten(), ignore_index=...)``
        with the same gradients, but never holds the ``[B, T, |V|]`` logits: the unembedding and the
        loss run chunk by chunk (:func:`ftipbook.model.loss.linear_cross_entropy`). ``targets`` has
        the shape of ``tokens``; entries equal to ``ignore_index`` are left out of the mean. A MoE
        load-balancing loss is not included: add :meth:`moe_aux_loss` to it.
        """
        if not isinstance(targets, torch.Tensor) or targets.shape != tokens.shape:
            raise ValueError(
                f"targets must be a tensor with the shape of tokens {tuple(tokens.shape)}, "
                f"got {tuple(targets.shape) if isinstance(targets, torch.Tensor) else type(targets).__name__}"
            )
        h = self.hidden_states(tokens, seg_ids=seg_ids, positions=positions)
        return linear_cross_entropy(h.flatten(0, 1), self.unembed.weight, targets.flatten(), self.unembed.bias,
                                    ignore_index=ignore_index)

    def check_inputs(
        self,
        tokens: torch.Tensor,
        seg_ids: torch.Tensor | None = None,
        cache: HybridCache | None = None,
        positions: torch.Tensor | None = None,
    ) -> None:
        """Refuse a bad ``forward`` call: token shape, dtype and ids, ``seg_ids`` shape, a cache that
        does not fit, ``positions`` that are not non-negative integers of the tokens' shape."""
        if not isinstance(tokens, torch.Tensor):
            raise TypeError(f"tokens must be a LongTensor [B, T], got {type(tokens).__name__}")
        if tokens.dim() != 2 or tokens.dtype != torch.long:
            raise ValueError(f"tokens must be a LongTensor [B, T], got {tokens.dtype} of shape {tuple(tokens.shape)}")
        if 0 in tokens.shape:
            raise ValueError(f"tokens must hold at least one sequence of at least one token, got shape {tuple(tokens.shape)}")
        self.check_tokens(tokens)
        if seg_ids is not None:
            if seg_ids.shape != tokens.shape:
                raise ValueError(f"seg_ids shape {tuple(seg_ids.shape)} must equal tokens shape {tuple(tokens.shape)}")
            if cache is not None:
                raise ValueError("seg_ids (packed documents) and cache cannot be combined: decode one document per row")
        if positions is not None:
            if positions.shape != tokens.shape or positions.dtype.is_floating_point or positions.dtype == torch.bool:
                raise ValueError(f"positions must be an integer tensor of the tokens' shape {tuple(tokens.shape)}, "
                                 f"got {positions.dtype} of shape {tuple(positions.shape)}")
            if positions.numel() and int(positions.min()) < 0:
                raise ValueError(f"positions are 0-based indices, got {int(positions.min())}")
        longest = tokens.shape[1]
        if self.cfg.pos == "learned" and positions is None and seg_ids is None and cache is None \
                and longest > self.cfg.max_seq_len:
            raise ValueError(f"tokens has {longest} positions per row, more than the learned position table's "
                             f"max_seq_len={self.cfg.max_seq_len}")
        applications = self.layer_applications
        if cache is not None and len(cache) != applications:
            raise ValueError(f"cache has {len(cache)} layer caches, this model applies {applications} layers")

    def _hidden(
        self,
        tokens: torch.Tensor,
        seg_ids: torch.Tensor | None,
        cache: HybridCache | None,
        positions: torch.Tensor | None,
    ) -> torch.Tensor:
        """The body of :meth:`hidden_states` on inputs already checked (generation calls it per step)."""
        positions = self._default_positions(tokens, seg_ids, cache, positions)
        x = self._stack(self.positions(self.embed(tokens), positions), positions, seg_ids, cache)
        if cache is not None:
            cache.advance(tokens.shape[1])
        return self.norm(x)

    def _default_positions(self, tokens: torch.Tensor, seg_ids: torch.Tensor | None, cache: HybridCache | None,
                           positions: torch.Tensor | None) -> torch.Tensor:
        """``positions`` if given, else restarting per document under ``seg_ids``, else after the cache."""
        if positions is not None:
            return positions
        if seg_ids is not None:
            return segment_positions(seg_ids)
        b, t = tokens.shape
        past = 0 if cache is None else cache.length
        return torch.arange(past, past + t, device=tokens.device).expand(b, t)

    def _stack(self, x: torch.Tensor, positions: torch.Tensor, seg_ids: torch.Tensor | None,
               cache: HybridCache | None, first: int = 0) -> torch.Tensor:
        """One pass of the residual stream ``x`` through the ``n_layers * n_loops`` layer applications
        (before the final norm); application ``i`` uses the layer cache ``cache[first + i]``."""
        for i in range(self.cfg.n_layers * self.cfg.n_loops):
            block = self.blocks[i % self.cfg.n_layers]
            x = block(x, positions=positions, seg_ids=seg_ids, cache=None if cache is None else cache[first + i])
        return x

    # ------------------------------------------------------------------------------------------
    @torch.no_grad()
    def next_token_law(self, prefix: torch.Tensor | Sequence[int]) -> torch.Tensor:
        """``pi_theta(. | prefix)`` (ftip-000H, ftip-0012) as a float64 probability vector.

        A 1-D prefix gives ``[V]``, a batch ``[B, T]`` gives ``[B, V]``.
        """
        tokens = as_tokens(prefix, self.unembed.weight.device)
        if tokens.shape[-1] == 0:
            raise ValueError("next_token_law needs a non-empty prefix (the model has no empty-context law)")
        logits = self(tokens.reshape(-1, tokens.shape[-1]))[:, -1]
        law = torch.softmax(logits.double(), dim=-1)
        return law[0] if tokens.dim() == 1 else law

    def moe_aux_loss(self) -> torch.Tensor | None:
        """Sum of the MoE load-balancing losses of the last forward (``None`` if none was computed)."""
        losses = [m.aux_loss for m in self.modules() if isinstance(m, MoEFeedForward) and m.aux_loss is not None]
        return torch.stack(losses).sum() if losses else None

    def decoder_state_dict(self) -> dict[str, torch.Tensor]:
        """The weights the inference interface reads (all of them here; training-only heads of
        subclasses are left out)."""
        return self.state_dict()

    def auxiliary_loss(self) -> torch.Tensor | None:
        """Every auxiliary training loss of the last forward, added to the next-token loss by the
        trainer: here the MoE load-balancing loss (subclasses add theirs); ``None`` if none."""
        return self.moe_aux_loss()


def parameter_roles(model: DecoderLM) -> dict[str, str]:
    """The construction of ftip-0012 that each learned tensor of ``model`` belongs to.

    Returns ``{parameter name: role}`` for every tensor of ``model.named_parameters()`` (a tied
    unembedding is the embedding, listed once). Roles: ``"embedding"`` (ftip-000M),
    ``"positions"`` (learned positions, ftip-000N), the mixer of the layer's pattern letter
    (``"attention"``, ``"mla"`` or ``"kda"``), ``"ffn"`` (dense, ftip-000W), ``"router"``,
    ``"expert"`` and ``"shared expert"`` (ftip-000X), ``"norm"`` (ftip-0011, ftip-006F) and
    ``"unembedding"`` (``W_U``, ``b_U``). A tensor outside these constructions raises
    ``ValueError`` naming it, so the map is exhaustive by construction.
    """
    owners = {"embed": "embedding", "positions": "positions", "norm": "norm", "unembed": "unembedding",
              **model.extra_roles}
    for i, block in enumerate(model.blocks):
        owners[f"blocks.{i}.mixer.fn"] = MIXERS[block.kind]
        owners[f"blocks.{i}.mixer.norm"] = owners[f"blocks.{i}.ffn.norm"] = "norm"
        if isinstance(block.ffn.fn, MoEFeedForward):
            owners.update({f"blocks.{i}.ffn.fn.router": "router", f"blocks.{i}.ffn.fn.experts": "expert",
                           f"blocks.{i}.ffn.fn.shared": "shared expert"})
        else:
            owners[f"blocks.{i}.ffn.fn"] = "ffn"
    roles = {}
    for name, _ in model.named_parameters():
        owner = max((prefix for prefix in owners if name.startswith(prefix + ".")), key=len, default=None)
        if owner is None:
            raise ValueError(
                f"parameter {name!r} belongs to none of the constructions of ftip-0012 "
                f"({', '.join(sorted(set(owners.values())))})"
            )
        roles[name] = owners[owner]
    return roles


def build_model(
    cfg: ModelConfig,
    *,
    seed: int = 0,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
) -> DecoderLM:
    """A ``DecoderLM(cfg)`` initialized from ``seed`` without touching the global RNG."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = DecoderLM(cfg)
    return model.to(device=device, dtype=dtype)


def compile_model(model: DecoderLM, **options) -> DecoderLM:
    """Compile every decoder block of ``model`` in place with ``torch.compile(**options)``; return ``model``.

    Opt-in and never required: the eager model is the reference. Compiling the blocks (not the
    whole model) keeps parameter names, hooks on other modules, :meth:`DecoderLM.loss` and the
    caches working unchanged, and lets the compiler fuse the elementwise work inside each layer
    (norms, RoPE, SwiGLU, residual additions) into a few kernels. The first calls at each new
    shape pay the compilation; on CPU, TorchInductor needs a C++ compiler.
    """
    if not isinstance(model, DecoderLM):
        raise TypeError(f"compile_model takes a DecoderLM, got {type(model).__name__}")
    for block in model.blocks:
        block.compile(**options)
    return model
