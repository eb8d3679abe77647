"""Data-parallel training on ``torch.distributed`` (DDP), launched by ``torchrun``.

Every rank draws the same global batch from identically seeded data and keeps its own slice of
rows (``PackedBatch.shard``), so a run on ``W`` processes sees exactly the batches of a
one-process run. The loss is normalised by the *global* number of predicted tokens
(:func:`all_reduce_sum`), so that DDP's gradient average equals the gradient of the one-process
per-token loss, whatever the number of predicted tokens in each slice.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

#: Environment variables that ``torchrun`` sets in every worker.
TORCHRUN_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


@dataclass(frozen=True)
class DistContext:
    """Where this process stands in a data-parallel group (``world_size = 1``: no group)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        """True on rank 0, the rank that writes files and prints."""
        return self.rank == 0

    @property
    def active(self) -> bool:
        """True when a process group of more than one rank is in use."""
        return self.world_size > 1


def context() -> DistContext:
    """The context of the current process group, or the single-process context when none is initialized."""
    if dist.is_available() and dist.is_initialized():
        return DistContext(dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", dist.get_rank())))
    return DistContext()


def init_from_env(backend: str | None = None) -> DistContext:
    """Join the process group described by ``torchrun``'s environment variables.

    Without them (a plain ``python`` launch) this is the single-process context. ``backend``
    defaults to ``nccl`` when CUDA is present and ``gloo`` otherwise. On CUDA each rank uses the
    device ``cuda:LOCAL_RANK``.
    """
    if "WORLD_SIZE" not in os.environ or int(os.environ["WORLD_SIZE"]) == 1:
        return DistContext()
    missing = [k for k in TORCHRUN_ENV if k not in os.environ]
    if missing:
        raise ValueError(f"WORLD_SIZE is set but {missing} are not: launch with torchrun")
    if not dist.is_initialized():
        backend = backend or ("nccl" if torch.cuda.is_available() else "gloo")
        if backend == "nccl":
            torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        dist.init_process_group(backend)
    return context()


def all_reduce_sum(x: torch.Tensor, ctx: DistContext) -> torch.Tensor:
    """The sum of ``x`` over all ranks (a detached copy; ``x`` itself when there is one rank)."""
    if not ctx.active:
        return x
    y = x.detach().clone()
    dist.all_reduce(y, op=dist.ReduceOp.SUM)
    return y


def barrier(ctx: DistContext) -> None:
    """Wait for every rank (a no-op with one rank)."""
    if ctx.active:
        dist.barrier()
