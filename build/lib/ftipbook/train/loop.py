"""The training loop: parameter updates ``(theta_{k+1}, s_{k+1}) = U_k(theta_k, s_k, g_k, eta_k)`` (ftip-001I).

:class:`Trainer` runs a ``DecoderLM`` (or any module mapping ``tokens [B, T]`` to logits
``[B, T, V]``) against a stream of packed batches with any ``torch.optim.Optimizer``. Step ``k``
draws the next global batch, computes the masked token NLL per predicted token on ``theta_k``
(recorded as ``losses[k]``), back-propagates, clips the global gradient norm, sets every
group's learning rate to ``initial_lr * schedule(k)`` and updates. Everything the next update
depends on (parameters, optimizer state, step, data position, RNG states) is saved by
:meth:`Trainer.save_checkpoint`, so a run killed after a checkpoint resumes with exactly the
losses of an uninterrupted run.
"""
from __future__ import annotations

import contextlib
import math
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn
from tqdm.auto import tqdm

from ftipbook.data.objective import masked_token_nll
from ftipbook.data.windows import PackedBatch
from ftipbook.train.config import RunRandomness, TrainConfig
from ftipbook.train.distributed import (DistContext, FullState, all_reduce_sum, barrier, context, gather_full_state,
                                        shard_model)
from ftipbook.train.optimizers import build_schedule


@dataclass
class TrainRun:
    """What a run logged: one entry per step ``k`` (before the update ``k``), evaluations by step."""

    losses: list[float] = field(default_factory=list)  # masked token NLL per predicted token on the batch of step k
    lrs: list[float] = field(default_factory=list)  # learning rate of the first parameter group at step k
    grad_norms: list[float] = field(default_factory=list)  # global gradient norm before clipping
    evals: list[tuple[int, float]] = field(default_factory=list)  # (step, evaluation NLL per token)
    tokens: int = 0  # predicted tokens seen, summed over ranks

    @property
    def steps(self) -> int:
        """Number of updates made so far."""
        return len(self.losses)

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"losses": self.losses, "lrs": self.lrs, "grad_norms": self.grad_norms,
                "evals": [list(e) for e in self.evals], "tokens": self.tokens}

    @classmethod
    def from_dict(cls, d: dict) -> TrainRun:
        """Inverse of :meth:`to_dict`."""
        return cls(list(d["losses"]), list(d["lrs"]), list(d["grad_norms"]),
                   [(int(s), float(v)) for s, v in d["evals"]], int(d["tokens"]))


def _local(batch: PackedBatch, ctx: DistContext, device: torch.device) -> PackedBatch:
    if not isinstance(batch, PackedBatch):
        raise TypeError(f"batches must be ftipbook.data.windows.PackedBatch, got {type(batch).__name__}")
    return batch.shard(ctx.rank, ctx.world_size).to(device)


def _nll_sum(model: nn.Module, batch: PackedBatch, precision: str, device: torch.device) -> torch.Tensor:
    """Summed masked token NLL (ftip-001B) of ``model`` on ``batch``, under the declared precision."""
    with _autocast(precision, device):
        logits = model(batch.tokens, seg_ids=batch.seg_ids)
    return masked_token_nll(logits, batch).sum()


def _autocast(precision: str, device: torch.device) -> contextlib.AbstractContextManager:
    """bf16 autocast on CUDA for ``"bf16"`` and ``"auto"``; fp32 (no autocast) otherwise.

    ``"bf16"`` off CUDA raises ``ValueError``: CPU training stays in float32.
    """
    if precision == "fp32" or (precision == "auto" and device.type != "cuda"):
        return contextlib.nullcontext()
    if device.type != "cuda":
        raise ValueError(f"precision='bf16' needs a CUDA device, the model is on {device.type}; use 'fp32' or 'auto'")
    return torch.autocast("cuda", dtype=torch.bfloat16)


def _device_of(model: nn.Module) -> torch.device:
    try:
        return next(model.parameters()).device
    except StopIteration:
        raise ValueError("the model has no parameters to train") from None


