"""FSDP (FSDP2 ``fully_shard``) on two gloo CPU processes: the loss curve of one process, and checkpoints
in the one-process format that restore under FSDP and in one process (ftip-001I, 001J)."""
import dataclasses
import json
import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.tensor import DTensor

from ftipbook.artifact import load_artifact
from ftipbook.train import TrainConfig, Trainer, build_optimizer
from ftipbook.train.distributed import shard_model
from tests.local_runs import free_port
from tests.train.helpers import CountingStream, tiny_model

CFG = TrainConfig(steps=8, batch_size=8, lr=5e-3, schedule="warmup_cosine", warmup_steps=2, progress=False,
                  checkpoint_every=4, eval_every=4, parallel="fsdp")
#: FSDP sums gradient shards in another order than one process (reduce-scatter, sharded norms):
#: the curves agree to float32 rounding, amplified a little by eight Adam steps.
TOL = 1e-5


def _trainer(directory, cfg: TrainConfig = CFG) -> Trainer:
    torch.set_num_threads(1)
    model = tiny_model(0)
    held_out = CountingStream(batch_size=8, seed=7)
    return Trainer(model, build_optimizer(model, cfg), CountingStream(batch_size=8, seed=1), cfg,
                   eval_batches=[next(held_out), next(held_out)], checkpoint_dir=directory)


def _worker(rank: int, world: int, port: int, out: str, resume: bool, optimizer: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        trainer = _trainer(f"{out}/fsdp", dataclasses.replace(CFG, optimizer=optimizer))
        assert trainer.sharded and all(isinstance(p, DTensor) for p in trainer.model.parameters())
        if resume:
            trainer.restore(f"{out}/fsdp/step-000004")
        log = trainer.run()
        with open(f"{out}/losses{'-resumed' if resume else ''}.{rank}", "w") as f:
            json.dump(log.losses + [v for _, v in log.evals], f)  # the losses, then the evaluations
    finally:
        dist.destroy_process_group()


def _spawn(out, resume: bool, optimizer: str = CFG.optimizer) -> list[list[float]]:
    mp.spawn(_worker, args=(2, free_port(), str(out), resume, optimizer), nprocs=2, join=True)
    return [json.loads((out / f"losses{'-resumed' if resume else ''}.{r}").read_text()) for r in range(2)]


def test_two_process_fsdp_matches_one_process_and_checkpoints(tmp_path):
    single = _trainer(tmp_path / "one")
    assert not single.sharded  # no process group: the plain one-process loop
    log = single.run()
    losses = log.losses + [v for _, v in log.evals]
    assert len(losses) == 8 + 2
    ranks = _spawn(tmp_path, resume=False)
    assert ranks[0] == ranks[1]  # every rank logs the global loss
    assert ranks[0] == pytest.approx(losses, abs=TOL)
    assert losses[7] < losses[0] - 0.5  # and the run actually trained

    # The FSDP checkpoint holds the full weights, as the one-process checkpoint of the same step does.
    for step in (4, 8):
        name = f"step-{step:06d}"
        sharded, one = load_artifact(tmp_path / "fsdp" / name), load_artifact(tmp_path / "one" / name)
        assert sharded.state_dict.keys() == one.state_dict.keys()
        for key, value in one.state_dict.items():
            assert sharded.state_dict[key].shape == value.shape
            torch.testing.assert_close(sharded.state_dict[key], value, atol=TOL, rtol=0)

    # Restored under FSDP, the run continues with the uninterrupted losses ...
    resumed = _spawn(tmp_path, resume=True)
    assert resumed[0] == resumed[1] and resumed[0] == pytest.approx(losses, abs=TOL)
    # ... and restored in one process (the format is the same; parallel may differ), too.
    alone = _trainer(tmp_path / "alone", dataclasses.replace(CFG, parallel="ddp"))
    alone.restore(tmp_path / "fsdp" / "step-000004")
    log = alone.run()
    assert log.losses + [v for _, v in log.evals] == pytest.approx(losses, abs=TOL)


def test_fsdp_with_muon_matches_one_process(tmp_path):
    """Muon's Newton-Schulz iteration acts on whole matrices; on sharded parameters it still gives the
    one-process update (the DTensor matrix products gather what they need)."""
    cfg = dataclasses.replace(CFG, optimizer="muon_adamw", checkpoint_every=0)
    log = _trainer(None, cfg).run()
    losses = log.losses + [v for _, v in log.evals]
    ranks = _spawn(tmp_path, resume=False, optimizer="muon_adamw")
    assert ranks[0] == ranks[1] and ranks[0] == pytest.approx(losses, abs=TOL)
    assert losses[7] < losses[0] - 0.5


def test_parallel_is_validated():
    with pytest.raises(ValueError, match="parallel='zero'.*'ddp', 'fsdp'"):
        TrainConfig(parallel="zero")


@pytest.fixture
def one_rank_group():
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def test_shard_model_refusals(one_rank_group):
    model = tiny_model(0)
    stale = build_optimizer(model, CFG)
    stale.state[next(model.parameters())]["step"] = torch.tensor(1.0)
    with pytest.raises(ValueError, match="already holds state"):
        shard_model(model, stale)
    foreign = torch.optim.SGD([torch.nn.Parameter(torch.zeros(3, 5))], lr=0.1)
    with pytest.raises(ValueError, match=r"shape \(3, 5\) that is not a parameter of the model"):
        shard_model(model, foreign)


def test_shard_model_needs_a_process_group():
    model = tiny_model(0)
    with pytest.raises(ValueError, match="initialized process group"):
        shard_model(model, build_optimizer(model, CFG))
