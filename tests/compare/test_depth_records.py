"""Computation-axis and depth-reuse records (ftip-00KH, ftip-00KP), captured from runs."""
import dataclasses

import pytest
import torch

from ftipbook.compare.cost import UNKNOWN
from ftipbook.compare.depth_records import (ComputationAxisRecord, DepthReuseRecord, declared_passes,
                                            depth_interventions, run_decode, sharing)
from ftipbook.model import ModelConfig, build_model
from ftipbook.model.depth import latent_feedback_model, next_latent_model, with_passes

CFG = ModelConfig(vocab_size=61, d_model=32, n_layers=2, n_heads=4, d_ff=64, max_seq_len=64)
PROMPT = [[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]]


def test_computation_axis_counts_passes_steps_and_carried_latents():
    plain = ComputationAxisRecord.capture(build_model(CFG), PROMPT, 4)
    assert (plain.token_steps, plain.positions, plain.depth_passes, plain.recurrent_passes,
            plain.latent_updates) == (5, 2 * 9, 1, 0, 0)
    looped = ComputationAxisRecord.capture(build_model(dataclasses.replace(CFG, n_loops=3)), PROMPT, 4)
    assert looped.depth_passes == 3
    fb = ComputationAxisRecord.capture(latent_feedback_model(CFG, 3), PROMPT, 4)
    # 3 passes, 2 of them read a carried latent; 4 token-step boundaries x 2 carried latents x 2 rows
    assert (fb.depth_passes, fb.recurrent_passes, fb.latent_updates) == (3, 2, 4 * 2 * 2)


def test_recirculation_changes_passes_not_weights():
    model = build_model(CFG, seed=1)
    a = DepthReuseRecord.capture(model, PROMPT, 3, eval_seeds=(0, 1), repeats=1)
    b = DepthReuseRecord.capture(with_passes(model, 2), PROMPT, 3, eval_seeds=(0, 1), repeats=1)
    assert a.weights_sha256 == b.weights_sha256 and a.parameters == b.parameters
    assert (a.pass_count, b.pass_count) == (1, 2)
    assert b.pass_flops == a.pass_flops and b.token_flops > a.token_flops
    assert b.token_flops - a.token_flops == b.pass_flops  # the extra pass is all of the extra work
    verdict = depth_interventions(a, b)
    assert verdict.status == "intervention" and verdict.same_weights
    assert {"pass_count", "token_flops", "shared_weights", "stopping_rule", "computation.depth_passes"} <= \
        set(verdict.changed)
    assert "weights_sha256" not in verdict.changed


def test_record_fields_come_from_the_model():
    nl = next_latent_model(CFG, 0.5, seed=0)
    r = DepthReuseRecord.capture(nl, PROMPT, 2, eval_seeds=(7,), repeats=2)
    plain = DepthReuseRecord.capture(build_model(CFG, seed=0), PROMPT, 2, eval_seeds=(7,), repeats=1)
    assert r.weights_sha256 == plain.weights_sha256  # the head is not part of the interface weights
    assert "next-latent" in r.training_objective and plain.training_objective == "next-token cross-entropy"
    assert r.parameters > plain.parameters  # but its parameters are counted
    assert depth_interventions(r, plain).changed == ("parameters", "training_objective", "memory_bytes")
    fb = DepthReuseRecord.capture(latent_feedback_model(CFG, 2), PROMPT, 2, eval_seeds=(7,), repeats=1)
    assert fb.recurrent_state_bytes == CFG.d_model * 4 and plain.recurrent_state_bytes == 0
    params = sum(p.numel() * 4 for p in build_model(CFG).parameters())
    kv = 2 * CFG.n_layers * 2 * 7 * CFG.d_model * 4  # keys and values of 2 rows x 7 positions per layer
    assert plain.memory_bytes == params + kv
    assert sharing(build_model(dataclasses.replace(CFG, n_layers=1, n_loops=3))) == "1 block x 3 applications"


def test_missing_field_makes_the_comparison_unknown():
    model = build_model(CFG)
    a = DepthReuseRecord.capture(model, PROMPT, 1, repeats=1)
    b = DepthReuseRecord.capture(model, PROMPT, 1, eval_seeds=(0,), repeats=1)
    verdict = depth_interventions(a, b)
    assert verdict.status == "unknown" and verdict.missing == ("eval_seeds",)
    c = DepthReuseRecord.capture(model, PROMPT, 1, eval_seeds=(0,), repeats=1)
    assert depth_interventions(b, c).status == "identical"


def test_counts_that_disagree_with_the_configuration_are_refused():
    model = build_model(CFG)
    run = run_decode(model, torch.tensor(PROMPT), 2)
    wrong = dataclasses.replace(run, block_positions=run.block_positions * 2)
    with pytest.raises(RuntimeError, match="declares 1"):
        ComputationAxisRecord.from_run(model, wrong)
    assert declared_passes(latent_feedback_model(dataclasses.replace(CFG, n_loops=2), 3)) == 6


