"""``torch.optim.Optimizer`` classes that run the kernels of :mod:`ftipbook.optim.functional`.

There is no second copy of any update rule here: each param group names a registered rule
(``group["algorithm"]``), its hyperparameters are validated by the rule's config dataclass,
and :meth:`FunctionalOptimizer.step` hands the group's parameters, gradients and state to the
rule's in-place kernel. The classes therefore support param groups, ``state_dict`` round trips,
learning-rate schedulers (``torch.optim.lr_scheduler.LambdaLR`` with
:mod:`ftipbook.optim.schedules`) and any device the tensors live on.

``muon_adamw_param_groups(model)`` splits an ftipbook ``DecoderLM`` the usual way: Muon for the
hidden 2-D matrices, AdamW for embeddings, the unembedding, norm gains, biases and other
non-matrix parameters; :class:`GroupedOptimizer` runs both kinds of group in one optimizer.

The classes are drop-ins for their ``torch.optim`` namesakes: they take ``torch.optim``'s keyword
arguments (``maximize`` and ``amsgrad`` are hyperparameters; the execution flags ``foreach``,
``fused``, ``capturable`` and ``differentiable`` are accepted where they cannot change the result and
refused by name otherwise, listed in ``EXECUTION_FLAGS``), and ``load_state_dict`` takes the state
dict of the same-named ``torch.optim`` optimizer and continues its trajectory.
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch
from torch import nn

from ftipbook.optim.functional import NOT_A_MATRIX, OptimizerState, get
from ftipbook.optim.hyperparams import AdamWConfig, MuonConfig

#: Param-group keys that are not hyperparameters but are still allowed.
GROUP_KEYS = ("params", "algorithm", "name", "initial_lr")

#: The ``torch.optim`` execution flags each rule accepts (those its ``torch.optim`` namesake takes).
#: They select how PyTorch runs an update, not which update; ftipbook has one kernel per rule (the
#: order of ``torch.optim``'s single-tensor path), so a flag is accepted only at values that leave
#: that kernel's result as it is, and is not stored in the param group. :data:`REFUSED_FLAGS` says
#: why the other values are refused.
_SGD_FLAGS = ("foreach", "differentiable", "fused")
_ADAM_FLAGS = ("foreach", "capturable", "differentiable", "fused")
EXECUTION_FLAGS: dict[str, tuple[str, ...]] = {
    "sgd": _SGD_FLAGS, "momentum": _SGD_FLAGS, "nesterov": _SGD_FLAGS, "adam": _ADAM_FLAGS, "adamw": _ADAM_FLAGS,
    "rmsprop": ("foreach", "capturable", "differentiable"), "adafactor": ("foreach",),
}
#: Why a truthy value of each execution flag is refused (``foreach`` is accepted at every value: it
#: only batches kernel launches, and ftipbook's kernels batch theirs already).
REFUSED_FLAGS = {
    "fused": "ftipbook has no fused kernel, and torch.optim's fused CPU/CUDA kernels round differently",
    "capturable": "CUDA-graph capture needs device-tensor step counts; ftipbook's kernels count steps in "
                  "Python ints",
    "differentiable": "ftipbook's step runs under torch.no_grad(), so no graph through the update exists",
}

#: How to recognise a ``torch.optim`` state dict's param group (it names no ``algorithm``): keys only
#: that optimizer's groups have, and the ftipbook rules that run the same update.
TORCH_GROUPS: tuple[tuple[str, frozenset[str], tuple[str, ...]], ...] = (
    ("torch.optim.Adam/AdamW", frozenset({"betas", "amsgrad"}), ("adam", "adamw")),
    ("torch.optim.SGD", frozenset({"dampening", "nesterov"}), ("sgd", "momentum", "nesterov")),
    ("torch.optim.RMSprop", frozenset({"alpha", "centered"}), ("rmsprop",)),
    ("torch.optim.Adafactor", frozenset({"beta2_decay", "d"}), ("adafactor",)),
    ("torch.optim.Muon", frozenset({"ns_coefficients", "ns_steps"}), ("muon",)),
)
#: Hyperparameters a ``torch.optim`` group leaves implicit because PyTorch has only one choice.
TORCH_IMPLIED = {"muon": {"ns_dtype": "bfloat16", "momentum_form": "ema", "orthogonalizer": "newton_schulz"}}
#: Hyperparameters a rule sets on every loaded group, whatever the state dict says; ``torch.optim.AdamW``
#: forces ``decoupled_weight_decay=True`` when it loads any state (an ``Adam`` state dict included), so
#: an AdamW group stays AdamW.
TORCH_FORCED = {"adamw": {"decoupled_weight_decay": True}}


def _check_execution_flags(algorithm: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` without its execution flags, after checking each flag is one ``algorithm`` accepts.

    A flag ``algorithm``'s ``torch.optim`` namesake does not take stays in (it is then an unknown
    key); ``foreach`` may be ``None``/``True``/``False``, the others ``None``/``False`` only.
    """
    allowed = EXECUTION_FLAGS.get(algorithm, ())
    for name in allowed:
        if name not in values:
            continue
        value = values[name]
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"{name} must be None, True or False, got {type(value).__name__} {value!r}")
        if value and name != "foreach":
            raise ValueError(f"{name}={value!r} is not supported for {algorithm!r}: {REFUSED_FLAGS[name]}; "
                             f"use {name}=False (or leave it out)")
    return {k: v for k, v in values.items() if k not in allowed}


