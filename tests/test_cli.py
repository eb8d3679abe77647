"""The command line: each subcommand on a tiny configuration, resume, errors, and a torchrun launch."""
import json
import os
import shutil
import subprocess
import sys

import pytest
import torch

from ftipbook.artifact import load_artifact
from ftipbook.cli import main
from tests.local_runs import free_port, one_thread  # noqa: F401 (one_thread: autouse fixture)

TINY = ["--docs", "200", "--vocab-size", "280", "--batch-size", "4", "--seq-len", "32", "--d-model", "32",
        "--d-ff", "64", "--warmup-steps", "2", "--no-progress"]
ARCHITECTURE = ("--vocab-size", "--d-model", "--d-ff")  # options that --init refuses


def _log(path):
    return json.loads((path / "train_log.json").read_text())


def test_train_sample_evaluate(tmp_path, capsys):
    assert main(["train", "--out", str(tmp_path / "m"), "--steps", "6", "--eval-every", "3", *TINY]) == 0
    assert "trained 6 steps on 1 process(es)" in capsys.readouterr().out
    log = _log(tmp_path / "m")
    assert len(log["losses"]) == 6 and [s for s, _ in log["evals"]] == [3, 6]
    art = load_artifact(tmp_path / "m")
    assert art.provenance.steps == 6 and art.cfg.d_model == 32 and art.tokenizer.vocab_size == 280

    assert main(["sample", "--model", str(tmp_path / "m"), "--prompt", "12+3", "--max-new-tokens", "5",
                 "--temperature", "1.0", "--seed", "3"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["sample", "--model", str(tmp_path / "m"), "--prompt", "12+3", "--max-new-tokens", "5",
                 "--temperature", "1.0", "--seed", "3"]) == 0
    assert json.loads(capsys.readouterr().out) == first  # seeded sampling is reproducible
    assert first["stop_reason"] in ("eos", "max_len") and 1 <= first["new_tokens"] <= 5

    assert main(["evaluate", "--model", "sft-memorize", "--benchmarks", "add3-heldout", "add3-fresh",
                 "--limit", "40", "--nll-docs", "0"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["accuracy_add3-heldout"] > 0.9 > report["accuracy_add3-fresh"]  # memorized vs fresh
    assert "valid_nll" not in report


def test_train_resume_and_init(tmp_path, capsys):
    args = ["--steps", "6", "--checkpoint-every", "3", *TINY]
    assert main(["train", "--out", str(tmp_path / "a"), *args]) == 0
    straight = _log(tmp_path / "a")["losses"]
    ckpt = tmp_path / "a" / "checkpoints" / "step-000003"
    assert main(["train", "--out", str(tmp_path / "b"), "--resume", str(ckpt), *args]) == 0
    assert _log(tmp_path / "b")["losses"] == straight
    # --init fixes the architecture and tokenizer: only data and schedule options go with it
    recipe = [a for i, a in enumerate(TINY) if a not in ARCHITECTURE and TINY[i - 1] not in ARCHITECTURE]
    assert main(["train", "--out", str(tmp_path / "c"), "--init", str(tmp_path / "a"), "--steps", "3", *recipe]) == 0
    assert load_artifact(tmp_path / "c").tokenizer == load_artifact(tmp_path / "a").tokenizer
    capsys.readouterr()


def test_errors_are_one_line_with_status_2(tmp_path, capsys):
    assert main(["sample", "--model", "no-such-model", "--prompt", "x"]) == 2
    assert "neither an artifact directory nor a zoo entry" in capsys.readouterr().err
    assert main(["train", "--out", str(tmp_path), "--steps", "3", "--warmup-steps", "5"]) == 2
    assert "warmup_steps=5 must be below steps=3" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train"])  # argparse: --out is required
    assert "--out" in capsys.readouterr().err


def test_module_entry_point_help():
    out = subprocess.run([sys.executable, "-m", "ftipbook.cli", "train", "--help"], capture_output=True, text=True,
                         check=True).stdout
    assert "--checkpoint-every" in out and "torchrun" in out


@pytest.mark.skipif(shutil.which("torchrun", path=os.path.dirname(sys.executable)) is None, reason="no torchrun")
@pytest.mark.parametrize("parallel,tol", [("ddp", 1e-6), ("fsdp", 1e-5)])
def test_torchrun_two_processes_match_one(tmp_path, parallel, tol):
    port = free_port()
    args = ["train", "--steps", "5", *TINY]
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    subprocess.run([torchrun, "--nproc_per_node", "2", "--master_port", str(port), "-m", "ftipbook.cli", *args,
                    "--parallel", parallel, "--out", str(tmp_path / parallel)], check=True, capture_output=True,
                   timeout=120)
    assert main([*args, "--out", str(tmp_path / "one")]) == 0
    two, one = _log(tmp_path / parallel), _log(tmp_path / "one")
    assert two["world_size"] == 2 and two["losses"] == pytest.approx(one["losses"], abs=tol)
    # the artifact holds the full weights (under FSDP: gathered on rank 0 before it is written)
    two, one = load_artifact(tmp_path / parallel).state_dict, load_artifact(tmp_path / "one").state_dict
    assert two.keys() == one.keys()
    for key, value in one.items():
        torch.testing.assert_close(two[key], value, atol=10 * tol, rtol=0)  # Adam amplifies last-bit differences
