"""Measured costs of live runs: counted FLOPs, peak live tensor bytes, wall time (ftip-00L9, ftip-00JQ).

The declared costs of :mod:`ftipbook.compare.cost` are accounting rules read off a config; the
functions here measure what a live model actually executes, so the two can be compared:

* :func:`count_flops` runs a callable under ``torch.utils.flop_counter.FlopCounterMode`` and
  returns a :class:`FlopCount` (total and per operator). The CPU attention kernel
  (``aten._scaled_dot_product_flash_attention_for_cpu`` and its backward) has no formula in
  PyTorch's registry; :data:`CPU_SDPA_FLOPS` supplies PyTorch's own SDPA formulas for it (the full
  ``T x T`` score and value products, as on CUDA), so attention is counted on every device.
* :func:`training_step_flops` counts one training step's forward and backward on a real batch;
  :func:`decode_flops_per_token` one decoding step at a given context, after a real prefill.
* :class:`LiveTensorBytes` is a ``TorchDispatchMode`` that tracks every tensor storage alive
  while it is active (those given at the start and every operator output, each storage counted
  once, released when PyTorch frees it) and records the peak; :func:`training_step_peak_bytes`
  applies it to one full step (forward, backward, optimizer update), so the peak holds
  parameters, gradients, optimizer state, activations and the batch. It counts tensor storages,
  not allocator padding or a kernel's internal scratch space, and so works the same on any device
  without allocator statistics.
* :func:`timed` measures wall-clock seconds of a callable.
"""
from __future__ import annotations

import copy
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import FlopCounterMode, sdpa_backward_flop_count, sdpa_flop_count

from ftipbook.data.objective import masked_token_nll
from ftipbook.data.windows import PackedBatch
from ftipbook.model.transformer import DecoderLM


def _per_query_head(query, *shapes) -> list[tuple[int, ...]]:
    """``shapes`` (keys, values) with the query's batch and head count: under grouped-query attention
    (``enable_gqa``) the kernel receives fewer key/value heads, each read by a group of query heads,
    and every query head still computes its full ``QK^T`` and ``AV`` products (ftip-000V)."""
    return [(*query[:2], *shape[2:]) for shape in shapes]


def _cpu_sdpa(query, key, value, *args, out_shape=None, **kwargs) -> int:
    return sdpa_flop_count(query, *_per_query_head(query, key, value))


def _cpu_sdpa_backward(grad_out, query, key, value, *args, out_shape=None, **kwargs) -> int:
    return sdpa_backward_flop_count(grad_out, query, *_per_query_head(query, key, value))


#: FLOP formulas for the CPU attention kernels, which PyTorch's flop counter does not know (ftip-00L9).
CPU_SDPA_FLOPS: Mapping[Any, Callable[..., int]] = MappingProxyType({
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: _cpu_sdpa,
    torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward: _cpu_sdpa_backward,
})


@dataclass(frozen=True)
class FlopCount:
    """FLOPs counted by ``FlopCounterMode`` (2 per multiply-add): the ``total``, the ``by_op`` totals
    and the ``by_module`` totals (keyed by module path, e.g. ``"DecoderLM.blocks.0"``; a module
    applied several times, as a shared block is, sums its applications)."""

    total: int
    by_op: Mapping[str, int]
    by_module: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))


def count_flops(fn: Callable[[], Any]) -> tuple[Any, FlopCount]:
    """Call ``fn()`` under ``FlopCounterMode`` (with :data:`CPU_SDPA_FLOPS`); return its result and the count."""
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    with FlopCounterMode(display=False, custom_mapping=dict(CPU_SDPA_FLOPS)) as counter:
        out = fn()
    counts = counter.get_flop_counts()
    by_op = {str(op).removeprefix("aten."): int(n) for op, n in counts["Global"].items()}
    by_module = {name: sum(int(n) for n in ops.values()) for name, ops in counts.items() if name != "Global"}
    return out, FlopCount(int(counter.get_total_flops()), MappingProxyType(dict(sorted(by_op.items()))),
                          MappingProxyType(dict(sorted(by_module.items()))))


def _model(model: object) -> DecoderLM:
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    return model


def _batch(batch: object) -> PackedBatch:
    if not isinstance(batch, PackedBatch):
        raise TypeError(f"batch must be an ftipbook PackedBatch, got {type(batch).__name__}")
    return batch


def _step_loss(model: torch.nn.Module, batch: PackedBatch) -> torch.Tensor:
    logits = model(batch.tokens, seg_ids=batch.seg_ids)
    return masked_token_nll(logits, batch).sum() / batch.num_predicted


def training_step_flops(model: torch.nn.Module, batch: PackedBatch) -> FlopCount:
    """Counted FLOPs of one training step's forward and backward on ``batch`` (the optimizer
    update is elementwise and not counted). Runs on a copy, so ``model`` and its gradients are untouched."""
    twin = copy.deepcopy(_model(model)).train()
    batch = _batch(batch)
    _, count = count_flops(lambda: _step_loss(twin, batch).backward())
    return count