class FunctionalOptimizer(torch.optim.Optimizer):
    """A ``torch.optim.Optimizer`` whose groups each run one registered update rule (ftip-001I).

    ``FunctionalOptimizer(params, algorithm="adam", lr=1e-3)`` runs ``adam`` on every group;
    groups may override hyperparameters (and, in :class:`GroupedOptimizer`, the algorithm).
    Unknown keys and invalid values raise when the group is added, not at the first step.
    """

    #: The rule every group must use (set by the named subclasses); ``None`` lets groups choose.
    algorithm: str | None = None

    def __init__(self, params: Iterable[Any], algorithm: str | None = None, **hyperparameters: Any) -> None:
        if self.algorithm is not None and algorithm not in (None, self.algorithm):
            raise ValueError(f"{type(self).__name__} runs {self.algorithm!r}, not {algorithm!r}")
        algorithm = algorithm or self.algorithm
        if algorithm is None:
            if hyperparameters:
                raise TypeError("without a default algorithm, give hyperparameters inside each param group, got "
                                f"{sorted(hyperparameters)}")
            defaults: dict[str, Any] = {}
        else:
            hyperparameters = _check_execution_flags(algorithm, hyperparameters)
            defaults = {"algorithm": algorithm, **get(algorithm).config(**hyperparameters).to_dict()}
        super().__init__(params, defaults)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group after validating its algorithm, its keys and its hyperparameters."""
        group = dict(param_group)
        algorithm = group.setdefault("algorithm", self.defaults.get("algorithm"))
        if algorithm is None:
            raise ValueError("each param group needs an 'algorithm' key naming a registered rule, e.g. 'muon' or "
                             "'adamw'")
        if self.algorithm is not None and algorithm != self.algorithm:
            raise ValueError(f"{type(self).__name__} runs {self.algorithm!r}; a group asked for {algorithm!r}")
        spec = get(algorithm)
        group = _check_execution_flags(spec.name, group)
        names = spec.config.field_names()
        unknown = sorted(set(group) - set(names) - set(GROUP_KEYS))
        if unknown:
            raise TypeError(f"unknown param-group key(s) {unknown} for {algorithm!r}; hyperparameters: {list(names)}")
        inherited = self.defaults if self.defaults.get("algorithm") == algorithm else {}
        group.update(spec.config.from_dict({**inherited, **group}).to_dict())
        super().add_param_group(group)
        if spec.matrices_only:
            for i, p in enumerate(self.param_groups[-1]["params"]):
                if p.ndim != 2:
                    raise ValueError(NOT_A_MATRIX.format(rule=spec.name, index=i, shape=tuple(p.shape)))

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every group whose parameters have gradients; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            if any(p.grad.is_sparse for p in params) or any(p.is_complex() for p in params):
                raise ValueError(f"{group['algorithm']} needs dense real gradients")
            spec = get(group["algorithm"])
            config = spec.config.from_dict(group)
            block = self.state[group["params"][0]].setdefault("block", {}) if spec.block_actions else {}
            spec.kernel(params, [p.grad for p in params], [self.state[p] for p in params], block, config)
        return loss

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Load a state dict of this optimizer or of its ``torch.optim`` namesake; refuse other algorithms.

        Each saved group must run the rule this optimizer's group runs: an ftipbook group by its
        ``algorithm`` key, a ``torch.optim`` group by its keys (:data:`TORCH_GROUPS`). Its
        hyperparameters are validated as in :meth:`add_param_group`; ``torch.optim``'s tensor step
        counts become ints, so the loaded optimizer continues the saved trajectory. The buffers are
        copied (``torch.optim`` would share them with the optimizer that saved them).
        """
        if not isinstance(state_dict, Mapping) or not isinstance(state_dict.get("param_groups"), list) \
                or not isinstance(state_dict.get("state"), Mapping):
            raise TypeError("state_dict must be a mapping with a 'state' mapping and a 'param_groups' list, got "
                            f"{type(state_dict).__name__}")
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError(f"the state dict has {len(saved)} param group(s), this optimizer {len(self.param_groups)}")
        groups = [self._adopt_group(i, g) for i, g in enumerate(saved)]
        super().load_state_dict({"state": copy.deepcopy(dict(state_dict["state"])), "param_groups": groups})
        for state in self.state.values():
            if isinstance(state.get("step"), torch.Tensor):
                state["step"] = int(state["step"].item())

    def _adopt_group(self, index: int, saved: Any) -> dict[str, Any]:
        """Saved param group ``index`` as this optimizer's group: same rule, validated hyperparameters."""
        if not isinstance(saved, Mapping):
            raise TypeError(f"param group {index} of the state dict must be a mapping, got {type(saved).__name__}")
        algorithm = self.param_groups[index]["algorithm"]
        origin, rules = _saved_rules(index, saved)
        if algorithm not in rules:
            raise ValueError(f"{type(self).__name__} cannot load a state dict of another algorithm: param group "
                             f"{index} was saved by {origin}, but this optimizer's group {index} runs {algorithm!r}")
        spec = get(algorithm)
        values = _check_execution_flags(algorithm, saved)
        hyper = {**(TORCH_IMPLIED.get(algorithm, {}) if "algorithm" not in saved else {}),
                 **{k: v for k, v in values.items() if k in spec.config.field_names()},
                 **TORCH_FORCED.get(algorithm, {})}
        unknown = sorted(set(values) - set(spec.config.field_names()) - set(GROUP_KEYS) - {"param_names"})
        if unknown:
            raise ValueError(f"param group {index} of the state dict has key(s) {unknown} that {algorithm!r} does "
                             f"not know; hyperparameters: {list(spec.config.field_names())}")
        kept = {k: v for k, v in saved.items() if k in GROUP_KEYS or k == "param_names"}
        return {**kept, "algorithm": algorithm, **spec.config.from_dict(hyper).to_dict()}

    def functional_state(self, params: Iterable[torch.Tensor]) -> OptimizerState:
        """This optimizer's state for ``params`` as an :class:`~ftipbook.optim.functional.OptimizerState`.

        The block variables are those of the group holding the first of ``params``; gauge
        checks compare this with the state a functional run produces.
        """
        params = list(params)
        per_param = tuple({k: v for k, v in self.state[p].items() if k != "block"} for p in params)
        first = next(g for g in self.param_groups if any(p is params[0] for p in g["params"]))
        return OptimizerState(per_param, dict(self.state[first["params"][0]].get("block", {})))