@pytest.mark.parametrize("kwargs, match", [
    (dict(pass_count=0), "pass_count"), (dict(eval_seeds=()), "eval_seeds"), (dict(eval_seeds=[1]), "eval_seeds"),
    (dict(prefill_seconds=-1.0), "prefill_seconds"), (dict(stopping_rule=""), "stopping_rule"),
    (dict(computation="3 passes"), "computation"),
])
def test_bad_record_values_are_refused(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        DepthReuseRecord(**kwargs)


def test_bad_capture_inputs_are_refused():
    model = build_model(CFG)
    with pytest.raises(ValueError, match="new_tokens"):
        ComputationAxisRecord.capture(model, PROMPT, -1)
    with pytest.raises(ValueError, match="prompt"):
        ComputationAxisRecord.capture(model, [[99]], 1)
    with pytest.raises(TypeError, match="DecoderLM"):
        ComputationAxisRecord.capture(torch.nn.Linear(2, 2), PROMPT, 1)
    with pytest.raises(TypeError, match="DepthReuseRecord"):
        depth_interventions(DepthReuseRecord(), ComputationAxisRecord())
    assert DepthReuseRecord().eval_seeds is UNKNOWN


def test_token_flops_are_per_row_at_the_context_after_the_prompt():
    from ftipbook.model.accounting import flops_per_token
    cfg = dataclasses.replace(CFG, n_loops=2)
    one = DepthReuseRecord.capture(build_model(cfg), PROMPT[:1], 2, repeats=1)
    two = DepthReuseRecord.capture(build_model(cfg), PROMPT, 2, repeats=1)
    # the accounting rule: decode at context 5 + 1, 2 loops; the CPU counter adds nothing beyond it here
    assert one.token_flops == two.token_flops == flops_per_token(cfg, len(PROMPT[0]) + 1, "decode")
    assert one.pass_flops == two.pass_flops == (two.token_flops - 2 * CFG.d_model * CFG.vocab_size) // 2


# --- ftip-00KS: separable records ---------------------------------------------------------------
def _separable(trained, deployed=None, steps=10):
    from ftipbook.compare.depth_records import SeparableRecord
    from ftipbook.train import RunRandomness, TrainConfig
    return SeparableRecord.capture(trained, trained if deployed is None else deployed, TrainConfig(steps=steps),
                                   RunRandomness(), data="counting stream", prompt=PROMPT, new_tokens=2)


def test_each_depth_intervention_lands_in_one_group():
    from ftipbook.compare.depth_records import intervention_groups
    plain = build_model(CFG, seed=0)
    base = _separable(plain)
    looped = _separable(build_model(dataclasses.replace(CFG, n_layers=1, n_loops=2), seed=0))
    latent = _separable(next_latent_model(CFG, 0.5, seed=0))
    recirculated = _separable(plain, with_passes(plain, 2))
    assert set(intervention_groups(base, looped)) == {"architecture"}
    assert set(intervention_groups(base, latent)) == {"training"}
    assert intervention_groups(base, recirculated) == {
        "systems": ("systems.layer_applications", "systems.decode_flops")}
    assert (base.systems.layer_applications, recirculated.systems.layer_applications) == (2, 4)
    assert latent.training.training_only_parameters == sum(
        p.numel() for p in next_latent_model(CFG, 0.5).latent_head.parameters())
    longer = intervention_groups(base, _separable(plain, steps=20))
    assert set(longer) == {"training"} and "training.recipe.update_count" in longer["training"]
    assert intervention_groups(base, _separable(plain)) == {}


def test_separable_records_refuse_foreign_weights_and_bad_values():
    from ftipbook.compare.depth_records import (ArchitectureCoordinates, SeparableRecord, SystemsCoordinates,
                                                intervention_groups)
    with pytest.raises(ValueError, match="does not hold the trained weights"):
        _separable(build_model(CFG, seed=0), build_model(CFG, seed=0))
    with pytest.raises(TypeError, match="trained"):
        _separable(torch.nn.Linear(2, 2), build_model(CFG))
    with pytest.raises(ValueError, match="distinct_blocks"):
        ArchitectureCoordinates("1 layers A", 0, 1, 10)
    with pytest.raises(TypeError, match="SystemsRecord"):
        SystemsCoordinates("cpu", 1, 1, 0)
    with pytest.raises(TypeError, match="architecture"):
        SeparableRecord("a", "b", "c")
    base = _separable(build_model(CFG, seed=0))
    blind = dataclasses.replace(base, systems=dataclasses.replace(
        base.systems, systems=dataclasses.replace(base.systems.systems, kernel=UNKNOWN)))
    with pytest.raises(ValueError, match="kernel"):
        intervention_groups(base, blind)
    with pytest.raises(TypeError, match="SeparableRecords"):
        intervention_groups(base, DepthReuseRecord())
