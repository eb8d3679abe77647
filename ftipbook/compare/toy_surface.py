"""An analytic response surface: score(package, recipe, budget) in closed form, as a runner (ftip-00JO, 00LV, 00LW).

Chapters about comparison arms need a response whose frontiers can be computed by hand. For a
package ``p`` with declared parameters (:data:`PARAMETERS`) and a recipe with learning-rate
exponent ``log2_lr``, training budget ``steps`` and ``samples`` inference draws,

.. math::

   \\mathrm{score}_p = \\mathrm{ceiling}_p
       - \\mathrm{curvature}_p\\,(\\mathrm{log2\\_lr} - \\mathrm{best\\_log2\\_lr}_p)^2
       - \\frac{\\mathrm{budget\\_scale}_p}{\\mathrm{steps}}
       + \\mathrm{sample\\_gain}_p\\,\\Bigl(1 - \\frac{1}{\\mathrm{samples}}\\Bigr),

with costs ``train_flops = flops_per_step_p * steps`` and
``inference_flops = flops_per_sample_p * samples``. Each package answers best at its own learning
rate, improves with training budget and with inference draws, each at its own rate. The
per-item scores add declared offsets (summing to zero) to the score, the same for every package,
so they pair item by item and average back to the score. The surface has no noise: the seed is
recorded and does not change the result.

:meth:`ToyResponseSurface.runner` is a runner for :mod:`ftipbook.compare.arms` and
:mod:`ftipbook.compare.restricted`; its outcome's ``record`` is the recipe as run.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ftipbook.compare.arms import Outcome
from ftipbook.compare.cost import CostVector

#: The declared parameters of each package of a surface.
PARAMETERS = ("ceiling", "best_log2_lr", "curvature", "budget_scale", "sample_gain", "flops_per_step",
              "flops_per_sample")

#: The recipe coordinates the closed form reads, with the value used when a recipe omits one.
RECIPE_DEFAULTS: Mapping[str, Any] = MappingProxyType({"samples": 1})


def _finite(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name}={value!r} must be a finite real number")
    return value


@dataclass(frozen=True)
class ToyResponseSurface:
    """A declared closed-form response surface over packages and recipes (see the module docstring).

    ``packages`` maps each package name to its parameters (every name in :data:`PARAMETERS`;
    ``curvature``, ``budget_scale``, ``sample_gain`` >= 0, the two FLOP rates > 0);
    ``item_offsets`` are the per-item deviations from the score (they must sum to zero).
    """

    packages: Mapping[str, Mapping[str, float]]
    item_offsets: tuple[float, ...] = (0.0,)

    def __post_init__(self) -> None:
        if not isinstance(self.packages, Mapping) or not self.packages:
            raise ValueError("packages must map at least one package name to its parameters")
        checked = {}
        for name, params in self.packages.items():
            if not isinstance(name, str) or not name:
                raise ValueError(f"package names must be non-empty strings, got {name!r}")
            if not isinstance(params, Mapping) or set(params) != set(PARAMETERS):
                got = sorted(params) if isinstance(params, Mapping) else params
                raise ValueError(f"package {name!r} must declare exactly {list(PARAMETERS)}, got {got!r}")
            for key in PARAMETERS:
                _finite(f"{name}.{key}", params[key])
            for key in ("curvature", "budget_scale", "sample_gain"):
                if params[key] < 0:
                    raise ValueError(f"{name}.{key}={params[key]!r} must be >= 0")
            for key in ("flops_per_step", "flops_per_sample"):
                if params[key] <= 0:
                    raise ValueError(f"{name}.{key}={params[key]!r} must be > 0")
            checked[name] = MappingProxyType(dict(params))
        offsets = tuple(_finite("item_offsets[i]", x) for x in self.item_offsets)
        if not offsets:
            raise ValueError("item_offsets is empty; declare at least one evaluation item")
        if abs(math.fsum(offsets)) > 1e-12 * max(1.0, max(abs(x) for x in offsets)):
            raise ValueError(f"item_offsets sum to {math.fsum(offsets)!r}; they must sum to zero")
        object.__setattr__(self, "packages", MappingProxyType(checked))
        object.__setattr__(self, "item_offsets", offsets)

    def _params(self, package: str) -> Mapping[str, float]:
        if package not in self.packages:
            raise ValueError(f"package {package!r} is not on this surface; it has {list(self.packages)}")
        return self.packages[package]

    @staticmethod
    def _recipe(recipe: Mapping[str, Any]) -> tuple[float, int, int]:
        if not isinstance(recipe, Mapping):
            raise TypeError(f"recipe must be a mapping, got {type(recipe).__name__}")
        for key in ("log2_lr", "steps"):
            if key not in recipe:
                raise ValueError(f"recipe has no {key!r}; the surface reads log2_lr, steps and samples")
        log2_lr = _finite("recipe['log2_lr']", recipe["log2_lr"])
        steps, samples = recipe["steps"], recipe.get("samples", RECIPE_DEFAULTS["samples"])
        for key, v in (("steps", steps), ("samples", samples)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"recipe[{key!r}]={v!r} must be an int >= 1")
        return log2_lr, steps, samples

    def score(self, package: str, recipe: Mapping[str, Any]) -> float:
        """The closed-form score of ``package`` under ``recipe``."""
        p = self._params(package)
        log2_lr, steps, samples = self._recipe(recipe)
        return (p["ceiling"] - p["curvature"] * (log2_lr - p["best_log2_lr"]) ** 2 - p["budget_scale"] / steps
                + p["sample_gain"] * (1 - 1 / samples))

    def cost(self, package: str, recipe: Mapping[str, Any]) -> CostVector:
        """Training FLOPs ``flops_per_step * steps`` and inference FLOPs ``flops_per_sample * samples``."""
        p = self._params(package)
        _, steps, samples = self._recipe(recipe)
        return CostVector.standard(train_flops=p["flops_per_step"] * steps,
                                   inference_flops=p["flops_per_sample"] * samples)

    def runner(self, package_name: str, package: Mapping[str, Any], recipe: Mapping[str, Any], seed: int) -> Outcome:
        """The surface as an arm runner: the outcome of ``package_name`` under ``recipe`` (``seed`` is recorded)."""
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed must be an int, got {type(seed).__name__} {seed!r}")
        s = self.score(package_name, recipe)
        return Outcome(s, self.cost(package_name, recipe), tuple(s + d for d in self.item_offsets),
                       {**dict(recipe), "seed": seed})


def member_recipe(log2_lr: float, steps: int, samples: int = 1) -> dict[str, Any]:
    """A recipe the surface reads, with its training, post-training and inference procedures named in words,
    as an allowed class of :mod:`ftipbook.compare.restricted` requires (ftip-00JX)."""
    return {"training": f"lr 2^{log2_lr:g} for {steps} steps", "post_training": "none",
            "inference": "greedy" if samples == 1 else f"best of {samples} draws",
            "log2_lr": log2_lr, "steps": steps, "samples": samples}


def recipe_grid(log2_lrs: Sequence[float], steps: Sequence[int], samples: Sequence[int] = (1,)
                ) -> dict[str, dict[str, Any]]:
    """Every :func:`member_recipe` of the grid, named ``lr<log2_lr>/s<steps>/k<samples>``, in grid order."""
    return {f"lr{lr:g}/s{st}/k{k}": member_recipe(lr, st, k) for lr in log2_lrs for st in steps for k in samples}


def example_surface() -> ToyResponseSurface:
    """The two invented packages ``"A"`` and ``"B"`` the comparison chapters share (ftip-00JO, 00JX, 00LV).

    A answers best at learning rate ``2^-8``, B at ``2^-6`` with a higher ceiling and a flatter
    curve; A gains more from inference draws; B's training step costs three quarters of A's. Three
    evaluation items with offsets ``(1/4, -1/8, -1/8)``.
    """
    return ToyResponseSurface({
        "A": {"ceiling": 1.0, "best_log2_lr": -8, "curvature": 0.125, "budget_scale": 16, "sample_gain": 0.5,
              "flops_per_step": 4e9, "flops_per_sample": 8e10},
        "B": {"ceiling": 1.125, "best_log2_lr": -6, "curvature": 0.0625, "budget_scale": 16,
              "sample_gain": 0.0625, "flops_per_step": 3e9, "flops_per_sample": 6e10},
    }, item_offsets=(0.25, -0.125, -0.125))


__all__ = ["PARAMETERS", "RECIPE_DEFAULTS", "ToyResponseSurface", "member_recipe", "recipe_grid", "example_surface"]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