def _saved_rules(index: int, group: Mapping[str, Any]) -> tuple[str, tuple[str, ...]]:
    """Who saved param group ``group`` (for messages) and the ftipbook rules that run its update."""
    if "algorithm" in group:
        return f"ftipbook's {group['algorithm']!r}", (group["algorithm"],)
    for origin, keys, rules in TORCH_GROUPS:
        if keys <= set(group):
            return origin, rules
    raise ValueError(f"param group {index} of the state dict names no 'algorithm' and its keys {sorted(group)} "
                     f"match no torch.optim optimizer ftipbook mirrors ({', '.join(o for o, _, _ in TORCH_GROUPS)})")


class SGD(FunctionalOptimizer):
    """Gradient descent with Polyak/Nesterov momentum (ftip-00B8); hyperparameters of ``SGDConfig``."""

    algorithm = "sgd"


class Adam(FunctionalOptimizer):
    """Adam (ftip-00BD); hyperparameters of ``AdamConfig``; matches ``torch.optim.Adam``."""

    algorithm = "adam"


class AdamW(FunctionalOptimizer):
    """AdamW; hyperparameters of ``AdamWConfig``; matches ``torch.optim.AdamW``.

    As in ``torch.optim.AdamW``, weight decay is always decoupled: the constructor takes no
    ``decoupled_weight_decay`` argument, and ``load_state_dict`` keeps every group decoupled
    (an ``Adam`` state dict with L2 decay continues as AdamW).
    """

    algorithm = "adamw"

    def __init__(self, params: Iterable[Any], algorithm: str | None = None, **hyperparameters: Any) -> None:
        if "decoupled_weight_decay" in hyperparameters:
            raise TypeError(f"AdamW takes no decoupled_weight_decay argument (got "
                            f"{hyperparameters['decoupled_weight_decay']!r}): AdamW always decouples its weight "
                            f"decay, as torch.optim.AdamW does; for coupled L2 decay use "
                            f"Adam(params, decoupled_weight_decay=False)")
        super().__init__(params, algorithm, **hyperparameters)


