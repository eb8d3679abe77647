"""Issue 11, CLI side: every bad argument, output path and input file fails before any work, with one
line ``ftipbook: error: ...`` on stderr and a non-zero exit; ``--debug`` shows the traceback; ``--help``
shows every option's default.

Each kind of failure runs ``python -m ftipbook`` as a subprocess with a huge ``--steps`` (or a real
model), so a command that started work instead of failing at once would run into the timeout; the many
argument variants run ``cli.main`` in-process with training, sampling and scoring replaced by a trap.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import pytest

from ftipbook import cli
from ftipbook.artifact import load_artifact
from tests.local_runs import one_thread  # noqa: F401 (one_thread: autouse fixture)

TINY = ["--docs", "200", "--vocab-size", "280", "--batch-size", "4", "--seq-len", "32", "--d-model", "32",
        "--d-ff", "64", "--warmup-steps", "2", "--no-progress"]
HUGE = ["--steps", "1000000"]  # work that would not finish within the timeout
TIMEOUT = 60


def run_cli(*args, cwd=None) -> subprocess.CompletedProcess:
    """``python -m ftipbook ARGS`` with the repository on the path."""
    env = {**os.environ, "PYTHONPATH": os.getcwd(), "FTIPBOOK_DEVICE": "cpu", "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "ftipbook", *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT, env=env, cwd=cwd)


def one_line_error(proc: subprocess.CompletedProcess, *needles: str, status: int = 2) -> str:
    """Assert ``proc`` failed with ``status`` and printed only one ``ftipbook: error:`` line naming ``needles``."""
    assert proc.returncode == status, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ftipbook: error: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def main_error(capsys, argv, *needles: str) -> str:
    """Assert that in-process ``cli.main(argv)`` fails with status 2 and one ``ftipbook: error:`` line."""
    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as stop:  # argparse's usage errors exit
        status = stop.code
    out, err = capsys.readouterr()
    assert status == 2 and out == "", (status, out, err)
    assert err.count("\n") == 1 and err.startswith("ftipbook: error: "), err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


@pytest.fixture
def no_work(monkeypatch):
    """Training, sampling and scoring raise if a test's command reaches them."""
    import ftipbook.model
    import ftipbook.train

    def trap(*args, **kwargs):
        raise AssertionError("the command started work before it failed")

    monkeypatch.setattr(ftipbook.train.Trainer, "run", trap)
    for module, name in ((ftipbook.model, "generate"), (ftipbook.train, "evaluate"),
                         (ftipbook.train, "answer_accuracy")):
        monkeypatch.setattr(module, name, trap)


