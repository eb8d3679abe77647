"""Command line: ``python -m ftipbook.cli {train,sample,evaluate} ...`` (also installed as ``ftipbook``).

* ``train`` pretrains a decoder on the toy mixture (or fine-tunes a model given by ``--init``)
  and writes a base-model artifact; under ``torchrun --nproc_per_node N`` it runs DDP.
* ``sample`` generates a continuation of a prompt with a saved artifact or a zoo entry.
* ``evaluate`` reports the validation NLL on a fresh toy-mixture draw and exact-answer accuracy
  on the zoo's protected arithmetic benchmarks.

A model argument is an artifact directory (``artifact.json`` + ``weights.safetensors``) or the
name of a zoo entry (``ftipbook.zoo.names()``). Every argument, the output path and the sizes
of the data a command needs are checked before it trains or samples (issue 11, "fail before
work"). Every expected failure prints one line ``ftipbook: error: ...`` to stderr and exits with
status 2 (an unexpected one with status 1); ``--debug`` shows the traceback instead.

Arguments that set the amount of work have declared upper bounds, checked before any work:
``--docs <= MAX_DOCS``, ``--nll-docs <= MAX_NLL_DOCS``, ``--nll-batches <= MAX_NLL_BATCHES`` and
``--max-new-tokens <= MAX_NEW_TOKENS``. ``train --init`` takes its architecture and tokenizer from the
artifact, so it refuses the options that would set them (``ARCHITECTURE_OPTIONS``) by name instead of
ignoring them. ``sample`` and ``evaluate`` fail (status 2) before any work when standard output is
closed: their result would be lost.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path

import torch
from safetensors import SafetensorError

from ftipbook.artifact import META_FILE, WEIGHTS_FILE, ModelArtifact, load_artifact, save_artifact
from ftipbook.atomic import write_text
from ftipbook.runtime import get_device
from ftipbook.tokenizer import DEFAULT_SPECIALS

#: Failures of the input (arguments, files, numerics) that end a command with one line and status 2.
EXPECTED_ERRORS = (ValueError, TypeError, OSError, ArithmeticError, SafetensorError)
#: Rows per batch of the ``evaluate`` NLL draw, and the longest window it uses.
NLL_BATCH_ROWS, NLL_MAX_SEQ_LEN = 8, 64
BENCHMARKS = ("add2-eval", "add3-heldout", "add3-fresh")
#: Upper bounds of the arguments that set the amount of work (drawing 20 000 toy-mixture documents
#: takes about 2.5 s on one CPU core, so MAX_DOCS is about a minute of drawing).
MAX_DOCS, MAX_NLL_DOCS, MAX_NLL_BATCHES, MAX_NEW_TOKENS = 500_000, 100_000, 10_000, 65_536
#: ``train`` options that set the architecture or the tokenizer, which ``--init`` fixes.
ARCHITECTURE_OPTIONS = ("--vocab-size", "--d-model", "--n-layers", "--n-heads", "--d-ff", "--pos", "--layer-pattern",
                        "--n-loops")


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line ``ftipbook: error: ...`` (status 2)."""

    def error(self, message: str):
        self.exit(2, f"ftipbook: error: {message} (see '{self.prog} --help')\n")


