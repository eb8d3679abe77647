"""The prepared GPU check: one run on one CUDA device, one printed table (issue 16).

    python tools/gpu_check.py             # on a machine with a CUDA GPU (about 4-6 minutes on an H100/H200)
    python tools/gpu_check.py --dry-run   # the same code paths on the CPU at toy sizes (seconds)

It runs, in order, each as one row of the table:

1. the tests that skip without CUDA (``pytest -k "cuda or fla"`` over :data:`CUDA_TESTS`);
2. a bf16 (autocast) training step of a GPT-2-small-sized ``DecoderLM`` (124M parameters, 12
   layers, width 768, context 1024), eager and under ``torch.compile``, reporting tokens/s and the
   model FLOPs utilization: the declared training FLOPs of the tokens
   (:func:`ftipbook.compare.cost.training_flops`) per second over the chip's dense bf16 peak
   (:data:`BF16_PEAK_TFLOPS`, chosen by the device name);
3. Kimi Delta Attention through flash-linear-attention's ``chunk_kda`` kernel against the
   library's chunked form (:func:`ftipbook.model.kda.kda_chunked`), forward + backward: the largest
   output difference relative to the largest output (at most :data:`KDA_TOL`) and the speed ratio;
   "not installed" when ``fla`` cannot be imported;
4. cached greedy generation with ``ftipbook.model.generate`` against transformers' ``generate`` on
   twin Llama models with the same weights (tokens/s of each and the ratio);
5. three chapters (:data:`CHAPTERS`) executed in a child process with every tensor created on the
   device (``torch.set_default_device``) and ``FTIPBOOK_DEVICE`` set, so their asserts check
   results computed there.

A row is ``ok``, ``FAIL`` (the exit status is then 1) or a plain note (``not installed``, ``n/a``).
``--dry-run`` runs every step on the CPU at toy sizes: the CUDA tests then skip, ``torch.compile``
uses the ``eager`` backend (graph capture without code generation), the MFU is ``n/a`` (no peak
for a CPU) and the KDA comparison runs against the recurrent form in place of the missing kernel.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

#: Dense (no sparsity) bf16 tensor-core peaks in TFLOP/s, from NVIDIA's data sheets: "NVIDIA H100
#: Tensor Core GPU" (H100 SXM 1,979 / PCIe 1,513 / NVL 1,671 TFLOPS bf16 *with sparsity*, halved here)
#: and "NVIDIA H200 Tensor Core GPU" (H200 SXM 1,979 / NVL 1,671 with sparsity, halved). Matched
#: against ``torch.cuda.get_device_name()`` in this order (the first pattern found wins).
BF16_PEAK_TFLOPS = (
    ("H200 NVL", 835.5),
    ("H200", 989.5),
    ("H100 NVL", 835.5),
    ("H100 PCIe", 756.5),
    ("H100", 989.5),  # SXM5 (e.g. "NVIDIA H100 80GB HBM3")
)
#: Tests that skip without CUDA (the two files that hold them), selected by name.
CUDA_TESTS = ("tests/optim/test_torch_optim.py", "tests/model/test_kda.py")
CUDA_SELECTION = "cuda or fla"
#: Chapters executed on the device: attention, multi-head attention and its GQA/MQA/MLA variants.
CHAPTERS = ("000Q", "000U", "000V")
#: Largest allowed max|fla - chunked| / max|chunked| of the KDA outputs (float32 inputs; the kernels may
#: round products to tf32).
KDA_TOL = 2e-3
#: The whole check should fit in this many seconds on an H100/H200.
BUDGET_S = 480


@dataclass(frozen=True)
class Sizes:
    """The problem sizes of one run (full on the GPU, toy in the dry run)."""

    model: dict  # ModelConfig fields of the trained DecoderLM
    batch: int  # windows per training step
    steps: int  # timed training steps (after warm-up steps)
    warmup: int
    kda: tuple[int, int, int, int]  # B, T, H, K (= V)
    preset: str  # benchmarks/_bench.py Llama preset of the generation twins
    prompt: int
    new_tokens: int
    repeats: int  # interleaved rounds of the generation and KDA timings


GPT2_SMALL = dict(vocab_size=50304, d_model=768, n_layers=12, n_heads=12, d_ff=3072, max_seq_len=1024,
                  pos="learned", norm="layernorm", ffn="gelu", ffn_bias=True, qkv_bias=True, out_bias=True,
                  tie_embeddings=True)
FULL = Sizes(GPT2_SMALL, batch=16, steps=20, warmup=3, kda=(2, 4096, 16, 128), preset="small", prompt=32,
             new_tokens=128, repeats=5)
TOY = Sizes({**GPT2_SMALL, "vocab_size": 256, "d_model": 64, "n_layers": 2, "n_heads": 4, "d_ff": 128,
             "max_seq_len": 32}, batch=2, steps=2, warmup=1, kda=(1, 64, 2, 16), preset="tiny", prompt=4,
            new_tokens=4, repeats=2)


@dataclass(frozen=True)
class Row:
    check: str
    status: str  # "ok", "FAIL" or a note
    measured: str
    detail: str


def bf16_peak_tflops(name: str) -> float | None:
    """The dense bf16 peak of the chip called ``name`` (:data:`BF16_PEAK_TFLOPS`), or ``None``."""
    return next((peak for pattern, peak in BF16_PEAK_TFLOPS if pattern in name), None)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _guarded(check: str, fn: Callable[[], list[Row]]) -> list[Row]:
    """``fn()``'s rows, or one ``FAIL`` row naming the exception it raised."""
    try:
        return fn()
    except Exception as err:  # noqa: BLE001 - every failure becomes a row of the table
        return [Row(check, "FAIL", "-", f"{type(err).__name__}: {str(err).splitlines()[0][:150] if str(err) else ''}")]