def tree(path) -> dict:
    """Every file under ``path`` and its bytes (to show that a refused command changed nothing)."""
    return {p.relative_to(path): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny artifact (max context 32) with two training checkpoints."""
    out = tmp_path_factory.mktemp("cli") / "m"
    assert cli.main(["train", "--out", str(out), "--steps", "4", "--checkpoint-every", "2", *TINY]) == 0
    return out


# ---------------------------------------------------------------------------------------------- train
def test_unwritable_out_fails_at_once_naming_the_path(tmp_path, capsys, no_work):
    one_line_error(run_cli("train", "--out", "/dev/null/x", *HUGE), "/dev/null/x", "not a directory")
    (tmp_path / "file").write_text("x")
    main_error(capsys, ["train", "--out", tmp_path / "file", *HUGE], str(tmp_path / "file"), "not a directory")
    main_error(capsys, ["train", "--out", tmp_path / "file" / "sub", *HUGE], "is not a directory")


def test_existing_artifact_is_refused_without_overwrite(trained, tmp_path, capsys):
    before = tree(trained)
    one_line_error(run_cli("train", "--out", trained, *HUGE), str(trained), "--overwrite")
    assert tree(trained) == before
    out = tmp_path / "again"
    shutil.copytree(trained, out)
    old_hash = load_artifact(out).runtime_hash()
    assert cli.main(["train", "--out", str(out), "--overwrite", "--steps", "3", *TINY]) == 0
    capsys.readouterr()
    assert load_artifact(out).runtime_hash() != old_hash
    assert len(json.loads((out / "train_log.json").read_text())["losses"]) == 3


@pytest.mark.parametrize("args, needles", [
    (["--steps", "0"], ["--steps", "0", ">= 1"]),
    (["--steps", "x"], ["--steps", "'x'", "not an int"]),
    (["--lr", "inf"], ["--lr", "inf", "finite"]),
    (["--lr", "0"], ["--lr", "> 0"]),
    (["--weight-decay", "-0.1"], ["--weight-decay", "-0.1"]),
    (["--grad-clip", "nan"], ["--grad-clip", "nan"]),
    (["--batch-size", "0"], ["--batch-size"]),
    (["--docs", "-1"], ["--docs", "-1"]),
    (["--seed", "-1"], ["--seed", "-1"]),
    (["--vocab-size", "100"], ["--vocab-size", "100", ">= 259"]),
    (["--eval-every", "-2"], ["--eval-every", "-2"]),
    (["--optimizer", "lbfgs"], ["--optimizer", "lbfgs"]),
    (["--warmup-steps", "5", "--steps", "3"], ["warmup_steps=5 must be below steps=3"]),
    (["--d-model", "30", "--n-heads", "4"], ["n_heads=4", "d_model=30"]),
    (["--layer-pattern", "Z"], ["Z"]),
    (["--resume", "no/such/checkpoint"], ["--resume no/such/checkpoint"]),
    (["--resume", "latest"], ["checkpoints"]),
    (["--init", "no-such-model"], ["neither an artifact directory nor a zoo entry"]),
])
def test_bad_train_arguments_fail_before_any_work(tmp_path, capsys, no_work, args, needles):
    out = tmp_path / "new"
    main_error(capsys, ["train", "--out", out, *HUGE, *args], *needles)
    assert not out.exists()  # nothing was trained, saved or even created


def test_a_bad_train_argument_in_a_process(tmp_path):
    one_line_error(run_cli("train", "--out", tmp_path / "new", *HUGE, "--lr", "inf"), "--lr", "inf", "finite")
    assert not (tmp_path / "new").exists()


def test_init_shorter_than_seq_len_is_refused(trained, tmp_path, capsys, no_work):
    main_error(capsys, ["train", "--out", tmp_path / "ft", "--init", trained, *HUGE, "--seq-len", "64"],
               "--seq-len 64", "max_seq_len=32")
    assert not (tmp_path / "ft").exists()


def test_resume_of_another_model_is_one_line(trained, tmp_path):
    """A checkpoint whose weights have other shapes than the model being trained."""
    ckpt = trained / "checkpoints" / "step-000002"
    proc = run_cli("train", "--out", tmp_path / "b", "--resume", ckpt, "--steps", "4", *TINY, "--d-model", "64")
    one_line_error(proc, "differs")
    assert not (tmp_path / "b" / "artifact.json").exists()


def test_non_finite_loss_is_one_line_and_saves_nothing(tmp_path):
    out = tmp_path / "nan"
    one_line_error(run_cli("train", "--out", out, "--steps", "50", *TINY, "--lr", "1e30", "--schedule", "constant"),
                   "non-finite loss")
    assert not (out / "artifact.json").exists()


def test_too_few_held_out_documents_are_refused(tmp_path, capsys, no_work):
    """--eval-every on batches the held-out draw cannot fill would repeat documents silently."""
    main_error(capsys, ["train", "--out", tmp_path / "e", *HUGE, *TINY, "--eval-every", "5", "--batch-size", "512"],
               "held-out", "repeated")
    assert not (tmp_path / "e").exists()


# --------------------------------------------------------------------------------------------- sample
def test_prompt_longer_than_the_context_names_both_numbers(trained):
    art = load_artifact(trained)
    prompt = "12+34=" * 20
    n = len(art.encode(prompt))
    one_line_error(run_cli("sample", "--model", trained, "--prompt", prompt), f"{n} tokens", "max context 32")


def test_prompt_and_new_tokens_beyond_the_context(trained, capsys, no_work):
    short = len(load_artifact(trained).encode("1+2="))
    main_error(capsys, ["sample", "--model", trained, "--prompt", "1+2=", "--max-new-tokens", "40"],
               "--max-new-tokens 40", str(short + 39), "max context 32")


@pytest.mark.parametrize("args, needles", [
    (["--temperature", "nan"], ["--temperature", "nan"]),
    (["--temperature", "-1"], ["--temperature", "-1"]),
    (["--top-p", "0"], ["--top-p"]),
    (["--top-p", "1.5"], ["--top-p", "1.5", "<= 1"]),
    (["--top-k", "0"], ["--top-k", "0"]),
    (["--max-new-tokens", "0"], ["--max-new-tokens", "0"]),
    (["--seed", "-3"], ["--seed", "-3"]),
])
def test_bad_sample_arguments(trained, capsys, no_work, args, needles):
    main_error(capsys, ["sample", "--model", trained, "--prompt", "1+2=", *args], *needles)


# ------------------------------------------------------------------------------------------- evaluate
@pytest.mark.parametrize("args, needles", [
    (["--limit", "-1"], ["--limit", "-1", ">= 1"]),
    (["--limit", "0"], ["--limit", "0"]),
    (["--nll-docs", "-1"], ["--nll-docs", "-1"]),
    (["--nll-batches", "0"], ["--nll-batches", "0"]),
    (["--nll-docs", "1", "--nll-batches", "50"], ["--nll-docs 1", "400", "repeated"]),
    (["--nll-docs", "0", "--benchmarks"], ["nothing to evaluate"]),
    (["--benchmarks", "add9"], ["--benchmarks", "add9"]),
])
def test_bad_evaluate_arguments(capsys, no_work, args, needles):
    main_error(capsys, ["evaluate", "--model", "sft-memorize", *args], *needles)


def test_a_bad_evaluate_argument_in_a_process():
    one_line_error(run_cli("evaluate", "--model", "sft-memorize", "--limit", "-1"), "--limit", "-1", ">= 1")


# ------------------------------------------------------------------------------------------ bad files
def _copy(trained, tmp_path, name="bad"):
    bad = tmp_path / name
    shutil.copytree(trained, bad, ignore=shutil.ignore_patterns("checkpoints"))
    return bad


def test_corrupt_weights(trained, tmp_path):
    bad = _copy(trained, tmp_path)
    data = bytearray((bad / "weights.safetensors").read_bytes())
    data[3] ^= 0xFF  # the header length
    (bad / "weights.safetensors").write_bytes(bytes(data))
    one_line_error(run_cli("sample", "--model", bad, "--prompt", "1"), str(bad / "weights.safetensors"))


def test_malformed_artifact_json_names_the_file(trained, tmp_path):
    bad = _copy(trained, tmp_path)
    (bad / "artifact.json").write_text("{oops")
    one_line_error(run_cli("sample", "--model", bad, "--prompt", "1"), str(bad / "artifact.json"))
    assert not (tmp_path / "ft").exists()


def test_malformed_artifact_json_for_init_and_evaluate(trained, tmp_path, capsys, no_work):
    bad = _copy(trained, tmp_path)
    (bad / "artifact.json").write_text("[1, 2]")
    main_error(capsys, ["train", "--out", tmp_path / "ft", "--init", bad, *HUGE], str(bad / "artifact.json"))
    main_error(capsys, ["evaluate", "--model", bad, "--nll-docs", "0"], str(bad / "artifact.json"))
    assert not (tmp_path / "ft").exists()


def test_missing_weights_and_a_directory_that_is_no_artifact(trained, tmp_path, capsys, no_work):
    bad = _copy(trained, tmp_path)
    (bad / "weights.safetensors").unlink()
    main_error(capsys, ["sample", "--model", bad, "--prompt", "1"], "weights.safetensors", "missing")
    (tmp_path / "empty").mkdir()
    main_error(capsys, ["evaluate", "--model", tmp_path / "empty"], "artifact.json", "missing")


def test_debug_shows_the_traceback(tmp_path):
    proc = run_cli("train", "--out", "/dev/null/x", *HUGE, "--debug")
    assert proc.returncode != 0 and "Traceback" in proc.stderr and "/dev/null/x" in proc.stderr
    with pytest.raises(FileNotFoundError):
        cli.main(["--debug", "evaluate", "--model", str(tmp_path)])


def test_internal_errors_are_one_line_with_status_1(monkeypatch, capsys):
    """An unexpected exception (here a multi-line ``RuntimeError``) is still one line; ``--debug`` re-raises it."""
    def boom(ref, option):
        raise RuntimeError("Error(s) in loading state_dict:\n\tsize mismatch for w: [2] vs [3]")

    monkeypatch.setattr(cli, "_artifact", boom)
    assert cli.main(["sample", "--model", "m", "--prompt", "1"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ftipbook: error: internal RuntimeError: Error(s) in loading")
    assert "size mismatch for w" in err and "--debug" in err
    with pytest.raises(RuntimeError, match="size mismatch"):
        cli.main(["sample", "--model", "m", "--prompt", "1", "--debug"])


# ---------------------------------------------------------------------------------------------- help
def _options(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _options(sub)
        elif action.option_strings and not isinstance(action, argparse._HelpAction) and not action.required:
            yield parser, action


def test_help_shows_every_default():
    options = list(_options(cli._parser()))
    assert len(options) > 40
    for parser, action in options:
        text = parser._get_formatter()._get_help_string(action)
        assert "(default:" in text, (parser.prog, action.option_strings)
    out = run_cli("train", "--help").stdout
    assert "(default: 200)" in out and "(default: warmup_cosine)" in out and "--overwrite" in out


# ------------------------------------------------------------------------------ issue 25: CLI points
@pytest.mark.parametrize("option, value", [("--d-model", "16"), ("--vocab-size", "300"), ("--pos", "alibi"),
                                           ("--layer-pattern", "K"), ("--n-loops", "2")])
def test_init_refuses_architecture_options_by_name(tmp_path, capsys, no_work, option, value):
    """--init fixes the architecture: an option that would set it is refused, not ignored."""
    out = tmp_path / "new"
    main_error(capsys, ["train", "--out", out, "--init", "base-mha", option, value, *HUGE], "--init 'base-mha'",
               option, "drop it or drop --init")
    main_error(capsys, ["train", "--out", out, "--init", "base-mha", "--d-model", "64", "--n-heads", "4", *HUGE],
               "--d-model, --n-heads", "drop them")
    assert not out.exists()


@pytest.mark.parametrize("argv, needles", [
    (["train", "--out", "OUT", "--docs", str(10**9)], ["--docs", "1000000000", f"<= {cli.MAX_DOCS}"]),
    (["evaluate", "--model", "sft-memorize", "--nll-docs", str(10**9)], ["--nll-docs", f"<= {cli.MAX_NLL_DOCS}"]),
    (["evaluate", "--model", "sft-memorize", "--nll-batches", str(10**9)], ["--nll-batches",
                                                                              f"<= {cli.MAX_NLL_BATCHES}"]),
    (["sample", "--model", "sft-memorize", "--prompt", "1+2=", "--max-new-tokens", str(10**12)],
     ["--max-new-tokens", f"<= {cli.MAX_NEW_TOKENS}"]),
])
def test_work_sizes_have_declared_upper_bounds(tmp_path, capsys, no_work, argv, needles):
    argv = [str(tmp_path / "new") if a == "OUT" else a for a in argv]
    main_error(capsys, argv, *needles)
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("argv", [["sample", "--model", "sft-elicit", "--prompt", "12+34=", "--max-new-tokens", "2"],
                                  ["evaluate", "--model", "sft-memorize", "--nll-docs", "0", "--limit", "1"]])
def test_closed_stdout_is_an_error_not_a_silent_success(argv):
    """``ftipbook sample ... >&-``: the result has nowhere to go, so the command fails by name."""
    env = {**os.environ, "PYTHONPATH": os.getcwd(), "FTIPBOOK_DEVICE": "cpu", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "ftipbook", *argv], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=TIMEOUT, env=env, pass_fds=(),
                          preexec_fn=lambda: os.close(1))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("ftipbook: error: standard output is closed"), proc.stderr
    assert proc.stderr.count("\n") == 1
