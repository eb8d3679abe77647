"""Tests of ftipbook.compare.kda_instance (ftip-00K3, ftip-00K6)."""
import dataclasses
import hashlib
import json

import pytest
import torch

from ftipbook.compare import kda_instance as ki
from ftipbook.compare.cost import UNKNOWN
from ftipbook.compare.records import missing_fields
from ftipbook.eval.stats import RepeatedMeasurement
from ftipbook.model import ModelConfig, build_model
from ftipbook.model.accounting import cache_bytes, param_count

BASE = dict(vocab_size=40, d_model=16, n_layers=4, n_heads=2, d_ff=24, max_seq_len=48)


@pytest.fixture(scope="module")
def models():
    hybrid = build_model(ModelConfig(**BASE, layer_pattern="KKKA", pos="none"), seed=0)
    full = build_model(ModelConfig(**BASE, layer_pattern="A", pos="rope"), seed=1)
    mla = build_model(ModelConfig(**BASE, layer_pattern="M", pos="none", kv_lora_rank=8, rope_head_dim=4), seed=2)
    return hybrid, full, mla


def test_capture_hybrid_records_live_facts(models):
    hybrid, _, _ = models
    r = ki.capture(hybrid, name="h", baseline="softmax attention (MHA)", prompt_length=12, new_tokens=3, batch=2)
    assert (r.role, r.layer_mix, r.layer_counts) == ("KDA", "KKKA", "A:1, K:3")
    assert r.parameters == param_count(hybrid.cfg) and r.context_length == 48
    assert r.cache_bytes == cache_bytes(hybrid.cfg, 15, batch=2)
    assert r.systems.kernel == "K: KDA prefill: chunked; decode: recurrent step; A: torch SDPA"
    s = r.systems
    assert (s.batch, s.prompt_length, s.new_tokens, s.precision) == (2, 12, 3, "float32")
    assert s.cache_policy == "growing KV cache + fixed KDA state"
    assert missing_fields(r) == ("source",)
    one = ki.capture(hybrid, name="h", baseline="MLA", prompt_length=1, new_tokens=2)
    assert "K: KDA prefill: recurrent step; decode: recurrent step" in one.systems.kernel
    short = ki.capture(hybrid, name="h", baseline="MLA", prompt_length=4, new_tokens=1)
    assert "prefill: recurrent; decode: recurrent step" in short.systems.kernel


def test_checkpoint_hash_is_the_state_dict(models):
    hybrid, _, _ = models
    h = hashlib.sha256()
    for name, t in sorted(hybrid.state_dict().items()):
        h.update(json.dumps([name, "torch.float32", list(t.shape)], separators=(",", ":")).encode())
        h.update(t.numpy().tobytes())
    record = ki.capture(hybrid, name="h", baseline="MLA", prompt_length=4, new_tokens=1)
    assert record.checkpoint == "sha256:" + h.hexdigest()
    twin = build_model(hybrid.cfg, seed=0)
    with torch.no_grad():
        next(twin.parameters()).view(-1)[0] += 1e-6
    assert ki.capture(twin, name="h", baseline="MLA", prompt_length=4, new_tokens=1).checkpoint != record.checkpoint


def test_baseline_capture_and_kind(models):
    _, full, mla = models
    r = ki.capture(full, name="f", baseline="softmax attention (MHA)", prompt_length=5, new_tokens=2)
    assert (r.role, r.systems.kernel, r.cache_bytes) == ("baseline", "A: torch SDPA", cache_bytes(full.cfg, 7))
    assert r.systems.cache_policy == "growing KV cache"
    assert ki.baseline_kind(mla) == "MLA"
    with pytest.raises(ValueError, match="not the declared"):
        ki.capture(full, name="f", baseline="MLA")


def test_kernel_spy_restores_functions(models):
    hybrid, _, _ = models
    before = ki._kda.kda_chunked
    with ki.kda_kernels_used() as calls:
        hybrid(torch.zeros(1, 10, dtype=torch.long))
    assert ki._kda.kda_chunked is before
    assert calls == [("chunked", 10)] * 3


@pytest.mark.parametrize("label", ["Transformer", "transformer", "baseline", "full attention"])
def test_bare_labels_are_refused(label, models):
    with pytest.raises(ValueError, match="does not identify the baseline"):
        ki.check_baseline(label)
    with pytest.raises(ValueError, match="does not identify"):
        ki.KDAInstanceRecord("x", "KDA", label)


def test_record_validation():
    with pytest.raises(ValueError, match="not a declared baseline kind"):
        ki.check_baseline("GPT")
    with pytest.raises(TypeError, match="baseline must be a string"):
        ki.check_baseline(None)
    with pytest.raises(ValueError, match="role"):
        ki.KDAInstanceRecord("x", "hybrid", "MLA")
    with pytest.raises(ValueError, match="at least one KDA layer"):
        ki.KDAInstanceRecord("x", "KDA", "MLA", layer_mix="MMMM")
    with pytest.raises(ValueError, match="only 'M' layers"):
        ki.KDAInstanceRecord("x", "baseline", "MLA", layer_mix="AAAA")
    with pytest.raises(ValueError, match="does not count"):
        ki.KDAInstanceRecord("x", "KDA", "MLA", layer_mix="KKKM", layer_counts="K:4")
    with pytest.raises(ValueError, match="parameters"):
        ki.KDAInstanceRecord("x", "KDA", "MLA", parameters=0)
    with pytest.raises(TypeError, match="systems"):
        ki.KDAInstanceRecord("x", "KDA", "MLA", systems="cpu")
    published = ki.KDAInstanceRecord("paper", "KDA", "MLA", layer_mix="KKKM", layer_counts="K:3, M:1")
    assert "checkpoint" in missing_fields(published) and published.parameters is UNKNOWN