class ScalarAdam(FunctionalOptimizer):
    """Scalar-Adam (ftip-00B9): one shared second-moment scalar per param group (the declared block)."""

    algorithm = "scalar_adam"


class RMSprop(FunctionalOptimizer):
    """RMSProp; hyperparameters of ``RMSpropConfig``; matches ``torch.optim.RMSprop``."""

    algorithm = "rmsprop"


class SignSGD(FunctionalOptimizer):
    """signSGD (ftip-00BG); hyperparameters of ``SignSGDConfig``."""

    algorithm = "signsgd"


class Lion(FunctionalOptimizer):
    """Lion; hyperparameters of ``LionConfig``."""

    algorithm = "lion"


class Adafactor(FunctionalOptimizer):
    """Adafactor; hyperparameters of ``AdafactorConfig``; matches ``torch.optim.Adafactor``."""

    algorithm = "adafactor"


class Muon(FunctionalOptimizer):
    """Muon (ftip-00BA) for 2-D matrices; hyperparameters of ``MuonConfig``.

    Matches ``torch.optim.Muon`` when ``ns_dtype="bfloat16"`` (PyTorch always orthogonalises in
    bfloat16; ftipbook's default keeps the parameter's dtype). Other parameters raise: use
    :func:`muon_adamw_param_groups` and :class:`GroupedOptimizer`.
    """

    algorithm = "muon"


class Shampoo(FunctionalOptimizer):
    """Full-matrix Shampoo (ftip-00BA) for 2-D matrices; hyperparameters of ``ShampooConfig``."""

    algorithm = "shampoo"


class ScaledGD(FunctionalOptimizer):
    """ScaledGD (ftip-00BR): each param group is one factor pair ``[U, V]``; ``ScaledGDConfig``."""

    algorithm = "scaledgd"


class GroupedOptimizer(FunctionalOptimizer):
    """One optimizer whose param groups each name their rule in ``group["algorithm"]``.

    ``GroupedOptimizer(muon_adamw_param_groups(model))`` is Muon plus AdamW in one object, with
    one ``step``, one ``zero_grad`` and one ``state_dict``.
    """


def muon_adamw_param_groups(
    model: nn.Module,
    *,
    muon: MuonConfig | None = None,
    adamw: AdamWConfig | None = None,
    adamw_names: Iterable[str] | None = None,
) -> list[dict[str, Any]]:
    """Param groups for :class:`GroupedOptimizer`: Muon on hidden matrices, AdamW on the rest.

    A parameter goes to Muon when it is 2-D and its name does not start with one of
    ``adamw_names``; for an ftipbook ``DecoderLM`` these default to the token embedding, the
    learned positions and the unembedding (``embed.``, ``positions.``, ``unembed.``). Other models
    must name theirs. Vectors (norm gains, biases) and higher-rank tensors go to AdamW.
    """
    from ftipbook.model import DecoderLM

    if adamw_names is None:
        if not isinstance(model, DecoderLM):
            raise TypeError(f"give adamw_names (embedding and output parameter prefixes) for a "
                            f"{type(model).__name__}; defaults exist only for ftipbook DecoderLM")
        adamw_names = ("embed.", "positions.", "unembed.")
    prefixes = tuple(adamw_names)
    hidden, rest = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (hidden if p.ndim == 2 and not name.startswith(prefixes) else rest).append(p)
    groups = [{"params": hidden, "algorithm": "muon", **(muon or MuonConfig()).to_dict()},
              {"params": rest, "algorithm": "adamw", **(adamw or AdamWConfig()).to_dict()}]
    return [g for g in groups if g["params"]]


__all__ = [
    "FunctionalOptimizer", "GroupedOptimizer", "SGD", "Adam", "AdamW", "ScalarAdam", "RMSprop", "SignSGD",
    "Lion", "Adafactor", "Muon", "Shampoo", "ScaledGD", "muon_adamw_param_groups", "GROUP_KEYS",
    "EXECUTION_FLAGS", "REFUSED_FLAGS", "TORCH_FORCED", "TORCH_GROUPS", "TORCH_IMPLIED",
]
