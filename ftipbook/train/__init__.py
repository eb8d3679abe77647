"""Training: configuration, randomness, schedules, the loop, DDP and checkpoints (ftip-001H, 001I, 001J).

Typical use::

    from ftipbook import train
    cfg = train.TrainConfig(steps=200, lr=3e-3, schedule="warmup_cosine", warmup_steps=20)
    trainer = train.Trainer(model, train.build_optimizer(model, cfg), batches, cfg)
    log = trainer.run()
"""
from ftipbook.train.checkpoint import restore_training_checkpoint, save_training_checkpoint, trainer_provenance
from ftipbook.train.config import RunRandomness, TrainConfig
from ftipbook.train.distributed import DistContext, all_reduce_sum, context, init_from_env, shard_rows
from ftipbook.train.optimizers import build_optimizer, decay_groups
from ftipbook.train.loop import Trainer, TrainRun, autocast_context, evaluate, token_nll_terms
from ftipbook.train.schedules import Constant, Schedule, WarmupDecay, build_schedule

__all__ = [
    "TrainConfig", "RunRandomness",
    "Schedule", "Constant", "WarmupDecay", "build_schedule",
    "build_optimizer", "decay_groups",
    "Trainer", "TrainRun", "evaluate", "token_nll_terms", "autocast_context",
    "DistContext", "context", "init_from_env", "shard_rows", "all_reduce_sum",
    "save_training_checkpoint", "restore_training_checkpoint", "trainer_provenance",
]
