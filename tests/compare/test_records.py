"""Comparison records (ftip-00L5 to 00L8): identity, evaluation conditions, training, systems."""
import dataclasses

import pytest
import torch

from ftipbook.compare.cost import UNKNOWN, Unknown
from ftipbook.compare.records import (
    ComparisonPair,
    EvaluationConditions,
    Record,
    SystemIdentity,
    SystemsRecord,
    TrainingRecord,
    TuningProtocol,
    check_common_conditions,
    describe_kernels,
    diff_records,
    missing_fields,
    systems_intervention,
)
from ftipbook.model import ModelConfig, build_model
from ftipbook.model.accounting import param_count

TINY = dict(vocab_size=61, d_model=32, n_layers=4, n_heads=4, d_ff=64, max_seq_len=48, mla_nope=True, kv_lora_rank=16)


def identity(name="hybrid", **kw):
    base = dict(checkpoint="sha256:aa", variant="3 KDA : 1 MLA (NoPE)", layer_pattern="KKKM", total_params=100,
                active_params=100, tokenizer="bpe-512:ff", context_limit=64)
    return SystemIdentity(name, **(base | kw))


# ---- identity and pair ------------------------------------------------------------------------
@pytest.mark.parametrize("label", ["Transformer", " transformer ", "baseline", "Hybrid", "linear attention"])
def test_a_bare_family_label_is_refused(label):
    with pytest.raises(ValueError, match="does not identify"):
        identity(variant=label)


@pytest.mark.parametrize("kw", [dict(layer_pattern="KKKX"), dict(total_params=0), dict(active_params=200),
                                dict(checkpoint=""), dict(context_limit=1.5)])
def test_identity_validation(kw):
    with pytest.raises(ValueError):
        identity(**kw)


def test_identity_from_a_live_model_matches_the_analytic_counts():
    cfg = ModelConfig(**TINY, layer_pattern="KKKM")
    model = build_model(cfg, seed=0)
    ident = SystemIdentity.from_model("hybrid", model, checkpoint="sha256:1", tokenizer="bytes")
    assert ident.total_params == param_count(cfg) == sum(p.numel() for p in model.parameters())
    assert ident.layer_pattern == "KKKM" and ident.context_limit == 48
    assert "KDA" in ident.variant and "MLA (NoPE)" in ident.variant
    with pytest.raises(TypeError):
        SystemIdentity.from_model("x", torch.nn.Linear(2, 2))


def test_pair_reports_its_differences_and_its_gaps():
    pair = ComparisonPair(identity(), identity("full-mla", checkpoint="sha256:bb", variant="full MLA (NoPE), 4 layers",
                                                layer_pattern="MMMM", total_params=120, active_params=120))
    assert pair.identified
    assert {c.path for c in pair.differences()} == {"checkpoint", "variant", "layer_pattern", "total_params", "active_params"}
    published = ComparisonPair(identity("kimi", checkpoint=UNKNOWN, tokenizer=UNKNOWN),
                               identity("mla", checkpoint=UNKNOWN, tokenizer=UNKNOWN, layer_pattern="M"))
    assert not published.identified
    assert set(missing_fields(published)) == {"a.checkpoint", "a.tokenizer", "b.checkpoint", "b.tokenizer"}


def test_pair_refuses_the_same_system_twice():
    with pytest.raises(ValueError, match="same checkpoint"):
        ComparisonPair(identity("a"), identity("b"))
    with pytest.raises(ValueError, match="called"):
        ComparisonPair(identity("a"), identity("a", checkpoint="other"))
    with pytest.raises(TypeError):
        ComparisonPair(identity("a"), "b")


# ---- evaluation conditions ---------------------------------------------------------------------
EVAL = EvaluationConditions("associative recall", "uniform keys, 8 pairs", "exact match", (0, 1, 2), "eos or 4 tokens", "v1")


def test_common_conditions_pass_when_everything_is_equal():
    assert check_common_conditions(EVAL, dataclasses.replace(EVAL)) == ()


@pytest.mark.parametrize("field, value", [("task_family", "copy"), ("prompt_law", "16 pairs"), ("scoring_rule", "F1"),
                                          ("sampling_seeds", (0, 1, 3)), ("stopping_rule", "eos"),
                                          ("evaluator_version", "v2")])
def test_each_mismatch_becomes_a_named_separate_arm(field, value):
    arms = check_common_conditions(EVAL, dataclasses.replace(EVAL, **{field: value}))
    assert len(arms) == 1 and arms[0].coordinate == field and arms[0].status == "differs"
    assert field in arms[0].name and "separate arm" in arms[0].name


