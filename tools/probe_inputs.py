"""Probe what the public entry points do with bad input, killed saves and damaged files (issue 11).

Four groups of cases, each counted by how it ended:

- ``api``: the catalog of ``tests/bad_inputs.py`` (configurations, ``generate``, ``sampling_law``,
  the forward pass, the tokenizer, finite laws, optimizers); *clear* means a ``ValueError`` or
  ``TypeError`` naming the argument.
- ``cli``: bad options of ``ftipbook train``, ``sample`` and ``evaluate``, run in-process with
  training, sampling and scoring replaced by a trap; *clear* means exit status 2 and one
  ``ftipbook: error:`` line naming the option, before any work.
- ``kill``: a child process saving artifacts, training checkpoints, Hugging Face checkpoints, a
  study-style manifest set or zoo entries with their manifest over a good one is killed with
  ``SIGKILL`` at random moments, and two children write the same directory at once (each must
  write or be refused with ``ConcurrentWriteError``, never crash); *lost* means the directory no
  longer loads (or resumes), *internal* that a concurrent writer crashed.
- ``files``: artifact, checkpoint, Hugging Face, optimizer, tokenizer, manifest-set and zoo files with
  flipped bytes, truncations, foreign content, a 16 GiB sparse stand-in and deeply nested JSON, and
  every saver with a link planted at its ``.partial`` names; *clear* means a ``ValueError`` naming
  the file (for a planted link: the link's target unchanged and the save loadable), *silent* that the
  damaged file loaded.

- ``surface``: every public callable of the newer modules (``prob``, ``claims``, ``tasks``, ``env``,
  ``eval``, ``compare``, the studies, ``model.depth``/``jepa``/``candidates``/``hf_hybrid``), found
  by introspection and fed bad values of each kind (``tests/surface.py``); printed as its own
  table by module, with the columns clear, unnamed, internal, silent, refused-valid and hang.

Run ``python tools/probe_inputs.py [--kills N] [--only GROUP ...]``; it prints the tables and exits 1
unless every column but clear is zero. ``--write-known`` rewrites ``tests/surface_known.py`` (the
surface failures the unit test tolerates for now) from the surface group's measurement.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import io
import os
import random
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from tests.bad_inputs import cases, classify  # noqa: E402

COLUMNS = ("clear", "unnamed", "silent", "internal", "lost")
#: Every case that did not end in a clear error: (group, case, what happened); printed with --show.
NOT_CLEAR: list[tuple[str, str, str]] = []


def probe_api() -> collections.Counter:
    counts = collections.Counter()
    for entry, name, value in cases():
        outcome, detail = classify(entry, name, value)
        counts[outcome] += 1
        if outcome != "clear":
            NOT_CLEAR.append(("api", f"{entry.name}({name}={value!r})", detail))
    return counts


# ------------------------------------------------------------------------------------------------ cli
TRAIN_BAD = {"--steps": ["0", "-1", "x", "1.5"], "--lr": ["inf", "nan", "0", "-1", "x"],
             "--batch-size": ["0", "-2"], "--seq-len": ["0", "x"], "--docs": ["-1", "0"], "--seed": ["-1", "x"],
             "--warmup-steps": ["-1", "x"], "--eval-every": ["-2"], "--d-model": ["0", "30"], "--n-heads": ["0"],
             "--weight-decay": ["-0.1", "nan"], "--grad-clip": ["nan", "-1"], "--vocab-size": ["100", "x"],
             "--optimizer": ["lbfgs"], "--out": ["/dev/null/x"], "--resume": ["no/such/checkpoint", "latest"],
             "--init": ["no-such-model"], "--layer-pattern": ["Z", ""]}
SAMPLE_BAD = {"--temperature": ["nan", "-1", "inf"], "--top-p": ["0", "1.5", "nan"], "--top-k": ["0", "-1"],
              "--max-new-tokens": ["0", "-5", "1000000"], "--seed": ["-3", "x"], "--model": ["no/such/model"]}
EVALUATE_BAD = {"--limit": ["-1", "0"], "--nll-docs": ["-1"], "--nll-batches": ["0", "-1"],
                "--benchmarks": ["add9"], "--model": ["no/such/model"]}
TINY = ["--docs", "200", "--vocab-size", "280", "--batch-size", "4", "--seq-len", "32", "--d-model", "32",
        "--d-ff", "64", "--warmup-steps", "2", "--no-progress"]


@contextlib.contextmanager
def no_work():
    """Training, sampling and scoring raise :class:`StartedWork` while the block runs."""
    import ftipbook.model
    import ftipbook.train

    class StartedWork(Exception):
        pass

    def trap(*args, **kwargs):
        raise StartedWork("the command started work")

    saved = [(ftipbook.train.Trainer, "run"), (ftipbook.model, "generate"), (ftipbook.train, "evaluate"),
             (ftipbook.train, "answer_accuracy")]
    old = [getattr(obj, name) for obj, name in saved]
    for obj, name in saved:
        setattr(obj, name, trap)
    try:
        yield
    finally:
        for (obj, name), value in zip(saved, old):
            setattr(obj, name, value)


def run_main(argv: list[str]) -> tuple[int, str]:
    from ftipbook import cli
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = cli.main(argv)
        except SystemExit as stop:
            status = stop.code
    return status, err.getvalue()


def probe_cli(work: Path) -> collections.Counter:
    artifact = work / "tiny"
    status, err = run_main(["train", "--out", str(artifact), "--steps", "4", *TINY])
    assert status == 0, err
    argvs = [["train", "--out", str(work / "new"), *TINY, "--steps", "1000000", option, value]
             for option, values in TRAIN_BAD.items() for value in values]
    argvs += [["sample", "--model", str(artifact), "--prompt", "1+2=", option, value]
              for option, values in SAMPLE_BAD.items() for value in values]
    argvs += [["evaluate", "--model", "sft-memorize", option, value]
              for option, values in EVALUATE_BAD.items() for value in values]
    counts = collections.Counter()
    with no_work():
        for argv in argvs:
            status, err = run_main(argv)
            lines = err.splitlines()
            if status == 2 and len(lines) == 1 and lines[0].startswith("ftipbook: error: "):
                outcome = "clear" if argv[-2] in lines[0] or argv[-2].lstrip("-").replace("-", "_") in lines[0] \
                    else "unnamed"
            else:
                outcome = "silent" if "started work" in err else "internal"
            counts[outcome] += 1
            if outcome != "clear":
                NOT_CLEAR.append(("cli", " ".join(argv[:1] + argv[-2:]), err.strip()[-300:]))
    return counts


# ---------------------------------------------------------------------------------------------- kills
def probe_kills(work: Path, kills: int) -> collections.Counter:
    from ftipbook.artifact import load_artifact, save_artifact
    from tests import test_atomic as ta
    from tests.train import test_checkpoint_integrity as tc

    ctx, rng, counts = ta.forkserver(), random.Random(0), collections.Counter()
    hashes = {ta.artifact(s).runtime_hash() for s in (1, 2)}
    save_artifact(ta.artifact(1), work / "a")
    for _ in range(kills):
        ta.kill_at_random(ctx, ta.save_forever, (work / "a", (2, 1)), rng, 0.05)
        try:
            ok = load_artifact(work / "a").runtime_hash() in hashes
        except Exception:  # noqa: BLE001
            ok = False
        counts["clear" if ok else "lost"] += 1
    for i in range(kills):  # half overwrite one checkpoint in place, half add step-K checkpoints
        path, overwrite = work / f"run{i}", i % 2 == 0
        ta.kill_at_random(ctx, tc.checkpoint_forever, (path, overwrite), rng, 0.03)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # skipped incomplete checkpoints are reported as warnings
                tc.fresh(path).restore(path if overwrite else "latest")
            counts["clear"] += 1
        except Exception:  # noqa: BLE001
            counts["lost"] += 1
    counts.update(probe_set_kills(work, kills, ctx, rng))
    return counts


def probe_set_kills(work: Path, kills: int, ctx, rng: random.Random) -> collections.Counter:
    """Kills and concurrent writers for every saver of ``tests.test_file_sets.SAVERS``."""
    import signal
    import time

    from tests import test_atomic as ta
    from tests import test_file_sets as tf

    counts = collections.Counter()
    for saver, (write, load) in tf.SAVERS.items():
        good = set()
        for i in (1, 2):
            write(work / f"{saver}-v{i}", i)
            good.add(load(work / f"{saver}-v{i}"))
        path = work / saver
        write(path, 1)

        def loads_good() -> bool:
            try:
                return load(path) in good
            except Exception:  # noqa: BLE001
                return False

        for _ in range(kills):
            ta.kill_at_random(ctx, tf.save_forever, (saver, path, (2, 1)), rng, 0.05)
            ok = loads_good()
            counts["clear" if ok else "lost"] += 1
            if not ok:
                NOT_CLEAR.append(("kill", f"{saver} killed", "the directory no longer loads"))
        for _ in range(max(1, kills // 4)):  # two writers at once, then both killed
            children = []
            for versions in ((1, 2), (2, 1)):
                ready = ctx.Event()
                child = ctx.Process(target=tf.save_forever, args=(ready, saver, path, versions), daemon=True)
                child.start()
                children.append((child, ready))
            for child, ready in children:
                assert ready.wait(60), "the child did not start"
            time.sleep(rng.uniform(0.05, 0.3))
            crashed = [c for c, _ in children if not c.is_alive()]
            for child, _ in children:
                if child.is_alive():
                    os.kill(child.pid, signal.SIGKILL)
                child.join(10)
            outcome = "internal" if crashed else "clear" if loads_good() else "lost"
            counts[outcome] += 1
            if outcome != "clear":
                NOT_CLEAR.append(("kill", f"{saver} with two writers", outcome))
    return counts


# ---------------------------------------------------------------------------------------------- files
def damaged_versions(data: bytes) -> list[bytes]:
    """Flipped bytes at spread positions, truncations, an empty file and foreign JSON."""
    n = len(data)
    flips = sorted({0, 5, 9, 20, n // 7, n // 3, n // 2, (2 * n) // 3, n - 2})
    out = [data[:p] + bytes([data[p] ^ 0x01]) + data[p + 1:] for p in flips if 0 <= p < n]
    out += [data[:size] for size in (0, 8, n // 2, n - 2)]  # n - 2: JSON files end in "}\n"
    out.append(b'{"format": "something else"}')
    return out


def probe_files(work: Path) -> collections.Counter:
    from ftipbook.artifact import META_FILE, WEIGHTS_FILE, load_artifact, save_artifact
    from ftipbook.model.hf import load_hf, save_hf
    from ftipbook.optim.checkpoint import load_optimizer, save_optimizer
    from ftipbook.tokenizer import ByteLevelBPE
    from ftipbook.train.checkpoint import FILES, MANIFEST_FILE
    from tests import test_atomic as ta
    from tests.bad_inputs import tiny_model, tiny_tokenizer
    from tests.train import test_checkpoint_integrity as tc

    save_artifact(ta.artifact(1), work / "art")
    trainer = tc.fresh()
    trainer.run(until=3)
    ckpt = trainer.save_checkpoint(work / "ckpt")
    from ftipbook.model import ModelConfig, build_model
    save_hf(build_model(ModelConfig(vocab_size=23, d_model=16, n_layers=1, n_heads=2, d_ff=32), seed=0), work / "hf")
    opt = torch.optim.Adam(tiny_model().parameters())
    save_optimizer(opt, work / "opt.safetensors")
    tiny_tokenizer().save(work / "tok.json")

    def restore_checkpoint(path):
        tc.fresh().restore(path)

    loaders = [(work / "art" / name, lambda: load_artifact(work / "art")) for name in (WEIGHTS_FILE, META_FILE)]
    loaders += [(ckpt / name, lambda: restore_checkpoint(ckpt)) for name in (*FILES, MANIFEST_FILE)]
    loaders += [(work / "hf" / name, lambda: load_hf(work / "hf")) for name in ("config.json", "model.safetensors")]
    loaders += [(work / "opt.safetensors",
                 lambda: load_optimizer(torch.optim.Adam(tiny_model().parameters()), work / "opt.safetensors")),
                (work / "tok.json", lambda: ByteLevelBPE.load(work / "tok.json"))]
    from ftipbook.file_records import MAX_JSON_DEPTH
    from tests import test_file_sets as tf
    for saver, (write, load_value) in tf.SAVERS.items():
        write(work / saver, 1)
        names = sorted(p.relative_to(work / saver).as_posix() for p in (work / saver).rglob("*") if p.is_file())
        loaders += [(work / saver / name, lambda s=saver, f=load_value: f(work / s)) for name in names]
    counts = collections.Counter()
    for path, load in loaders:
        good = path.read_bytes()
        huge = b"[" * (10 * MAX_JSON_DEPTH) + b"]" * (10 * MAX_JSON_DEPTH)
        for i, bad in enumerate([*damaged_versions(good), huge, None]):  # None: a 16 GiB sparse file
            if bad == good:
                continue
            if bad is None:
                path.write_bytes(b"")
                os.truncate(path, 16 * 2**30)
            else:
                path.write_bytes(bad)
            try:
                load()
                outcome, detail = "silent", "loaded"
            except ValueError as err:
                outcome = "clear" if path.name in str(err) or "runtime hash mismatch" in str(err) else "unnamed"
                detail = str(err)
            except Exception as err:  # noqa: BLE001
                outcome, detail = "internal", f"{type(err).__name__}: {err}"
            counts[outcome] += 1
            if outcome != "clear":
                NOT_CLEAR.append(("files", f"{path.name} (damaged version {i})", detail[:200]))
        path.write_bytes(good)
        load()  # the restored file loads again
    counts.update(probe_planted_links(work))
    return counts


def probe_planted_links(work: Path) -> collections.Counter:
    """Every saver over a directory whose ``.partial`` names are links to a victim file: the victim must
    keep its bytes and the saved directory load."""
    from ftipbook.artifact import artifact_files, load_artifact, save_artifact
    from tests import test_atomic as ta
    from tests import test_file_sets as tf

    savers = {**{name: (write, load) for name, (write, load) in tf.SAVERS.items()},
              "save_artifact": (lambda path, i: save_artifact(ta.artifact(i), path),
                                lambda path: load_artifact(path).runtime_hash())}
    names = {"save_artifact": list(artifact_files(ta.artifact(1)))}
    counts = collections.Counter()
    for saver, (write, load) in savers.items():
        path, victim = work / "links" / saver, work / "links" / f"{saver}.victim"
        write(path, 1)
        victim.write_bytes(b"precious")
        for file in names.get(saver) or [p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()]:
            partial = (path / file).with_name(f".{Path(file).name}.partial")
            partial.symlink_to(victim)
        try:
            write(path, 2)
            load(path)
            outcome = "clear" if victim.read_bytes() == b"precious" else "lost"
        except Exception as err:  # noqa: BLE001
            outcome = "internal"
            NOT_CLEAR.append(("files", f"{saver} over planted links", f"{type(err).__name__}: {err}"))
        counts[outcome] += 1
    return counts


# -------------------------------------------------------------------------------------------- surface
def probe_surface(write_known: bool) -> tuple[bool, str]:
    """The surface table, whether it is all clear, and (with ``write_known``) the rewritten known list."""
    from tests import surface
    report = surface.probe()
    for group, label, outcome, detail in report.outcomes:
        if outcome != "clear":
            NOT_CLEAR.append((f"surface:{group}", label, f"{outcome}: {detail}"))
    for qual, why in report.no_recipe.items():
        NOT_CLEAR.append(("surface", qual, f"no recipe: {why}"))
    if write_known:
        write_known_file(report)
    clear = all(o[2] == "clear" for o in report.outcomes) and not report.no_recipe
    return clear, surface.table(report)


def known_hypothesis() -> dict[str, str]:
    """The hypothesis tests marked as failing today (kept as they are when the file is rewritten)."""
    try:
        from tests.surface_known import KNOWN_HYPOTHESIS
    except ImportError:
        return {}
    return dict(KNOWN_HYPOTHESIS)


def write_known_file(report) -> None:
    """``tests/surface_known.py`` from ``report``: one line per failing case and per callable without recipe."""
    lines = ['"""Today\'s surface failures (issue 25), tolerated by ``tests/test_surface.py`` while they are fixed.',
             "", "Written by ``tools/probe_inputs.py --only surface --write-known``; remove entries as they are fixed",
             'until both are empty."""', "", "#: case label -> how it ends today", "KNOWN = {"]
    lines += [f"    {label!r}: {outcome!r},"
              for _, label, outcome, detail in sorted(report.outcomes, key=lambda o: o[1]) if outcome != "clear"]
    lines += ["}", "", "#: callable -> why it has no valid call yet (add a recipe in tests/surface.py)", "PENDING = {"]
    lines += [f"    {qual!r}: {why[:100]!r}," for qual, why in sorted(report.no_recipe.items())]
    lines += ["}", "", "#: test of tests/test_surface_hypothesis.py -> why it fails today (marked xfail, strict)",
              "KNOWN_HYPOTHESIS = {"]
    lines += [f"    {name!r}: {why!r}," for name, why in sorted(known_hypothesis().items())]
    lines += ["}", ""]
    (ROOT / "tests" / "surface_known.py").write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=20, help="kills per kind of save (default: 20)")
    parser.add_argument("--show", action="store_true", help="print every case that did not end in a clear error")
    parser.add_argument("--only", nargs="+", choices=("api", "cli", "kill", "files", "surface"),
                        help="run only these groups (default: all)")
    parser.add_argument("--write-known", action="store_true",
                        help="rewrite tests/surface_known.py from the surface group's measurement")
    args = parser.parse_args(argv)
    only = set(args.only or ("api", "cli", "kill", "files", "surface"))
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        runs = {"api": probe_api, "cli": lambda: probe_cli(work / "cli"),
                "kill": lambda: probe_kills(work / "kill", args.kills), "files": lambda: probe_files(work / "files")}
        groups = {name: run() for name, run in runs.items() if name in only}
        surface_clear, surface_table = probe_surface(args.write_known) if "surface" in only else (True, "")
    total = sum(groups.values(), collections.Counter())
    for case in NOT_CLEAR if args.show else ():
        print(*case, sep="  |  ")
    if groups:
        print(f"{'group':<7}{'tried':>7}" + "".join(f"{c:>10}" for c in COLUMNS))
        for name, counts in {**groups, "total": total}.items():
            print(f"{name:<7}{sum(counts.values()):>7}" + "".join(f"{counts[c]:>10}" for c in COLUMNS))
    if surface_table:
        print("\nsurface (callables: enumerated; probed: with a valid call; recipe?: no valid call yet)")
        print(surface_table)
    return 0 if surface_clear and all(total[c] == 0 for c in ("unnamed", "silent", "internal", "lost")) else 1


if __name__ == "__main__":
    sys.exit(main())
