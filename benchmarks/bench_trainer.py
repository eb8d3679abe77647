"""Trainer throughput: one process vs 2-process DDP (gloo) on CPU, same model and global batch.

Run:  python benchmarks/bench_trainer.py [--steps 20] [--batch 16] [--seq 64] [--world 2]

Every configuration trains the same base-mha-sized DecoderLM with ``ftipbook.train.Trainer`` on
the same packed toy-corpus stream (AdamW, fp32). The single-process runs use 1 and ``world``
threads; the DDP run uses ``world`` processes of 1 thread each, so it has the same cores as the
second single-process run. After ``--warmup`` steps, ``--steps`` steps are timed; the table gives
seconds per step, predicted tokens per second and the speed relative to one process with
``world`` threads (the same cores) and with one thread.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from _bench import print_table

from ftipbook.atomic import write_text
from ftipbook.data.mixture import toy_mixture
from ftipbook.model import ModelConfig, build_model
from ftipbook.train import (RunRandomness, TrainConfig, Trainer, batch_stream, build_optimizer,
                            train_tokenizer)


def timed_run(args: argparse.Namespace) -> tuple[float, int]:
    """(seconds for the timed steps, predicted tokens in them), for this process's part of the group."""
    docs = toy_mixture().documents(2000, 0)
    tok = train_tokenizer(docs[:500], 512)
    cfg = TrainConfig(steps=args.warmup + args.steps, batch_size=args.batch, seq_len=args.seq, lr=1e-3,
                      progress=False)
    model = build_model(ModelConfig(vocab_size=tok.vocab_size, d_model=64, n_layers=2, n_heads=4, d_ff=176,
                                    max_seq_len=args.seq), seed=0)
    trainer = Trainer(model, build_optimizer(model, cfg), batch_stream(docs, tok, cfg, RunRandomness()), cfg)
    trainer.run(args.warmup)
    if dist.is_initialized():
        dist.barrier()
    start, tokens = time.perf_counter(), trainer.log.tokens
    trainer.run()
    if dist.is_initialized():
        dist.barrier()
    return time.perf_counter() - start, trainer.log.tokens - tokens


def _worker(rank: int, args: argparse.Namespace, port: int, out: str) -> None:
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=args.world)
    try:
        seconds, tokens = timed_run(args)
        if rank == 0:
            write_text(out, json.dumps([seconds, tokens]))
    finally:
        dist.destroy_process_group()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--batch", type=int, default=16, help="global batch (windows)")
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--world", type=int, default=2, help="DDP processes (and threads of the peer)")
    args = parser.parse_args(argv)
    results = {}
    for threads in sorted({1, args.world}):
        torch.set_num_threads(threads)
        results[f"1 process, {threads} thread(s)"] = timed_run(args)
    with tempfile.TemporaryDirectory() as tmp, socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        mp.spawn(_worker, args=(args, port, f"{tmp}/ddp.json"), nprocs=args.world, join=True)
        results[f"DDP gloo, {args.world} x 1 thread"] = tuple(json.loads(Path(f"{tmp}/ddp.json").read_text()))
    speed = {name: tok / sec for name, (sec, tok) in results.items()}
    same_cores, one = speed[f"1 process, {args.world} thread(s)"], speed["1 process, 1 thread(s)"]
    print(f"trainer, B={args.batch} T={args.seq}, {args.steps} timed steps, cpu float32, torch {torch.__version__}")
    print_table(["run", "s/step", "tokens/s", f"vs 1 process x {args.world} threads", "vs 1 process x 1 thread"],
                [[name, sec / args.steps, speed[name], speed[name] / same_cores, speed[name] / one]
                 for name, (sec, _) in results.items()])


if __name__ == "__main__":
    main()