# ----------------------------------------------------------------------------------------------
# 1. the CUDA tests
# ----------------------------------------------------------------------------------------------
def cuda_tests(device: torch.device) -> list[Row]:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rfEs", *CUDA_TESTS, "-k", CUDA_SELECTION]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    counts = dict((k, int(n)) for n, k in re.findall(r"(\d+) (passed|failed|skipped|errors?)", proc.stdout))
    summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "none ran"
    # on the GPU every selected test must run and pass; on the CPU they all skip
    ok = proc.returncode == 0 and (counts.get("passed", 0) > 0 or device.type != "cuda")
    problems = [ln for ln in proc.stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))]
    detail = (problems[0][:150] + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else "") if problems
              else f"pytest -k {CUDA_SELECTION!r} over {len(CUDA_TESTS)} files")
    return [Row("CUDA tests", "ok" if ok else "FAIL", summary, detail)]


# ----------------------------------------------------------------------------------------------
# 2. a bf16 training step, eager and compiled
# ----------------------------------------------------------------------------------------------
def train_steps(device: torch.device, sizes: Sizes, dry: bool) -> list[Row]:
    from ftipbook.compare.cost import training_flops
    from ftipbook.model import ModelConfig, build_model
    from ftipbook.model.accounting import param_count
    from ftipbook.train import TrainConfig, build_optimizer

    cfg = ModelConfig(**sizes.model)
    t = cfg.max_seq_len
    peak = bf16_peak_tflops(torch.cuda.get_device_name(device)) if device.type == "cuda" else None
    flops_per_step = training_flops(cfg, sizes.batch * t, t)
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, cfg.vocab_size, (sizes.batch, t + 1), generator=g).to(device)
    rows = []
    for compiled in (False, True):
        name = "train step bf16 " + ("compiled" if compiled else "eager")
        model = build_model(cfg, seed=0).to(device).train()
        optimizer = build_optimizer(model, TrainConfig(lr=3e-4, weight_decay=0.1))
        forward = torch.compile(model, backend="eager" if dry else "inductor") if compiled else model

        def step() -> torch.Tensor:
            with torch.autocast(device.type, dtype=torch.bfloat16):
                logits = forward(tokens[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), tokens[:, 1:].flatten())
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            return loss.detach()

        def measure() -> list[Row]:
            start = time.perf_counter()
            first = float(step())
            for _ in range(sizes.warmup - 1):
                step()
            _sync(device)
            warm_s = time.perf_counter() - start
            start = time.perf_counter()
            for _ in range(sizes.steps):
                last = step()
            _sync(device)
            seconds = (time.perf_counter() - start) / sizes.steps
            last = float(last)
            if not (math.isfinite(first) and math.isfinite(last)):
                raise FloatingPointError(f"non-finite loss {first} -> {last}")
            tok_s = sizes.batch * t / seconds
            mfu = "n/a" if peak is None else f"MFU {flops_per_step / seconds / (peak * 1e12):.1%}"
            return [Row(name, "ok", f"{tok_s:,.0f} tok/s, {mfu}",
                        f"{param_count(cfg):,} params, B={sizes.batch} T={t}, "
                        f"{seconds * 1e3:.1f} ms/step, warm-up {warm_s:.1f} s, loss {first:.2f} -> {last:.2f}")]

        rows += _guarded(name, measure)
        del model, optimizer, forward
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return rows


