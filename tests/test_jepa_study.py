"""The committed JEPA build: hashes, loading and the recorded scores (ftip-00KA, 00KB)."""
import json
import shutil

import numpy as np
import pytest
import torch

from ftipbook import jepa_study, study


@pytest.fixture(scope="module")
def S():
    return jepa_study.load()


def test_loads_and_scores_are_recomputed(S):
    law = jepa_study.evaluation_law()
    assert S.data["evaluation_law"] == law.description
    assert len(law.documents) == len(study.evaluation_documents())
    with torch.no_grad():
        for name, model in (("ar", S.ar_model()), ("jepa+readout", S.decoded("readout"))):
            np.testing.assert_allclose(law.item_nlls(model), S.item_scores[name], rtol=0, atol=1e-5)
    assert S.scores["jepa+readout"] < S.scores["unigram"] < S.scores["jepa+tied-embedding"]


def test_ar_scores_match_the_study_scoring_rule(S):
    np.testing.assert_allclose(-study.document_scores(S.ar_model(), study.evaluation_documents()),
                               S.item_scores["ar"], rtol=0, atol=1e-5)


def test_flipped_byte_is_refused_naming_the_file(tmp_path):
    copy = tmp_path / "jepa"
    shutil.copytree(jepa_study.JEPA_DIR, copy)
    jepa_study.load(copy)
    raw = bytearray((copy / "readout.safetensors").read_bytes())
    raw[-1] ^= 1
    (copy / "readout.safetensors").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="readout.safetensors has SHA-256"):
        jepa_study.load(copy)


def test_missing_unlisted_and_bad_manifest(tmp_path):
    copy = tmp_path / "jepa"
    shutil.copytree(jepa_study.JEPA_DIR, copy)
    (copy / "extra.bin").write_bytes(b"x")
    with pytest.raises(ValueError, match="extra.bin is not listed"):
        jepa_study.verify(copy)
    (copy / "extra.bin").unlink()
    (copy / "ar.safetensors").unlink()
    with pytest.raises(ValueError, match="ar.safetensors is missing"):
        jepa_study.verify(copy)
    manifest = json.loads((copy / "MANIFEST.json").read_text())
    (copy / "MANIFEST.json").write_text(json.dumps({**manifest, "format": "other/1"}))
    with pytest.raises(ValueError, match="format"):
        jepa_study.verify(copy)
    (copy / "MANIFEST.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        jepa_study.verify(copy)
    with pytest.raises(FileNotFoundError, match="build_jepa"):
        jepa_study.verify(tmp_path / "nowhere")


def test_records(S):
    assert S.data["build"]["threads"] == 1 and S.data["recipe"]["steps"] == jepa_study.RECIPE.steps
    assert len(S.data["losses"]["jepa"]) == len(S.data["losses"]["ar"]) == jepa_study.RECIPE.steps
    jepa = S.jepa()
    assert S.data["parameters"]["jepa_trained"] == jepa.trained_parameters()
    assert S.data["parameters"]["ar"] == sum(p.numel() for p in S.ar_model().parameters())
    with pytest.raises(ValueError, match="decoder='argmax'"):
        S.decoder("argmax")