def test_an_unknown_condition_is_never_assumed_common():
    arms = check_common_conditions(EVAL, dataclasses.replace(EVAL, evaluator_version=UNKNOWN))
    assert [(a.coordinate, a.status) for a in arms] == [("evaluator_version", "unrecorded")]
    both_unknown = dataclasses.replace(EVAL, evaluator_version=UNKNOWN)
    assert len(check_common_conditions(both_unknown, both_unknown)) == 1
    assert check_common_conditions(EVAL, dataclasses.replace(EVAL, scoring_rule="F1"), ignore=("scoring_rule",)) == ()


def test_evaluation_validation_and_type_checks():
    with pytest.raises(ValueError):
        EvaluationConditions(sampling_seeds=())
    with pytest.raises(ValueError):
        EvaluationConditions(task_family="")
    with pytest.raises(TypeError):
        diff_records(EVAL, identity())
    with pytest.raises(TypeError):
        missing_fields({"a": 1})


# ---- training ----------------------------------------------------------------------------------
TUNE = TuningProtocol("200k tokens of the toy mixture", 4, "lowest validation loss", "60 steps", "4 x 60 steps",
                      ("lr=1e-3", "lr=3e-3", "lr=1e-2", "lr=3e-2"), "lr=3e-3")
TRAIN = TrainingRecord("toy mixture", 409_600, "seed 0", "AdamW(0.9, 0.95, wd 0.1)", "warmup 20 + cosine", "none", "none", 400,
                       "last step", TUNE)


def test_common_recipe_requires_every_training_coordinate_equal():
    assert TRAIN.common_recipe_arms(dataclasses.replace(TRAIN)) == ()
    other = dataclasses.replace(TRAIN, schedule="constant", update_count=200)
    assert {a.coordinate for a in TRAIN.common_recipe_arms(other)} == {"schedule", "update_count"}
    # a different selected learning rate is irrelevant to the common recipe (no per-architecture tuning there)
    assert TRAIN.common_recipe_arms(dataclasses.replace(TRAIN, tuning=dataclasses.replace(TUNE, selected="lr=1e-2"))) == ()


def test_equal_tuning_allows_different_choices_but_not_different_resources():
    chose_other = dataclasses.replace(TRAIN, schedule="constant",
                                      tuning=dataclasses.replace(TUNE, selected="lr=1e-2"))
    assert TRAIN.equal_tuning_arms(chose_other) == ()
    more_trials = dataclasses.replace(TRAIN, tuning=dataclasses.replace(TUNE, trial_count=8))
    assert [a.coordinate for a in TRAIN.equal_tuning_arms(more_trials)] == ["trial_count"]
    untuned = dataclasses.replace(TRAIN, tuning=UNKNOWN)
    assert [a.status for a in TRAIN.equal_tuning_arms(untuned)] == ["unrecorded"]


def test_training_validation():
    with pytest.raises(ValueError, match="predeclared"):
        dataclasses.replace(TUNE, selected="lr=1.0")
    with pytest.raises(ValueError):
        TrainingRecord(data_volume=-1)
    with pytest.raises(TypeError):
        TrainingRecord(tuning="grid")
    assert "tuning" in missing_fields(TrainingRecord())


# ---- systems -----------------------------------------------------------------------------------
def test_capture_fills_the_machine_and_model_coordinates():
    model = build_model(ModelConfig(**TINY, layer_pattern="KKKM"), seed=0)
    rec = SystemsRecord.capture(model, batch=2, cache_policy="growing", prompt_length=16, new_tokens=4, warmup=1)
    assert missing_fields(rec) == ()
    assert rec.precision == "float32" and "KDA" in rec.kernel and "MLA explicit" in rec.kernel
    redacted = dict(rec.rows(redact=SystemsRecord.MACHINE_FIELDS))
    assert redacted["hardware"] == redacted["software"] == "<captured>" and redacted["batch"] == "2"
    assert describe_kernels(build_model(ModelConfig(**TINY), seed=0)) == "A: torch SDPA"


