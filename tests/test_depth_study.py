"""The committed depth-reuse experiments (ftipbook.depth_study): verification, refusal, accessors, bad arguments."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from ftipbook import depth_study, study
from ftipbook.compare.depth_records import DepthReuseRecord
from ftipbook.model.depth import NextLatentLM
from ftipbook.model.transformer import DecoderLM


@pytest.fixture(scope="module")
def depth():
    return depth_study.load()


def test_load_verifies_every_file(depth):
    hashes = depth_study.verify()
    assert "DEPTH.json" in hashes
    assert {f"checkpoints/{n}/weights.safetensors" for n in depth_study.CHECKPOINTS} <= set(hashes)
    assert depth.build["threads"] == 1 and depth.build["cpu_seconds"] > 0


@pytest.fixture()
def copy(tmp_path):
    target = tmp_path / "depth"
    shutil.copytree(depth_study.DEPTH_DIR, target)
    return target


def test_a_changed_byte_is_refused_by_name(copy):
    path = copy / "DEPTH.json"
    text = path.read_text()
    path.write_text(text.replace('"budget": 400', '"budget": 401', 1))
    with pytest.raises(ValueError, match="DEPTH.json has SHA-256"):
        depth_study.load(copy)


def test_a_changed_checkpoint_is_refused(copy):
    path = copy / "checkpoints" / "latent-w1.head.safetensors"
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="latent-w1.head.safetensors"):
        depth_study.load(copy)


def test_an_unlisted_or_missing_file_is_refused(copy):
    (copy / "extra.json").write_text("{}")
    with pytest.raises(ValueError, match="extra.json is not listed"):
        depth_study.verify(copy)
    (copy / "extra.json").unlink()
    (copy / "MANIFEST.json").unlink()
    with pytest.raises(FileNotFoundError, match="build_depth.py"):
        depth_study.load(copy)


def test_another_format_is_refused(copy):
    manifest = json.loads((copy / "MANIFEST.json").read_text())
    manifest["format"] = study.FORMAT
    (copy / "MANIFEST.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="expected 'ftipbook.depth/1'"):
        depth_study.load(copy)


def test_equal_parameter_runs(depth):
    n_items = len(depth.item_ids)
    for p in depth.passes:
        for s in depth.seeds:
            run = depth.run(p, s)
            assert run.config.n_loops == p and run.config.n_layers == 2
            assert run.item_scores.shape == (n_items,) and np.isclose(run.item_scores.mean(), run.score)
            assert len(run.losses) == depth.budget
            assert isinstance(run.record, DepthReuseRecord) and run.record.pass_count == p
    assert len({depth.run(p, 0).parameters for p in depth.passes}) == 1
    arm = depth.arm()
    assert arm.common and arm.seeds == depth.seeds


def test_surface_recirculation_and_latent_shapes(depth):
    surf = depth.surface()
    shape = (len(surf.widths), len(surf.passes), len(surf.budgets))
    assert surf.scores.shape == surf.train_flops.shape == shape
    assert surf.parameters.shape == shape[:2] and len(surf.tokens) == shape[2]
    assert np.isfinite(surf.scores).all()
    rec = depth.recirculation()
    assert rec.scores.shape == (len(depth.passes), len(depth.seeds), len(depth_study.INFERENCE_PASSES))
    assert rec.item_scores.shape == rec.scores.shape + (len(depth.item_ids),)
    assert rec.prefill_flops.shape == (len(depth.passes), len(depth_study.INFERENCE_PASSES))
    assert set(rec.records) == {(r, p) for r in depth.passes for p in depth_study.INFERENCE_PASSES}
    for w in depth.latent_weights:
        run = depth.latent_run(w, 0)
        assert len(run.latent_losses) == (depth.budget if w > 0 else 0)
        assert len(run.token_losses) == depth.budget


def test_checkpoints_reproduce_the_stored_scores(depth):
    docs = study.evaluation_documents()[:16]
    model = depth.checkpoint("passes-2")
    assert type(model) is DecoderLM and model.cfg.n_loops == 2
    np.testing.assert_allclose(study.document_scores(model, docs), depth.run(2, 0).item_scores[:16], atol=1e-5)
    latent = depth.checkpoint("latent-w1")
    plain = depth.checkpoint("latent-w1", interface_only=True)
    assert isinstance(latent, NextLatentLM) and type(plain) is DecoderLM
    tokens = depth_study.record_prompt()
    assert torch.equal(latent(tokens), plain(tokens))


def test_rebuild_report_of_the_committed_set_is_identical():
    report = depth_study.rebuild_report(depth_study.DEPTH_DIR)
    assert report.identical and not report.count_mismatches and report.max_score_diff == 0


@pytest.mark.parametrize("call, match", [
    (lambda d: d.run(4, 0), r"passes=4 is not one of \[1, 2, 3\]"),
    (lambda d: d.run(True, 0), "passes=True"),
    (lambda d: d.run(1, 7), "seed=7"),
    (lambda d: d.latent_run(0.5, 0), "weight=0.5"),
    (lambda d: d.checkpoint("passes-4"), "name='passes-4'"),
    (lambda d: depth_study.package(40, 1), "width=40"),
    (lambda d: depth_study.package(64, 0), "passes=0 must be an int >= 1"),
])
def test_bad_arguments_are_refused_by_name(depth, call, match):
    with pytest.raises(ValueError, match=match):
        call(depth)


def _synthetic(law) -> depth_study.Surface:
    params = np.array([[1000, 1000], [3000, 3000]])
    tokens = (100, 400, 1600)
    loss = np.array([[[law(n, p, d) for d in tokens] for p in (1, 2)] for n in params[:, 0]])
    return depth_study.Surface((32, 64), (1, 2), (1, 4, 16), tokens, -loss, params, np.ones(loss.shape, dtype=np.int64))


def _power(n, p, d):
    return 3.0 * n ** -0.1 * p ** 0.05 * d ** -0.2


def _log_linear(n, p, d):
    return 9.0 - 0.3 * np.log(n) + 0.1 * np.log(p) - 0.4 * np.log(d)


def test_each_form_recovers_its_own_exact_surface_and_not_the_other():
    power = depth_study.fit_surface(_synthetic(_power), "power")
    assert np.allclose(power.coefficients, (np.log(3.0), -0.1, 0.05, -0.2), atol=1e-10) and power.rms < 1e-12
    linear = depth_study.fit_surface(_synthetic(_log_linear), "log-linear")
    assert np.allclose(linear.coefficients, (9.0, -0.3, 0.1, -0.4), atol=1e-10) and linear.rms < 1e-12
    assert depth_study.fit_surface(_synthetic(_log_linear), "power").rms > 1e-4
    assert power.low == (1000.0, 1.0, 100.0) and power.high == (3000.0, 2.0, 1600.0)
    assert np.isclose(power.predict(2000, 1.5, 800), _power(2000, 1.5, 800))
    assert np.isclose(linear.predict(2000, 1.5, 800), _log_linear(2000, 1.5, 800))


def test_predict_refuses_outside_the_range_and_bad_points():
    fit = depth_study.fit_surface(_synthetic(_power), "power")
    assert fit.covers(1000, 1, 100) and fit.covers(3000, 2, 1600) and not fit.covers(3000, 2, 1601)
    with pytest.raises(ValueError, match="outside the measured range"):
        fit.predict(3000, 3, 1600)
    assert np.isclose(fit.predict(3000, 3, 1600, extrapolate=True), _power(3000, 3, 1600))
    for bad, match in ((dict(n=0, p=1, d=100), "n=0 must be a finite number > 0"),
                       (dict(n=1000, p=True, d=100), "p=True must be a real number"),
                       (dict(n=1000, p=1, d=float("nan")), "d=nan must be a finite real number")):
        with pytest.raises(ValueError, match=match):
            fit.predict(**bad)


def test_fit_surface_bad_arguments():
    with pytest.raises(ValueError, match="form='cubic'"):
        depth_study.fit_surface(_synthetic(_power), "cubic")
    with pytest.raises(TypeError, match="depth_study.Surface"):
        depth_study.fit_surface({"scores": []}, "power")
    negative = _synthetic(_power)
    negative.scores[0, 0, 0] = 0.5
    with pytest.raises(ValueError, match="every loss must be > 0"):
        depth_study.fit_surface(negative, "power")