# ----------------------------------------------------------------------------------------------
# 3. KDA: flash-linear-attention's chunk kernel against the library's chunked form
# ----------------------------------------------------------------------------------------------
def _median_seconds(fn: Callable[[], object], device: torch.device, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        _sync(device)
        start = time.perf_counter()
        fn()
        _sync(device)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def kda_check(device: torch.device, sizes: Sizes, dry: bool) -> list[Row]:
    from ftipbook.model.kda import _fla_chunk_kda, fla_available, kda_chunked, kda_recurrent, l2_normalize

    check = "KDA fla chunk_kda vs chunked"
    if not fla_available() and not dry:
        return [Row(check, "not installed", "-", "flash-linear-attention (fla) cannot be imported")]
    b, t, h, k = sizes.kda
    scale = k ** -0.5
    if dry:  # the same comparison and timing, with the recurrent form in place of the missing kernel
        reference, label = (lambda q, kk, v, la, beta: kda_recurrent(q, kk, v, la, beta, scale=scale)), "recurrent"
    else:
        reference, label = (lambda q, kk, v, la, beta: _fla_chunk_kda(q, kk, v, la, beta, None, scale)), "fla"
    g = torch.Generator().manual_seed(0)
    inputs = [l2_normalize(torch.randn(b, t, h, k, generator=g)), l2_normalize(torch.randn(b, t, h, k, generator=g)),
              torch.randn(b, t, h, k, generator=g), -0.5 * torch.rand(b, t, h, k, generator=g),
              torch.rand(b, t, h, generator=g)]
    inputs = [x.to(device).requires_grad_() for x in inputs]

    def fwd_bwd(fn) -> torch.Tensor:
        for x in inputs:
            x.grad = None
        o, s = fn(*inputs)
        (o.float().square().sum() + s.float().sum()).backward()
        return o.detach().float()

    ours = lambda *a: kda_chunked(*a, scale=scale)  # noqa: E731
    expected = fwd_bwd(ours)
    diff = ((fwd_bwd(reference) - expected).abs().max() / expected.abs().max().clamp_min(1e-30)).item()
    t_ref, t_ours = (_median_seconds(lambda f=f: fwd_bwd(f), device, sizes.repeats) for f in (reference, ours))
    status = "ok" if diff <= KDA_TOL else "FAIL"
    name = check if not dry else f"{check} (dry: {label})"
    return [Row(name, status, f"rel. diff {diff:.1e}, {label} {t_ours / t_ref:.2f}x faster",
                f"fwd+bwd float32 B={b} T={t} H={h} K=V={k}: {label} {t_ref * 1e3:.1f} ms, "
                f"chunked {t_ours * 1e3:.1f} ms; tolerance {KDA_TOL:g}" + ("" if fla_available() else
                                                                            "; fla not installed"))]


# ----------------------------------------------------------------------------------------------
# 4. cached generation against transformers
# ----------------------------------------------------------------------------------------------
def generation(device: torch.device, sizes: Sizes) -> list[Row]:
    from _bench import PRESETS, llama_twins

    from ftipbook.model import generate

    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    hf, ours = llama_twins(PRESETS[sizes.preset], device, dtype)
    hf.eval(), ours.eval()
    g = torch.Generator().manual_seed(0)
    prompt = torch.randint(0, PRESETS[sizes.preset]["vocab_size"], (1, sizes.prompt), generator=g).to(device)
    n = sizes.new_tokens

    def run_hf() -> torch.Tensor:
        return hf.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=n, min_new_tokens=n,
                           do_sample=False, pad_token_id=0)[0, sizes.prompt:]

    def run_ours() -> torch.Tensor:
        return generate(ours, prompt[0], n).new_tokens

    with torch.no_grad():
        same = torch.equal(run_hf().cpu(), run_ours().cpu())
        t_hf = _median_seconds(run_hf, device, sizes.repeats)
        t_ours = _median_seconds(run_ours, device, sizes.repeats)
    return [Row("generation vs transformers", "ok", f"{n / t_ours:,.0f} vs {n / t_hf:,.0f} tok/s, "
                f"{t_hf / t_ours:.2f}x", f"greedy, preset {sizes.preset}, {str(dtype).removeprefix('torch.')}, "
                f"prompt {sizes.prompt}, {n} new tokens, same tokens: {'yes' if same else 'no'}")]