def evaluate(
    model: nn.Module, batches: Iterable, *, precision: str = "auto", ctx: DistContext | None = None
) -> float:
    """Masked token NLL per predicted token over ``batches`` (each rank evaluates its rows; summed).

    The model is put in eval mode and restored to its previous mode afterwards.
    """
    ctx = ctx or context()
    device = _device_of(model)
    was_training = model.training
    model.eval()
    total = torch.zeros((), dtype=torch.float64, device=device)
    count = torch.zeros((), dtype=torch.float64, device=device)
    with torch.no_grad():
        for batch in batches:
            local = _local(batch, ctx, device)
            total += _nll_sum(model, local, precision, device).double()
            count += local.num_predicted
    model.train(was_training)
    total, count = all_reduce_sum(total, ctx), all_reduce_sum(count, ctx)
    if count == 0:
        raise ValueError("the evaluation batches contain no predicted token (every loss_mask entry is False)")
    return float(total / count)


class Trainer:
    """Train ``model`` with ``optimizer`` on ``batches`` for ``cfg.steps`` updates.

    ``batches``: an iterator of global batches (``PackedBatch`` fields ``tokens``, ``targets``,
    ``loss_mask``, ``seg_ids``); to checkpoint it must also offer ``state_dict()`` (JSON-ready)
    and ``load_state_dict()``. ``schedule``: ``step -> multiplier`` (default:
    :func:`~ftipbook.train.optimizers.build_schedule` of ``cfg``); each group's base learning rate
    is its ``lr`` when the trainer is made. ``eval_batches``: a fixed sequence evaluated every
    ``cfg.eval_every`` steps and at the end. With a process group (``torchrun``), each rank trains
    on its rows of every global batch, and the model is wrapped in ``DistributedDataParallel``
    (``cfg.parallel="ddp"``) or sharded in place with FSDP2 (``"fsdp"``,
    :func:`~ftipbook.train.distributed.shard_model`, which also points ``optimizer`` at the
    sharded parameters: build it fresh, from the model's own parameters).
    ``tokenizer``, ``data`` and ``randomness`` are recorded in checkpoints (see
    :mod:`ftipbook.train.checkpoint`).
    """

    def __init__(
        self,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        batches: Iterator,
        cfg: TrainConfig,
        *,
        schedule: Callable[[int], float] | None = None,
        eval_batches: Sequence | None = None,
        randomness: RunRandomness | None = None,
        tokenizer=None,
        data: dict | None = None,
        checkpoint_dir: str | Path | None = None,
    ) -> None:
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}")
        if not isinstance(cfg, TrainConfig):
            raise TypeError(f"cfg must be a TrainConfig, got {type(cfg).__name__}")
        if cfg.checkpoint_every and checkpoint_dir is None:
            raise ValueError(f"checkpoint_every={cfg.checkpoint_every} needs a checkpoint_dir")
        if cfg.eval_every and not eval_batches:
            raise ValueError(f"eval_every={cfg.eval_every} needs eval_batches")
        self.model, self.optimizer, self.cfg = model, optimizer, cfg
        self.batches = iter(batches)
        self.schedule = schedule if schedule is not None else build_schedule(cfg)
        self.eval_batches = list(eval_batches) if eval_batches else []
        self.randomness = randomness or RunRandomness()
        self.tokenizer, self.data = tokenizer, dict(data or {})
        self.checkpoint_dir = None if checkpoint_dir is None else Path(checkpoint_dir)
        self.ctx = context()
        self.device = _device_of(model)
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.step = 0
        self.log = TrainRun()
        self._ddp = self._wrap(model)
        torch.manual_seed(self.randomness.optimizer)

    @property
    def sharded(self) -> bool:
        """True when the model's parameters are sharded over the ranks (FSDP)."""
        return self.ctx.active and self.cfg.parallel == "fsdp"

    def _wrap(self, model: nn.Module) -> nn.Module:
        if not self.ctx.active:
            return model
        if self.cfg.parallel == "fsdp":
            shard_model(model, self.optimizer)
            return model
        from torch.nn.parallel import DistributedDataParallel

        ids = [self.device.index] if self.device.type == "cuda" else None
        return DistributedDataParallel(model, device_ids=ids)

    # ------------------------------------------------------------------------------------------
    def train_step(self, batch) -> float:
        """One update on a global batch; returns the global masked token NLL per predicted token."""
        local = _local(batch, self.ctx, self.device)
        self.model.train()
        for group in self.optimizer.param_groups:
            group["lr"] = group["initial_lr"] * self.schedule(self.step)
        nll_sum = _nll_sum(self._ddp, local, self.cfg.precision, self.device)
        global_count = all_reduce_sum(torch.tensor(local.num_predicted, device=self.device), self.ctx)
        if global_count == 0:
            raise ValueError(f"the batch of step {self.step} has no predicted token (loss_mask is all False)")
        # DDP and FSDP average gradients over ranks; scaling by world_size makes that the per-token gradient.
        # The scale is at least float32 and float64 for a float64 loss (int / int64 gives float32).
        scale_dtype = torch.promote_types(nll_sum.dtype, torch.float32)
        loss = nll_sum * (self.ctx.world_size / global_count.to(scale_dtype))
        aux = getattr(self.model, "auxiliary_loss", lambda: None)()
        (loss if aux is None else loss + aux).backward()
        max_norm = self.cfg.grad_clip if self.cfg.grad_clip is not None else math.inf
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm)
        grad_norm = float(norm.full_tensor() if self.sharded else norm)  # FSDP: a replicated DTensor
        value = float(all_reduce_sum(nll_sum.detach(), self.ctx) / global_count)
        if not (math.isfinite(value) and math.isfinite(grad_norm)):
            raise FloatingPointError(
                f"non-finite loss {value} or gradient norm {grad_norm} at step {self.step}; "
                f"lower the learning rate or set grad_clip"
            )
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.log.losses.append(value)
        self.log.lrs.append(float(self.optimizer.param_groups[0]["lr"]))
        self.log.grad_norms.append(grad_norm)
        self.log.tokens += int(global_count)
        self.step += 1
        return value

    def evaluate(self) -> float:
        """Evaluation NLL per token on ``eval_batches`` with the current parameters."""
        return evaluate(self.model, self.eval_batches, precision=self.cfg.precision, ctx=self.ctx)

    def run(self, until: int | None = None) -> TrainRun:
        """Train from the current step up to step ``until`` (default ``cfg.steps``); return the log."""
        until = self.cfg.steps if until is None else until
        if not isinstance(until, int) or not self.step <= until <= self.cfg.steps:
            raise ValueError(f"until={until!r} must be an int in [{self.step}, steps={self.cfg.steps}]")
        show = self.cfg.progress if self.cfg.progress is not None else sys.stderr.isatty()
        bar = tqdm(total=self.cfg.steps, initial=self.step, disable=not (show and self.ctx.is_main),
                   desc="train", unit="step", dynamic_ncols=True)
        with bar:
            while self.step < until:
                try:
                    batch = next(self.batches)
                except StopIteration:
                    raise ValueError(f"the batch iterator ended after {self.step} of {self.cfg.steps} steps") from None
                loss = self.train_step(batch)
                bar.update(1)
                bar.set_postfix(loss=f"{loss:.4f}")
                last = self.step == self.cfg.steps
                if self.cfg.eval_every and (self.step % self.cfg.eval_every == 0 or last):
                    self.log.evals.append((self.step, self.evaluate()))
                if self.cfg.checkpoint_every and (self.step % self.cfg.checkpoint_every == 0 or last):
                    self.save_checkpoint(self.checkpoint_dir / f"step-{self.step:06d}")
        return self.log

    # ------------------------------------------------------------------------------------------
    def full_state(self) -> FullState | None:
        """Under FSDP, the full weights and optimizer state gathered on rank 0 (``None`` on the other ranks;
        every rank must call it); otherwise ``None``: ``model`` and ``optimizer`` hold the full state."""
        return gather_full_state(self.model, self.optimizer, self.ctx) if self.sharded else None

    def save_checkpoint(self, path: str | Path) -> Path:
        """Write a training checkpoint to the directory ``path`` (rank 0 writes; all ranks wait).

        Under FSDP every rank first takes part in gathering the full state (:meth:`full_state`), so
        the checkpoint is the one a single process would write."""
        from ftipbook.train.checkpoint import save_training_checkpoint

        full = self.full_state()
        if self.ctx.is_main:
            save_training_checkpoint(self, path, full=full)
        barrier(self.ctx)
        return Path(path)

    def restore(self, path: str | Path) -> Path:
        """Load a checkpoint written by :meth:`save_checkpoint` into this trainer's objects, after verifying
        every file; ``path="latest"``: the newest complete one in ``checkpoint_dir``. Returns its path."""
        from ftipbook.train.checkpoint import restore_training_checkpoint

        return restore_training_checkpoint(self, path)
