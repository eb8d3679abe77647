"""bfloat16 attention of every kind runs under each CPU-kernel setting the test command uses.

On an Intel CPU with AMX, PyTorch's fused CPU attention refuses bfloat16 inputs once
``ATEN_CPU_CAPABILITY`` is forced below AVX-512 (``pack_vnni2 is only supported when avx512 is
supported``); :func:`ftipbook.model.attention.scaled_dot_product_attention` then runs the math
backend. The subprocess test runs every attention kind at ``T >= 64`` under each setting; the
forced test makes this machine take the fallback path whatever its CPU is.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch.nn import functional as F

from ftipbook.model import ModelConfig, build_model
from ftipbook.model import attention as attention_module
from ftipbook.model.attention import fused_cpu_attention_refused, scaled_dot_product_attention, sdpa_reference

ROOT = Path(__file__).resolve().parents[2]

#: (name, ModelConfig overrides): every attention kind of the library, hybrids included
KINDS = [
    ("MHA", dict(layer_pattern="A", n_kv_heads=4)),
    ("GQA", dict(layer_pattern="A", n_kv_heads=2)),
    ("MQA", dict(layer_pattern="A", n_kv_heads=1)),
    ("MLA explicit", dict(layer_pattern="M", mla_absorb=False)),
    ("MLA absorbed", dict(layer_pattern="M", mla_absorb=True)),
    ("KDA hybrid KKKA", dict(layer_pattern="KKKA", n_kv_heads=2)),
    ("KDA hybrid KKKM", dict(layer_pattern="KKKM")),
]


def _settings() -> dict[str, dict[str, str]]:
    """The CPU-kernel settings of the README test command: this CPU's own, and ``OTHER_CPU``."""
    spec = importlib.util.spec_from_file_location("ftipbook_task", ROOT / "tools" / "task.py")
    task = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(task)
    return {"this CPU's kernels": {}, "other CPU kernels": dict(task.OTHER_CPU)}


def bf16_attention_errors() -> dict[str, float]:
    """Largest |logit| error of each kind in bfloat16 against the same model in float64.

    Each model runs a causal prefill of T = 96 tokens, a packed batch (two documents, a mask
    with ``T = 64``) and a cached decode of 64 + 1 tokens; an exception propagates.
    """
    errors = {}
    for name, kw in KINDS:
        cfg = ModelConfig(vocab_size=50, d_model=64, n_layers=4, n_heads=4, d_ff=96, max_seq_len=128,
                          pos="rope", kv_lora_rank=16, rope_head_dim=8, **kw)
        model = build_model(cfg, seed=0).to(torch.bfloat16).eval()
        exact = build_model(cfg, seed=0).double().eval()
        tokens = torch.randint(0, 50, (2, 96), generator=torch.Generator().manual_seed(1))
        seg = torch.cat([torch.zeros(2, 40, dtype=torch.long), torch.ones(2, 24, dtype=torch.long)], 1)
        cache = model.new_cache(2, max_len=128)
        with torch.no_grad():
            runs = [model(tokens), model(tokens[:, :64], seg_ids=seg)]
            model(tokens[:, :64], cache=cache)
            runs.append(model(tokens[:, 64:65], cache=cache))
            refs = [exact(tokens), exact(tokens[:, :64], seg_ids=seg), exact(tokens[:, :65])[:, 64:65]]
        worst = 0.0
        for got, want in zip(runs, refs):
            worst = max(worst, (got.double() - want).abs().max().item())
        errors[name] = worst
    return errors


@pytest.mark.parametrize("setting", ["this CPU's kernels", "other CPU kernels"])
def test_bf16_attention_of_every_kind_runs_under_each_kernel_setting(setting, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR")}
    env.update(_settings()[setting])
    # run outside the checkout, which goes last on the path: ftipbook is the package under test
    code = (f"import json, sys; sys.path.append({str(ROOT)!r}); "
            "from tests.model.test_cpu_kinds import bf16_attention_errors as f; print(json.dumps(f()))")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    errors = json.loads(run.stdout.strip().splitlines()[-1])
    assert sorted(errors) == sorted(name for name, _ in KINDS)
    # logits are O(1); bfloat16 keeps 8 significant bits, so a correct layer is within a few 1e-2
    bad = {name: err for name, err in errors.items() if not err < 0.06}
    assert not bad, f"bfloat16 logits far from float64 under {setting}: {bad}"


def test_fallback_is_taken_below_avx512_and_computes_the_same_attention(monkeypatch):
    """Force the capability an AMX machine is given by the second pass: the math backend runs."""
    q, k, v = (torch.randn(2, 4, 64, 16, generator=torch.Generator().manual_seed(i)).bfloat16()
               for i in range(3))
    flags = []
    real = F.scaled_dot_product_attention

    def spy(*args, **kwargs):
        flags.append((torch.backends.cuda.flash_sdp_enabled(), torch.backends.cuda.math_sdp_enabled()))
        return real(*args, **kwargs)

    monkeypatch.setattr(attention_module.F, "scaled_dot_product_attention", spy)
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX512")
    assert not fused_cpu_attention_refused(q)
    fused = scaled_dot_product_attention(q, k, v, is_causal=True)
    for capability in ("DEFAULT", "AVX2"):
        monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda c=capability: c)
        assert fused_cpu_attention_refused(q) == (attention_module.platform.machine().lower()
                                                  in ("x86_64", "amd64"))
        assert not fused_cpu_attention_refused(q.float())  # float32 keeps the fused kernel
    monkeypatch.setattr(attention_module.platform, "machine", lambda: "x86_64")
    math_out = scaled_dot_product_attention(q, k, v, is_causal=True)
    assert flags == [(True, True), (False, True)], flags  # the second call ran with flash disabled
    keep = torch.ones(64, 64, dtype=torch.bool).tril()
    ref = sdpa_reference(q.double(), k.double(), v.double(),
                         torch.zeros(64, 64, dtype=torch.float64).masked_fill(~keep, float("-inf")))[0]
    for out in (fused, math_out):
        assert out.dtype == torch.bfloat16
        torch.testing.assert_close(out.double(), ref, rtol=0, atol=3e-2)