def test_a_numerically_different_kernel_is_an_intervention():
    model = build_model(ModelConfig(**TINY, layer_pattern="KKKM"), seed=0).eval()
    x = torch.randint(0, 61, (1, 40), generator=torch.Generator().manual_seed(0))
    common = dict(batch=1, cache_policy="none", prompt_length=40, new_tokens=0, warmup=0)
    kda = [m for m in model.modules() if hasattr(m, "state_nbytes")]
    with torch.no_grad():
        for m in kda:
            m.mode = "recurrent"
        rec_a, out_a = SystemsRecord.capture(model, **common), model(x)
        for m in kda:
            m.mode = "chunked"
        rec_b, out_b = SystemsRecord.capture(model, **common), model(x)
    change = systems_intervention(rec_a, rec_b, out_a, out_b)
    assert [c.path for c in change.changes] == ["kernel"]
    assert change.alters_numerics and 0 < change.max_abs_diff < 1e-4 and change.label.startswith("intervention")
    same = systems_intervention(rec_a, dataclasses.replace(rec_a, cache_policy="preallocated"), out_a, out_a.clone())
    assert not same.alters_numerics and same.max_abs_diff == 0.0
    masked = torch.tensor([[-1.5, float("-inf")]])  # identical outputs with a masked entry
    same = systems_intervention(rec_a, dataclasses.replace(rec_a, cache_policy="preallocated"), masked,
                                masked.clone())
    assert not same.alters_numerics and same.max_abs_diff == 0.0
    moved = systems_intervention(rec_a, rec_b, masked, torch.tensor([[-1.5, 0.0]]))
    assert moved.alters_numerics and moved.max_abs_diff == float("inf")
    with pytest.raises(ValueError, match="do not differ"):
        systems_intervention(rec_a, rec_a, out_a, out_b)
    assert systems_intervention(rec_a, dataclasses.replace(rec_a, precision="bfloat16"), out_a,
                                out_a.to(torch.bfloat16)).alters_numerics


def test_systems_validation():
    with pytest.raises(ValueError):
        SystemsRecord(batch=0)
    with pytest.raises(ValueError):
        SystemsRecord(kernel="")


def test_records_serialise_with_unknown_marked():
    d = TrainingRecord(optimizer="AdamW").to_dict()
    assert d["optimizer"] == "AdamW" and d["schedule"] == "UNKNOWN" and d["tuning"] == "UNKNOWN"
    assert TRAIN.to_dict()["tuning"]["alternatives"][0] == "lr=1e-3"
    assert isinstance(TrainingRecord().schedule, Unknown)
    assert issubclass(SystemsRecord, Record)


def test_training_record_from_a_run_configuration():
    from ftipbook.train.config import RunRandomness, TrainConfig

    cfg = TrainConfig(steps=400, batch_size=8, seq_len=64, lr=3e-3, schedule="warmup_cosine", warmup_steps=20)
    rec = TrainingRecord.from_run(cfg, RunRandomness(0, 1, 2, 3), data="toy mixture")
    assert rec.data_volume == 400 * 8 * 64 and rec.update_count == 400
    assert "data-order seed 1" in rec.token_order and rec.data == "toy mixture"
    assert rec.schedule == "WarmupCosine(warmup_steps=20, total_steps=400, final=0.1)"
    same = TrainingRecord.from_run(cfg, RunRandomness(5, 1, 2, 9), data="toy mixture")  # init seed is not a recipe coordinate
    assert rec.common_recipe_arms(same) == ()
    other = TrainingRecord.from_run(dataclasses.replace(cfg, lr=1e-3), RunRandomness(0, 1, 2, 3), data="toy mixture")
    assert [a.coordinate for a in rec.common_recipe_arms(other)] == ["optimizer"]
    # the horizon is a schedule setting: 400- and 800-step cosine runs are different recipes
    longer = TrainingRecord.from_run(dataclasses.replace(cfg, steps=800), RunRandomness(0, 1, 2, 3),
                                     data="toy mixture")
    assert "schedule" in [a.coordinate for a in rec.common_recipe_arms(longer)]
    with pytest.raises(TypeError):
        TrainingRecord.from_run({"steps": 1}, RunRandomness(), data="x")


def test_identity_from_an_artifact_uses_its_runtime_and_tokenizer_hashes():
    from ftipbook.artifact import ModelArtifact
    from ftipbook.tokenizer import ByteLevelBPE

    tok = ByteLevelBPE.train(["abc abd abe"] * 3, 4)
    cfg = ModelConfig(**(TINY | dict(vocab_size=tok.vocab_size)), layer_pattern="KKKM")
    art = ModelArtifact.from_model(build_model(cfg, seed=0), tok)
    ident = SystemIdentity.from_artifact("hybrid", art)
    assert ident.checkpoint == f"sha256:{art.runtime_hash()}" and ident.tokenizer == tok.sha256()
    other = SystemIdentity.from_artifact("hybrid seed 1", ModelArtifact.from_model(build_model(cfg, seed=1), tok))
    assert [c.path for c in ComparisonPair(ident, other).differences()] == ["checkpoint"]
    assert SystemIdentity.from_artifact("no tokenizer", ModelArtifact.from_model(build_model(cfg, seed=0))).tokenizer == UNKNOWN
    with pytest.raises(TypeError):
        SystemIdentity.from_artifact("x", build_model(cfg, seed=0))