@torch.no_grad()
def decode_flops_per_token(model: DecoderLM, context: int, *, seed: int = 0) -> FlopCount:
    """Counted FLOPs of decoding token ``context`` after a cached prefill of ``context - 1`` random tokens.

    Comparable to ``accounting.flops_per_token(cfg, context, "decode")`` (one new token attending to
    ``context`` keys, itself included).
    """
    model = _model(model)
    if isinstance(context, bool) or not isinstance(context, int) or context < 2:
        raise ValueError(f"context={context!r} must be an int >= 2 (a prefill of at least one token, then one)")
    device = next(model.parameters()).device
    tokens = torch.randint(0, model.cfg.vocab_size, (1, context), generator=torch.Generator().manual_seed(seed))
    tokens = tokens.to(device)
    was_training = model.training
    model.eval()
    try:
        cache = model.new_cache(1)
        model(tokens[:, :-1], cache=cache)
        _, count = count_flops(lambda: model(tokens[:, -1:], cache=cache))
    finally:
        model.train(was_training)
    return count


class LiveTensorBytes(TorchDispatchMode):
    """Peak bytes of live tensor storages while active (ftip-00L9): a measured memory coordinate.

    ``roots`` are tensors already alive when measuring starts (parameters, optimizer state, the
    batch); every output of every operator run inside the mode is added. Each storage is counted
    once (views and in-place results share it) and subtracted when PyTorch frees it. ``current``
    and ``peak`` are in bytes.
    """

    def __init__(self, roots: Iterable[torch.Tensor] = ()) -> None:
        super().__init__()
        self._live: dict[int, tuple[weakref.ref, int]] = {}
        self.current = 0
        self.peak = 0
        for t in roots:
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"roots must be tensors, got {type(t).__name__}")
            self._add(t)

    def _add(self, t: torch.Tensor) -> None:
        if t.device.type == "meta":
            return
        storage = t.untyped_storage()
        key = id(storage)
        held = self._live.get(key)
        if held is not None and held[0]() is storage:
            return
        nbytes = storage.nbytes()
        self._live[key] = (weakref.ref(storage, lambda _, k=key: self._free(k)), nbytes)
        self.current += nbytes
        self.peak = max(self.peak, self.current)

    def _free(self, key: int) -> None:
        held = self._live.pop(key, None)
        if held is not None:
            self.current -= held[1]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor):
                self._add(t)
        return out


def _optimizer_tensors(optimizer: torch.optim.Optimizer) -> list[torch.Tensor]:
    return [v for state in optimizer.state.values() for v in state.values() if isinstance(v, torch.Tensor)]


def training_step_peak_bytes(model: torch.nn.Module, batch: PackedBatch,
                             make_optimizer: Callable[[torch.nn.Module], torch.optim.Optimizer]) -> int:
    """Peak live tensor bytes of one full training step (forward, backward, optimizer update) on ``batch``.

    Runs on a copy of ``model`` with a fresh optimizer ``make_optimizer(copy)``, so the first update
    allocates the optimizer state inside the measurement; parameters, gradients, optimizer state,
    activations and the batch are all counted.
    """
    twin = copy.deepcopy(_model(model)).train()
    batch = _batch(batch)
    if not callable(make_optimizer):
        raise TypeError(f"make_optimizer must be callable, got {type(make_optimizer).__name__}")
    opt = make_optimizer(twin)
    roots = [*twin.parameters(), *twin.buffers(), *_optimizer_tensors(opt),
             batch.tokens, batch.targets, batch.loss_mask, batch.seg_ids]
    with LiveTensorBytes(roots) as tracker:
        _step_loss(twin, batch).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return tracker.peak


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``fn()`` and its wall-clock seconds (``time.perf_counter``)."""
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def optimizer_state_rule(optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """The state an optimizer keeps, read from it after training: each state tensor's name and its
    bytes per parameter element (e.g. AdamW: ``exp_avg`` 4, ``exp_avg_sq`` 4 in float32), and the
    hyperparameters of each parameter group."""
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}")
    per_name: dict[str, tuple[int, int]] = {}
    params = 0
    for p, state in optimizer.state.items():
        params += p.numel()
        for name, v in state.items():
            if isinstance(v, torch.Tensor) and v.shape == p.shape:
                b, n = per_name.get(name, (0, 0))
                per_name[name] = (b + v.numel() * v.element_size(), n + p.numel())
    groups = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items() if k != "params"}
              for g in optimizer.param_groups]
    return {"class": type(optimizer).__name__, "state_tensors": sorted(per_name),
            "bytes_per_parameter": {k: b / n for k, (b, n) in sorted(per_name.items())},
            "state_bytes": sum(b for b, _ in per_name.values()), "parameters_with_state": params,
            "param_groups": groups}


__all__ = ["CPU_SDPA_FLOPS", "FlopCount", "count_flops", "training_step_flops", "decode_flops_per_token",
           "LiveTensorBytes", "training_step_peak_bytes", "timed", "optimizer_state_rule"]


from ftipbook._validate import guard_module  # noqa: E402 (guards the public functions defined above)

guard_module(__name__)
