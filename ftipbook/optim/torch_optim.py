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
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import nn

from ftipbook.optim.functional import NOT_A_MATRIX, OptimizerState, get
from ftipbook.optim.hyperparams import AdamWConfig, MuonConfig

#: Param-group keys that are not hyperparameters but are still allowed.
GROUP_KEYS = ("params", "algorithm", "name", "initial_lr")


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

    def functional_state(self, params: Iterable[torch.Tensor]) -> OptimizerState:
        """This optimizer's state for ``params`` as an :class:`~ftipbook.optim.functional.OptimizerState`.

        The block variables are those of the group holding the first of ``params``; gauge
        checks compare this with the state a functional run produces.
        """
        params = list(params)
        per_param = tuple({k: v for k, v in self.state[p].items() if k != "block"} for p in params)
        first = next(g for g in self.param_groups if any(p is params[0] for p in g["params"]))
        return OptimizerState(per_param, dict(self.state[first["params"][0]].get("block", {})))


class SGD(FunctionalOptimizer):
    """Gradient descent with Polyak/Nesterov momentum (ftip-00B8); hyperparameters of ``SGDConfig``."""

    algorithm = "sgd"


class Adam(FunctionalOptimizer):
    """Adam (ftip-00BD); hyperparameters of ``AdamConfig``; matches ``torch.optim.Adam``."""

    algorithm = "adam"


class AdamW(FunctionalOptimizer):
    """AdamW; hyperparameters of ``AdamWConfig``; matches ``torch.optim.AdamW``."""

    algorithm = "adamw"


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
]