def test_capture_bad_input(models):
    hybrid, _, _ = models
    with pytest.raises(TypeError, match="DecoderLM"):
        ki.capture(torch.nn.Linear(2, 2), name="x", baseline="MLA")
    with pytest.raises(ValueError, match="prompt_length"):
        ki.capture(hybrid, name="x", baseline="MLA", prompt_length=0)
    with pytest.raises(ValueError, match="exceeds"):
        ki.capture(hybrid, name="x", baseline="MLA", prompt_length=40, new_tokens=9)
    with pytest.raises(ValueError, match="name"):
        ki.capture(hybrid, name="", baseline="MLA")


def test_match_d_ff_exact_and_refused():
    full = ModelConfig(**BASE, layer_pattern="A", pos="rope", ffn="gelu", ffn_bias=True)
    target = param_count(full)
    hybrid = ModelConfig(**BASE, layer_pattern="KKKA", pos="none", ffn="gelu", ffn_bias=True)
    found = [d for d in range(1, 257) if param_count(dataclasses.replace(hybrid, d_ff=d)) == target]
    if found:
        assert ki.match_d_ff(hybrid, target).d_ff == found[0]
    else:
        with pytest.raises(ki.NoExactMatch):
            ki.match_d_ff(hybrid, target)
    same = ki.match_d_ff(dataclasses.replace(full, d_ff=1), target)
    assert same.d_ff == full.d_ff
    with pytest.raises(ki.NoExactMatch) as err:
        ki.match_d_ff(full, target + 1)
    below, above = err.value.below, err.value.above
    assert below[1] <= target + 1 < above[1] and above[0] == below[0] + 1
    with pytest.raises(ValueError, match="empty"):
        ki.match_d_ff(full, target, low=10, high=5)
    with pytest.raises(ValueError, match="target"):
        ki.match_d_ff(full, 0)
    with pytest.raises(TypeError, match="ModelConfig"):
        ki.match_d_ff({"d_ff": 3}, target)


def test_cost_facts(models):
    hybrid, full, _ = models
    timing = RepeatedMeasurement(warmup=1, reps=2, aggregation="median")
    fh = ki.cost_facts(hybrid, name="h", context=16, memory_budget=20_000, timing=timing)
    ff = ki.cost_facts(full, name="f", context=16, memory_budget=20_000, timing=timing)
    per_token = cache_bytes(hybrid.cfg, 2) - cache_bytes(hybrid.cfg, 1)
    assert (fh.cache_fixed, fh.cache_per_token) == (cache_bytes(hybrid.cfg, 1) - per_token, per_token)
    assert ff.cache_fixed == 0 and ff.cache_per_token == cache_bytes(full.cfg, 1)
    assert ff.cache_bytes == cache_bytes(full.cfg, 16) and fh.cache_bytes == cache_bytes(hybrid.cfg, 16)
    for f, m in ((fh, hybrid), (ff, full)):
        fits = [t for t in range(1, 49) if cache_bytes(m.cfg, t) <= 20_000]
        assert f.attainable_context == max(fits, default=0)
        assert f.decode_seconds > 0 and f.decode_flops > 0
    assert ff.context_limit == "memory budget"
    roomy = ki.cost_facts(hybrid, name="h", context=16, memory_budget=10**9, timing=timing)
    assert (roomy.attainable_context, roomy.context_limit) == (48, "max_seq_len")
    tight = ki.cost_facts(full, name="f", context=16, memory_budget=1, timing=timing)
    assert tight.attainable_context == 0


def test_cost_facts_bad_input(models):
    hybrid, _, _ = models
    with pytest.raises(ValueError, match="context"):
        ki.cost_facts(hybrid, name="h", context=1, memory_budget=10)
    with pytest.raises(ValueError, match="memory_budget"):
        ki.cost_facts(hybrid, name="h", context=8, memory_budget=0)
    with pytest.raises(ValueError, match="exceeds"):
        ki.cost_facts(hybrid, name="h", context=45, memory_budget=10)
    with pytest.raises(TypeError, match="RepeatedMeasurement"):
        ki.cost_facts(hybrid, name="h", context=8, memory_budget=10, timing=3)


def test_stable_ordering():
    timing = RepeatedMeasurement(warmup=0, reps=2, aggregation="median")
    fast, slow = (lambda: None), (lambda: sum(range(200_000)))
    assert ki.stable_ordering(timing, fast, slow) == "a"
    assert ki.stable_ordering(timing, slow, fast) == "b"
    with pytest.raises(ValueError, match="rounds"):
        ki.stable_ordering(timing, fast, slow, rounds=0)
    with pytest.raises(TypeError, match="timing"):
        ki.stable_ordering(None, fast, slow)


def test_parameter_matched_costs(models):
    hybrid, full, _ = models
    timing = RepeatedMeasurement(warmup=0, reps=2, aggregation="median")
    twin = build_model(hybrid.cfg, seed=5)
    facts = ki.parameter_matched_costs({"a": hybrid, "b": twin}, context=8, memory_budget=10**6, timing=timing)
    assert set(facts) == {"a", "b"} and facts["a"].parameters == facts["b"].parameters
    assert facts["a"].cache_bytes == facts["b"].cache_bytes == cache_bytes(hybrid.cfg, 8)
    with pytest.raises(ValueError, match="parameter counts differ"):
        ki.parameter_matched_costs({"h": hybrid, "f": full}, context=8, memory_budget=10**6)
    with pytest.raises(ValueError, match="at least two"):
        ki.parameter_matched_costs({"h": hybrid}, context=8, memory_budget=10**6)
