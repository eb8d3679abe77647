"""Training: configuration, randomness, schedules, the loop, DDP and checkpoints (ftip-001H, 001I, 001J).

Typical use::

    from ftipbook import train
    cfg = train.TrainConfig(steps=200, lr=3e-3, schedule="warmup_cosine", warmup_steps=20)
    trainer = train.Trainer(model, train.build_optimizer(model, cfg), batches, cfg)
    log = trainer.run()
"""
from ftipbook.train.answers import answer_accuracy, answer_hits
from ftipbook.train.checkpoint import (latest_checkpoint, restore_training_checkpoint, save_training_checkpoint,
                                      trainer_provenance)
from ftipbook.train.config import RunRandomness, TrainConfig
from ftipbook.train.data import DIGIT_PATTERN, batch_stream, fixed_batches, train_tokenizer
from ftipbook.train.distributed import DistContext, all_reduce_sum, context, init_from_env
from ftipbook.train.loop import Trainer, TrainRun, evaluate
from ftipbook.train.optimizers import build_optimizer, build_schedule, decay_groups

__all__ = [
    "TrainConfig", "RunRandomness",
    "build_optimizer", "build_schedule", "decay_groups",
    "Trainer", "TrainRun", "evaluate",
    "DistContext", "context", "init_from_env", "all_reduce_sum",
    "answer_hits", "answer_accuracy",
    "DIGIT_PATTERN", "train_tokenizer", "batch_stream", "fixed_batches",
    "save_training_checkpoint", "restore_training_checkpoint", "latest_checkpoint", "trainer_provenance",
]
