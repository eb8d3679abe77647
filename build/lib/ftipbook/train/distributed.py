"""Data-parallel training on ``torch.distributed`` (DDP or FSDP), launched by ``torchrun``.

Every rank draws the same global batch from identically seeded data and keeps its own slice of
rows (``PackedBatch.shard``), so a run on ``W`` processes sees exactly the batches of a
one-process run. The loss is normalised by the *global* number of predicted tokens
(:func:`all_reduce_sum`), so that DDP's gradient average equals the gradient of the one-process
per-token loss, whatever the number of predicted tokens in each slice.

With ``TrainConfig(parallel="fsdp")`` the parameters, gradients and optimizer state are sharded
instead of replicated (FSDP2, ``torch.distributed.fsdp.fully_shard``, :func:`shard_model`): each
decoder block is one unit gathered for its forward and backward, and gradients are averaged by a
reduce-scatter, so the update is the one-process update up to the order of float sums. It runs
on CPU processes with gloo as well as on GPUs with NCCL. Checkpoints keep their format:
:func:`gather_full_state` collects the full (unsharded) weights and optimizer state on rank 0,
and restoring hands every rank its shard of the full tensors (:func:`load_full_tensor`,
:func:`shard_model`'s optimizer hook), so a checkpoint written under FSDP restores in one
process or under DDP, and the other way round.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.tensor import DTensor, distribute_tensor

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


def shard_model(model: nn.Module, optimizer: torch.optim.Optimizer) -> None:
    """Shard ``model`` in place with FSDP2 and point ``optimizer`` at the sharded parameters.

    Every module of ``model.blocks`` (a ``DecoderLM``'s decoder blocks), then ``model`` itself, is
    passed to ``fully_shard`` over a one-dimensional mesh of all ranks on the model's device type.
    ``fully_shard`` replaces each parameter by a sharded ``DTensor`` parameter, so the parameters
    in ``optimizer.param_groups`` are swapped for their sharded replacements (matched by name);
    the optimizer must therefore be fresh (no state yet) and update only parameters of ``model``,
    else ``ValueError``. A hook on ``optimizer.load_state_dict`` cuts full (one-process) state
    tensors into this rank's shards, so full optimizer checkpoints load unchanged.
    """
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    if not (dist.is_available() and dist.is_initialized()):
        raise ValueError("shard_model needs an initialized process group (launch with torchrun)")
    if optimizer.state:
        raise ValueError("the optimizer already holds state; build it fresh for a model that is sharded with FSDP")
    names = {id(p): name for name, p in model.named_parameters()}
    for group in optimizer.param_groups:
        for p in group["params"]:
            if id(p) not in names:
                raise ValueError(f"the optimizer updates a tensor of shape {tuple(p.shape)} that is not a parameter "
                                 f"of the model; FSDP can only shard the model's own parameters")
    device = next(model.parameters()).device
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    for block in getattr(model, "blocks", ()):
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    sharded = dict(model.named_parameters())
    for group in optimizer.param_groups:
        group["params"] = [sharded[names[id(p)]] for p in group["params"]]
    optimizer.register_load_state_dict_pre_hook(_shard_optimizer_state)


def _shard_optimizer_state(optimizer: torch.optim.Optimizer, state_dict: dict) -> dict:
    """``load_state_dict`` pre-hook: every full state tensor shaped like its sharded parameter becomes
    this rank's shard (scalars such as Adam's ``step`` stay as they are)."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    ids = [i for group in state_dict["param_groups"] for i in group["params"]]
    by_id = dict(zip(ids, params))
    state = {}
    for key, entry in state_dict["state"].items():
        param = by_id.get(key)
        state[key] = {k: _shard_like(v, param) for k, v in entry.items()} if isinstance(entry, dict) else entry
    return {**state_dict, "state": state}


def _shard_like(value: Any, param: torch.Tensor | None) -> Any:
    if (isinstance(param, DTensor) and isinstance(value, torch.Tensor) and not isinstance(value, DTensor)
            and value.shape == param.shape):
        return distribute_tensor(value.to(param.device), param.device_mesh, param.placements, src_data_rank=None)
    return value


def load_full_tensor(target: torch.Tensor, full: torch.Tensor) -> None:
    """Copy the full tensor ``full`` into ``target``: all of it into a plain tensor, this rank's shard of
    it into a sharded ``DTensor`` (no communication: every rank holds ``full``)."""
    with torch.no_grad():
        if isinstance(target, DTensor):
            shard = distribute_tensor(full.to(target.device), target.device_mesh, target.placements,
                                      src_data_rank=None)
            target.to_local().copy_(shard.to_local())
        else:
            target.copy_(full)


@dataclass(frozen=True)
class FullState:
    """The full (unsharded) weights and optimizer state of a sharded model, on the CPU (rank 0 only)."""

    model: dict[str, torch.Tensor]  # model.state_dict() as one process would hold it
    optimizer: dict  # optimizer.state_dict() as one process would hold it


def gather_full_state(model: nn.Module, optimizer: torch.optim.Optimizer, ctx: DistContext) -> FullState | None:
    """All-gather every sharded tensor of ``model.state_dict()`` and ``optimizer.state_dict()``, one tensor at
    a time, keeping the full copies on rank 0 (moved to the CPU); ``None`` on the other ranks.

    A collective: every rank must call it, at the same point of the run.
    """
    model_state = _gathered(model.state_dict(), ctx.is_main)
    optimizer_state = _gathered(optimizer.state_dict(), ctx.is_main)
    return FullState(model_state, optimizer_state) if ctx.is_main else None


def _gathered(value: Any, keep: bool) -> Any:
    if isinstance(value, DTensor):
        full = value.full_tensor()
        return full.detach().cpu() if keep else None
    if isinstance(value, dict):
        return {k: _gathered(v, keep) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_gathered(v, keep) for v in value)
    return value
