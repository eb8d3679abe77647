"""Command line: ``python -m ftipbook.cli {train,sample,evaluate} ...`` (also installed as ``ftipbook``).

* ``train`` pretrains a decoder on the toy mixture (or fine-tunes a model given by ``--init``)
  and writes a base-model artifact; under ``torchrun --nproc_per_node N`` it runs DDP.
* ``sample`` generates a continuation of a prompt with a saved artifact or a zoo entry.
* ``evaluate`` reports the validation NLL on a fresh toy-mixture draw and exact-answer accuracy
  on the zoo's protected arithmetic benchmarks.

A model argument is an artifact directory (``artifact.json`` + ``weights.safetensors``) or the
name of a zoo entry (``ftipbook.zoo.names()``). Errors in the arguments print one line and
exit with status 2.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from ftipbook.artifact import ModelArtifact, load_artifact, save_artifact
from ftipbook.runtime import get_device


def _artifact(ref: str) -> ModelArtifact:
    """An artifact directory, or a zoo entry name."""
    if (Path(ref) / "artifact.json").is_file():
        return load_artifact(ref)
    from ftipbook import zoo

    if ref in zoo.names():
        return zoo.load(ref)
    raise ValueError(f"{ref!r} is neither an artifact directory nor a zoo entry; zoo entries: {', '.join(zoo.names())}")


def _train(args: argparse.Namespace) -> None:
    from ftipbook.train import init_from_env

    ctx = init_from_env()
    try:
        _train_in(args, ctx)
    finally:
        if ctx.active:
            torch.distributed.destroy_process_group()


def _train_in(args: argparse.Namespace, ctx) -> None:
    from ftipbook.data.mixture import toy_mixture
    from ftipbook.model import ModelConfig, build_model
    from ftipbook.train import (RunRandomness, TrainConfig, Trainer, batch_stream, build_optimizer, fixed_batches,
                                train_tokenizer, trainer_provenance)

    cfg = TrainConfig(steps=args.steps, batch_size=args.batch_size, seq_len=args.seq_len, optimizer=args.optimizer,
                      lr=args.lr, weight_decay=args.weight_decay, schedule=args.schedule,
                      warmup_steps=args.warmup_steps, grad_clip=None if args.grad_clip == 0 else args.grad_clip,
                      precision=args.precision, eval_every=args.eval_every, checkpoint_every=args.checkpoint_every,
                      progress=args.progress)
    randomness = RunRandomness.from_seed(args.seed)
    docs = toy_mixture().documents(args.docs, args.seed)
    if args.init is not None:
        start = _artifact(args.init)
        tok, model = start.tokenizer, start.model()
        if tok is None:
            raise ValueError(f"--init {args.init!r} has no tokenizer; training needs one to tokenize the corpus")
    else:
        tok = train_tokenizer(docs[: max(1, args.docs // 5)], args.vocab_size)
        mcfg = ModelConfig(vocab_size=tok.vocab_size, d_model=args.d_model, n_layers=args.n_layers,
                           n_heads=args.n_heads, d_ff=args.d_ff, max_seq_len=args.seq_len, pos=args.pos,
                           layer_pattern=args.layer_pattern, n_loops=args.n_loops)
        model = build_model(mcfg, seed=randomness.init)
    if ctx.active and torch.cuda.is_available():
        device = torch.device(f"cuda:{ctx.local_rank}")  # one GPU per rank
    else:
        device = get_device(args.device)
    model = model.to(device).train()
    out = Path(args.out)
    eval_batches = None
    if cfg.eval_every:
        valid = toy_mixture().documents(max(64, args.docs // 10), args.seed + 1)
        eval_batches = fixed_batches(valid, tok, cfg.seq_len, cfg.batch_size, 2)
    trainer = Trainer(model, build_optimizer(model, cfg), batch_stream(docs, tok, cfg, randomness), cfg,
                      eval_batches=eval_batches, randomness=randomness, tokenizer=tok,
                      data={"recipe": "toy mixture", "documents": args.docs, "seed": args.seed},
                      checkpoint_dir=out / "checkpoints" if cfg.checkpoint_every else None)
    if args.resume is not None:
        trainer.restore(args.resume)
    log = trainer.run()
    if ctx.is_main:
        artifact = ModelArtifact.from_model(trainer.model, tok, provenance=trainer_provenance(trainer))
        save_artifact(artifact, out)
        (out / "train_log.json").write_text(json.dumps({**log.to_dict(), "world_size": ctx.world_size}) + "\n")
        evals = f", eval NLL {log.evals[-1][1]:.4f}" if log.evals else ""
        print(f"trained {log.steps} steps on {ctx.world_size} process(es): loss {log.losses[0]:.4f} -> "
              f"{log.losses[-1]:.4f}{evals}; artifact {out} (runtime hash {artifact.runtime_hash()[:12]})")


def _sample(args: argparse.Namespace) -> None:
    from ftipbook.model import generate

    art = _artifact(args.model)
    model = art.model(get_device(args.device))
    ids = art.encode(args.prompt)
    if not ids:
        raise ValueError("--prompt encodes to no tokens")
    out = generate(model, ids, args.max_new_tokens, temperature=args.temperature, top_k=args.top_k,
                   top_p=args.top_p, seed=args.seed, eos_id=art.numerics.eos_id)
    print(json.dumps({"prompt": args.prompt, "continuation": art.decode(out.new_tokens.tolist()),
                      "new_tokens": len(out.new_tokens), "stop_reason": out.stop_reason.value}, ensure_ascii=False))


def _evaluate(args: argparse.Namespace) -> None:
    from ftipbook import zoo
    from ftipbook.data.mixture import toy_mixture
    from ftipbook.train import answer_accuracy, evaluate, fixed_batches

    art = _artifact(args.model)
    if art.tokenizer is None:
        raise ValueError(f"{args.model!r} has no tokenizer: text evaluation is impossible (ftip-001K)")
    model = art.model(get_device(args.device))
    report = {"model": args.model, "runtime_hash": art.runtime_hash()}
    if args.nll_docs:
        seq_len = min(64, art.cfg.max_seq_len)
        batches = fixed_batches(toy_mixture().documents(args.nll_docs, args.seed), art.tokenizer, seq_len, 8,
                                args.nll_batches)
        report["valid_nll"] = round(evaluate(model, batches), 6)
    for name in args.benchmarks:
        items = zoo.benchmark(name).items[: args.limit]
        report[f"accuracy_{name}"] = round(answer_accuracy(model, art.tokenizer, items), 6)
    print(json.dumps(report))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ftipbook", description="Train, sample from and evaluate ftipbook decoders.")
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="pretrain (or fine-tune) a decoder on the toy mixture; writes an artifact",
                       description="Train a DecoderLM on the toy mixture and save a base-model artifact to --out. "
                                   "Launch with torchrun --nproc_per_node N for DDP (the global batch is split).")
    t.add_argument("--out", required=True, help="directory for the artifact, train_log.json and checkpoints")
    t.add_argument("--steps", type=int, default=200)
    t.add_argument("--batch-size", type=int, default=16, help="global batch (windows per step)")
    t.add_argument("--seq-len", type=int, default=64)
    t.add_argument("--optimizer", default="adamw", choices=["adamw", "adam", "sgd", "muon_adamw"])
    t.add_argument("--lr", type=float, default=3e-3)
    t.add_argument("--weight-decay", type=float, default=0.1)
    t.add_argument("--schedule", default="warmup_cosine", choices=["constant", "cosine", "warmup_cosine"])
    t.add_argument("--warmup-steps", type=int, default=10)
    t.add_argument("--grad-clip", type=float, default=1.0, help="global gradient-norm clip; 0 disables it")
    t.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16"],
                   help="auto: bf16 autocast on CUDA, fp32 on CPU")
    t.add_argument("--eval-every", type=int, default=0, help="evaluate on a held-out draw every N steps (0: never)")
    t.add_argument("--checkpoint-every", type=int, default=0, help="write OUT/checkpoints/step-K every N steps")
    t.add_argument("--resume", help="a checkpoint directory of this same run to continue from")
    t.add_argument("--init", help="start from this artifact or zoo entry (fine-tuning) instead of a new model")
    t.add_argument("--seed", type=int, default=0, help="seeds data draw and RunRandomness.from_seed")
    t.add_argument("--docs", type=int, default=4000, help="toy-mixture documents in the corpus")
    t.add_argument("--vocab-size", type=int, default=512)
    t.add_argument("--d-model", type=int, default=64)
    t.add_argument("--n-layers", type=int, default=2)
    t.add_argument("--n-heads", type=int, default=4)
    t.add_argument("--d-ff", type=int, default=176)
    t.add_argument("--pos", default="rope", choices=["none", "sinusoidal", "learned", "rope", "alibi"])
    t.add_argument("--layer-pattern", default="A", help="A attention, M MLA, K KDA, repeated (e.g. KKKM)")
    t.add_argument("--n-loops", type=int, default=1, help="passes through the shared stack")
    t.add_argument("--device", default="auto")
    t.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="tqdm progress bar (default: only on a terminal)")
    t.set_defaults(run=_train)

    s = sub.add_parser("sample", help="continue a prompt with an artifact or zoo entry",
                       description="Generate after --prompt; prints JSON with the continuation and stop reason.")
    s.add_argument("--model", required=True, help="artifact directory or zoo entry name")
    s.add_argument("--prompt", required=True)
    s.add_argument("--max-new-tokens", type=int, default=32)
    s.add_argument("--temperature", type=float, default=0.0, help="0 = greedy")
    s.add_argument("--top-k", type=int)
    s.add_argument("--top-p", type=float)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--device", default="auto")
    s.set_defaults(run=_sample)

    e = sub.add_parser("evaluate", help="validation NLL and benchmark accuracy of an artifact or zoo entry",
                       description="Print JSON: NLL per predicted token on a fresh toy-mixture draw and greedy "
                                   "exact-answer accuracy on the zoo's protected benchmarks.")
    e.add_argument("--model", required=True, help="artifact directory or zoo entry name")
    e.add_argument("--benchmarks", nargs="*", default=["add2-eval", "add3-heldout", "add3-fresh"],
                   choices=["add2-eval", "add3-heldout", "add3-fresh"])
    e.add_argument("--limit", type=int, default=None, help="score only the first N items of each benchmark")
    e.add_argument("--nll-docs", type=int, default=400, help="documents of the NLL draw (0: skip the NLL)")
    e.add_argument("--nll-batches", type=int, default=4)
    e.add_argument("--seed", type=int, default=12345, help="seed of the NLL draw")
    e.add_argument("--device", default="auto")
    e.set_defaults(run=_evaluate)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 for a bad argument or input)."""
    p = _parser()
    args = p.parse_args(argv)
    try:
        args.run(args)
    except (ValueError, TypeError, FileNotFoundError) as err:
        print(f"ftipbook {args.command}: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
