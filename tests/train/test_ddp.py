"""Two gloo processes on one global batch give the loss curve of one process (ftip-001J: reduction order)."""
import json
import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from ftipbook.train import TrainConfig, Trainer, build_optimizer
from tests.local_runs import free_port
from tests.train.helpers import CountingStream, tiny_model

CFG = TrainConfig(steps=8, batch_size=8, lr=5e-3, schedule="warmup_cosine", warmup_steps=2, progress=False)


def _run() -> list[float]:
    torch.set_num_threads(1)
    model = tiny_model(0)
    return Trainer(model, build_optimizer(model, CFG), CountingStream(batch_size=8, seed=1), CFG).run().losses


def _worker(rank: int, world: int, port: int, out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        losses = _run()
        with open(f"{out}.{rank}", "w") as f:
            json.dump(losses, f)
    finally:
        dist.destroy_process_group()


def test_two_process_ddp_matches_one_process(tmp_path):
    single = _run()
    mp.spawn(_worker, args=(2, free_port(), str(tmp_path / "losses")), nprocs=2, join=True)
    ranks = [json.loads((tmp_path / f"losses.{r}").read_text()) for r in range(2)]
    assert ranks[0] == ranks[1]  # every rank logs the global loss
    assert ranks[0] == pytest.approx(single, abs=1e-6)
    assert single[-1] < single[0] - 0.5  # and the run actually trained