class _Formatter(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` with every option's default, unless the help text already states it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.required or "(default:" in text or action.default is argparse.SUPPRESS:
            return text
        return super()._get_help_string(action)


def _int_at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type``: an int ``>= low`` (and ``<= high`` when given)."""
    allowed = f"an int >= {low}" + ("" if high is None else f" and <= {high}")

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an int; allowed: {allowed}") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is out of range; allowed: {allowed}")
        return value
    parse.__name__ = allowed
    return parse


class _Given(argparse.Action):
    """Store the value and remember that the option was given on the command line (not defaulted)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        setattr(namespace, self.dest, values)
        namespace.given = (*getattr(namespace, "given", ()), option_string)


def _check_stdout() -> None:
    """Refuse to run a command whose result would be lost: standard output closed (``>&-``)."""
    if sys.stdout is None or sys.stdout.closed:
        raise OSError("standard output is closed: the command's result would be lost; give it a stdout (e.g. "
                      "'> result.json')")


def _finite(low: float, *, low_open: bool = False, high: float = math.inf) -> Callable[[str], float]:
    """An argparse ``type``: a finite float in ``[low, high]`` (``(low, high]`` with ``low_open``)."""
    allowed = f"a finite float {'>' if low_open else '>='} {low:g}" + (f" and <= {high:g}" if high < math.inf else "")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number; allowed: {allowed}") from None
        if not (math.isfinite(value) and (value > low if low_open else value >= low) and value <= high):
            raise argparse.ArgumentTypeError(f"{value!r} is out of range; allowed: {allowed}")
        return value
    parse.__name__ = allowed
    return parse


def _artifact(ref: str, option: str) -> ModelArtifact:
    """An artifact directory, or a zoo entry name, given to ``option`` (which errors name)."""
    from ftipbook import zoo

    path = Path(ref)
    if (path / "artifact.json").is_file() or (path.is_dir() and ref not in zoo.names()):
        return load_artifact(path)
    if ref in zoo.names():
        return zoo.load(ref)
    raise ValueError(f"{option} {ref!r} is neither an artifact directory nor a zoo entry; zoo entries: "
                     f"{', '.join(zoo.names())}")


def _check_out(out: Path, overwrite: bool) -> None:
    """Refuse an ``--out`` that cannot be written, or that holds an artifact (unless ``overwrite``)."""
    if out.exists():
        if not out.is_dir():
            raise NotADirectoryError(f"--out {out}: exists and is not a directory")
        if any((out / name).exists() for name in (META_FILE, WEIGHTS_FILE)) and not overwrite:
            raise FileExistsError(f"--out {out}: holds an artifact already; pass --overwrite to replace it")
        existing = out
    else:
        existing = next(p for p in out.absolute().parents if p.exists())
        if not existing.is_dir():
            raise NotADirectoryError(f"--out {out}: {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(f"--out {out}: {existing} is not writable")


def _check_rows(what: str, n_rows: int, need: int, fix: str) -> None:
    """Refuse evaluation batches that would repeat documents (``n_rows`` packed rows, ``need`` wanted)."""
    if n_rows < need:
        raise ValueError(f"{what} pack into {n_rows} rows but the batches need {need}; "
                         f"documents would be repeated, so {fix}")


def _packed_rows(documents, tokenizer, seq_len: int) -> int:
    """How many rows of ``seq_len`` tokens ``documents`` fill when packed in order (one pass, no repeats)."""
    from ftipbook.data.windows import BatchIterator
    from ftipbook.train.data import tokenize_documents

    stream = BatchIterator(tokenize_documents(documents, tokenizer), seq_len, 1, pad_id=tokenizer.pad_id, seed=None)
    return len(stream.epoch_rows(0))


def _train(args: argparse.Namespace) -> None:
    from ftipbook.train import init_from_env

    ctx = init_from_env()
    try:
        _train_in(args, ctx)
    finally:
        if ctx.active:
            torch.distributed.destroy_process_group()


def _train_config(args: argparse.Namespace):
    from ftipbook.train import TrainConfig

    return TrainConfig(steps=args.steps, batch_size=args.batch_size, seq_len=args.seq_len, optimizer=args.optimizer,
                       lr=args.lr, weight_decay=args.weight_decay, schedule=args.schedule,
                       warmup_steps=args.warmup_steps, grad_clip=None if args.grad_clip == 0 else args.grad_clip,
                       precision=args.precision, eval_every=args.eval_every, checkpoint_every=args.checkpoint_every,
                       progress=args.progress, parallel=args.parallel)


def _model_config(args: argparse.Namespace, vocab_size: int):
    from ftipbook.model import ModelConfig

    return ModelConfig(vocab_size=vocab_size, d_model=args.d_model, n_layers=args.n_layers, n_heads=args.n_heads,
                       d_ff=args.d_ff, max_seq_len=args.seq_len, pos=args.pos, layer_pattern=args.layer_pattern,
                       n_loops=args.n_loops)


def _check_train(args: argparse.Namespace, out: Path):
    """Check everything ``train`` can before it draws data; return the ``TrainConfig`` and the ``--init``
    artifact (or ``None``)."""
    from ftipbook.train.checkpoint import LATEST, latest_checkpoint

    _check_out(out, args.overwrite)
    if args.init is not None and getattr(args, "given", ()):
        given = sorted(set(args.given), key=ARCHITECTURE_OPTIONS.index)
        raise ValueError(f"--init {args.init!r} fixes the architecture and tokenizer, so {', '.join(given)} cannot "
                         f"apply; drop {'it' if len(given) == 1 else 'them'} or drop --init")
    cfg = _train_config(args)
    get_device(args.device)
    if args.resume == LATEST:
        try:
            latest_checkpoint(out / "checkpoints")
        except FileNotFoundError as err:
            raise FileNotFoundError(f"--resume {LATEST}: {err}") from None
    elif args.resume is not None and not Path(args.resume).is_dir():
        raise FileNotFoundError(f"--resume {args.resume}: no such checkpoint directory")
    if args.init is None:
        _model_config(args, args.vocab_size)
        return cfg, None
    start = _artifact(args.init, "--init")
    if start.tokenizer is None:
        raise ValueError(f"--init {args.init!r} has no tokenizer; training needs one to tokenize the corpus")
    if args.seq_len > start.cfg.max_seq_len:
        raise ValueError(f"--seq-len {args.seq_len} is longer than max_seq_len={start.cfg.max_seq_len} "
                         f"of --init {args.init!r}")
    return cfg, start


def _train_in(args: argparse.Namespace, ctx) -> None:
    from ftipbook.data.mixture import toy_mixture
    from ftipbook.model import build_model
    from ftipbook.train import (RunRandomness, Trainer, batch_stream, build_optimizer, fixed_batches, train_tokenizer,
                                trainer_provenance)
    from ftipbook.train.checkpoint import LATEST

    out = Path(args.out)
    cfg, start = _check_train(args, out)
    randomness = RunRandomness.from_seed(args.seed)
    docs = toy_mixture().documents(args.docs, args.seed)
    if start is not None:
        tok, model = start.tokenizer, start.model()
    else:
        tok = train_tokenizer(docs[: max(1, args.docs // 5)], args.vocab_size)
        model = build_model(_model_config(args, tok.vocab_size), seed=randomness.init)
    if ctx.active and torch.cuda.is_available():
        device = torch.device(f"cuda:{ctx.local_rank}")  # one GPU per rank
    else:
        device = get_device(args.device)
    model = model.to(device).train()
    eval_batches = None
    if cfg.eval_every:
        valid = toy_mixture().documents(max(64, args.docs // 10), args.seed + 1)
        _check_rows(f"the {len(valid)} held-out documents of --eval-every", _packed_rows(valid, tok, cfg.seq_len),
                    2 * cfg.batch_size, "raise --docs or lower --batch-size")
        eval_batches = fixed_batches(valid, tok, cfg.seq_len, cfg.batch_size, 2)
    checkpoint_dir = out / "checkpoints" if cfg.checkpoint_every or args.resume == LATEST else None
    trainer = Trainer(model, build_optimizer(model, cfg), batch_stream(docs, tok, cfg, randomness), cfg,
                      eval_batches=eval_batches, randomness=randomness, tokenizer=tok,
                      data={"recipe": "toy mixture", "documents": args.docs, "seed": args.seed},
                      checkpoint_dir=checkpoint_dir)
    if args.resume is not None:
        trainer.restore(args.resume)
    log = trainer.run()
    full = trainer.full_state()  # FSDP: every rank takes part in gathering the weights on rank 0
    if ctx.is_main:
        artifact = ModelArtifact.from_model(trainer.model, tok, provenance=trainer_provenance(trainer),
                                            state_dict=None if full is None else full.model)
        save_artifact(artifact, out)
        write_text(out / "train_log.json", json.dumps({**log.to_dict(), "world_size": ctx.world_size}) + "\n")
        evals = f", eval NLL {log.evals[-1][1]:.4f}" if log.evals else ""
        print(f"trained {log.steps} steps on {ctx.world_size} process(es): loss {log.losses[0]:.4f} -> "
              f"{log.losses[-1]:.4f}{evals}; artifact {out} (runtime hash {artifact.runtime_hash()[:12]})")


def _max_context(art: ModelArtifact) -> int | None:
    """The longest prefix ``art`` declares its law for (``numerics.max_context``; learned positions cap it too)."""
    caps = [art.numerics.max_context, art.cfg.max_seq_len if art.cfg.pos == "learned" else None]
    return min((c for c in caps if c is not None), default=None)


def _sample(args: argparse.Namespace) -> None:
    from ftipbook.model import generate

    device = get_device(args.device)
    art = _artifact(args.model, "--model")
    ids = art.encode(args.prompt)
    if not ids:
        raise ValueError("--prompt encodes to no tokens")
    limit = _max_context(art)
    if limit is not None and len(ids) > limit:
        raise ValueError(f"--prompt has {len(ids)} tokens, more than the max context {limit} of {args.model!r}")
    if limit is not None and len(ids) + args.max_new_tokens - 1 > limit:
        raise ValueError(f"--prompt ({len(ids)} tokens) + --max-new-tokens {args.max_new_tokens} needs a context of "
                         f"{len(ids) + args.max_new_tokens - 1}, more than the max context {limit} of {args.model!r}")
    model = art.model(device)
    out = generate(model, ids, args.max_new_tokens, temperature=args.temperature, top_k=args.top_k,
                   top_p=args.top_p, seed=args.seed, eos_id=art.numerics.eos_id)
    print(json.dumps({"prompt": args.prompt, "continuation": art.decode(out.new_tokens.tolist()),
                      "new_tokens": len(out.new_tokens), "stop_reason": out.stop_reason.value}, ensure_ascii=False))


def _evaluate(args: argparse.Namespace) -> None:
    from ftipbook import zoo
    from ftipbook.data.mixture import toy_mixture
    from ftipbook.train import answer_accuracy, evaluate, fixed_batches

    if not args.nll_docs and not args.benchmarks:
        raise ValueError("--nll-docs 0 and no --benchmarks: there is nothing to evaluate")
    device = get_device(args.device)
    art = _artifact(args.model, "--model")
    if art.tokenizer is None:
        raise ValueError(f"{args.model!r} has no tokenizer: text evaluation is impossible (ftip-001K)")
    batches = None
    if args.nll_docs:
        seq_len = min(NLL_MAX_SEQ_LEN, art.cfg.max_seq_len)
        docs = toy_mixture().documents(args.nll_docs, args.seed)
        _check_rows(f"--nll-docs {args.nll_docs} documents", _packed_rows(docs, art.tokenizer, seq_len),
                    NLL_BATCH_ROWS * args.nll_batches, f"raise --nll-docs or lower --nll-batches {args.nll_batches} "
                    f"({NLL_BATCH_ROWS} rows of {seq_len} tokens per batch)")
        batches = fixed_batches(docs, art.tokenizer, seq_len, NLL_BATCH_ROWS, args.nll_batches)
    model = art.model(device)
    report = {"model": args.model, "runtime_hash": art.runtime_hash()}
    if batches is not None:
        report["valid_nll"] = round(evaluate(model, batches), 6)
    for name in args.benchmarks:
        items = zoo.benchmark(name).items[: args.limit]
        report[f"accuracy_{name}"] = round(answer_accuracy(model, art.tokenizer, items), 6)
    print(json.dumps(report))


def _debug_option(parser: argparse.ArgumentParser, default: bool | str) -> None:
    """``--debug`` on ``parser``; a subcommand's has ``default=SUPPRESS`` so it does not mask the main one."""
    parser.add_argument("--debug", action="store_true", default=default,
                        help="show the full traceback of an error instead of one line (default: off)")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="ftipbook", description="Train, sample from and evaluate ftipbook decoders.",
                formatter_class=_Formatter)
    _debug_option(p, False)
    sub = p.add_subparsers(dest="command", required=True)
    count, positive = _int_at_least(0), _int_at_least(1)

    t = sub.add_parser("train", help="pretrain (or fine-tune) a decoder on the toy mixture; writes an artifact",
                       description="Train a DecoderLM on the toy mixture and save a base-model artifact to --out. "
                                   "Launch with torchrun --nproc_per_node N for DDP or FSDP (the global batch "
                                   "is split).",
                       formatter_class=_Formatter)
    t.add_argument("--out", required=True, help="directory for the artifact, train_log.json and checkpoints")
    t.add_argument("--overwrite", action="store_true", help="replace an artifact that --out already holds")
    t.add_argument("--steps", type=positive, default=200, help="optimizer updates")
    t.add_argument("--batch-size", type=positive, default=16, help="global batch (windows per step)")
    t.add_argument("--seq-len", type=positive, default=64, help="tokens per window")
    t.add_argument("--optimizer", default="adamw", choices=["adamw", "adam", "sgd", "muon_adamw"], help="optimizer")
    t.add_argument("--lr", type=_finite(0, low_open=True), default=3e-3, help="peak learning rate")
    t.add_argument("--weight-decay", type=_finite(0), default=0.1, help="weight decay")
    t.add_argument("--schedule", default="warmup_cosine", choices=["constant", "cosine", "warmup_cosine"],
                   help="learning-rate schedule")
    t.add_argument("--warmup-steps", type=count, default=10, help="linear warmup steps (warmup_cosine)")
    t.add_argument("--grad-clip", type=_finite(0), default=1.0, help="global gradient-norm clip; 0 disables it")
    t.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16"],
                   help="auto: bf16 autocast on CUDA, fp32 on CPU")
    t.add_argument("--parallel", default="ddp", choices=["ddp", "fsdp"],
                   help="under torchrun: replicate the model (ddp) or shard it (fsdp, FSDP2)")
    t.add_argument("--eval-every", type=count, default=0, help="evaluate on a held-out draw every N steps (0: never)")
    t.add_argument("--checkpoint-every", type=count, default=0, help="write OUT/checkpoints/step-K every N steps")
    t.add_argument("--resume", help="a checkpoint directory of this same run to continue from, or 'latest' "
                                    "(the newest complete one in OUT/checkpoints)")
    t.add_argument("--init", help="start from this artifact or zoo entry (fine-tuning) instead of a new model")
    t.add_argument("--seed", type=count, default=0, help="seeds data draw and RunRandomness.from_seed")
    t.add_argument("--docs", type=_int_at_least(1, MAX_DOCS), default=4000,
                   help=f"toy-mixture documents in the corpus (at most {MAX_DOCS})")
    arch = "; not with --init, whose artifact fixes it"
    t.add_argument("--vocab-size", type=_int_at_least(256 + len(DEFAULT_SPECIALS)), default=512, action=_Given,
                   help="tokenizer vocabulary (256 bytes + control tokens + merges)" + arch)
    t.add_argument("--d-model", type=positive, default=64, action=_Given, help="residual width" + arch)
    t.add_argument("--n-layers", type=positive, default=2, action=_Given, help="decoder blocks" + arch)
    t.add_argument("--n-heads", type=positive, default=4, action=_Given, help="attention heads" + arch)
    t.add_argument("--d-ff", type=positive, default=176, action=_Given, help="MLP hidden width" + arch)
    t.add_argument("--pos", default="rope", choices=["none", "sinusoidal", "learned", "rope", "alibi"],
                   action=_Given, help="position encoding" + arch)
    t.add_argument("--layer-pattern", default="A", action=_Given,
                   help="A attention, M MLA, K KDA, repeated (e.g. KKKM)" + arch)
    t.add_argument("--n-loops", type=positive, default=1, action=_Given, help="passes through the shared stack" + arch)
    t.add_argument("--device", default="auto", help="torch device (auto: CUDA if present, else CPU)")
    t.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="tqdm progress bar (default: only on a terminal)")
    _debug_option(t, argparse.SUPPRESS)
    t.set_defaults(run=_train)

    s = sub.add_parser("sample", help="continue a prompt with an artifact or zoo entry",
                       description="Generate after --prompt; prints JSON with the continuation and stop reason.",
                       formatter_class=_Formatter)
    s.add_argument("--model", required=True, help="artifact directory or zoo entry name")
    s.add_argument("--prompt", required=True, help="text to continue")
    s.add_argument("--max-new-tokens", type=_int_at_least(1, MAX_NEW_TOKENS), default=32,
                   help=f"most tokens to generate (at most {MAX_NEW_TOKENS})")
    s.add_argument("--temperature", type=_finite(0), default=0.0, help="0 = greedy")
    s.add_argument("--top-k", type=positive, help="sample among the k most likely tokens (default: all)")
    s.add_argument("--top-p", type=_finite(0, low_open=True, high=1), help="nucleus mass (default: 1, no cut)")
    s.add_argument("--seed", type=count, default=0, help="seed of the sampling draws")
    s.add_argument("--device", default="auto", help="torch device (auto: CUDA if present, else CPU)")
    _debug_option(s, argparse.SUPPRESS)
    s.set_defaults(run=_sample)

    e = sub.add_parser("evaluate", help="validation NLL and benchmark accuracy of an artifact or zoo entry",
                       description="Print JSON: NLL per predicted token on a fresh toy-mixture draw and greedy "
                                   "exact-answer accuracy on the zoo's protected benchmarks.",
                       formatter_class=_Formatter)
    e.add_argument("--model", required=True, help="artifact directory or zoo entry name")
    e.add_argument("--benchmarks", nargs="*", default=list(BENCHMARKS), choices=BENCHMARKS,
                   help="benchmarks to score")
    e.add_argument("--limit", type=positive, default=None,
                   help="score only the first N items of each benchmark (default: all)")
    e.add_argument("--nll-docs", type=_int_at_least(0, MAX_NLL_DOCS), default=400,
                   help=f"documents of the NLL draw (0: skip the NLL; at most {MAX_NLL_DOCS})")
    e.add_argument("--nll-batches", type=_int_at_least(1, MAX_NLL_BATCHES), default=4,
                   help=f"NLL batches of {NLL_BATCH_ROWS} windows; the documents must fill them without repeats "
                        f"(at most {MAX_NLL_BATCHES})")
    e.add_argument("--seed", type=count, default=12345, help="seed of the NLL draw")
    e.add_argument("--device", default="auto", help="torch device (auto: CUDA if present, else CPU)")
    _debug_option(e, argparse.SUPPRESS)
    e.set_defaults(run=_evaluate)
    return p


def _one_line(err: BaseException) -> str:
    """``err``'s message on one line (a multi-line message, such as a state-dict mismatch, is joined)."""
    return " ".join(str(err).split()) or type(err).__name__


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 for a bad argument or input, 1 for an internal error)."""
    args = _parser().parse_args(argv)
    try:
        if args.run is not _train:  # train's result is its artifact; sample's and evaluate's are on stdout
            _check_stdout()
        args.run(args)
        if sys.stdout is not None:
            sys.stdout.flush()  # a full disk or a closed pipe is an error of this command, not a silent loss
    except EXPECTED_ERRORS as err:
        if args.debug:
            raise
        print(f"ftipbook: error: {_one_line(err)}", file=sys.stderr)
        return 2
    except Exception as err:  # noqa: BLE001 (an internal error: still one line, the traceback under --debug)
        if args.debug:
            raise
        print(f"ftipbook: error: internal {type(err).__name__}: {_one_line(err)} (rerun with --debug for the "
              f"traceback)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("ftipbook: error: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