# ----------------------------------------------------------------------------------------------
# 5. chapters on the device
# ----------------------------------------------------------------------------------------------
def chapter_notebook(item: str) -> Path:
    """The executed notebook of the chapter of item ``item`` (e.g. ``"000Q"``)."""
    hits = [p for p in (ROOT / "chapters").rglob(f"{item}-*.ipynb") if ".ipynb_checkpoints" not in p.parts]
    if len(hits) != 1:
        raise FileNotFoundError(f"no single chapter notebook for {item!r} (found {len(hits)})")
    return hits[0]


def run_chapter(path: Path, device: str) -> dict:
    """Execute the code cells of the notebook ``path`` (not the hidden install cell) in one namespace,
    with tensors created on ``device`` by default; what happened, JSON-ready."""
    import matplotlib

    matplotlib.use("Agg")
    torch.set_default_device(device)
    cells = [c for c in json.loads(path.read_text())["cells"]
             if c["cell_type"] == "code" and "remove-cell" not in c.get("metadata", {}).get("tags", [])]
    os.chdir(path.parent)
    namespace: dict = {"__name__": "__main__"}
    for n, cell in enumerate(cells, 1):
        source = "".join(cell["source"])
        try:
            exec(compile(source, f"<{path.stem} cell {n}>", "exec"), namespace)
        except BaseException as err:  # noqa: BLE001 - reported, not raised
            return {"ok": False, "cells": len(cells), "detail": f"cell {n}: {type(err).__name__}: {err}"[:200]}
    on_device = torch.cuda.max_memory_allocated() > 0 if device.startswith("cuda") else True
    return {"ok": on_device, "cells": len(cells),
            "detail": "" if on_device else "no tensor was allocated on the GPU"}


def chapters(device: torch.device) -> list[Row]:
    paths = [chapter_notebook(item) for item in CHAPTERS]
    env = {**os.environ, "FTIPBOOK_DEVICE": str(device), "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--run-chapters", str(device), *map(str, paths)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or len(lines) != len(paths):
        raise RuntimeError(f"the chapter runner exited with {proc.returncode}: {proc.stderr.strip()[-150:]}")
    rows = []
    for item, path, line in zip(CHAPTERS, paths, lines):
        result = json.loads(line)
        rows.append(Row(f"chapter {item} on {device.type}", "ok" if result["ok"] else "FAIL",
                        f"{result['cells']} cells", result["detail"] or path.stem[:60]))
    return rows


# ----------------------------------------------------------------------------------------------
def format_rows(rows: list[Row]) -> str:
    """The table: one line per row, columns padded to their widest cell."""
    cells = [("check", "status", "measured", "detail")] + [(r.check, r.status, r.measured, r.detail) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(3)]
    lines = ["  ".join(c[i].ljust(widths[i]) for i in range(3)) + "  " + c[3] for c in cells]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="the same steps on the CPU at toy sizes")
    parser.add_argument("--device", default="cuda", help="the CUDA device to check (default: cuda)")
    parser.add_argument("--run-chapters", nargs="+", metavar=("DEVICE", "NOTEBOOK"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_chapters:  # the child process of chapters()
        device, *paths = args.run_chapters
        for path in paths:
            print(json.dumps(run_chapter(Path(path), device)), flush=True)
        return 0
    if args.dry_run:
        device, sizes = torch.device("cpu"), TOY
        torch.set_num_threads(min(2, torch.get_num_threads()))
    else:
        device, sizes = torch.device(args.device), FULL
        if not torch.cuda.is_available():
            parser.error("no CUDA device is visible; run with --dry-run on a machine without one")
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    start = time.perf_counter()
    chip = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU (dry run)"
    print(f"gpu_check on {chip}, torch {torch.__version__}", flush=True)
    steps = [("CUDA tests", lambda: cuda_tests(device)),
             ("train step bf16", lambda: train_steps(device, sizes, args.dry_run)),
             ("KDA fla chunk_kda vs chunked", lambda: kda_check(device, sizes, args.dry_run)),
             ("generation vs transformers", lambda: generation(device, sizes)),
             ("chapters", lambda: chapters(device))]
    rows: list[Row] = []
    for name, fn in steps:
        began = time.perf_counter()
        rows += _guarded(name, fn)
        print(f"  {name}: {time.perf_counter() - began:.1f} s", flush=True)
    total = time.perf_counter() - start
    rows.append(Row("total wall time", "ok" if total <= BUDGET_S else "FAIL", f"{total:.0f} s",
                    f"budget {BUDGET_S} s"))
    print(format_rows(rows))
    return 1 if any(r.status == "FAIL" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
